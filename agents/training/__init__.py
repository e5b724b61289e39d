"""What ``train.py`` needs besides the policies: validated configs and stable-baselines3 envs.

- :mod:`~agents.training.config`: typed, validated YAML configs with command-line overrides;
- :mod:`~agents.training.envs`: the training envs (separate ``Yacht-v0`` envs, a table, or the vector env);
- :mod:`~agents.training.sb3_vector`: ``YachtVectorEnv`` as a stable-baselines3 ``VecEnv``;
- the planning agents' self-play (``plan_*``, ``plan2_*``).

The last part of ``agents``: it may import every other part; nothing in ``agents`` imports it.
"""
