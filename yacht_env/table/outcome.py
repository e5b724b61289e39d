"""Yacht at a table of players: who wins, what a table looks like, and the table arguments.

The game itself (many tables of any number of seats, one transition) is
:mod:`yacht_env.game`; this module adds what only several players need: win shares and
zero-sum rewards, validated table dice and reward modes, and the text view of a table. The
PettingZoo env, ``YachtTable-v0`` and the tournaments all use it.
"""

from __future__ import annotations

import numpy as np

from yacht_env.game import MAX_PLAYERS, GameBatch, check_game_dice, check_num_players, draw_table_dice
from yacht_env.render import render_position
from yacht_env.rules import RuleSet

__all__ = [
    "MAX_PLAYERS",
    "REWARD_MODES",
    "GameBatch",
    "check_num_players",
    "check_reward_mode",
    "check_table_dice",
    "draw_table_dice",
    "render_table",
    "unique_names",
    "win_rewards",
    "win_shares",
]

REWARD_MODES = ("win", "score")


def check_reward_mode(reward_mode) -> str:
    """``reward_mode`` if it is one of :data:`REWARD_MODES`, else ``ValueError`` naming it."""
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"reward_mode {reward_mode!r} is not supported; expected 'win' or 'score'")
    return reward_mode


def check_table_dice(faces, rules: RuleSet, num_players: int) -> np.ndarray:
    """Caller-given dice of every seat as int8, or ``ValueError`` naming what is wrong with them."""
    array = np.asarray(faces)
    shape = (num_players, rules.num_turns, rules.rolls_per_turn, rules.num_dice)
    if array.shape != shape:
        raise ValueError(f"faces must be an integer array of shape {shape} (one dice stream per seat), got shape {array.shape}")
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


def render_table(tables: GameBatch, table: int, names) -> str:
    """Text of one table: the position of the player to act (dice, rolls left, their sheet and
    what the dice would score now), then every player's total and open rows; after the game,
    every sheet and the winners.
    """
    rules = tables.rules
    seats = range(tables.num_players)

    def sheet(seat):
        return list(tables.sheet(table, seat))

    if tables.over[table]:
        totals = tables.totals[table]
        parts = [render_position(rules, None, 0, sheet(s), rules.num_turns, title=names[s], total=int(totals[s])) for s in seats]
        shares = win_shares(tables.totals[table])
        winners = [names[seat] for seat in seats if shares[seat] > 0]
        verb = "wins" if len(winners) == 1 else "share the win"
        parts.append(f"{' and '.join(winners)} {verb} with {int(tables.totals[table].max())}")
        return "\n\n".join(parts)
    seat = int(tables.seat[table])
    dice = rules.dice.hands[tables.hands[table, seat]]
    turn = int(tables.turn([table], [seat])[0])
    lines = [
        render_position(
            rules,
            dice,
            int(tables.rolls_left[table, seat]),
            sheet(seat),
            turn,
            title=f"{names[seat]} to play",
            total=int(tables.totals[table, seat]),
        )
    ]
    players = []
    for s in seats:
        open_rows = bin(int(tables.open_bits[table, s])).count("1")
        players.append(f"{'>' if s == seat else ' '}{names[s]} {int(tables.totals[table, s])} ({open_rows} open)")
    lines.append("Table  " + "   ".join(players))
    return "\n".join(lines)


def unique_names(names: list[str]) -> list[str]:
    """Names made unique for display: a policy seated twice becomes ``optimal`` and ``optimal (2)``."""
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return unique
