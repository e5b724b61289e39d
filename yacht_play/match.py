"""A match: Yacht players at one table, whose turn it is, and the record of every decision.

Each seat plays its own ``YachtEnv`` on its own dice stream (the faces table a seed draws), so the
env stays the one place where the rules are applied; a match only decides who moves next and
writes down what happened. Seats take whole turns in rotation, as RULES.md says (round 1 is seat
1's turn, then seat 2's, ...). In ``duplicate`` mode every seat plays the *same* dice stream, one
whole game after the other, so nobody sees the dice before playing them.

Seats and seeds: seat ``s`` of a match with seed ``S`` plays the dice of ``Yacht-v0`` reset with seed
``S + s``; in duplicate mode every seat plays seed ``S``, which is game ``S`` of the evaluation
harness (``python -m agents.evaluate --seed S``) as well. Records keep the seeds, not the dice
streams: :meth:`Match.resume` derives the streams again.

Decisions are the records of :mod:`yacht_play.records` (plain dicts), handed to a writer as they
are made. Nothing here reads a keyboard or prints: :mod:`yacht_play.terminal` does that.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import numpy as np
from gymnasium.utils import seeding

from yacht_env.env import GameOverError, YachtEnv, check_game_dice, draw_game_dice
from yacht_play.records import SCHEMA, GameRecord, RecordError, RecordFile, now, read_records
from yacht_env.rules import YACHT, RuleSet


RULE_SETS = {YACHT.name: YACHT}
BUILT_IN_POLICIES = ("random", "greedy", "optimal")  # policies a record may name and resume rebuilds


def check_table(header: dict, where: str) -> None:
    """The header describes a possible table: seats, kinds and seeds as its mode has them."""
    mode, seed, players = header["mode"], header["seed"], header["players"]
    names = [p["name"] for p in players]
    if len(set(names)) != len(names):
        raise RecordError(f"{where}: field 'players': two seats share a name: {names}")
    kinds = [p["kind"] for p in players]
    if mode in ("solitaire", "evaluation"):
        kind = "human" if mode == "solitaire" else "agent"
        if kinds != [kind]:
            raise RecordError(f"{where}: field 'players': a {mode} game has one {kind} seat, got {kinds}")
    elif len(players) < 2:
        raise RecordError(f"{where}: field 'players': a {mode} game has 2 to 5 seats, got {len(players)}")
    for index, player in enumerate(players):
        if (player["kind"] == "agent") != (player["policy"] is not None):
            raise RecordError(f"{where}: field 'players.{index}.policy': an agent names its policy and a person none")
        if seed is None or player["seed"] is None:
            continue
        wanted = seed + index if mode == "table" else seed
        if player["seed"] != wanted:
            raise RecordError(f"{where}: field 'players.{index}.seed': a {mode} game with seed {seed} seats it on {wanted}, "
                              f"got {player['seed']}")


@dataclass(frozen=True)
class Player:
    """Who sits at a seat: a person, or an agent playing the policy named ``policy``."""

    name: str
    kind: str = "human"
    policy: str | None = None


def dice_stream(seed: int, rules: RuleSet | None = None) -> np.ndarray:
    """The faces table ``Yacht-v0`` plays after ``reset(seed=seed)``."""
    return draw_game_dice(seeding.np_random(seed)[0], rules or YACHT)


def agent_name(policy: str) -> str:
    """A short seat name for a policy name: ``ppo:models/best.zip`` sits as ``ppo``."""
    return policy.split(":", 1)[0]


def rules_named(name: str) -> RuleSet:
    if name not in RULE_SETS:
        raise RecordError(f"unknown rule set {name!r}; this version plays {', '.join(RULE_SETS)}")
    return RULE_SETS[name]


class Seat:
    """One player's game: a ``YachtEnv`` on a fixed dice stream, plus the agent's policy if any."""

    def __init__(self, index: int, player: Player, seed: int | None, faces, rules: RuleSet, policy=None):
        self.index = index
        self.player = player
        self.seed = seed
        self.rules = rules
        self.faces = check_game_dice(faces, rules)
        self.policy = policy
        encoding = policy.encoding.name if policy is not None else "flat"
        self.env = YachtEnv(rules=rules, observation_encoding=encoding, illegal_action="raise")
        self.observation, _ = self.env.reset(options={"faces": self.faces})

    @property
    def name(self) -> str:
        return self.player.name

    @property
    def kind(self) -> str:
        return self.player.kind

    @property
    def dice(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.env.dice)

    @property
    def rolls_left(self) -> int:
        return self.env.rolls_left

    @property
    def roll(self) -> int:
        """Which roll of the turn the dice come from, 1-based."""
        return self.rules.rolls_per_turn - self.env.rolls_left

    @property
    def open_bits(self) -> int:
        return self.env.open_categories

    @property
    def open_names(self) -> list[str]:
        return [name for c, name in enumerate(self.rules.category_names) if self.open_bits >> c & 1]

    @property
    def rows_filled(self) -> int:
        return self.rules.num_categories - bin(self.open_bits).count("1")

    @property
    def finished(self) -> bool:
        return self.open_bits == 0

    @property
    def turn(self) -> int:
        return self.env.turn

    @property
    def sheet(self) -> tuple[int | None, ...]:
        return self.env.sheet

    @property
    def total(self) -> int:
        return self.env.total

    def describe(self) -> dict:
        return {
            "seat": self.index,
            "name": self.name,
            "kind": self.kind,
            "policy": self.player.policy,
            "seed": self.seed,
        }


class Match:
    """Seats playing one game in turn order, with every decision recorded.

    Build one with :meth:`new` (fresh game) or :meth:`resume` (replay a recorded, unfinished game).
    Call :meth:`record_to` to have the header and every later record written as they happen.
    """

    def __init__(self, seats: list[Seat], mode: str, seed: int, rules: RuleSet | None = None,
                 game_id: str | None = None, coach: bool = False, started: str | None = None):
        self.seats = seats
        self.mode = mode
        self.seed = seed
        self.rules = rules or YACHT
        self.coach = coach
        self.header = {
            "schema": SCHEMA,
            "type": "game",
            "game_id": game_id or uuid.uuid4().hex[:12],
            "mode": mode,
            "rules": self.rules.name,
            "seed": seed,
            "coach": coach,
            "time": started or now(),
            "players": [seat.describe() for seat in seats],
        }
        self.decisions: list[dict] = []
        self.end: dict | None = None
        self._writer = None

    @classmethod
    def new(cls, players: list[Player], seed: int, mode: str = "solitaire", rules: RuleSet | None = None,
            coach: bool = False, policies: dict | None = None) -> Match:
        """A fresh game. Agents' policies are built from their names unless given in ``policies`` (by seat)."""
        rules = rules or YACHT
        policies = dict(policies or {})
        seats = []
        for index, player in enumerate(players):
            seat_seed = seed if mode == "duplicate" else seed + index
            policy = policies.get(index)
            if policy is None and player.kind == "agent":
                policy = load_policy(player.policy, rules, seat_seed)
            seats.append(Seat(index, player, seat_seed, dice_stream(seat_seed, rules), rules, policy))
        return cls(seats, mode, seed, rules, coach=coach)

    @classmethod
    def resume(cls, game: GameRecord, policies: dict | None = None, agents: bool = True, source: str = "") -> Match:
        """The match of a recorded game, with every recorded decision replayed on its dice.

        This is the one check of a game's meaning (every line's schema is checked on reading, by
        :func:`yacht_play.records.check_line`): the header must describe a possible table, and every
        decision, field by field, and the end line must be what the replay gives; ``RecordError``
        names the line and the field otherwise. The dice come from each seat's seed.

        Agents: ``policies`` (by seat) plays them; an agent without one is rebuilt from its recorded
        name only if that is a built-in policy (``random``, ``greedy``, ``optimal``): a record never
        makes the program load a model file it names. ``agents=False`` builds no policies at all.
        """
        header = game.header
        lines = game.line_numbers or [0] * (1 + len(game.decisions) + (game.end is not None))
        where = f"{source}:{lines[0]}" if source else f"game {game.game_id}"
        try:
            rules = rules_named(header["rules"])
        except RecordError as error:
            raise RecordError(f"{where}: field 'rules': {error}") from None
        check_table(header, where)
        policies = dict(policies or {})
        seats = []
        for info in header["players"]:
            player = Player(info["name"], info["kind"], info["policy"])
            policy = policies.get(info["seat"])
            if policy is None and agents and info["kind"] == "agent":
                if info["policy"] not in BUILT_IN_POLICIES:
                    raise RecordError(
                        f"the record names the agent {info['policy']!r} for seat {info['seat'] + 1} ({info['name']}): a record "
                        "never makes yacht play load a model; name the agents again with --vs, in seat order")
                policy = load_policy(info["policy"], rules, info["seed"])
            faces = info.get("faces")
            if info["seed"] is not None and (faces is None or header["schema"] >= 2):
                faces = dice_stream(info["seed"], rules)
            try:
                seats.append(Seat(info["seat"], player, info["seed"], faces, rules, policy))
            except ValueError as error:
                raise RecordError(f"{where}: field 'players.{info['seat']}.faces': {error}") from None
        match = cls(seats, header["mode"], header["seed"], rules, header["game_id"], header["coach"], header["time"])
        match.header = dict(header)
        for number, record in enumerate(game.decisions, start=1):
            at = f"{source}:{lines[number]}" if source else f"game {game.game_id}, decision {number}"
            match._replay(record, at)
        if game.end is not None:
            at = f"{source}:{lines[-1]}" if source else f"game {game.game_id}, end"
            if not match.finished:
                raise RecordError(f"{at}: end record before every sheet is full")
            for key, value in (("totals", match.totals), ("winners", match.winners)):
                if game.end[key] != value:
                    raise RecordError(f"{at}: end record, field {key!r}: the replay gives {value}, the record says {game.end[key]}")
            match.end = game.end
        return match

    def _replay(self, record: dict, where: str) -> None:
        seat = self.current
        if seat is None:
            raise RecordError(f"{where}: decision recorded after every sheet was full")
        expected = {"game_id": self.game_id, "seat": seat.index, "player": seat.name, "kind": seat.kind, "seed": seat.seed,
                    "turn": seat.turn, "roll": seat.roll, "dice": list(seat.dice), "rolls_left": seat.rolls_left,
                    "open": seat.open_names}
        for key, value in expected.items():
            if record[key] != value:
                raise RecordError(f"{where}: decision does not fit the game: field {key!r}: the replay has {value!r}, "
                                  f"the record {record[key]!r}")
        try:
            played = self.play(record["action"], record["seconds"])
        except (ValueError, GameOverError) as error:
            raise RecordError(f"{where}: field 'action': {error}") from None
        for key in ("action_text", "points", "total"):
            if played[key] != record[key]:
                raise RecordError(f"{where}: decision does not fit the game: field {key!r}: the replay gives {played[key]!r}, "
                                  f"the record {record[key]!r}")
        self.decisions[-1] = record

    # -- recording -----------------------------------------------------------------------------

    def record_to(self, writer, header: bool = True) -> None:
        """Write every later record with ``writer`` (and the header now, unless it is written already)."""
        self._writer = writer
        if header:
            writer.write(self.header)

    def _emit(self, record: dict) -> None:
        if self._writer is not None:
            self._writer.write(record)

    def game_record(self) -> GameRecord:
        return GameRecord(self.header, list(self.decisions), self.end)

    # -- the game ------------------------------------------------------------------------------

    @property
    def game_id(self) -> str:
        return self.header["game_id"]

    @property
    def current(self) -> Seat | None:
        """The seat to move, or None when every sheet is full."""
        playing = [seat for seat in self.seats if not seat.finished]
        if not playing:
            return None
        if self.mode == "duplicate":
            return playing[0]
        return min(playing, key=lambda seat: seat.rows_filled)  # ties: the lowest seat, as rotation wants

    @property
    def finished(self) -> bool:
        return self.current is None

    @property
    def totals(self) -> list[int]:
        return [seat.total for seat in self.seats]

    @property
    def winners(self) -> list[str]:
        best = max(self.totals)
        return [seat.name for seat in self.seats if seat.total == best]

    def play(self, action, seconds: float = 0.0) -> dict:
        """Apply the current seat's decision; return its record.

        The seat's env (in ``illegal_action="raise"`` mode) refuses a bad action with a ``ValueError``
        naming it, ``IllegalActionError`` for one the rules forbid now, and changes nothing.
        """
        seat = self.current
        if seat is None:
            raise GameOverError("the game is over: every sheet is full")
        record = {
            "schema": self.header["schema"],  # a resumed schema 1 game stays schema 1
            "type": "decision",
            "game_id": self.game_id,
            "seat": seat.index,
            "player": seat.name,
            "kind": seat.kind,
            "seed": seat.seed,
            "turn": seat.turn,
            "roll": seat.roll,
            "dice": list(seat.dice),
            "rolls_left": seat.rolls_left,
            "open": seat.open_names,
        }
        seat.observation, reward, *_ = seat.env.step(action)
        layout = seat.env.layout
        action = int(action)
        record.update(
            action=action,
            action_text=layout.describe(action, record["dice"]),
            points=None if layout.is_reroll(action) else int(reward),
            total=seat.total,
            seconds=round(float(seconds), 3),
            time=now(),
        )
        self.decisions.append(record)
        self._emit(record)
        if self.finished:
            self.end = {"schema": self.header["schema"], "type": "end", "game_id": self.game_id, "totals": self.totals,
                        "winners": self.winners, "time": now()}
            self._emit(self.end)
        return record

    def agent_action(self) -> tuple[int, float]:
        """The current agent seat's choice and the seconds it took to make."""
        seat = self.current
        if seat is None or seat.policy is None:
            raise ValueError("the seat to move is not an agent")
        started = time.perf_counter()
        action = seat.policy.act(seat.observation, seat.env.action_masks())
        return action, time.perf_counter() - started

    def play_agent(self) -> dict:
        return self.play(*self.agent_action())


def load_games(path) -> "RecordFile":
    """The games of a record file, each checked line by line and replayed against its dice (no policy is built).

    The one validator behind ``yacht play --resume`` and ``yacht analyze``: ``RecordError`` (one line,
    naming the file, the line and the field) for anything but a torn last line.
    """
    records = read_records(path)
    for game in records.games:
        Match.resume(game, agents=False, source=str(records.path))
    return records


def load_policy(name: str, rules: RuleSet, seed: int | None):
    from agents.policy import make_policy

    return make_policy(name, rules=rules, seed=seed)


def stack_observations(observations: list):
    if isinstance(observations[0], dict):
        return {key: np.stack([obs[key] for obs in observations]) for key in observations[0]}
    return np.stack(observations)


def play_agent_games(policy, streams: list[tuple[int | None, np.ndarray]], rules: RuleSet | None = None,
                     name: str | None = None, mode: str = "evaluation") -> list[GameRecord]:
    """An agent's games on the given dice streams (``(seed, faces)`` pairs), as records.

    The games are stepped together so the policy decides for all of them in one batch; each
    decision's ``seconds`` is its share of the batch's time. ``policy`` is a ``Policy`` or a name.
    """
    rules = rules or YACHT
    first_seed = streams[0][0] if streams else None
    if isinstance(policy, str):
        policy = load_policy(policy, rules, first_seed)
    else:
        policy.reset(first_seed)
    player = Player(name or agent_name(policy.name), "agent", policy.name)
    matches = [Match([Seat(0, player, seed, faces, rules, policy)], mode, seed, rules) for seed, faces in streams]
    playing = matches
    while playing:
        seats = [match.current for match in playing]
        masks = np.stack([seat.env.action_masks() for seat in seats])
        started = time.perf_counter()
        actions = policy.act_batch(stack_observations([seat.observation for seat in seats]), masks)
        seconds = (time.perf_counter() - started) / len(playing)
        for match, action in zip(playing, actions):
            match.play(int(action), seconds)
        playing = [match for match in playing if not match.finished]
    return [match.game_record() for match in matches]
