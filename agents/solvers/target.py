"""Playing for a target score: the maximum probability of scoring at least ``t`` more points.

For a solitaire turn-start position with open-row set ``S`` let ``A[S, t]`` be the highest
probability, over all strategies, that the points still to come reach ``t``. One strategy per
``t``: a player who needs 150 more plays differently from one who needs 50. The recurrences are
those of :mod:`agents.solvers.optimal` with a vector in ``t`` in place of a number and the max taken
elementwise over ``t``:

- ``W0[S, h, t] = max_{c in S} A[S - c, t - score(h, c)]``: score hand ``h`` in row ``c`` now.
- ``Kj[S, k, t] = sum_h' P(h' | k) W{j-1}[S, h', t]``: hold keep ``k``, re-roll the rest.
- ``Wj[S, h, t] = max(W0[S, h, t], max over proper sub-keeps k of h of Kj[S, k, t])``.
- ``A[S, t] = sum_h P(h) W{R-1}[S, h, t]``; ``A[empty, t] = 1`` if ``t <= 0`` else 0.

``A[S, t] = 1`` for ``t <= 0`` and 0 above the most ``S`` can score, so only ``t`` in
``0 .. max_total`` is stored: a (2**C, max_total + 1) float64 array, 10 MB for the default rules.
Within a turn the values are recomputed on demand from it (:func:`turn_q_values`): with the turn's
end valued by any ``end_values[c, p]`` (the worth of writing ``p`` points in row ``c``) the same
max-over-keeps recursion gives each action's value. The array is solved once per rule set and
cached on disk with the other solvers' arrays (:mod:`agents.solvers.solution_cache`: ``$YACHT_RL_CACHE_DIR``,
default ``~/.cache/yacht-rl``), keyed by the rules' content.

Every :class:`~yacht_env.rules.RuleSet` of this project scores each row on its own (there is
no bonus row whose value depends on other rows), so every rule set is solved exactly here.

Typical use::

    from agents.solvers.target import solve_target, target_probabilities
    solve_target().at_least(150)                                 # P(final >= 150), best play
    target_probabilities([6, 6, 2, 6, 1], 2, ["sixes", "yacht"], needed=60)  # per action
"""

from __future__ import annotations

import hashlib
import weakref
from typing import NamedTuple

import numpy as np
from numba import njit

from agents.solvers import solution_cache
from agents.solvers.array_checks import check_rolls_left
from agents.solvers.optimal import KeepArrays, open_bits_from, open_sets_by_count
from yacht_env.actions import ActionLayout
from yacht_env.rules import RULE_SETS, YACHT, RuleSet
from yacht_env.table.encoding import max_total


def max_points_left(rules: RuleSet) -> np.ndarray:
    """The most points still to come from each open set, shape (2**C,) int64."""
    best = rules.hand_scores.max(axis=0).astype(np.int64)
    sets = np.arange(1 << rules.num_rows)
    return ((sets[:, None] >> np.arange(rules.num_rows)) & 1) @ best


# -- within one turn ------------------------------------------------------------------------------


def turn_q_values(rules: RuleSet, hands, rolls_left, open_bits, end_values) -> np.ndarray:
    """Q of every action when the turn's end is worth ``end_values``, for N positions at once.

    ``end_values``: (N, num_rows, max_row_score + 1), the worth for position ``i`` of
    writing ``p`` points in row ``c`` (only rows open in ``open_bits[i]``, and only scores the
    row can take, are read). Returns (N, num_actions) float64 in the layout of
    :mod:`yacht_env.actions`, ``-inf`` for illegal actions. With
    ``end_values[i, c, p] = p + V(S - c)`` this is :meth:`Solution.q_values_batch`.
    """
    hands = np.ascontiguousarray(hands, dtype=np.int64).reshape(-1)
    rolls_left = np.ascontiguousarray(rolls_left, dtype=np.int64).reshape(-1)
    open_bits = np.ascontiguousarray(open_bits, dtype=np.int64).reshape(-1)
    end_values = np.ascontiguousarray(end_values, dtype=np.float64)
    q = np.full((len(hands), ActionLayout(rules).num_actions), -np.inf)
    _turn_q(target_arrays(rules), q, hands, rolls_left, open_bits, end_values)
    return q


@njit(cache=True)
def _sizes(arrays):
    """``(hands, rows, keeps, faces, dice)`` of a rule set's :class:`TargetArrays`."""
    return arrays.scores.shape + arrays.children.shape + (arrays.parents.shape[1],)


@njit(cache=True)
def _turn_q(arrays, q, hands, rolls_left, open_bits, end_values):
    """Fill ``q[i]`` with position ``i``'s Q-values when writing ``p`` in row ``c`` is worth ``end_values[i, c, p]``."""
    num_hands, num_rows, num_keeps, num_faces, num_dice = _sizes(arrays)
    first_score = arrays.keep_after_reroll.shape[1]
    score_now = np.empty(num_hands)
    hand_values = np.empty(num_hands)
    keep_values = np.empty(num_keeps)
    best_sub = np.empty(num_keeps)
    for i in range(len(hands)):
        S = open_bits[i]
        hand = hands[i]
        for c in range(num_rows):
            if (S >> c) & 1:
                q[i, first_score + c] = end_values[i, c, arrays.scores[hand, c]]
        rolls = rolls_left[i]
        if rolls == 0:
            continue
        for h in range(num_hands):
            best = -np.inf
            for c in range(num_rows):
                if (S >> c) & 1:
                    best = max(best, end_values[i, c, arrays.scores[h, c]])
            score_now[h] = best
            hand_values[h] = best
        for level in range(1, rolls + 1):
            for h in range(num_hands):
                keep_values[arrays.hand_as_keep[h]] = hand_values[h]
            for j in range(num_keeps - 1, -1, -1):
                k = arrays.keep_order[j]
                if arrays.keep_sizes[k] < num_dice:
                    total = 0.0
                    for f in range(num_faces):
                        total += keep_values[arrays.children[k, f]]
                    keep_values[k] = total / num_faces
            if level == rolls:
                for a in range(1, first_score):
                    q[i, a] = keep_values[arrays.keep_after_reroll[hand, a]]
                break
            for j in range(num_keeps):
                k = arrays.keep_order[j]
                best = keep_values[k]
                for slot in range(arrays.keep_sizes[k] if arrays.keep_sizes[k] < num_dice else 0):
                    best = max(best, best_sub[arrays.parents[k, slot]])
                best_sub[k] = best
            for h in range(num_hands):
                best = score_now[h]
                k = arrays.hand_as_keep[h]
                for slot in range(num_dice):
                    best = max(best, best_sub[arrays.parents[k, slot]])
                hand_values[h] = best


class TargetArrays(NamedTuple):
    """The arrays of a rule set that the target kernels read, as one argument (numba takes a named tuple whole)."""

    scores: np.ndarray  # (H, C) int64: points of hand h in row c
    children: np.ndarray  # (K, faces): the keep one more die of each face makes
    keep_order: np.ndarray  # keep indices, fewest dice first
    keep_sizes: np.ndarray  # (K,) dice held
    parents: np.ndarray  # (K, dice): the keeps one die fewer makes
    hand_as_keep: np.ndarray  # (H,) the keep of holding the whole hand
    keep_after_reroll: np.ndarray  # (H, re-roll actions): the keep each re-roll action holds
    probabilities: np.ndarray  # (H,) P(h) of one roll of every die


_arrays_cache: weakref.WeakKeyDictionary[RuleSet, TargetArrays] = weakref.WeakKeyDictionary()


def target_arrays(rules: RuleSet) -> TargetArrays:
    """The :class:`TargetArrays` of ``rules``, built on first use and kept for the life of the rule set object."""
    arrays = _arrays_cache.get(rules)
    if arrays is None:
        dice = rules.dice
        keeps = KeepArrays.of(dice)
        keep_sizes = dice.keep_sizes.astype(np.int64)
        arrays = _arrays_cache[rules] = TargetArrays(
            scores=rules.hand_scores.astype(np.int64),
            children=keeps.children.astype(np.int64),
            keep_order=np.argsort(keep_sizes, kind="stable").astype(np.int64),
            keep_sizes=keep_sizes,
            parents=keeps.parents.astype(np.int64),
            hand_as_keep=keeps.hand_as_keep.astype(np.int64),
            keep_after_reroll=dice.keep_after_reroll.astype(np.int64),
            probabilities=dice.hand_probabilities,
        )
    return arrays


# -- the turn-start array -------------------------------------------------------------------------


@njit(cache=True)
def _solve_sets(arrays, padded, sets, widths, pad, rerolls):
    """Fill ``padded[S, pad:pad + widths[S]]`` for each open set ``S`` of ``sets`` (its children already solved)."""
    num_hands, num_rows, num_keeps, num_faces, num_dice = _sizes(arrays)
    for S in sets:
        width = widths[S]
        score_now = np.full((num_hands, width), -np.inf)
        for c in range(num_rows):
            if not (S >> c) & 1:
                continue
            child = S & ~(1 << c)
            for h in range(num_hands):
                offset = pad - arrays.scores[h, c]
                for t in range(width):
                    v = padded[child, offset + t]
                    score_now[h, t] = max(score_now[h, t], v)
        hand_values = score_now.copy()
        keep_values = np.empty((num_keeps, width))
        best_sub = np.empty((num_keeps, width))
        for _ in range(rerolls):
            for h in range(num_hands):
                keep_values[arrays.hand_as_keep[h]] = hand_values[h]
            for i in range(num_keeps - 1, -1, -1):  # largest keeps first: a keep averages its children
                k = arrays.keep_order[i]
                if arrays.keep_sizes[k] == num_dice:
                    continue
                for t in range(width):
                    total = 0.0
                    for f in range(num_faces):
                        total += keep_values[arrays.children[k, f], t]
                    keep_values[k, t] = total / num_faces
            for i in range(num_keeps):  # smallest first: best over all sub-keeps
                k = arrays.keep_order[i]
                size = arrays.keep_sizes[k]
                if size == num_dice:
                    continue
                for t in range(width):
                    best_sub[k, t] = keep_values[k, t]
                for slot in range(size):
                    parent = arrays.parents[k, slot]
                    for t in range(width):
                        best_sub[k, t] = max(best_sub[k, t], best_sub[parent, t])
            for h in range(num_hands):
                k = arrays.hand_as_keep[h]
                for slot in range(num_dice):
                    parent = arrays.parents[k, slot]
                    for t in range(width):
                        value = max(score_now[h, t], best_sub[parent, t])
                        if slot == 0 or value > hand_values[h, t]:
                            hand_values[h, t] = value
        for t in range(width):
            total = 0.0
            for h in range(num_hands):
                total += arrays.probabilities[h] * hand_values[h, t]
            padded[S, pad + t] = total


def solve_target_table(rules: RuleSet, tie: float = 1.0) -> np.ndarray:
    """``A``: (2**C, max_total + 1) float64, ``A[S, t]`` = max P(points to come >= t); see the module doc.

    ``tie`` is what landing exactly on ``t`` is worth: 1 for "at least ``t``"; 1/2 gives
    ``max E[1{F > t} + 1{F = t} / 2]``, the chance of beating a known final score ``t`` points
    ahead with a tie counting half. Entries above the most a set can score stay 0.
    """
    check_rows_score_alone(rules)
    arrays = target_arrays(rules)
    top = max_total(rules)
    pad = int(arrays.scores.max())
    # padded[S, pad + t] = A[S, t]; t < 0 reads 1 (already reached), t above the set's best reads 0
    padded = np.zeros((1 << rules.num_rows, pad + top + 1))
    padded[:, :pad] = 1.0
    padded[0, pad] = tie
    widths = max_points_left(rules) + 1
    for open_sets in open_sets_by_count(rules.num_rows)[1:]:
        _solve_sets(arrays, padded, open_sets.astype(np.int64), widths, pad, rules.rolls_per_turn - 1)
    array = np.clip(padded[:, pad:], 0.0, 1.0)
    array.setflags(write=False)
    return array


class TargetSolution:
    """The array ``A`` of one rule set and what it answers (see the module doc).

    ``array[S, t]``: max P(points still to come >= t) at the start of a turn with open set ``S``,
    ``t`` in ``0 .. max_total``.
    """

    def __init__(self, rules: RuleSet, array: np.ndarray):
        self.rules = rules
        self.chances = array
        self.max_total = array.shape[1] - 1
        self.max_row_score = int(rules.hand_scores.max())

    def at_least(self, target: int, open_bits: int | None = None) -> float:
        """Max probability of scoring at least ``target`` more points from a turn start (default: a new game)."""
        open_bits = self.rules.all_open if open_bits is None else open_bits
        return float(self.lookup(np.array([open_bits]), np.array([target]))[0])

    def lookup(self, open_bits: np.ndarray, needed: np.ndarray) -> np.ndarray:
        """``A[open_bits[i], needed[i]]`` with ``needed < 0`` -> 1 and ``needed > max_total`` -> 0."""
        needed = np.asarray(needed, dtype=np.int64)
        inside = np.clip(needed, 0, self.max_total)
        values = self.chances[np.asarray(open_bits, dtype=np.int64), inside]
        return np.where(needed < 0, 1.0, np.where(needed > self.max_total, 0.0, values))

    def end_values(self, open_bits, needed) -> np.ndarray:
        """Turn-end worth for :func:`turn_q_values`: P(reach ``needed`` | write ``p`` in row ``c``), (N, C, P+1)."""
        open_bits = np.asarray(open_bits, dtype=np.int64).reshape(-1)
        needed = np.asarray(needed, dtype=np.int64).reshape(-1)
        bits = 1 << np.arange(self.rules.num_rows)
        after = open_bits[:, None, None] & ~bits[None, :, None]  # (N, C, 1)
        points = np.arange(self.max_row_score + 1)[None, None, :]
        return self.lookup(
            np.broadcast_to(after, (len(open_bits), len(bits), points.shape[2])),
            needed[:, None, None] - points,
        )

    def q_values_batch(self, hands, rolls_left, open_bits, needed) -> np.ndarray:
        """P(reaching ``needed`` more points) after each action, best play after; (N, num_actions), -inf illegal."""
        return turn_q_values(self.rules, hands, rolls_left, open_bits, self.end_values(open_bits, needed))


# -- cache ----------------------------------------------------------------------------------------


SOLVER_SOURCES = ("agents.solvers.target", "agents.solvers.optimal", "yacht_env.dice")
"""The modules the target array is computed by: a stored array is read only by the code that solved it."""


def rules_key(rules: RuleSet) -> str:
    """A digest of everything the solution depends on: dice, rolls and the full hand scores."""
    digest = hashlib.sha256()
    digest.update(f"{rules.num_dice},{rules.num_faces},{rules.rolls_per_turn},{rules.num_rows}".encode())
    digest.update(np.ascontiguousarray(rules.hand_scores, dtype=np.int16).tobytes())
    return f"{rules.name}-{digest.hexdigest()[:16]}"


def is_probability_array(array: np.ndarray) -> bool:
    """Whether every entry of a stored array is a probability (a file that is not is solved again)."""
    return bool(np.isfinite(array).all() and (array >= 0).all() and (array <= 1).all())


def cached_array(kind: str, rules: RuleSet, shape: tuple[int, ...], build) -> np.ndarray:
    """``build(rules)`` read from / written to the disk cache of :mod:`agents.solvers.solution_cache`.

    A missing, corrupt or foreign file is rebuilt; the file name holds the solver's version
    (:func:`agents.solvers.solution_cache.source_version` of :data:`SOLVER_SOURCES`).
    """
    version = solution_cache.source_version(*SOLVER_SOURCES)
    file_name = f"{kind}-{rules_key(rules)}-{version}.npy"
    return solution_cache.cached_array(file_name, shape, lambda: build(rules), is_probability_array)


_solutions: weakref.WeakKeyDictionary[RuleSet, dict[float, TargetSolution]] = weakref.WeakKeyDictionary()
TIE_KINDS = {1.0: "target", 0.5: "beat"}


def check_rows_score_alone(rules: RuleSet) -> RuleSet:
    """``rules`` if every row scores on its own, else ``ValueError`` naming why the target DP does not cover them.

    With an upper bonus or a joker the points still to come depend on the upper subtotal and the
    Yahtzee box too, which would multiply the array's states by the subtotals for every target; the
    target DP, the exact distributions and the win policy are built for rule sets without them.
    """
    if rules.has_bonus_or_joker:
        raise ValueError(
            f"rule set {rules.name!r} has an upper bonus, an extra-Yahtzee bonus or a joker: the target DP, the exact "
            "score distributions and the win and target:T policies cover only rule sets whose rows score on their own: "
            f"{', '.join(name for name, named in RULE_SETS.items() if not named.has_bonus_or_joker)} or a RuleSet without "
            "bonuses or jokers"
        )
    return rules


def solve_target(rules: RuleSet | None = None, tie: float = 1.0, use_disk_cache: bool = True) -> TargetSolution:
    """The target array of ``rules`` (default :data:`YACHT`): from memory, the disk cache, or solved.

    ``tie`` 1 (reach a target) or 1/2 (beat a known score, a tie counting half); see
    :func:`solve_target_table`.
    """
    rules = check_rows_score_alone(rules or YACHT)
    if tie not in TIE_KINDS:
        raise ValueError(f"tie must be one of {sorted(TIE_KINDS)}, got {tie!r}")
    per_rules = _solutions.setdefault(rules, {})
    solution = per_rules.get(tie)
    if solution is None:
        shape = (1 << rules.num_rows, max_total(rules) + 1)
        build = lambda rules: solve_target_table(rules, tie)
        array = cached_array(TIE_KINDS[tie], rules, shape, build) if use_disk_cache else build(rules)
        solution = per_rules[tie] = TargetSolution(rules, array)
    return solution


def target_probabilities(dice, rolls_left: int, open_categories, needed: int, rules: RuleSet | None = None) -> np.ndarray:
    """For one position, the max probability of scoring at least ``needed`` more points after each action.

    ``dice`` in any order, ``rolls_left`` in ``0 .. rolls_per_turn - 1``, ``open_categories`` as for
    :func:`agents.solvers.optimal.open_bits_from`. Shape (num_actions,), ``-inf`` for illegal actions.
    """
    rules = rules or YACHT
    hand = rules.hand(dice)
    check_rolls_left(rolls_left, rules)
    if isinstance(needed, bool) or not isinstance(needed, (int, np.integer)):
        raise ValueError(f"needed must be an integer number of points, got {needed!r}")
    open_bits = open_bits_from(open_categories, rules)
    return solve_target(rules).q_values_batch([hand], [rolls_left], [open_bits], [needed])[0]
