"""A match: Yacht players at one table, whose turn it is, and the record of every decision.

The game is the one every env plays, :class:`yacht_env.game.Tables`: it applies the rules and
passes the turn; a match only seats the players, asks the agents, and writes down what happened.
Seats take whole turns in rotation, as RULES.md says (round 1 is seat 1's turn, then seat 2's,
...). In ``duplicate`` mode every seat plays the *same* dice stream, one whole game after the
other, so nobody sees the dice before playing them.

Seats and seeds: seat ``s`` of a match with seed ``S`` plays the dice that
``yacht_env.game.draw_table_dice`` deals seat ``s`` for ``S``, the same dice the PettingZoo env,
``YachtTable-v0`` and the tournaments deal that seat; seat 0 (and every seat in duplicate mode)
plays the dice of ``Yacht-v0`` reset with seed ``S``, which is game ``S`` of the evaluation harness
(``python -m agents.evaluate --seed S``) as well.

Decisions are the records of :mod:`yacht_play.records` (plain dicts), handed to a writer as they
are made. Nothing here reads a keyboard or prints: :mod:`yacht_play.terminal` does that.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import numpy as np
from gymnasium.utils import seeding

from yacht_env.actions import ActionLayout, IllegalActionError
from yacht_env.env import GameOverError, check_action
from yacht_env.game import Tables, check_game_dice, draw_game_dice, draw_table_dice
from yacht_env.table.encoding import policy_observations
from yacht_env.rules import RULE_SETS, YACHT, RuleSet
from yacht_play.records import SCHEMA, GameRecord, RecordError, now, write_games


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
    if not isinstance(name, str) or name not in RULE_SETS:
        raise RecordError(f"unknown rule set {name!r}; this version plays {', '.join(RULE_SETS)}")
    return RULE_SETS[name]


class Seat:
    """One player's place in a match: who sits there, their dice stream, and their position.

    The position is read from the match's game (:class:`yacht_env.game.Tables`), which the match
    binds when it is built; a seat never changes the game itself.
    """

    def __init__(self, index: int, player: Player, seed: int | None, faces, rules: RuleSet, policy=None):
        self.index = index
        self.player = player
        self.seed = seed
        self.rules = rules
        self.faces = check_game_dice(faces, rules)
        self.policy = policy
        self._game: Tables | None = None
        self._at = (0, 0)

    def bind(self, game: Tables, table: int, seat: int) -> None:
        """Read this seat's position from ``game.<array>[table, seat]``."""
        self._game, self._at = game, (table, seat)

    @property
    def name(self) -> str:
        return self.player.name

    @property
    def kind(self) -> str:
        return self.player.kind

    @property
    def dice(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.rules.dice.hands[self._game.hands[self._at]])

    @property
    def rolls_left(self) -> int:
        return int(self._game.rolls_left[self._at])

    @property
    def roll(self) -> int:
        """Which roll of the turn the dice come from, 1-based."""
        return self.rules.rolls_per_turn - self.rolls_left

    @property
    def open_bits(self) -> int:
        return int(self._game.open_bits[self._at])

    @property
    def open_names(self) -> list[str]:
        return [name for c, name in enumerate(self.rules.category_names) if self.open_bits >> c & 1]

    @property
    def rows_filled(self) -> int:
        return int(self._game.turns_done[self._at])

    @property
    def finished(self) -> bool:
        return self.rows_filled == self.rules.num_turns

    @property
    def turn(self) -> int:
        return min(self.rows_filled + 1, self.rules.num_turns)

    @property
    def sheet(self) -> tuple[int | None, ...]:
        return self._game.sheet(*self._at)

    @property
    def total(self) -> int:
        return int(self._game.totals[self._at])

    @property
    def observation(self):
        """The seat's position in its policy's encoding (agents only)."""
        if self.policy is None:
            return None
        return self.policy.encoding.encode(int(self._game.hands[self._at]), self.rolls_left, self.open_bits)

    def legal_mask(self) -> np.ndarray:
        """The seat's legal actions now, int8 (all zeros unless it is the seat's turn)."""
        table, seat = self._at
        if self._game.over[table] or self._game.seat[table] != seat:
            return np.zeros(self._game.num_actions, dtype=np.int8)
        return self._game.legal_masks([table])[0]

    def describe(self) -> dict:
        return {
            "seat": self.index,
            "name": self.name,
            "kind": self.kind,
            "policy": self.player.policy,
            "seed": self.seed,
            "faces": self.faces.tolist(),
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
        self.layout = ActionLayout(self.rules)
        # Duplicate: one solitaire game per seat, on the same dice; otherwise one table, turns in rotation.
        if mode == "duplicate":
            self.game = Tables(self.rules, num_players=1, num_tables=len(seats))
            self.game.start(np.stack([seat.faces for seat in seats])[:, None])
            for index, seat in enumerate(seats):
                seat.bind(self.game, index, 0)
        else:
            self.game = Tables(self.rules, num_players=len(seats), num_tables=1)
            self.game.start(np.stack([seat.faces for seat in seats])[None])
            for index, seat in enumerate(seats):
                seat.bind(self.game, 0, index)

    @classmethod
    def new(cls, players: list[Player], seed: int, mode: str = "solitaire", rules: RuleSet | None = None,
            coach: bool = False, policies: dict | None = None) -> Match:
        """A fresh game. Agents' policies are built from their names unless given in ``policies`` (by seat)."""
        rules = rules or YACHT
        policies = dict(policies or {})
        # The dice of every multi-player game: seat s gets draw_table_dice's seat s for the seed.
        table_dice = draw_table_dice(seeding.np_random(seed)[0], rules, 1 if mode == "duplicate" else len(players))
        seats = []
        for index, player in enumerate(players):
            faces = table_dice[0] if mode == "duplicate" else table_dice[index]
            policy = policies.get(index)
            if policy is None and player.kind == "agent":
                policy = load_policy(player.policy, rules, seed + index, 1 if mode == "duplicate" else len(players))
            seats.append(Seat(index, player, seed, faces, rules, policy))
        return cls(seats, mode, seed, rules, coach=coach)

    @classmethod
    def resume(cls, game: GameRecord) -> Match:
        """The match of a recorded game, with every recorded decision replayed on its dice.

        ``RecordError`` when the header cannot be rebuilt or a decision does not replay (other dice,
        another seat's turn, an illegal action): the record is corrupt.
        """
        header = game.header
        rules = rules_named(header["rules"])
        seats = []
        for info in header["players"]:
            player = Player(info["name"], info["kind"], info["policy"])
            policy = load_policy(info["policy"], rules, info["seed"], len(header["players"])) if info["kind"] == "agent" else None
            try:
                seats.append(Seat(info["seat"], player, info["seed"], info["faces"], rules, policy))
            except ValueError as error:
                raise RecordError(f"game {game.game_id}: seat {info['seat']}: {error}") from None
        match = cls(seats, header["mode"], header["seed"], rules, header["game_id"], bool(header.get("coach")), header.get("time"))
        match.header = dict(header)
        for number, record in enumerate(game.decisions, start=1):
            match._replay(record, f"game {game.game_id}, decision {number}")
        return match

    def _replay(self, record: dict, where: str) -> None:
        seat = self.current
        if seat is None:
            raise RecordError(f"{where}: recorded after every sheet was full")
        expected = {"seat": seat.index, "turn": seat.turn, "dice": list(seat.dice), "rolls_left": seat.rolls_left}
        found = {key: record.get(key) for key in expected}
        if found != expected:
            raise RecordError(f"{where} does not fit the game: recorded {found}, replay has {expected}")
        try:
            played = self.play(record["action"], record.get("seconds", 0.0))
        except (ValueError, GameOverError) as error:
            raise RecordError(f"{where}: {error}") from None
        if (played["points"], played["total"]) != (record["points"], record["total"]):
            raise RecordError(f"{where}: recorded {record['points']} points (total {record['total']}), replay gives "
                              f"{played['points']} (total {played['total']})")
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
        if self.mode == "duplicate":  # one whole game after the other
            playing = np.flatnonzero(~self.game.over)
            return self.seats[int(playing[0])] if playing.size else None
        return None if self.game.over[0] else self.seats[int(self.game.seat[0])]

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

        A bad action raises ``ValueError`` naming it, one the rules forbid now
        ``IllegalActionError``; either changes nothing.
        """
        seat = self.current
        if seat is None:
            raise GameOverError("the game is over: every sheet is full")
        record = {
            "schema": SCHEMA,
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
        action = check_action(action, self.layout.num_actions)
        reason = self.layout.why_illegal(action, seat.rolls_left, seat.open_bits)
        if reason is not None:
            raise IllegalActionError(reason)
        table = seat._at[0]
        points, _ = self.game.play([action], [table])
        reward = int(points[0])
        layout = self.layout
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
            self.end = {"schema": SCHEMA, "type": "end", "game_id": self.game_id, "totals": self.totals,
                        "winners": self.winners, "time": now()}
            self._emit(self.end)
        return record

    def agent_action(self) -> tuple[int, float]:
        """The current agent seat's choice and the seconds it took to make."""
        seat = self.current
        if seat is None or seat.policy is None:
            raise ValueError("the seat to move is not an agent")
        started = time.perf_counter()
        if getattr(seat.policy, "table_encoding", None) is not None:  # a policy that reads the table (win, target:T)
            observation = policy_observations(seat.policy, self.game, [0], [seat.index])[0]
        else:
            observation = seat.observation
        action = seat.policy.act(observation, seat.legal_mask())
        return action, time.perf_counter() - started

    def play_agent(self) -> dict:
        return self.play(*self.agent_action())


def load_policy(name: str, rules: RuleSet, seed: int | None, num_players: int = 1):
    """The agent called ``name`` for a seat at a table of ``num_players`` (1: a solitaire game)."""
    from agents.registry import make_policy, make_table_policy

    return make_policy(name, rules=rules, seed=seed) if num_players == 1 else make_table_policy(name, num_players, rules, seed)


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
        masks = np.stack([seat.legal_mask() for seat in seats])
        started = time.perf_counter()
        actions = policy.act_batch(stack_observations([seat.observation for seat in seats]), masks)
        seconds = (time.perf_counter() - started) / len(playing)
        for match, action in zip(playing, actions):
            match.play(int(action), seconds)
        playing = [match for match in playing if not match.finished]
    return [match.game_record() for match in matches]


def write_agent_games(path, policy, games: int, seed: int = 0, rules: RuleSet | None = None, name: str | None = None) -> list[GameRecord]:
    """Play ``games`` games with an agent and append their records to ``path``.

    Game ``g`` is ``Yacht-v0`` reset with seed ``seed + g``: the games of the evaluation harness
    (``python -m agents.evaluate --seed SEED``), decision by decision. ``policy`` is a
    ``Policy`` or a name for ``agents.registry.make_policy``. Returns the games written.
    """
    streams = [(seed + g, dice_stream(seed + g, rules)) for g in range(games)]
    played = play_agent_games(policy, streams, rules=rules, name=name)
    write_games(path, played)
    return played
