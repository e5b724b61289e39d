"""The turn of a table planner, compiled: what each row and hand can lead to, and the turn planned through the dice.

Under any rule set (bonuses and jokers included) the mover's sheet at the start of a turn, ``(open rows, upper
subtotal capped at the threshold, Yahtzee box full)``, fixes what scoring a hand ``h`` in a row ``c`` does: the
points written (joker values where the joker rule says so), the bonuses earned (the upper bonus when the
subtotal crosses the threshold, the extra-Yahtzee bonus for five alike on a full Yahtzee box) and the sheet it
leaves. :func:`turn_outcomes` lists the distinct outcomes ``(row, points, extra bonus)`` of a turn (a few dozen to
a few hundred) and maps every legal ``(c, h)`` to one of them, so that a learned value is asked once per outcome,
not once per hand.

:func:`plan_turn` then plans the turn exactly through the dice probabilities, as the solitaire solver's turn does
(:mod:`agents.solvers.sheet_solver`: the same keep lattice, the same order of averages and maxima), with a vector
of ``n`` values at the end of each outcome (every seat's share of the win, the mover's first) instead of one number:
every choice maximizes column 0 (the mover's own share; the first of equals is kept) and carries the whole vector,
so that the turn's value is the expected vector of shares when the mover plays the turn best for itself.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from yacht_env.rules import extra_yahtzee_bonus, placement, upper_bonus


class PlanScratch(NamedTuple):
    """What one turn's planning writes, reused from turn to turn (``n`` value columns)."""

    score_now: np.ndarray  # (H, n): the vector of the best row for each hand (column 0 the largest)
    best_row: np.ndarray  # (H,) that row, -1 for a hand with no legal row
    hand_values: np.ndarray  # (H, n)
    keep_values: np.ndarray  # (K, n)
    keep_out: np.ndarray  # (rolls, K, n): each Kj of the turn, before the maxima
    turn_value: np.ndarray  # (n,) the turn's value before its first roll


@njit(cache=True)
def plan_scratch(t, n):
    """Fresh work arrays for turns of ``n`` value columns."""
    num_hands, num_keeps = t.scores_by_row.shape[1], t.children.shape[0]
    return PlanScratch(
        np.empty((num_hands, n)),
        np.empty(num_hands, dtype=np.int64),
        np.empty((num_hands, n)),
        np.empty((num_keeps, n)),
        np.zeros((t.rolls, num_keeps, n)),
        np.empty(n),
    )


@njit(cache=True)
def outcome_key_count(t):
    """How many distinct ``(row, points, extra bonus)`` keys a turn can have: the size of the key space."""
    most = 0.0
    for c in range(t.num_rows):
        for h in range(t.scores_by_row.shape[1]):
            most = max(most, t.scores_by_row[c, h], t.joker_scores[h, c])
    return t.num_rows * (int(most) + 1) * 2


@njit(cache=True)
def turn_outcomes(t, alike, open_bits, upper, yahtzee, out_index, rows, gains, uppers, yahtzees):
    """The outcomes of each mover's turn: ``out_index[i, c, h]`` the outcome of scoring hand ``h`` in row ``c``
    (-1 where the rules forbid it), and per outcome ``m`` its row, points gained (bonuses included), the upper
    subtotal (capped) and the Yahtzee box flag it leaves. Returns the number of outcomes of each turn.
    """
    num_hands = t.scores_by_row.shape[1]
    key_space = rows.shape[1]
    width = key_space // (2 * t.num_rows)
    slot = np.full(key_space, -1, dtype=np.int64)
    used = np.empty(key_space, dtype=np.int64)
    counts = np.zeros(open_bits.shape[0], dtype=np.int64)
    for i in range(open_bits.shape[0]):
        count = 0
        for h in range(num_hands):
            legal, joker = placement(open_bits[i], alike[h], t.face_rows[h], t.yahtzee_row, t.lower_bits, t.joker_mode)
            extra = extra_yahtzee_bonus(alike[h], yahtzee[i] == 1, t.yahtzee_bonus)
            for c in range(t.num_rows):
                if not (legal >> c) & 1:
                    out_index[i, c, h] = -1
                    continue
                points = int(t.joker_scores[h, c]) if joker else int(t.scores_by_row[c, h])
                key = (c * width + points) * 2 + (1 if extra > 0 else 0)
                if slot[key] < 0:
                    slot[key], used[count] = count, key
                    gain, next_upper, next_yahtzee = points + extra, upper[i], yahtzee[i]
                    if (t.upper_bits >> c) & 1:
                        gain += upper_bonus(upper[i], points, t.upper_cap, t.bonus_points)
                        next_upper = min(upper[i] + points, t.upper_cap)
                    if c == t.yahtzee_row and t.num_yahtzee == 2:
                        next_yahtzee = 1 if points > 0 else 0
                    rows[i, count], gains[i, count] = c, gain
                    uppers[i, count], yahtzees[i, count] = next_upper, next_yahtzee
                    count += 1
                out_index[i, c, h] = slot[key]
        for m in range(count):  # only the keys used are reset: the key space is much larger than a turn's outcomes
            slot[used[m]] = -1
        counts[i] = count
    return counts


@njit(cache=True)
def _score_now(t, out_index, ends, scratch):
    """Each hand's best row under the end vectors ``ends[out_index[c, h]]`` (column 0), into the scratch."""
    for h in range(out_index.shape[1]):
        best = -1
        for c in range(out_index.shape[0]):
            m = out_index[c, h]
            if m >= 0 and (best < 0 or ends[m, 0] > ends[out_index[best, h], 0]):
                best = c
        scratch.best_row[h] = best
        if best < 0:
            scratch.score_now[h, :] = -np.inf
        else:
            _copy(ends[out_index[best, h]], scratch.score_now[h])


@njit(cache=True)
def _copy(source, target):
    for j in range(source.shape[0]):
        target[j] = source[j]


@njit(cache=True)
def _reroll(t, hand_values, keep_values):
    """``Kj`` of every keep (each a vector) from ``W{j-1}`` of every hand: the average over the next die's faces."""
    for h in range(hand_values.shape[0]):
        _copy(hand_values[h], keep_values[t.hand_as_keep[h]])
    num_faces, n = t.children.shape[1], keep_values.shape[1]
    share = 1.0 / num_faces
    for i in range(t.average_order.shape[0]):
        k = t.average_order[i]
        for j in range(n):
            total = 0.0
            for f in range(num_faces):
                total += keep_values[t.children[k, f], j]
            keep_values[k, j] = total * share


@njit(cache=True)
def _best_reroll(t, keep_values, score_now, out):
    """``Wj`` of every hand: the better (column 0) of scoring now and the best proper sub-keep, whole vectors."""
    for i in range(t.max_order.shape[0]):
        k = t.max_order[i]
        best = k
        for slot in range(t.parent_counts[k]):
            if keep_values[t.parents[k, slot], 0] > keep_values[best, 0]:
                best = t.parents[k, slot]
        if best != k:
            _copy(keep_values[best], keep_values[k])
    for h in range(out.shape[0]):
        k = t.hand_as_keep[h]
        best = -1
        for slot in range(t.parent_counts[k]):
            parent = t.parents[k, slot]
            if keep_values[parent, 0] > (score_now[h, 0] if best < 0 else keep_values[best, 0]):
                best = parent
        _copy(score_now[h] if best < 0 else keep_values[best], out[h])


@njit(cache=True)
def plan_turn(t, out_index, ends, scratch):
    """Plan one turn whose outcomes' end vectors are ``ends`` (M, n); ``scratch.turn_value`` gets the turn's value.

    Leaves the hands' best rows and vectors in ``scratch.score_now``/``best_row`` and every ``Kj`` in ``keep_out[j]``.
    """
    n = ends.shape[1]
    if scratch.turn_value.shape[0] != n:  # the kernels write rows without bounds checks: a narrower scratch overruns
        raise ValueError("plan_turn: the scratch's width is not the number of value columns of the ends")
    _score_now(t, out_index, ends, scratch)
    for h in range(scratch.hand_values.shape[0]):
        _copy(scratch.score_now[h], scratch.hand_values[h])
    for rerolls_left in range(1, t.rolls):
        _reroll(t, scratch.hand_values, scratch.keep_values)
        for k in range(scratch.keep_values.shape[0]):
            _copy(scratch.keep_values[k], scratch.keep_out[rerolls_left, k])
        _best_reroll(t, scratch.keep_values, scratch.score_now, scratch.hand_values)
    for j in range(n):
        total = 0.0
        for h in range(scratch.hand_values.shape[0]):
            total += t.hand_probabilities[h] * scratch.hand_values[h, j]
        scratch.turn_value[j] = total


@njit(cache=True)
def decision_values(t, out_index, ends, turn_of, hands, rolls_left, keep_after_reroll, first_score, out):
    """``out[d, a]``: the mover's planned share after action ``a`` at decision ``d`` of turn ``turn_of[d]``.

    ``out_index`` (T, C, H) and ``ends`` (T, M, n) are the turns'; decisions of one turn are best given together
    (the turn is planned once for a run of equal ``turn_of``). Illegal actions keep the ``-inf`` they came with.
    """
    scratch = plan_scratch(t, ends.shape[2])
    previous = -1
    for d in range(turn_of.shape[0]):
        turn = turn_of[d]
        if turn != previous:
            plan_turn(t, out_index[turn], ends[turn], scratch)
            previous = turn
        h = hands[d]
        for c in range(out_index.shape[1]):
            m = out_index[turn, c, h]
            if m >= 0:
                out[d, first_score + c] = ends[turn, m, 0]
        if rolls_left[d] > 0:
            for action in range(1, first_score):
                out[d, action] = scratch.keep_out[rolls_left[d], keep_after_reroll[h, action], 0]
