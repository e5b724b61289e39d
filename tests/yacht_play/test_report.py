"""The population report's figures (:mod:`yacht_play.report.build`) on small games built here, checked against values
worked out by hand: the filters, the rule set, the people's loss per decision, the histogram, the loss by games
played, the duplicate pairs, and the report's header."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime, timedelta

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from yacht_play.match import Match, Player
from yacht_play.records import GameRecord
from yacht_play.report.build import (
    GAMES_PLAYED_BINS,
    DecisionPositions,
    GradedDecisions,
    build_report,
    duplicate_pairs,
    histogram_of,
    loss_by_games_played,
    one_rule_set,
    people_on_the_dp_scale,
)
from yacht_play.report.filters import Filters
from yacht_play.report.results import Histogram, Report

NO_POSITIONS = DecisionPositions(*[np.zeros(0, dtype=np.int64)] * 6)  # the figures here read no position

START = datetime(2026, 1, 1)


def seat(index: int, name: str, kind: str = "human") -> dict:
    """A seat of a game's header: a person, or an agent playing the policy ``name``."""
    return {"seat": index, "name": name, "kind": kind, "policy": name if kind == "agent" else None, "seed": 0}


def finished(game_id: str, *seats: dict, totals=None, mode: str = "table", rules: str = "yacht", time: str = "") -> GameRecord:
    """A finished game of ``seats`` (its decisions left out: the figures here read only the header and the end)."""
    header = {"game_id": game_id, "mode": mode, "rules": rules, "time": time, "players": list(seats)}
    return GameRecord(header, [], {"totals": list(totals or [0] * len(seats))})


def graded(*decisions: tuple[str, str, bool, float]) -> GradedDecisions:
    """Decisions ``(game, player, row choice?, loss)`` graded, laid out as :meth:`GradedDecisions.of` does (greedy: an agent)."""
    n = len(decisions)
    return GradedDecisions(
        records=[{"game_id": g, "player": p} for g, p, _, _ in decisions],
        loss=np.array([loss for *_, loss in decisions], dtype=float),
        kind=np.array(["agent" if p == "greedy" else "human" for _, p, _, _ in decisions]),
        is_row=np.array([row for _, _, row, _ in decisions], dtype=bool),
        player=np.array([p for _, p, _, _ in decisions], dtype=object),
        game_of=np.array([g for g, *_ in decisions], dtype=object),
        q=np.zeros((n, 0)),
        positions=NO_POSITIONS,
    )


def iso(moment: datetime) -> str:
    """``moment`` as a game's header writes its start (ISO 8601, UTC)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


moments = st.integers(0, 400).map(lambda days: START + timedelta(days=days))


@given(moments, moments, moments)
@example(START + timedelta(days=1), START, START + timedelta(days=2))  # strictly inside the range: kept
@example(START + timedelta(days=2), START, START + timedelta(days=2))  # at ``until``: left out
@example(START, START, START + timedelta(days=2))  # at ``since``: kept
def test_the_date_filters_keep_the_games_started_from_since_up_to_but_not_at_until(started, since, until):
    game = finished("g", seat(0, "ann"), time=iso(started))
    assert Filters(since=iso(since), until=iso(until)).keep_played(game) == (since <= started < until)
    assert Filters(until=iso(until)).keep_played(game) == (started < until)
    assert Filters(since=iso(since)).keep_played(game) == (since <= started)


def test_games_under_two_rule_sets_are_refused_naming_both_and_one_rule_set_is_theirs():
    games = [finished("a", seat(0, "ann"), rules="yatzy"), finished("b", seat(0, "ann")), finished("c", seat(0, "bob"))]
    with pytest.raises(ValueError) as refused:
        one_rule_set(games, "yacht")
    assert str(refused.value) == (
        "the games were played under 2 rule sets (yacht, yatzy): report one at a time (--rules NAME, or ?rules=NAME)"
    )
    assert one_rule_set(games[1:], "yatzy") == "yacht"
    assert one_rule_set([], "yatzy") == "yatzy"


# ann: a re-roll (loss 0.5) and a row (3.0); bob: a row (0.25) and a re-roll (7.0); greedy's row (100) is not a person's
DECISIONS = graded(
    ("g1", "ann", False, 0.5),
    ("g1", "ann", True, 3.0),
    ("g1", "greedy", True, 100.0),
    ("g2", "bob", True, 0.25),
    ("g2", "bob", False, 7.0),
)


def test_each_person_s_loss_splits_into_re_roll_choices_and_row_choices():
    players = {p.name: p for p in people_on_the_dp_scale(DECISIONS).players}
    assert list(players) == ["ann", "bob"]
    expected = {"ann": (1.75, 0.5, 3.0), "bob": (3.625, 7.0, 0.25)}
    for name, (all_, reroll, row) in expected.items():
        assert players[name].games == 1
        assert (players[name].all.mean, players[name].all.n) == (all_, 2)
        assert (players[name].reroll.mean, players[name].reroll.n) == (reroll, 1)
        assert (players[name].row.mean, players[name].row.n) == (row, 1)


def test_the_pooled_loss_counts_every_decision_of_the_people_once_and_no_agent_s():
    population = people_on_the_dp_scale(DECISIONS).population
    assert population.people == 2 and population.games == 2
    pooled = population.pooled
    assert (pooled.all.mean, pooled.all.n, pooled.all.players) == (2.6875, 4, 2)
    assert (pooled.reroll.mean, pooled.reroll.n, pooled.reroll.players) == (3.75, 2, 2)
    assert (pooled.row.mean, pooled.row.n, pooled.row.players) == (1.625, 2, 2)
    over_people = population.over_people
    assert (over_people.all.mean, over_people.all.n) == (2.6875, 2)


def test_the_histogram_runs_from_zero_to_the_largest_person_s_loss_and_counts_each_person():
    histogram = people_on_the_dp_scale(DECISIONS).histogram
    assert histogram.n == 2 and histogram.unit == "people"
    assert histogram.edges == pytest.approx([3.625 * k / 12 for k in range(13)]) and histogram.edges[0] == 0.0
    assert histogram.counts == (0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1)  # 1.75 and 3.625 of 0..3.625 in 12 bins
    shifted = histogram_of(np.array([0.0, 0.5, 1.2]))
    assert shifted.edges[0] == 0.0 and shifted.counts[0] == 1 and sum(shifted.counts) == 3
    assert histogram_of(np.array([0.1, 0.5])).edges[-1] == 0.5  # a small loss is the top too, however small
    assert histogram_of(np.array([])) == Histogram(edges=(), counts=(), n=0, unit="people")
    perfect = histogram_of(np.zeros(3))  # everyone played the optimum: all in the first bin, from 0 up
    assert perfect.edges[0] == 0.0 and perfect.edges[-1] > 0 and perfect.counts[0] == 3


def test_the_loss_by_games_played_bins_each_person_s_game_by_its_number_among_theirs():
    # ann plays 17 games, her k-th losing k per decision; bob sits at her first 3, his k-th losing 10 k
    games = [finished(f"g{k}", seat(0, "ann"), *([seat(1, "bob")] if k <= 3 else [])) for k in range(1, 18)]
    decisions = graded(
        *(("g%d" % k, "ann", True, float(k)) for k in range(1, 18)), *(("g%d" % k, "bob", True, 10.0 * k) for k in range(1, 4))
    )
    bins = loss_by_games_played(games, decisions)
    assert [b.games_played for b in bins] == ["1", "2", "3-4", "5-8", "9-16", "17+"]
    figures = [(b.loss_per_decision.mean, b.loss_per_decision.n, b.loss_per_decision.players) for b in bins]
    assert figures == [
        (pytest.approx(5.5), 2, 2),  # ann's 1st (1) and bob's 1st (10), at the same table
        (pytest.approx(11.0), 2, 2),
        (pytest.approx(37 / 3), 3, 2),  # ann's 3rd and 4th, bob's 3rd
        (pytest.approx(6.5), 4, 1),
        (pytest.approx(12.5), 8, 1),  # ann's 9th to 16th
        (pytest.approx(17.0), 1, 1),
    ]
    assert GAMES_PLAYED_BINS[0] == (1, 1) and GAMES_PLAYED_BINS[-1] == (17, None)


def test_duplicate_pairs_take_every_duplicate_game_whatever_comes_before_it():
    games = [
        finished("t", seat(0, "ann"), seat(1, "greedy", "agent"), totals=[200, 100]),  # a table game: not paired
        finished("d1", seat(0, "ann"), seat(1, "greedy", "agent"), totals=[150, 170], mode="duplicate"),
        finished("s", seat(0, "ann"), totals=[120], mode="solitaire"),
        finished("d2", seat(0, "bob"), seat(1, "greedy", "agent"), totals=[190, 180], mode="duplicate"),
    ]
    (pairs,) = duplicate_pairs(games)
    assert (pairs.policy, pairs.games, pairs.people) == ("greedy", 2, 2)
    assert (pairs.person_minus_agent.mean, pairs.person_minus_agent.n) == (-5.0, 2)


def played(game_id: str, agent: str, seed: int) -> GameRecord:
    """A finished table game of ann, who always takes the first legal action, against the policy ``agent``."""
    match = Match.new([Player("ann"), Player(agent, "agent", agent)], seed=seed, mode="table")
    match.header["game_id"] = game_id  # the id every decision record reads
    while not match.finished:
        if match.current.kind == "agent":
            match.play_agent()
        else:
            match.play(int(np.flatnonzero(match.current.legal_mask())[0]))
    return match.game_record()


@pytest.fixture(scope="module")
def report() -> Report:
    """The report of one game of ann against softmax:1, with three imported games: two under its rules, one not."""
    game = played("played", "softmax:1", seed=5)
    imported = [
        dataclasses.replace(game, header={**game.header, "game_id": f"imported{k}", "rules": rules}, imported=True)
        for k, rules in enumerate(["yacht", "yacht", "yatzy"])
    ]
    return build_report([game, *imported])


def test_the_text_report_has_every_section_a_histogram_row_per_bin_and_says_when_a_section_is_empty(report):
    from yacht_play.report.text import text_lines

    lines = text_lines(report)
    hist = report.people.histogram
    rows = [line for line in lines if re.fullmatch(r"    +\d+\.\d{3}- *\d+\.\d{3} +\d+ #*", line)]
    assert len(rows) == len(hist.counts) >= 1
    bars = [len(row) - len(row.rstrip("#")) for row in rows]
    assert [int(row.rstrip("#").split()[-1]) for row in rows] == list(hist.counts)
    assert bars == [round(40 * count / max(hist.counts)) for count in hist.counts]  # the largest bin: 40 marks
    assert "  (no duplicate game)" in lines  # the one game is a table game
    graded = lines[lines.index("Agents graded on the same games (expected points lost per decision)") + 1]
    assert graded.startswith("  softmax:1: 1 game; all ")
    for title in ("Skill: ", "Human-likeness: ", "Ratings: "):
        assert sum(line.startswith(title) for line in lines) == 1, title


def test_imported_games_of_rule_sets_named_before_the_report_s_are_not_counted_as_left_out():
    """A report of a Yahtzee game: its imported Yahtzee game is counted as left out, the imported Yacht games are not."""
    from yacht_env.rules import YAHTZEE

    match = Match.new([Player("ann")], seed=6, rules=YAHTZEE)
    while not match.finished:
        match.play(int(np.flatnonzero(match.current.legal_mask())[0]))
    game = match.game_record()
    imported = [
        dataclasses.replace(game, header={**game.header, "game_id": f"imported{k}", "rules": rules}, imported=True)
        for k, rules in enumerate(["yahtzee", "yacht", "yacht"])
    ]
    report = build_report([game, *imported])
    assert report.rules == "yahtzee" and report.imported_games_left_out == 1


def test_the_report_counts_the_imported_games_left_out_under_its_own_rules_only(report):
    assert report.games == 1 and report.rules == "yacht"
    assert report.imported_games == 0 and report.imported_games_left_out == 2


def test_the_report_names_its_schema_and_its_filters(report):
    from yacht_play.report.json_document import report_document

    assert report.schema == 1
    assert report_document(report)["filters"] == {
        "since": None,
        "until": None,
        "mode": None,
        "player": None,
        "rules": None,
        "include_imported": False,
    }
    assert report.filters == Filters()


def test_the_likeness_table_measures_the_default_policies_and_every_agent_of_the_games(report):
    assert [row.policy for row in report.likeness] == ["random", "greedy", "optimal", "softmax:1", "softmax:fit"]


def test_an_agent_against_people_wins_a_share_per_game_against_each_person_and_a_game_of_agents_alone_counts_not():
    from yacht_play.report.build import agents_against_people

    games = [
        finished("g0", seat(0, "greedy", "agent"), seat(1, "random", "agent"), totals=[100, 0]),  # no person: left out
        # greedy beats ann and ties bob: half a game's worth of each, 0.75; 20 - 10 and 20 - 20: 5 points a person
        finished("g1", seat(0, "ann"), seat(1, "greedy", "agent"), seat(2, "bob"), totals=[10, 20, 20]),
        finished("g2", seat(0, "greedy", "agent"), seat(1, "ann"), totals=[5, 30]),  # lost to ann by 25
        finished("g3", seat(0, "greedy", "agent"), seat(1, "ann"), totals=[30, 30]),  # a tie: half a win
    ]
    (greedy,) = agents_against_people(games)
    assert (greedy.policy, greedy.games, greedy.people) == ("greedy", 3, 2)
    assert greedy.win_rate.mean == pytest.approx((0.75 + 0.0 + 0.5) / 3) and greedy.win_rate.n == 3
    assert greedy.score_difference.mean == pytest.approx((5.0 - 25.0 + 0.0) / 3)


def test_an_agent_s_win_rate_interval_stays_within_0_and_1():
    from yacht_play.report.build import agents_against_people

    # eleven wins and a loss in twelve games against two people: the normal interval's upper end passes 1
    games = [
        finished(f"g{k}", seat(0, "greedy", "agent"), seat(1, "ann" if k % 2 else "bob"), totals=[20, 10 if k else 30])
        for k in range(12)
    ]
    (greedy,) = agents_against_people(games)
    assert greedy.win_rate.mean == pytest.approx(11 / 12)
    assert greedy.win_rate.high == 1.0 and 0.0 < greedy.win_rate.low < 11 / 12
