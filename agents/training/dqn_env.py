"""The masked DQN's training env: every observation carries its legal actions, so the replay buffer stores them.

A masked DQN needs the legal actions of a state three times: for its greedy action and its exploration at the state
it plays (the env's ``action_masks()`` gives those), and for the TD target of a transition sampled from the replay
buffer later, whose max over the next state's values must range over that state's legal actions only. By then the
env has moved on, so the next state's mask must be in the replay data itself.

Why a Dict observation ``{"observation": ..., "action_mask": ...}`` rather than the mask appended to a Box:
stable-baselines3 stores a Dict observation as it is (its ``DictReplayBuffer``, one array per key, the next
observation's mask included, and an ended game's ``terminal_observation`` too), the Q network reads the
``observation`` part by name and never sees the mask as an input (so its weights are those of a network on the
env's own observation, exported as any model file's, :mod:`agents.learned.model_files`), and the mask keeps its
0/1 type beside the observation's floats, with no offset arithmetic to get wrong. The alternative, recomputing the
mask from the observation, would tie the training to every encoding's decoder; the env's own ``action_masks()`` is
the one definition of a legal action.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from typing_extensions import override

from yacht_env.extras import needs_extra

with needs_extra("train"):
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

OBSERVATION, MASK = "observation", "action_mask"


class LegalActionsObservation(VecEnvWrapper):
    """``venv`` (any SB3 ``VecEnv`` of the project's envs, with ``action_masks``) whose observations are
    ``{"observation": the env's, "action_mask": its legal actions as 0/1}``.

    An ended game's ``terminal_observation`` gets an all-zero mask: nothing is legal once the game is over, and
    :func:`agents.learned.legal_q.legal_values` gives such a state the value 0.
    """

    def __init__(self, venv: VecEnv):
        num_actions = int(venv.action_space.n)  # type: ignore[attr-defined]
        space = spaces.Dict({OBSERVATION: venv.observation_space, MASK: spaces.MultiBinary(num_actions)})
        super().__init__(venv, observation_space=space)

    def masks(self) -> np.ndarray:
        """Every env's legal actions now, (num_envs, num_actions) int8."""
        return np.stack(self.venv.env_method("action_masks")).astype(np.int8)

    @override
    def reset(self):
        return {OBSERVATION: np.asarray(self.venv.reset()), MASK: self.masks()}

    @override
    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                terminal = info["terminal_observation"]
                info["terminal_observation"] = {OBSERVATION: terminal, MASK: np.zeros(self.action_space.n, dtype=np.int8)}  # type: ignore[attr-defined]
        return {OBSERVATION: np.asarray(observations), MASK: self.masks()}, rewards, dones, infos  # a Box env's: one array

    def action_masks(self) -> np.ndarray:
        """Every env's legal actions as bool, (num_envs, num_actions)."""
        return self.masks().astype(bool)
