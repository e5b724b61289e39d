"""A person's skill as a temperature: the maximum-likelihood ``T`` of the softmax over Q* (:mod:`agents.policies.softmax`).

A person who chooses by that softmax at temperature ``T`` (points) takes the choice ``c`` of a decision with
probability ``exp(x_c / T) / sum_d exp(x_d / T)``, where ``x = Q* - max Q*`` over the decision's distinct choices
(rows, and distinct multisets of dice to keep). The log-likelihood of the person's decisions, in ``b = 1 / T``, is
``l(b) = sum_i [b x_i,chosen - log sum_d exp(b x_i,d)]``, concave in ``b`` (an exponential family in ``b``), so the
maximum is the one root of ``l'(b) = sum_i (x_i,chosen - E_b[x_i])`` and the 95% profile-likelihood interval is the
one interval where ``l`` stays within ``CHI2_95 / 2`` of its maximum.

A person who always played a best choice has ``T = 0`` exactly (``l`` grows all the way to ``b = infinity``): a
best choice is any of those tied with the best ``Q*`` within :data:`agents.solvers.exact_solution.TIE_RELATIVE`
(:func:`agents.policies.softmax.best_choices`), so keeping 5 5 rather than 2 2 toward a Yacht, whose values differ
in their last bits, is one. One who played no better than uniform over the choices has no finite ``T`` (the
estimate is None, with a note).
"""

from __future__ import annotations

import math

import numpy as np

from agents.policies.softmax import choosable
from agents.solvers.exact_solution import gaps_to_best
from yacht_env.extras import needs_extra
from yacht_play.report.results import Histogram, PersonSkill, Skill, SkillBand, SkillPopulation, TemperatureFit

with needs_extra("serve"):
    from scipy.optimize import brentq
    from scipy.optimize.elementwise import bracket_root

CHI2_95 = 3.841458820694124  # the 95% quantile of chi-square with 1 degree of freedom
T_MAX = 1000.0  # points: an interval reaching past this has no upper end
B_MAX = 1e6  # 1/points: an interval reaching past this starts at T = 0


def choice_gaps(q: np.ndarray, hands: np.ndarray, actions: np.ndarray, rules) -> tuple[np.ndarray, np.ndarray]:
    """``(x, chosen)``: each decision's ``Q* - max Q*`` per choice, (N, num_actions) with -inf where no choice
    stands, and the chosen action's, (N,); exactly 0 for every best choice
    (:func:`agents.solvers.exact_solution.gaps_to_best`), so that equal values rounded apart fit no temperature.
    """
    gaps = gaps_to_best(q)
    x = np.where(choosable(q, hands, rules), gaps, -np.inf)
    return x, gaps[np.arange(len(gaps)), np.asarray(actions, dtype=np.int64)]


def log_likelihood(b: float, x: np.ndarray, chosen: np.ndarray) -> float:
    """``l(b)``, the log-likelihood at ``b = 1/T``; ``b = inf`` is its limit (``-inf`` unless every choice was a best one)."""
    if math.isinf(b):
        if (chosen < 0).any():
            return -math.inf
        return -float(np.log((x == 0).sum(axis=1)).sum())  # ties among the best choices share the probability
    with np.errstate(invalid="ignore"):
        scaled = np.where(np.isfinite(x), b * x, -np.inf)
    return float(b * chosen.sum() - np.log(np.exp(scaled).sum(axis=1)).sum())


def score(b: float, x: np.ndarray, chosen: np.ndarray) -> float:
    """``l'(b) = sum_i (x_i,chosen - E_b[x_i])``: decreasing in ``b``."""
    with np.errstate(invalid="ignore"):
        w = np.exp(np.where(np.isfinite(x), b * x, -np.inf))
    expected = (np.where(np.isfinite(x), x, 0.0) * w).sum(axis=1) / w.sum(axis=1)
    return float((chosen - expected).sum())


def root(f, low: float, high: float | None = None) -> float:
    """The one root of ``f``, monotonic from ``low`` up: ``[low, high]`` (``high`` by default ``low + 1``), widened
    upward until ``f`` changes sign across it (:func:`scipy.optimize.elementwise.bracket_root`), then narrowed to the
    root by ``brentq``.
    """
    bracket = bracket_root(np.vectorize(f, otypes=[float]), low, high, xmin=low)
    if not bracket.success:
        raise ArithmeticError(f"no change of sign from b = {low:g} up (bracket_root status {int(bracket.status)})")
    return float(brentq(f, *map(float, bracket.bracket), xtol=1e-12, rtol=1e-10))


def fit_inverse_temperature(x: np.ndarray, chosen: np.ndarray) -> float:
    """The maximum-likelihood ``b = 1/T``: ``inf`` when every choice was a best one, 0 when no better than uniform."""
    if not (chosen < 0).any():
        return math.inf
    if score(0.0, x, chosen) <= 0:
        return 0.0
    return root(lambda b: score(b, x, chosen), 0.0)  # the score falls to sum(chosen) < 0: it has a root


def profile_interval(b_hat: float, x: np.ndarray, chosen: np.ndarray) -> tuple[float, float]:
    """The 95% profile-likelihood interval of ``b``: where ``l(b) >= l(b_hat) - CHI2_95 / 2``; its lower end may be 0,
    its upper end is ``inf`` when it lies past :data:`B_MAX` (``T``'s interval then starts at 0).
    """
    floor = log_likelihood(b_hat, x, chosen) - CHI2_95 / 2
    gap = lambda b: log_likelihood(b, x, chosen) - floor  # noqa: E731 - decreasing away from b_hat on both sides
    # below b_hat the gap rises to CHI2_95 / 2 (at b_hat, or as b grows when b_hat = inf): its one root is there
    low = 0.0 if gap(0.0) >= 0 else root(gap, 0.0, b_hat if math.isfinite(b_hat) else None)
    if b_hat >= B_MAX or gap(B_MAX) >= 0:
        return low, math.inf
    return low, root(gap, b_hat, B_MAX)


def temperature_of(b: float) -> float:
    """``T = 1/b`` (``inf`` at ``b = 0``, 0 at ``b = inf``)."""
    return math.inf if b == 0 else 0.0 if math.isinf(b) else 1.0 / b


def fit_temperature(x: np.ndarray, chosen: np.ndarray, min_n: int = 10) -> TemperatureFit:
    """The maximum-likelihood ``T`` of decisions ``(x, chosen)`` (:func:`choice_gaps`), as the report's figures are:
    ``mean`` (the estimate), ``low``/``high`` (its 95% profile-likelihood interval), ``n`` (decisions), ``note``.

    No interval on fewer than ``min_n`` decisions; ``high`` is None when the interval reaches past ``T_MAX``.
    """
    n = int(len(chosen))
    if n == 0:
        return TemperatureFit(None, None, None, n, "decisions", "no decisions")
    b_hat = fit_inverse_temperature(x, chosen)
    t_hat = temperature_of(b_hat)
    if math.isinf(t_hat):
        return TemperatureFit(None, None, None, n, "decisions", "no better than uniform over the choices: no finite temperature")
    if n < min_n:
        return TemperatureFit(t_hat, None, None, n, "decisions", f"too few decisions for an interval (n={n} < {min_n})")
    b_low, b_high = profile_interval(b_hat, x, chosen)
    t_low, t_high = temperature_of(b_high), temperature_of(b_low)
    high = t_high if t_high <= T_MAX else None
    note = None if high is not None else f"the interval reaches past {T_MAX:g} points"
    return TemperatureFit(t_hat, t_low, high, n, "decisions", note)


SKILL_BANDS = ((0.0, 0.25), (0.25, 1.0), (1.0, 3.0), (3.0, math.inf))  # people grouped by their fitted T (points)


def band_of(temperature: float | None) -> str:
    """The label of the skill band of a fitted ``temperature`` (None, no finite T: the last band)."""
    t = math.inf if temperature is None else temperature
    low, high = next((low, high) for low, high in SKILL_BANDS if low <= t < high or math.isinf(high))
    return f"T < {high:g}" if low == 0 else f"T >= {low:g}" if math.isinf(high) else f"{low:g} <= T < {high:g}"


def band_labels() -> list[str]:
    """Every skill band's label, from the most skilled."""
    return [band_of(low) for low, _ in SKILL_BANDS]


def skill_of_people(x: np.ndarray, chosen: np.ndarray, player: np.ndarray, game_of: np.ndarray, min_n: int = 10) -> Skill:
    """Each person's fitted ``T`` (in order of first decision) and the population's: the median over people, the
    fit pooled over every decision, a histogram of the people's ``T`` and how many people each skill band holds.

    ``x, chosen``: the people's decisions (:func:`choice_gaps`); ``player``, ``game_of``: whose and which game's.
    """
    names = list(dict.fromkeys(player.tolist()))
    players = []
    for name in names:
        mine = player == name
        fit = fit_temperature(x[mine], chosen[mine], min_n)
        players.append(PersonSkill(name, len(set(game_of[mine].tolist())), fit, band_of(fit.mean)))
    fitted = np.array([math.inf if p.temperature.mean is None else p.temperature.mean for p in players])
    median = float(np.median(fitted)) if len(fitted) else None
    finite = fitted[np.isfinite(fitted)]
    counts, edges = np.histogram(finite, bins=12, range=(0.0, max(float(finite.max()), 1e-9))) if len(finite) else ([], [])
    population = SkillPopulation(
        people=len(names),
        median=median if median is not None and math.isfinite(median) else None,
        pooled=fit_temperature(x, chosen, min_n),
        no_finite_temperature=int((~np.isfinite(fitted)).sum()),
        bands=tuple(SkillBand(label, sum(p.band == label for p in players)) for label in band_labels()),
        histogram=Histogram(tuple(map(float, edges)), tuple(map(int, counts)), len(finite)),
    )
    return Skill(tuple(players), population)
