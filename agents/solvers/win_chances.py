"""The chance of winning against players of the expected-score optimum: the arrays the ``win`` policy reads.

At each decision the opponents sit at the start of a turn (or have finished), so what
the table shows of them (total and open rows) fixes the distribution of each one's final score
if they play the expected-score optimum: their total plus the exact points-to-come
distribution of :mod:`agents.solvers.distribution`. Opponents' dice are their own, so their finals are
independent of each other and of us, and our share of the win with a final total ``z`` is

    ``g(z) = E[1 / (1 + #opponents on z) ; no opponent above z]
           = integral_0^1 prod_j (P(Y_j < z) + P(Y_j = z) u) du``

(a first place shared by ``k`` counts ``1/k``). The ``win`` policy chooses, within the turn, the
actions that maximize ``E[g(final total)]`` when every later turn of its own is played as the
expected-score optimum: the end of the turn (``p`` points in row ``c``) is worth
``sum_s D[S - c, s] g(x + p + s)``, and :func:`agents.solvers.target.turn_q_values` maximizes over the
rest of the turn. This is a rollout of the optimal policy: against opponents who play the
optimum it wins at least as often as the optimum does. On its last turn (every opponent
finished or not) it maximizes the exact probability of winning. Among actions of equal win
probability it takes the one of highest expected score.

The policy itself is :class:`agents.policies.win.WinPolicy`.
"""

from __future__ import annotations

import weakref

import numpy as np
from numba import njit

from agents.solvers.array_checks import check_rolls_left
from agents.solvers.distribution import score_distributions
from agents.solvers.optimal import solve
from agents.solvers.target import check_rows_score_alone, max_points_left, max_total, turn_q_values
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import YACHT, RuleSet

END_VALUES_KEPT = 20_000  # turns whose end values are kept for the turn's later decisions (~100 MB)


DECISIONS_PER_CHUNK = 512  # bounds the (decisions, points, scores) work array to ~60 MB


def win_share_curve(final_pmfs: np.ndarray) -> np.ndarray:
    """``g(z)`` of the module doc for z = 0 .. width - 1; ``final_pmfs`` is (N, opponents, width)."""
    cdf_below = np.cumsum(final_pmfs, axis=2) - final_pmfs  # P(Y_j < z)
    poly: np.ndarray = np.ones(final_pmfs.shape[:1] + final_pmfs.shape[2:] + (1,))
    for j in range(final_pmfs.shape[1]):
        a, b = cdf_below[:, j, :, None], final_pmfs[:, j, :, None]
        grown: np.ndarray = np.zeros(poly.shape[:2] + (poly.shape[2] + 1,))
        grown[..., :-1] += a * poly
        grown[..., 1:] += b * poly
        poly = grown
    return poly @ (1.0 / np.arange(1, poly.shape[2] + 1))


def shifted(to_come: np.ndarray, totals: np.ndarray, width: int) -> np.ndarray:
    """Rows of points-to-come pmfs moved up by ``totals``: final-score pmfs, same shape."""
    index = np.arange(width) - np.asarray(totals)[..., None]
    return np.where(
        index >= 0,
        np.take_along_axis(to_come, np.clip(index, 0, width - 1), axis=-1),
        0.0,
    )


@njit(cache=True)
def _end_values(
    values,
    open_bits,
    totals,
    curves,
    to_come,
    points_left,
    row_scores,
    row_score_counts,
):
    """``values[i, c, p] = sum_s to_come[S_i - c, s] * curves[i, totals[i] + p + s]`` for the scores ``p`` of open rows."""
    for i in range(len(open_bits)):
        S = open_bits[i]
        for c in range(values.shape[1]):
            if not (S >> c) & 1:
                continue
            child = S & ~(1 << c)
            width = points_left[child] + 1
            for j in range(row_score_counts[c]):
                p = row_scores[c, j]
                offset = totals[i] + p
                total = 0.0
                for t in range(width):
                    total += to_come[child, t] * curves[i, offset + t]
                values[i, c, p] = total


class WinChances:
    """What the ``win`` decisions read for one rule set: the optimum and its exact distributions."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.solution = solve(rules)
        self.distributions = score_distributions(rules)
        self.width = max_total(rules) + 1
        self.max_row = int(rules.hand_scores.max())
        self.points_left = max_points_left(rules)
        self._kept: dict[bytes, np.ndarray] = {}
        self._end_shape = (rules.num_rows, self.max_row + 1)
        possible = [np.unique(column) for column in rules.hand_scores.T.astype(np.int64)]
        self.row_score_counts = np.array([len(p) for p in possible], dtype=np.int64)
        self.row_scores = np.zeros((rules.num_rows, self.row_score_counts.max()), dtype=np.int64)
        for c, p in enumerate(possible):
            self.row_scores[c, : len(p)] = p

    def opponent_curves(self, other_totals: np.ndarray, other_open_bits: np.ndarray) -> np.ndarray:
        """``g`` for N decisions from the opponents' totals and open sets, (N, width)."""
        to_come = self.distributions.to_come[other_open_bits]  # (N, opponents, width)
        return win_share_curve(shifted(to_come, other_totals, self.width))

    def end_values(self, open_bits: np.ndarray, totals: np.ndarray, curves: np.ndarray) -> np.ndarray:
        """Win share of ending the turn with ``p`` points in row ``c``, then playing the optimum: (N, C, P+1).

        Only the scores row ``c`` can take are filled (the others are never read).
        """
        n = len(open_bits)
        values = np.zeros((n, self.rules.num_rows, self.max_row + 1))
        # g beyond the top total is never reached from a total the filled rows can hold; the kernel reads up to
        # total + row score + points left (numba checks no bounds), so pad for any total up to the top one
        padded = np.concatenate((curves, np.ones((n, self.width + self.max_row))), axis=1)
        _end_values(
            values,
            np.asarray(open_bits, dtype=np.int64),
            np.asarray(totals, dtype=np.int64),
            padded,
            self.distributions.to_come,
            self.points_left,
            self.row_scores,
            self.row_score_counts,
        )
        return values

    def q_values(self, hands, rolls_left, open_bits, totals, other_totals, other_open_bits) -> np.ndarray:
        """Win share after each action, (N, num_actions), -inf where illegal."""
        open_bits = np.asarray(open_bits, dtype=np.int64).reshape(-1)
        totals = np.asarray(totals, dtype=np.int64).reshape(-1)
        other_totals = np.asarray(other_totals, dtype=np.int64).reshape(len(open_bits), -1)
        other_open_bits = np.asarray(other_open_bits, dtype=np.int64).reshape(len(open_bits), -1)
        return turn_q_values(
            self.rules,
            hands,
            rolls_left,
            open_bits,
            self.turn_end_values(open_bits, totals, other_totals, other_open_bits),
        )

    def turn_end_values(self, open_bits, totals, other_totals, other_open_bits) -> np.ndarray:
        """``end_values`` of each decision's turn; the table is the same for every decision of a turn, so
        they are kept (up to ``END_VALUES_KEPT`` turns) and reused.
        """
        keys = [row.tobytes() for row in np.column_stack((open_bits, totals, other_totals, other_open_bits))]

        def compute(decisions):
            curves = self.opponent_curves(other_totals[decisions], other_open_bits[decisions])
            return self.end_values(open_bits[decisions], totals[decisions], curves)

        return kept_per_turn(self._kept, keys, compute, self._end_shape, END_VALUES_KEPT)


def kept_per_turn(store: dict, keys: list, compute, shape: tuple[int, ...], limit: int, dtype=np.float64) -> np.ndarray:
    """Rows of ``shape`` for each of ``keys`` (one per decision: its turn), from ``store`` where kept, else from
    ``compute(indices of the decisions missing)``, which are then kept; past ``limit`` kept turns the store is emptied.
    """
    result = np.empty((len(keys), *shape), dtype=dtype)
    missing = []
    for i, key in enumerate(keys):
        kept = store.get(key)
        if kept is None:
            missing.append(i)
        else:
            result[i] = kept
    if missing:
        decisions = np.array(missing)
        result[decisions] = compute(decisions)
        if len(store) + len(missing) > limit:
            store.clear()
        for i in missing:
            store[keys[i]] = result[i]
    return result


def win_probabilities(
    dice,
    rolls_left: int,
    open_categories,
    total: int,
    opponents,
    rules: RuleSet | None = None,
) -> np.ndarray:
    """Each action's share of the win in one position, when the opponents play the expected-score optimum.

    ``opponents``: one ``(total, open_categories)`` pair per other player, each at the start of a
    turn (an empty collection of open rows for a player who has finished). Shape
    (num_actions,), ``-inf`` for illegal actions.
    """
    from agents.solvers.optimal import open_bits_from

    rules = rules or YACHT
    hand = rules.hand(dice)
    check_rolls_left(rolls_left, rules)
    opponents = list(opponents)
    if not 1 <= len(opponents) <= MAX_PLAYERS - 1:
        raise ValueError(f"a table has 1 to {MAX_PLAYERS - 1} opponents, got {len(opponents)}")
    top = max_total(rules)
    totals = [total] + [opponent[0] for opponent in opponents]
    for value in totals:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= top:
            raise ValueError(f"a total must be an integer in 0..{top}, got {value!r}")
    check_rows_score_alone(rules)
    own_open = open_bits_from(open_categories, rules)
    other_open = [0 if len(list(categories)) == 0 else open_bits_from(categories, rules) for _, categories in opponents]
    # Rows score alone here (no bonus), so the filled rows hold at most the sum of their best scores.
    most = max_points_left(rules)
    every_row = (1 << rules.num_rows) - 1
    for value, open_bits in zip(totals, [own_open, *other_open]):
        filled_most = most[every_row & ~open_bits]
        if value > filled_most:
            open_names = [rules.category_names[c] for c in range(rules.num_rows) if open_bits >> c & 1]
            raise ValueError(
                f"a total of {value} cannot be scored in the rows filled: with rows "
                f"{', '.join(open_names) or 'none'} open it is at most {filled_most}"
            )
    arrays = win_chances(rules)
    return arrays.q_values(
        [hand],
        [rolls_left],
        [own_open],
        np.array([total]),
        np.array([totals[1:]]),
        np.array([other_open]),
    )[0]


_win_chances: weakref.WeakKeyDictionary[RuleSet, WinChances] = weakref.WeakKeyDictionary()


def win_chances(rules: RuleSet) -> WinChances:
    """The (shared) :class:`WinChances` of ``rules``, built once per process."""
    check_rows_score_alone(rules)
    arrays = _win_chances.get(rules)
    if arrays is None:
        arrays = _win_chances[rules] = WinChances(rules)
    return arrays
