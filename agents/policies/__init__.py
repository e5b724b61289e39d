"""The policy interface and the policies that need no learned file: random, greedy, optimal, softmax, win, target, exact2.

:mod:`agents.policies.policy` is the one interface every agent implements, and :mod:`agents.policies.guard` the one
guard every policy built by name plays behind; the others read the solvers' tables
(:mod:`agents.solvers`, :mod:`agents.two_player`). May import ``yacht_env``, :mod:`agents.solvers` and
:mod:`agents.two_player`; never the learned agents, the registry, evaluation or training.
"""
