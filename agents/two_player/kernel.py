"""The compiled turn of the two-player game: one pair of open-row sets, a block of leads at once.

For a fixed pair ``(A, B)`` every step of the mover's turn is the same for every lead ``d``
except the points a row adds, so the turn runs on blocks of :data:`BLOCK` consecutive leads: each
keep's and each hand's value is a short vector over ``d`` and the inner loops are plain SIMD loops.

- Ending the turn in row ``r`` with ``p`` points leaves the other to move at ``(B, A - r, -(d + p))``, so
  it is worth ``g_r(d + p) = 1 - V(B, A - r, -(d + p))`` to the mover; ``g_r`` is gathered once per block
  from the layer below (:func:`_follow_values`), and scoring hand ``h`` now is worth
  ``W0[h] = max_r g_r(d + score(h, r))``.
- Re-rolls are valued as the solitaire solver does (:mod:`agents.solvers.sheet_solver`): a keep's value is the
  mean over faces of the keep one die larger, and a hand's the better of scoring now and its best proper
  sub-keep.
- A mover with fixed decisions (``fixed``: a best response's opponent) takes its policy's row and keeps
  instead of the best ones: the same turn with a lookup in place of each max.

Values are stored as ``uint16`` fixed point, ``round(V * SCALE)``; the layer below is read back from that,
so a layer depends only on the stored layer under it (a resumed solve is bit-identical).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

BLOCK = 64  # leads per vector: 8 AVX2 registers of float32
SCALE = 65534.0  # fixed point of a stored value: 1/2 (a tie) is exact


class KernelArrays(NamedTuple):
    """What the compiled turn reads of the rules and of the dice (see :func:`kernel_arrays`)."""

    scores: np.ndarray  # (C, H) int64: points of hand h in row c
    row_max: np.ndarray  # (C,) int64: the most each row pays
    hand_probabilities: np.ndarray  # (H,) float32: P(h) of one roll of every die
    hand_as_keep: np.ndarray  # (H,) int64
    average_order: np.ndarray  # keeps that re-roll something, largest first
    children: np.ndarray  # (K, faces): the keep one more die of each face makes
    max_order: np.ndarray  # proper, non-empty keeps, smallest first
    parents: np.ndarray  # (K, dice): the keeps one die fewer makes
    parent_counts: np.ndarray  # (K,) distinct parents of each keep
    rank: np.ndarray  # (2**C,) position of an open set among the sets of its size
    num_rows: int
    rolls: int


class LayerArrays(NamedTuple):
    """One layer as the kernel sees it (see :class:`agents.two_player.layout.Layer`) and its stored values."""

    mover_sets: np.ndarray
    other_sets: np.ndarray
    lo: np.ndarray
    width: np.ndarray
    offset: np.ndarray
    values: np.ndarray  # uint16, round(V * SCALE)


class FixedMover(NamedTuple):
    """A fixed mover's decisions, from its own open rows and dice only; ``fixed`` False means a maximizing mover."""

    fixed: bool
    row: np.ndarray  # (2**C, H) int64: the row it scores hand h in, with open rows S
    keep: np.ndarray  # (2**C, rolls, H) int64: the keep it holds with j re-rolls left, -1 to score now


def kernel_arrays(rules, layout) -> KernelArrays:
    """The kernel's arrays for ``rules`` and its :class:`~agents.two_player.layout.PairLayout`."""
    from agents.solvers.sheet_solver import TurnArrays as SolitaireTurnArrays

    solitaire = SolitaireTurnArrays(rules)  # the keep orders and links, shared with the solitaire solver
    return KernelArrays(
        scores=np.ascontiguousarray(rules.hand_scores.T, dtype=np.int64),
        row_max=layout.row_max.astype(np.int64),
        hand_probabilities=rules.dice.hand_probabilities.astype(np.float32),
        hand_as_keep=solitaire.hand_as_keep.astype(np.int64),
        average_order=solitaire.average_order.astype(np.int64),
        children=solitaire.children.astype(np.int64),
        max_order=solitaire.max_order.astype(np.int64),
        parents=solitaire.parents.astype(np.int64),
        parent_counts=solitaire.parent_counts.astype(np.int64),
        rank=layout.rank.astype(np.int64),
        num_rows=int(rules.num_rows),
        rolls=int(rules.rolls_per_turn),
    )


class Scratch(NamedTuple):
    """What one block's turn writes as it goes; one per thread.

    The ``*_bits`` arrays are the same memory as int32: values are in [0, 1], and non-negative floats
    order as their bit patterns do, so maxima are taken on those (LLVM vectorizes an integer max, not
    a float one).
    """

    rows: np.ndarray  # (C,) the open rows of the mover
    follow: np.ndarray  # (C, lanes + most a row pays) float32: g_r of each open row
    score_now: np.ndarray  # (H, lanes) W0
    hand_values: np.ndarray  # (H, lanes) Wj
    keep_values: np.ndarray  # (K, lanes) Kj
    keep_out: np.ndarray  # (rolls, K, lanes) every Kj of the turn, or (0, K, lanes) when not wanted
    turn_values: np.ndarray  # (lanes,) V
    follow_bits: np.ndarray
    score_bits: np.ndarray
    hand_bits: np.ndarray
    keep_bits: np.ndarray


@njit(cache=True, fastmath=True)
def new_scratch(t, keep_rolls, lanes=BLOCK):
    """Scratch arrays for one thread; ``keep_rolls`` rows of ``keep_out`` (0 when the keep values are not wanted).

    ``lanes``: the leads a block covers, :data:`BLOCK` in the solve; a single decision needs only one.
    """
    num_hands = t.hand_as_keep.shape[0]
    num_keeps = t.children.shape[0]
    follow = np.zeros((t.num_rows, lanes + t.row_max.max() + 1), dtype=np.float32)
    score_now = np.zeros((num_hands, lanes), dtype=np.float32)
    hand_values = np.zeros((num_hands, lanes), dtype=np.float32)
    keep_values = np.zeros((num_keeps, lanes), dtype=np.float32)
    return Scratch(
        np.zeros(t.num_rows, dtype=np.int64),
        follow,
        score_now,
        hand_values,
        keep_values,
        np.zeros((keep_rolls, num_keeps, lanes), dtype=np.float32),
        np.zeros(lanes, dtype=np.float32),
        follow.view(np.int32),
        score_now.view(np.int32),
        hand_values.view(np.int32),
        keep_values.view(np.int32),
    )


@njit(cache=True, fastmath=True)
def _follow_values(t, below, mover, other, d0, scratch):
    """``follow[i, x] = g_r(d0 + x)`` for the ``i``-th open row ``r`` of the mover; returns how many rows are open."""
    num_other = below.other_sets.shape[0]
    lanes = scratch.turn_values.shape[0]
    count = 0
    for c in range(t.num_rows):
        if (mover >> c) & 1:
            q = t.rank[other] * num_other + t.rank[mover & ~(1 << c)]
            lo, width, offset = below.lo[q], below.width[q], below.offset[q]
            for x in range(lanes + t.row_max[c]):
                index = -(d0 + x) - lo  # where -(d + p) sits among the next pair's stored leads
                if index < 0:
                    value = np.float32(1.0)  # the next mover is behind by more than it can score: it has lost
                elif index >= width:
                    value = np.float32(0.0)
                else:
                    # (SCALE - stored) is exact: the value is >= 0, as the integer maxima need
                    value = np.float32(SCALE - below.values[offset + index]) * np.float32(1.0 / SCALE)
                scratch.follow[count, x] = value
            scratch.rows[count] = c
            count += 1
    return count


# The inner loops below run over one row of a block through row views, to a trip count known only at
# run time (``n``): so written, LLVM vectorizes them with AVX2 (a constant count is unrolled into scalar
# code, as the rows might overlap); maxima are integer maxima of the ``*_bits`` views (see Scratch).


@njit(cache=True, fastmath=True)
def _score_now(t, policy, mover, count, scratch):
    """``W0`` of every hand into ``scratch.score_now``: its best row, or the fixed mover's row."""
    follow = scratch.follow_bits
    n = scratch.turn_values.shape[0]
    for h in range(scratch.score_bits.shape[0]):
        out = scratch.score_bits[h]
        if policy.fixed:
            chosen = policy.row[mover, h]
            for i in range(count):
                if scratch.rows[i] == chosen:
                    source = follow[i, t.scores[chosen, h] :]
                    for j in range(n):
                        out[j] = source[j]
            continue
        # Sliced at the row's points, so that the index is j alone (an index that might be negative is
        # wrapped around by numba, which keeps LLVM from vectorizing).
        source = follow[0, t.scores[scratch.rows[0], h] :]
        for j in range(n):
            out[j] = source[j]
        for i in range(1, count):
            source = follow[i, t.scores[scratch.rows[i], h] :]
            for j in range(n):
                out[j] = max(out[j], source[j])


@njit(cache=True, fastmath=True)
def _reroll(t, hand_values, keep_values):
    """``Kj`` of every keep from ``W{j-1}`` of every hand: the mean over faces of the keep one die larger."""
    n = keep_values.shape[1]
    for h in range(hand_values.shape[0]):
        out, source = keep_values[t.hand_as_keep[h]], hand_values[h]
        for j in range(n):
            out[j] = source[j]
    num_faces = t.children.shape[1]
    share = np.float32(1.0 / num_faces)
    for i in range(t.average_order.shape[0]):
        k = t.average_order[i]
        out = keep_values[k]
        if num_faces == 6:  # the common dice, unrolled: one pass over the block
            c0, c1, c2 = keep_values[t.children[k, 0]], keep_values[t.children[k, 1]], keep_values[t.children[k, 2]]
            c3, c4, c5 = keep_values[t.children[k, 3]], keep_values[t.children[k, 4]], keep_values[t.children[k, 5]]
            for j in range(n):
                out[j] = (c0[j] + c1[j] + c2[j] + c3[j] + c4[j] + c5[j]) * share
            continue
        first = keep_values[t.children[k, 0]]
        for j in range(n):
            out[j] = first[j]
        for f in range(1, num_faces):
            child = keep_values[t.children[k, f]]
            for j in range(n):
                out[j] += child[j]
        for j in range(n):
            out[j] *= share


@njit(cache=True, fastmath=True)
def _best_reroll(t, keep_bits, score_bits, out):
    """``Wj`` of every hand: the better of scoring now and its best proper sub-keep (overwrites the keeps).

    All three arrays are the int32 views of :class:`Scratch`.
    """
    n = keep_bits.shape[1]
    for i in range(t.max_order.shape[0]):
        k = t.max_order[i]
        best = keep_bits[k]
        for slot in range(t.parent_counts[k]):
            parent = keep_bits[t.parents[k, slot]]
            for j in range(n):
                best[j] = max(best[j], parent[j])
    for h in range(out.shape[0]):
        k = t.hand_as_keep[h]
        best, now = out[h], score_bits[h]
        for j in range(n):
            best[j] = now[j]
        for slot in range(t.parent_counts[k]):
            parent = keep_bits[t.parents[k, slot]]
            for j in range(n):
                best[j] = max(best[j], parent[j])


@njit(cache=True, fastmath=True)
def _fixed_reroll(policy, mover, rerolls_left, keep_values, score_now, out):
    """``Wj`` of every hand for a fixed mover: the value of the keep its policy holds, or of scoring now."""
    for h in range(out.shape[0]):
        keep = policy.keep[mover, rerolls_left, h]
        out[h] = score_now[h] if keep < 0 else keep_values[keep]


@njit(cache=True, fastmath=True)
def block_turn(t, below, policy, mover, other, d0, scratch):
    """``V(mover, other, d0 + j)`` for ``j`` below the scratch's lanes (:data:`BLOCK` in the solve) into
    ``scratch.turn_values``; every ``Kj`` too when wanted.
    """
    count = _follow_values(t, below, mover, other, d0, scratch)
    turn_from_follow(t, policy, mover, count, scratch)


@njit(cache=True, fastmath=True)
def turn_from_follow(t, policy, mover, count, scratch):
    """The turn of :func:`block_turn` once ``scratch.follow`` holds the end values of the mover's ``count`` open
    rows (``scratch.rows``): whatever gave them, the solved layer below or a learned value (:mod:`agents.learned.plan2`).
    """
    _score_now(t, policy, mover, count, scratch)
    hand_values, keep_values = scratch.hand_values, scratch.keep_values
    hand_values[:] = scratch.score_now
    for rerolls_left in range(1, t.rolls):
        _reroll(t, hand_values, keep_values)
        if scratch.keep_out.shape[0] > 0:
            scratch.keep_out[rerolls_left] = keep_values
        if policy.fixed:
            _fixed_reroll(policy, mover, rerolls_left, keep_values, scratch.score_now, hand_values)
        else:
            _best_reroll(t, scratch.keep_bits, scratch.score_bits, scratch.hand_bits)
    out = scratch.turn_values
    n = out.shape[0]
    out[:] = 0.0
    for h in range(hand_values.shape[0]):
        p, values = t.hand_probabilities[h], hand_values[h]
        for j in range(n):
            out[j] += p * values[j]


@njit(cache=True, fastmath=True)
def _solve_pair(t, below, policy, layer, pair, scratch):
    """Every stored ``V`` of one pair of the layer, written as fixed point into ``layer.values``."""
    num_other = layer.other_sets.shape[0]
    mover, other = layer.mover_sets[pair // num_other], layer.other_sets[pair % num_other]
    lo, width, offset = layer.lo[pair], layer.width[pair], layer.offset[pair]
    for start in range(0, width, BLOCK):
        block_turn(t, below, policy, mover, other, lo + start, scratch)
        _store(scratch.turn_values, layer.values, offset + start, min(BLOCK, width - start))


@njit(cache=True, fastmath=True)
def _store(turn_values, values, at, count):
    """The first ``count`` values of a block, clipped to [0, 1], as fixed point into ``values[at:]``."""
    for j in range(count):
        value = min(max(turn_values[j], np.float32(0.0)), np.float32(1.0))
        values[at + j] = np.uint16(np.floor(value * np.float32(SCALE) + np.float32(0.5)))


@njit(cache=True, nogil=True, fastmath=True)
def solve_pairs(t, below, policy, layer, first, last):
    """Pairs ``first .. last - 1`` of ``layer``; ``below`` holds the layer under it.

    Releases the GIL: the solve runs one such call per core from a pool of threads, each taking the
    next batch when done, which keeps both cores busy on a shared machine (a static split of a
    ``prange`` left one thread waiting for the other whenever the other was descheduled).
    """
    scratch = new_scratch(t, 0)
    for pair in range(first, last):
        _solve_pair(t, below, policy, layer, pair, scratch)


# -- a strategy played against a fixed policy: the game's decisions, valued under another table --------------


@njit(cache=True, fastmath=True)
def _follow_score_now(t, count, guide, scratch):
    """``W0`` of every hand in both scratches: the row ``guide`` values most (the first of equals), valued in ``scratch``."""
    n = scratch.turn_values.shape[0]
    for h in range(scratch.score_now.shape[0]):
        best, value = guide.score_now[h], scratch.score_now[h]
        row = scratch.rows[0]
        for j in range(n):
            best[j] = guide.follow[0, t.scores[row, h] + j]
            value[j] = scratch.follow[0, t.scores[row, h] + j]
        for i in range(1, count):
            row = scratch.rows[i]
            offset = t.scores[row, h]
            for j in range(n):
                candidate = guide.follow[i, offset + j]
                if candidate > best[j]:
                    best[j] = candidate
                    value[j] = scratch.follow[i, offset + j]


@njit(cache=True, fastmath=True)
def _follow_best_reroll(t, guide, scratch):
    """``Wj`` of every hand in both scratches: the better of scoring now and the best proper sub-keep by ``guide``'s
    values (the first of equals), valued in ``scratch``: :func:`_best_reroll` with the choice carried along.
    """
    n = scratch.turn_values.shape[0]
    guide_keeps, keeps = guide.keep_values, scratch.keep_values
    for i in range(t.max_order.shape[0]):
        k = t.max_order[i]
        for slot in range(t.parent_counts[k]):
            parent = t.parents[k, slot]
            for j in range(n):
                if guide_keeps[parent, j] > guide_keeps[k, j]:
                    guide_keeps[k, j] = guide_keeps[parent, j]
                    keeps[k, j] = keeps[parent, j]
    for h in range(scratch.hand_values.shape[0]):
        k = t.hand_as_keep[h]
        for j in range(n):
            guide.hand_values[h, j] = guide.score_now[h, j]
            scratch.hand_values[h, j] = scratch.score_now[h, j]
        for slot in range(t.parent_counts[k]):
            parent = t.parents[k, slot]
            for j in range(n):
                if guide_keeps[parent, j] > guide.hand_values[h, j]:
                    guide.hand_values[h, j] = guide_keeps[parent, j]
                    scratch.hand_values[h, j] = keeps[parent, j]


@njit(cache=True, fastmath=True)
def block_turn_following(t, guide_below, below, mover, other, d0, guide, scratch):
    """The turn of a mover who decides as the values ``guide_below`` say (the solved game's), valued under ``below``.

    ``scratch.turn_values`` gets the mover's chance of winning under the values of ``below`` (a strategy
    played against a fixed opponent) when each row and keep is the one of highest value under
    ``guide_below`` (the first of equals in the turn's order); ``guide`` is a second scratch for those values.
    """
    count = _follow_values(t, guide_below, mover, other, d0, guide)
    _follow_values(t, below, mover, other, d0, scratch)
    _follow_score_now(t, count, guide, scratch)
    guide.hand_values[:] = guide.score_now
    scratch.hand_values[:] = scratch.score_now
    for _ in range(1, t.rolls):
        _reroll(t, guide.hand_values, guide.keep_values)
        _reroll(t, scratch.hand_values, scratch.keep_values)
        _follow_best_reroll(t, guide, scratch)
    out = scratch.turn_values
    n = out.shape[0]
    out[:] = 0.0
    for h in range(scratch.hand_values.shape[0]):
        p, values = t.hand_probabilities[h], scratch.hand_values[h]
        for j in range(n):
            out[j] += p * values[j]


@njit(cache=True, nogil=True, fastmath=True)
def solve_pairs_following(t, guide_below, below, layer, first, last):
    """:func:`solve_pairs` for a mover who decides by the values ``guide_below`` (see :func:`block_turn_following`)."""
    guide, scratch = new_scratch(t, 0), new_scratch(t, 0)
    num_other = layer.other_sets.shape[0]
    for pair in range(first, last):
        mover, other = layer.mover_sets[pair // num_other], layer.other_sets[pair % num_other]
        lo, width, offset = layer.lo[pair], layer.width[pair], layer.offset[pair]
        for start in range(0, width, BLOCK):
            block_turn_following(t, guide_below, below, mover, other, lo + start, guide, scratch)
            _store(scratch.turn_values, layer.values, offset + start, min(BLOCK, width - start))
