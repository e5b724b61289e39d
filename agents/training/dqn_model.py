"""Stable-Baselines3's DQN masked to the legal actions: three small overrides, the rest of DQN as it is.

The observations are :mod:`agents.training.dqn_env`'s ``{"observation", "action_mask"}``, in the replay buffer too.

- :class:`MaskedQNetwork` reads the ``observation`` part and returns its action values through
  :func:`agents.learned.legal_q.legal_values`: ``-inf`` at an illegal action, and a row of zeros for a state where
  nothing is legal (a game over). Its inherited greedy choice (``argmax``) is therefore the best legal action, and
  DQN's own TD target, ``r + (1 - done) * gamma * max_a' Q_target(s', a')`` with the target network built from the
  same class, takes its max over the next state's legal actions only (0 past a game's end, so no ``0 * -inf``). The
  taken action's value, which the loss reads, is a legal action's, never masked.
- :class:`MaskedDQNPolicy` builds both networks as :class:`MaskedQNetwork`, their features extractor on the
  ``observation`` part alone (the network never sees the mask as an input).
- :class:`MaskedDQN` explores among the legal actions only: each env's epsilon-draw (of its own) picks uniformly among
  its state's legal actions, and so does every step of the warm-up before ``learning_starts``. DQN draws over the
  whole action space in both places.
"""

from __future__ import annotations

import numpy as np
from typing_extensions import override

from agents.learned.legal_q import legal_values
from agents.training.dqn_env import MASK, OBSERVATION
from yacht_env.extras import needs_extra
from yacht_env.vector_env import sample_legal_actions

with needs_extra("train"):
    from stable_baselines3 import DQN
    from stable_baselines3.dqn.policies import DQNPolicy, QNetwork


class MaskedQNetwork(QNetwork):
    """DQN's Q network on the ``observation`` part, its values masked to the legal actions (see the module's docstring)."""

    @override
    def forward(self, obs):
        return legal_values(super().forward(obs[OBSERVATION]), obs[MASK])


class MaskedDQNPolicy(DQNPolicy):
    """DQN's policy whose online and target networks are :class:`MaskedQNetwork`."""

    @override
    def make_q_net(self) -> MaskedQNetwork:
        observation = self.observation_space[OBSERVATION]  # type: ignore[index]
        extractor = self.features_extractor_class(observation, **self.features_extractor_kwargs)
        arguments = {**self.net_args, "observation_space": observation, "features_extractor": extractor}
        return MaskedQNetwork(**arguments, features_dim=extractor.features_dim).to(self.device)


class MaskedDQN(DQN):
    """DQN whose exploration picks among the legal actions only (see the module's docstring).

    ``exploration_rng`` draws the exploration (saved with the model, so a resumed run draws on where it stopped).
    """

    def __init__(self, *args, seed: int | None = None, **kwargs):
        self.exploration_rng = np.random.default_rng(seed)
        super().__init__(*args, **{**kwargs, "seed": seed})

    @override
    def predict(self, observation, state=None, episode_start=None, deterministic=False):
        actions, state = self.policy.predict(observation, state, episode_start, deterministic)
        if deterministic or self.exploration_rate <= 0:
            return actions, state
        masks = np.asarray(observation[MASK]).reshape(-1, self.action_space.n)
        chosen = np.array(actions, dtype=np.int64).reshape(-1)
        exploring = self.exploration_rng.random(len(chosen)) < self.exploration_rate
        if exploring.any():
            chosen[exploring] = sample_legal_actions(masks[exploring], self.exploration_rng)
        return chosen.reshape(np.shape(actions)), state

    @override
    def _sample_action(self, learning_starts, action_noise=None, n_envs=1):
        if self.num_timesteps < learning_starts:  # the warm-up: uniformly random, among the legal actions
            actions = sample_legal_actions(self._last_obs[MASK], self.exploration_rng)
            return actions, actions
        return super()._sample_action(learning_starts, action_noise, n_envs)
