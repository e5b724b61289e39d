"""The flat action layout shared by every Yacht env, and which actions are legal when.

Actions ``1 .. 2**num_dice - 1`` re-roll the dice whose bit is set (bit ``i`` <-> die ``i`` of the
sorted dice); action 0 (re-roll nothing) is never legal. Action ``2**num_dice + c`` scores the
dice in category ``c``. For the default rules that is ``Discrete(44)``: 1..31 re-roll, 32..43 score.
"""

from __future__ import annotations

import numpy as np

from yacht_env.rules import RuleSet, cached_per_rules


class IllegalActionError(ValueError):
    """An action inside the action space that the rules do not allow now."""


class ActionLayout:
    """Where each action sits in the flat ``Discrete(num_actions)`` space of a rule set: the one
    place the action count comes from.
    """

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.first_score_action = rules.dice.num_rerolls
        self.num_actions = self.first_score_action + rules.num_rows

    def is_reroll(self, action: int) -> bool:
        """Whether ``action`` re-rolls dice (else it scores a row)."""
        return action < self.first_score_action

    def category(self, action: int) -> int:
        """The row a scoring action scores."""
        return action - self.first_score_action

    def score_action(self, category: int) -> int:
        """The action that scores row ``category``."""
        return self.first_score_action + category

    @property
    def legal_masks(self) -> np.ndarray:
        """Legal-action masks, int8, indexed ``[rolls_left > 0, open_bits]``; shape (2, 2**C, num_actions)."""
        return legal_masks(self.rules)

    def legal_mask(self, rolls_left: int, open_bits: int, hand: int | None = None) -> np.ndarray:
        """The legal actions of a position, int8 of shape (num_actions,).

        Under the forced joker rule the rows a Yahtzee may go in depend on the dice: give ``hand``
        (its index) there; the mask is then a fresh array.
        """
        mask = self.legal_masks[int(rolls_left > 0), open_bits]
        if self.rules.joker == "forced" and hand is not None and open_bits:
            rows, _ = self.rules.scoring_options(hand, open_bits)
            mask = mask.copy()
            mask[self.first_score_action :] = (rows >> np.arange(self.rules.num_rows)) & 1
        return mask

    def why_illegal(self, action: int, rolls_left: int, open_bits: int, hand: int | None = None) -> str | None:
        """A sentence saying why ``action`` is illegal now, or None when it is legal (``hand`` as for :meth:`legal_mask`)."""
        if action == 0:
            return "action 0 re-rolls no dice, which is never allowed; keep all dice by scoring instead"
        if self.is_reroll(action):
            if rolls_left == 0:
                return f"action {action} re-rolls dice, but no rolls are left this turn; score a category"
            return None
        category = self.category(action)
        if not open_bits >> category & 1:
            return f"action {action} scores {self.rules.category_names[category]!r}, which is already filled"
        if self.rules.joker == "forced" and hand is not None:
            rows, _ = self.rules.scoring_options(hand, open_bits)
            if not rows >> category & 1:
                allowed = ", ".join(self.rules.category_names[c] for c in range(self.rules.num_rows) if rows >> c & 1)
                return (
                    f"action {action} scores {self.rules.category_names[category]!r}, but the forced joker rule sends this "
                    f"Yahtzee to {allowed}"
                )
        return None

    def describe(self, action: int, dice=None) -> str:
        """Human-readable action, e.g. ``re-roll positions 1,3 (dice 2, 5)`` or ``score full_house``."""
        if self.is_reroll(action):
            positions = self.rules.dice.reroll_positions[action]
            text = "re-roll positions " + ",".join(str(p + 1) for p in positions)
            if dice is not None:
                text += " (dice " + ", ".join(str(int(dice[p])) for p in positions) + ")"
            return text
        return f"score {self.rules.category_names[self.category(action)]}"


@cached_per_rules
def legal_masks(rules: RuleSet) -> np.ndarray:
    """Read-only legal-action masks for every (rolls left > 0, open set); see ``ActionLayout.legal_masks``."""
    layout = ActionLayout(rules)
    first_score_action = layout.first_score_action
    num_open_sets = 1 << rules.num_rows
    table = np.zeros((2, num_open_sets, layout.num_actions), dtype=np.int8)
    table[1, :, 1:first_score_action] = 1
    table[:, :, first_score_action:] = (np.arange(num_open_sets)[:, None] >> np.arange(rules.num_rows)) & 1
    table.setflags(write=False)
    return table
