"""Exact distributions of the final score under the expected-score optimal policy (not sampled).

The optimal player's turn from open set ``S`` ends in row ``c`` with ``p`` points with a
probability ``O[S, c, p]`` found by pushing probability mass forward through the turn: the first
roll's hand distribution, the optimal action of every hand (:mod:`agents.solvers.optimal`, lowest action
on ties, as :class:`agents.policies.policy.OptimalPolicy` plays), the hands each keep re-rolls into, and
so on until the mass is written into rows. What one turn passes to the next is only the open
set, so the distribution of the points still to come from a turn start is

    ``D[S] = sum_{c, p} O[S, c, p] * shift(D[S - c], p)``,   ``D[empty] = point mass at 0``,

solved over the open sets by number of open rows. From a position inside a turn the same forward
pass starts from that hand instead of the first roll. Tables: ``O`` (2**C, C, max_row + 1) and
``D`` (2**C, max_total + 1), float64, about 30 MB together for the default rules.

Typical use::

    from agents.solvers.distribution import score_distribution, quantiles
    pmf = score_distribution()                     # P(final score = s), s = 0 .. 303, from a new game
    quantiles(pmf, [0.1, 0.5, 0.9])
"""

from __future__ import annotations

import weakref

import numpy as np

from agents.solvers.array_checks import check_rolls_left
from agents.solvers.optimal import Solution, open_bits_from, open_sets_by_count, solve
from agents.solvers.target import check_rows_score_alone, max_total
from yacht_env.rules import YACHT, RuleSet

SETS_PER_CHUNK = 64


def turn_outcomes(
    rules: RuleSet,
    solution: Solution,
    open_sets: np.ndarray,
    start_mass: np.ndarray,
    rolls_left: int,
) -> np.ndarray:
    """P(the optimal player ends the turn writing ``p`` points in row ``c``): (len(open_sets), C, max_row + 1).

    ``start_mass`` (len(open_sets), num_hands) is the hand distribution with ``rolls_left`` rolls
    left (the first roll's distribution at a turn start).
    """
    dice = rules.dice
    scores = rules.hand_scores.astype(np.intp)
    first_score = dice.num_rerolls
    m, num_hands = start_mass.shape
    outcome = np.zeros((m, rules.num_rows, int(scores.max()) + 1))
    mass = np.asarray(start_mass, dtype=np.float64)
    hands = np.tile(np.arange(num_hands), m)
    sets = np.repeat(open_sets, num_hands)
    set_row = np.repeat(np.arange(m), num_hands)
    keep_after = dice.keep_after_reroll.astype(np.intp)
    for rolls in range(rolls_left, -1, -1):
        actions = solution.best_actions_batch(hands, rolls, sets)
        flat_mass = mass.reshape(-1)
        scoring = (actions >= first_score) & (flat_mass > 0)
        category = actions[scoring] - first_score
        np.add.at(
            outcome,
            (set_row[scoring], category, scores[hands[scoring], category]),
            flat_mass[scoring],
        )
        if rolls == 0:
            break
        rerolling = actions < first_score
        keeps = keep_after[hands, np.where(rerolling, actions, 0)]
        weights = np.where(rerolling, flat_mass, 0.0).reshape(m, num_hands)
        mass = np.einsum("sh,shj->sj", weights, dice.keep_to_hand[keeps.reshape(m, num_hands)])
    return outcome


def add_turn(outcome: np.ndarray, later: np.ndarray, open_sets: np.ndarray, width: int) -> np.ndarray:
    """``sum_{c,p} outcome[:, c, p] * shift(later[S - c], p)``, (len(open_sets), width)."""
    result = np.zeros((len(open_sets), width))
    for c in range(outcome.shape[1]):
        bit = 1 << c
        rows = np.flatnonzero(open_sets & bit)
        if not rows.size:
            continue
        child = later[open_sets[rows] & ~bit]
        for p in np.flatnonzero(outcome[rows, c].any(axis=0)):
            result[rows, p:] += outcome[rows, c, p, None] * child[:, : width - p]
    return result


class ScoreDistributions:
    """``turn[S, c, p]`` (O) and ``to_come[S, s]`` (D) of the module doc for one rule set."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.solution = solve(rules)
        self.width = max_total(rules) + 1
        sets_count = 1 << rules.num_rows
        self.turn = np.zeros((sets_count, rules.num_rows, int(rules.hand_scores.max()) + 1))
        self.to_come = np.zeros((sets_count, self.width))
        self.to_come[0, 0] = 1.0
        probabilities = rules.dice.hand_probabilities
        for open_sets in open_sets_by_count(rules.num_rows)[1:]:
            for start in range(0, len(open_sets), SETS_PER_CHUNK):
                sets = open_sets[start : start + SETS_PER_CHUNK]
                start_mass = np.broadcast_to(probabilities, (len(sets), len(probabilities)))
                self.turn[sets] = turn_outcomes(rules, self.solution, sets, start_mass, rules.rolls_per_turn - 1)
                self.to_come[sets] = add_turn(self.turn[sets], self.to_come, sets, self.width)
        self.turn.setflags(write=False)
        self.to_come.setflags(write=False)

    def final(
        self,
        open_bits: int | None = None,
        total: int = 0,
        hand: int | None = None,
        rolls_left: int | None = None,
    ) -> np.ndarray:
        """P(final score = s), s = 0 .. max_total, from a position (default: a new game).

        ``total``: points already written; ``hand`` and ``rolls_left`` place the position inside a
        turn (a turn start when omitted).
        """
        open_bits = self.rules.all_open if open_bits is None else int(open_bits)
        if hand is None:
            to_come = self.to_come[open_bits]
        else:
            if rolls_left is None:
                raise ValueError(f"a position inside a turn needs rolls_left with hand {hand!r}, got None")
            start = np.zeros((1, self.rules.dice.num_hands))
            start[0, hand] = 1.0
            outcome = turn_outcomes(self.rules, self.solution, np.array([open_bits]), start, rolls_left)
            to_come = add_turn(outcome, self.to_come, np.array([open_bits]), self.width)[0]
        pmf = np.zeros(self.width)
        pmf[total:] = to_come[: self.width - total]
        return pmf


_distributions: weakref.WeakKeyDictionary[RuleSet, ScoreDistributions] = weakref.WeakKeyDictionary()


def score_distributions(rules: RuleSet | None = None) -> ScoreDistributions:
    """The distribution arrays of ``rules`` (default :data:`YACHT`), built once per process."""
    rules = check_rows_score_alone(rules or YACHT)
    arrays = _distributions.get(rules)
    if arrays is None:
        arrays = _distributions[rules] = ScoreDistributions(rules)
    return arrays


def score_distribution(
    open_categories=None,
    total: int = 0,
    dice=None,
    rolls_left: int | None = None,
    rules: RuleSet | None = None,
) -> np.ndarray:
    """P(final score = s) under optimal play from a position; shape (max_total + 1,).

    Default: a new game. ``open_categories`` as for :func:`agents.solvers.optimal.open_bits_from`;
    ``total``: points already written; ``dice`` and ``rolls_left`` for a position inside a turn.
    """
    rules = rules or YACHT
    open_bits = rules.all_open if open_categories is None else open_bits_from(open_categories, rules)
    top = max_total(rules)
    if isinstance(total, bool) or not isinstance(total, (int, np.integer)) or not 0 <= total <= top:
        raise ValueError(f"total must be an integer in 0..{top}, got {total!r}")
    if (dice is None) != (rolls_left is None):
        raise ValueError("give both dice and rolls_left for a position inside a turn, or neither for a turn start")
    hand = None
    if dice is not None:
        hand = rules.hand(dice)
        check_rolls_left(rolls_left, rules)
    pmf = score_distributions(rules).final(open_bits, int(total), hand, rolls_left)
    return pmf


# -- summaries of a distribution or a sample --------------------------------------------------------


def quantiles(pmf: np.ndarray, levels) -> np.ndarray:
    """The smallest score ``s`` with P(score <= s) >= level, for each level."""
    cdf = np.cumsum(pmf)
    return np.searchsorted(cdf, np.asarray(levels) - 1e-12, side="left")


def at_least(pmf: np.ndarray, thresholds) -> np.ndarray:
    """P(score >= t) for each threshold ``t``."""
    tail = np.concatenate((np.cumsum(pmf[::-1])[::-1], [0.0]))
    return tail[np.clip(np.asarray(thresholds), 0, len(pmf))]
