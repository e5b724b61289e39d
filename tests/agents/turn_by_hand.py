"""Turns of one or two dice played by hand: what a planner's self-play must average, exploration included."""

from __future__ import annotations

import itertools

import numpy as np

from yacht_env.rules import Category, RuleSet, total

SUM_OF_DICE = {n: RuleSet(f"sum_of_{n}_dice", categories=(Category("choice", total),), num_dice=n) for n in (1, 2)}
"""One or two dice, one row scoring their sum, three rolls: a turn's play can be followed by hand."""


def points_by_hand(num_dice: int, epsilon: float, rolls: int = 3, faces: int = 6) -> float:
    """The expected points of a turn of :data:`SUM_OF_DICE` played for the most points, each decision taken at random
    with probability ``epsilon`` (score now, or any re-roll: a mask over the sorted dice, all alike): by hand, over
    every roll of the dice, from the last roll back. The plan re-rolls where it expects more than the sum showing,
    the first re-roll (by mask) of the highest value."""
    chances = points_distribution_by_hand(num_dice, epsilon, rolls, faces)
    return float(chances @ np.arange(len(chances)))


def points_distribution_by_hand(num_dice: int, epsilon: float, rolls: int = 3, faces: int = 6) -> np.ndarray:
    """The chance of each number of points (0 .. num_dice * faces) of the turn :func:`points_by_hand` plays."""
    rolls_of = lambda n: itertools.product(range(1, faces + 1), repeat=n)  # noqa: E731
    masks = range(1, 1 << num_dice)
    sums = np.eye(num_dice * faces + 1)  # the points of a sum, as chances

    def after(table, dice, mask):  # the table's mean once the dice of ``mask`` (bits over the sorted dice) are re-rolled
        kept = [die for i, die in enumerate(sorted(dice)) if not mask >> i & 1]
        return np.mean([table[tuple(sorted((*kept, *roll)))] for roll in rolls_of(num_dice - len(kept))], axis=0)

    hands = {tuple(sorted(roll)) for roll in rolls_of(num_dice)}
    planned = {hand: float(sum(hand)) for hand in hands}
    realized = {hand: sums[sum(hand)] for hand in hands}
    for _ in range(1, rolls):
        next_planned, next_realized = {}, {}
        for hand in hands:
            best, chosen = float(sum(hand)), 0
            for mask in masks:
                if after(planned, hand, mask) > best + 1e-12:
                    best, chosen = after(planned, hand, mask), mask
            outcomes = [sums[sum(hand)]] + [after(realized, hand, mask) for mask in masks]
            next_planned[hand] = best
            next_realized[hand] = epsilon * np.mean(outcomes, axis=0) + (1 - epsilon) * outcomes[chosen]
        planned, realized = next_planned, next_realized
    return np.mean([realized[tuple(sorted(roll))] for roll in rolls_of(num_dice)], axis=0)


def points_are_distributed_as_by_hand(points: np.ndarray, num_dice: int, epsilon: float) -> bool:
    """Whether the points of many turns fall on each number as often as by hand: each count within 5 standard
    deviations of its binomial mean."""
    chances = points_distribution_by_hand(num_dice, epsilon)
    counts = np.bincount(np.asarray(points, dtype=np.int64), minlength=len(chances))
    draws = len(points)
    return len(counts) == len(chances) and bool(
        np.all(np.abs(counts - draws * chances) <= 5 * np.sqrt(draws * chances * (1 - chances)) + 1e-9)
    )


def rows_filled_are_uniform(all_open: int, open_after: np.ndarray, num_rows: int) -> bool:
    """Whether the one row each sheet of ``open_after`` filled from ``all_open`` is every row about equally often:
    each count within 5 standard deviations of its binomial mean."""
    filled = np.log2(all_open & ~np.asarray(open_after)).astype(int)
    counts = np.bincount(filled, minlength=num_rows)
    draws, share = len(filled), 1 / num_rows
    return bool(np.all(np.abs(counts - draws * share) < 5 * np.sqrt(draws * share * (1 - share))))
