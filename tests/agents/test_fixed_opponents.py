"""The best response's fixed opponents: every tabulated decision is the solitaire policy's own, set by set.

The table is built in batches of open-row sets; a game of nine rows (511 sets) spans two batches, so a batch
bound that skips or repeats a set shows here. The reference asks the solution one open set at a time.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.solvers import optimal
from agents.two_player.opponents import SETS_PER_BATCH, fixed_policy
from yacht_env.actions import ActionLayout
from yacht_env.rules import Category, RuleSet, all_alike, of_a_kind, total, upper

NINE_ROWS = RuleSet(
    name="nine_rows",
    categories=(
        Category("ones", upper(1)),
        Category("twos", upper(2)),
        Category("threes", upper(3)),
        Category("pair", of_a_kind(2)),
        Category("choice", total),
        Category("yacht", all_alike(10)),
        Category("low_choice", total),
        Category("triple", of_a_kind(3)),
        Category("big_yacht", all_alike(20)),
    ),
    num_dice=3,
    num_faces=3,
    rolls_per_turn=3,
)


@pytest.fixture(scope="module")
def nine_rows(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        solutions = {"optimal": optimal.solve(NINE_ROWS), "greedy": optimal.solve_myopic(NINE_ROWS)}
        movers = {name: fixed_policy(NINE_ROWS, name) for name in solutions}
    return solutions, movers


def decisions_of_one_set(solution, open_bits: int):
    """The row scored with no rolls left, and the keep of each re-roll, for every hand of one open set."""
    dice, layout = NINE_ROWS.dice, ActionLayout(NINE_ROWS)
    hands = np.arange(dice.num_hands)
    rows = solution.best_actions_batch(hands, 0, open_bits) - layout.first_score_action
    keeps = np.full((NINE_ROWS.rolls_per_turn, dice.num_hands), -1)
    for rolls_left in range(1, NINE_ROWS.rolls_per_turn):
        for hand, action in zip(hands, solution.best_actions_batch(hands, rolls_left, open_bits)):
            if action < layout.first_score_action:
                keeps[rolls_left, hand] = dice.keep_after_reroll[hand, action]
    return rows, keeps


def test_the_game_spans_more_than_one_batch():
    assert (1 << NINE_ROWS.num_rows) - 1 > SETS_PER_BATCH


@pytest.mark.parametrize("name", ["optimal", "greedy"])
def test_every_open_set_is_the_solutions_own(nine_rows, name):
    solutions, movers = nine_rows
    mover = movers[name]
    for open_bits in range(1, 1 << NINE_ROWS.num_rows):
        rows, keeps = decisions_of_one_set(solutions[name], open_bits)
        assert np.array_equal(mover.row[open_bits], rows), f"{name}: the scored rows of open set {open_bits}"
        assert np.array_equal(mover.keep[open_bits], keeps), f"{name}: the keeps of open set {open_bits}"
        assert ((open_bits >> mover.row[open_bits]) & 1).all(), f"{name}: a closed row scored in open set {open_bits}"


def test_unknown_opponents_are_refused():
    with pytest.raises(ValueError, match="unknown opponent 'perfect'; expected one of optimal, greedy"):
        fixed_policy(NINE_ROWS, "perfect")
