"""The base of policies that read table observations, and the argmax with an expected-score tie-break.

:class:`TableReadingPolicy` decodes ``dict`` table observations (own position, totals, open rows): ``win``,
``target:T``, ``plan2:`` and ``exact2`` build on it.
"""

from __future__ import annotations

import numpy as np

from agents.policies.policy import Policy
from yacht_env.rules import RuleSet
from yacht_env.table.encoding import make_table_encoding

TIE_TOLERANCE = 1e-12  # win probabilities this close count as equal; the expected score decides


def best_with_fallback(q: np.ndarray, masks: np.ndarray, fallback, tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    """Argmax of ``q`` over legal actions; among actions within ``tolerance`` of the best, that of highest
    ``fallback(decisions)`` (a function giving the (len(decisions), num_actions) tie-break values of those decisions).
    """
    legal = np.asarray(masks) != 0
    q = np.where(legal, q, -np.inf)
    near_best = legal & (q >= q.max(axis=1, keepdims=True) - tolerance)
    actions = near_best.argmax(axis=1).astype(np.int64)
    tied = np.flatnonzero(near_best.sum(axis=1) > 1)
    if tied.size:
        actions[tied] = np.where(near_best[tied], fallback(tied), -np.inf).argmax(axis=1)
    return actions


class TableReadingPolicy(Policy):
    """A policy fed ``dict`` table observations of ``num_players`` (own position, totals, open rows)."""

    def __init__(self, rules: RuleSet | None, num_players: int):
        super().__init__(rules, "dict")
        self.num_players = num_players
        self.table_encoding = make_table_encoding("dict", num_players, self.rules)
        self._open_weights = 1 << np.arange(self.rules.num_rows, dtype=np.int64)

    def read(self, observations):
        """The hands, rolls left, open categories and totals read from table observations."""
        hands, rolls_left, open_bits = self.table_encoding.decode_batch(observations)
        totals = np.asarray(observations["total"], dtype=np.int64).reshape(-1)
        return hands, rolls_left, open_bits, totals
