"""A rollout buffer that keeps each sample's look-ahead, so that PPO computes it once per sample.

The look-ahead policy (:mod:`agents.training.lookahead_policy`) reads the one-turn look-ahead
``q`` of every action next to the observation. Computed inside the network, it would be computed
again each time PPO reads a sample: once per epoch (``n_epochs``), on top of the time the policy
acted on it. :class:`LookaheadRolloutBuffer` stores, with each observation it is given, the
look-ahead inputs the policy computed when it acted on that observation, and hands PPO's updates
rows of observation followed by those inputs, which the policy's features extractor passes through.
The network sees exactly the features it saw before, so training learns the same thing, faster.

The buffer belongs to a model in memory only: :func:`keep_lookahead_in_rollouts` gives it to a
``MaskablePPO`` built or loaded for training. Nothing of it is saved in a model's zip, so models
load and play as they always did.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from agents.training.lookahead_policy import LookaheadPolicy, OneTurnLookahead
from yacht_env.extras import needs_extra

with needs_extra("train"):
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer


class LookaheadRolloutBuffer(MaskableRolloutBuffer):
    """``MaskableRolloutBuffer`` whose samples' observations carry their look-ahead inputs.

    ``lookahead`` is the features extractor of the policy that fills the buffer; ``add`` takes
    from it the inputs of the observations it has just acted on (computing them only if it has not).
    """

    def __init__(self, *args, lookahead: OneTurnLookahead, **kwargs):
        self.lookahead = lookahead
        super().__init__(*args, **kwargs)

    def reset(self) -> None:
        """Empty the buffer, with room for each sample's look-ahead inputs."""
        super().reset()  # observations go back to the observation space's shape
        self.lookahead_inputs = np.zeros((self.buffer_size, self.n_envs, self.lookahead.num_actions), dtype=np.float32)

    def add(self, obs, *args, **kwargs) -> None:  # type: ignore[override]  # SB3 passes the observations first
        """Store one step of every env, with the look-ahead inputs of its observations."""
        observations = np.asarray(obs).reshape((self.n_envs, *self.obs_shape))
        self.lookahead_inputs[self.pos] = self.lookahead.lookahead_inputs(observations)
        super().add(obs, *args, **kwargs)

    def get(self, batch_size: int | None = None):
        """Minibatches whose observations end with their look-ahead inputs."""
        if not self.generator_ready:  # once per rollout, before sb3-contrib flattens the buffer for the epochs
            flat = self.observations.reshape(self.buffer_size, self.n_envs, -1)
            self.observations = np.concatenate([flat, self.lookahead_inputs], axis=-1)
        yield from super().get(batch_size)


def keep_lookahead_in_rollouts(model) -> None:
    """Give a ``MaskablePPO`` with a :class:`LookaheadPolicy` a :class:`LookaheadRolloutBuffer`.

    A model with another policy is left as it is. Call it before ``learn``, after building or
    loading the model; it changes how fast the model trains, not what it learns.
    """
    if not isinstance(model.policy, LookaheadPolicy):
        return
    lookahead = cast(OneTurnLookahead, model.policy.features_extractor)  # what a LookaheadPolicy builds
    replace_rollout_buffer(model, LookaheadRolloutBuffer, lookahead=lookahead)


def replace_rollout_buffer(model, buffer_class, **extra) -> None:
    """Give ``model`` a new rollout buffer of ``buffer_class``, sized and discounted as its own, with ``extra``."""
    old = model.rollout_buffer
    model.rollout_buffer = buffer_class(
        old.buffer_size,
        old.observation_space,
        old.action_space,
        old.device,
        gae_lambda=old.gae_lambda,
        gamma=old.gamma,
        n_envs=old.n_envs,
        **extra,
    )
