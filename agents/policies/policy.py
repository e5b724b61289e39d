"""The one policy interface every agent implements, and the baseline policies.

A policy maps observations and their legal-action masks to legal actions. ``act_batch`` takes a
batch (shape (N, ...) observations and (N, num_actions) masks, as a vector env gives them) and is
what the evaluation harness calls; ``act`` is the single-observation convenience for ``Yacht-v0``.

Policies are built by name in :mod:`agents.registry` (``make_policy("optimal")``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
from typing_extensions import override

from yacht_env.encoding import make_encoding
from yacht_env.rules import RuleSet, rule_set
from yacht_env.vector_env import sample_legal_actions


class PolicyOutputError(ValueError):
    """A policy's network gave NaN or infinite outputs at a position, so it cannot choose there (one-line message).

    ``row``: the position's index in the batch the policy was asked about, when known.
    """

    def __init__(self, message: str, row: int | None = None):
        super().__init__(message)
        self.row = row


def describe_position(encoding, observations, row: int) -> str:
    """Position ``row`` of a batch of ``encoding``'s observations, for a message: dice, rolls left, open rows."""
    hands, rolls_left, open_bits = (np.asarray(part)[row] for part in encoding.decode_positions(observations)[:3])
    rules = encoding.rules
    dice = " ".join(str(face) for face in rules.dice.hands[int(hands)])
    rows = [name for i, name in enumerate(rules.category_names) if int(open_bits) >> i & 1]
    return f"dice {dice}, {int(rolls_left)} rolls left, open rows {', '.join(rows) or 'none'}"


class Policy(ABC):
    """Picks a legal action for each observation.

    ``encoding`` names the observation encoding the policy is fed (that of the env it plays in);
    policies that reason about the game itself decode observations with it.
    """

    name = "policy"

    def __init__(self, rules: RuleSet | str | None = None, encoding: str = "flat"):
        self.rules = rule_set(rules)  # a name of yacht_env.rules.RULE_SETS, a RuleSet, or None for YACHT
        self.encoding = make_encoding(encoding, self.rules)

    @abstractmethod
    def act_batch(self, observations, action_masks: np.ndarray) -> np.ndarray:
        """Legal actions, shape (N,) int64, for N observations and their (N, num_actions) masks."""

    def act(self, observation, action_mask) -> int:
        """The action for one observation of ``Yacht-v0`` and its mask."""
        batch: dict[str, np.ndarray] | np.ndarray
        if isinstance(observation, dict):
            batch = {key: np.asarray(value)[None] for key, value in observation.items()}
        else:
            batch = np.asarray(observation)[None]
        return int(self.act_batch(batch, np.asarray(action_mask)[None])[0])

    def reset(self, seed: int | None = None) -> None:
        """Re-seed whatever randomness the policy has (none by default)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class RandomPolicy(Policy):
    """Uniform over the legal actions."""

    name = "random"

    def __init__(self, rules=None, encoding="flat", seed: int | None = None):
        super().__init__(rules, encoding)
        self.reset(seed)

    @override
    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)

    @override
    def act_batch(self, observations, action_masks):
        return sample_legal_actions(action_masks, self.rng)

    def action_probabilities(self, observations, action_masks) -> np.ndarray:
        """The probability of each action, (N, num_actions): uniform over the legal ones."""
        legal = (np.asarray(action_masks) != 0).astype(float)
        return legal / legal.sum(axis=1, keepdims=True)


class QPolicy(Policy):
    """Plays the legal action of highest value under a DP solution's Q-values (lowest action on ties).

    Subclasses name the solver of :mod:`agents.solvers.optimal` that builds their solution (solved once per
    process and rule set, then shared).
    """

    solver = ""

    def __init__(self, rules=None, encoding="flat"):
        super().__init__(rules, encoding)
        from agents.solvers import optimal

        self.solution = getattr(optimal, self.solver)(self.rules)

    def q_values(self, observations, action_masks) -> np.ndarray:
        """The solution's Q-values of the positions, (N, num_actions), -inf where the masks forbid."""
        # Rules with bonuses decide on the sheet state too (upper subtotal, Yahtzee box), which the observation shows.
        decode = self.encoding.decode_positions if self.rules.has_bonus_or_joker else self.encoding.decode_batch
        q = self.solution.q_values_batch(*decode(observations))
        return np.where(np.asarray(action_masks) != 0, q, -np.inf)

    @override
    def act_batch(self, observations, action_masks):
        return self.q_values(observations, action_masks).argmax(axis=1)


class OptimalPolicy(QPolicy):
    """The exact expected-score maximizer: the argmax of the DP's Q-values."""

    name = "optimal"
    solver = "solve"


class GreedyPolicy(QPolicy):
    """Maximizes this turn's expected score and ignores the rest of the game.

    The same turn computation as the optimum, with the value of every later position set to 0:
    re-rolls aim at the best expected score this turn, and it scores the row worth most now.
    """

    name = "greedy"
    solver = "solve_myopic"
