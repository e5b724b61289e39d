"""The Bradley-Terry ratings on tiny tables whose maximum-likelihood ratings are known in closed form."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from yacht_play.report import ratings


def game(*seats, mode="table"):
    """A finished game: ``seats`` are ``(name or policy, kind, total)``."""
    players = [
        {"seat": k, "kind": kind, "name": name, "policy": name if kind == "agent" else None}
        for k, (name, kind, _) in enumerate(seats)
    ]
    return SimpleNamespace(header={"mode": mode}, players=players, end={"totals": [total for _, _, total in seats]})


def test_two_wins_in_three_is_log_two_apart():
    games = [game(("greedy", "agent", 200), ("ann", "human", 150))] * 2 + [game(("greedy", "agent", 100), ("ann", "human", 150))]
    out = ratings.rate(games, bootstrap=0)
    by_name = {p.name: p.rating.mean for p in out.players}
    assert by_name["greedy"] == ratings.ANCHOR  # the anchor
    # the odds of greedy over ann are 2: 400 log10(2) Elo points (the weak prior takes a little off)
    assert by_name["greedy"] - by_name["ann"] == pytest.approx(400 * math.log10(2), rel=2e-3)
    assert out.games == 3 and out.pairs == 3 and out.players[0].name == "greedy"


def test_no_bootstrap_gives_no_interval_and_one_resample_an_interval_of_one_refit():
    games = [game(("greedy", "agent", 200), ("ann", "human", 150))] * 2 + [game(("greedy", "agent", 100), ("ann", "human", 150))]
    for player in ratings.rate(games, bootstrap=0).players:
        assert (player.rating.low, player.rating.high, player.rating.note) == (None, None, "no bootstrap: no interval")
    for player in ratings.rate(games, bootstrap=1).players:
        assert player.rating.low == player.rating.high is not None and player.rating.note is None


def test_a_tie_counts_half_and_a_table_of_three_gives_three_pairs():
    games = [game(("greedy", "agent", 100), ("ann", "human", 100))]  # a tie: equal ratings
    tied = {p.name: p.rating.mean for p in ratings.rate(games, bootstrap=0).players}
    assert tied["ann"] == pytest.approx(tied["greedy"], abs=1e-9)
    pairs = ratings.PairResults.of([game(("optimal", "agent", 250), ("greedy", "agent", 200), ("bob", "human", 200))])
    assert sorted(pairs.result.tolist()) == [0.5, 1.0, 1.0] and len(pairs.players) == 3
    solo = ratings.PairResults.of([game(("x", "human", 10), mode="solitaire")])
    assert solo.games == 0 and len(solo.result) == 0  # solitaire: no result


def test_the_ratings_chain_and_the_bootstrap_covers_them():
    rng = np.random.default_rng(3)
    strength = {"optimal": 1.0, "greedy": 0.0, "ann": -1.0}  # logits
    names = list(strength)
    games = []
    for _ in range(600):
        a, b = rng.choice(3, 2, replace=False)
        wins = rng.random() < 1 / (1 + math.exp(strength[names[b]] - strength[names[a]]))
        kind = lambda n: "human" if n == "ann" else "agent"  # noqa: E731
        games.append(game((names[a], kind(names[a]), 1 if wins else 0), (names[b], kind(names[b]), 0 if wins else 1)))
    out = ratings.rate(games, bootstrap=100)
    by_name = {p.name: p.rating for p in out.players}
    assert [p.name for p in out.players] == ["optimal", "greedy", "ann"]
    assert by_name["greedy"].low == by_name["greedy"].high == ratings.ANCHOR  # anchored in every resample
    for name, logit in strength.items():
        true = ratings.ANCHOR + ratings.ELO * logit
        assert by_name[name].low <= true <= by_name[name].high, (name, by_name[name], true)
    again = ratings.rate(games, bootstrap=100)
    assert again == out  # seeded: the same games, the same intervals


def test_each_interval_is_the_central_95_percent_of_the_refits_on_resampled_games(monkeypatch):
    rng = np.random.default_rng(5)
    names = [("greedy", "agent"), ("ann", "human"), ("bob", "human")]
    games = []
    for _ in range(60):
        a, b = rng.choice(3, 2, replace=False)
        games.append(game((*names[a], int(rng.integers(0, 3))), (*names[b], int(rng.integers(0, 3)))))
    refits = []
    fit = ratings.fit

    def recorded(pairs, weights=None, start=None):
        r = fit(pairs, weights, start)
        if weights is not None:  # a refit on a resample of the games (the point fit has no weights)
            refits.append(r.copy())
        return r

    monkeypatch.setattr(ratings, "fit", recorded)
    out = ratings.rate(games, bootstrap=40)
    pairs = ratings.PairResults.of(games)
    draws = np.array([ratings.anchored(r, pairs.players.index(("agent", "greedy"))) for r in refits])
    assert draws.shape == (40, 3)
    for k, (_, name) in enumerate(pairs.players):
        rating = next(p.rating for p in out.players if p.name == name)
        low, high = np.percentile(draws[:, k], [2.5, 97.5])
        assert rating.low == pytest.approx(low, abs=1e-9) and rating.high == pytest.approx(high, abs=1e-9), name
        assert name == "greedy" or rating.low < rating.high  # the people's ratings vary over the resamples


def test_an_unbeaten_player_stays_finite_and_a_table_without_greedy_averages_the_anchor():
    games = [game(("optimal", "agent", 300), ("ann", "human", 100))] * 5
    out = ratings.rate(games, bootstrap=20)
    values = [p.rating.mean for p in out.players]
    assert all(math.isfinite(v) for v in values) and np.mean(values) == pytest.approx(ratings.ANCHOR)
    assert out.anchor.policy is None
    assert out.agents_vs_people[0].observed == 1.0 and out.agents_vs_people[0].predicted > 0.9


def test_the_ratings_say_how_many_games_of_each_mode_they_pool_wherever_they_are_shown():
    """Duplicate games (the same dice) and table games (dice of one's own) share one fit: the text and the page say
    so, with the games of each mode; a report of one mode says only how many games it rated."""
    from yacht_play.report.page_skill import ratings_section
    from yacht_play.report.text import rating_lines

    duplicate = [game(("greedy", "agent", 200), ("ann", "human", 150), mode="duplicate")] * 2
    table = [game(("greedy", "agent", 100), ("ann", "human", 150), ("optimal", "agent", 180))] * 3
    solo = [game(("ann", "human", 120), mode="solitaire")]
    both = ratings.rate(duplicate + table + solo, bootstrap=0)
    assert [(m.mode, m.games) for m in both.games_by_mode] == [("duplicate", 2), ("table", 3)]
    text = "\n".join(rating_lines(SimpleNamespace(ratings=both)))
    page = ratings_section(SimpleNamespace(ratings=both))
    assert f"(games rated: 2 duplicate, 3 table; {ratings.POOLED})" in text
    assert "Games rated: 2 duplicate, 3 table; the modes are pooled in one fit" in page
    one = ratings.rate(table, bootstrap=0)
    text = "\n".join(rating_lines(SimpleNamespace(ratings=one)))
    assert "  (games rated: 3 table)" in text.splitlines()
    assert "pooled" not in text + ratings_section(SimpleNamespace(ratings=one))


def test_an_agent_s_observed_score_against_people_is_its_own_in_either_seat():
    """The server seats the person first: an agent in the second seat scores what it won, not what the person won."""
    games = [game(("ann", "human", 150), ("greedy", "agent", 200))] * 3 + [game(("ann", "human", 150), ("greedy", "agent", 100))]
    games += [game(("optimal", "agent", 100), ("bob", "human", 100))]  # a tie, the agent first: 1/2 either way
    games += [game(("ann", "human", 90), ("optimal", "agent", 80), ("bob", "human", 70))]  # one win, one loss
    out = ratings.rate(games, bootstrap=0)
    assert {p.name: p.rating.n for p in out.players} == {"ann": 5, "greedy": 4, "optimal": 2, "bob": 2}  # games each
    by_agent = {p.policy: p for p in out.agents_vs_people}
    assert by_agent["greedy"].pairs == 4 and by_agent["greedy"].observed == 0.75
    assert by_agent["optimal"].pairs == 3 and by_agent["optimal"].observed == pytest.approx(1.5 / 3)


def test_solitaire_games_between_the_tables_change_no_bootstrap_draw():
    """The bootstrap resamples the games with two seats or more: a solitaire game in between is no game of theirs, so
    the same seed gives the same intervals with or without it (the draws are read by place among the games counted)."""
    rng = np.random.default_rng(5)
    tables = [
        game(("greedy", "agent", int(rng.integers(100, 200))), (name, "human", int(rng.integers(100, 200))))
        for name in ["ann", "bob", "cat"] * 8
    ]
    solo = SimpleNamespace(players=[{"seat": 0, "kind": "human", "name": "ann", "policy": None}], end={"totals": [120]})
    with_solitaire = [solo, *(g for table in tables for g in (table, solo))]
    assert ratings.rate(with_solitaire, bootstrap=30) == ratings.rate(tables, bootstrap=30)


def test_400_points_apart_is_a_factor_of_ten_in_the_odds():
    assert ratings.win_probability(1400.0, 1000.0) == pytest.approx(10 / 11, rel=1e-12)
    assert ratings.win_probability(1000.0, 1000.0) == 0.5


def flat_gap(wins: int, games: int, low: float, high: float) -> float:
    """The gap ``d`` (logits) in ``[low, high]`` at which ``wins - games p(d) = PRIOR d / 2``, by bisection."""
    flat = lambda d: wins - games / (1 + math.exp(-d)) - ratings.PRIOR * d / 2  # noqa: E731
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if flat(middle) > 0 else (low, middle)
    return (low + high) / 2


def test_two_wins_in_three_is_the_gap_at_which_the_penalized_likelihood_is_flat():
    """Two players, one pair result per game: the prior pulls both ratings alike toward 0, so ``r = (d/2, -d/2)`` and
    the gap ``d`` (logits) solves ``2 - 3 p(d) = PRIOR d / 2``: the wins less their expected number, against the
    prior's pull. Solved here by bisection; the fit gives it in Elo points, and its ratings predict ``p(d)`` back."""
    games = [game(("greedy", "agent", 200), ("ann", "human", 150))] * 2 + [game(("greedy", "agent", 100), ("ann", "human", 150))]
    by_name = {p.name: p.rating.mean for p in ratings.rate(games, bootstrap=0).players}
    d = flat_gap(2, 3, 0.0, math.log(2))  # flat > 0 at 0; < 0 at log 2 (the odds without the prior)
    assert by_name["greedy"] - by_name["ann"] == pytest.approx(400 * math.log10(math.e) * d, rel=1e-9)
    assert ratings.win_probability(by_name["greedy"], by_name["ann"]) == pytest.approx(1 / (1 + math.exp(-d)), rel=1e-9)


@pytest.mark.parametrize("wins, games", [(5, 5), (49, 50), (1, 40)])
def test_a_lopsided_record_is_fitted_to_its_maximum_far_from_the_start(wins, games):
    """The further the maximum lies from equal ratings, the flatter the likelihood there: ``wins - games p(d) = PRIOR
    d / 2`` puts an unbeaten player about 11 logits up. The fit reaches that gap (by bisection here) to its last
    digits, not a point on the way to it."""
    won, lost = game(("greedy", "agent", 200), ("ann", "human", 150)), game(("greedy", "agent", 100), ("ann", "human", 150))
    by_name = {p.name: p.rating.mean for p in ratings.rate([won] * wins + [lost] * (games - wins), bootstrap=0).players}
    d = flat_gap(wins, games, -50.0, 50.0)  # flat > 0 at -50, < 0 at 50
    assert abs(d) > 3  # far from the start
    assert by_name["greedy"] - by_name["ann"] == pytest.approx(400 * math.log10(math.e) * d, rel=1e-9)


def test_the_same_policy_twice_at_a_table_still_meets_every_other_seat():
    """Only the pair of the two seats of one policy is left out: each of them still has its result against the person."""
    pairs = ratings.PairResults.of([game(("greedy", "agent", 200), ("greedy", "agent", 100), ("ann", "human", 150))])
    assert pairs.players == [("agent", "greedy"), ("human", "ann")]
    assert list(zip(pairs.first.tolist(), pairs.second.tolist(), pairs.result.tolist())) == [(0, 1, 1.0), (0, 1, 0.0)]


def test_each_player_is_rated_as_its_kind_and_only_agents_are_compared_with_people():
    games = [game(("greedy", "agent", 200), ("ann", "human", 150))] * 2 + [game(("ann", "human", 150), ("bob", "human", 120))]
    games += [game(("optimal", "agent", 250), ("greedy", "agent", 200))]  # against no person: no comparison
    out = ratings.rate(games, bootstrap=0)
    assert {p.name: p.kind for p in out.players} == {"greedy": "agent", "optimal": "agent", "ann": "human", "bob": "human"}
    assert [(p.policy, p.pairs, p.observed) for p in out.agents_vs_people] == [("greedy", 2, 1.0)]


def test_without_threadpoolctl_the_ratings_are_the_same(monkeypatch):
    """threadpoolctl only keeps the solves on one thread: where it is not installed, the fit runs as it is."""
    import sys

    games = [game(("greedy", "agent", 200), ("ann", "human", 150)), game(("greedy", "agent", 100), ("ann", "human", 150))]
    games += [game(("optimal", "agent", 250), ("ann", "human", 150))]
    with_it = ratings.rate(games, bootstrap=10)
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # importing it now raises ImportError
    assert ratings.rate(games, bootstrap=10) == with_it
