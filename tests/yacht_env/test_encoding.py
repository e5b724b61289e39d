"""The observation encodings (yacht_env.encoding), each laid out as the module's table says and computed here from
the position itself, the sheet part of rules with bonuses, and every observation read back to its position."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from yacht_env.encoding import make_encoding
from yacht_env.rules import RULE_SETS, YACHT, rule_set

NAMES = ["flat", "counts", "onehot", "features", "dict"]
YAHTZEE = rule_set("yahtzee")


def position(dice, rolls_left, open_rows, rules=YACHT):
    hand = rules.dice.hand_index[tuple(sorted(dice))]
    return hand, rolls_left, sum(1 << list(rules.category_names).index(name) for name in open_rows)


DICE, ROLLS, OPEN = [2, 5, 2, 6, 1], 1, ["ones", "choice", "yacht"]
SORTED = [1, 2, 2, 5, 6]
OPEN_FLAGS = [1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]


def test_flat_is_the_sorted_dice_the_rolls_left_and_the_open_flags():
    encoding = make_encoding("flat", YACHT)
    assert encoding.space.shape == (18,) and encoding.space.dtype == np.float32
    assert list(encoding.encode(*position(DICE, ROLLS, OPEN))) == [*SORTED, ROLLS, *OPEN_FLAGS]


def test_counts_is_how_many_dice_show_each_face():
    encoding = make_encoding("counts", YACHT)
    assert encoding.space.shape == (19,)
    assert list(encoding.encode(*position(DICE, ROLLS, OPEN))) == [1, 2, 0, 0, 1, 1, ROLLS, *OPEN_FLAGS]


def test_onehot_is_each_die_s_face_one_hot_then_the_rolls_left_one_hot():
    encoding = make_encoding("onehot", YACHT)
    assert encoding.space.shape == (45,)
    observation = encoding.encode(*position(DICE, ROLLS, OPEN))
    faces = np.eye(6)[np.array(SORTED) - 1].reshape(-1)
    assert list(observation) == [*faces, 0, 1, 0, *OPEN_FLAGS]


def test_features_add_the_face_counts_and_what_each_open_row_would_score_now():
    encoding = make_encoding("features", YACHT)
    assert encoding.space.shape == (63,)
    observation = encoding.encode(*position(DICE, ROLLS, OPEN))
    faces = np.eye(6)[np.array(SORTED) - 1].reshape(-1)
    counts = np.array([1, 2, 0, 0, 1, 1]) / 5
    scores = [YACHT.score(DICE, name) / 50 if flag else 0 for name, flag in zip(YACHT.category_names, OPEN_FLAGS)]
    np.testing.assert_allclose(observation, [*faces, *counts, 0, 1, 0, *OPEN_FLAGS, *scores], rtol=1e-6)
    assert scores[0] == 1 / 50 and scores[6] == 16 / 50 and scores[11] == 0  # ones, choice, no yacht


def test_dict_holds_the_sorted_dice_the_rolls_left_and_the_open_flags():
    encoding = make_encoding("dict", YACHT)
    observation = encoding.encode(*position(DICE, ROLLS, OPEN))
    assert set(observation) == {"dice", "rolls_left", "open_categories"}
    assert list(observation["dice"]) == SORTED and observation["dice"].dtype == np.int8
    assert int(observation["rolls_left"]) == ROLLS and list(observation["open_categories"]) == OPEN_FLAGS
    assert observation in encoding.space


@pytest.mark.parametrize("name, scaled", [("flat", False), ("counts", False), ("onehot", True), ("features", True)])
def test_rules_with_an_upper_bonus_end_with_the_capped_subtotal_the_bonus_reached_and_the_yahtzee_box(name, scaled):
    encoding = make_encoding(name, YAHTZEE)
    plain = make_encoding(name, YACHT)
    assert encoding.sheet_width == 3 and plain.sheet_width == 0
    hand, rolls, open_bits = position(DICE, 0, ["ones", "chance"], YAHTZEE)
    for upper, full, part in ((40, 0, [40, 0, 0]), (63, 1, [63, 1, 1]), (90, 0, [63, 1, 0])):
        observation = encoding.encode(hand, rolls, open_bits, upper, full)
        wanted = [part[0] / 63 if scaled else part[0], part[1], part[2]]
        np.testing.assert_allclose(observation[-3:], wanted, rtol=1e-6)
        assert observation.shape == encoding.space.shape and observation in encoding.space
    per_row = 2 if name == "features" else 1  # features: an open flag and what the dice score now, per row
    assert encoding.space.shape[0] == plain.space.shape[0] + per_row + 3  # Yahtzee's 13th row, then the sheet part


def test_dict_gains_the_sheet_keys_under_bonus_rules():
    encoding = make_encoding("dict", YAHTZEE)
    observation = encoding.encode(*position(DICE, 0, ["ones"], YAHTZEE), 70, 1)
    assert int(observation["upper_total"]) == 63 and int(observation["bonus_reached"]) == 1
    assert int(observation["yahtzee_box_full"]) == 1 and observation in encoding.space
    assert "upper_total" not in make_encoding("dict", YACHT).space.spaces


@given(
    rules=st.sampled_from([rule_set(name) for name in RULE_SETS]),
    name=st.sampled_from(NAMES),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_observation_reads_back_to_its_position_and_sheet(rules, name, seed):
    encoding = make_encoding(name, rules)
    rng = np.random.default_rng(seed)
    n = 16
    hands = rng.integers(0, rules.dice.num_hands, n)
    rolls = rng.integers(0, rules.rolls_per_turn, n)
    open_bits = rng.integers(0, rules.all_open + 1, n)
    upper = rng.integers(0, 120, n)
    full = rng.integers(0, 2, n)
    observations = encoding.encode_batch(hands, rolls, open_bits, upper, full)
    decoded = encoding.decode_positions(observations)
    for got, wanted in zip(decoded[:3], (hands, rolls, open_bits)):
        np.testing.assert_array_equal(got, wanted)
    if encoding.has_upper:
        np.testing.assert_array_equal(decoded[3], np.minimum(upper, rules.bonus_threshold))
    if encoding.has_yahtzee:
        np.testing.assert_array_equal(decoded[4], full)
    one = encoding.encode(int(hands[0]), int(rolls[0]), int(open_bits[0]), int(upper[0]), int(full[0]))
    assert encoding.decode(one) == (hands[0], rolls[0], open_bits[0])
    assert one in encoding.space


def test_a_batch_is_written_into_a_given_array():
    encoding = make_encoding("flat", YACHT)
    out = np.full((2, 18), -1, dtype=np.float32)
    result = encoding.encode_batch([0, 5], [2, 0], [1, 3], out=out)
    assert result is out and (out >= 0).all()


def test_one_encoding_per_rules_and_name_and_an_unknown_one_refused():
    assert make_encoding("flat", YACHT) is make_encoding("flat", YACHT)
    with pytest.raises(ValueError) as error:
        make_encoding("pixels", YACHT)
    assert str(error.value) == "unknown observation encoding 'pixels'; expected one of flat, counts, onehot, features, dict"


def test_an_observation_no_position_gives_is_refused_naming_it():
    flat = make_encoding("flat", YACHT)
    good = flat.encode(*position(DICE, ROLLS, OPEN))
    bad = good.copy()
    bad[4] = 7
    with pytest.raises(ValueError) as error:
        flat.decode_batch(np.stack([good, bad]))
    assert str(error.value) == "observation 1: dice [1, 2, 2, 5, 7] are not 5 faces of 1..6"
    bad[4] = 0
    with pytest.raises(ValueError, match=r"dice \[1, 2, 2, 5, 0\]"):
        flat.decode_batch(bad[None])
    counts = make_encoding("counts", YACHT)
    short = counts.encode(*position(DICE, ROLLS, OPEN))
    short[0] = 0  # four dice
    with pytest.raises(ValueError) as error:
        counts.decode_batch(short[None])
    assert str(error.value) == "observation 0: face counts [0, 2, 0, 0, 1, 1] are not a hand of 5 dice"
    negative = counts.encode(*position(DICE, ROLLS, OPEN))
    negative[0], negative[1] = -1, 4  # still five in all
    with pytest.raises(ValueError, match="face counts"):
        counts.decode_batch(negative[None])


def test_features_show_a_yahtzee_at_its_plain_points_where_the_rules_have_no_joker():
    rules = rule_set("yahtzee_no_joker")
    encoding = make_encoding("features", rules)
    names = list(rules.category_names)
    open_bits = rules.all_open & ~(1 << names.index("yahtzee"))  # the Yahtzee box filled
    dice = [3, 3, 3, 3, 3]
    observation = encoding.encode(rules.dice.hand_index[tuple(dice)], 0, open_bits, 0, 1)
    scale = max(int(rules.hand_scores.max()), int(rules.joker_hand_scores.max()))
    shown = observation[-(rules.num_rows + encoding.sheet_width) : -encoding.sheet_width]
    wanted = [rules.score(dice, name) / scale if open_bits >> c & 1 else 0 for c, name in enumerate(names)]
    np.testing.assert_allclose(shown, wanted, rtol=1e-6)
    assert shown[names.index("full_house")] == 0  # five alike is no full house without a joker
