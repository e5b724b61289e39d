"""Decisions at a two-player table graded in chances of winning, against the solved game.

A decision's loss is the exact drop in the mover's chance of winning (a tie counts 1/2) from the best
action to the one taken, when both play to win from there on (:func:`agents.two_player.load_two_player`):
0 for a best action, never negative. It is the two-player counterpart of the solitaire regret in points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.solvers.optimal import open_bits_from
from agents.two_player import SolutionNotComputed, load_two_player
from yacht_env.rules import RuleSet

__all__ = ["TwoPlayerGrader", "TwoPlayerGrades", "SolutionNotComputed", "two_player_grader"]


@dataclass
class TwoPlayerGrades:
    """Decisions graded in chances of winning, aligned with the decisions graded (chances in [0, 1])."""

    chances: np.ndarray  # (N, num_actions) each action's chance of winning for the mover, -inf where illegal
    chosen: np.ndarray  # (N,) the chance of winning of the action taken
    best_action: np.ndarray  # (N,) the action of highest chance (lowest index on ties)
    loss: np.ndarray  # (N,) best chance - chosen chance, >= 0


class TwoPlayerGrader:
    """The losses of decisions at two-player tables of ``rules``, from the solved game (read, never solved here)."""

    def __init__(self, rules: RuleSet | str | None = "yacht"):
        self.solution = load_two_player(rules)
        self.rules = self.solution.rules

    def chances(self, mover_open, other_open, leads, hands, rolls_left) -> np.ndarray:
        """Each action's chance of winning for the mover, (N, num_actions); ``-inf`` where illegal."""
        return self.solution.action_values_batch(mover_open, other_open, leads, hands, rolls_left)

    def losses(self, mover_open, other_open, leads, hands, rolls_left, actions) -> np.ndarray:
        """The drop in the chance of winning of each action taken, (N,) float64 in [0, 1]."""
        q = self.chances(mover_open, other_open, leads, hands, rolls_left)
        taken = q[np.arange(len(q)), np.asarray(actions, dtype=np.int64)]
        if not np.isfinite(taken).all():
            raise ValueError(f"action {int(np.asarray(actions)[~np.isfinite(taken)][0])} is not legal there")
        return np.maximum(q.max(axis=1) - taken, 0.0)

    def grade(self, chances: np.ndarray, actions) -> TwoPlayerGrades:
        """The grades of ``actions`` taken where the actions' chances are ``chances`` (as :meth:`chances` gives them)."""
        chances = np.asarray(chances, dtype=np.float64).reshape(-1, self.solution.actions.num_actions)
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        taken = chances[np.arange(len(chances)), actions]
        if not np.isfinite(taken).all():
            raise ValueError(f"action {int(actions[~np.isfinite(taken)][0])} is not legal there")
        best = chances.argmax(axis=1) if len(chances) else np.zeros(0, dtype=np.int64)
        return TwoPlayerGrades(chances, taken, best, np.maximum(chances.max(axis=1, initial=0.0) - taken, 0.0))

    def grade_decisions(self, decisions: list[dict]) -> TwoPlayerGrades:
        """Decision records of two-player table games (``yacht_play.records``), in the order played, graded.

        The other player's open rows and total at each decision are rebuilt from its own decisions before it
        in the same game (``game_id``, ``seat``, ``open``, ``points``, ``total``), so every decision of both
        seats must be there from the start of each game; ``ValueError`` naming the first that is not.
        """
        states: dict[tuple, tuple[int, int]] = {}  # (game, seat) -> (open rows, total) before its next decision
        rules, all_open = self.rules, self.rules.all_open
        first_row = self.solution.actions.first_score_action
        rows = np.zeros((len(decisions), 5), dtype=np.int64)  # mover, other, lead, hand, rolls left
        actions = np.zeros(len(decisions), dtype=np.int64)
        for i, d in enumerate(decisions):
            game, seat = d["game_id"], d["seat"]
            if seat not in (0, 1):
                raise ValueError(f"game {game}: seat {seat!r} at a table of two (seats 0 and 1)")
            mover, total = states.get((game, seat), (all_open, 0))
            other, other_total = states.get((game, 1 - seat), (all_open, 0))
            recorded = open_bits_from(d["open"], rules)
            if recorded != mover or d["total"] - (d["points"] or 0) != total:
                raise ValueError(
                    f"game {game}, seat {seat}: turn {d['turn']} comes without the decisions before it, "
                    "so the other player's sheet at that decision is unknown"
                )
            rows[i] = (mover, other, total - other_total, rules.hand(d["dice"]), d["rolls_left"])
            actions[i] = d["action"]
            if d["points"] is not None:
                states[(game, seat)] = (mover & ~(1 << (int(d["action"]) - first_row)), int(d["total"]))
            else:
                states[(game, seat)] = (mover, total)
        chances = self.chances(*rows.T) if len(rows) else np.zeros((0, self.solution.actions.num_actions))
        return self.grade(chances, actions)

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
