"""What a match checks and keeps: the table a header may describe, where an error points, the seconds and
the records of decisions, and the agents built for a seat, alone or at a table of the game's size."""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agents import registry
from agents.policies.policy import RandomPolicy
from yacht_env import YACHT
from yacht_env.rules import RULE_SETS
from yacht_play.match import (
    Match,
    Player,
    dice_stream,
    load_games,
    load_policy,
    play_agent_games,
    recorded_seat_dice,
    rules_named,
)
from yacht_play.records import MODES, GameRecord, RecordError, RecordWriter, check_line

OLD_TIME = "2020-01-01T00:00:00.000+00:00"


def lowest_open_rows(match: Match, seconds: float = 0.0) -> None:
    """Play the game out: every turn scores its first roll in the lowest open row."""
    while not match.finished:
        seat = match.current
        match.play(match.layout.score_action(match.rules.category_names.index(seat.open_names[0])), seconds)


def with_header(game: GameRecord, change) -> GameRecord:
    """``game`` (no decisions) with a copy of its header, seats copied too, changed by ``change``."""
    header = dict(game.header, players=[dict(player) for player in game.header["players"]])
    change(header)
    return GameRecord(header, line_numbers=game.line_numbers)


# -- the table a header describes --------------------------------------------------------------


@pytest.mark.parametrize(
    "mode, kinds",
    [("solitaire", ["agent"]), ("solitaire", ["human", "human"]), ("evaluation", ["human"]), ("evaluation", ["agent"] * 2)],
)
def test_a_solitaire_or_evaluation_header_seats_one_player_of_its_kind(mode, kinds):
    game = Match.new([Player(f"p{s}") for s in range(len(kinds))], seed=3, mode="table").game_record()

    def change(header):
        header["mode"] = mode
        for player, kind in zip(header["players"], kinds):
            player.update(kind=kind, policy="random" if kind == "agent" else None)

    wanted = "human" if mode == "solitaire" else "agent"
    message = f"game {game.game_id}: field 'players': a {mode} game has one {wanted} seat, got {kinds}"
    with pytest.raises(RecordError, match=re.escape(message)):
        Match.resume(with_header(game, change))


@given(offset=st.integers(-(10**6), 10**6).filter(lambda offset: offset != 0))
@example(offset=1)  # what schema 1 recorded for seat 1
@example(offset=-1)
def test_every_seat_of_a_schema_2_table_records_the_match_s_seed(offset):
    game = Match.new([Player("ann"), Player("bo"), Player("cy")], seed=40, mode="table").game_record()
    Match.resume(game)  # as recorded: every seat on seed 40
    changed = with_header(game, lambda header: header["players"][2].update(seed=40 + offset))
    message = f"game {game.game_id}: field 'players.2.seed': a table game with seed 40 seats it on 40, got {40 + offset}"
    with pytest.raises(RecordError, match=re.escape(message)):
        Match.resume(changed)


@pytest.mark.parametrize(
    "kind, policy, refused",
    [("human", "random", True), ("agent", None, True), ("human", None, False), ("agent", "random", False)],
)
def test_a_header_seat_names_a_policy_exactly_when_it_is_an_agent(kind, policy, refused):
    game = Match.new([Player("ann"), Player("bo")], seed=3, mode="table").game_record()
    changed = with_header(game, lambda header: header["players"][1].update(kind=kind, policy=policy))
    if not refused:
        assert Match.resume(changed, agents=False).seats[1].kind == kind
        return
    message = f"game {game.game_id}: field 'players.1.policy': an agent names its policy and a person none"
    with pytest.raises(RecordError, match=re.escape(message)):
        Match.resume(changed, agents=False)


def test_a_schema_1_seat_is_read_only_on_the_dice_its_seed_deals_unless_taken_as_recorded():
    header = {"schema": 1, "mode": "solitaire"}
    dealt, other = dice_stream(5), dice_stream(6)
    info = {"seat": 0, "seed": 5, "faces": dealt.tolist()}
    assert np.array_equal(recorded_seat_dice(header, info, YACHT, "games/ann.jsonl:1"), dealt)
    chosen = dict(info, faces=other.tolist())
    message = "games/ann.jsonl:1: game record, field 'players.0.faces': not the dice seed 5 deals"
    with pytest.raises(RecordError, match=re.escape(message)):
        recorded_seat_dice(header, chosen, YACHT, "games/ann.jsonl:1")  # what a stored header is checked with
    assert np.array_equal(recorded_seat_dice(header, chosen, YACHT, "games/ann.jsonl:1", as_recorded=True), other)


# -- rule sets and where an error points ---------------------------------------------------------


def test_rules_named_gives_each_rule_set_and_refuses_any_other_name_listing_them():
    for name, rules in RULE_SETS.items():
        assert rules_named(name) is rules
    played = ", ".join(RULE_SETS)
    for name in ("nope", "YACHT", ["yacht"], None):
        with pytest.raises(RecordError, match=re.escape(f"unknown rule set {name!r}; this version plays {played}")):
            rules_named(name)


def test_a_new_match_refuses_a_mode_no_record_can_hold_naming_it_and_the_modes():
    for mode in ("vs", "Table", ""):
        with pytest.raises(ValueError, match=re.escape(f"mode {mode!r} is not a game mode: expected one of {', '.join(MODES)}")):
            Match.new([Player("ana"), Player("bo")], seed=0, mode=mode)
    for mode in MODES:  # each mode the records hold starts a game and writes a header they read back
        players = [Player("ana")] if mode == "solitaire" else [Player("bo", "agent", "greedy")]
        if mode in ("table", "duplicate"):
            players = [Player("ana"), *players]
        match = Match.new(players, seed=0, mode=mode)
        assert check_line(match.header, "header")["mode"] == mode


def test_a_header_error_names_the_file_and_line_or_else_the_game():
    game = with_header(Match.new([Player("ann")], seed=3).game_record(), lambda header: header.update(rules="nope"))
    refusal = "field 'rules': unknown rule set 'nope'"
    with pytest.raises(RecordError, match=re.escape(f"game {game.game_id}: {refusal}")):
        Match.resume(game)
    game.line_numbers = [7]
    with pytest.raises(RecordError, match=re.escape(f"games/ann.jsonl:7: {refusal}")):
        Match.resume(game, source="games/ann.jsonl")


def test_an_end_line_that_does_not_fit_is_named_by_its_own_line(tmp_path):
    path = tmp_path / "game.jsonl"
    match = Match.new([Player("ann")], seed=5)
    with RecordWriter(path) as writer:
        match.record_to(writer)
        lowest_open_rows(match)
    lines = path.read_text().splitlines()
    assert len(lines) == 14  # header, 12 decisions, end
    end = json.loads(lines[-1])
    end["totals"] = [end["totals"][0] + 1]
    path.write_text("\n".join([*lines[:-1], json.dumps(end)]) + "\n")
    with pytest.raises(RecordError, match=re.escape(f"{path}:14: end record, field 'totals'")):
        load_games(path)


# -- decisions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["table", "duplicate"])
def test_only_the_seat_whose_turn_it_is_has_legal_actions(mode):
    """Seats before and after the one to play see all zeros; the one to play sees the rules' mask."""
    match = Match.new([Player("ann"), Player("bo"), Player("cy")], seed=5, mode=mode)
    for _ in range(2 * match.rules.rolls_per_turn):  # into the second seat's turn, and then the third's
        if match.current.index:
            masks = [seat.legal_mask() for seat in match.seats]
            playing = match.current.index
            assert [int(mask.sum() > 0) for mask in masks] == [int(index == playing) for index in range(3)]
        match.play(match.layout.score_action(match.rules.category_names.index(match.current.open_names[0])))


@pytest.mark.parametrize("mode", ["table", "duplicate"])
def test_a_seat_is_finished_only_once_its_last_row_is_filled(mode):
    """Each seat counts its own rows: the first seat to fill its sheet is finished while the next is not yet."""
    match = Match.new([Player("ann"), Player("bo")], seed=4, mode=mode)
    turns = match.rules.num_turns
    assert [(seat.rows_filled, seat.turn, seat.finished) for seat in match.seats] == [(0, 1, False)] * 2
    while not match.finished:
        seat = match.current
        filled = seat.rows_filled
        match.play(match.layout.score_action(match.rules.category_names.index(seat.open_names[0])))
        assert seat.rows_filled == filled + 1 and seat.turn == min(filled + 2, turns)
        assert seat.finished == (filled + 1 == turns)
        if seat.index == 0:
            assert not match.seats[1].finished
    assert [(seat.rows_filled, seat.turn, seat.finished) for seat in match.seats] == [(turns, turns, True)] * 2


def test_a_decision_records_its_seconds_to_the_millisecond():
    match = Match.new([Player("ann")], seed=5)
    for seconds, kept in ((0.0126, 0.013), (2.0004, 2.0), (0.0005001, 0.001)):
        assert match.play(match.layout.score_action(len(match.decisions)), seconds)["seconds"] == kept
    assert [d["seconds"] for d in match.decisions] == [0.013, 2.0, 0.001]


def test_a_decision_played_without_its_seconds_records_none_spent():
    match = Match.new([Player("ann")], seed=5)
    assert match.play(match.layout.score_action(0))["seconds"] == 0.0
    assert match.decisions[-1]["seconds"] == 0.0


def test_a_resumed_game_keeps_every_decision_as_recorded():
    match = Match.new([Player("ann")], seed=5)
    lowest_open_rows(match, seconds=1.5)
    game = match.game_record()
    for decision in game.decisions:  # the replay's own records would carry the time of the replay
        decision["time"] = OLD_TIME
    resumed = Match.resume(game)
    assert resumed.decisions == game.decisions
    assert resumed.game_record().lines() == game.lines()


@pytest.mark.parametrize("mode", ["table", "duplicate"])
def test_a_resumed_game_of_several_seats_replays_on_each_seat_s_own_dice(mode):
    """At a table each seat rolls its own stream; in duplicate every seat rolls the first seat's. A resumed game must
    deal the same, or the replay of the second seat's decisions would not match its dice."""
    match = Match.new([Player("ann"), Player("bo"), Player("cy")], seed=9, mode=mode)
    lowest_open_rows(match)
    dice = [[d["dice"] for d in match.decisions if d["seat"] == seat] for seat in range(3)]
    assert (dice[0] == dice[1] == dice[2]) == (mode == "duplicate")
    resumed = Match.resume(match.game_record())
    assert resumed.finished and resumed.decisions == match.decisions


def test_an_agent_s_decision_time_is_the_time_it_took():
    match = Match.new([Player("r", "agent", "random")], seed=5, mode="evaluation")
    started = time.perf_counter()
    action, seconds = match.agent_action()
    took = time.perf_counter() - started
    assert 0 <= seconds <= took
    assert match.current.legal_mask()[action] == 1


class SeedLoggingRandom(RandomPolicy):
    """A random policy that notes every seed it is reset with."""

    def reset(self, seed=None):
        self.seeds = [*getattr(self, "seeds", []), seed]
        super().reset(seed)


def test_agent_games_reseed_the_policy_with_the_first_game_s_seed():
    policy = SeedLoggingRandom()
    play_agent_games(policy, [(7, dice_stream(7)), (8, dice_stream(8))])
    unseeded, reseeded = policy.seeds
    assert unseeded is None and isinstance(reseeded, int) and reseeded == 7


# -- the agents built for a seat ----------------------------------------------------------------


class BuiltPolicy(RandomPolicy):
    """A random policy that remembers how it was built: alone (``table_size`` None) or at a table."""

    def __init__(self, rules, seed, table_size):
        super().__init__(rules, seed=seed)
        self.seed, self.table_size = seed, table_size


@pytest.fixture
def seat_probe(monkeypatch):
    """A registered policy that a record may name, built one way alone and another at a table."""
    spec = registry.PolicySpec(
        "seat-probe",
        "remembers how it was built",
        solitaire=lambda name, rules, encoding, seed: BuiltPolicy(rules, seed, None),
        table=lambda name, num_players, rules, seed: BuiltPolicy(rules, seed, num_players),
        resumable=True,
    )
    monkeypatch.setitem(registry.POLICIES, spec.name, spec)
    return spec.name


def test_load_policy_builds_an_agent_alone_or_for_a_table_of_its_size(seat_probe):
    alone = load_policy(seat_probe, YACHT, 4)
    assert (alone.table_size, alone.seed) == (None, 4)
    alone = load_policy(seat_probe, YACHT, 4, num_players=1)
    assert alone.table_size is None
    for num_players in (2, 3, 5):
        at_table = load_policy(seat_probe, YACHT, 4, num_players)
        assert (at_table.table_size, at_table.seed) == (num_players, 4)


def test_a_resumed_agent_sits_at_a_table_of_its_game_s_size_and_alone_in_duplicate(seat_probe):
    players = [Player("ann"), Player("p1", "agent", seat_probe), Player("p2", "agent", seat_probe)]
    table = Match.resume(Match.new(players, seed=40, mode="table").game_record())
    assert [(seat.policy.table_size, seat.policy.seed) for seat in table.seats[1:]] == [(3, 41), (3, 42)]
    duplicate = Match.resume(Match.new(players[:2], seed=40, mode="duplicate").game_record())
    assert (duplicate.seats[1].policy.table_size, duplicate.seats[1].policy.seed) == (None, 41)
