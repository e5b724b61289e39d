"""``python -m yacht_play``: the same as ``yacht play``."""

import sys

from yacht_play.terminal import main

sys.exit(main())
