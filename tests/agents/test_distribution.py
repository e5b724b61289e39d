"""Exact final-score distributions of the optimal player (agents.solvers.distribution): their means are the DP's
values from every kind of position, and the summaries read them as first principles say."""

from __future__ import annotations

import numpy as np
import pytest

from agents.solvers.distribution import at_least, quantiles, score_distribution, score_distributions
from agents.solvers.optimal import expected_score, solve
from agents.solvers.target import max_total
from tests.agents.small_games import MINI


def rows(open_bits: int) -> list[int]:
    return [c for c in range(MINI.num_rows) if open_bits >> c & 1]


def mean(pmf: np.ndarray) -> float:
    return float(np.dot(np.arange(len(pmf)), pmf))


def test_a_new_game_s_distribution_sums_to_one_over_every_score_and_averages_the_optimum():
    pmf = score_distribution(rules=MINI)
    assert pmf.shape == (max_total(MINI) + 1,) and pmf.sum() == pytest.approx(1.0) and (pmf >= 0).all()
    assert mean(pmf) == pytest.approx(expected_score(MINI), rel=1e-12)


def test_points_already_written_move_the_distribution_up():
    rest = score_distribution(open_categories=rows(0b0110), rules=MINI)
    moved = score_distribution(open_categories=rows(0b0110), total=5, rules=MINI)
    np.testing.assert_array_equal(moved[5:], rest[:-5])
    assert not moved[:5].any()


@pytest.mark.parametrize("open_bits", [0b1111, 0b1010, 0b0001])
@pytest.mark.parametrize("rolls_left", [0, 1, 2])
def test_inside_a_turn_the_mean_is_the_value_of_the_best_action(open_bits, rolls_left):
    solution = solve(MINI)
    for hand in range(MINI.dice.num_hands):
        dice = MINI.dice.hands[hand].tolist()
        pmf = score_distribution(open_categories=rows(open_bits), dice=dice, rolls_left=rolls_left, rules=MINI)
        best = solution.q_values_batch(np.array([hand]), rolls_left, open_bits).max()
        assert mean(pmf) == pytest.approx(best, rel=1e-9) and pmf.sum() == pytest.approx(1.0)


def test_a_position_inside_a_turn_needs_both_its_dice_and_its_rolls_and_a_total_in_range():
    with pytest.raises(ValueError, match="give both dice and rolls_left"):
        score_distribution(dice=[1, 2, 3], rules=MINI)
    with pytest.raises(ValueError, match="give both dice and rolls_left"):
        score_distribution(rolls_left=1, rules=MINI)
    top = max_total(MINI)
    for total in (-1, top + 1, True, 2.0):
        with pytest.raises(ValueError, match=rf"^total must be an integer in 0\.\.{top}, got {total!r}$"):
            score_distribution(total=total, rules=MINI)
    assert score_distribution(open_categories=rows(0b1000), total=top - 10, rules=MINI)[-1] > 0  # the top score reachable
    with pytest.raises(ValueError, match="rolls_left"):
        score_distributions(MINI).final(hand=0)


def test_the_arrays_are_built_once_per_rule_set_and_read_only():
    arrays = score_distributions(MINI)
    assert score_distributions(MINI) is arrays
    for table in (arrays.to_come, arrays.turn):
        with pytest.raises(ValueError, match="read-only"):
            table[0, 0] = 0.5


def test_quantiles_are_the_smallest_scores_reaching_each_level():
    pmf = np.array([0.1, 0.0, 0.4, 0.5])  # P(<= s): 0.1, 0.1, 0.5, 1.0
    assert quantiles(pmf, [0.05, 0.1, 0.11, 0.5, 0.5000001, 1.0]).tolist() == [0, 0, 2, 2, 3, 3]
    # a level reached within the sums' rounding (1e-12) is reached: P(<= 0) of 0.3 - 1e-12 reaches 0.3
    assert quantiles(np.array([0.3 - 1e-12, 0.7 + 1e-12]), [0.3]).tolist() == [0]


def test_at_least_is_the_tail_from_each_threshold():
    pmf = np.array([0.1, 0.0, 0.4, 0.5])
    assert at_least(pmf, [-3, 0, 1, 2, 3, 4, 99]).tolist() == pytest.approx([1.0, 1.0, 0.9, 0.9, 0.5, 0.0, 0.0])
