"""The game of Yacht as pure state and one transition: no env, no policy, no I/O.

:class:`GameBatch` holds many games at once, each at a table of ``num_players`` seats (one seat for
solitaire), in plain arrays. :meth:`GameBatch.play` is the only place where a game changes: it
re-rolls the chosen dice, scores a row, starts the seat's next turn, passes the turn to the next
seat and ends the game, for a batch of tables in one compiled loop (:func:`advance`). Every env
(``YachtEnv``, ``YachtVectorEnv``, ``YachtTableEnv``, the PettingZoo env) and human play step
games through it; the rule set (:class:`~yacht_env.rules.RuleSet`) is its input, read as the
arrays of :func:`rule_arrays`.

Rules that tie rows together (an upper bonus, an extra-Yahtzee bonus, a joker rule) are played
here too: each seat keeps its upper subtotal, a Yahtzee scored again earns its bonus while the
Yahtzee box holds its full points, a joker scores its joker values, and the forced joker rule
limits the rows it may go in. The points a scoring action reports are everything the seat's total
gains, bonuses included, so rewards sum to the final total.

Dice: every seat plays its own dice stream of shape (turns, rolls per turn, dice), fixed before the
game starts. Roll ``r`` of turn ``t`` lands its re-rolled dice on ``faces[t, r, :k]`` in order (the
first roll of a turn uses all of ``faces[t, 0]``), so what a seat rolls never depends on what any
player does. :func:`draw_game_dice` draws one table; :func:`draw_table_dice` one per seat.

Turns: seats take whole turns in rotation (``RULES.md``): seat 0 plays turn 1, then seat 1 plays
turn 1, ..., then seat 0 plays turn 2. A seat's first roll of a turn is made as soon as its
previous turn ends; after its last turn it keeps the hand it scored with and 0 rolls left, so it
has no legal action. A finished game keeps its last state and refuses every action.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, typeof

from yacht_env.actions import legal_masks
from yacht_env.rules import JOKER_FORCED, RuleSet, cached_per_rules, extra_yahtzee_bonus, placement, upper_bonus

MAX_PLAYERS = 5


class RuleArrays(NamedTuple):
    """A rule set as the read-only arrays compiled code reads (see :mod:`yacht_env.dice`)."""

    hand_scores: np.ndarray  # (2, hands, rows) int16: points of each hand in each row, [1] played as a joker
    kept_code: np.ndarray  # (hands, rerolls) int64: code of the dice a re-roll keeps
    hand_of_code: np.ndarray  # (faces ** dice,) int16: hand of dice in any order
    place_values: np.ndarray  # (dice,) int64: weights of the dice code
    reroll_bits: np.ndarray  # (rerolls, dice) bool: positions a re-roll picks up
    reroll_rank: np.ndarray  # (rerolls, dice) int8: which fresh die lands at each position
    legal_masks: np.ndarray  # (2, open sets, actions) int8: legal actions by (rolls left > 0, open rows)
    alike_faces: np.ndarray  # (hands,) int64: NOT_ALIKE, else the upper row of the hand's face (-1 if none)
    sheet_rules: np.ndarray  # (8,) int64: the numbers of the rules that tie rows together, see SHEET_RULES


# Few arrays, as each argument of a compiled call costs the caller time (the single env steps one game a call).
SHEET_RULES = (
    "has_bonus_or_joker",
    "bonus_threshold",
    "bonus_points",
    "yahtzee_row",
    "yahtzee_bonus",
    "joker_mode",
    "lower_bits",
    "upper_bits",
)
"""The order of :attr:`RuleArrays.sheet_rules`."""
HAS_SHEET_STATE, BONUS_THRESHOLD, BONUS_POINTS, YAHTZEE_ROW, YAHTZEE_BONUS, JOKER_MODE, LOWER_BITS, UPPER_BITS = range(
    len(SHEET_RULES)
)
NOT_ALIKE = -2  # in RuleArrays.alike_faces: the dice are not five alike


def check_playable(rules: RuleSet) -> RuleSet:
    """``rules`` if the transition can play them, else ``ValueError`` naming what is wrong.

    A joker rule needs one upper row per face (the row a joker of that face belongs to).
    """
    _ = rules.face_rows  # raises ValueError when a joker rule cannot tell a face's upper row
    return rules


@cached_per_rules
def rule_arrays(rules: RuleSet) -> RuleArrays:
    """The arrays of ``rules`` that :func:`advance` reads, built once per rule set."""
    check_playable(rules)
    dice = rules.dice
    sheet_rules = np.array(
        [
            int(rules.has_bonus_or_joker),
            rules.upper_cap,
            rules.bonus_points,
            rules.yahtzee_row_index,
            rules.yahtzee_bonus,
            rules.joker_mode,
            rules.lower_bits,
            rules.upper_bits,
        ],
        dtype=np.int64,
    )
    hand_scores = np.stack([rules.hand_scores, rules.joker_hand_scores])
    alike_faces = np.where(rules.alike_hands, rules.face_rows, NOT_ALIKE).astype(np.int64)
    for array in (sheet_rules, hand_scores, alike_faces):
        array.setflags(write=False)
    return RuleArrays(
        hand_scores,
        dice.kept_code,
        dice.hand_of_code,
        dice.place_values,
        dice.reroll_bits,
        dice.reroll_rank,
        legal_masks(rules),
        alike_faces,
        sheet_rules,
    )


# -- dice --------------------------------------------------------------------------------------


def draw_game_dice(np_random: np.random.Generator, rules: RuleSet) -> np.ndarray:
    """All faces one seat's game can use, shape (turns, rolls per turn, dice), int8.

    Drawing the whole game at once makes one seed one dice stream, whatever the player does, so
    policies compared on a seed face common random numbers.
    """
    shape = (rules.num_turns, rules.rolls_per_turn, rules.num_dice)
    return np_random.integers(1, rules.num_faces + 1, size=shape, dtype=np.int8)


def draw_table_dice(np_random: np.random.Generator, rules: RuleSet, num_players: int) -> np.ndarray:
    """Every seat's dice stream, shape (seats, turns, rolls, dice), drawn in seat order.

    Seat 0 draws first, so seat 0's dice for a seed are those of ``Yacht-v0`` reset with that
    seed, and seat ``s``'s dice are the same at a table of any size larger than ``s``. Every
    multi-player game (the PettingZoo env, ``YachtTable-v0``, tournaments, ``yacht play --vs``)
    deals its seats with this function.
    """
    return np.stack([draw_game_dice(np_random, rules) for _ in range(num_players)])


def check_game_dice(faces, rules: RuleSet) -> np.ndarray:
    """A caller-given dice stream as int8, or ``ValueError`` naming what is wrong with it."""
    shape = (rules.num_turns, rules.rolls_per_turn, rules.num_dice)
    array = np.asarray(faces)
    if array.shape != shape or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"faces must be an integer array of shape {shape}, got {array.dtype} of shape {array.shape}")
    bad = array[(array < 1) | (array > rules.num_faces)]
    if bad.size:
        raise ValueError(f"face {int(bad[0])} in faces is not in 1..{rules.num_faces}")
    return array.astype(np.int8)


def check_num_players(num_players, low: int = 1) -> int:
    """``num_players`` as an int, or ``ValueError`` naming it and the allowed range."""
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) or not low <= num_players <= MAX_PLAYERS:
        raise ValueError(f"num_players must be an integer in {low}..{MAX_PLAYERS}, got {num_players!r}")
    return int(num_players)


# -- the transition, compiled ------------------------------------------------------------------


@njit(cache=True)
def hand_of_roll(roll, hand_of_code, place_values):
    """Hand index of a roll of all dice, faces in positional order."""
    code = 0
    for position in range(roll.shape[0]):
        code += (roll[position] - 1) * place_values[position]
    return hand_of_code[code]


class GameState(NamedTuple):
    """The arrays of a batch of games that the compiled transition updates in place (see :class:`GameBatch`)."""

    faces: np.ndarray  # (tables, seats, turns, rolls, dice) int8
    hands: np.ndarray  # this and the next five: (tables, seats) int64
    rolls_left: np.ndarray
    open_bits: np.ndarray
    turns_done: np.ndarray
    totals: np.ndarray
    upper_totals: np.ndarray
    sheets: np.ndarray  # (tables, seats, rows) int16
    seat: np.ndarray  # (tables,) int64
    over: np.ndarray  # (tables,) bool


def compiled_call(kernel, *args):
    """``kernel`` compiled for exactly the types of ``args``: a function to call with those arrays.

    Numba types every argument of every call, and a bundle (a NamedTuple of arrays) costs about a
    microsecond to type, as much as the single env's whole transition. A caller that passes the
    same arrays on every call (the envs step their own games) binds the machine code once with
    this. Nothing checks the arguments of such a call: give it no other arrays.
    """
    return kernel.compile(tuple(typeof(arg) for arg in args))


@njit(cache=True)
def start_games(games, state, rules, all_open):
    """Put every seat of each game in ``games`` at its first roll with an empty sheet, seat 0 to act."""
    faces, hands, rolls_left, open_bits, turns_done, totals, upper_totals, sheets, seat, over = state
    hand_of_code, place_values = rules.hand_of_code, rules.place_values  # read once: see advance
    for i in games:
        for s in range(faces.shape[1]):
            hands[i, s] = hand_of_roll(faces[i, s, 0, 0], hand_of_code, place_values)
            rolls_left[i, s] = faces.shape[3] - 1
            open_bits[i, s] = all_open
            turns_done[i, s] = 0
            totals[i, s] = 0
            upper_totals[i, s] = 0
            sheets[i, s, :] = -1
        seat[i] = 0
        over[i] = False


@njit(cache=True)
def legal_rows(hand, open_bits, alike_faces, sheet_rules):
    """``(rows, joker)``: the rows ``hand`` may be scored in now (a bit set) and whether at joker values."""
    face = alike_faces[hand]
    if sheet_rules[HAS_SHEET_STATE] == 0 or face == NOT_ALIKE:
        return open_bits, False
    return placement(open_bits, True, face, sheet_rules[YAHTZEE_ROW], sheet_rules[LOWER_BITS], sheet_rules[JOKER_MODE])


@njit(cache=True)
def advance(games, actions, state, rules, points, legal):
    """Play ``actions[k]`` for the seat to act in game ``games[k]``, for every ``k``, in place.

    ``state`` is a :class:`GameState`, ``rules`` the :class:`RuleArrays` of the game's rule set.
    An action the rules forbid now (including any action in a finished game) changes nothing and
    sets ``legal[k] = False``. A re-roll lands the next fresh faces of the seat's turn on the
    picked-up dice, in order; a score writes the row, adds what the seat's total gains (the row's
    points and any bonus they earn) to ``points[k]``, starts the seat's next turn unless its sheet
    is full, and passes the turn to the next seat; the last seat's last score ends the game.
    Actions must lie in the action space (callers check that).
    """
    # Every array read from a bundle is a reference numba counts: read each once, before the loop.
    faces, hands, rolls_left, open_bits, turns_done, totals, upper_totals, sheets, seat, over = state
    hand_scores, kept_code, hand_of_code, place_values, reroll_bits, reroll_rank, legal_masks, alike_faces, sheet_rules = rules
    num_players = faces.shape[1]
    num_turns = faces.shape[2]
    rolls_per_turn = faces.shape[3]
    num_dice = faces.shape[4]
    first_score_action = reroll_bits.shape[0]
    yahtzee_row = sheet_rules[YAHTZEE_ROW]
    for k in range(games.shape[0]):
        i = games[k]
        action = actions[k]
        points[k] = 0
        s = seat[i]
        if legal_masks[1 if rolls_left[i, s] > 0 else 0, open_bits[i, s], action] == 0:
            legal[k] = False
            continue
        turn = turns_done[i, s]
        if action < first_score_action:
            legal[k] = True
            roll = rolls_per_turn - rolls_left[i, s]
            code = kept_code[hands[i, s], action]
            for position in range(num_dice):
                if reroll_bits[action, position]:
                    fresh = faces[i, s, turn, roll, reroll_rank[action, position]]
                    code += (fresh - 1) * place_values[position]
            hands[i, s] = hand_of_code[code]
            rolls_left[i, s] -= 1
            continue
        row = action - first_score_action
        hand = hands[i, s]
        allowed, joker = legal_rows(hand, open_bits[i, s], alike_faces, sheet_rules)
        if (allowed >> row) & 1 == 0:  # the forced joker rule sends a Yahtzee elsewhere
            legal[k] = False
            continue
        legal[k] = True
        scored = hand_scores[1 if joker else 0, hand, row]
        gained = scored
        if sheet_rules[HAS_SHEET_STATE]:
            if (sheet_rules[UPPER_BITS] >> row) & 1:
                gained += upper_bonus(upper_totals[i, s], scored, sheet_rules[BONUS_THRESHOLD], sheet_rules[BONUS_POINTS])
                upper_totals[i, s] += scored
            if yahtzee_row >= 0:
                alike = alike_faces[hand] != NOT_ALIKE
                gained += extra_yahtzee_bonus(alike, sheets[i, s, yahtzee_row] > 0, sheet_rules[YAHTZEE_BONUS])
        points[k] = gained
        sheets[i, s, row] = scored
        totals[i, s] += gained
        open_bits[i, s] &= ~(1 << row)
        turns_done[i, s] = turn + 1
        if turn + 1 < num_turns:
            hands[i, s] = hand_of_roll(faces[i, s, turn + 1, 0], hand_of_code, place_values)
            rolls_left[i, s] = rolls_per_turn - 1
        else:
            rolls_left[i, s] = 0  # a full sheet leaves no legal action, re-rolls included
            if s == num_players - 1:
                over[i] = True  # whole turns in rotation: the last seat's last row ends the game
                continue
        seat[i] = (s + 1) % num_players


@njit(cache=True)
def _num_rows(legal_masks):
    """The number of score rows of the legal masks (their open sets are ``2**rows``)."""
    rows = 0
    while (1 << rows) < legal_masks.shape[1]:
        rows += 1
    return rows


@njit(cache=True)
def gather_masks(games, hands, rolls_left, open_bits, seat, legal_masks, alike_faces, sheet_rules, out):
    """``out[k]`` = the legal-action mask of the seat to act in game ``games[k]``."""
    num_actions = out.shape[1]
    first_score_action = num_actions - _num_rows(legal_masks)
    forced = sheet_rules[HAS_SHEET_STATE] != 0 and sheet_rules[JOKER_MODE] == JOKER_FORCED
    for k in range(games.shape[0]):
        i = games[k]
        s = seat[i]
        row = legal_masks[1 if rolls_left[i, s] > 0 else 0, open_bits[i, s]]
        for action in range(num_actions):  # an explicit loop: numba's row slice assignment is slower
            out[k, action] = row[action]
        if forced and open_bits[i, s] != 0:
            allowed, _ = legal_rows(hands[i, s], open_bits[i, s], alike_faces, sheet_rules)
            for c in range(num_actions - first_score_action):
                out[k, first_score_action + c] = (allowed >> c) & 1


# -- the state ---------------------------------------------------------------------------------


class GameBatch:
    """``num_tables`` games of Yacht, each at a table of ``num_players`` seats (1 for solitaire).

    State (arrays, indexed ``[table, seat]`` unless said otherwise), valid after :meth:`start`:

    - ``faces``: (tables, seats, turns, rolls, dice) int8, every seat's dice stream.
    - ``hands``, ``rolls_left``, ``open_bits``: each seat's position (hand index into
      ``rules.dice.hands``, rolls left this turn, open-row bit set with bit ``c`` <-> row ``c``).
    - ``sheets``: (tables, seats, rows) int16, points written, -1 where the row is open.
    - ``totals``: points so far, bonuses included; ``turns_done``: rows filled so far.
    - ``upper_totals``: points written in the rows that count toward the upper bonus (0 for rules
      without one).
    - ``seat``: (tables,) the seat to act; ``over``: (tables,) True once every seat has filled
      every row. A finished table keeps its last state.

    :meth:`play` refuses (and reports) actions the rules forbid; callers decide what an illegal
    action costs.
    """

    def __init__(self, rules: RuleSet, num_players: int = 1, num_tables: int = 1):
        self.rules = rules
        self.num_players = check_num_players(num_players)
        self.num_tables = int(num_tables)
        self.arrays = rule_arrays(rules)
        self.num_actions = self.arrays.legal_masks.shape[2]
        self.all_tables = np.arange(self.num_tables, dtype=np.int64)
        shape = (self.num_tables, self.num_players)
        self.faces = np.ones(shape + (rules.num_turns, rules.rolls_per_turn, rules.num_dice), dtype=np.int8)
        self.hands = np.zeros(shape, dtype=np.int64)
        self.rolls_left = np.zeros(shape, dtype=np.int64)
        self.open_bits = np.zeros(shape, dtype=np.int64)
        self.turns_done = np.zeros(shape, dtype=np.int64)
        self.totals = np.zeros(shape, dtype=np.int64)
        self.upper_totals = np.zeros(shape, dtype=np.int64)
        self.sheets = np.full(shape + (rules.num_rows,), -1, dtype=np.int16)
        self.seat = np.zeros(self.num_tables, dtype=np.int64)
        self.over = np.ones(self.num_tables, dtype=bool)  # no game before start()
        self._bind_kernels()

    def _bind_kernels(self):
        # The compiled start and transition, bound once to this game's arrays (see compiled_call);
        # every index and action array they are given is made int64, one-dimensional and contiguous.
        self._state, tables = self.state, self.all_tables
        self._start_games = compiled_call(start_games, tables, self._state, self.arrays, self.rules.all_open)
        self._advance = compiled_call(advance, tables, tables, self._state, self.arrays, tables, self.over)

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in ("_state", "_start_games", "_advance"):  # machine code does not pickle: a copy binds its own
            del state[name]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._bind_kernels()

    @property
    def state(self) -> GameState:
        """The arrays :func:`advance` and :func:`start_games` update in place."""
        return GameState(
            self.faces,
            self.hands,
            self.rolls_left,
            self.open_bits,
            self.turns_done,
            self.totals,
            self.upper_totals,
            self.sheets,
            self.seat,
            self.over,
        )

    # -- starting ------------------------------------------------------------------------------

    def start(self, faces, tables=None) -> None:
        """Start the games at ``tables`` (default all) on ``faces``, shape (len(tables), seats, turns, rolls, dice)."""
        tables = self._indices(tables)
        rules = self.rules
        expected = (len(tables), self.num_players, rules.num_turns, rules.rolls_per_turn, rules.num_dice)
        faces = np.asarray(faces)
        if faces.shape != expected:
            raise ValueError(f"faces must have shape {expected} (tables, seats, turns, rolls, dice), got {faces.shape}")
        self.faces[tables] = faces
        self.start_drawn(tables)

    def start_drawn(self, tables) -> None:
        """Start the games at ``tables`` on the faces already in ``self.faces``."""
        self._start_games(self._indices(tables), self._state, self.arrays, self.rules.all_open)

    # -- reading -------------------------------------------------------------------------------

    def legal_masks(self, tables=None) -> np.ndarray:
        """Legal actions of the seat to act at each of ``tables`` (default all), (N, num_actions) int8.

        All zeros at a finished table.
        """
        tables = self._indices(tables)
        out = np.empty((len(tables), self.num_actions), dtype=np.int8)
        arrays = self.arrays
        gather_masks(
            tables,
            self.hands,
            self.rolls_left,
            self.open_bits,
            self.seat,
            arrays.legal_masks,
            arrays.alike_faces,
            arrays.sheet_rules,
            out,
        )
        return out

    def position(self, tables, seats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(hands, rolls_left, open_bits)`` of ``seats`` at ``tables`` (arrays of equal length)."""
        return self.hands[tables, seats], self.rolls_left[tables, seats], self.open_bits[tables, seats]

    def sheet_state(self, tables, seats) -> tuple[np.ndarray, np.ndarray]:
        """``(upper_totals, yahtzee_full)`` of ``seats`` at ``tables``: what a decision depends on beyond the position.

        The upper subtotal (uncapped) and 1 where the Yahtzee box holds its full points (else 0);
        both 0 for rules without an upper bonus or a Yahtzee row.
        """
        tables, seats = np.asarray(tables), np.asarray(seats)
        row = self.rules.yahtzee_row_index
        full = (self.sheets[tables, seats, row] > 0).astype(np.int64) if row >= 0 else np.zeros(tables.shape, dtype=np.int64)
        return self.upper_totals[tables, seats], full

    def bonuses(self, table: int, seat: int) -> tuple[int, int]:
        """``(upper bonus, extra-Yahtzee bonuses)`` one seat has earned so far."""
        rules = self.rules
        upper = rules.bonus_points if rules.bonus_points and self.upper_totals[table, seat] >= rules.bonus_threshold else 0
        written = int(self.sheets[table, seat][self.sheets[table, seat] >= 0].sum())
        return upper, int(self.totals[table, seat]) - written - upper

    def turn(self, tables, seats) -> np.ndarray:
        """The 1-based turn each seat is playing or will play next (the last turn once done)."""
        return np.minimum(self.turns_done[tables, seats] + 1, self.rules.num_turns)

    def sheet(self, table: int, seat: int) -> tuple[int | None, ...]:
        """One seat's column: points written in each row, None where still open."""
        return tuple(None if points < 0 else points for points in self.sheets[table, seat].tolist())

    # -- playing -------------------------------------------------------------------------------

    def play(self, actions, tables=None) -> tuple[np.ndarray, np.ndarray]:
        """Play one action at each of ``tables`` (default all) for the seat to act.

        Returns ``(points, legal)``: what each acting seat's total gained ((N,) int64: the row's
        points and any bonus they earn; 0 for a re-roll)
        and whether each action was legal ((N,) bool); an illegal action changes nothing.
        """
        tables = self._indices(tables)
        actions = np.ascontiguousarray(np.asarray(actions, dtype=np.int64).reshape(-1))
        if actions.shape != tables.shape:
            raise ValueError(f"need one action per table: {len(actions)} actions for {len(tables)} tables")
        bad = (actions < 0) | (actions >= self.num_actions)
        if bad.any():
            raise ValueError(f"action {int(actions[bad][0])} is not in the action space 0..{self.num_actions - 1}")
        points = np.empty(len(tables), dtype=np.int64)
        legal = np.empty(len(tables), dtype=bool)
        self._advance(tables, actions, self._state, self.arrays, points, legal)
        return points, legal

    def _indices(self, tables) -> np.ndarray:
        return self.all_tables if tables is None else np.ascontiguousarray(np.asarray(tables, dtype=np.int64).reshape(-1))
