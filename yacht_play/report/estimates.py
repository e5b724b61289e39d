"""The report's figures: a mean with its 95% interval and ``n`` (:func:`estimate`), and the same with an interval that
counts each person once (:func:`estimate_over_people`), each an :class:`~yacht_play.report.results.Estimate`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from yacht_play.report.results import Estimate

MIN_N = 10  # fewer values than this: no interval
MIN_PLAYERS = 2  # a population figure on fewer people: no interval


def estimate(values, unit: str, players: int | None = None, clip=None) -> Estimate:
    """A mean with its 95% interval and ``n``; no interval (and a ``note``) on too few values or people."""
    from agents.evaluation.stats import mean_ci

    values = np.asarray(values, dtype=float)
    n = int(len(values))
    if n == 0:
        return Estimate(None, None, None, n, unit, f"no {unit}", players)
    mean, low, high = mean_ci(values, clip=clip)
    if n < MIN_N:
        return Estimate(mean, None, None, n, unit, f"too few {unit} for an interval (n={n} < {MIN_N})", players)
    if players is not None and players < MIN_PLAYERS:
        note = f"one person only: no interval over a population (people={players} < {MIN_PLAYERS})"
        return Estimate(mean, None, None, n, unit, note, players)
    return Estimate(mean, low, high, n, unit, None, players)


def estimate_over_people(values, people, unit: str, clip=None) -> Estimate:
    """:func:`estimate` of a mean over decisions whose interval counts each person once.

    One person's decisions are not independent of each other (a skill, a habit), so the interval is the
    cluster-robust one over people: ``mean +- 1.96 * sqrt(C / (C - 1) * sum_c T_c**2) / n`` with ``T_c`` the
    sum of person ``c``'s deviations from the mean and ``C`` the number of people; ``people`` names each
    decision's person.
    """
    from agents.evaluation.stats import Z95

    values, people = np.asarray(values, dtype=float), np.asarray(people)
    count = len(np.unique(people))
    out = estimate(values, unit, count, clip)
    if out.mean is None or out.low is None:
        return out
    mean = out.mean
    _, cluster = np.unique(people, return_inverse=True)
    totals = np.bincount(cluster, weights=values - mean)
    half = Z95 * float(np.sqrt(count / (count - 1) * np.sum(totals**2))) / len(values)
    low, high = mean - half, mean + half
    if clip is not None:
        low, high = max(low, clip[0]), min(high, clip[1])
    return dataclasses.replace(out, low=low, high=high)
