"""Game records: every decision of a Yacht game, one JSON object a line, written as it is made.

A record file holds one or more games. Each game is a ``game`` header, then one ``decision``
record per decision in the order they were made, then an ``end`` record once every seat has a
full sheet; a game without ``end`` was interrupted and ``yacht play --resume FILE`` continues it.
Records of different games may not interleave. Every record carries ``"schema": 1`` and its
``type``; readers refuse a schema newer than theirs.

``game`` (the header: enough to rebuild every position by replaying the decisions)
    ``game_id`` (str, unique), ``mode`` (``solitaire``, ``table``, ``duplicate`` or
    ``evaluation``), ``rules`` (rule set name, ``yacht``), ``seed`` (the table's seed),
    ``coach`` (bool: the person was shown the optimal choice after each decision), ``time``,
    ``players``: one object per seat in seat order with ``seat`` (0-based), ``name``, ``kind``
    (``human`` or ``agent``), ``policy`` (the agent's policy name, null for people), ``seed`` (the
    seed of the seat's dice stream: ``Yacht-v0`` reset with it plays these dice) and ``faces``
    (the dice stream itself, 12 x 3 x 5: roll ``r`` of turn ``t`` lands the re-rolled dice on
    ``faces[t][r][:k]`` in order).

``decision``
    ``game_id``, ``seat``, ``player`` (name), ``kind``, ``seed`` (the seat's), ``turn`` (1..12),
    ``roll`` (1..3: which roll of the turn the dice come from), ``dice`` (sorted, as shown; die
    positions 1..5 refer to this order), ``rolls_left`` (0..2), ``open`` (names of the open
    rows), ``action`` (the ``Yacht-v0`` action, 0..43), ``action_text`` (readable),
    ``points`` (points written by a scoring action, null for a re-roll), ``total`` (the seat's
    total after the decision), ``seconds`` (how long the decision took), ``time``.

``end``
    ``game_id``, ``totals`` (final total of each seat, in seat order), ``winners`` (names of the
    seats with the highest total: ties share the win), ``time``.

``time`` is an ISO 8601 UTC timestamp. A writer flushes and fsyncs each line, and a line is one
``write``, so a crash can only tear the last line: readers drop a last line that is not valid
JSON (``RecordFile.torn``), and a writer cuts it off before appending.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

SCHEMA = 1
MODES = ("solitaire", "table", "duplicate", "evaluation")
KINDS = ("human", "agent")

_REQUIRED = {
    "game": ("game_id", "mode", "rules", "seed", "players"),
    "decision": ("game_id", "seat", "player", "turn", "roll", "dice", "rolls_left", "open", "action", "points", "total"),
    "end": ("game_id", "totals", "winners"),
}
_PLAYER_FIELDS = ("seat", "name", "kind", "policy", "seed", "faces")


class RecordError(ValueError):
    """A record file that cannot be read, or a game in it that cannot be replayed."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class GameRecord:
    """One game of a record file: its header, its decisions in order, and its end (None if unfinished)."""

    header: dict
    decisions: list[dict] = field(default_factory=list)
    end: dict | None = None

    @property
    def game_id(self) -> str:
        return self.header["game_id"]

    @property
    def finished(self) -> bool:
        return self.end is not None

    @property
    def players(self) -> list[dict]:
        return self.header["players"]

    def lines(self) -> list[dict]:
        return [self.header, *self.decisions, *([self.end] if self.end else [])]


@dataclass
class RecordFile:
    path: Path
    games: list[GameRecord]
    torn: bool = False  # the last line was cut short (a crash mid-write) and was dropped


class RecordWriter:
    """Appends records to a file, one line each, flushed (and by default fsynced) before returning.

    ``sync=False`` skips the fsync, for bulk writes of agent games where losing the tail of a
    crashed run costs nothing.
    """

    def __init__(self, path: str | Path, sync: bool = True):
        self.path = Path(path)
        self.sync = sync
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(self.path)
        self._file = open(self.path, "ab")

    def write(self, record: dict) -> None:
        line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        self._file.write(line)
        self._file.flush()
        if self.sync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def cut_torn_tail(path: Path) -> None:
    """Remove a last line without its newline that is not valid JSON, so the next append starts clean."""
    if not path.exists():
        return
    with open(path, "rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        try:
            json.loads(data[start:])
        except ValueError:
            handle.truncate(start)
        else:  # a complete record that merely lacks its newline
            handle.seek(0, os.SEEK_END)
            handle.write(b"\n")
        handle.flush()
        os.fsync(handle.fileno())


def read_records(path: str | Path) -> RecordFile:
    """Every game in a record file; ``RecordError`` (naming the line) for anything but a torn last line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RecordError(f"cannot read {path}: {error.strerror or error}") from error
    lines = data.split(b"\n")
    torn = False
    games: list[GameRecord] = []
    by_id: dict[str, GameRecord] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            if number == len(lines):  # no newline after it: cut short by a crash
                torn = True
                break
            raise RecordError(f"{path}:{number}: not a JSON record") from None
        _check_record(record, f"{path}:{number}")
        kind = record["type"]
        if kind == "game":
            if record["game_id"] in by_id:
                raise RecordError(f"{path}:{number}: game {record['game_id']} appears twice")
            game = GameRecord(record)
            games.append(game)
            by_id[record["game_id"]] = game
            continue
        game = by_id.get(record["game_id"])
        if game is None:
            raise RecordError(f"{path}:{number}: {kind} record of game {record['game_id']} comes before its header")
        if game is not games[-1] or game.end is not None:
            raise RecordError(f"{path}:{number}: {kind} record of game {record['game_id']} after that game ended")
        if kind == "decision":
            game.decisions.append(record)
        else:
            game.end = record
    return RecordFile(path, games, torn)


def _check_record(record, where: str) -> None:
    if not isinstance(record, dict):
        raise RecordError(f"{where}: a record must be a JSON object")
    schema = record.get("schema")
    if not isinstance(schema, int):
        raise RecordError(f"{where}: record without a schema version")
    if schema > SCHEMA:
        raise RecordError(f"{where}: schema {schema} is newer than this version reads ({SCHEMA}); upgrade yacht-rl")
    kind = record.get("type")
    if kind not in _REQUIRED:
        raise RecordError(f"{where}: unknown record type {kind!r}; expected game, decision or end")
    missing = [name for name in _REQUIRED[kind] if name not in record]
    if missing:
        raise RecordError(f"{where}: {kind} record lacks {', '.join(missing)}")
    if kind == "game":
        if record["mode"] not in MODES:
            raise RecordError(f"{where}: unknown mode {record['mode']!r}; expected one of {', '.join(MODES)}")
        players = record["players"]
        if not isinstance(players, list) or not players:
            raise RecordError(f"{where}: a game needs at least one player")
        for seat, player in enumerate(players):
            if not isinstance(player, dict) or any(name not in player for name in _PLAYER_FIELDS):
                raise RecordError(f"{where}: player {seat} needs {', '.join(_PLAYER_FIELDS)}")
            if player["seat"] != seat or player["kind"] not in KINDS:
                raise RecordError(f"{where}: player {seat} has seat {player['seat']!r} and kind {player['kind']!r}")


def write_games(path: str | Path, games: list[GameRecord], sync: bool = False) -> None:
    """Append whole games to a record file."""
    with RecordWriter(path, sync=sync) as writer:
        for game in games:
            for record in game.lines():
                writer.write(record)
