"""Fixed opponents for a best response: a solitaire policy's decisions, read from its own sheet and dice only.

``optimal`` (the expected-score optimum) and ``greedy`` (this turn's expected score) are argmaxes of
:mod:`agents.solvers.optimal`'s Q-values, ties to the lowest action, as :class:`agents.policies.policy.QPolicy` plays them;
here they are tabulated for every open-row set, hand and roll, in the form the kernel reads
(:class:`agents.two_player.kernel.FixedMover`).
"""

from __future__ import annotations

import numpy as np

from agents.solvers import optimal
from agents.two_player.kernel import FixedMover
from yacht_env.actions import ActionLayout
from yacht_env.rules import RuleSet

OPPONENTS = ("optimal", "greedy")
SETS_PER_BATCH = 256  # open sets whose Q-values are computed at once (~25 MB for Yacht)


def fixed_policy(rules: RuleSet, name: str) -> FixedMover:
    """The decisions of the solitaire policy ``name`` (one of :data:`OPPONENTS`) in every position of a turn."""
    if name not in OPPONENTS:
        raise ValueError(f"unknown opponent {name!r}; expected one of {', '.join(OPPONENTS)} (or None: both play to win)")
    solution = optimal.solve(rules) if name == "optimal" else optimal.solve_myopic(rules)
    dice, layout = rules.dice, ActionLayout(rules)
    num_sets, hands = 1 << rules.num_rows, np.arange(dice.num_hands)
    rows = np.zeros((num_sets, dice.num_hands), dtype=np.int64)
    keeps = np.full((num_sets, rules.rolls_per_turn, dice.num_hands), -1, dtype=np.int64)
    keep_after = dice.keep_after_reroll.astype(np.int64)
    for first in range(1, num_sets, SETS_PER_BATCH):
        sets = np.arange(first, min(num_sets, first + SETS_PER_BATCH))
        set_of, hand_of = np.repeat(sets, len(hands)), np.tile(hands, len(sets))
        for rolls_left in range(rules.rolls_per_turn):
            actions = solution.best_actions_batch(hand_of, rolls_left, set_of).reshape(len(sets), len(hands))
            scores = actions >= layout.first_score_action
            if rolls_left == 0:
                rows[sets] = actions - layout.first_score_action
            else:
                rerolled = np.where(scores, 0, actions)
                keeps[sets, rolls_left] = np.where(scores, -1, keep_after[hands[None, :], rerolled])
    return FixedMover(True, rows, keeps)
