"""The exact optimal solitaire strategy for rule sets whose rows do not score independently.

An upper bonus, an extra-Yahtzee bonus or a joker rule (Yahtzee, Yatzy; see
:class:`yacht_env.rules.RuleSet`) make a score depend on more of the sheet than the open rows, so
the state passed from one turn to the next grows to what the rules need, and only that:

- ``S``, the open rows (a bit set);
- ``u``, the upper subtotal capped at the bonus threshold (``0..rules.upper_cap``; only 0 without
  an upper bonus): past the threshold the bonus is won and nothing depends on the rest;
- ``y``, 1 when the Yahtzee box holds its full points (50) and 0 otherwise (only 0 without an
  extra-Yahtzee bonus). Whether the box is open is bit ``yahtzee_row`` of ``S``; a joker depends
  on nothing else, so ``(S, y)`` is the box's three states: open, 50, 0.

With ``x = (S, u, y)`` the recurrences are those of :mod:`agents.solvers.optimal` with the score-now term
taken over the rows the rules allow and the bonuses added:

- ``W0[x, h] = max_{c in legal(h, S)} pts(h, c) + upper_bonus(u, pts) + extra_bonus(h, y) + V(x')``
  where ``legal`` and whether ``pts`` are joker values come from :func:`yacht_env.rules.placement`,
  and ``x' = (S - c, min(u + pts, T) if c is upper else u, y')`` with ``y' = [pts > 0]`` when ``c`` is
  the Yahtzee row, else ``y``.
- ``Kj[x, k] = mean over faces f of Kj[x, k + f]`` (keeps one die larger, down to full hands,
  whose value is ``W{j-1}[x, h]``), and ``Wj[x, h] = max(W0[x, h], max over proper sub-keeps k of h
  of Kj[x, k])``.
- ``V(x) = sum_h P(h) W{R-1}[x, h]``; ``V`` of a full sheet is 0.

Layers of equal open-row count are independent, so each is solved in parallel (numba ``prange``)
with the per-state turn in a compiled kernel. Only states reachable from an empty sheet are
solved (the subtotal must be a sum of points the filled upper rows can hold; ``y = 1`` needs the
Yahtzee box filled); the others hold NaN. Only ``V`` is kept (8 MiB for Yahtzee): the Q-values of
a position re-run that one state's turn (microseconds).

The turn (``solve_turn``) takes ``V`` at the turn's end as an input: :mod:`agents.learned.plan` plays it with a
learned ``V`` (the planning agent) and :mod:`agents.training.plan_games` learns that ``V`` with it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from agents.solvers.array_checks import check_range
from agents.solvers.exact_solution import ExactSolution, best_actions
from yacht_env.rules import RuleSet, extra_yahtzee_bonus, placement, upper_bonus

# -- the game's constants, packed once per rule set ---------------------------------------------


class KernelTables(NamedTuple):
    """Every array and number the compiled turn reads, as one argument (numba takes a named tuple whole).

    Built by :class:`TurnArrays` (``TurnArrays(rules).kernel``); see there for how the arrays are made.
    """

    scores_by_row: np.ndarray  # (C, H) float64: points of hand h in row c
    slots_by_row: np.ndarray  # (C, H) int32: which of the row's slots those points are
    slot_points: np.ndarray  # (C, max slots) int64: the points of each slot
    num_slots: np.ndarray  # (C,) int64
    alike_hands: np.ndarray  # hand indices of the five-alike hands
    face_rows: np.ndarray  # (H,) the upper row of a five-alike hand's face
    joker_scores: np.ndarray  # (H, C) float64: points at joker values
    joker_slots: np.ndarray  # (H, C) int32
    hand_probabilities: np.ndarray  # (H,) P(h) of one roll of every die
    hand_as_keep: np.ndarray  # (H,) the keep index of holding the whole hand
    average_order: np.ndarray  # keeps that re-roll something, largest first
    children: np.ndarray  # (K, faces): the keep one more die of each face makes
    max_order: np.ndarray  # proper, non-empty keeps, smallest first
    parents: np.ndarray  # (K, dice): the keeps one die fewer makes
    parent_counts: np.ndarray  # (K,) distinct parents of each keep
    yahtzee_row: int
    lower_bits: int
    upper_bits: int
    joker_mode: int
    upper_cap: int
    bonus_points: int
    yahtzee_bonus: int
    num_rows: int
    num_upper: int  # U = upper_cap + 1 subtotals
    num_yahtzee: int  # Y: 2 with an extra-Yahtzee bonus, else 1
    rolls: int  # rolls per turn


class Scratch(NamedTuple):
    """The arrays one state's turn writes as it goes; one per thread, reused from state to state."""

    after: np.ndarray  # (C, max slots): bonus plus V of the next state, per row and slot
    score_now: np.ndarray  # (H,) W0
    hand_values: np.ndarray  # (H,) Wj
    keep_values: np.ndarray  # (K,) Kj
    keep_out: np.ndarray  # (rolls, K) every Kj of the turn, or (0, K) when not wanted


class TurnArrays:
    """The arrays of one ``RuleSet``'s turn, built once; ``kernel`` bundles what the compiled turn reads."""

    def __init__(self, rules: RuleSet):
        dice = rules.dice
        self.num_open_sets = 1 << rules.num_rows
        self.num_upper = rules.upper_cap + 1
        self.num_yahtzee = 2 if rules.tracks_yahtzee_box else 1
        self.int_scores = rules.hand_scores.astype(np.int64)
        self.int_joker_scores = rules.joker_hand_scores.astype(np.int64)
        self.scores_by_row = np.ascontiguousarray(self.int_scores.T, dtype=np.float64)
        self.joker_scores = self.int_joker_scores.astype(np.float64)
        self.alike_hands = np.flatnonzero(rules.alike_hands).astype(np.int64)
        self.face_rows = rules.face_rows.astype(np.int64)
        # Slots: the distinct points of a row that lead to different next states (upper rows and a
        # tracked Yahtzee row), else one slot for the whole row.
        tracked_yahtzee = rules.yahtzee_row_index if self.num_yahtzee == 2 else -1
        slot_lists = []
        for c, category in enumerate(rules.categories):
            if category.upper or c == tracked_yahtzee:
                slot_lists.append(np.unique(np.concatenate([self.int_scores[:, c], self.int_joker_scores[:, c]])))
            else:
                slot_lists.append(np.zeros(1, dtype=np.int64))
        self.num_slots = np.array([len(points) for points in slot_lists], dtype=np.int64)
        self.slot_points = np.zeros((rules.num_rows, self.num_slots.max()), dtype=np.int64)
        for c, points in enumerate(slot_lists):
            self.slot_points[c, : len(points)] = points
        self.slots_by_row = np.empty((rules.num_rows, dice.num_hands), dtype=np.int32)
        self.joker_slots = np.empty((dice.num_hands, rules.num_rows), dtype=np.int32)
        for c, points in enumerate(slot_lists):
            if len(points) == 1:
                self.slots_by_row[c] = 0
                self.joker_slots[:, c] = 0
            else:
                self.slots_by_row[c] = np.searchsorted(points, self.int_scores[:, c])
                self.joker_slots[:, c] = np.searchsorted(points, self.int_joker_scores[:, c])
        self.hand_probabilities = dice.hand_probabilities.copy()
        self.hand_as_keep = dice.hand_as_keep.astype(np.int32)
        sizes = dice.keep_sizes.astype(np.int64)
        # Children of the keeps that re-roll something, largest keeps first (their children are
        # bigger keeps, already known); parents of every keep by size, smallest first.
        order = np.argsort(-sizes, kind="stable")
        self.average_order = order[sizes[order] < dice.num_dice].astype(np.int32)
        children = np.full((dice.num_keeps, dice.num_faces), -1, dtype=np.int32)
        for k, keep in enumerate(dice.keeps):
            if len(keep) < dice.num_dice:
                for face in range(1, dice.num_faces + 1):
                    children[k, face - 1] = dice.keep_index[tuple(sorted(keep + (face,)))]
        self.children = children
        by_size = np.argsort(sizes, kind="stable")
        self.max_order = by_size[(sizes[by_size] > 0) & (sizes[by_size] < dice.num_dice)].astype(np.int32)
        self.parents = dice.keep_parents.astype(np.int32)
        self.parent_counts = np.array([len(set(keep)) for keep in dice.keeps], dtype=np.int32)
        self.num_keeps = dice.num_keeps
        self.rolls = rules.rolls_per_turn
        self.kernel = self._kernel_tables(rules)

    def _kernel_tables(self, rules: RuleSet) -> KernelTables:
        return KernelTables(
            self.scores_by_row,
            self.slots_by_row,
            self.slot_points,
            self.num_slots,
            self.alike_hands,
            self.face_rows,
            self.joker_scores,
            self.joker_slots,
            self.hand_probabilities,
            self.hand_as_keep,
            self.average_order,
            self.children,
            self.max_order,
            self.parents,
            self.parent_counts,
            yahtzee_row=int(rules.yahtzee_row_index),
            lower_bits=int(rules.lower_bits),
            upper_bits=int(rules.upper_bits),
            joker_mode=int(rules.joker_mode),
            upper_cap=int(rules.upper_cap),
            bonus_points=int(rules.bonus_points),
            yahtzee_bonus=int(rules.yahtzee_bonus),
            num_rows=int(rules.num_rows),
            num_upper=int(self.num_upper),
            num_yahtzee=int(self.num_yahtzee),
            rolls=int(rules.rolls_per_turn),
        )


def reachable_states(rules: RuleSet) -> np.ndarray:
    """Bool array (2**C, U, Y): which sheet states a game from the empty sheet can reach."""
    arrays = TurnArrays(rules)
    cap = rules.upper_cap
    upper_rows = [c for c, category in enumerate(rules.categories) if category.upper]
    row_points = [np.unique(np.concatenate([arrays.int_scores[:, c], arrays.int_joker_scores[:, c]])) for c in upper_rows]
    # Subtotals (capped) each subset of filled upper rows can hold, as a bool vector over 0..cap.
    by_filled = {}
    for subset in range(1 << len(upper_rows)):
        sums = np.zeros(cap + 1, dtype=bool)
        sums[0] = True
        for i, points in enumerate(row_points):
            if subset >> i & 1:
                grown = np.zeros_like(sums)
                for p in points:
                    shifted = np.flatnonzero(sums) + p
                    grown[np.minimum(shifted, cap)] = True
                sums = grown
        by_filled[subset] = sums
    open_sets = np.arange(arrays.num_open_sets)
    filled_index = np.zeros(len(open_sets), dtype=np.int64)
    for i, c in enumerate(upper_rows):
        filled_index |= (((open_sets >> c) & 1) == 0).astype(np.int64) << i
    reachable = np.zeros((arrays.num_open_sets, arrays.num_upper, arrays.num_yahtzee), dtype=bool)
    upper_ok = np.stack([by_filled[int(f)] for f in filled_index])  # (2**C, U)
    reachable[:, :, 0] = upper_ok
    if arrays.num_yahtzee == 2:
        yahtzee_filled = ((open_sets >> rules.yahtzee_row_index) & 1) == 0
        reachable[:, :, 1] = upper_ok & yahtzee_filled[:, None]
    return reachable


# -- the turn of one state, compiled ------------------------------------------------------------


@njit(cache=True)
def _state_parts(t, state):
    """``(open_bits, upper, yahtzee)`` of a flat state index into ``V``."""
    return state // (t.num_yahtzee * t.num_upper), (state // t.num_yahtzee) % t.num_upper, state % t.num_yahtzee


@njit(cache=True)
def turn_scratch(t, keep_rows):
    """Fresh work arrays for the turns of one thread; ``keep_rows`` 0 keeps no ``Kj`` of a turn."""
    num_hands, num_keeps = t.scores_by_row.shape[1], t.children.shape[0]
    return Scratch(
        np.empty(t.slot_points.shape),
        np.empty(num_hands),
        np.empty(num_hands),
        np.empty(num_keeps),
        np.zeros((keep_rows, num_keeps)),
    )


@njit(cache=True)
def _after_values(t, values, later, open_bits, upper, yahtzee, after):
    """``after[c, s]``: upper bonus earned plus ``V`` of the next state, for points ``slot_points[c, s]`` in row ``c``.

    What follows a score depends on the row and, for upper rows and the Yahtzee row, on the points
    written; those are few, so this is looked up once per state, not once per hand.
    """
    for c in range(t.num_rows):
        if (open_bits >> c) & 1:
            for s in range(t.num_slots[c]):
                points = t.slot_points[c, s]
                gain = 0.0
                next_upper = upper
                if (t.upper_bits >> c) & 1:
                    gain += upper_bonus(upper, points, t.upper_cap, t.bonus_points)
                    next_upper = min(upper + points, t.upper_cap)
                next_yahtzee = yahtzee
                if c == t.yahtzee_row and t.num_yahtzee == 2:
                    next_yahtzee = 1 if points > 0 else 0
                if later:
                    gain += values[((open_bits & ~(1 << c)) * t.num_upper + next_upper) * t.num_yahtzee + next_yahtzee]
                after[c, s] = gain


@njit(cache=True)
def _score_now(t, open_bits, yahtzee, after, out):
    """``W0`` of every hand for a state whose rows' ``after`` values are known, into ``out``."""
    num_hands = out.shape[0]
    out[:] = -np.inf
    for c in range(t.num_rows):
        if (open_bits >> c) & 1:
            for h in range(num_hands):
                value = t.scores_by_row[c, h] + after[c, t.slots_by_row[c, h]]
                if value > out[h]:
                    out[h] = value
    # Hands of five alike: the joker rule may restrict the rows or pay joker values; then the
    # extra-Yahtzee bonus, wherever they are scored.
    for i in range(t.alike_hands.shape[0]):
        h = t.alike_hands[i]
        legal, joker = placement(open_bits, True, t.face_rows[h], t.yahtzee_row, t.lower_bits, t.joker_mode)
        if joker or legal != open_bits:
            best = -np.inf
            for c in range(t.num_rows):
                if (legal >> c) & 1:
                    if joker:
                        value = t.joker_scores[h, c] + after[c, t.joker_slots[h, c]]
                    else:
                        value = t.scores_by_row[c, h] + after[c, t.slots_by_row[c, h]]
                    if value > best:
                        best = value
            out[h] = best
        out[h] += extra_yahtzee_bonus(True, yahtzee == 1, t.yahtzee_bonus)


@njit(cache=True)
def _reroll(t, hand_values, keep_values):
    """``Kj`` of every keep from ``W{j-1}`` of every hand, into ``keep_values``."""
    for h in range(hand_values.shape[0]):
        keep_values[t.hand_as_keep[h]] = hand_values[h]
    num_faces = t.children.shape[1]
    share = 1.0 / num_faces
    for i in range(t.average_order.shape[0]):
        k = t.average_order[i]
        total = 0.0
        for f in range(num_faces):
            total += keep_values[t.children[k, f]]
        keep_values[k] = total * share


@njit(cache=True)
def _best_reroll(t, keep_values, score_now, out):
    """``Wj`` of every hand: the better of scoring now and the best proper sub-keep.

    ``keep_values`` is overwritten, smallest keeps first, with the best over each keep's sub-keeps.
    """
    for i in range(t.max_order.shape[0]):
        k = t.max_order[i]
        best = keep_values[k]
        for slot in range(t.parent_counts[k]):
            best = max(best, keep_values[t.parents[k, slot]])
        keep_values[k] = best
    for h in range(out.shape[0]):
        k = t.hand_as_keep[h]
        best = score_now[h]
        for slot in range(t.parent_counts[k]):
            best = max(best, keep_values[t.parents[k, slot]])
        out[h] = best


@njit(cache=True)
def solve_turn(t, values, later, state, scratch):
    """Expected value of the turn of flat ``state`` before its first roll; ``later`` False values no later turn.

    Leaves ``W0`` in ``scratch.score_now``, the rows' ``after`` values in ``scratch.after`` and, when
    ``scratch.keep_out`` has rows, every ``Kj`` in ``scratch.keep_out[j]``.
    """
    open_bits, upper, yahtzee = _state_parts(t, state)
    _after_values(t, values, later, open_bits, upper, yahtzee, scratch.after)
    _score_now(t, open_bits, yahtzee, scratch.after, scratch.score_now)
    hand_values, keep_values = scratch.hand_values, scratch.keep_values
    hand_values[:] = scratch.score_now
    for rerolls_left in range(1, t.rolls):
        _reroll(t, hand_values, keep_values)
        if scratch.keep_out.shape[0] > 0:
            scratch.keep_out[rerolls_left] = keep_values
        _best_reroll(t, keep_values, scratch.score_now, hand_values)
    total = 0.0
    for h in range(hand_values.shape[0]):
        total += t.hand_probabilities[h] * hand_values[h]
    return total


@njit(cache=True, parallel=True)
def _solve_layer(t, values, later, states, num_chunks):
    """``V`` of every state index in ``states`` (one layer: same number of open rows), in parallel."""
    chunk = (states.shape[0] + num_chunks - 1) // num_chunks
    for part in prange(num_chunks):
        # Only calls take the scratch arrays here: numba (0.68) miscompiled a slice assignment into a
        # named tuple's array written directly in a prange body.
        scratch = turn_scratch(t, 0)
        for i in range(part * chunk, min(states.shape[0], (part + 1) * chunk)):
            values[states[i]] = solve_turn(t, values, later, states[i], scratch)


def solve_sheet_values(rules: RuleSet, plan_ahead: bool = True) -> np.ndarray:
    """``V`` of every reachable sheet state, shape (2**C, U, Y) float64, NaN where unreachable.

    With ``plan_ahead=False`` later turns are worth nothing (the myopic player): ``V(x)`` is then
    the expected points of one turn from state ``x``, bonuses included.
    """
    arrays = TurnArrays(rules)
    reachable = reachable_states(rules)
    values = np.full(reachable.shape, np.nan)
    values[0] = 0.0  # every row filled: nothing more to come
    flat = values.reshape(-1)
    open_counts = np.zeros(arrays.num_open_sets, dtype=np.int64)
    for c in range(rules.num_rows):
        open_counts += (np.arange(arrays.num_open_sets) >> c) & 1
    state_open_counts = np.broadcast_to(open_counts[:, None, None], reachable.shape).reshape(-1)
    reachable_flat = reachable.reshape(-1)
    representative = equivalent_states(rules, reachable).reshape(-1)
    solved_here = reachable_flat & (representative == np.arange(len(flat)))
    copies = np.flatnonzero(reachable_flat & ~solved_here)
    for m in range(1, rules.num_rows + 1):
        in_layer = state_open_counts == m
        states = np.flatnonzero(solved_here & in_layer).astype(np.int64)
        # Many more chunks than threads, so that threads that finish early take more work.
        _solve_layer(arrays.kernel, flat, plan_ahead, states, max(1, min(len(states), 64)))
        layer_copies = copies[in_layer[copies]]
        flat[layer_copies] = flat[representative[layer_copies]]
    values.setflags(write=False)
    return values


def equivalent_states(rules: RuleSet, reachable: np.ndarray) -> np.ndarray:
    """For each state, the flat index of a reachable state with the same value (itself, mostly).

    The upper subtotal stops mattering once the bonus is out of reach: when no upper row is open,
    or when the most the open upper rows can still add leaves it short of the threshold. All such
    subtotals of one ``(S, y)`` share one value, solved once (for the smallest of them) and copied.
    """
    num_open_sets, num_upper, num_yahtzee = reachable.shape
    index = np.arange(reachable.size).reshape(reachable.shape)
    if num_upper == 1:
        return index
    arrays = TurnArrays(rules)
    open_sets = np.arange(num_open_sets)
    most_to_come = np.zeros(num_open_sets, dtype=np.int64)
    for c, category in enumerate(rules.categories):
        if category.upper:
            best = int(max(arrays.int_scores[:, c].max(), arrays.int_joker_scores[:, c].max()))
            most_to_come += ((open_sets >> c) & 1) * best
    no_upper_open = (open_sets & rules.upper_bits) == 0
    subtotals = np.arange(num_upper)
    irrelevant = no_upper_open[:, None] | (subtotals[None, :] + most_to_come[:, None] < rules.upper_cap)
    irrelevant = irrelevant[:, :, None] & reachable  # (2**C, U, Y)
    first = np.argmax(irrelevant, axis=1)  # smallest irrelevant subtotal of each (S, y)
    representative = index.copy()
    s_index, u_index, y_index = np.nonzero(irrelevant)
    representative[s_index, u_index, y_index] = index[s_index, first[s_index, y_index], y_index]
    return representative


@njit(cache=True)
def score_row_values(t, open_bits, yahtzee, after, hand, alike, out):
    """Q of scoring ``hand`` in each row (``-inf`` where the rules forbid it), from the rows' ``after`` values, into ``out``."""
    legal, joker = placement(open_bits, alike, t.face_rows[hand], t.yahtzee_row, t.lower_bits, t.joker_mode)
    extra = extra_yahtzee_bonus(alike, yahtzee == 1, t.yahtzee_bonus)
    for c in range(t.num_rows):
        if (legal >> c) & 1:
            if joker:
                out[c] = t.joker_scores[hand, c] + after[c, t.joker_slots[hand, c]] + extra
            else:
                out[c] = t.scores_by_row[c, hand] + after[c, t.slots_by_row[c, hand]] + extra
        else:
            out[c] = -np.inf


@njit(cache=True)
def _q_values_rows(t, values, later, positions, keep_after_reroll, alike, q):
    """Q of every action of ``positions`` (their ``order`` groups them by state): each state's turn is run once.

    ``positions`` holds ``order``, ``hands``, ``rolls_left`` and ``state_index`` (flat into ``values``);
    row ``i`` of ``q`` gets position ``i``'s Q-values.
    """
    order, hands, rolls_left, state_index = positions
    first_score_action = keep_after_reroll.shape[1]
    scratch = turn_scratch(t, t.rolls)
    previous = -1
    for i in range(order.shape[0]):
        row = order[i]
        state = state_index[row]
        if state != previous:
            solve_turn(t, values, later, state, scratch)
            previous = state
        open_bits, _, yahtzee = _state_parts(t, state)
        h = hands[row]
        score_row_values(t, open_bits, yahtzee, scratch.after, h, alike[h], q[row, first_score_action:])
        if rolls_left[row] > 0:
            for action in range(1, first_score_action):
                q[row, action] = scratch.keep_out[rolls_left[row], keep_after_reroll[h, action]]


# -- the solution ------------------------------------------------------------------------------


class SheetSolution(ExactSolution):
    """Exact values of the optimal policy for a rule set with a sheet state (bonuses, jokers).

    - ``state_values``, shape (2**C, U, Y) float64, read-only: ``V(S, u, y)``, the expected points
      still to come (bonuses included) at the start of a turn with open rows ``S``, upper subtotal
      ``u`` (capped at the threshold; ``U = rules.upper_cap + 1``) and ``y`` = 1 when the Yahtzee
      box holds its full points (``Y`` = 2 with an extra-Yahtzee bonus, else 1). NaN for states no
      game reaches. 8 MiB for Yahtzee, 16 MiB for Yatzy.

    Q-values follow the action layout of :mod:`yacht_env.actions`, as :class:`agents.solvers.optimal.Solution`'s,
    and take the sheet beyond the open rows as ``upper_totals`` (the upper subtotal, capped here)
    and ``yahtzee_full`` (1 where the Yahtzee box holds its full points); each distinct state's
    turn is recomputed from ``V`` (tens of microseconds), as the keep values of a million states
    would not fit in memory.
    """

    def __init__(self, rules: RuleSet, state_values: np.ndarray, plan_ahead: bool = True):
        super().__init__(rules, state_values, plan_ahead)
        self.arrays = TurnArrays(rules)
        self.upper_cap = rules.upper_cap
        self._alike = rules.alike_hands.copy()

    def state_value(self, open_bits: int, upper_total: int = 0, yahtzee_full: int = 0) -> float:
        """``V`` of a sheet state at the start of a turn; ``ValueError`` for a state no game reaches."""
        check_range(np.array([open_bits]), 1, (1 << self.num_rows) - 1, "open_bits")
        rows, upper, yahtzee = self._check_state(np.array([open_bits]), np.array([upper_total]), np.array([yahtzee_full]))
        return float(self.state_values[rows[0], upper[0], yahtzee[0]])

    def q_values_batch(self, hands, rolls_left, open_bits, upper_totals=0, yahtzee_full=0) -> np.ndarray:
        """Q of every action for each position, shape (N, num_actions) float64; -inf if illegal.

        ``hands``: (N,) hand indices or (N, num_dice) dice in any order; the others scalars or (N,)
        arrays: ``rolls_left``, ``open_bits`` (nonzero), ``upper_totals`` (upper subtotal so far, any
        value >= 0), ``yahtzee_full`` (0/1). Illegal: action 0, re-rolls with no roll left, and rows
        that are closed or that the joker rule forbids. A score action's Q includes the bonuses it earns.
        """
        hands, rolls_left, open_bits, upper_totals, yahtzee_full = self._check_positions(
            hands, rolls_left, open_bits, upper_totals, yahtzee_full
        )
        open_bits, upper, yahtzee = self._check_state(open_bits, upper_totals, yahtzee_full)
        q = np.full((len(hands), self.num_actions), -np.inf)
        state_index = (open_bits * self.state_values.shape[1] + upper) * self.state_values.shape[2] + yahtzee
        order = np.argsort(state_index, kind="stable")
        positions = (order, hands.astype(np.int64), np.array(rolls_left), state_index)  # a contiguous copy, as compiled
        _q_values_rows(
            self.arrays.kernel, self.state_values.reshape(-1), self.plan_ahead, positions, self._keep_after_reroll, self._alike, q
        )
        return q

    def best_actions_batch(self, hands, rolls_left, open_bits, upper_totals=0, yahtzee_full=0) -> np.ndarray:
        """The optimal action of each position, shape (N,) int64; ties go to the lowest action index."""
        return best_actions(self.q_values_batch(hands, rolls_left, open_bits, upper_totals, yahtzee_full))

    def _check_state(self, open_bits, upper_totals, yahtzee_full):
        """The state's indices into ``state_values``, open bit sets already checked; ``ValueError`` naming a bad part."""
        if (upper_totals < 0).any():
            raise ValueError(f"upper total {int(upper_totals[upper_totals < 0][0])} is negative")
        check_range(yahtzee_full, 0, 1, "yahtzee_full")
        upper = np.minimum(upper_totals, self.upper_cap)
        yahtzee = yahtzee_full if self.state_values.shape[2] == 2 else np.zeros_like(yahtzee_full)
        unreachable = np.isnan(self.state_values[open_bits, upper, yahtzee])
        if unreachable.any():
            i = int(np.flatnonzero(unreachable)[0])
            raise ValueError(
                f"no game reaches open rows {int(open_bits[i]):#b} with upper total {int(upper_totals[i])}"
                f"{' and a full Yahtzee box' if yahtzee[i] else ''}: the filled rows cannot hold that"
            )
        return open_bits, upper, yahtzee
