"""Which games a report covers (``Filters``) on a few games made by hand, and the refusals of a filter's text."""

from __future__ import annotations

import dataclasses

import pytest

from yacht_play.records import GameRecord
from yacht_play.report.filters import Filters, check_date, check_mode, check_player


def game(time="2026-01-02T10:00:00Z", mode="table", rules="yacht", players=("ann", "greedy"), imported=False):
    """A game header's worth of a game: ``players`` are people but for ``greedy``, an agent."""
    seats = [{"name": name, "kind": "agent" if name == "greedy" else "human"} for name in players]
    header = {"game_id": "g", "mode": mode, "rules": rules, "players": seats}
    if time is not None:
        header["time"] = time
    return GameRecord(header, [], {}, imported=imported)


def test_no_filter_keeps_every_game_played_here_and_leaves_imported_ones_out():
    assert Filters().keep(game()) and Filters().keep_played(game(imported=True))
    assert not Filters().keep(game(imported=True))
    assert Filters(include_imported=True).keep(game(imported=True)) and Filters(include_imported=True).keep(game())
    assert not Filters(mode="duplicate", include_imported=True).keep(game(imported=True))  # still filtered
    assert not Filters(mode="duplicate").keep(game())


def test_filters_cannot_be_changed_once_made():
    # the header of every table names the filters the games were kept by: they must stay those
    with pytest.raises(dataclasses.FrozenInstanceError):
        Filters(mode="table").mode = "duplicate"


def test_a_game_is_kept_from_since_up_to_but_not_at_until_and_one_without_a_time_only_without_since():
    at = "2026-01-02T10:00:00Z"
    assert Filters(since=at).keep(game(at)) and not Filters(until=at).keep(game(at))
    assert not Filters(since="2026-01-03").keep(game(at)) and Filters(until="2026-01-03").keep(game(at))
    assert Filters(since="2026-01-01", until="2026-01-03").keep(game(at))
    assert not Filters(since="2026-01-01").keep(game(None)) and Filters(until="2026-01-01").keep(game(None))


def test_mode_rules_and_player_each_keep_only_their_games():
    assert Filters(mode="table").keep(game()) and not Filters(mode="table").keep(game(mode="solitaire"))
    assert Filters(rules="yacht").keep(game()) and not Filters(rules="yacht").keep(game(rules="yahtzee"))
    assert not Filters(rules="yahtzee").keep(game(rules="yacht"))  # whichever of the two names sorts first
    assert Filters(player="ann").keep(game()) and Filters(player="bob").keep(game(players=("ann", "bob")))
    assert not Filters(player="bob").keep(game())
    assert not Filters(player="greedy").keep(game())  # an agent is not a player a report is filtered on


def test_the_filters_are_named_in_order_with_their_values():
    assert Filters().named_values() == [
        ("since", None),
        ("until", None),
        ("mode", None),
        ("player", None),
        ("rules", None),
        ("include_imported", False),
    ]
    values = Filters("2026-01-01", "2026-02-01", "table", "ann", "yacht", True).named_values()
    assert values == [
        ("since", "2026-01-01"),
        ("until", "2026-02-01"),
        ("mode", "table"),
        ("player", "ann"),
        ("rules", "yacht"),
        ("include_imported", True),
    ]


def test_a_date_is_an_iso_8601_date_or_none():
    assert check_date("--since", None) is None
    assert check_date("--since", "2026-11-01") == "2026-11-01"
    assert check_date("until", "2026-11-01T14:00") == "2026-11-01T14:00"
    with pytest.raises(ValueError) as refused:
        check_date("--until", "1 May")
    assert str(refused.value) == "--until '1 May' is not a date; use ISO 8601, e.g. 2026-11-01 or 2026-11-01T14:00"
    assert refused.value.__suppress_context__  # the parser's own error is not shown after it


def test_a_mode_is_one_a_person_plays_or_none():
    assert check_mode("--mode", None) is None
    assert [check_mode("mode", mode) for mode in ("solitaire", "table", "duplicate")] == ["solitaire", "table", "duplicate"]
    with pytest.raises(ValueError) as refused:
        check_mode("--mode", "evaluation")
    assert str(refused.value) == "--mode 'evaluation' is not a mode; choose one of solitaire, table, duplicate"


def test_a_player_is_any_name_without_a_control_character_or_none():
    assert check_player("--player", None) is None
    assert check_player("--player", "ann & <b> é") == "ann & <b> é"
    with pytest.raises(ValueError) as refused:
        check_player("--player", "a\x1bb")
    said = "--player 'a\\x1bb': '\\x1b' is a control character, which no player's name holds (names are UTF-8 text)"
    assert str(refused.value) == said
