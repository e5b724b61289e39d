"""A match: Yacht players at one table, whose turn it is, and the record of every decision.

The game is the one every env plays, :class:`yacht_env.game.GameBatch`: it applies the rules and
passes the turn; a match only seats the players, asks the agents, and writes down what happened.
Seats take whole turns in rotation, as RULES.md says (round 1 is seat 1's turn, then seat 2's,
...). In ``duplicate`` mode every seat plays the *same* dice stream, one whole game after the
other, so nobody sees the dice before playing them.

Seats and seeds: seat ``s`` of a match with seed ``S`` plays the dice that
``yacht_env.game.draw_table_dice`` deals seat ``s`` for ``S``, the same dice the PettingZoo env,
``YachtTable-v0`` and the tournaments deal that seat; seat 0 (and every seat in duplicate mode)
plays the dice of ``Yacht-v0`` reset with seed ``S``, which is game ``S`` of the evaluation harness
(``python -m agents.evaluate --seed S``) as well.
Records keep the seeds, not the dice streams: :meth:`Match.resume` deals the dice again
(:func:`seat_dice`). Records of schema 1 kept every seat's dice, and seated table seat ``s`` on
seed ``S + s``; they are still read, when those dice are the ones the seeds deal
(:func:`recorded_seat_dice`).

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
from yacht_env.echo import echoed_path
from yacht_env.env import GameOverError, check_action
from yacht_env.game import GameBatch, check_game_dice, draw_game_dice, draw_table_dice
from yacht_env.rules import RULE_SETS, YACHT, RuleSet
from yacht_env.seeding import seat_seed
from yacht_env.table.encoding import policy_observations
from yacht_play.records import MODES, SCHEMA, GameRecord, RecordError, RecordFile, now, read_records, write_games


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
        # Schema 1 seated table seat s on seed S + s; from schema 2 every seat records the match's seed.
        wanted = seat_seed(seed, index) if mode == "table" and header["schema"] == 1 else seed
        if player["seed"] != wanted:
            raise RecordError(
                f"{where}: field 'players.{index}.seed': a {mode} game with seed {seed} seats it on {wanted}, "
                f"got {player['seed']}"
            )


@dataclass(frozen=True)
class Player:
    """Who sits at a seat: a person, or an agent playing the policy named ``policy``."""

    name: str
    kind: str = "human"
    policy: str | None = None


def dice_stream(seed: int, rules: RuleSet | None = None) -> np.ndarray:
    """The dice stream ``Yacht-v0`` plays after ``reset(seed=seed)``."""
    return draw_game_dice(seeding.np_random(seed)[0], rules or YACHT)


def seat_dice(seed: int, seat: int, rules: RuleSet | None = None) -> np.ndarray:
    """The dice of seat ``seat`` at a table dealt with ``seed``: what ``draw_table_dice`` deals it.

    Seats draw in order from one generator, so a seat's dice do not depend on the table's size;
    seat 0's are :func:`dice_stream`'s.
    """
    return draw_table_dice(seeding.np_random(seed)[0], rules or YACHT, seat + 1)[seat]


def recorded_seat_dice(header: dict, info: dict, rules: RuleSet, where: str, as_recorded: bool = False) -> np.ndarray:
    """The dice stream of the seat ``info`` of a recorded game, dealt again from its seed.

    Schema 2 seats the table on the game's seed (:func:`seat_dice`). Schema 1 seated every seat on its
    own seed's stream (:func:`dice_stream`) and wrote the stream down: it is read only when it is that
    stream, since a stream no seed deals could be any dice at all (``as_recorded`` plays it as written:
    see :meth:`Match.resume`). ``RecordError`` naming ``where`` and the field otherwise.
    """
    seat, seed, faces = info["seat"], info["seed"], info.get("faces")
    field = f"{where}: game record, field 'players.{seat}"
    if header["schema"] >= 2:
        return seat_dice(seed, seat if header["mode"] == "table" else 0, rules)
    try:
        recorded = check_game_dice(faces, rules)
    except ValueError as error:
        raise RecordError(f"{field}.faces': {error}") from None
    if as_recorded:
        return recorded
    if seed is None:
        raise RecordError(
            f"{field}.seed': expected the seed that deals its dice, got None: a schema-1 record is read only when "
            "its dice can be dealt again from its seeds"
        )
    dealt = dice_stream(seed, rules)
    if not np.array_equal(recorded, dealt):
        raise RecordError(
            f"{field}.faces': not the dice seed {seed} deals: a schema-1 record is read only when its dice can be "
            "dealt again from its seeds"
        )
    return dealt


def agent_name(policy: str) -> str:
    """A short seat name for a policy name: ``ppo:models/best.zip`` sits as ``ppo``."""
    return policy.split(":", 1)[0]


def rules_named(name: str) -> RuleSet:
    """The named rule set (a key of ``RULE_SETS``), else ``RecordError`` naming those this version plays."""
    if not isinstance(name, str) or name not in RULE_SETS:
        raise RecordError(f"unknown rule set {name!r}; this version plays {', '.join(RULE_SETS)}")
    return RULE_SETS[name]


def check_same_rules(recorded: str, wanted: RuleSet | None, what: str) -> None:
    """``RecordError`` when a game recorded under ``recorded`` is to be used under other rules ``wanted``."""
    if wanted is not None and wanted.name != recorded:
        raise RecordError(
            f"{what} was played under the {recorded} rules, not {wanted.name}: use --rules {recorded} (or leave --rules out)"
        )


class Seat:
    """One player's place in a match: who sits there, their dice stream, and their position.

    The position is read from the match's game (:class:`yacht_env.game.GameBatch`), which the match
    binds when it is built; a seat never changes the game itself.
    """

    def __init__(self, index: int, player: Player, seed: int | None, faces, rules: RuleSet, policy=None):
        self.index = index
        self.player = player
        self.seed = seed
        self.rules = rules
        self.faces = check_game_dice(faces, rules)
        self.policy = policy
        self._game: GameBatch | None = None
        self._at = (0, 0)

    def bind(self, game: GameBatch, table: int, seat: int) -> None:
        """Read this seat's position from ``game.<array>[table, seat]``."""
        self._game, self._at = game, (table, seat)

    @property
    def name(self) -> str:
        """The player's name."""
        return self.player.name

    @property
    def kind(self) -> str:
        """The player's kind: human or agent."""
        return self.player.kind

    @property
    def dice(self) -> tuple[int, ...]:
        """The dice in hand."""
        return tuple(int(d) for d in self.rules.dice.hands[self._game.hands[self._at]])

    @property
    def rolls_left(self) -> int:
        """The rolls left this turn."""
        return int(self._game.rolls_left[self._at])

    @property
    def roll(self) -> int:
        """Which roll of the turn the dice come from, 1-based."""
        return self.rules.rolls_per_turn - self.rolls_left

    @property
    def open_bits(self) -> int:
        """The open categories, as a bit set."""
        return int(self._game.open_bits[self._at])

    @property
    def open_names(self) -> list[str]:
        """The names of the open categories."""
        return [name for c, name in enumerate(self.rules.category_names) if self.open_bits >> c & 1]

    @property
    def rows_filled(self) -> int:
        """The number of score-sheet rows filled."""
        return int(self._game.turns_done[self._at])

    @property
    def finished(self) -> bool:
        """Whether every row of the sheet is filled."""
        return self.rows_filled == self.rules.num_turns

    @property
    def turn(self) -> int:
        """The turn being played, from 1."""
        return min(self.rows_filled + 1, self.rules.num_turns)

    @property
    def sheet(self) -> tuple[int | None, ...]:
        """The score sheet: each row's points, None if open."""
        return self._game.sheet(*self._at)

    @property
    def total(self) -> int:
        """The total score, bonuses included."""
        return int(self._game.totals[self._at])

    @property
    def hand(self) -> int:
        """The hand index of the dice in hand."""
        return int(self._game.hands[self._at])

    @property
    def sheet_state(self) -> tuple[int, int]:
        """``(upper_total, yahtzee_full)``: the upper subtotal and 1 when the Yahtzee box holds its full points
        (both 0 for rules without them), what a decision depends on beyond the open rows.
        """
        table, seat = self._at
        upper, full = self._game.sheet_state([table], [seat])
        return int(upper[0]), int(full[0])

    @property
    def bonuses(self) -> tuple[int, int]:
        """``(upper bonus, extra-Yahtzee bonuses)`` earned so far."""
        return self._game.bonuses(*self._at)

    @property
    def observation(self):
        """The seat's position in its policy's encoding (agents only)."""
        if self.policy is None:
            return None
        return self.policy.encoding.encode(self.hand, self.rolls_left, self.open_bits, *self.sheet_state)

    def legal_mask(self) -> np.ndarray:
        """The seat's legal actions now, int8 (all zeros unless it is the seat's turn; the joker rule applied)."""
        table, seat = self._at
        if self._game.over[table] or self._game.seat[table] != seat:
            return np.zeros(self._game.num_actions, dtype=np.int8)
        return self._game.legal_masks([table])[0]

    def describe(self) -> dict:
        """The seat as a dict for the record."""
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

    def __init__(
        self,
        seats: list[Seat],
        mode: str,
        seed: int,
        rules: RuleSet | None = None,
        game_id: str | None = None,
        coach: bool = False,
        started: str | None = None,
    ):
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
            self.game = GameBatch(self.rules, num_players=1, num_tables=len(seats))
            self.game.start(np.stack([seat.faces for seat in seats])[:, None])
            for index, seat in enumerate(seats):
                seat.bind(self.game, index, 0)
        else:
            self.game = GameBatch(self.rules, num_players=len(seats), num_tables=1)
            self.game.start(np.stack([seat.faces for seat in seats])[None])
            for index, seat in enumerate(seats):
                seat.bind(self.game, 0, index)

    @classmethod
    def new(
        cls,
        players: list[Player],
        seed: int,
        mode: str = "solitaire",
        rules: RuleSet | None = None,
        coach: bool = False,
        policies: dict | None = None,
    ) -> Match:
        """A fresh game. Agents' policies are built from their names unless given in ``policies`` (by seat).

        ``mode`` is one of the record's modes (``MODES``); any other is refused here, before a record
        that could never be read back is written.
        """
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not a game mode: expected one of {', '.join(MODES)}")
        rules = rules or YACHT
        policies = dict(policies or {})
        # The dice of every multi-player game: seat s gets draw_table_dice's seat s for the seed.
        table_dice = draw_table_dice(seeding.np_random(seed)[0], rules, 1 if mode == "duplicate" else len(players))
        seats = []
        for index, player in enumerate(players):
            faces = table_dice[0] if mode == "duplicate" else table_dice[index]
            policy = policies.get(index)
            if policy is None and player.kind == "agent":
                policy = load_policy(player.policy, rules, seat_seed(seed, index), 1 if mode == "duplicate" else len(players))
            seats.append(Seat(index, player, seed, faces, rules, policy))
        return cls(seats, mode, seed, rules, coach=coach)

    @classmethod
    def resume(
        cls,
        game: GameRecord,
        policies: dict | None = None,
        agents: bool = True,
        source: str = "",
        rules: RuleSet | None = None,
        dice_as_recorded: bool = False,
    ) -> Match:
        """The match of a recorded game, with every recorded decision replayed on its dice.

        This is the one check of a game's meaning (every line's schema is checked on reading, by
        :func:`yacht_play.records.check_line`): the header must describe a possible table, and every
        decision, field by field, and the end line must be what the replay gives; ``RecordError``
        names the line and the field otherwise. The dice come from each seat's seed.

        Agents: ``policies`` (by seat) plays them; an agent without one is rebuilt from its recorded
        name only if that is a built-in policy (``random``, ``greedy``, ``optimal``): a record never
        makes the program load a model file it names. ``agents=False`` builds no policies at all.

        The game plays under the rule set its header names (bonuses and jokers replayed exactly);
        ``rules``, when given, must be that one: ``RecordError`` naming both otherwise.

        A schema-1 header also holds each seat's dice stream; it must be the one the seat's seed deals
        (:func:`recorded_seat_dice`), else nothing shows the dice were not chosen. ``dice_as_recorded``
        plays a schema-1 stream as written instead: only for a game a server stored itself (its rows,
        where ``yacht import`` lets in only dice that seeds deal), never for a file.
        """
        from agents.registry import resumable_policies

        header = game.header
        lines = game.line_numbers or [0] * (1 + len(game.decisions) + (game.end is not None))
        where = f"{source}:{lines[0]}" if source else f"game {game.game_id}"
        try:
            wanted_rules, rules = rules, rules_named(header["rules"])
        except RecordError as error:
            raise RecordError(f"{where}: field 'rules': {error}") from None
        check_same_rules(rules.name, wanted_rules, f"{where}: game {game.game_id}")
        check_table(header, where)
        policies = dict(policies or {})
        seats = []
        for info in header["players"]:
            player = Player(info["name"], info["kind"], info["policy"])
            policy = policies.get(info["seat"])
            if policy is None and agents and info["kind"] == "agent":
                if info["policy"] not in resumable_policies():
                    raise RecordError(
                        f"the record names the agent {info['policy']!r} for seat {info['seat'] + 1} ({info['name']}): a record "
                        "never makes yacht play load a model; name the agents again with --vs, in seat order"
                    )
                policy_seed = None if header["seed"] is None else seat_seed(header["seed"], info["seat"])
                num_players = 1 if header["mode"] == "duplicate" else len(header["players"])
                policy = load_policy(info["policy"], rules, policy_seed, num_players)
            faces = recorded_seat_dice(header, info, rules, where, as_recorded=dice_as_recorded)
            seats.append(Seat(info["seat"], player, info["seed"], faces, rules, policy))
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
                    raise RecordError(
                        f"{at}: end record, field {key!r}: the replay gives {value}, the record says {game.end[key]}"
                    )
            match.end = game.end
        return match

    def _replay(self, record: dict, where: str) -> None:
        seat = self.current
        if seat is None:
            raise RecordError(f"{where}: decision recorded after every sheet was full")
        for key, value in self._position(seat).items():
            if record[key] != value:
                raise RecordError(
                    f"{where}: decision does not fit the game: field {key!r}: the replay has {value!r}, "
                    f"the record {record[key]!r}"
                )
        try:
            played = self.play(record["action"], record["seconds"])
        except (ValueError, GameOverError) as error:
            raise RecordError(f"{where}: field 'action': {error}") from None
        for key in ("action_text", "points", "total"):
            if played[key] != record[key]:
                raise RecordError(
                    f"{where}: decision does not fit the game: field {key!r}: the replay gives {played[key]!r}, "
                    f"the record {record[key]!r}"
                )
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
        """The game so far as a GameRecord."""
        return GameRecord(self.header, list(self.decisions), self.end)

    # -- the game ------------------------------------------------------------------------------

    @property
    def game_id(self) -> str:
        """The game's id."""
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
        """Whether the game is over."""
        return self.current is None

    @property
    def totals(self) -> list[int]:
        """The seats' totals, in seat order."""
        return [seat.total for seat in self.seats]

    @property
    def winners(self) -> list[str]:
        """The names of the seats with the highest total."""
        best = max(self.totals)
        return [seat.name for seat in self.seats if seat.total == best]

    def _position(self, seat: Seat) -> dict:
        """The fields of a decision record that say where ``seat`` decides: the game, the seat, the turn, the dice."""
        return {
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

    def play(self, action, seconds: float = 0.0) -> dict:
        """Apply the current seat's decision; return its record.

        A bad action raises ``ValueError`` naming it, one the rules forbid now
        ``IllegalActionError``; either changes nothing.
        """
        seat = self.current
        if seat is None:
            raise GameOverError("the game is over: every sheet is full")
        record = {
            "schema": self.header["schema"],  # a resumed schema 1 game stays schema 1
            "type": "decision",
            **self._position(seat),
        }
        action = check_action(action, self.layout.num_actions)
        reason = self.layout.why_illegal(action, seat.rolls_left, seat.open_bits, seat.hand)
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
            self.end = {
                "schema": self.header["schema"],
                "type": "end",
                "game_id": self.game_id,
                "totals": self.totals,
                "winners": self.winners,
                "time": now(),
            }
            self._emit(self.end)
        return record

    def agent_action(self) -> tuple[int, float]:
        """The current agent seat's choice and the seconds it took to make."""
        seat = self.current
        if seat is None or seat.policy is None:
            raise ValueError("the seat to move is not an agent")
        started = time.perf_counter()
        if getattr(seat.policy, "table_encoding", None) is not None:  # a policy that reads the table (win, target:T)
            table, seat_at_table = seat._at
            observations = policy_observations(seat.policy, self.game, [table], [seat_at_table])
            action = int(seat.policy.act_batch(observations, seat.legal_mask()[None])[0])
        else:
            action = seat.policy.act(seat.observation, seat.legal_mask())
        return action, time.perf_counter() - started

    def play_agent(self) -> dict:
        """Play the current agent's action; return its record."""
        return self.play(*self.agent_action())


def load_games(path, rules: RuleSet | None = None) -> "RecordFile":
    """The games of a record file, each checked line by line and replayed against its dice (no policy is built).

    The one validator behind ``yacht play --resume`` and ``yacht analyze``: ``RecordError`` (one line,
    naming the file, the line and the field) for anything but a torn last line, and for a game
    played under other rules than ``rules`` (when given).
    """
    records = read_records(path)
    for game in records.games:
        Match.resume(game, agents=False, source=echoed_path(records.path), rules=rules)
    return records


def load_policy(name: str, rules: RuleSet, seed: int | None, num_players: int = 1):
    """The agent called ``name`` for a seat at a table of ``num_players`` (1: a solitaire game), playing ``rules``.

    ``ValueError`` (one line) for an agent that does not play these rules: a model trained under
    others, or ``win`` and ``target:T`` under rules with bonuses or jokers.
    """
    from agents.registry import make_policy, make_table_policy

    check_agent_rules(name, rules)
    return make_policy(name, rules=rules, seed=seed) if num_players == 1 else make_table_policy(name, num_players, rules, seed)


def check_agent_rules(name: str, rules: RuleSet) -> None:
    """``ValueError`` naming the agent and both rule sets when ``name`` cannot play a game under ``rules``.

    A model file (``ppo:PATH``) names the rules it was trained under; the ``win`` and ``target:T``
    agents' exact tables cover only rule sets without bonuses or jokers (:mod:`agents.registry`
    says which rule sets each agent plays).
    """
    from agents.registry import check_plays_rules

    check_plays_rules(name, rules)


def stack_observations(observations: list):
    """The observations stacked into one batch (a dict of arrays for dict observations)."""
    if isinstance(observations[0], dict):
        return {key: np.stack([obs[key] for obs in observations]) for key in observations[0]}
    return np.stack(observations)


def play_agent_games(
    policy,
    streams: list[tuple[int | None, np.ndarray]],
    rules: RuleSet | None = None,
    name: str | None = None,
    mode: str = "evaluation",
) -> list[GameRecord]:
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


def write_agent_games(
    path, policy, games: int, seed: int = 0, rules: RuleSet | None = None, name: str | None = None
) -> list[GameRecord]:
    """Play ``games`` games with an agent and append their records to ``path``.

    Game ``g`` is ``Yacht-v0`` reset with seed ``seed + g``: the games of the evaluation harness
    (``python -m agents.evaluate --seed SEED``), decision by decision. ``policy`` is a
    ``Policy`` or a name for ``agents.registry.make_policy``. Returns the games written.
    """
    streams = [(seed + g, dice_stream(seed + g, rules)) for g in range(games)]
    played = play_agent_games(policy, streams, rules=rules, name=name)
    write_games(path, played)
    return played
