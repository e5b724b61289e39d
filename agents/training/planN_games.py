"""Self-play games of the table planner, and the one-turn backups its shares of the win learn from.

Every seat is the same planner (:mod:`agents.learned.planN`) under the current learned value ``W``. At every turn
start the turn is planned exactly through the dice probabilities (:func:`agents.learned.planN_turn.plan_turn` on the
end vectors ``W`` gives); its value is the backup ``(T W)(x)``: every seat's expected share of the win from ``x`` when
the mover plays this turn best for itself under ``W``. Then the turn is played: the best keep or row under ``W`` or,
with probability ``epsilon`` at each decision, a uniformly random legal one. Nothing here reads an exact solution.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.learned.planN import ShareValue, Tables, TurnEnds, advance
from agents.learned.planN_turn import plan_scratch, plan_turn
from agents.training.plan2_games import choose_keep
from agents.training.plan_games import dice_moves, roll_hand
from yacht_env.table.outcome import win_shares


class SelfPlay(NamedTuple):
    """The turn-start tables of a batch of self-play games, their backups and the games' outcomes."""

    tables: Tables  # (turns * games, n) each: every turn start, seats from the mover
    backups: np.ndarray  # (turns * games, n) (T W) of each of those tables, float64
    first_player_shares: np.ndarray  # (games,) the first player's share of each game


@njit(cache=True)
def _choose_row(out_index, scratch, hand, epsilon):
    """The row to score ``hand`` in: the best for the mover under the turn's end values, or a random legal one."""
    if np.random.random() < epsilon:
        legal = np.flatnonzero(out_index[:, hand] >= 0)
        return legal[np.random.randint(0, legal.shape[0])]
    return scratch.best_row[hand]


@njit(cache=True)
def _play_turns(t, moves, out_index, ends, epsilon, seed, backups_out, chosen_out):
    """One turn of each game: its backup vector into ``backups_out``, then the turn played; the outcome it ended in."""
    np.random.seed(seed)
    scratch = plan_scratch(t, ends.shape[2])
    for i in range(out_index.shape[0]):
        plan_turn(t, out_index[i], ends[i], scratch)
        backups_out[i] = scratch.turn_value
        hand = roll_hand(t, moves, moves.empty_keep)
        for rerolls_left in range(t.rolls - 1, 0, -1):
            keep = choose_keep(t, moves, scratch, hand, rerolls_left, epsilon)
            if keep < 0:
                break
            hand = roll_hand(t, moves, keep)
        chosen_out[i] = out_index[i, _choose_row(out_index[i], scratch, hand, epsilon), hand]


class SelfPlayer:
    """Plays the planner against itself for one rule set (its tables built once)."""

    def __init__(self, rules):
        self.rules = rules
        self.moves = dice_moves(rules)

    def play_games(self, value: ShareValue, num_games: int, num_players: int, epsilon: float, seed: int) -> SelfPlay:
        """``num_games`` games of ``num_players`` planners under ``value``, all turns of all games in lockstep."""
        ends_of = TurnEnds(value)
        tables = Tables.start(self.rules, num_games, num_players)
        turns = num_players * self.rules.num_rows
        seen: list[Tables] = []
        backed: list[np.ndarray] = []
        seeds = np.random.SeedSequence(int(seed)).generate_state(turns)
        games = np.arange(num_games)
        for turn in range(turns):
            out_index, ends, (_, _, rows, gains, uppers, yahtzees) = ends_of(tables)
            backups, chosen = np.empty((num_games, num_players)), np.empty(num_games, dtype=np.int64)
            _play_turns(ends_of.kernel, self.moves, out_index, ends, float(epsilon), int(seeds[turn]), backups, chosen)
            seen.append(tables)
            backed.append(backups)
            parts = (part[games, chosen] for part in (rows, gains, uppers, yahtzees))
            tables = advance(tables, *parts)
        # after every seat's last turn the first player is listed first again
        shares = win_shares(tables.totals)[:, 0]
        visited = Tables(*(np.concatenate([getattr(t, field) for t in seen]) for field in Tables._fields))
        return SelfPlay(visited, np.concatenate(backed), shares)
