"""The checks of the integer arrays the solvers take: what they accept, as what, and the one line they refuse with."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.solvers.array_checks import check_range, check_rolls_left, hand_indices, integer_array
from yacht_env.dice import DiceSpace
from yacht_env.rules import rule_set

DICE = DiceSpace(3, 4)  # 20 hands, small enough to list


@pytest.mark.parametrize("values", [[1, 2], np.array([[3], [4]], dtype=np.int8), np.uint16(7), 5])
def test_integers_come_back_as_int64_of_their_shape_a_scalar_as_one_element(values):
    array = integer_array(values, "positions")
    expected = np.asarray(values).reshape(-1) if np.ndim(values) == 0 else np.asarray(values)
    assert array.dtype == np.int64
    np.testing.assert_array_equal(array, expected)
    assert array.shape == expected.shape


@pytest.mark.parametrize("values", [[], np.array([], dtype=np.float64), np.zeros((0, 3))])
def test_an_empty_array_of_any_type_is_an_empty_integer_array(values):
    array = integer_array(values, "positions")
    assert array.dtype == np.int64 and array.shape == np.shape(values)


@pytest.mark.parametrize("values", [[1.0, 2.0], [True, False], np.bool_(True), ["1"], 2.5])
def test_what_is_not_integers_is_refused_naming_the_argument_and_the_value(values):
    with pytest.raises(ValueError, match=r"^open sets must be integers, got ") as error:
        integer_array(values, "open sets")
    assert str(error.value).endswith(repr(values))


def test_a_range_check_names_the_first_value_outside_it_and_takes_both_ends():
    check_range(np.array([2, 5, 9]), 2, 9, "rolls")
    for values, first in (([3, 1, 12], 1), ([3, 12, 1], 12), ([[2, 10]], 10)):
        with pytest.raises(ValueError, match=rf"^rolls {first} is out of range 2\.\.9$"):
            check_range(np.array(values), 2, 9, "rolls")


def test_hands_given_as_indices_come_back_as_they_are():
    indices = hand_indices(np.arange(DICE.num_hands), DICE)
    assert indices.dtype == np.intp
    np.testing.assert_array_equal(indices, np.arange(DICE.num_hands))


@given(st.lists(st.lists(st.integers(1, DICE.num_faces), min_size=3, max_size=3), min_size=1, max_size=10))
def test_hands_given_as_dice_in_any_order_are_the_index_of_their_sorted_dice(dice):
    expected = [DICE.hand_index[tuple(sorted(row))] for row in dice]
    np.testing.assert_array_equal(hand_indices(np.array(dice), DICE), expected)


@pytest.mark.parametrize(
    ("hands", "message"),
    [
        ([[1, 2, 5]], r"^die 5 is out of range 1\.\.4$"),
        ([[0, 2, 3]], r"^die 0 is out of range 1\.\.4$"),
        ([20], r"^hand index 20 is out of range 0\.\.19$"),
        ([-1], r"^hand index -1 is out of range 0\.\.19$"),
        ([[1, 2]], r"^hands must be hand indices of shape \(N,\) or dice of shape \(N, 3\), got shape \(1, 2\)$"),
        ([[1, 2, 3, 4]], r"got shape \(1, 4\)$"),
        ([[[1, 2, 3]]], r"got shape \(1, 1, 3\)$"),
    ],
)
def test_hands_of_the_wrong_shape_or_out_of_range_are_refused_in_one_line(hands, message):
    with pytest.raises(ValueError, match=message):
        hand_indices(np.array(hands), DICE)


@pytest.mark.parametrize("name", ["yacht", "yahtzee"])
def test_rolls_left_are_the_integers_below_the_rolls_of_a_turn(name):
    rules = rule_set(name)
    for rolls_left in range(rules.rolls_per_turn):
        assert check_rolls_left(np.int16(rolls_left), rules) == rolls_left
        assert type(check_rolls_left(np.int16(rolls_left), rules)) is int
    last = rules.rolls_per_turn - 1
    for bad in (-1, rules.rolls_per_turn, rules.rolls_per_turn + 1, True, 1.0, "1"):
        with pytest.raises(ValueError, match=rf"^rolls_left must be an integer in 0\.\.{last}, got {bad!r}$"):
            check_rolls_left(bad, rules)
