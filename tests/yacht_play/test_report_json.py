"""The report's JSON keeps its documented shape and values: the report of a fixed set of games, built here from first
principles (seeded matches; ann always takes the first legal action, bob a seeded random one), against the JSON the
report wrote for the same games before its results were typed (``report_of_fixed_games.json``, from commit b4be456),
but for what changed on purpose since: top-1 agreement judged against the policy's best choices, ties included
(:mod:`yacht_play.report.likeness`), and the rated games of each mode (``ratings.games_by_mode``).

Keys, their order, strings, integers, booleans and nulls must be the same; a float may differ only in its last digits
(``exp`` and ``log`` round differently on other processors)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from yacht_play.match import Match, Player
from yacht_play.records import GameRecord
from yacht_play.report.build import build_report
from yacht_play.report.json_document import report_document, save_json

BEFORE = Path(__file__).with_name("report_of_fixed_games.json")
POLICIES = [("random", "random"), ("greedy", "greedy"), ("win", "win")]  # win plays only at a table: not measured


def played(game_id: str, players: list[Player], seed: int, mode: str, time: str) -> GameRecord:
    """A finished game of ``players`` on the dice of ``seed``: the agents play their policies, ann the first legal
    action, anyone else a legal action drawn from ``seed``.
    """
    match = Match.new(players, seed=seed, mode=mode)
    match.header["game_id"], match.header["time"] = game_id, time
    rng = np.random.default_rng(seed)
    while not match.finished:
        seat = match.current
        if seat.kind == "agent":
            match.play_agent()
            continue
        legal = np.flatnonzero(seat.legal_mask())
        match.play(int(legal[0] if seat.player.name == "ann" else rng.choice(legal)))
    return match.game_record()


def fixed_games() -> list[GameRecord]:
    """A table, a duplicate game, a solitaire game and a table of three, and one imported game (left out)."""
    agent = lambda name: Player(name, "agent", name)  # noqa: E731
    games = [
        played("g1", [Player("ann"), agent("greedy")], 1, "table", "2026-01-01T10:00:00Z"),
        played("g2", [Player("bob"), agent("greedy")], 2, "duplicate", "2026-01-02T10:00:00Z"),
        played("g3", [Player("ann")], 3, "solitaire", "2026-01-03T10:00:00Z"),
        played("g4", [Player("bob"), Player("ann"), agent("softmax:1")], 4, "table", "2026-01-04T10:00:00Z"),
    ]
    imported = dataclasses.replace(games[0], header={**games[0].header, "game_id": "g5"}, imported=True)
    return [*games, imported]


def differences(got, want, where: str = "report") -> list[str]:
    """Where ``got`` and ``want`` (JSON values) differ: keys, their order, types and values (floats to rounding)."""
    if type(got) is not type(want):
        return [f"{where}: {got!r} is not {want!r}"]
    if isinstance(want, dict):
        if list(got) != list(want):
            return [f"{where}: keys {list(got)} are not {list(want)}"]
        return [line for key in want for line in differences(got[key], want[key], f"{where}.{key}")]
    if isinstance(want, list):
        if len(got) != len(want):
            return [f"{where}: {len(got)} items, not {len(want)}"]
        return [line for i, (g, w) in enumerate(zip(got, want)) for line in differences(g, w, f"{where}[{i}]")]
    if isinstance(want, float):
        return [] if math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12) else [f"{where}: {got!r} is not {want!r}"]
    return [] if got == want else [f"{where}: {got!r} is not {want!r}"]


def test_the_json_of_a_fixed_set_of_games_is_the_json_written_before_the_results_were_typed(tmp_path):
    report = build_report(fixed_games(), policies=POLICIES)
    save_json(tmp_path / "report.json", report)
    written = json.loads((tmp_path / "report.json").read_text())
    assert written == report_document(report)
    assert differences(written, json.loads(BEFORE.read_text())) == []


def test_every_part_of_a_report_is_a_value_that_cannot_be_changed_once_built():
    # the page, the text and the JSON are written from one report: none of them may alter what the others show
    import yacht_play.report.results as results

    report = build_report(fixed_games(), policies=POLICIES)
    seen, waiting = set(), [report]
    while waiting:
        value = waiting.pop()
        if isinstance(value, (tuple, list)):
            waiting += value
        elif dataclasses.is_dataclass(value):
            seen.add(type(value).__name__)
            first = dataclasses.fields(value)[0].name
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(value, first, getattr(value, first))
            waiting += [getattr(value, field.name) for field in dataclasses.fields(value)]
    defined = {name for name, kind in vars(results).items() if isinstance(kind, type) and dataclasses.is_dataclass(kind)}
    assert defined - seen == set()
