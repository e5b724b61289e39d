"""Self-play games of the two-player planner, and the one-turn backups its chance of winning learns from.

Both players are the same planner (:mod:`agents.learned.plan2`) under the current learned value ``W``. At every turn
start the turn is planned exactly through the dice probabilities (the two-player kernel's turn,
:func:`agents.two_player.kernel.turn_from_follow`, on the end values ``W`` gives); its value is the backup
``(T W)(x)``: the mover's chance of winning from ``x`` when this turn is played best under ``W``. Then the
turn is played: the best keep or row under ``W`` or, with probability ``epsilon`` at each decision, a
uniformly random legal one. Nothing here reads an exact solution.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.learned.plan2 import EndValues, WinValue
from agents.training.plan_games import dice_moves, roll_hand
from agents.two_player import maximizing_policy
from agents.two_player.decide import fill_follow
from agents.two_player.kernel import kernel_arrays, new_scratch, turn_from_follow
from agents.two_player.layout import PairLayout


class SelfPlay(NamedTuple):
    """The turn-start states of a batch of self-play games, their backups and the games' outcomes."""

    movers: np.ndarray  # (turns * games,) the mover's open rows at each turn start
    others: np.ndarray
    leads: np.ndarray
    backups: np.ndarray  # (T W) of each of those states, float64
    first_player_shares: np.ndarray  # (games,) player one's share of each game: 1, 1/2 or 0


@njit(cache=True)
def choose_keep(t, moves, scratch, hand, rerolls_left, epsilon):
    """The keep to re-roll from, or -1 to score now: the best for the mover under the turn's values (lane 0 of the
    turn's scratch), or a random action; the planN games choose the same way.
    """
    num_masks = moves.keep_after_reroll.shape[1]
    if np.random.random() < epsilon:
        action = np.random.randint(0, num_masks)  # 0 stands for scoring now
        return moves.keep_after_reroll[hand, action] if action > 0 else -1
    best, keep = scratch.score_now[hand, 0], -1
    for action in range(1, num_masks):
        k = moves.keep_after_reroll[hand, action]
        if scratch.keep_out[rerolls_left, k, 0] > best:
            best, keep = scratch.keep_out[rerolls_left, k, 0], k
    return keep


@njit(cache=True)
def _choose_row(t, scratch, count, hand, epsilon):
    """The open row to score ``hand`` in: the best under the turn's end values, or a random open one."""
    if np.random.random() < epsilon:
        return scratch.rows[np.random.randint(0, count)]
    best, row = -1.0, scratch.rows[0]
    for i in range(count):
        value = scratch.follow[i, t.scores[scratch.rows[i], hand]]
        if value > best:
            best, row = value, scratch.rows[i]
    return row


@njit(cache=True)
def _play_turns(t, moves, policy, end_values, movers, epsilon, seed, backups_out, rows_out, points_out):
    """One turn of each game: its backup into ``backups_out``, then the turn played; the row and points it scored."""
    np.random.seed(seed)
    scratch = new_scratch(t, t.rolls, 1)
    for i in range(movers.shape[0]):
        count = fill_follow(t, end_values[i], movers[i], scratch)
        turn_from_follow(t, policy, movers[i], count, scratch)
        backups_out[i] = scratch.turn_values[0]
        hand = roll_hand(t, moves, moves.empty_keep)
        for rerolls_left in range(t.rolls - 1, 0, -1):
            keep = choose_keep(t, moves, scratch, hand, rerolls_left, epsilon)
            if keep < 0:
                break
            hand = roll_hand(t, moves, keep)
        row = _choose_row(t, scratch, count, hand, epsilon)
        rows_out[i] = row
        points_out[i] = t.scores[row, hand]


class SelfPlayer:
    """Plays the planner against itself for one rule set (its arrays built once)."""

    def __init__(self, rules):
        self.rules = rules
        self.arrays = kernel_arrays(rules, PairLayout(rules))
        self.moves = dice_moves(rules)
        self.policy = maximizing_policy()

    def play_games(self, value: WinValue, num_games: int, epsilon: float, seed: int) -> SelfPlay:
        """``num_games`` games of the planner under ``value`` against itself, all turns of all games in lockstep."""
        end_values = EndValues(value)
        full = self.rules.all_open
        movers = np.full(num_games, full, dtype=np.int64)
        others, leads = movers.copy(), np.zeros(num_games, dtype=np.int64)
        seen: tuple[list[np.ndarray], ...] = ([], [], [], [])
        seeds = np.random.SeedSequence(int(seed)).generate_state(2 * self.rules.num_rows)
        for turn in range(2 * self.rules.num_rows):
            backups, rows, points = np.empty(num_games), np.empty(num_games, dtype=np.int64), np.empty(num_games, dtype=np.int64)
            ends = end_values(movers, others, leads)
            _play_turns(
                self.arrays, self.moves, self.policy, ends, movers, float(epsilon), int(seeds[turn]), backups, rows, points
            )
            for store, part in zip(seen, (movers, others, leads, backups)):
                store.append(part)
            movers, others, leads = others, movers & ~(np.int64(1) << rows), -(leads + points)
        # after both players' last turns player one is to move again: ``leads`` is its lead
        shares = np.where(leads > 0, 1.0, np.where(leads < 0, 0.0, 0.5))
        visited_movers, visited_others, visited_leads, visited_backups = (np.concatenate(store) for store in seen)
        return SelfPlay(visited_movers, visited_others, visited_leads, visited_backups, shares)
