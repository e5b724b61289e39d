"""Decisions at a two-player table graded in chances of winning, against the solved game.

A decision's loss is the exact drop in the mover's chance of winning (a tie counts 1/2) from the best
action to the one taken, when both play to win from there on (:func:`agents.two_player.load_two_player`):
0 for a best action, never negative. It is the two-player counterpart of the solitaire regret in points.
"""

from __future__ import annotations

import numpy as np

from agents.two_player import SolutionNotComputed, load_two_player
from yacht_env.rules import RuleSet

__all__ = ["TwoPlayerGrader", "SolutionNotComputed", "two_player_grader"]


class TwoPlayerGrader:
    """The losses of decisions at two-player tables of ``rules``, from the solved game (read, never solved here)."""

    def __init__(self, rules: RuleSet | str | None = "yacht"):
        self.solution = load_two_player(rules)
        self.rules = self.solution.rules

    def chances(self, mover_open, other_open, differences, hands, rolls_left) -> np.ndarray:
        """Each action's chance of winning for the mover, (N, num_actions); ``-inf`` where illegal."""
        return self.solution.action_values_batch(mover_open, other_open, differences, hands, rolls_left)

    def losses(self, mover_open, other_open, differences, hands, rolls_left, actions) -> np.ndarray:
        """The drop in the chance of winning of each action taken, (N,) float64 in [0, 1]."""
        q = self.chances(mover_open, other_open, differences, hands, rolls_left)
        taken = q[np.arange(len(q)), np.asarray(actions, dtype=np.int64)]
        if not np.isfinite(taken).all():
            raise ValueError(f"action {int(np.asarray(actions)[~np.isfinite(taken)][0])} is not legal there")
        return np.maximum(q.max(axis=1) - taken, 0.0)

    def table_losses(self, tables, rows, actions) -> np.ndarray:
        """:meth:`losses` of the seats to act at ``rows`` of a two-player :class:`yacht_env.game.GameBatch`."""
        rows = np.asarray(rows, dtype=np.int64)
        seat = tables.seat[rows]
        other = 1 - seat
        return self.losses(
            tables.open_bits[rows, seat],
            tables.open_bits[rows, other],
            tables.totals[rows, seat] - tables.totals[rows, other],
            tables.hands[rows, seat],
            tables.rolls_left[rows, seat],
            actions,
        )


def two_player_grader(rules: RuleSet | str | None, num_players: int) -> TwoPlayerGrader | str:
    """The grader of a table of ``num_players`` under ``rules``, or one line saying why its decisions are not graded."""
    from agents.two_player import check_rules

    if num_players != 2:
        return f"decisions are graded in chances of winning at tables of 2 only (the solved game); this table has {num_players}"
    try:
        check_rules(rules)
        return TwoPlayerGrader(rules)
    except SolutionNotComputed as missing:
        return f"decisions not graded in chances of winning: {missing}"
    except ValueError as error:
        return f"decisions not graded in chances of winning: {error}"
