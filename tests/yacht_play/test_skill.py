"""The fit of a person's temperature, checked on hand-made decision sets whose likelihood is solved by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from agents.policies import softmax
from agents.solvers.optimal import solve
from yacht_env.rules import rule_set
from yacht_play.report import skill

INF = -np.inf


def decisions(chosen_gaps, choices=(0.0, -1.0)):
    """Decisions with the same choices ``x`` (Q* - max Q*), and the chosen gap of each."""
    x = np.tile(np.array([*choices, INF]), (len(chosen_gaps), 1))  # a column of no choice, as illegal actions are
    return x, np.array(chosen_gaps, dtype=float)


def two_choice_fit(best: int, worse: int) -> tuple[float, float, float]:
    """``(b_hat, b_low, b_high)`` in closed form for ``best`` best choices and ``worse`` a point worse, of two:
    ``l(b) = -worse b - n log(1 + e^-b)`` peaks at ``b_hat = log(best / worse)``, and the interval's ends are where it
    is ``CHI2_95 / 2`` below that peak (the lower end 0 where ``l(0)`` is above that)."""
    n = best + worse
    ell = lambda b: -worse * b - n * math.log1p(math.exp(-b))  # noqa: E731
    b_hat = math.log(best / worse)
    fall = lambda b: ell(b) - ell(b_hat) + 3.841458820694124 / 2  # noqa: E731
    return b_hat, 0.0 if fall(0.0) >= 0 else brentq(fall, 0.0, b_hat), brentq(fall, b_hat, 100.0)


def test_the_likelihood_is_the_softmax_over_the_choices():
    x, chosen = decisions([0.0, -1.0])
    b = 0.7
    by_hand = math.log(1 / (1 + math.exp(-b))) + math.log(math.exp(-b) / (1 + math.exp(-b)))
    assert skill.log_likelihood(b, x, chosen) == pytest.approx(by_hand, rel=1e-12)


def test_two_best_choices_to_one_point_lost_give_t_one_over_log_two():
    # 200 best choices and 100 that lose 1 point, of two: l(b) = -100 b - 300 log(1 + e^-b), l'(b) = 0 at e^-b = 1/2
    x, chosen = decisions([0.0, 0.0, -1.0] * 100)
    fit = skill.fit_temperature(x, chosen)
    assert fit.mean == pytest.approx(1 / math.log(2), rel=1e-9)
    _, b_low, b_high = two_choice_fit(200, 100)
    assert fit.low == pytest.approx(1 / b_high, rel=1e-8) and fit.high == pytest.approx(1 / b_low, rel=1e-8)
    # three such decisions alone cannot rule out any large T: no upper end
    few = skill.fit_temperature(*decisions([0.0, 0.0, -1.0]), min_n=1)
    assert few.mean == pytest.approx(1 / math.log(2)) and few.high is None and "past 1000 points" in few.note


@pytest.mark.parametrize(("best", "worse"), [(219, 81), (150, 50), (60, 30), (13, 4)])
def test_an_interval_above_zero_ends_where_the_likelihood_falls_by_chi2_over_2(best, worse):
    """Of two choices a point apart, ``best`` best and ``worse`` worse: ``b_hat = log(best / worse)``, and each end of
    ``b``'s interval is where ``l(b) = -worse b - n log(1 + e^-b)`` is ``CHI2_95 / 2`` below its maximum. None holds
    ``b = 0`` (so T's upper end is finite); the first three hold ``b = 1``, and at (13, 4) ``l(0)`` is only 0.59 below
    the interval's floor: a lower end read at ``b = 1``, or taken as 0 near the floor, would open the upper end of T."""
    x, chosen = decisions([0.0] * best + [-1.0] * worse)
    b_hat, b_low, b_high = two_choice_fit(best, worse)
    assert 0 < b_low < b_hat < b_high and skill.log_likelihood(0.0, x, chosen) < skill.log_likelihood(b_low, x, chosen)
    fit = skill.fit_temperature(x, chosen)
    assert fit.mean == pytest.approx(1 / b_hat, rel=1e-9)
    assert fit.low == pytest.approx(1 / b_high, rel=1e-8) and fit.high == pytest.approx(1 / b_low, rel=1e-8)
    assert fit.note is None


def test_no_decisions_fit_nothing():
    x, chosen = decisions([])
    fit = skill.fit_temperature(x, chosen)
    assert (fit.mean, fit.low, fit.high, fit.n, fit.note) == (None, None, None, 0, "no decisions")


@pytest.mark.parametrize("n", [8, 10, 40])
def test_an_always_optimal_person_has_t_zero_exactly(n):
    x, chosen = decisions([0.0] * n)
    fit = skill.fit_temperature(x, chosen, min_n=1)
    assert fit.mean == 0.0 and fit.low == 0.0
    # l(b) = -n log(1 + e^-b) rises to 0: the interval ends where it is 1.92 below (for n = 8, l(1) is 0.59 short)
    assert fit.high == pytest.approx(-1 / math.log(math.expm1(3.841458820694124 / (2 * n))), rel=1e-8)


def test_best_choices_whose_values_round_apart_fit_t_zero():
    """Scratching Little or Big Straight (mirror images) leaves the same value, and keeping 2 2 or 5 5 toward a Yacht
    is worth the same, though the sums round apart (by 9e-16 and 2e-16): a person who always takes the one that
    rounded lower played a best choice every time, and fits T = 0 exactly, not a tiny T."""
    rules = rule_set("yacht")
    straights = sum(1 << rules.category_names.index(name) for name in ("little_straight", "big_straight"))
    yacht = 1 << rules.category_names.index("yacht")
    hands = np.array([rules.hand((1, 1, 3, 3, 6)), rules.hand((2, 2, 5, 5, 6))] * 6)
    rolls_left, open_bits = np.array([0, 2] * 6), np.array([straights, yacht] * 6)
    q = solve(rules).q_values_batch(hands, rolls_left, open_bits)
    actions = np.array([32 + rules.category_names.index("little_straight"), 0b10011] * 6)  # 0b10011 keeps 5 5
    assert (q[np.arange(12), actions] < q.max(axis=1)).all()  # below the best in the last bits
    x, chosen = skill.choice_gaps(q, hands, actions, rules)
    assert (chosen == 0).all() and ((x == 0).sum(axis=1) == 2).all()
    fit = skill.fit_temperature(x, chosen)
    assert fit.mean == 0.0 and fit.low == 0.0


def test_no_better_than_uniform_has_no_finite_temperature():
    x, chosen = decisions([0.0, -1.0])  # the best choice half the time, of two
    fit = skill.fit_temperature(x, chosen, min_n=1)
    assert fit.mean is None and "no finite temperature" in fit.note


def test_ties_among_the_best_choices_share_the_limit():
    x, chosen = decisions([0.0] * 3, choices=(0.0, 0.0, -2.0))
    assert skill.log_likelihood(math.inf, x, chosen) == pytest.approx(3 * math.log(0.5))
    assert skill.fit_temperature(x, chosen, min_n=1).mean == 0.0


def test_too_few_decisions_no_interval():
    x, chosen = decisions([0.0, 0.0, -1.0])
    fit = skill.fit_temperature(x, chosen)
    assert fit.low is None and "n=3 < 10" in fit.note


@pytest.mark.parametrize("name", ["yacht", "yahtzee"])
def test_draws_of_the_softmax_recover_its_temperature(name):
    """Positions of a new sheet, choices drawn by agents.policies.softmax at T = 2: the fit's interval holds 2."""
    rules = rule_set(name)
    rng = np.random.default_rng(7)
    n = 400
    hands, rolls = rng.integers(0, rules.dice.num_hands, n), rng.integers(0, 3, n)
    all_open = (1 << rules.num_rows) - 1
    extra = (np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)) if rules.has_bonus_or_joker else ()
    q = solve(rules).q_values_batch(hands, rolls, np.full(n, all_open), *extra)
    actions = softmax.choose(q, hands, rules, 2.0, rng)
    x, chosen = skill.choice_gaps(q, hands, actions, rules)
    fit = skill.fit_temperature(x, chosen)
    assert fit.low < 2.0 < fit.high and fit.high - fit.low < 1.5
    # a keep made by the higher of two equal actions counts as the same choice
    assert np.isfinite(x[np.arange(n), softmax.choice_actions(rules)[hands, actions]]).all()
    assert (x <= 0).all() and (x.max(axis=1) == 0).all()  # no choice above the best; -inf where none stands


def test_a_person_who_gave_away_less_than_a_point_in_all_is_fitted_as_any_other():
    # 3 best choices and 1 losing half a point, of two: l'(b) = 0 where e^-b/2 / (1 + e^-b/2) = 1/4, so b = 2 log 3
    x, chosen = decisions([0.0, 0.0, 0.0, -0.5], choices=(0.0, -0.5))
    assert skill.fit_temperature(x, chosen, min_n=1).mean == pytest.approx(1 / (2 * math.log(3)), rel=1e-9)


def test_people_are_fitted_one_by_one_and_banded():
    x1, c1 = decisions([0.0] * 12)
    x2, c2 = decisions([0.0] * 8 + [-1.0] * 4)
    x, chosen = np.vstack([x1, x2]), np.concatenate([c1, c2])
    player = np.array(["ace"] * 12 + ["bob"] * 12, dtype=object)
    out = skill.skill_of_people(x, chosen, player, np.array(["g1"] * 24, dtype=object))
    ace, bob = out.players
    assert ace.temperature.mean == 0.0 and ace.band == "T < 0.25"
    assert bob.temperature.mean == pytest.approx(1 / math.log(2), rel=1e-9) and bob.band == "1 <= T < 3"
    population = out.population
    assert population.median == pytest.approx(0.5 / math.log(2)) and population.people == 2
    assert [b.people for b in population.bands] == [1, 0, 1, 0]


def test_a_person_without_a_finite_temperature_counts_in_the_median_as_the_least_skilled():
    """Three people: T = 0, T = 1 / log 2, and one no better than uniform (T beyond every finite value): the median is
    the middle one's, not the mean of the two finite ones."""
    parts = [decisions([0.0] * 12), decisions([0.0] * 8 + [-1.0] * 4), decisions([0.0, -1.0] * 6)]
    x, chosen = np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    player = np.array(["ace"] * 12 + ["bob"] * 12 + ["cat"] * 12, dtype=object)
    out = skill.skill_of_people(x, chosen, player, np.array(["g1"] * 36, dtype=object))
    assert out.players[2].temperature.mean is None
    assert out.population.median == pytest.approx(1 / math.log(2), rel=1e-9)
    assert out.population.no_finite_temperature == 1 and out.population.histogram.n == 2
    histogram = out.population.histogram  # of the two finite ones, from 0 to the largest
    assert sum(histogram.counts) == 2 and histogram.edges[0] == 0.0
    assert histogram.edges[-1] == pytest.approx(1 / math.log(2))
    # two of four without one: the median lies past every finite value, so there is none to give
    more = skill.skill_of_people(
        np.vstack([x, parts[2][0]]),
        np.concatenate([chosen, parts[2][1]]),
        np.concatenate([player, ["dan"] * 12]),
        np.array(["g1"] * 48, dtype=object),
    )
    assert more.population.median is None and more.population.no_finite_temperature == 2


def test_the_likelihood_at_zero_temperature_is_minus_infinity_once_a_choice_was_not_a_best_one():
    x, chosen = decisions([0.0, 0.0, -1.0])
    assert skill.log_likelihood(math.inf, x, chosen) == -math.inf
    assert skill.log_likelihood(1e6, x, chosen) < -1e5  # the limit it is: l(b) falls without bound as b grows


def test_the_skill_bands_cover_every_temperature_once_each_from_zero_up():
    bands = skill.SKILL_BANDS
    assert bands[0][0] == 0.0 and math.isinf(bands[-1][1])
    assert all(high == low for (_, high), (low, _) in zip(bands[:-1], bands[1:]))  # no gap, no overlap
    for (low, high), label in zip(bands, skill.band_labels()):
        assert skill.band_of(low) == label  # each band holds its lower edge
        assert f"{low:g}" in label or low == 0.0
        assert f"{high:g}" in label or math.isinf(high)


@pytest.mark.parametrize(("n", "has_interval"), [(9, False), (10, True)])
def test_ten_decisions_give_an_interval_for_a_fit_and_for_each_person(n, has_interval):
    x, chosen = decisions([0.0] * (n - 2) + [-1.0] * 2)
    assert (skill.fit_temperature(x, chosen).low is not None) == has_interval
    people = skill.skill_of_people(x, chosen, np.array(["ace"] * n, dtype=object), np.array(["g1"] * n, dtype=object))
    assert (people.players[0].temperature.low is not None) == has_interval


@pytest.mark.parametrize("step", [1.0, 0.5])
def test_a_person_a_little_worse_than_uniform_has_no_finite_temperature(step):
    # choices 0, -step, -2 step points: always the middle one and once the worst is below the uniform mean at b = 0
    # (by `step` points in all), though above it at b < 0: the fit stops at b = 0 (T infinite) and does not look for a
    # root below it
    x, chosen = decisions([-step] * 10 + [-2 * step], choices=(0.0, -step, -2 * step))
    assert skill.score(0.0, x, chosen) == pytest.approx(-step)
    assert skill.fit_inverse_temperature(x, chosen) == 0.0
    fit = skill.fit_temperature(x, chosen)
    assert fit.mean is None and "no better than uniform" in fit.note


def test_an_interval_reaching_below_a_millionth_of_a_point_starts_at_zero():
    # Bob's decisions (8 best, 4 a point worse: T = 1 / log 2) with every gap shrunk to s points: b's interval scales
    # as 1 / s, and its upper end comes out at 1,162,161 per point, past B_MAX: open (inf), so T's starts at 0
    s = math.log(2) / 4e5
    b_hat, _, b_high = two_choice_fit(8, 4)
    assert skill.B_MAX < b_high / s < 2 * skill.B_MAX  # the case: an end past the cut-off, though not far past it
    x, chosen = decisions([0.0] * 8 + [-s] * 4, choices=(0.0, -s))
    b_fit = skill.fit_inverse_temperature(x, chosen)
    assert b_fit == pytest.approx(b_hat / s, rel=1e-9)
    assert skill.profile_interval(b_fit, x, chosen)[1] == math.inf
    fit = skill.fit_temperature(x, chosen)
    assert fit.mean == pytest.approx(s / b_hat, rel=1e-9) and fit.low == 0.0


def test_an_interval_wholly_past_the_cut_off_starts_at_zero_and_ends_where_found():
    # 200 best choices and 100 a point worse (b's interval about 0.46 to 0.94) with the gaps shrunk to put b's lower
    # end at twice B_MAX: the fit, and its whole interval, lie past the cut-off, under a millionth of a point of T
    b_hat, b_low, _ = two_choice_fit(200, 100)
    s = b_low / (2 * skill.B_MAX)
    x, chosen = decisions([0.0, 0.0, -s] * 100, choices=(0.0, -s))
    b_fit = skill.fit_inverse_temperature(x, chosen)
    assert b_fit == pytest.approx(b_hat / s, rel=1e-9) and b_fit > skill.B_MAX
    assert skill.profile_interval(b_fit, x, chosen) == (pytest.approx(2 * skill.B_MAX, rel=1e-8), math.inf)
    fit = skill.fit_temperature(x, chosen)
    assert (fit.mean, fit.low, fit.high) == (pytest.approx(s / b_hat, rel=1e-9), 0.0, pytest.approx(s / b_low, rel=1e-8))


@pytest.mark.parametrize("end_over_cut_off", [1 - 1e-3, 1 + 1e-3])
def test_an_upper_end_just_under_the_cut_off_is_found_and_one_just_past_it_is_open(end_over_cut_off):
    # the same decisions with the gaps set so that b's upper end lies a thousandth under or over B_MAX
    b_hat, b_low, b_high = two_choice_fit(8, 4)
    s = b_high / (skill.B_MAX * end_over_cut_off)
    x, chosen = decisions([0.0] * 8 + [-s] * 4, choices=(0.0, -s))
    low, high = skill.profile_interval(skill.fit_inverse_temperature(x, chosen), x, chosen)
    assert low == pytest.approx(b_low / s, rel=1e-8)
    assert high == (pytest.approx(b_high / s, rel=1e-8) if end_over_cut_off < 1 else math.inf)


@pytest.mark.parametrize(("best", "worse", "t_low"), [(8, 4, 1.5e-6), (4, 3, 1.1e-6)])
def test_an_interval_whose_lower_end_lies_above_a_millionth_of_a_point_keeps_it(best, worse, t_low):
    """Of two choices s points apart, ``best`` best and ``worse`` worse: the upper end of b scales as 1 / s, so the
    lower end of T is s / b_high(1), and s is chosen to put it at ``t_low``, above the cut-off (1 / B_MAX): the report
    gives it as it is. At (4, 3) the likelihood is flat: b's upper end, 1 / 1.1e-6 per point, lies close under B_MAX."""
    b_hat, _, b_high = two_choice_fit(best, worse)
    s = t_low * b_high
    x, chosen = decisions([0.0] * best + [-s] * worse, choices=(0.0, -s))
    fit = skill.fit_temperature(x, chosen, min_n=1)
    assert fit.mean == pytest.approx(s / b_hat, rel=1e-9) and fit.low == pytest.approx(t_low, rel=1e-7)


def test_the_people_histogram_spans_zero_to_the_largest_fitted_temperature():
    # two people below one point: T = 1 / (2 log 3) (3 best of 4, half a point lost) and T = 0.5 / log 2
    parts = [decisions([0.0] * 3 + [-0.5], choices=(0.0, -0.5)), decisions([0.0] * 8 + [-0.5] * 4, choices=(0.0, -0.5))]
    x, chosen = np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    player = np.array(["ace"] * 4 + ["bob"] * 12, dtype=object)
    histogram = skill.skill_of_people(x, chosen, player, np.array(["g1"] * 16, dtype=object)).population.histogram
    assert histogram.edges[0] == 0.0 and histogram.edges[-1] == pytest.approx(0.5 / math.log(2), rel=1e-9)
    assert sum(histogram.counts) == 2 and histogram.counts[-1] == 1
    # every fitted T is 0: the one bin that holds them starts at 0
    x, chosen = decisions([0.0] * 24)
    player = np.array(["ace"] * 12 + ["bob"] * 12, dtype=object)
    histogram = skill.skill_of_people(x, chosen, player, np.array(["g1"] * 24, dtype=object)).population.histogram
    assert histogram.edges[0] == 0.0 < histogram.edges[-1] and histogram.counts[0] == 2 == sum(histogram.counts)


@pytest.mark.parametrize(("f", "start", "root"), [(lambda b: 10.0 - b, 1.0, 10.0), (lambda b: b * b - 2.0, 0.5, math.sqrt(2))])
def test_the_root_search_widens_its_bracket_upward_to_the_one_root(f, start, root):
    assert skill.root(f, 0.0, start) == pytest.approx(root, rel=1e-10)


def test_a_root_search_that_finds_no_change_of_sign_says_so():
    with pytest.raises(ArithmeticError, match=r"no change of sign from b = 0 up \(bracket_root status -\d\)"):
        skill.root(lambda b: 1.0 + b, 0.0, 1.0)
