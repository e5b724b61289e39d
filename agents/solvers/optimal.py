"""The exact optimal solitaire strategy for Yacht: the policy that maximizes the expected final score.

Solitaire Yacht decomposes by turn: the only thing one turn passes to the next is which rows are
still open, so the value of a position is the points still to come and depends on
``(open rows, rolls left, dice)``. Backward induction over the open-row bit sets (all sets with
``m`` open rows depend only on sets with ``m - 1``) and, within a turn, over the rolls left gives
the exact values:

- ``W0[S, h] = max_{c in S} score(h, c) + V(S - c)``: score hand ``h`` now.
- ``Kj[S, k] = sum_h' P(h' | k) W{j-1}[S, h']``: hold keep ``k`` and re-roll the other dice while
  ``j`` re-rolls remain before that roll.
- ``Wj[S, h] = max(W0[S, h], max over proper sub-keeps k of h of Kj[S, k])``: best with ``j``
  re-rolls left. Keeping every die is no re-roll (action 0 is illegal); it is scoring now.
- ``V(S) = sum_h P(h) W{R-1}[S, h]`` with ``R = rules.rolls_per_turn``; ``V(empty) = 0``.

That holds for rule sets whose rows score independently (:data:`yacht_env.rules.YACHT`). An upper
bonus, an extra-Yahtzee bonus or a joker rule (Yahtzee, Yatzy) make the state larger than the open
rows: :func:`solve` hands those to :mod:`agents.solvers.sheet_solver` (the same recurrences over open rows,
capped upper subtotal and the Yahtzee box's state, in compiled kernels), whose solutions are also
kept on disk (:mod:`agents.solvers.solution_cache`), so that a second process loads them instead of solving.

Q-values follow the flat action layout of :mod:`yacht_env.actions`: action ``a`` in
``1 .. 2**num_dice - 1`` re-rolls the dice of the *sorted* hand whose bit is set, action
``2**num_dice + c`` scores category ``c``; illegal actions get ``-inf``.

Typical use::

    from agents.solvers.optimal import expected_score, q_values, solve
    expected_score()                                   # V(all rows open) for the default rules
    expected_score(rules="yahtzee")                    # 254.5896...
    q_values([6, 6, 2, 6, 1], 2, ["sixes", "yacht"])   # (44,) Q of every action
    q_values([6, 6, 6, 6, 6], 0, ["sixes", "chance"], rules="yahtzee", upper_total=40, yahtzee_box=50)
    solve().best_actions_batch(hands, rolls_left, open_bits)
"""

from __future__ import annotations

import numbers
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from agents.solvers.exact_solution import ExactSolution
from yacht_env.dice import DiceSpace
from yacht_env.rules import RuleSet, rule_set

PUBLISHED_OPTIMA: dict[str, float] = {
    "yacht": 169.7738891,
    "yacht_exercism": 166.9550677,
    "yahtzee": 254.5896095,
    "yahtzee_forced_joker": 254.5877287,
    "yahtzee_no_joker": 253.9702412,
    "yahtzee_no_bonus": 245.8707745,
    "yatzy": 248.4399894,
}
"""Optimal expected scores of the named rule sets (``yacht_env.rules.RULE_SETS``) as published: Yahtzee's
from Verhoeff's and Glenn's optimal-solitaire work, Yatzy's from Larsson and Sjöberg, the Yacht
figures this project's own. The tests reproduce each to 1e-6."""

# -- open categories ---------------------------------------------------------------------------


OPEN_FORMS = "row names ({names}), distinct row indices ({indices}) or a boolean mask of {n} entries"


def open_bits_from(open_categories, rules: RuleSet | None = None) -> int:
    """Open categories -> open bit set (bit ``c`` <-> ``rules.category_names[c]``).

    ``open_categories`` is exactly one of: row names (a collection of names, or one name), distinct
    row indices (a collection of integers), or a boolean mask with one entry per row (bool dtype or
    Python bools). A 0/1 integer array, such as the ``"dict"`` encoding's ``open_categories``, could
    be read as a mask or as indices: it is refused (pass ``mask.astype(bool)``), as are mixed forms.
    Raises ``ValueError`` naming the forms allowed, a bad entry, or when no category is open.
    """
    rules = rule_set(rules)
    indices = sorted({0, rules.num_rows - 1})  # the examples: the rule set's own first and last rows
    names = [rules.category_names[i] for i in indices]
    forms = OPEN_FORMS.format(names=names, indices=indices, n=rules.num_rows)
    if isinstance(open_categories, str):
        open_categories = [open_categories]
    if isinstance(open_categories, (numbers.Number, np.generic, bytes)) or not isinstance(open_categories, Iterable):
        raise ValueError(f"open_categories must be {forms}, got {open_categories!r}")
    if isinstance(open_categories, np.ndarray):
        if open_categories.ndim != 1:
            raise ValueError(f"open_categories must be {forms}, got an array of shape {open_categories.shape}")
        entries = open_categories.tolist() if open_categories.dtype.kind in "biu" else list(open_categories)
        if open_categories.dtype == np.bool_:
            entries = [bool(e) for e in entries]
    else:
        entries = list(open_categories)
    kinds = {
        "mask"
        if isinstance(e, (bool, np.bool_))
        else "index"
        if isinstance(e, (numbers.Integral, np.integer))
        else "name"
        if isinstance(e, str)
        else "other"
        for e in entries
    }
    if "other" in kinds or len(kinds) > 1:
        raise ValueError(f"open_categories must be {forms}, one form only, got {open_categories!r}")
    if kinds == {"mask"}:
        if len(entries) != rules.num_rows:
            raise ValueError(
                f"a boolean mask of open categories needs {rules.num_rows} entries, got {len(entries)}: {open_categories!r}"
            )
        bits = sum(1 << c for c, is_open in enumerate(entries) if is_open)
    elif kinds == {"index"}:
        indices = [int(e) for e in entries]
        if len(set(indices)) != len(indices):
            raise ValueError(
                f"open_categories {open_categories!r} repeats an index: a 0/1 mask must be given as bools "
                f"(e.g. mask.astype(bool)); allowed: {forms}"
            )
        bits = 0
        for index in indices:
            bits |= 1 << rules.check_category(index)
    else:
        bits = 0
        for name in entries:
            bits |= 1 << rules.check_category(name)
    if bits == 0:
        raise ValueError(f"no category is open in {open_categories!r}: the game is over, there is nothing to decide")
    return bits


def open_sets_by_count(num_rows: int) -> list[np.ndarray]:
    """Open bit sets grouped by how many rows are open: entry ``m`` lists the sets with ``m`` bits."""
    sets = np.arange(1 << num_rows, dtype=np.int64)
    open_counts = sum((sets >> c) & 1 for c in range(num_rows))
    return [np.flatnonzero(open_counts == m) for m in range(num_rows + 1)]


# -- keep arrays -------------------------------------------------------------------------------


def keep_children(dice: DiceSpace) -> np.ndarray:
    """Keep plus one die showing face ``f + 1``, shape (num_keeps, num_faces); -1 for full keeps.

    Re-rolling the missing dice of a keep is the same as rolling one of them, then the rest, so
    ``K[k] = mean over faces f of K[children[k, f]]``: the re-roll expectation needs
    ``num_faces`` additions per keep instead of a dense product with ``keep_to_hand``.
    """
    children = np.full((dice.num_keeps, dice.num_faces), -1, dtype=np.intp)
    for k, keep in enumerate(dice.keeps):
        if len(keep) < dice.num_dice:
            for face in range(1, dice.num_faces + 1):
                children[k, face - 1] = dice.keep_index[tuple(sorted(keep + (face,)))]
    return children


def parents_without_padding(dice: DiceSpace) -> np.ndarray:
    """``keep_parents`` with each keep's self-padding replaced by its first parent.

    A repeated parent is harmless under a max, whereas the keep itself is not a proper sub-keep;
    this lets a max over parent slots ignore how many distinct faces a keep has.
    """
    parents = dice.keep_parents.astype(np.intp)
    is_padding = parents == np.arange(dice.num_keeps)[:, None]
    return np.where(is_padding, parents[:, :1], parents)


@dataclass(frozen=True, eq=False)
class KeepArrays:
    """Index arrays the backward induction gathers with, built once per solve."""

    children: np.ndarray  # (num_keeps, num_faces), see keep_children
    parents: np.ndarray  # (num_keeps, num_dice), see parents_without_padding
    keeps_by_size: tuple[np.ndarray, ...]  # entry s: indices of the keeps of s dice
    hand_as_keep: np.ndarray  # (num_hands,) keep index of each full hand

    @classmethod
    def of(cls, dice: DiceSpace) -> KeepArrays:
        """The keep arrays of ``dice``."""
        sizes = dice.keep_sizes
        return cls(
            children=keep_children(dice),
            parents=parents_without_padding(dice),
            keeps_by_size=tuple(np.flatnonzero(sizes == s) for s in range(dice.num_dice + 1)),
            hand_as_keep=dice.hand_as_keep.astype(np.intp),
        )


# -- one layer of the backward induction (columns = open sets with the same number of rows) -----


def score_now_values(scores: np.ndarray, later_values: np.ndarray, open_sets: np.ndarray) -> np.ndarray:
    """``W0``: best score-now value of each hand, shape (num_hands, len(open_sets)).

    ``scores`` is the (num_hands, num_rows) hand scores as float64; ``later_values`` is
    indexed by open bit set and must already hold ``V`` of every set with one row fewer than
    ``open_sets``.
    """
    best = np.full((scores.shape[0], len(open_sets)), -np.inf)
    candidate = np.empty_like(best)
    for c in range(scores.shape[1]):
        bit = 1 << c
        value_after = np.where(open_sets & bit, later_values[open_sets & ~bit], -np.inf)
        np.add(scores[:, c, None], value_after[None, :], out=candidate)
        np.maximum(best, candidate, out=best)
    return best


def reroll_values(hand_values: np.ndarray, arrays: KeepArrays) -> np.ndarray:
    """``Kj`` from ``W{j-1}``: expected value of holding each keep and re-rolling the rest.

    ``hand_values`` is (num_hands, n); the result is (num_keeps, n). Full keeps get the hand's
    own value (nothing is rolled); smaller keeps average their children, largest first.
    """
    values = np.empty((arrays.children.shape[0], hand_values.shape[1]))
    values[arrays.hand_as_keep] = hand_values
    num_faces = arrays.children.shape[1]
    for keeps in reversed(arrays.keeps_by_size[:-1]):
        children = arrays.children[keeps]
        total = values[children[:, 0]]
        for f in range(1, num_faces):
            total += values[children[:, f]]
        total *= 1.0 / num_faces
        values[keeps] = total
    return values


def best_reroll_values(keep_values: np.ndarray, arrays: KeepArrays) -> np.ndarray:
    """Best value over the *proper* sub-keeps of each hand, shape (num_hands, n).

    ``best_sub[k] = max(keep_values[k], best_sub of k's parents)`` by keep size ascending holds
    the best over all sub-keeps of ``k``; a hand's proper sub-keeps are the sub-keeps of its
    parents.
    """
    best_sub = keep_values.copy()
    for size, keeps in enumerate(arrays.keeps_by_size[1:-1], start=1):
        best = best_sub[keeps]
        for slot in range(size):  # a keep of `size` dice has at most `size` distinct parents
            np.maximum(best, best_sub[arrays.parents[keeps, slot]], out=best)
        best_sub[keeps] = best
    hand_parents = arrays.parents[arrays.hand_as_keep]
    best = best_sub[hand_parents[:, 0]]
    for slot in range(1, hand_parents.shape[1]):
        np.maximum(best, best_sub[hand_parents[:, slot]], out=best)
    return best


def solve_tables(rules: RuleSet, plan_ahead: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Backward induction over open sets; returns ``(state_values, keep_values)`` (see :class:`Solution`).

    With ``plan_ahead=False`` the rows left after this turn are worth nothing: the values are
    those of the myopic player who maximizes this turn's expected score only.
    """
    dice = rules.dice
    arrays = KeepArrays.of(dice)
    scores = rules.hand_scores.astype(np.float64)
    hand_probabilities = dice.hand_probabilities
    rolls = rules.rolls_per_turn
    state_values = np.zeros(1 << rules.num_rows)
    keep_values = np.zeros((rolls, 1 << rules.num_rows, dice.num_keeps))
    later_values = state_values if plan_ahead else np.zeros_like(state_values)
    for open_sets in open_sets_by_count(rules.num_rows)[1:]:
        score_now = score_now_values(scores, later_values, open_sets)
        hand_values = score_now
        for rerolls_left in range(1, rolls):
            values = reroll_values(hand_values, arrays)
            keep_values[rerolls_left, open_sets] = values.T
            hand_values = np.maximum(score_now, best_reroll_values(values, arrays))
        state_values[open_sets] = hand_probabilities @ hand_values
    state_values.setflags(write=False)
    keep_values.setflags(write=False)
    return state_values, keep_values


# -- the solution ------------------------------------------------------------------------------


class Solution(ExactSolution):
    """Exact values of the optimal policy for one rule set, and its Q-values.

    Attributes (float64, read-only):

    - ``state_values``, shape (2**C,): ``V(S)``, the expected points still to come at the start
      of a turn (before the first roll) with open-category bit set ``S``; ``V(0) = 0``.
    - ``keep_values``, shape (R, 2**C, num_keeps): ``keep_values[j, S, k]`` is the expected points
      still to come, this turn's score included, when keep ``k`` is held and the other dice are
      re-rolled while ``j`` re-rolls remain before that roll: the Q of a re-roll taken with
      ``rolls_left == j``. Row ``j = 0`` is unused and zero. For a full keep (nothing re-rolled)
      the entry is the value of that hand with ``j - 1`` rolls left. About 45 MB for the
      default rules.

    Hands may be given as hand indices (``rules.dice.hands`` order, as in ``YachtEnv.state``) or
    as dice in any order; re-roll actions always refer to positions in the *sorted* dice. The
    object keeps no reference to its ``RuleSet``, so the per-rules cache can let go of both.

    A myopic solution (``plan_ahead`` False, from :func:`solve_myopic`) values later turns at 0:
    its ``state_values[S]`` is the expected score of this turn alone, and scoring category ``c``
    is worth just the points written.
    """

    def __init__(self, rules: RuleSet, state_values: np.ndarray, keep_values: np.ndarray, plan_ahead: bool = True):
        super().__init__(rules, state_values, plan_ahead)
        self.keep_values = keep_values
        self._later_values = state_values if plan_ahead else np.zeros_like(state_values)
        self._scores = rules.hand_scores.astype(np.float64)
        self._category_bits = 1 << np.arange(rules.num_rows, dtype=np.int64)

    def q_values_batch(self, hands, rolls_left, open_bits) -> np.ndarray:
        """Q of every action for each position, shape (N, num_actions) float64; -inf if illegal.

        ``hands``: (N,) hand indices or (N, num_dice) dice in any order; ``rolls_left`` and
        ``open_bits`` (nonzero open bit sets): scalars or (N,) arrays. Illegal: action 0 always,
        re-rolls when ``rolls_left == 0``, and scoring a category that is not open.
        """
        hands, rolls_left, open_bits = self._check_positions(hands, rolls_left, open_bits)
        q = np.full((len(hands), self.num_actions), -np.inf)
        is_open = (open_bits[:, None] & self._category_bits) != 0
        score_q = self._scores[hands] + self._later_values[open_bits[:, None] & ~self._category_bits]
        q[:, self.first_score_action :] = np.where(is_open, score_q, -np.inf)
        keeps = self._keep_after_reroll[hands, 1:]
        reroll_q = self.keep_values[rolls_left[:, None], open_bits[:, None], keeps]
        q[:, 1 : self.first_score_action] = np.where(rolls_left[:, None] > 0, reroll_q, -np.inf)
        return q


# -- cached entry points -----------------------------------------------------------------------

_solutions: weakref.WeakKeyDictionary[RuleSet, Solution] = weakref.WeakKeyDictionary()
_myopic_solutions: weakref.WeakKeyDictionary[RuleSet, Solution] = weakref.WeakKeyDictionary()


def solve(rules: RuleSet | str | None = None):
    """The optimal policy's values for ``rules`` (a ``RuleSet`` or a name of ``RULE_SETS``; default ``YACHT``).

    A :class:`Solution` for rule sets whose rows score independently, else an
    :class:`agents.solvers.sheet_solver.SheetSolution`. Solved on first use (or loaded from the disk
    cache, for the latter) and kept for the life of the rule set object in this process.
    """
    rules = rule_set(rules)
    solution = _solutions.get(rules)
    if solution is None:
        solution = _solve_sheet(rules, True) if rules.has_bonus_or_joker else Solution(rules, *solve_tables(rules))
        _solutions[rules] = solution
    return solution


def solve_myopic(rules: RuleSet | str | None = None):
    """Values of the myopic player, who maximizes each turn's expected score and ignores later turns.

    The same turn computation as :func:`solve` with every later turn worth 0 (bonuses earned this
    turn count); cached likewise.
    """
    rules = rule_set(rules)
    solution = _myopic_solutions.get(rules)
    if solution is None:
        if rules.has_bonus_or_joker:
            solution = _solve_sheet(rules, False)
        else:
            solution = Solution(rules, *solve_tables(rules, plan_ahead=False), plan_ahead=False)
        _myopic_solutions[rules] = solution
    return solution


SHEET_SOLVER_SOURCES = (
    "agents.solvers.sheet_solver",
    "agents.solvers.optimal",
    "agents.solvers.exact_solution",
    "yacht_env.rules",
    "yacht_env.dice",
)
"""The modules the sheet solver's arrays are computed by (their digest is part of each array's key)."""


def _solve_sheet(rules: RuleSet, plan_ahead: bool):
    # Rule sets with a sheet state take seconds to solve: their values live on disk as well. The
    # others solve faster than their keep values (43 MiB for Yacht) would load.
    from agents.solvers import sheet_solver, solution_cache

    version = solution_cache.source_version(*SHEET_SOLVER_SOURCES)  # a changed solver solves again
    key = f"{rules.fingerprint}-{'optimal' if plan_ahead else 'myopic'}-{version}"
    shape = (1 << rules.num_rows, rules.upper_cap + 1, 2 if rules.tracks_yahtzee_box else 1)
    values = solution_cache.load_values(key, shape)
    if values is None:
        values = sheet_solver.solve_sheet_values(rules, plan_ahead)
        solution_cache.store_values(key, values)
    return sheet_solver.SheetSolution(rules, values, plan_ahead)


def clear_cache() -> None:
    """Forget every solved rule set in this process: the next :func:`solve` solves again (or, for a rule
    set with a sheet state, reads the disk cache; see :mod:`agents.solvers.solution_cache`).
    """
    _solutions.clear()
    _myopic_solutions.clear()


def expected_score(rules: RuleSet | str | None = None) -> float:
    """Expected final score of the optimal solitaire strategy with every row open (bonuses included)."""
    return solve(rules).expected_score


def q_values(
    dice, rolls_left, open_categories, rules: RuleSet | str | None = None, *, upper_total: int = 0, yahtzee_box=None
) -> np.ndarray:
    """Q of every action in one position, shape (num_actions,) float64; -inf for illegal actions.

    ``dice`` in any order (re-roll bits refer to the sorted dice), ``rolls_left`` in
    ``0 .. rolls_per_turn - 1``, ``open_categories`` as for :func:`open_bits_from`.

    The rest of the sheet, for rule sets that need it (ignored by the others):
    ``upper_total``, the points written in upper rows so far; ``yahtzee_box``, the points written
    in the Yahtzee row (0 or its full points, 50), ``None`` while it is open. A score action's Q
    includes the bonuses it earns now.
    """
    rules = rule_set(rules)
    hand = rules.hand(dice)
    if isinstance(rolls_left, bool) or not isinstance(rolls_left, numbers.Integral):
        raise ValueError(f"rolls_left must be an integer in 0..{rules.rolls_per_turn - 1}, got {rolls_left!r}")
    if not 0 <= int(rolls_left) < rules.rolls_per_turn:
        raise ValueError(f"rolls_left {rolls_left!r} is out of range 0..{rules.rolls_per_turn - 1}")
    open_bits = open_bits_from(open_categories, rules)
    if not rules.has_bonus_or_joker:
        return solve(rules).q_values_batch(hand, int(rolls_left), open_bits)[0]
    if isinstance(upper_total, bool) or not isinstance(upper_total, numbers.Integral) or upper_total < 0:
        raise ValueError(f"upper_total must be an integer >= 0, got {upper_total!r}")
    yahtzee_full = _yahtzee_full(rules, open_bits, yahtzee_box)
    return solve(rules).q_values_batch(hand, int(rolls_left), open_bits, int(upper_total), yahtzee_full)[0]


def _yahtzee_full(rules: RuleSet, open_bits: int, yahtzee_box) -> int:
    """1 when the Yahtzee box holds its full points, checked against the open rows; 0 if untracked."""
    if not rules.tracks_yahtzee_box:
        return 0
    row = rules.yahtzee_row_index
    full = int(rules.hand_scores[rules.alike_hands, row].max())
    if open_bits >> row & 1:
        if yahtzee_box is not None:
            raise ValueError(f"yahtzee_box must be None while the {rules.yahtzee_row!r} row is open, got {yahtzee_box!r}")
        return 0
    if yahtzee_box not in (0, full) or isinstance(yahtzee_box, bool):
        raise ValueError(
            f"yahtzee_box must be 0 or {full} (the points in the filled {rules.yahtzee_row!r} row), got {yahtzee_box!r}"
        )
    return int(yahtzee_box == full)
