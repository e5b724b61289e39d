"""Evaluation: tables of agents on common dice, confidence intervals, videos and Ray workers.

:mod:`agents.evaluation.tournament` plays tables of agents, :mod:`agents.evaluation.stats` gives the intervals,
:mod:`agents.evaluation.ceiling` bounds what any player can win, :mod:`agents.evaluation.video` records games and
:mod:`agents.evaluation.distributed` splits work over Ray. The solitaire harness and its command line are
:mod:`agents.evaluate`. May import every package of ``agents`` below it (solvers, two_player, policies, learned,
and :mod:`agents.registry`); never training.
"""
