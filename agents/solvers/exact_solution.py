"""What every exact solution of a rule set shares: its facts about the game, its checked positions, its best actions.

:class:`agents.solvers.optimal.Solution` (rule sets whose rows score on their own) and
:class:`agents.solvers.sheet_solver.SheetSolution` (rule sets with bonuses or jokers) both derive from
:class:`ExactSolution`; :func:`agents.solvers.optimal.solve` returns one or the other.
"""

from __future__ import annotations

import numpy as np

from agents.solvers.array_checks import check_range, hand_indices, integer_array
from yacht_env.actions import ActionLayout
from yacht_env.rules import RuleSet


class ExactSolution:
    """The values of the optimal (or, with ``plan_ahead`` False, the myopic) player of one rule set.

    ``state_values[S, ...]`` holds ``V``, the expected points still to come at the start of a turn with
    open rows ``S`` (and, for :class:`~agents.solvers.sheet_solver.SheetSolution`, the rest of the sheet's
    state). Subclasses give :meth:`q_values_batch`: the Q of every action in the layout of
    :mod:`yacht_env.actions`, ``-inf`` where illegal. The object keeps no reference to its
    ``RuleSet``, so the per-rules cache of :mod:`agents.solvers.optimal` can let go of both.
    """

    def __init__(self, rules: RuleSet, state_values: np.ndarray, plan_ahead: bool = True):
        dice = self.dice = rules.dice
        layout = ActionLayout(rules)
        self.state_values = state_values
        self.plan_ahead = plan_ahead
        self.num_rows = rules.num_rows
        self.rolls_per_turn = rules.rolls_per_turn
        self.num_dice = dice.num_dice
        self.num_faces = dice.num_faces
        self.first_score_action = layout.first_score_action
        self.num_actions = layout.num_actions
        self._keep_after_reroll = dice.keep_after_reroll.astype(np.int64)

    @property
    def expected_score(self) -> float:
        """``V`` of the empty sheet (every row open, nothing else written): the expected final score, bonuses included."""
        return float(self.state_values[(-1,) + (0,) * (self.state_values.ndim - 1)])

    def q_values_batch(self, hands, rolls_left, open_bits) -> np.ndarray:
        """Q of every action for each position, shape (N, num_actions) float64; -inf if illegal."""
        raise NotImplementedError

    def best_actions_batch(self, hands, rolls_left, open_bits) -> np.ndarray:
        """The optimal action of each position, shape (N,) int64.

        Exact ties (e.g. two re-roll masks that leave the same keep) go to the lowest action index.
        """
        return best_actions(self.q_values_batch(hands, rolls_left, open_bits))

    def _check_positions(self, hands, rolls_left, open_bits, *sheet_state):
        """Hand indices and int64 arrays of the other parts, broadcast to one shape; ``ValueError`` naming a bad one.

        ``rolls_left`` and ``open_bits`` (nonzero) are checked against the rules; ``sheet_state``, the
        ``upper_totals`` and ``yahtzee_full`` of a rule set with a sheet state, only for being integers.
        """
        parts = [hand_indices(hands, self.dice), integer_array(rolls_left, "rolls_left"), integer_array(open_bits, "open_bits")]
        parts += [integer_array(values, name) for values, name in zip(sheet_state, ("upper_totals", "yahtzee_full"))]
        arrays = np.broadcast_arrays(*parts)
        check_range(arrays[1], 0, self.rolls_per_turn - 1, "rolls_left")
        check_range(arrays[2], 1, (1 << self.num_rows) - 1, "open_bits")
        return arrays


def best_actions(q: np.ndarray) -> np.ndarray:
    """The action of highest Q in each row of ``q``, shape (N,) int64; ties go to the lowest action index."""
    return np.argmax(q, axis=1).astype(np.int64)
