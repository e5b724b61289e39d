"""A softmax over the optimal Q-values: human-like play of a chosen skill, and the rule a person's skill is measured by.

A position's *choices* are what can come of it: each row it may score, and each distinct multiset of dice it may
keep (two re-roll actions that keep the same dice, such as keeping either of two equal dice, are one choice). At a
*temperature* ``T`` (points) the rule takes choice ``c`` with probability proportional to
``exp((Q*(c) - max Q*) / T)`` and plays it by the lowest action that makes it. A position's *best choices* are those
of the best ``Q*``, ties counted within :data:`agents.solvers.exact_solution.TIE_RELATIVE` (equal values whose sums
rounded apart are equal: :func:`best_choices`). ``T = 0`` is the optimum: the limit of the rule as ``T`` falls to 0,
an equal probability on each best choice, played by the lowest action of them, as ``optimal`` breaks ties; the
larger ``T``, the more points the rule gives away.

One implementation serves the simulated people (:class:`yacht_play.simulate.Chooser`), the policy ``softmax:T``
(:class:`SoftmaxPolicy`, seeded and reproducible) and the report's fit of each person's ``T``
(:mod:`yacht_play.report.skill`).
"""

from __future__ import annotations

import math

import numpy as np
from typing_extensions import override

from agents.policies.arguments import name_number, refusal
from agents.policies.policy import QPolicy
from agents.solvers.exact_solution import best_actions, gaps_to_best
from yacht_env.option_values import DECIMAL_FORMS
from yacht_env.rules import RuleSet, cached_per_rules

PREFIX = "softmax:"
EXP_ZERO = 800.0  # exp(-800) is 0 in float64 (the smallest positive double is exp(-744.4))


@cached_per_rules
def choice_actions(rules: RuleSet) -> np.ndarray:
    """The lowest action making the same choice as each action, per hand: read-only int64 (hands, num_actions).

    A re-roll action maps to the lowest re-roll action keeping the same dice; a scoring action to itself.
    """
    keeps = rules.dice.keep_after_reroll.astype(np.int64)  # (hands, re-roll actions): the keep of each
    hands, rerolls = keeps.shape
    table = np.tile(np.arange(rerolls + rules.num_rows, dtype=np.int64), (hands, 1))
    for hand in range(hands):
        _, first, inverse = np.unique(keeps[hand, 1:], return_index=True, return_inverse=True)
        table[hand, 1:rerolls] = first[inverse] + 1  # action 0 (re-roll nothing) is never legal: left as itself
    table.setflags(write=False)
    return table


def choosable(q: np.ndarray, hands: np.ndarray, rules: RuleSet) -> np.ndarray:
    """Which actions stand for a choice (legal, and the lowest of their choice): bool like ``q`` (N, num_actions)."""
    lowest = choice_actions(rules)[np.asarray(hands, dtype=np.int64)]
    return np.isfinite(q) & (lowest == np.arange(q.shape[1]))


def best_choices(q: np.ndarray, hands: np.ndarray, rules: RuleSet) -> np.ndarray:
    """Which actions stand for a best choice (:func:`choosable`, and tied with the best ``Q*``): bool like ``q``."""
    return choosable(q, hands, rules) & (gaps_to_best(q) == 0)


def check_temperature(temperature) -> float:
    """``temperature`` as a float if it is a number >= 0 (points), else ``ValueError`` naming it."""
    try:
        value = float(temperature)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(temperature, bool) or not value >= 0 or math.isinf(value):
        raise ValueError(f"temperature must be a number >= 0 (points), got {temperature!r}")
    return value


def probabilities(q: np.ndarray, hands: np.ndarray, rules: RuleSet, temperature: float) -> np.ndarray:
    """The rule's probability of each action, (N, num_actions): a choice's on its lowest action, 0 elsewhere.

    ``q``: Q* of every action, -inf where illegal (N, num_actions); ``hands``: the hand indices (N,).
    """
    q = np.asarray(q, dtype=float)
    stands = choosable(q, hands, rules)
    gaps = gaps_to_best(q)
    if temperature == 0:
        weights = (stands & (gaps == 0)).astype(float)
    else:
        # exp(gap / T) is 0 in float64 once gap / T falls below ~-745; capping the gap at -EXP_ZERO * T leaves every
        # weight as it was and keeps the quotient finite, which a tiny T (1e-320: gap / T = -inf) would not.
        capped = np.maximum(np.where(stands, gaps, 0.0), -EXP_ZERO * temperature)
        weights = np.where(stands, np.exp(capped / temperature), 0.0)
    return weights / weights.sum(axis=1, keepdims=True)


def sample(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of the probabilities ``p`` (N, num_actions), drawn with ``rng`` (one uniform per row)."""
    cumulative = np.cumsum(p, axis=1)
    draws = rng.random(len(p))[:, None] * cumulative[:, -1:]
    return np.minimum((cumulative <= draws).sum(axis=1), p.shape[1] - 1).astype(np.int64)


def choose(q: np.ndarray, hands: np.ndarray, rules: RuleSet, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """The rule's actions, (N,) int64: the optimum at ``T = 0`` (no draw: the lowest best action), else one draw per
    position.
    """
    if temperature == 0:
        return best_actions(q)
    return sample(probabilities(q, hands, rules, temperature), rng)


def parse_softmax(name: str) -> float:
    """The temperature of ``softmax:T``; ``ValueError`` naming the name when ``T`` is not a number >= 0."""
    text = name[len(PREFIX) :]
    if text == "fit":
        raise ValueError(
            "softmax:fit is the people's median fitted temperature, known only inside yacht report; "
            "elsewhere give a number, e.g. softmax:1.5"
        )
    allowed = f"T must be a temperature in points >= 0 {DECIMAL_FORMS}, e.g. softmax:1.5 or softmax:2e-3"
    try:
        return check_temperature(name_number(name, PREFIX, whole=False, allowed=allowed))
    except ValueError:  # also a number too large to be finite, such as 1e999
        raise ValueError(refusal(name, allowed)) from None


class SoftmaxPolicy(QPolicy):
    """Plays a softmax over the optimal Q-values at ``temperature`` points (the module's rule); ``seed`` fixes its draws."""

    solver = "solve"

    def __init__(self, temperature: float, rules=None, encoding="flat", seed: int | None = None):
        super().__init__(rules, encoding)
        self.temperature = check_temperature(temperature)
        self.name = f"{PREFIX}{self.temperature:g}"
        self.reset(seed)

    @override
    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def action_probabilities(self, observations, action_masks) -> np.ndarray:
        """The probability of each action, (N, num_actions) (a choice's on its lowest action)."""
        hands = self.encoding.decode_batch(observations)[0]
        return probabilities(self.q_values(observations, action_masks), hands, self.rules, self.temperature)

    @override
    def act_batch(self, observations, action_masks):
        hands = self.encoding.decode_batch(observations)[0]
        return choose(self.q_values(observations, action_masks), hands, self.rules, self.temperature, self.rng)
