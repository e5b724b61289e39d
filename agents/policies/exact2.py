"""``exact2`` and ``br:OPPONENT``: policies that play a solved two-player game, at a table of two.

``exact2`` plays the game's value: at each decision the action of highest chance of winning when both
play to win. ``br:optimal`` (or ``br:greedy``) plays the best response to that solitaire policy: the
most a player can win against it. Both read their solution from the cache folder
(:func:`agents.two_player.load_two_player`) and never solve: a missing solution is refused in one line
naming the command that computes it. Among actions whose chances differ by less than the stored
precision (:data:`TIE_TOLERANCE`), the expected score decides, as for ``win``.
"""

from __future__ import annotations

import numpy as np
from typing_extensions import override

from agents.policies.arguments import refusal
from agents.policies.table_reading import TableReadingPolicy, best_with_fallback
from agents.solvers.optimal import solve
from agents.two_player import load_two_player
from agents.two_player.kernel import SCALE
from agents.two_player.opponents import OPPONENTS
from yacht_env.rules import RuleSet, rule_set

EXACT_NAME = "exact2"
BEST_RESPONSE_PREFIX = "br:"
TIE_TOLERANCE = 0.5 / SCALE  # half a stored step: chances closer than this are not told apart by the solution


def parse_best_response(name: str) -> str:
    """``br:OPPONENT`` -> OPPONENT, or ``ValueError`` naming the bad value and the opponents solved against."""
    opponent = name[len(BEST_RESPONSE_PREFIX) :]
    if opponent not in OPPONENTS:
        raise ValueError(
            refusal(name, f"a best response is solved against {', '.join(OPPONENTS)}, e.g. {BEST_RESPONSE_PREFIX}optimal")
        )
    return opponent


class TwoPlayerPolicy(TableReadingPolicy):
    """Plays a solved two-player game at a table of two: ``exact2`` (``opponent=None``) or ``br:OPPONENT``.

    A best response is solved for each seat; the policy reads its seat from the table (player two has one
    row more open at its turns) and plays that seat's solution.
    """

    def __init__(self, rules: RuleSet | str | None = None, num_players: int = 2, opponent: str | None = None):
        if num_players != 2:
            label = EXACT_NAME if opponent is None else BEST_RESPONSE_PREFIX + str(opponent)
            raise ValueError(f"{label} plays at a table of 2 players (the solved two-player game), got {num_players!r}")
        super().__init__(rule_set(rules), 2)
        self.name = EXACT_NAME if opponent is None else BEST_RESPONSE_PREFIX + opponent
        if opponent is None:
            game = load_two_player(self.rules)
            self.solutions = (game, game)
        else:
            self.solutions = (load_two_player(self.rules, opponent, 0), load_two_player(self.rules, opponent, 1))
        self.expected_scores = solve(self.rules)

    def chances(self, observations) -> np.ndarray:
        """Each action's chance of winning (a tie 1/2) at each table observation, (N, num_actions); ``-inf`` where illegal."""
        hands, rolls_left, open_bits, totals = self.read(observations)
        other_totals = np.asarray(observations["other_totals"], dtype=np.int64).reshape(-1)
        other_flags = np.asarray(observations["other_open_categories"], dtype=np.int64).reshape(len(hands), -1)
        other_open = other_flags @ self._open_weights
        counts = self.solutions[0].layout.open_counts
        second = counts[open_bits] > counts[other_open]  # player two moves with one row more open
        q = np.empty((len(hands), self.solutions[0].actions.num_actions))
        for seat in (0, 1):
            rows = np.flatnonzero(second == bool(seat))
            if rows.size:
                q[rows] = self.solutions[seat].action_values_batch(
                    open_bits[rows], other_open[rows], totals[rows] - other_totals[rows], hands[rows], rolls_left[rows]
                )
        return q

    @override
    def act_batch(self, observations, action_masks):
        hands, rolls_left, open_bits, _ = self.read(observations)
        expected = lambda tied: self.expected_scores.q_values_batch(hands[tied], rolls_left[tied], open_bits[tied])
        return best_with_fallback(self.chances(observations), action_masks, expected, TIE_TOLERANCE)
