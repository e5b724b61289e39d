"""Self-play games of the planning agent and the one-turn backups its value learns from, compiled.

Both run the turn of :mod:`agents.solvers.sheet_solver` (``solve_turn``: the exact within-turn values of every keep
and row, given the value ``V`` of the sheet at the turn's end), with ``V`` the agent's own, learned
value table: nothing here reads the exact solution.

- :meth:`GamePlayer.play_games` plays whole games with the planner (the best keep or row under ``V``, or, with
  probability ``epsilon`` at each decision, a uniformly random legal one, so that the games visit
  sheets the greedy planner would avoid) and returns the sheet state at the start of every turn and
  each game's final score.
- :meth:`GamePlayer.backups` is the one-turn Bellman backup ``(T V)(x)``: the expected points of the turn from
  sheet ``x`` played best under ``V``, plus ``V`` of the sheet it leaves, computed exactly through the
  dice probabilities. With ``in_place`` the backed-up values are written into ``V`` as they are
  computed (states given fewest open rows first, so that one pass carries values back through a game).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.solvers.sheet_solver import TurnArrays, score_row_values, solve_turn, turn_scratch
from yacht_env.rules import RuleSet, extra_yahtzee_bonus, placement, upper_bonus


class DiceMoves(NamedTuple):
    """What rolling and keeping dice needs beyond the turn's arrays (one argument for the compiled games)."""

    keep_after_reroll: np.ndarray  # (H, 2**dice) int64: the keep left by each re-roll action of each hand
    keep_sizes: np.ndarray  # (K,) int64
    keep_hand: np.ndarray  # (K,) int64: the hand of a full keep, -1 for the others
    alike: np.ndarray  # (H,) bool: every die shows one face
    empty_keep: int  # the keep of no dice (re-roll everything)
    num_dice: int


def dice_moves(rules: RuleSet) -> DiceMoves:
    """The :class:`DiceMoves` of ``rules``."""
    dice = rules.dice
    keep_hand = np.full(dice.num_keeps, -1, dtype=np.int64)
    keep_hand[dice.hand_as_keep] = np.arange(dice.num_hands)
    sizes = dice.keep_sizes.astype(np.int64)
    return DiceMoves(
        dice.keep_after_reroll.astype(np.int64),
        sizes,
        keep_hand,
        rules.alike_hands.astype(np.bool_),
        int(np.flatnonzero(sizes == 0)[0]),
        int(dice.num_dice),
    )


@njit(cache=True)
def roll_hand(t, moves, keep):
    """The hand after rolling the dice ``keep`` leaves out: one uniform die at a time."""
    while moves.keep_sizes[keep] < moves.num_dice:
        keep = t.children[keep, np.random.randint(0, t.children.shape[1])]
    return moves.keep_hand[keep]


@njit(cache=True)
def _choose_keep(t, moves, scratch, hand, rerolls_left, epsilon):
    """The keep to re-roll from, or -1 to score now: the best under the turn's values, or a random action."""
    num_rerolls = moves.keep_after_reroll.shape[1] - 1  # actions 1 .. 2**dice - 1
    if np.random.random() < epsilon:
        action = np.random.randint(0, num_rerolls + 1)  # 0 stands for scoring now
        return moves.keep_after_reroll[hand, action] if action > 0 else -1
    best, keep = scratch.score_now[hand], -1
    for action in range(1, num_rerolls + 1):
        k = moves.keep_after_reroll[hand, action]
        if scratch.keep_out[rerolls_left, k] > best:
            best, keep = scratch.keep_out[rerolls_left, k], k
    return keep


@njit(cache=True)
def _choose_row(row_q, epsilon):
    """The row of highest value in ``row_q`` (``-inf`` where illegal), or a random legal row."""
    if np.random.random() < epsilon:
        legal = np.flatnonzero(row_q > -np.inf)
        return legal[np.random.randint(0, legal.shape[0])]
    return np.argmax(row_q)


@njit(cache=True)
def _score(t, moves, state_parts, hand, row):
    """``(points with bonuses, next open bits, next upper subtotal, next Yahtzee state)`` of scoring ``hand`` in ``row``."""
    open_bits, upper, yahtzee = state_parts
    alike = moves.alike[hand]
    _, joker = placement(open_bits, alike, t.face_rows[hand], t.yahtzee_row, t.lower_bits, t.joker_mode)
    points = t.joker_scores[hand, row] if joker else t.scores_by_row[row, hand]
    gain = points + extra_yahtzee_bonus(alike, yahtzee == 1, t.yahtzee_bonus)
    if (t.upper_bits >> row) & 1:
        gain += upper_bonus(upper, int(points), t.upper_cap, t.bonus_points)
        upper = min(upper + int(points), t.upper_cap)
    if row == t.yahtzee_row and t.num_yahtzee == 2:
        yahtzee = 1 if points > 0 else 0
    return gain, open_bits & ~(1 << row), upper, yahtzee


@njit(cache=True)
def _play(t, moves, values, num_games, epsilon, seed, states_out, scores_out):
    """Plays ``num_games`` games into ``states_out`` (games, rows: flat turn-start states) and ``scores_out``."""
    np.random.seed(seed)
    scratch = turn_scratch(t, t.rolls)
    row_q = np.empty(t.num_rows)
    for game in range(num_games):
        open_bits, upper, yahtzee = (1 << t.num_rows) - 1, 0, 0
        total = 0.0
        for turn in range(t.num_rows):
            state = (open_bits * t.num_upper + upper) * t.num_yahtzee + yahtzee
            states_out[game, turn] = state
            solve_turn(t, values, True, state, scratch)
            hand = roll_hand(t, moves, moves.empty_keep)
            for rerolls_left in range(t.rolls - 1, 0, -1):
                keep = _choose_keep(t, moves, scratch, hand, rerolls_left, epsilon)
                if keep < 0:
                    break
                hand = roll_hand(t, moves, keep)
            score_row_values(t, open_bits, yahtzee, scratch.after, hand, moves.alike[hand], row_q)
            row = _choose_row(row_q, epsilon)
            gain, open_bits, upper, yahtzee = _score(t, moves, (open_bits, upper, yahtzee), hand, row)
            total += gain
        scores_out[game] = total


@njit(cache=True)
def _backups(t, values, states, in_place, out):
    """``out[i] = (T V)(states[i])``; written into ``values`` as it goes when ``in_place``."""
    scratch = turn_scratch(t, 0)
    for i in range(states.shape[0]):
        out[i] = solve_turn(t, values, True, states[i], scratch)
        if in_place:
            values[states[i]] = out[i]


class GamePlayer:
    """Plays the planner's games and backs up values for one rule set (its arrays built once)."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.arrays = TurnArrays(rules)
        self.moves = dice_moves(rules)
        self.shape = (1 << rules.num_rows, self.arrays.num_upper, self.arrays.num_yahtzee)

    def play_games(self, values: np.ndarray, num_games: int, epsilon: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """``(states, scores)``: the flat turn-start states (num_games, rows) int64 and final scores (num_games,)."""
        states = np.empty((num_games, self.rules.num_rows), dtype=np.int64)
        scores = np.empty(num_games)
        flat = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
        _play(self.arrays.kernel, self.moves, flat, num_games, float(epsilon), int(seed) % 2**32, states, scores)
        return states, scores

    def backups(self, values: np.ndarray, states: np.ndarray, in_place: bool = False) -> np.ndarray:
        """``(T V)`` of each flat state of ``states``; with ``in_place``, ``values`` (float64, C-contiguous) is updated too."""
        out = np.empty(len(states))
        flat = values.reshape(-1)
        if in_place and not np.shares_memory(flat, values):
            raise ValueError("in-place backups need a C-contiguous values array")
        _backups(self.arrays.kernel, flat, np.ascontiguousarray(states, dtype=np.int64), in_place, out)
        return out

    def open_counts(self, states: np.ndarray) -> np.ndarray:
        """How many rows are open in each flat state."""
        open_bits = np.asarray(states) // (self.shape[1] * self.shape[2])
        return np.array([bin(int(bits)).count("1") for bits in open_bits], dtype=np.int64)
