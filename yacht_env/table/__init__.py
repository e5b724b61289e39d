"""Yacht at a table of 1-5 players, each on their own dice, taking whole turns in rotation.

- :mod:`~yacht_env.table.game`: the pure multi-player game state (many tables at once), win shares;
- :mod:`~yacht_env.table.encoding`: table observations (own position, totals, others' open rows);
- :mod:`~yacht_env.table.env`: ``Yacht-v0`` against fixed opponent policies (``YachtTableEnv``).

The PettingZoo AEC env built on the same game state is :mod:`yacht_env.multiplayer`.
"""
