"""Yacht at a table of players: the pure game state of many tables, stepped together.

Every seat plays its own solitaire game on its own dice table, shape (turns, rolls per turn,
dice), exactly as ``Yacht-v0`` plays one (see ``draw_game_dice``); the seats take whole turns in
rotation (``RULES.md``): seat 0 plays turn 1, then seat 1 plays turn 1, ..., then seat 0 plays
turn 2, and so on. Because a seat's dice are its own, what a seat rolls never depends on what
the other seats do: the players meet only in the final totals (and in what they see of each
other while deciding).

A seat always holds a position ``(hand, rolls_left, open_bits)`` like ``YachtEnv``'s: its first
roll of a turn is made as soon as its previous turn ends, and after its last turn it keeps the
hand it scored with and 0 rolls left. Only the seat whose turn it is may act.

This module knows nothing about envs or policies; the PettingZoo env, the ``Yacht-v0`` table
env and the tournament all step :class:`Tables` (one table or thousands) and read its arrays.
"""

from __future__ import annotations

import numpy as np

from yacht_env.actions import ActionLayout
from yacht_env.env import check_game_dice, draw_game_dice
from yacht_env.rules import RuleSet

MAX_PLAYERS = 5
REWARD_MODES = ("win", "score")


def check_num_players(num_players, low: int = 1) -> int:
    """``num_players`` as an int, or ``ValueError`` naming it and the allowed range."""
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) or not low <= num_players <= MAX_PLAYERS:
        raise ValueError(f"num_players must be an integer in {low}..{MAX_PLAYERS}, got {num_players!r}")
    return int(num_players)


def check_reward_mode(reward_mode) -> str:
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"reward_mode {reward_mode!r} is not supported; expected 'win' or 'score'")
    return reward_mode


def draw_table_dice(np_random: np.random.Generator, rules: RuleSet, num_players: int) -> np.ndarray:
    """Every seat's dice table, shape (seats, turns, rolls, dice), drawn in seat order.

    Seat 0 draws first, so seat 0's dice for a seed are those of ``Yacht-v0`` reset with that seed;
    one seed is one dice stream per seat, whatever anyone plays.
    """
    return np.stack([draw_game_dice(np_random, rules) for _ in range(num_players)])


def check_table_dice(faces, rules: RuleSet, num_players: int) -> np.ndarray:
    """Caller-given dice of every seat as int8, or ``ValueError`` naming what is wrong with them."""
    array = np.asarray(faces)
    shape = (num_players, rules.num_turns, rules.rolls_per_turn, rules.num_dice)
    if array.shape != shape:
        raise ValueError(f"faces must be an integer array of shape {shape} (one dice table per seat), got shape {array.shape}")
    return np.stack([check_game_dice(seat_faces, rules) for seat_faces in array])


def win_shares(totals: np.ndarray) -> np.ndarray:
    """Each player's share of the win: ``1/k`` for each of the ``k`` highest totals, else 0.

    ``totals`` has shape (..., num_players); so does the result (float64). Equal highest totals
    share the win (``RULES.md``).
    """
    totals = np.asarray(totals)
    winners = totals == totals.max(axis=-1, keepdims=True)
    return winners / winners.sum(axis=-1, keepdims=True)


def win_rewards(totals: np.ndarray) -> np.ndarray:
    """Zero-sum end-of-game rewards: the winners share +1, the others share -1.

    With ``k`` winners among ``n`` players a winner gets ``1/k`` and every other player
    ``-1/(n - k)``. When all players share the win (always so for one player) everyone gets 0.
    Shape (..., num_players), float64.
    """
    totals = np.asarray(totals)
    winners = totals == totals.max(axis=-1, keepdims=True)
    num_winners = winners.sum(axis=-1, keepdims=True)
    num_losers = totals.shape[-1] - num_winners
    rewards = np.where(winners, 1.0 / num_winners, -1.0 / np.maximum(num_losers, 1))
    return np.where(num_losers == 0, 0.0, rewards)


class Tables:
    """``num_tables`` games of Yacht, each at a table of ``num_players`` seats.

    State (arrays, indexed ``[table, seat]`` unless said otherwise), valid after :meth:`start`:

    - ``faces``: (tables, seats, turns, rolls, dice) int8, every seat's dice table.
    - ``hands``, ``rolls_left``, ``open_bits``: each seat's position (hand index into
      ``rules.dice.hands``, rolls left this turn, open-row bit set with bit ``c`` <-> row ``c``).
    - ``sheets``: (tables, seats, rows) int16, points written, -1 where the row is open.
    - ``totals``: points so far; ``turns_done``: rows filled so far.
    - ``seat``: (tables,) the seat to act; ``over``: (tables,) True once every seat has filled
      every row. A finished table keeps its last state.

    :meth:`play` applies *legal* actions only: callers decide what an illegal action means.
    """

    def __init__(self, rules: RuleSet, num_players: int, num_tables: int = 1):
        self.rules = rules
        self.num_players = check_num_players(num_players)
        self.num_tables = int(num_tables)
        self.layout = ActionLayout(rules)
        dice = rules.dice
        self._score_table = rules.score_table
        self._kept_code = dice.kept_code
        self._hand_of_code = dice.hand_of_code
        self._place_values = dice.place_values
        self._reroll_bits = dice.reroll_bits
        self._reroll_rank = dice.reroll_rank.astype(np.intp)
        self._masks = self.layout.mask_table
        self._all_tables = np.arange(self.num_tables)

    # -- starting ------------------------------------------------------------------------------

    def start(self, faces: np.ndarray) -> None:
        """Start every table; ``faces`` is (tables, seats, turns, rolls, dice) of faces 1..num_faces."""
        rules = self.rules
        expected = (self.num_tables, self.num_players, rules.num_turns, rules.rolls_per_turn, rules.num_dice)
        faces = np.asarray(faces)
        if faces.shape != expected:
            raise ValueError(f"faces must have shape {expected} (tables, seats, turns, rolls, dice), got {faces.shape}")
        self.faces = faces.astype(np.int8)
        shape = (self.num_tables, self.num_players)
        self.hands = self._first_roll(self.faces[:, :, 0, 0])
        self.rolls_left = np.full(shape, rules.rolls_per_turn - 1, dtype=np.int64)
        self.open_bits = np.full(shape, rules.all_open, dtype=np.int64)
        self.sheets = np.full(shape + (rules.num_categories,), -1, dtype=np.int16)
        self.totals = np.zeros(shape, dtype=np.int64)
        self.turns_done = np.zeros(shape, dtype=np.int64)
        self.seat = np.zeros(self.num_tables, dtype=np.int64)
        self.over = np.zeros(self.num_tables, dtype=bool)

    def _first_roll(self, rolls: np.ndarray) -> np.ndarray:
        """Hand index of rolls of all dice, faces in positional order; any leading shape."""
        return self._hand_of_code[(rolls.astype(np.int64) - 1) @ self._place_values].astype(np.int64)

    # -- reading -------------------------------------------------------------------------------

    def legal_masks(self, tables=None) -> np.ndarray:
        """Legal actions of the seat to act at each of ``tables`` (default all), (N, num_actions) int8.

        All zeros at a finished table.
        """
        tables = self._all_tables if tables is None else np.asarray(tables)
        seats = self.seat[tables]
        can_reroll = (self.rolls_left[tables, seats] > 0).astype(np.intp)
        masks = self._masks[can_reroll, self.open_bits[tables, seats]]
        return np.where(self.over[tables, None], 0, masks).astype(np.int8)

    def position(self, tables, seats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(hands, rolls_left, open_bits)`` of ``seats`` at ``tables`` (arrays of equal length)."""
        return self.hands[tables, seats], self.rolls_left[tables, seats], self.open_bits[tables, seats]

    def turn(self, tables, seats) -> np.ndarray:
        """The 1-based turn each seat is playing or will play next (the last turn once done)."""
        return np.minimum(self.turns_done[tables, seats] + 1, self.rules.num_turns)

    # -- playing -------------------------------------------------------------------------------

    def play(self, actions, tables=None) -> np.ndarray:
        """Play one legal action at each of ``tables`` (default all) for the seat to act.

        A re-roll lands the next fresh faces of the seat's turn on the picked-up dice, in order;
        a score writes the row, starts the seat's next turn (if any) and passes the turn to the
        next seat. Returns the points written at each table, (N,) int64 (0 for a re-roll).
        """
        tables = self._all_tables if tables is None else np.asarray(tables, dtype=np.int64)
        actions = np.asarray(actions, dtype=np.int64)
        seats = self.seat[tables]
        points = np.zeros(len(tables), dtype=np.int64)
        first_score = self.layout.first_score_action
        rerolls = actions < first_score
        if rerolls.any():
            self._reroll(tables[rerolls], seats[rerolls], actions[rerolls])
        scores = ~rerolls
        if scores.any():
            points[scores] = self._score(tables[scores], seats[scores], actions[scores] - first_score)
        return points

    def _reroll(self, tables, seats, masks):
        turn = self.turns_done[tables, seats]
        roll = self.rules.rolls_per_turn - self.rolls_left[tables, seats]
        fresh = self.faces[tables, seats, turn, roll].astype(np.int64)  # (N, dice), used in order
        landed = np.take_along_axis(fresh, self._reroll_rank[masks], axis=1)
        code = self._kept_code[self.hands[tables, seats], masks]
        code = code + ((landed - 1) * self._reroll_bits[masks] * self._place_values).sum(axis=1)
        self.hands[tables, seats] = self._hand_of_code[code]
        self.rolls_left[tables, seats] -= 1

    def _score(self, tables, seats, categories):
        points = self._score_table[self.hands[tables, seats], categories].astype(np.int64)
        self.sheets[tables, seats, categories] = points
        self.totals[tables, seats] += points
        self.open_bits[tables, seats] &= ~(np.int64(1) << categories)
        self.turns_done[tables, seats] += 1
        turn = self.turns_done[tables, seats]
        going_on = turn < self.rules.num_turns
        on_tables, on_seats = tables[going_on], seats[going_on]
        self.hands[on_tables, on_seats] = self._first_roll(self.faces[on_tables, on_seats, turn[going_on], 0])
        self.rolls_left[on_tables, on_seats] = self.rules.rolls_per_turn - 1
        self.rolls_left[tables[~going_on], seats[~going_on]] = 0
        # Whole turns in rotation: the last seat's last row ends the game.
        self.over[tables] = ~going_on & (seats == self.num_players - 1)
        self.seat[tables] = np.where(self.over[tables], seats, (seats + 1) % self.num_players)
        return points


def render_table(tables: Tables, table: int, names) -> str:
    """Text of one table: the position of the player to act (dice, rolls left, their sheet and
    what the dice would score now), then every player's total and open rows; after the game,
    every sheet and the winners."""
    from yacht_env.render import render_position

    rules = tables.rules
    seats = range(tables.num_players)

    def sheet(seat):
        return [None if points < 0 else int(points) for points in tables.sheets[table, seat]]

    if tables.over[table]:
        parts = [render_position(rules, None, 0, sheet(seat), rules.num_turns, title=names[seat]) for seat in seats]
        shares = win_shares(tables.totals[table])
        winners = [names[seat] for seat in seats if shares[seat] > 0]
        verb = "wins" if len(winners) == 1 else "share the win"
        parts.append(f"{' and '.join(winners)} {verb} with {int(tables.totals[table].max())}")
        return "\n\n".join(parts)
    seat = int(tables.seat[table])
    dice = rules.dice.hands[tables.hands[table, seat]]
    turn = int(tables.turn([table], [seat])[0])
    lines = [render_position(rules, dice, int(tables.rolls_left[table, seat]), sheet(seat), turn, title=f"{names[seat]} to play")]
    lines.append("Table  " + "   ".join(
        f"{'>' if s == seat else ' '}{names[s]} {int(tables.totals[table, s])} ({bin(int(tables.open_bits[table, s])).count('1')} open)"
        for s in seats
    ))  # fmt: skip
    return "\n".join(lines)


def unique_names(names: list[str]) -> list[str]:
    """Names made unique for display: a policy seated twice becomes ``optimal`` and ``optimal (2)``."""
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return unique
