"""Two-player decisions, many at once: each action's chance of winning, compiled.

A decision is a turn-start state ``(mover, other, d)`` (open-row bit sets and the mover's lead) with the
mover's sorted hand and rolls left. From a solved game, its action values come from the layer under the
turn (:func:`agents.two_player.kernel.block_turn` on a block that starts at ``d``): the same arithmetic as
the solve, so a decision's best value is the state value the solve stored (to its rounding). From a
learned value (:mod:`agents.learned.plan2`), the turn's end values are given and the same turn runs on them
(:func:`learned_action_values`).

These kernels only copy values (the arithmetic is the turn's, compiled with its own flags in
:mod:`agents.two_player.kernel`), so they are compiled without fastmath: it would speed up nothing here, and
its assumption of no infinities does not hold for values that are ``-inf`` where an action is illegal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.two_player.kernel import block_turn, new_scratch, turn_from_follow


@njit(cache=True)
def action_values_batch(t, below, policy, movers, others, leads, hands, rolls_left, keep_after_reroll, first_score, out):
    """``out[i, a]``: the mover's chance of winning after action ``a`` at decision ``i``; ``-inf`` where illegal.

    Every decision of one call is in the layer whose layer under it is ``below``. Actions as in
    :mod:`yacht_env.actions`: re-roll masks ``1 .. first_score - 1`` over the sorted dice (legal with rolls
    left), then a row each (legal when open).
    """
    scratch = new_scratch(t, t.rolls, 1)  # one lead per decision
    for i in range(movers.shape[0]):
        block_turn(t, below, policy, movers[i], others[i], leads[i], scratch)
        read_actions(t, scratch, movers[i], hands[i], rolls_left[i], keep_after_reroll, first_score, out[i])


@njit(cache=True)
def read_actions(t, scratch, mover, hand, rolls_left, keep_after_reroll, first_score, out):
    """``out[a]``: the value of action ``a`` in a turn whose one-lane ``scratch`` holds its values (``-inf`` where illegal)."""
    out[:] = -np.inf
    for slot in range(t.num_rows):
        if (mover >> slot) & 1 == 0:
            continue
        for j in range(t.num_rows):
            if scratch.rows[j] == slot:
                out[first_score + slot] = scratch.follow[j, t.scores[slot, hand]]
                break
    if rolls_left > 0:
        for mask in range(1, min(first_score, keep_after_reroll.shape[1])):
            out[mask] = scratch.keep_out[rolls_left, keep_after_reroll[hand, mask], 0]


@njit(cache=True)
def fill_follow(t, end_values, mover, scratch):
    """``scratch.follow`` of a one-lane turn from ``end_values[c, p]`` (``p`` points in open row ``c``); returns the rows open."""
    count = 0
    for c in range(t.num_rows):
        if (mover >> c) & 1:
            for x in range(end_values.shape[1]):
                scratch.follow[count, x] = end_values[c, x]
            scratch.rows[count] = c
            count += 1
    return count


@njit(cache=True)
def learned_action_values(t, policy, end_values, movers, hands, rolls_left, keep_after_reroll, first_score, out):
    """``out[i, a]``: the value of action ``a`` at decision ``i`` when ending its turn is worth ``end_values[i]`` (C, points)."""
    scratch = new_scratch(t, t.rolls, 1)
    for i in range(movers.shape[0]):
        count = fill_follow(t, end_values[i], movers[i], scratch)
        turn_from_follow(t, policy, movers[i], count, scratch)
        read_actions(t, scratch, movers[i], hands[i], rolls_left[i], keep_after_reroll, first_score, out[i])


def grouped_action_values(solution, movers, others, leads, hands, rolls_left) -> np.ndarray:
    """Action values of many decisions (arrays of equal length) from ``solution``, (N, num_actions) float64.

    Decisions are grouped by layer (each group reads one layer under it); states off a stored range read
    their exact 0 or 1, as the solve does.
    """
    from agents.two_player.solve import layer_arrays

    layout, arrays = solution.layout, solution.arrays
    movers, others = np.asarray(movers, dtype=np.int64), np.asarray(others, dtype=np.int64)
    leads, hands = np.asarray(leads, dtype=np.int64), np.asarray(hands, dtype=np.int64)
    rolls_left = np.asarray(rolls_left, dtype=np.int64)
    out = np.full((len(movers), solution.actions.num_actions), -np.inf, dtype=np.float32)
    num_open = layout.open_counts[movers] + layout.open_counts[others]
    for layer in np.unique(num_open):
        rows = np.flatnonzero(num_open == layer)
        below = layer_arrays(layout.layers[layer - 1], np.asarray(solution.layers[layer - 1]))
        part = np.empty((len(rows), out.shape[1]), dtype=np.float32)
        action_values_batch(
            arrays,
            below,
            solution.policies[layer % 2],
            movers[rows],
            others[rows],
            leads[rows],
            hands[rows],
            rolls_left[rows],
            solution.keep_after_reroll,
            solution.actions.first_score_action,
            part,
        )
        out[rows] = part
    return out.astype(np.float64)
