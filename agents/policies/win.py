"""Playing to win: the ``win`` policy for tables of 2 to 5, and ``target:T`` for a score target.

``win``. At each decision the share of the win of each action is read from the arrays of
:mod:`agents.solvers.win_chances` (which state the recurrence): the opponents, who sit at the start of a turn,
are taken to play the expected-score optimum, and every later turn of the policy's own is played as that
optimum too, so this is a rollout of the optimal policy: against opponents who play the optimum it wins at
least as often as the optimum does. On its last turn it maximizes the exact probability of winning. Among
actions of equal win probability it takes the one of highest expected score.

``target:T``. Maximizes P(final score >= T) with the exact table of :mod:`agents.solvers.target`; it
needs its points so far, so it reads table observations (its own total), also in solitaire.
"""

from __future__ import annotations

import numpy as np
from typing_extensions import override

from agents.policies.table_reading import TableReadingPolicy, best_with_fallback
from agents.solvers.optimal import solve
from agents.solvers.target import max_total, solve_target
from agents.solvers.win_chances import DECISIONS_PER_CHUNK, win_chances
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import YACHT, RuleSet


class WinPolicy(TableReadingPolicy):
    """Maximizes the share of the win at a table of 2 to 5 (see the module doc)."""

    name = "win"

    def __init__(self, rules: RuleSet | None = None, num_players: int = 2):
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) or not 2 <= num_players <= MAX_PLAYERS:
            raise ValueError(f"the win policy plays at tables of 2 to {MAX_PLAYERS} players, got {num_players!r}")
        super().__init__(rules, int(num_players))
        self.arrays = win_chances(self.rules)

    @override
    def act_batch(self, observations, action_masks):
        hands, rolls_left, open_bits, totals = self.read(observations)
        other_totals = np.asarray(observations["other_totals"], dtype=np.int64).reshape(len(hands), -1)
        other_open = np.asarray(observations["other_open_categories"], dtype=np.int64) @ self._open_weights
        masks = np.asarray(action_masks)
        actions = np.empty(len(hands), dtype=np.int64)
        for start in range(0, len(hands), DECISIONS_PER_CHUNK):
            chunk = slice(start, start + DECISIONS_PER_CHUNK)
            q = self.arrays.q_values(
                hands[chunk],
                rolls_left[chunk],
                open_bits[chunk],
                totals[chunk],
                other_totals[chunk],
                other_open[chunk],
            )
            positions = (hands[chunk], rolls_left[chunk], open_bits[chunk])
            expected = lambda tied, positions=positions: self.arrays.solution.q_values_batch(*(part[tied] for part in positions))
            actions[chunk] = best_with_fallback(q, masks[chunk], expected)
        return actions


class TargetPolicy(TableReadingPolicy):
    """Maximizes P(final score >= ``target``); the expected score decides between equal chances."""

    def __init__(self, target: int, rules: RuleSet | None = None, num_players: int = 1):
        super().__init__(rules, num_players)
        top = max_total(self.rules)
        if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or not 0 <= target <= top:
            raise ValueError(f"a target must be a whole score in 0..{top}, got {target!r}")
        self.target = int(target)
        self.name = f"target:{self.target}"
        self.solution = solve_target(self.rules)
        self.optimal = solve(self.rules)

    @override
    def act_batch(self, observations, action_masks):
        hands, rolls_left, open_bits, totals = self.read(observations)
        q = self.solution.q_values_batch(hands, rolls_left, open_bits, self.target - totals)
        expected = lambda tied: self.optimal.q_values_batch(hands[tied], rolls_left[tied], open_bits[tied])
        return best_with_fallback(q, action_masks, expected)


def parse_target(name: str, rules: RuleSet | None = None) -> int:
    """``target:T`` -> T, or ``ValueError`` naming the bad value and the allowed range."""
    text = name[len("target:") :]
    top = max_total(rules or YACHT)
    if not text.isdigit() or not 0 <= int(text) <= top:
        raise ValueError(f"policy {name!r}: the target must be a whole score in 0..{top}, e.g. target:200")
    return int(text)
