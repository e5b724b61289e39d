"""The old name of :mod:`yacht_env.table.outcome` (win shares, rewards, the text view of a table): the same
module, with a deprecation warning. The game itself is :mod:`yacht_env.game`.
"""

import sys
import warnings

from yacht_env.table import outcome

warnings.warn("yacht_env.table.game is now yacht_env.table.outcome; import it from there", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = outcome
