"""The solved two-player game: the value of every turn-start state and of every action inside a turn."""

from __future__ import annotations

import numbers

import numpy as np

from agents.solvers.optimal import open_bits_from
from agents.two_player.decide import grouped_action_values
from agents.two_player.kernel import SCALE, FixedMover, kernel_arrays
from agents.two_player.layout import PairLayout
from yacht_env.actions import ActionLayout
from yacht_env.rules import RuleSet


class TwoPlayerSolution:
    """The values of a solved two-player game, as the mover's chance of winning (a tie counts 1/2).

    A turn-start state is ``(mover_open, other_open, lead)``: the open rows of the player to move
    and of the other (bit sets, bit ``c`` for row ``c``, or row names), and the mover's score minus the
    other's. Player one moves when both have as many rows open, player two when it has one more open.
    Values are stored to ``1 / (2 * SCALE)`` (fixed point, see :mod:`agents.two_player.kernel`), and each
    layer is computed from the rounded one under it: a value is within ``layers * 1 / (2 * SCALE)``
    (``1.8e-4`` after Yacht's 24 turns, a bound; the typical error is far smaller) of the exact one.
    """

    def __init__(
        self,
        rules: RuleSet,
        layout: PairLayout,
        layers: list[np.ndarray],
        policies: tuple[FixedMover, FixedMover],
        label: str,
        decides: bool = True,
    ):
        self.rules = rules
        self.decides = decides  # False for a strategy's values against a policy: its actions are the game's
        self.layout = layout
        self.layers = layers
        self.policies = policies
        self.label = label
        self.arrays = kernel_arrays(rules, layout)
        self.actions = ActionLayout(rules)
        self.keep_after_reroll = rules.dice.keep_after_reroll.astype(np.int64)

    def start_value(self) -> float:
        """Player one's chance of winning from the first turn (a tie counts 1/2)."""
        return self.value(self.rules.all_open, self.rules.all_open, 0)

    def value(self, mover_open, other_open, lead: int) -> float:
        """The mover's chance of winning at the start of its turn (``ValueError`` for a state no game reaches)."""
        mover, other, lead = self._check_state(mover_open, other_open, lead)
        num_open = int(self.layout.open_counts[mover] + self.layout.open_counts[other])
        if num_open == 0:
            return 1.0 if lead > 0 else 0.5 if lead == 0 else 0.0
        layer = self.layout.layers[num_open]
        pair = self.layout.pair_index(mover, other)
        index = lead - int(layer.lo[pair])
        if index < 0:
            return 0.0  # behind by more than the mover can still score
        if index >= layer.width[pair]:
            return 1.0  # ahead by more than the other can still score
        return float(self.layers[num_open][layer.offset[pair] + index]) / SCALE

    def action_values(self, mover_open, other_open, lead: int, dice, rolls_left: int) -> np.ndarray:
        """The mover's chance of winning after each action, shape (num_actions,) float64; ``-inf`` where illegal.

        Actions as in :mod:`yacht_env.actions`: re-roll masks over the sorted dice, then a row each. Every
        later decision is the solution's (a best response's opponent keeps to its policy in its turns).
        """
        mover, other, lead = self._check_state(mover_open, other_open, lead)
        if mover == 0:
            raise ValueError("the mover has no open row: the game is over, there is nothing to decide")
        hand = self.rules.hand(dice)
        rolls = self.rules.rolls_per_turn
        if isinstance(rolls_left, bool) or not isinstance(rolls_left, numbers.Integral) or not 0 <= rolls_left < rolls:
            raise ValueError(f"rolls_left must be an integer in 0..{self.rules.rolls_per_turn - 1}, got {rolls_left!r}")
        return self.action_values_batch([mover], [other], [lead], [hand], [rolls_left])[0]

    def action_values_batch(self, movers, others, leads, hands, rolls_left) -> np.ndarray:
        """:meth:`action_values` of many decisions at once (checked states, sorted-hand indices), (N, num_actions)."""
        if not self.decides:
            raise ValueError(f"{self.label} holds a strategy's chances, not decisions: ask the game's solution for actions")
        return grouped_action_values(self, movers, others, leads, hands, rolls_left)

    def best_action(self, mover_open, other_open, lead: int, dice, rolls_left: int) -> int:
        """The action of highest chance of winning (ties: the lowest action index)."""
        return int(np.argmax(self.action_values(mover_open, other_open, lead, dice, rolls_left)))

    def _check_state(self, mover_open, other_open, lead) -> tuple[int, int, int]:
        mover, other = self._open_bits(mover_open, "mover_open"), self._open_bits(other_open, "other_open")
        if isinstance(lead, bool) or not isinstance(lead, numbers.Integral):
            raise ValueError(f"lead must be an integer (the mover's score minus the other's), got {lead!r}")
        lead = int(lead)
        lowest, highest = -int(self.layout.most_scored[other]), int(self.layout.most_scored[mover])
        if not lowest <= lead <= highest:
            raise ValueError(f"lead {lead} is out of range {lowest}..{highest}: the filled rows cannot hold that")
        self.layout.pair_index(mover, other)
        return mover, other, lead

    def _open_bits(self, open_rows, name: str) -> int:
        if isinstance(open_rows, numbers.Integral) and not isinstance(open_rows, bool):
            if not 0 <= int(open_rows) <= self.rules.all_open:
                raise ValueError(f"{name} {open_rows!r} is out of range 0..{self.rules.all_open}")
            return int(open_rows)
        if isinstance(open_rows, (list, tuple, set, frozenset)) and len(open_rows) == 0:
            return 0
        return open_bits_from(open_rows, self.rules)
