"""Yacht at a table of 1-5 players, each on their own dice, taking whole turns in rotation.

The game itself (many games at once, one transition) is :mod:`yacht_env.game`; this package adds what
only several players need:

- :mod:`~yacht_env.table.outcome`: who wins (win shares, zero-sum rewards), table arguments, the text view;
- :mod:`~yacht_env.table.encoding`: table observations (own position, totals, others' open rows);
- :mod:`~yacht_env.table.settings`: what the two table envs share (table arguments, dealing, text);
- :mod:`~yacht_env.table.env`: ``YachtTable-v0``, the learner against fixed opponent policies;
- :mod:`~yacht_env.table.pettingzoo_env`: the PettingZoo AEC env (versioned name :mod:`yacht_env.yacht_v0`).
"""
