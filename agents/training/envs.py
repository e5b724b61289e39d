"""Training envs for stable-baselines3: separate ``Yacht-v0`` envs, or one in-process vector env.

Every env plays the config's rule set (``env.rules``).
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym

from agents.registry import make_opponents
from agents.training.config import EnvConfig
from yacht_env.extras import needs_extra
from yacht_env.rules import rule_set

with needs_extra("train"):
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv


def make_single_env(config: EnvConfig, seat: int = 0) -> gym.Env:
    """One ``Yacht-v0`` whose rewards PPO sees scaled; the Monitor inside records raw rewards.

    With ``config.num_players > 1`` it is a ``YachtTable-v0``: the learner sits in ``seat`` at a
    table with ``config.opponents``.
    """
    rules = rule_set(config.rules)
    settings: dict[str, Any] = {
        "rules": rules,
        "observation_encoding": config.observation_encoding,
        "illegal_action_penalty": config.illegal_action_penalty,
    }
    if config.num_players > 1:
        opponents = make_opponents(list(config.opponents), rules=rules)
        env = gym.make("YachtTable-v0", opponents=opponents, reward_mode=config.reward_mode, seat=seat, **settings)
    else:
        env = gym.make("Yacht-v0", **settings)
    scale = config.reward_scale
    return gym.wrappers.TransformReward(Monitor(env), lambda reward: float(reward) * scale)


def make_training_env(config: EnvConfig, seed: int) -> VecEnv:
    """``config.num_envs`` games stepped together, as separate envs or as one ``YachtVectorEnv``."""
    env: VecEnv
    if config.vectorized:
        from agents.training.sb3_vector import SB3YachtVecEnv

        env = SB3YachtVecEnv(config)
    else:
        seats = [i % config.num_players for i in range(config.num_envs)]
        env = DummyVecEnv([functools.partial(make_single_env, config, seat) for seat in seats])
    env.seed(seed)
    return env
