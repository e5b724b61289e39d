"""The report's figures and words, shared by its text, its page and its tables: a mean with its interval and ``n``
(:func:`estimate`), how one is written (:func:`figure`), counted nouns (:func:`plural`), and the imported-games line.
"""

from __future__ import annotations

import numpy as np

MIN_N = 10  # fewer values than this: no interval
MIN_PLAYERS = 2  # a population figure on fewer people: no interval


def estimate(values, unit: str, players: int | None = None, clip=None) -> dict:
    """A mean with its 95% interval and ``n``; no interval (and a ``note``) on too few values or people."""
    from agents.stats import mean_ci

    values = np.asarray(values, dtype=float)
    n = int(len(values))
    out = {"mean": None, "low": None, "high": None, "n": n, "unit": unit, "note": None}
    if players is not None:
        out["players"] = players
    if n == 0:
        out["note"] = f"no {unit}"
        return out
    mean, low, high = mean_ci(values, clip=clip)
    out["mean"] = mean
    if n < MIN_N:
        out["note"] = f"too few {unit} for an interval (n={n} < {MIN_N})"
    elif players is not None and players < MIN_PLAYERS:
        out["note"] = f"one person only: no interval over a population (people={players} < {MIN_PLAYERS})"
    else:
        out["low"], out["high"] = low, high
    return out


def estimate_over_people(values, people, unit: str, clip=None) -> dict:
    """:func:`estimate` of a mean over decisions whose interval counts each person once.

    One person's decisions are not independent of each other (a skill, a habit), so the interval is the
    cluster-robust one over people: ``mean +- 1.96 * sqrt(C / (C - 1) * sum_c T_c**2) / n`` with ``T_c`` the
    sum of person ``c``'s deviations from the mean and ``C`` the number of people; ``people`` names each
    decision's person.
    """
    from agents.stats import Z95

    values, people = np.asarray(values, dtype=float), np.asarray(people)
    count = len(np.unique(people))
    out = estimate(values, unit, count, clip)
    if out["low"] is None:
        return out
    _, cluster = np.unique(people, return_inverse=True)
    totals = np.bincount(cluster, weights=values - out["mean"])
    half = Z95 * float(np.sqrt(count / (count - 1) * np.sum(totals**2))) / len(values)
    low, high = out["mean"] - half, out["mean"] + half
    if clip is not None:
        low, high = max(low, clip[0]), min(high, clip[1])
    out["low"], out["high"] = low, high
    return out


def plural(count: int, one: str, many: str | None = None) -> str:
    """``count`` and the noun that goes with it: ``1 game``, ``2 games``, ``1 person``, ``3 people``."""
    return f"{count} {one if count == 1 else many or one + 's'}"


def figure(e: dict, digits: int = 3, percent: bool = False) -> str:
    """``mean [low, high] (n=...)``, or the mean and the note when there is no interval."""
    if e["mean"] is None:
        return f"- ({e['note']})"
    scale = 100.0 if percent else 1.0
    fmt = (lambda v: f"{v * scale:.1f}%") if percent else (lambda v: f"{v:.{digits}f}")
    if e["low"] is None:
        return f"{fmt(e['mean'])} (n={e['n']}; {e['note']})"
    return f"{fmt(e['mean'])} [{fmt(e['low'])}, {fmt(e['high'])}] (n={e['n']})"


def imported_text(report: dict, how: str = "--include-imported") -> str:
    """What the report did with the games ``yacht import`` brought in from record files."""
    if report["filters"]["include_imported"]:
        return f"{plural(report['imported_games'], 'imported game')} counted in"
    if report["imported_games_left_out"]:
        return f"{plural(report['imported_games_left_out'], 'imported game')} left out ({how} counts them)"
    return "no imported game left out"
