"""Training envs for stable-baselines3: separate ``Yacht-v0`` envs, or one in-process vector env."""

from __future__ import annotations

import gymnasium as gym
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

from agents.config import EnvConfig


def make_single_env(config: EnvConfig) -> gym.Env:
    """One ``Yacht-v0`` whose rewards PPO sees scaled; the Monitor inside records raw points."""
    env = gym.make(
        "Yacht-v0",
        observation_encoding=config.observation_encoding,
        illegal_action_penalty=config.illegal_action_penalty,
    )
    scale = config.reward_scale
    return gym.wrappers.TransformReward(Monitor(env), lambda reward: reward * scale)


def make_training_env(config: EnvConfig, seed: int) -> VecEnv:
    """``config.num_envs`` games stepped together, as separate envs or as one ``YachtVectorEnv``."""
    if config.vectorized:
        from agents.sb3_vector import SB3YachtVecEnv

        env = SB3YachtVecEnv(config)
    else:
        env = DummyVecEnv([lambda: make_single_env(config) for _ in range(config.num_envs)])
    env.seed(seed)
    return env
