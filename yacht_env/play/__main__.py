"""``python -m yacht_env.play``: the same as ``yacht play``."""

import sys

from yacht_env.play.terminal import main

sys.exit(main())
