"""Game records: every decision of a Yacht game, one JSON object a line, written as it is made.

A record file holds one or more games. Each game is a ``game`` header, then one ``decision``
record per decision in the order they were made, then an ``end`` record once every seat has a
full sheet; a game without ``end`` was interrupted and ``yacht play --resume FILE`` continues it.
Records of different games may not interleave. Every record carries ``"schema": 2`` and its
``type``; readers refuse a schema newer than theirs, and read schema 1 (whose headers held the
dice streams). Every line is checked field by field (:func:`check_line`: types are strict, so
``"1"`` or ``true`` is no integer), and :func:`yacht_play.match.load_games` replays every game against its
dice before anything uses it.

``game`` (the header: enough to rebuild every position by replaying the decisions)
    ``game_id`` (str, unique), ``mode`` (``solitaire``, ``table``, ``duplicate`` or
    ``evaluation``), ``rules`` (the rule set's name in ``yacht_env.rules.RULE_SETS``: ``yacht``,
    ``yahtzee``, ``yatzy``, ...; a game is replayed, graded and resumed under these rules only),
    ``seed`` (the table's seed),
    ``coach`` (bool: the person was shown the optimal choice after each decision), ``time``,
    ``players``: one object per seat in seat order with ``seat`` (0-based), ``name``, ``kind``
    (``human`` or ``agent``), ``policy`` (the agent's policy name, null for people; a label: a
    record never makes the program load it) and ``seed`` (the seed of the seat's dice stream:
    ``Yacht-v0`` reset with it plays these dice). The header does not hold the dice themselves: a
    game in progress shows only the dice rolled so far (in its decisions), and the program derives
    the rest from the seed when it resumes. (Schema 1 headers also held ``faces``, the whole
    stream; they are still read when each stream is the one its seat's seed deals, never otherwise:
    dice that no seed deals could have been chosen.)

``decision``
    ``game_id``, ``seat``, ``player`` (name), ``kind``, ``seed`` (the seat's), ``turn`` (1..rows),
    ``roll`` (1..3: which roll of the turn the dice come from), ``dice`` (sorted, as shown; die
    positions 1..5 refer to this order), ``rolls_left`` (0..2), ``open`` (names of the open
    rows), ``action`` (the env's action: 0..43 in Yacht), ``action_text`` (readable),
    ``points`` (what a scoring action added to the total: the row's points plus any upper or
    extra-Yahtzee bonus it earned; null for a re-roll), ``total`` (the seat's total after the
    decision, bonuses included), ``seconds`` (how long the decision took), ``time``.

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
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from yacht_env.atomic_files import output_target
from yacht_env.bounded_input import InputBoundsError, bounded_lines, load_json, open_regular_file
from yacht_env.echo import echoed, echoed_path
from yacht_env.game import MAX_PLAYERS
from yacht_env.safe_text import unsafe_character

SCHEMA = 2
READABLE_SCHEMAS = (1, 2)  # 1: headers held every seat's whole dice stream ("faces"); 2: only seeds
MAX_SEATS = MAX_PLAYERS  # a record seats a table of the game's size
AGENTS_PER_MODE: dict[str, tuple[int, int]] = {"solitaire": (0, 0), "table": (1, MAX_SEATS - 1), "duplicate": (1, 1)}
"""The modes a person plays (``yacht play``, ``yacht serve``), each with the fewest and most agents beside the
person: alone, at a table, or duplicate (one agent on the person's dice)."""
HUMAN_MODES: tuple[str, ...] = tuple(AGENTS_PER_MODE)
MODES: tuple[str, ...] = (*HUMAN_MODES, "evaluation")  # evaluation: an agent alone (yacht evaluate --record)
KINDS = ("human", "agent")
NAME_LENGTH = 100


class RecordError(ValueError):
    """A record file that cannot be read, or a game in it that cannot be replayed."""


def safe_text(text: str) -> str:
    """``text`` if it holds no control character, bidirectional override or lone surrogate; else ``ValueError``.

    Names and labels reach terminals, spreadsheets and TeX: refused here as the browser's name field refuses them.
    """
    problem = unsafe_character(text)
    if problem:
        raise ValueError(f"text without control characters ({problem})")
    return text


SafeText = Annotated[str, AfterValidator(safe_text)]


# -- the schema: every line is checked field by field, strictly (no "1" for 1, no true for 1) ----


class _Line(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True)

    version: int = Field(alias="schema")
    game_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    time: str = Field(max_length=64)


class PlayerLine(BaseModel):
    """A player of a game line: seat, name, kind, policy and seed."""

    model_config = ConfigDict(strict=True, extra="forbid")

    seat: int = Field(ge=0, lt=MAX_SEATS)
    name: SafeText = Field(min_length=1, max_length=NAME_LENGTH)
    kind: Literal[KINDS]  # type: ignore[valid-type]  # built from the tuple, so that the names are written once
    policy: SafeText | None = Field(max_length=4096)
    seed: int | None = Field(ge=0, lt=2**63)
    faces: list[list[list[int]]] | None = None  # schema 1 only


class GameLine(_Line):
    """A game's header line: mode, rules, seed and players."""

    type: Literal["game"]
    mode: Literal[MODES]  # type: ignore[valid-type]  # built from the tuple, so that the names are written once
    rules: str = Field(max_length=64)
    seed: int | None = Field(ge=0, lt=2**63)
    coach: bool
    players: list[PlayerLine] = Field(min_length=1, max_length=MAX_SEATS)


class DecisionLine(_Line):
    """A decision line: who played, the state they saw and the action taken."""

    type: Literal["decision"]
    seat: int = Field(ge=0, lt=MAX_SEATS)
    player: SafeText = Field(min_length=1, max_length=NAME_LENGTH)
    kind: Literal[KINDS]  # type: ignore[valid-type]  # built from the tuple, so that the names are written once
    seed: int | None = Field(ge=0, lt=2**63)
    turn: int = Field(ge=1, le=64)
    roll: int = Field(ge=1, le=16)
    dice: list[int] = Field(min_length=1, max_length=16)
    rolls_left: int = Field(ge=0, le=16)
    open: list[str] = Field(max_length=64)
    action: int = Field(ge=0, lt=2**20)
    action_text: str = Field(max_length=200)
    points: int | None = Field(ge=0, le=10_000)
    total: int = Field(ge=0, le=100_000)
    seconds: float = Field(ge=0, allow_inf_nan=False)


class EndLine(_Line):
    """A game's end line: the totals and the winners."""

    type: Literal["end"]
    totals: list[int] = Field(min_length=1, max_length=MAX_SEATS)
    winners: list[SafeText] = Field(min_length=1, max_length=MAX_SEATS)


LINE_MODELS = {"game": GameLine, "decision": DecisionLine, "end": EndLine}


def _expected(item: dict) -> str:
    """What a pydantic error says was expected, short: ``an integer``, ``one of 'game', ...``."""
    kind, context = item["type"], item.get("ctx") or {}
    words = {
        "int_type": "an integer",
        "string_type": "a string",
        "bool_type": "true or false",
        "list_type": "a list",
        "float_type": "a number",
        "model_type": "an object",
        "dict_type": "an object",
        "int_from_float": "an integer",
        "missing": "present",
        "extra_forbidden": "absent (unknown field)",
        "none_required": "null",
    }
    if kind in words:
        return words[kind]
    if kind == "literal_error":
        return f"one of {context.get('expected')}"
    if kind in ("too_short", "too_long", "string_too_short", "string_too_long"):
        # pydantic's own words ("List should have at least 1 item after validation, not 0") name the bound twice
        bound = context.get("min_length") if kind.endswith("short") else context.get("max_length")
        unit = "character" if kind.startswith("string") else "item"
        return f"{'at least' if kind.endswith('short') else 'at most'} {bound} {unit}{'' if bound == 1 else 's'}"
    if kind in ("greater_than_equal", "less_than", "less_than_equal", "greater_than"):
        return (
            item["msg"]
            .removeprefix("Input should be ")
            .replace("greater than or equal to", ">=")
            .replace("less than or equal to", "<=")
            .replace("greater than", ">")
            .replace("less than", "<")
        )
    return item["msg"].removeprefix("Value error, ").removeprefix("Input should be ").removeprefix("Input should have ")


def check_line(record, where: str) -> dict:
    """A parsed line checked against its schema; ``RecordError`` naming the line, the field and what was expected."""
    if not isinstance(record, dict):
        raise RecordError(f"{where}: a record must be a JSON object, got {type(record).__name__}")
    schema = record.get("schema")
    if type(schema) is not int:
        raise RecordError(f"{where}: field 'schema': expected an integer schema version, got {schema!r}")
    if schema > SCHEMA:
        raise RecordError(f"{where}: schema {schema} is newer than this version reads ({SCHEMA}); upgrade yacht-rl")
    if schema not in READABLE_SCHEMAS:
        raise RecordError(f"{where}: field 'schema': expected one of {READABLE_SCHEMAS}, got {schema!r}")
    kind = record.get("type")
    if not isinstance(kind, str) or kind not in LINE_MODELS:
        raise RecordError(f"{where}: field 'type': expected game, decision or end, got {short(kind)}")
    try:
        LINE_MODELS[kind].model_validate(record)
    except ValidationError as error:
        item = error.errors()[0]
        field = ".".join(str(part) for part in item["loc"])
        got = "" if item["type"] == "missing" else f", got {short(item.get('input'))}"
        raise RecordError(f"{where}: {kind} record, field {field!r}: expected {_expected(item)}{got}") from None
    if kind == "game":
        if record["seed"] is None:
            # The seats' dice come from the game's seed (schema 1: are checked against it), which the header must name.
            raise RecordError(f"{where}: game record, field 'seed': expected the game's seed (schema {schema}), got None")
        for seat, player in enumerate(record["players"]):
            if player["seat"] != seat:
                raise RecordError(f"{where}: game record, field 'players.{seat}.seat': expected {seat}, got {player['seat']!r}")
            if schema == 1 and player.get("faces") is None:
                raise RecordError(f"{where}: game record, field 'players.{seat}.faces': expected the dice stream (schema 1)")
            if schema >= 2 and ("faces" in player or player["seed"] is None):
                raise RecordError(f"{where}: game record, field 'players.{seat}': expected a seed and no faces (schema {schema})")
    return record


def short(value) -> str:
    """``value`` as an error message repeats it (:func:`yacht_env.echo.echoed`)."""
    return echoed(value)


def now() -> str:
    """The time now in UTC, ISO 8601 to the millisecond."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class GameRecord:
    """One game of a record file: its header, its decisions in order, and its end (None if unfinished)."""

    header: dict
    decisions: list[dict] = field(default_factory=list)
    end: dict | None = None
    line_numbers: list[int] = field(default_factory=list)  # of header, decisions, end in the file read (if read)
    imported: bool = False  # read from a database that got it from a record file (yacht import), not played there

    @property
    def game_id(self) -> str:
        """The game's id."""
        return self.header["game_id"]

    @property
    def finished(self) -> bool:
        """Whether the game has an end line."""
        return self.end is not None

    @property
    def players(self) -> list[dict]:
        """The players of the header."""
        return self.header["players"]

    def lines(self) -> list[dict]:
        """The record's lines: header, decisions, end (if any)."""
        return [self.header, *self.decisions, *([self.end] if self.end else [])]


@dataclass
class RecordFile:
    """A record file's path and games."""

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
        target = output_target(self.path)  # a device, FIFO or folder is refused, a link appends to its file
        target.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(target)
        self._file = open(target, "ab")

    def write(self, record: dict) -> None:
        """Append ``record`` to the file as one JSON line."""
        line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        self._file.write(line)
        self._file.flush()
        if self.sync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        """Flush and close the file."""
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
            load_json(data[start:], f"{path}: last line")
        except ValueError:  # too deep or too long counts as not valid too
            handle.truncate(start)
        else:  # a complete record that merely lacks its newline
            handle.seek(0, os.SEEK_END)
            handle.write(b"\n")
        handle.flush()
        os.fsync(handle.fileno())


def read_records(path: str | Path) -> RecordFile:
    """Every game in a record file; ``RecordError`` (naming the line) for anything but a torn last line.

    Only a regular file is read (a device or FIFO would never end or never answer), and each line
    within the bounds of :mod:`yacht_env.bounded_input` (its length, its JSON's depth).
    """
    path = Path(path)
    where = echoed_path(path)  # a file name may hold an ESC, or be 100,000 characters long
    try:
        with open_regular_file(path) as handle:
            return _read_games(path, where, bounded_lines(handle, where))
    except InputBoundsError as error:
        raise RecordError(str(error)) from None
    except OSError as error:
        raise RecordError(f"cannot read {where}: {error.strerror or error}") from error


def _read_games(path: Path, where: str, lines) -> RecordFile:
    torn = False
    games: list[GameRecord] = []
    by_id: dict[str, GameRecord] = {}
    for number, line in lines:
        if not line.strip():
            continue
        try:
            record = load_json(line, f"{where}:{number}")
        except InputBoundsError:
            raise
        except ValueError:
            if not line.endswith(b"\n"):  # the last line, cut short by a crash
                torn = True
                break
            raise RecordError(f"{where}:{number}: not a JSON record") from None
        check_line(record, f"{where}:{number}")
        kind = record["type"]
        if kind == "game":
            if record["game_id"] in by_id:
                raise RecordError(f"{where}:{number}: game {record['game_id']} appears twice")
            if games and games[-1].end is None:  # writers refuse to append after an unfinished game
                raise RecordError(
                    f"{where}:{number}: a new game starts, but game {games[-1].game_id} before it has no end record"
                )
            game = GameRecord(record, line_numbers=[number])
            games.append(game)
            by_id[record["game_id"]] = game
            continue
        game = by_id.get(record["game_id"])
        if game is None:
            raise RecordError(f"{where}:{number}: {kind} record of game {record['game_id']} comes before its header")
        if game is not games[-1] or game.end is not None:
            raise RecordError(f"{where}:{number}: {kind} record of game {record['game_id']} after that game ended")
        if record["schema"] != game.header["schema"]:
            raise RecordError(
                f"{where}:{number}: field 'schema': expected {game.header['schema']} as in the game's header, "
                f"got {record['schema']}"
            )
        game.line_numbers.append(number)
        if kind == "decision":
            game.decisions.append(record)
        else:
            game.end = record
    return RecordFile(path, games, torn)


def write_games(path: str | Path, games: list[GameRecord], sync: bool = False) -> None:
    """Append whole games to a record file."""
    with RecordWriter(path, sync=sync) as writer:
        for game in games:
            for record in game.lines():
                writer.write(record)
