"""Policies that play Yacht: the exact solvers, baselines, learned agents, and their evaluation and training.

The subpackages, each importing only from those before it (``tests/test_layers.py`` holds them to it):

- :mod:`agents.solvers`: the exact dynamic programs (the optimum, score targets, score distributions, win tables);
- :mod:`agents.two_player`: the two-player game solved exactly;
- :mod:`agents.policies`: the policy interface and the policies built on the solvers (random, greedy, optimal,
  softmax, win, target, exact2);
- :mod:`agents.learned`: learned agents and their untrusted files (``ppo:``, ``plan:``, ``plan2:``);
- :mod:`agents.registry`: every policy by name (``make_policy("optimal")``);
- :mod:`agents.evaluation`: tables of agents, intervals, videos, Ray; :mod:`agents.evaluate`, the solitaire
  harness and its command line;
- :mod:`agents.training`: MaskablePPO and the planning agents' self-play;
- :mod:`agents.benchmark`: the benchmark protocol (tracks, results files, rliable aggregates), over all of them.
"""
