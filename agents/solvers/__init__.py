"""The exact solvers: dynamic programming over the score sheet, with no policy, file or evaluation in them.

The expected-score optimum of every rule set (:mod:`agents.solvers.optimal`, and :mod:`agents.solvers.sheet_solver`
for sheets with bonuses and jokers), the table of reaching a score target (:mod:`agents.solvers.target`), the exact
distribution of the points to come (:mod:`agents.solvers.distribution`) and the arrays of the chance of winning
against optimal players (:mod:`agents.solvers.win_chances`), with their on-disk cache. May import ``yacht_env`` and
numpy/numba only: nothing else of ``agents``.
"""
