"""``YachtVectorEnv`` as a stable-baselines3 ``VecEnv``: many games in one process, no subprocesses.

SB3 wants auto-reset in the same step, the last observation of an ended game in
``info["terminal_observation"]``, Monitor-style ``info["episode"]`` records and masks through
``env_method("action_masks")``; the vector env already resets in the same step, so this adapter
only reshapes what it returns.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from typing_extensions import override

from agents.training.config import EnvConfig
from yacht_env.extras import needs_extra
from yacht_env.vector_env import YachtVectorEnv

with needs_extra("train"):
    from stable_baselines3.common.vec_env import VecEnv
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn


class SB3YachtVecEnv(VecEnv):
    """:class:`~yacht_env.vector_env.YachtVectorEnv` behind stable-baselines3's ``VecEnv`` interface.

    Rewards are scaled by ``reward_scale`` for PPO; episode returns and lengths are recorded raw, as a
    ``Monitor`` would, and ended games report their last observation as ``terminal_observation``.
    """

    def __init__(self, config: EnvConfig):
        self.venv = YachtVectorEnv(
            num_envs=config.num_envs,
            rules=config.rules,
            observation_encoding=config.observation_encoding,
            illegal_action_penalty=config.illegal_action_penalty,
        )
        super().__init__(config.num_envs, self.venv.single_observation_space, self.venv.single_action_space)
        self.reward_scale = config.reward_scale
        self.episode_return = np.zeros(self.num_envs)  # raw points, as a Monitor would record them
        self.episode_length = np.zeros(self.num_envs, dtype=np.int64)
        self._actions: np.ndarray | None = None

    @override
    def reset(self):
        seeds = [seed for seed in self._seeds] if any(seed is not None for seed in self._seeds) else None
        obs, _ = self.venv.reset(seed=seeds)
        self._reset_seeds()
        self.episode_return[:] = 0
        self.episode_length[:] = 0
        return obs

    @override
    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    @override
    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, terminations, truncations, infos = self.venv.step(self._actions)
        self.episode_return += rewards
        self.episode_length += 1
        dones = terminations | truncations
        step_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            step_infos[i] = {
                "terminal_observation": infos["final_obs"][i],
                "TimeLimit.truncated": bool(truncations[i] and not terminations[i]),
                "episode": {"r": float(self.episode_return[i]), "l": int(self.episode_length[i]), "t": 0.0},
            }
        self.episode_return[dones] = 0
        self.episode_length[dones] = 0
        return obs, (rewards * self.reward_scale).astype(np.float32), dones, step_infos

    def action_masks(self) -> np.ndarray:
        """Every game's legal actions as bool, shape (num_envs, num_actions), for MaskablePPO."""
        return self.venv.action_masks()

    # -- the rest of SB3's VecEnv interface ----------------------------------------------------

    @override
    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        if method_name != "action_masks":
            raise AttributeError(f"{type(self).__name__} has no per-env method {method_name!r}")
        masks = self.action_masks()
        return [masks[i] for i in self._get_indices(indices)]

    @override
    def get_attr(self, attr_name: str, indices=None) -> list:
        value = getattr(self.venv, attr_name)
        return [value for _ in self._get_indices(indices)]

    @override
    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"{type(self).__name__} does not set per-env attributes ({attr_name!r})")

    @override
    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    @override
    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self.venv, attr_name)

    @override
    def close(self) -> None:
        self.venv.close()

    @override
    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs
