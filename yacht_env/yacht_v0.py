"""Yacht for 1 to 5 players, reachable the way PettingZoo's classic games are.

>>> from yacht_env import yacht_v0
>>> env = yacht_v0.env(num_players=3)

The env itself lives in :mod:`yacht_env.table.pettingzoo_env`; this module is its versioned name.
"""

from yacht_env.table.pettingzoo_env import YachtMultiplayerEnv, env, raw_env

__all__ = ["YachtMultiplayerEnv", "env", "raw_env"]
