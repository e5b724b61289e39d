"""What a player at a table observes (yacht_env.table.encoding), laid out as the module's table says: the own part,
the own total scaled, then each other player in play order after the observer, with their sheet state under bonus
rules; the dict keys; read back to the observer's own position."""

from __future__ import annotations

import numpy as np
import pytest

from yacht_env.encoding import make_encoding
from yacht_env.rules import YACHT, rule_set
from yacht_env.table.encoding import TOTAL_SCALE, make_table_encoding, max_total, policy_observations
from yacht_env.table.outcome import GameBatch

YAHTZEE = rule_set("yahtzee")


def test_the_most_a_sheet_can_reach_is_every_row_s_best_the_bonus_and_an_extra_yahtzee_a_turn():
    # RULES.md: the upper rows 5 to 30, Choice 30, Four of a Kind all five dice (30), Full House at most 28,
    # the straights 30 each, Yacht 50
    assert max_total(YACHT) == 5 + 10 + 15 + 20 + 25 + 30 + 30 + 30 + 28 + 30 + 30 + 50 == 303
    # Yahtzee: upper 105, lower 30 + 30 + 25 + 30 + 40 + 50 + 30, the bonus 35, 12 extra Yahtzees of 100
    assert max_total(YAHTZEE) == 105 + 235 + 35 + 1200


def test_flat_at_a_table_of_two_is_the_own_part_the_own_total_then_the_other_s_total_and_open_rows():
    encoding = make_table_encoding("flat", 2, YACHT)
    assert encoding.space.shape == (32,) and encoding.space.dtype == np.float32
    own_high = make_encoding("flat", YACHT).space.high.max()  # a die's face, 6
    assert encoding.space.high.max() == max(own_high, np.float32(max_total(YACHT) / TOTAL_SCALE)) == 6
    hand = YACHT.dice.hand_index[(1, 2, 2, 5, 6)]
    observation = encoding.encode(hand, 1, 0b101, totals=[40, 123], table_open_bits=[0b101, 0b110])
    own = make_encoding("flat", YACHT).encode(hand, 1, 0b101)
    np.testing.assert_array_equal(observation[:18], own)
    assert observation[18] == np.float32(0.40) and observation[19] == np.float32(1.23)
    assert list(observation[20:32]) == [0, 1, 1] + [0] * 9


@pytest.mark.parametrize("observer", [0, 1, 2])
def test_the_others_come_in_play_order_after_the_observer(observer):
    encoding = make_table_encoding("dict", 3, YACHT)
    tables = GameBatch(YACHT, 3)
    tables.start(np.random.default_rng(0).integers(1, 7, (1, 3, YACHT.num_turns, YACHT.rolls_per_turn, YACHT.num_dice)))
    tables.totals[0] = [10, 20, 30]
    tables.open_bits[0] = [0b1, 0b10, 0b100]
    seen = encoding.of_seat(tables, 0, observer)
    order = [(observer + k) % 3 for k in range(3)]
    assert seen["total"] == [10, 20, 30][observer]
    assert list(seen["other_totals"]) == [[10, 20, 30][seat] for seat in order[1:]]
    assert [int(np.flatnonzero(flags)[0]) for flags in seen["other_open_categories"]] == order[1:]
    assert set(seen) == {"dice", "rolls_left", "open_categories", "total", "other_totals", "other_open_categories"}
    assert seen in encoding.space


def test_a_table_of_one_has_no_other_players():
    dict_encoding = make_table_encoding("dict", 1, YACHT)
    assert set(dict_encoding.space.spaces) == {"dice", "rolls_left", "open_categories", "total"}
    assert make_table_encoding("flat", 1, YACHT).space.shape == (19,)


def test_under_bonus_rules_every_other_player_s_sheet_state_is_shown():
    encoding = make_table_encoding("dict", 3, YAHTZEE)
    hand = YAHTZEE.dice.hand_index[(3, 3, 3, 3, 3)]
    totals, open_bits = [[50, 60, 70]], [[YAHTZEE.all_open] * 3]
    observation = encoding.encode_batch([hand], [0], [YAHTZEE.all_open], totals, open_bits, [[10, 70, 63]], [[0, 1, 0]])
    assert list(observation["other_upper_totals"][0]) == [63, 63]  # capped at the bonus threshold
    assert list(observation["other_bonus_reached"][0]) == [1, 1]
    assert list(observation["other_yahtzee_box_full"][0]) == [1, 0]
    assert observation["other_bonus_reached"].dtype == np.int8
    box = make_table_encoding("flat", 3, YAHTZEE)
    sheet = make_encoding("flat", YAHTZEE).sheet_width
    assert box.space.shape == (box.own_width + 1 + 2 * (1 + 13 + sheet),)
    flat = box.encode_batch([hand], [0], [YAHTZEE.all_open], totals, open_bits, [[10, 70, 0]], [[0, 1, 0]])[0]
    start = box.own_width + 1
    first_other = flat[start : start + 1 + 13 + sheet]
    assert first_other[0] == np.float32(0.6) and first_other[1:14].sum() == 13
    # the other's sheet laid out as the observer's own would be with 70 in its upper rows and its box full
    as_own = make_encoding("flat", YAHTZEE).encode(hand, 0, YAHTZEE.all_open, 70, 1)
    np.testing.assert_array_equal(first_other[14:], as_own[-sheet:])


def test_the_observers_sheet_alone_leaves_the_others_at_zero():
    encoding = make_table_encoding("dict", 2, YAHTZEE)
    hand = YAHTZEE.dice.hand_index[(1, 2, 3, 4, 5)]
    observation = encoding.encode_batch([hand], [2], [0b111], [[5, 6]], [[0b111, 0b1]], [40], [1])
    assert observation["upper_total"][0] == 40 and observation["other_upper_totals"][0, 0] == 0
    assert observation["other_yahtzee_box_full"][0, 0] == 0


@pytest.mark.parametrize("name", ["flat", "dict", "features"])
@pytest.mark.parametrize("rules", [YACHT, YAHTZEE], ids=["yacht", "yahtzee"])
def test_the_observer_s_own_position_and_sheet_read_back(name, rules):
    encoding = make_table_encoding(name, 2, rules)
    rng = np.random.default_rng(1)
    hands = rng.integers(0, rules.dice.num_hands, 20)
    rolls = rng.integers(0, 3, 20)
    open_bits = rng.integers(1, rules.all_open + 1, 20)
    upper = rng.integers(0, rules.upper_cap + 1, (20, 2)) if rules.upper_cap else None
    full = rng.integers(0, 2, (20, 2)) if rules.tracks_yahtzee_box else None
    observations = encoding.encode_batch(
        hands, rolls, open_bits, rng.integers(0, 200, (20, 2)), open_bits[:, None].repeat(2, 1), upper, full
    )
    decoded = encoding.decode_positions(observations)
    for got, wanted in zip(decoded[:3], (hands, rolls, open_bits)):
        np.testing.assert_array_equal(got, wanted)
    if upper is not None:
        np.testing.assert_array_equal(decoded[3], upper[:, 0])
        np.testing.assert_array_equal(decoded[4], full[:, 0])


def test_one_encoding_per_rules_encoding_and_size_and_bad_ones_refused():
    assert make_table_encoding("flat", 2, YACHT) is make_table_encoding("flat", 2, YACHT)
    with pytest.raises(ValueError, match="unknown observation encoding 'pixels'"):
        make_table_encoding("pixels", 2, YACHT)
    with pytest.raises(ValueError, match="num_players"):
        make_table_encoding("flat", 6, YACHT)


class SolitaireReader:
    """A policy of the interface that reads no table: it is fed its solitaire encoding."""

    name = "solitaire"

    def __init__(self, rules):
        self.encoding = make_encoding("flat", rules)


class TableReader(SolitaireReader):
    def __init__(self, rules, num_players):
        super().__init__(rules)
        self.table_encoding = make_table_encoding("flat", num_players, rules)


def test_a_policy_is_fed_the_table_if_it_reads_one_else_its_own_position():
    tables = GameBatch(YACHT, 2, num_tables=2)
    tables.start(np.random.default_rng(3).integers(1, 7, (2, 2, YACHT.num_turns, YACHT.rolls_per_turn, YACHT.num_dice)))
    solitaire = policy_observations(SolitaireReader(YACHT), tables, [0, 1], [1, 0])
    own = make_encoding("flat", YACHT).encode_batch(*tables.position(np.array([0, 1]), np.array([1, 0])))
    np.testing.assert_array_equal(solitaire, own)
    table = policy_observations(TableReader(YACHT, 2), tables, [0, 1], [1, 0])
    assert table.shape == (2, 32)
    np.testing.assert_array_equal(table[:, :18], own)
    with pytest.raises(ValueError, match=r"policy 'solitaire' was built for tables of 3 players, not 2"):
        policy_observations(TableReader(YACHT, 3), tables, [0], [0])


def test_a_policy_that_reads_no_table_still_sees_its_own_sheet_under_bonus_rules():
    tables = GameBatch(YAHTZEE, 2, num_tables=1)
    tables.start(np.random.default_rng(4).integers(1, 7, (1, 2, YAHTZEE.num_turns, YAHTZEE.rolls_per_turn, YAHTZEE.num_dice)))
    tables.upper_totals[0] = [48, 12]
    tables.sheets[0, 1, YAHTZEE.yahtzee_row_index] = 50
    encoding = make_encoding("flat", YAHTZEE)
    for seat, upper, full in ((0, 48, 0), (1, 12, 1)):
        seen = policy_observations(SolitaireReader(YAHTZEE), tables, [0], [seat])
        hand, rolls_left, open_bits = (part[0] for part in tables.position(np.array([0]), np.array([seat])))
        np.testing.assert_array_equal(seen[0], encoding.encode(hand, rolls_left, open_bits, upper, full))


def test_the_spaces_start_at_zero():
    flat = make_table_encoding("flat", 3, YAHTZEE)
    assert flat.space.low.min() == 0 == flat.space.low.max()
    parts = make_table_encoding("dict", 3, YAHTZEE).space.spaces
    assert parts["total"].low == 0 and (parts["other_totals"].low == 0).all()
    assert (parts["other_upper_totals"].low == 0).all() and (parts["other_upper_totals"].high == 63).all()


@pytest.mark.parametrize("name", ["flat", "features"])
def test_a_table_of_one_under_bonus_rules_is_the_own_part_and_total(name):
    encoding = make_table_encoding(name, 1, YAHTZEE)
    hand = YAHTZEE.dice.hand_index[(2, 2, 2, 4, 6)]
    observation = encoding.encode_batch([hand], [1], [YAHTZEE.all_open], [[12]], [[YAHTZEE.all_open]], [[30]], [[1]])[0]
    own = make_encoding(name, YAHTZEE).encode(hand, 1, YAHTZEE.all_open, 30, 1)
    np.testing.assert_array_equal(observation, [*own, np.float32(0.12)])
