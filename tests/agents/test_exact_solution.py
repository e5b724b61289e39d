"""What every exact solution shares (agents/solvers/exact_solution.py): ties within TIE_RELATIVE, the lowest index among
ties, the expected score read off the empty sheet's state, and the positions checked against the rules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from agents.solvers.exact_solution import TIE_RELATIVE, ExactSolution, best_actions, gaps_to_best
from yacht_env.actions import ActionLayout
from yacht_env.rules import RULE_SETS, YACHT, YAHTZEE

INF = np.inf


def q_rows():
    """Rows of Q-values: finite or -inf (illegal), at least one finite in each, with near-ties among them."""
    values = st.sampled_from([-INF, 0.0, 1.0, 1.0 + 1e-13, 1.0 - 1e-13, 30.0, 30.0 - 1e-12, -2.5, 1e6, 1e6 - 1e-7, 0.5])
    return hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 8)), elements=values).filter(
        lambda q: np.isfinite(q).any(axis=1).all()
    )


@given(q=q_rows())
def test_a_gap_is_zero_within_the_relative_tolerance_of_the_best_and_q_minus_the_best_beyond_it(q):
    gaps = gaps_to_best(q)
    best = q.max(axis=1, keepdims=True)
    tolerance = TIE_RELATIVE * np.maximum(np.abs(best), 1.0)
    tied = q - best >= -tolerance
    assert np.array_equal(gaps == 0, tied)
    assert np.array_equal(gaps[~tied], (q - best)[~tied])  # -inf stays -inf
    assert np.array_equal(np.isneginf(gaps), np.isneginf(q))


@pytest.mark.parametrize(
    "best, other, tied",
    [
        (1e6, 1e6 - 0.5e-6, True),  # 5e-13 of a million points: one summation order from another
        (1e6, 1e6 - 3e-6, False),  # 3e-12 of it
        (0.0, -1e-12, True),  # exactly at the tolerance: a tie
        (0.5, 0.5 - 0.9e-12, True),  # under a point the scale is one point
        (0.5, 0.5 - 1.1e-12, False),
        (-100.0, -100.0 - 0.9e-10, True),  # the scale is |best|
        (-100.0, -100.0 - 1.1e-10, False),
    ],
)
def test_two_values_tie_within_tie_relative_of_the_larger_of_the_best_and_one_point(best, other, tied):
    gaps = gaps_to_best(np.array([[other, best]]))
    assert gaps[0, 1] == 0 and (gaps[0, 0] == 0) == tied
    assert best_actions(np.array([[other, best]]))[0] == (0 if tied else 1)


@pytest.mark.parametrize(
    "q, best",
    [
        ([1.0, 3.0, 3.0 - 1e-15, 2.0], 1),  # the lower index of a near tie
        ([3.0 - 1e-15, 3.0], 0),  # even when its value is the lower by a last bit
        ([-INF, 2.0, 2.0], 1),  # an illegal action is never chosen
        ([-INF, -INF, -7.0], 2),
    ],
)
def test_the_best_action_is_the_lowest_index_among_those_tied_with_the_best(q, best):
    chosen = best_actions(np.array([q]))
    assert chosen.dtype == np.int64 and chosen.tolist() == [best]


def test_best_actions_choose_row_by_row():
    q = np.array([[0.0, 1.0], [1.0, 0.0], [5.0, 5.0]])
    assert best_actions(q).tolist() == [1, 0, 0]


class FixedQ(ExactSolution):
    """A solution whose Q is given: what the base class does with a subclass's Q."""

    def __init__(self, rules, state_values, q):
        super().__init__(rules, state_values)
        self.q = np.asarray(q, dtype=float)

    def q_values_batch(self, hands, rolls_left, open_bits):
        return self.q


@pytest.mark.parametrize("name", ["yacht", "yahtzee", "yatzy"])
def test_a_solution_knows_its_rules_facts_and_the_action_layout(name):
    rules = RULE_SETS[name]
    solution = ExactSolution(rules, np.zeros(1 << rules.num_rows))
    layout = ActionLayout(rules)
    assert (solution.num_rows, solution.rolls_per_turn, solution.num_dice, solution.num_faces) == (rules.num_rows, 3, 5, 6)
    assert (solution.first_score_action, solution.num_actions) == (layout.first_score_action, layout.num_actions)
    assert solution.plan_ahead and not ExactSolution(rules, np.zeros(1), plan_ahead=False).plan_ahead
    assert np.array_equal(solution._keep_after_reroll, rules.dice.keep_after_reroll)


def test_the_expected_score_is_the_value_of_every_row_open_and_nothing_else_written():
    values = np.arange(4096, dtype=float)  # one value per set of open rows: the last is every row open
    assert ExactSolution(YACHT, values).expected_score == 4095.0
    sheet = np.arange(8 * 3 * 2, dtype=float).reshape(8, 3, 2)  # open rows, then the rest of the sheet's state
    assert ExactSolution(YACHT, sheet).expected_score == sheet[-1, 0, 0] == 42.0


def test_the_base_class_has_no_q_and_best_actions_come_from_a_subclasss_q():
    with pytest.raises(NotImplementedError):
        ExactSolution(YACHT, np.zeros(1)).q_values_batch([0], [2], [1])
    solution = FixedQ(YACHT, np.zeros(1), [[1.0, 2.0, 2.0 - 1e-15], [-INF, 0.0, -1.0]])
    assert solution.best_actions_batch([0, 1], [0, 0], [1, 1]).tolist() == [1, 1]


def test_positions_are_broadcast_to_one_shape_of_int64_arrays():
    solution = ExactSolution(YAHTZEE, np.zeros(1))
    hands, rolls_left, open_bits, upper, full = solution._check_positions([3, 4], 2, [[1], [8191]], 63, [0, 1])
    assert all(part.shape == (2, 2) and part.dtype == np.int64 for part in (hands, rolls_left, open_bits, upper, full))
    assert hands.tolist() == [[3, 4], [3, 4]] and open_bits.tolist() == [[1, 1], [8191, 8191]]
    assert upper.tolist() == [[63, 63], [63, 63]] and full.tolist() == [[0, 1], [0, 1]]


@pytest.mark.parametrize(
    "position, message",
    [
        (([0], [3], [1]), "rolls_left 3 is out of range 0..2"),
        (([0], [-1], [1]), "rolls_left -1 is out of range 0..2"),
        (([0], [0], [0]), "open_bits 0 is out of range 1..4095"),
        (([0], [0], [4096]), "open_bits 4096 is out of range 1..4095"),
        (([0], [0.5], [1]), "rolls_left must be integers"),
        (([0], [0], [1], [1.5]), "upper_totals must be integers"),
        (([0], [0], [1], [0], ["x"]), "yahtzee_full must be integers"),
    ],
)
def test_a_position_out_of_the_rules_is_refused_naming_the_part_and_its_range(position, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        ExactSolution(YACHT, np.zeros(1))._check_positions(*position)


def test_the_ends_of_each_range_are_positions():
    parts = ExactSolution(YACHT, np.zeros(1))._check_positions([0, 251], [0, 2], [1, 4095])
    assert [part.tolist() for part in parts] == [[0, 251], [0, 2], [1, 4095]]
