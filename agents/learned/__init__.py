"""Learned agents and their files: PPO networks and planning values, read from untrusted files without running code.

The file formats (safetensors tensors with checked plain metadata: :mod:`agents.learned.model_files`,
:mod:`agents.learned.plan_files`, :mod:`agents.learned.plan2_files`) and the policies that play them
(``ppo:``, ``plan:``, ``plan2:``). May import ``yacht_env``, :mod:`agents.solvers`, :mod:`agents.two_player` and
:mod:`agents.policies`; never the registry, evaluation or training.
"""
