"""A MaskablePPO policy that starts from a one-turn look-ahead and learns what it misses.

For every action, ``q`` is the expected points of this turn if the action is taken and the rest of
the turn is played as well as possible: the one-turn expectimax behind the ``greedy`` baseline
(:func:`agents.solvers.optimal.solve_myopic`). It knows nothing of later turns: it never saves a row for
later. The policy's action logits are

    logits = MLP(observation, q / 50) + q / temperature

so a fresh network (whose last layer starts near zero) already plays a softened greedy policy, and
PPO learns the correction that trades points now for rows kept open. The critic sees ``q`` too.
``q`` is computed from the observation inside the network, so the env and its observations are
those of ``Yacht-v0``; a saved model needs this module to load, nothing else. In training, each
collected observation's ``q`` is computed once, when the policy acts on it, and kept with it in the
rollout buffer (:mod:`agents.training.lookahead_rollouts`): PPO's epochs read it from there.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from gymnasium import spaces
from typing_extensions import override

from agents.learned.model_files import ILLEGAL_INPUT, Q_SCALE, lookahead_inputs, one_turn_q  # noqa: F401 (shared with playing)
from agents.solvers.optimal import solve_myopic
from yacht_env.actions import ActionLayout
from yacht_env.encoding import make_encoding
from yacht_env.extras import needs_extra
from yacht_env.rules import rule_set

with needs_extra("train"):
    import torch as th
    from sb3_contrib.common.maskable.distributions import MaskableDistribution
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from stable_baselines3.common.type_aliases import PyTorchObs


class OneTurnLookahead(BaseFeaturesExtractor):
    """Features = the observation followed by ``q / Q_SCALE`` of every action (``ILLEGAL_INPUT`` if illegal).

    It also reads rows that are already features, the observation followed by those inputs, as the
    rollout buffer of :mod:`agents.training.lookahead_rollouts` hands them to PPO's updates: those
    pass through as they are. The two are told apart by width (a flat observation is narrower).
    """

    def __init__(self, observation_space: spaces.Box, encoding: str = "features", rules: str = "yacht"):
        game_rules = rule_set(rules)
        self.encoding = make_encoding(encoding, game_rules)
        if self.encoding.space != observation_space:
            raise ValueError(
                f"observation space {observation_space} is not that of the {encoding!r} encoding: {self.encoding.space}"
            )
        self.num_actions = ActionLayout(game_rules).num_actions
        super().__init__(observation_space, features_dim=int(np.prod(observation_space.shape)) + self.num_actions)
        self.turn = solve_myopic(game_rules)
        # (observations, their lookahead inputs): the batch acted on last
        self._last_batch: tuple[np.ndarray, np.ndarray] | None = None

    def one_turn_q(self, observations: th.Tensor) -> np.ndarray:
        """``q`` in points, shape (N, num_actions); -inf where illegal (and everywhere in a finished game)."""
        return one_turn_q(self.turn, self.encoding, observations.detach().cpu().numpy(), self.num_actions)

    def lookahead_inputs(self, observations: np.ndarray) -> np.ndarray:
        """What the network reads of ``q`` for these observations, (N, num_actions) float32.

        The last batch's inputs are kept: the rollout buffer asks for those of the observations the
        policy has just acted on, and gets them without a second look-ahead.
        """
        last = self._last_batch
        if last is not None and last[0].shape == observations.shape and np.array_equal(last[0], observations):
            return last[1]
        inputs = lookahead_inputs(one_turn_q(self.turn, self.encoding, observations, self.num_actions))
        self._last_batch = (np.array(observations, copy=True), inputs)
        return inputs

    @override
    def forward(self, observations: th.Tensor) -> th.Tensor:
        if observations.dim() == 2 and observations.shape[1] == self.features_dim:  # already the features
            return observations.float()
        inputs = self.lookahead_inputs(observations.detach().cpu().numpy())
        return th.cat([observations.flatten(1).float(), th.as_tensor(inputs, device=observations.device)], dim=1)


class LookaheadPolicy(MaskableActorCriticPolicy):
    """``MlpPolicy`` whose logits add the one-turn look-ahead ``q / temperature`` (see the module docstring).

    Extra arguments: ``temperature`` (points per logit unit; lower starts closer to plain greedy
    play), ``encoding``, the observation encoding the env uses (a Box encoding of ``Yacht-v0``),
    and ``rules``, the name of the rule set the env plays (a name of ``yacht_env.rules.RULE_SETS``,
    so that a saved model names its rules).
    """

    def __init__(
        self,
        observation_space,
        action_space,
        lr_schedule,
        *,
        temperature: float = 0.3,
        encoding: str = "features",
        rules: str = "yacht",
        **kwargs,
    ):
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        self.temperature = float(temperature)
        self.encoding_name = encoding
        self.rules_name = rule_set(rules).name
        kwargs["features_extractor_class"] = OneTurnLookahead
        kwargs["features_extractor_kwargs"] = {"encoding": encoding, "rules": self.rules_name}
        kwargs["share_features_extractor"] = True
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _get_constructor_parameters(self) -> dict:
        parameters = super()._get_constructor_parameters()
        parameters.update(temperature=self.temperature, encoding=self.encoding_name, rules=self.rules_name)
        for key in ("features_extractor_class", "features_extractor_kwargs", "share_features_extractor"):
            parameters.pop(key, None)  # set by __init__ itself
        return parameters

    def _features(self, obs: PyTorchObs) -> th.Tensor:
        # the features extractor is shared (see __init__), so actor and critic read one tensor
        return cast(th.Tensor, self.extract_features(obs))

    def _distribution(self, latent_pi: th.Tensor, features: th.Tensor, action_masks) -> MaskableDistribution:
        num_actions = cast(spaces.Discrete, self.action_space).n
        prior = features[:, -num_actions:] * (Q_SCALE / self.temperature)
        distribution = self.action_dist.proba_distribution(action_logits=self.action_net(latent_pi) + prior)
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        return distribution

    @override
    def forward(self, obs: th.Tensor, deterministic: bool = False, action_masks: np.ndarray | None = None):
        features = self._features(obs)
        latent_pi, latent_vf = self.mlp_extractor(features)
        distribution = self._distribution(latent_pi, features, action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        log_prob = distribution.log_prob(actions)
        actions = actions.reshape((-1, *self.action_space.shape))  # type: ignore[misc]  # Discrete: shape (), never None
        return actions, self.value_net(latent_vf), log_prob

    @override
    def evaluate_actions(self, obs: th.Tensor, actions: th.Tensor, action_masks: th.Tensor | None = None):
        features = self._features(obs)
        latent_pi, latent_vf = self.mlp_extractor(features)
        distribution = self._distribution(latent_pi, features, action_masks)
        return self.value_net(latent_vf), distribution.log_prob(actions), distribution.entropy()

    @override
    def get_distribution(self, obs: PyTorchObs, action_masks: np.ndarray | None = None) -> MaskableDistribution:
        features = self._features(obs)
        return self._distribution(self.mlp_extractor.forward_actor(features), features, action_masks)
