"""The benchmark protocol: fixed tracks and budgets, exact regret, results files, and their aggregates over seeds.

:mod:`agents.benchmark.tracks` fixes the tracks (rules, seats, budget, training seeds, evaluation deals);
:mod:`agents.benchmark.results` is the versioned results file and its checks; :mod:`agents.benchmark.run` trains
and evaluates a method on a track (``python -m agents.benchmark run``); :mod:`agents.benchmark.aggregate` turns
results files into rliable's aggregates, tables and plots (``python -m agents.benchmark aggregate``). It stands on
every other part of :mod:`agents` (the evaluation, the solvers' optimum, the training configs) and is imported by none.
"""
