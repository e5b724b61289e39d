"""The old name of :mod:`yacht_env.table.pettingzoo_env`, the PettingZoo env: the same module, with a deprecation warning.

The PettingZoo env now stands beside the other table code; its versioned name is :mod:`yacht_env.yacht_v0`.
"""

import sys
import warnings

from yacht_env.table import pettingzoo_env

warnings.warn(
    "yacht_env.multiplayer is now yacht_env.table.pettingzoo_env (or yacht_env.yacht_v0); import it from there",
    DeprecationWarning,
    stacklevel=2,
)
# One module under both names, so that a patch of one is seen through the other.
sys.modules[__name__] = pettingzoo_env
