"""Scoring against RULES.md: every row, every listed edge case, and an independent reference."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import yacht_env
from tests.reference import reference_score
from yacht_env import CATEGORIES, YACHT, score
from yacht_env.dice import DiceSpace

dice_strategy = st.lists(st.integers(1, 6), min_size=5, max_size=5)


def test_category_order_matches_openspiel():
    assert CATEGORIES == (
        "ones", "twos", "threes", "fours", "fives", "sixes", "choice",
        "four_of_a_kind", "full_house", "little_straight", "big_straight", "yacht",
    )  # fmt: skip


@pytest.mark.parametrize(
    "dice, expected",
    [
        ([3, 3, 3, 3, 3], {"threes": 15, "fives": 0, "four_of_a_kind": 15, "full_house": 0, "choice": 15, "yacht": 50}),
        ([1, 2, 3, 4, 5], {"little_straight": 30, "big_straight": 0}),
        ([2, 3, 4, 5, 6], {"little_straight": 0, "big_straight": 30}),
        ([1, 2, 3, 4, 6], {"little_straight": 0, "big_straight": 0}),
        ([2, 2, 4, 4, 4], {"full_house": 16}),
        ([2, 2, 4, 4, 5], {"full_house": 0}),
        ([4, 4, 4, 4, 1], {"four_of_a_kind": 17}),
        ([6, 6, 6, 6, 6], {"four_of_a_kind": 30, "yacht": 50, "full_house": 0, "sixes": 30}),
        ([4, 4, 4, 4, 4], {"yacht": 50}),
        ([3, 3, 3, 6, 6], {"full_house": 21}),
        ([4, 4, 4, 1, 1], {"full_house": 14}),
        ([5, 4, 4, 4, 4], {"four_of_a_kind": 21}),
        ([1, 4, 4, 4, 4], {"four_of_a_kind": 17}),  # the worked example's final dice
        ([1, 1, 1, 1, 1], {"ones": 5, "twos": 0, "yacht": 50}),
        ([2, 2, 2, 2, 2], {"twos": 10}),
        ([4, 4, 4, 4, 4], {"fours": 20}),
        ([5, 5, 5, 5, 5], {"fives": 25}),
        ([6, 6, 6, 5, 5], {"full_house": 28, "choice": 28}),
    ],
)
def test_rule_book_cases(dice, expected):
    for category, points in expected.items():
        assert score(dice, category) == points, (dice, category)


def test_order_never_matters():
    for category in CATEGORIES:
        assert score([5, 3, 3, 5, 3], category) == score([3, 3, 3, 5, 5], category)


@given(dice_strategy, st.permutations(range(5)))
def test_every_row_matches_reference_in_any_order(dice, order):
    shuffled = [dice[i] for i in order]
    for index, category in enumerate(CATEGORIES):
        expected = reference_score(dice, category)
        assert score(shuffled, category) == expected
        assert score(np.array(shuffled), index) == expected


def test_row_maxima_match_the_rule_book():
    table = YACHT.hand_scores
    maxima = dict(zip(CATEGORIES, table.max(axis=0).tolist()))
    assert maxima == {
        "ones": 5, "twos": 10, "threes": 15, "fours": 20, "fives": 25, "sixes": 30, "choice": 30,
        "four_of_a_kind": 30, "full_house": 28, "little_straight": 30, "big_straight": 30, "yacht": 50,
    }  # fmt: skip
    assert table.min() == 0


def test_hand_scores_cover_every_hand_once():
    assert YACHT.dice.num_hands == 252
    assert YACHT.dice.num_keeps == 462
    assert len({tuple(h) for h in YACHT.dice.hands.tolist()}) == 252


@pytest.mark.parametrize(
    "dice, message",
    [
        ([1, 2, 3, 4], "4"),
        ([1, 2, 3, 4, 5, 6], "6"),
        ([0, 2, 3, 4, 5], "die 0"),
        ([1, 2, 3, 4, 7], "die 7"),
        ([1, 2, 3, 4, 2.5], "die 2.5"),
        ([1, 2, 3, 4, True], "die True"),
        ("12345", "'12345'"),
        (None, "None"),
    ],
)
def test_invalid_dice_raise_naming_the_value(dice, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        score(dice, "choice")


@pytest.mark.parametrize("category, message", [("sevens", "'sevens'"), (12, "12"), (-1, "-1"), (1.0, "1.0"), (True, "True")])
def test_unknown_category_raises_naming_it(category, message):
    with pytest.raises(ValueError, match=message):
        score([1, 2, 3, 4, 5], category)


def test_keep_probabilities_are_distributions():
    dice = DiceSpace(5, 6)
    np.testing.assert_allclose(dice.keep_to_hand.sum(axis=1), 1.0, atol=1e-12)
    # Rolling all five: a specific hand of five distinct faces has 5!/6^5 chance.
    straight = dice.hand_index[(1, 2, 3, 4, 5)]
    assert dice.hand_probabilities[straight] == pytest.approx(120 / 6**5, abs=1e-15)
    assert dice.hand_probabilities[dice.hand_index[(6, 6, 6, 6, 6)]] == pytest.approx(1 / 6**5, abs=1e-15)


@given(dice_strategy, st.integers(0, 31), st.lists(st.integers(1, 6), min_size=5, max_size=5))
def test_reroll_lands_fresh_dice_on_the_picked_up_positions(dice, mask, fresh):
    space = YACHT.dice
    hand = space.hand_index[tuple(sorted(dice))]
    sorted_dice = sorted(dice)
    kept = [d for i, d in enumerate(sorted_dice) if not mask >> i & 1]
    picked = bin(mask).count("1")
    expected = tuple(sorted(kept + fresh[:picked]))
    assert tuple(space.hands[space.reroll(hand, mask, fresh[:picked])].tolist()) == expected


def test_rule_variant_needs_no_env_change():
    """A variant with another row set is a new RuleSet; the env sizes itself from it."""
    from yacht_env.rules import Category, RuleSet, total, upper

    mini = RuleSet(name="mini", categories=(Category("ones", upper(1)), Category("choice", total)), num_dice=3)
    env = yacht_env.YachtEnv(rules=mini)
    obs, info = env.reset(seed=0)
    assert env.action_space.n == 2**3 + 2
    assert obs.shape == (3 + 1 + 2,)
    steps = 0
    terminated = False
    while not terminated:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(legal[-1]))
        steps += 1
    assert steps == 2
