"""The named rule sets: scoring edge cases of each, the joker and bonus rules, and the lookup by name.

Reference scores are written here from the rule books, independently of ``yacht_env.rules``.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.reference import reference_score
from yacht_env.rules import (
    JOKER_FORCED,
    JOKER_FREE,
    JOKER_NONE,
    RULE_SETS,
    YACHT,
    YAHTZEE,
    YAHTZEE_FORCED_JOKER,
    YAHTZEE_NO_BONUS,
    YAHTZEE_NO_JOKER,
    YATZY,
    Category,
    RuleSet,
    Sheet,
    all_alike,
    placement,
    rule_set,
    total,
    upper,
)

dice_strategy = st.lists(st.integers(1, 6), min_size=5, max_size=5)
FACES = ("ones", "twos", "threes", "fours", "fives", "sixes")


def longest_run(dice) -> int:
    faces, best, streak = set(dice), 0, 0
    for face in range(1, 7):
        streak = streak + 1 if face in faces else 0
        best = max(best, streak)
    return best


def yahtzee_reference(dice, row) -> int:
    counts = Counter(dice)
    if row in FACES:
        face = FACES.index(row) + 1
        return face * counts[face]
    most = max(counts.values())
    return {
        "three_of_a_kind": sum(dice) if most >= 3 else 0,
        "four_of_a_kind": sum(dice) if most >= 4 else 0,
        "full_house": 25 if sorted(counts.values()) == [2, 3] else 0,
        "small_straight": 30 if longest_run(dice) >= 4 else 0,
        "large_straight": 40 if longest_run(dice) == 5 else 0,
        "yahtzee": 50 if most == 5 else 0,
        "chance": sum(dice),
    }[row]


def yatzy_reference(dice, row) -> int:
    counts = Counter(dice)
    if row in FACES:
        face = FACES.index(row) + 1
        return face * counts[face]
    pairs = sorted(f for f, c in counts.items() if c >= 2)
    if row == "one_pair":
        return 2 * pairs[-1] if pairs else 0
    if row == "two_pairs":
        return 2 * (pairs[-1] + pairs[-2]) if len(pairs) >= 2 else 0
    if row in ("three_of_a_kind", "four_of_a_kind"):
        n = 3 if row == "three_of_a_kind" else 4
        matching = [f for f, c in counts.items() if c >= n]
        return n * matching[0] if matching else 0
    if row == "small_straight":
        return 15 if sorted(dice) == [1, 2, 3, 4, 5] else 0
    if row == "large_straight":
        return 20 if sorted(dice) == [2, 3, 4, 5, 6] else 0
    if row == "full_house":
        return sum(dice) if sorted(counts.values()) == [2, 3] else 0
    if row == "chance":
        return sum(dice)
    return 50 if len(counts) == 1 else 0


@given(dice_strategy)
def test_every_row_of_every_yahtzee_variant_scores_as_the_rule_book(dice):
    for rules in (YAHTZEE, YAHTZEE_FORCED_JOKER, YAHTZEE_NO_JOKER, YAHTZEE_NO_BONUS):
        for row in rules.category_names:
            assert rules.score(dice, row) == yahtzee_reference(dice, row), (rules.name, dice, row)


@given(dice_strategy)
def test_every_yatzy_row_scores_as_the_rule_book(dice):
    for row in YATZY.category_names:
        assert YATZY.score(dice, row) == yatzy_reference(dice, row), (dice, row)


@given(dice_strategy)
def test_yacht_variants_differ_only_in_four_of_a_kind(dice):
    exercism = RULE_SETS["yacht_exercism"]
    assert exercism.category_names == YACHT.category_names
    for row in YACHT.category_names:
        if row == "four_of_a_kind":
            counts = Counter(dice)
            face, count = counts.most_common(1)[0]
            assert exercism.score(dice, row) == (4 * face if count >= 4 else 0)
        else:
            assert exercism.score(dice, row) == YACHT.score(dice, row) == reference_score(sorted(dice), row)


@pytest.mark.parametrize(
    "rules, dice, row, points",
    [
        (YATZY, [3, 3, 3, 3, 5], "two_pairs", 0),  # four alike is not two pairs
        (YATZY, [3, 3, 5, 5, 5], "two_pairs", 16),  # a full house is
        (YATZY, [2, 2, 4, 4, 6], "two_pairs", 12),
        (YATZY, [5, 5, 5, 5, 5], "full_house", 0),  # five alike is not a full house
        (YATZY, [5, 5, 5, 5, 5], "one_pair", 10),
        (YATZY, [5, 5, 5, 5, 5], "three_of_a_kind", 15),
        (YATZY, [5, 5, 5, 5, 5], "four_of_a_kind", 20),
        (YATZY, [2, 2, 6, 6, 1], "one_pair", 12),  # the higher pair
        (YATZY, [1, 2, 3, 4, 5], "small_straight", 15),
        (YATZY, [2, 3, 4, 5, 6], "small_straight", 0),
        (YATZY, [2, 3, 4, 5, 6], "large_straight", 20),
        (YATZY, [1, 1, 4, 4, 4], "full_house", 14),
        (YAHTZEE, [1, 2, 3, 4, 6], "small_straight", 30),  # a run of four with a stray die
        (YAHTZEE, [3, 4, 5, 6, 6], "small_straight", 30),
        (YAHTZEE, [1, 2, 3, 5, 6], "small_straight", 0),
        (YAHTZEE, [1, 2, 3, 4, 5], "large_straight", 40),
        (YAHTZEE, [2, 3, 4, 5, 6], "large_straight", 40),
        (YAHTZEE, [1, 2, 3, 4, 6], "large_straight", 0),
        (YAHTZEE, [4, 4, 4, 4, 4], "full_house", 0),  # only as a joker
        (YAHTZEE, [2, 2, 5, 5, 5], "full_house", 25),
        (YAHTZEE, [2, 2, 5, 5, 5], "three_of_a_kind", 19),
        (YAHTZEE, [6, 6, 6, 6, 1], "four_of_a_kind", 25),
        (RULE_SETS["yacht_exercism"], [6, 6, 6, 6, 1], "four_of_a_kind", 24),
    ],
)
def test_scoring_edge_cases(rules, dice, row, points):
    assert rules.score(dice, row) == points


def test_named_rule_sets_and_their_bonuses():
    assert list(RULE_SETS) == [
        "yacht", "yacht_exercism", "yahtzee", "yahtzee_forced_joker", "yahtzee_no_joker", "yahtzee_no_bonus", "yatzy",
    ]  # fmt: skip
    assert all(RULE_SETS[name].name == name for name in RULE_SETS)
    assert YAHTZEE.num_rows == 13 and YATZY.num_rows == 15
    assert (YAHTZEE.bonus_threshold, YAHTZEE.bonus_points, YAHTZEE.yahtzee_bonus, YAHTZEE.joker) == (63, 35, 100, "free")
    assert (YAHTZEE_FORCED_JOKER.joker, YAHTZEE_NO_JOKER.joker, YAHTZEE_NO_JOKER.yahtzee_bonus) == ("forced", "none", 100)
    assert (YAHTZEE_NO_BONUS.yahtzee_bonus, YAHTZEE_NO_BONUS.joker, YAHTZEE_NO_BONUS.bonus_points) == (0, "none", 35)
    assert (YATZY.bonus_threshold, YATZY.bonus_points, YATZY.yahtzee_bonus) == (63, 50, 0)
    assert not YACHT.has_bonus_or_joker and not RULE_SETS["yacht_exercism"].has_bonus_or_joker
    for rules in RULE_SETS.values():
        assert [c.name for c in rules.categories if c.upper] == list(FACES)


def test_rule_set_lookup():
    assert rule_set("yatzy") is YATZY
    assert rule_set(YAHTZEE) is YAHTZEE
    assert rule_set(None) is YACHT
    with pytest.raises(ValueError, match=r"unknown rule set 'Yahtzee'; expected a RuleSet or one of yacht, yacht_exercism, "):
        rule_set("Yahtzee")
    with pytest.raises(ValueError, match="unknown rule set 3"):
        rule_set(3)


def test_default_rules_keep_their_hand_scores():
    for h, hand in enumerate(YACHT.dice.hands):
        for c, row in enumerate(YACHT.category_names):
            assert YACHT.hand_scores[h, c] == reference_score(tuple(int(d) for d in hand), row)
    assert np.array_equal(YACHT.joker_hand_scores, YACHT.hand_scores)


# -- the sheet: bonuses and jokers -------------------------------------------------------------


def sheet(rules, open_rows, upper_total=0, yahtzee_box=None):
    bits = sum(1 << rules.category_index[row] for row in open_rows)
    return Sheet(bits, upper_total, yahtzee_box)


def test_upper_bonus_is_earned_once_by_the_score_that_crosses_the_threshold():
    result = YAHTZEE.score_on(sheet(YAHTZEE, ["sixes", "chance"], 45), [6, 6, 6, 1, 2], "sixes")
    assert (result.points, result.upper_bonus, result.reward) == (18, 35, 53)
    assert result.sheet == sheet(YAHTZEE, ["chance"], 63)
    result = YAHTZEE.score_on(sheet(YAHTZEE, ["sixes", "fives"], 70), [6, 6, 6, 1, 2], "sixes")
    assert result.upper_bonus == 0 and result.sheet.upper_total == 88
    result = YATZY.score_on(sheet(YATZY, ["sixes", "chance"], 45), [6, 6, 6, 1, 2], "chance")
    assert result.upper_bonus == 0 and result.sheet.upper_total == 45
    assert YATZY.score_on(sheet(YATZY, ["ones"], 62), [1, 2, 2, 2, 2], "ones").upper_bonus == 50


def test_extra_yahtzee_bonus_needs_fifty_in_the_yahtzee_box():
    rows = ["chance", "threes"]
    assert YAHTZEE.score_on(sheet(YAHTZEE, rows, 0, 50), [3] * 5, "chance").yahtzee_bonus == 100
    assert YAHTZEE.score_on(sheet(YAHTZEE, rows, 0, 0), [3] * 5, "chance").yahtzee_bonus == 0
    assert YAHTZEE_NO_JOKER.score_on(sheet(YAHTZEE, rows, 0, 50), [3] * 5, "threes").yahtzee_bonus == 100
    assert YAHTZEE_NO_BONUS.score_on(sheet(YAHTZEE, rows, 0, 50), [3] * 5, "chance").yahtzee_bonus == 0
    first = YAHTZEE.score_on(YAHTZEE.new_sheet(), [3] * 5, "yahtzee")
    assert (first.reward, first.sheet.yahtzee_box) == (50, 50)
    zero = YAHTZEE.score_on(YAHTZEE.new_sheet(), [1, 2, 3, 3, 3], "yahtzee")
    assert (zero.reward, zero.sheet.yahtzee_box) == (0, 0)


def test_free_joker_pays_full_house_and_straights_once_its_upper_box_is_filled():
    lower = ["full_house", "small_straight", "large_straight", "chance", "fours"]
    filled = sheet(YAHTZEE, lower[:-1] + ["ones"], 10, 0)  # the fours box is filled
    assert YAHTZEE.scoring_options([4] * 5, filled.open_bits) == (filled.open_bits, True)
    assert YAHTZEE.score_on(filled, [4] * 5, "full_house").points == 25
    assert YAHTZEE.score_on(filled, [4] * 5, "small_straight").points == 30
    assert YAHTZEE.score_on(filled, [4] * 5, "large_straight").points == 40
    assert YAHTZEE.score_on(filled, [4] * 5, "chance").points == 20
    assert YAHTZEE.score_on(filled, [4] * 5, "ones").points == 0
    open_face = sheet(YAHTZEE, lower, 10, 50)  # the fours box is open: any row, usual points
    assert YAHTZEE.scoring_options([4] * 5, open_face.open_bits) == (open_face.open_bits, False)
    result = YAHTZEE.score_on(open_face, [4] * 5, "full_house")
    assert (result.points, result.yahtzee_bonus) == (0, 100)
    while_open = sheet(YAHTZEE, lower[:-1] + ["yahtzee"])  # the Yahtzee box open: no joker
    assert YAHTZEE.score_on(while_open, [4] * 5, "full_house").points == 0


def test_forced_joker_goes_to_its_upper_box_then_lower_boxes_then_upper_boxes():
    rules = YAHTZEE_FORCED_JOKER
    index = rules.category_index
    first = sheet(rules, ["fours", "full_house", "ones"], 0, 50)
    assert rules.scoring_options([4] * 5, first.open_bits) == (1 << index["fours"], False)
    result = rules.score_on(first, [4] * 5, "fours")
    assert (result.points, result.yahtzee_bonus) == (20, 100)
    with pytest.raises(ValueError, match="'full_house' cannot be scored now; allowed: fours"):
        rules.score_on(first, [4] * 5, "full_house")
    second = sheet(rules, ["full_house", "large_straight", "ones"], 0, 0)
    legal, joker = rules.scoring_options([4] * 5, second.open_bits)
    assert joker and legal == (1 << index["full_house"]) | (1 << index["large_straight"])
    assert rules.score_on(second, [4] * 5, "large_straight").points == 40
    third = sheet(rules, ["ones", "twos"], 0, 50)
    assert rules.scoring_options([4] * 5, third.open_bits) == (third.open_bits, False)
    assert rules.score_on(third, [4] * 5, "twos").reward == 100


def test_no_joker_means_usual_points_anywhere():
    state = sheet(YAHTZEE_NO_JOKER, ["full_house", "chance"], 0, 50)
    assert YAHTZEE_NO_JOKER.scoring_options([4] * 5, state.open_bits) == (state.open_bits, False)
    assert YAHTZEE_NO_JOKER.score_on(state, [4] * 5, "full_house").reward == 100


@given(dice_strategy, st.integers(1, (1 << 13) - 1), st.sampled_from([0, 50]))
def test_options_are_open_rows_and_only_extra_yahtzees_are_restricted(dice, open_bits, box):
    for rules in (YAHTZEE, YAHTZEE_FORCED_JOKER, YAHTZEE_NO_JOKER):
        legal, joker = rules.scoring_options(dice, open_bits)
        assert legal and legal & ~open_bits == 0
        extra = len(set(dice)) == 1 and not open_bits >> rules.yahtzee_row_index & 1
        if not extra:
            assert (legal, joker) == (open_bits, False)
        if rules.joker != "forced":
            assert legal == open_bits
        yahtzee_box = None if open_bits >> rules.yahtzee_row_index & 1 else box
        for row in range(13):
            if legal >> row & 1:
                result = rules.score_on(Sheet(open_bits, 0, yahtzee_box), dice, row)
                assert result.sheet.open_bits == open_bits & ~(1 << row)
                assert result.reward == result.points + result.upper_bonus + result.yahtzee_bonus


def test_bad_rule_sets_are_refused_with_the_reason():
    rows = (Category("ones", upper(1), upper=True), Category("chance", total))
    with pytest.raises(ValueError, match="unknown joker rule 'sometimes'; expected one of none, free, forced"):
        RuleSet("x", rows, joker="sometimes", yahtzee_row="chance")
    for bonus in (1, 100):  # any bonus at all, the smallest too
        with pytest.raises(ValueError, match="needs yahtzee_row"):
            RuleSet("x", rows, yahtzee_bonus=bonus)
    with pytest.raises(ValueError, match="yahtzee_row 'yacht' is not a row"):
        RuleSet("x", rows, yahtzee_row="yacht")
    for one_of_two in ({"bonus_points": 35}, {"bonus_threshold": 63}):  # either without the other
        with pytest.raises(ValueError, match="needs both bonus_threshold and bonus_points"):
            RuleSet("x", rows, **one_of_two)
    with pytest.raises(ValueError, match="bonus_threshold must be an integer >= 0, got -1"):
        RuleSet("x", rows, bonus_threshold=-1)
    for field_name in ("bonus_threshold", "bonus_points", "yahtzee_bonus"):
        for value in (True, 2.5, "35"):  # a bool is an int to Python, not to a rule book
            with pytest.raises(ValueError, match=re.escape(f"{field_name} must be an integer >= 0, got {value!r}")):
                RuleSet("x", rows, yahtzee_row="chance", **{field_name: value})
    for bonus in (1, 5):  # any bonus at all, the smallest too
        with pytest.raises(ValueError, match="at least one row with upper=True"):
            RuleSet("x", rows[1:], bonus_threshold=bonus, bonus_points=bonus)


@pytest.mark.parametrize("bonus", [1, 50])
def test_an_extra_yahtzee_bonus_of_any_size_makes_the_yahtzee_box_matter(bonus):
    rows = (Category("ones", upper(1), upper=True), Category("five alike", lambda dice, counts: 50 * (max(counts) == 5)))
    assert RuleSet("x", rows, yahtzee_row="five alike", yahtzee_bonus=bonus).tracks_yahtzee_box
    assert not RuleSet("x", rows, yahtzee_row="five alike").tracks_yahtzee_box


def test_a_rule_set_carries_its_title_and_defaults_to_its_name():
    assert RULE_SETS["yahtzee_forced_joker"].title == "Yahtzee (official forced joker)"
    assert all(rules.title for rules in RULE_SETS.values())
    own = RuleSet("mine", categories=YAHTZEE.categories[:3])
    assert own.title == "mine"
    assert RuleSet("mine", categories=YAHTZEE.categories[:3], title="My game").title == "My game"
    with pytest.raises(ValueError, match="title must be a string, got 3"):
        RuleSet("mine", categories=YAHTZEE.categories[:3], title=3)


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_face_rows_name_the_upper_row_of_five_alike_and_minus_one_for_every_other_hand(name):
    rules = RULE_SETS[name]
    for hand, dice in enumerate(rules.dice.hands):
        dice = tuple(int(die) for die in dice)
        if len(set(dice)) > 1:
            assert rules.face_rows[hand] == -1, dice
        else:
            assert rules.category_names[rules.face_rows[hand]] == FACES[dice[0] - 1], dice


def test_a_joker_rule_refuses_two_upper_rows_paying_for_one_face_and_allows_a_face_without_one():
    twice = (Category("ones", upper(1), upper=True), Category("aces", upper(1), upper=True), Category("yahtzee", all_alike(50)))
    rules = RuleSet("x", twice, joker="free", yahtzee_row="yahtzee")
    with pytest.raises(ValueError, match=r"the joker rule needs one upper row per face; \['ones', 'aces'\] all pay for"):
        rules.face_rows
    # Only the ones have an upper row: five of any other face have none, which a joker rule allows.
    once = RuleSet("y", twice[:1] + twice[2:], joker="free", yahtzee_row="yahtzee")
    alike = np.flatnonzero(once.alike_hands)
    assert sorted(once.face_rows[alike].tolist()) == [-1] * 5 + [0]


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_a_sheet_given_only_its_open_rows_has_nothing_written_yet(name):
    """``Sheet(open_bits)``: no upper points and no Yahtzee box yet, as on the rule set's own empty sheet."""
    rules = RULE_SETS[name]
    assert Sheet(rules.all_open) == rules.new_sheet()
    assert Sheet(rules.all_open).upper_total == 0 and Sheet(rules.all_open).yahtzee_box is None


def test_an_upper_bonus_alone_gives_a_sheet_a_state_beyond_its_open_rows():
    """With only an upper bonus, the same hand in the same open row pays differently by the upper subtotal."""
    rows = (Category("ones", upper(1), upper=True), Category("chance", total))
    bonus_only, plain = RuleSet("x", rows, bonus_threshold=3, bonus_points=10), RuleSet("y", rows)
    dice = (1, 1, 1, 2, 3)
    paid = {before: bonus_only.score_on(Sheet(bonus_only.all_open, before), dice, 0).reward for before in (0, 5)}
    assert paid == {0: 13, 5: 3} and bonus_only.has_bonus_or_joker
    assert not plain.has_bonus_or_joker


def test_an_extra_yahtzee_bonus_alone_gives_a_sheet_a_state_beyond_its_open_rows():
    """With only an extra-Yahtzee bonus (the smallest, 1), the same hand in the same open row pays by the Yahtzee box."""
    rows = (Category("ones", upper(1), upper=True), Category("yahtzee", all_alike(50)), Category("chance", total))
    bonus_only = RuleSet("x", rows, yahtzee_row="yahtzee", yahtzee_bonus=1)
    open_bits = bonus_only.all_open & ~(1 << bonus_only.category_index["yahtzee"])
    paid = {box: bonus_only.score_on(Sheet(open_bits, 0, box), [2] * 5, "chance").reward for box in (0, 50)}
    assert paid == {0: 10, 50: 11} and bonus_only.has_bonus_or_joker


@given(st.integers(1, (1 << 13) - 1), st.booleans(), st.integers(-1, 12), st.sampled_from([JOKER_NONE, JOKER_FREE, JOKER_FORCED]))
@example(open_bits=0b11, alike=True, face_row=-1, joker_mode=JOKER_FREE)  # five alike of a face with no upper row
@example(open_bits=1 << 8, alike=True, face_row=3, joker_mode=JOKER_FORCED)  # its upper row filled, a lower row open
def test_without_a_yahtzee_row_no_hand_is_a_joker(open_bits, alike, face_row, joker_mode):
    """``yahtzee_row=-1``: no Yahtzee box to have filled, so every hand goes in any open row at its usual points."""
    assert placement(open_bits, alike, face_row, -1, YAHTZEE.lower_bits, joker_mode) == (open_bits, False)


@given(
    st.integers(1, (1 << 13) - 1),
    st.booleans(),
    st.integers(-1, 5),
    st.sampled_from([JOKER_NONE, JOKER_FREE, JOKER_FORCED]),
)
@example(open_bits=1 << 2, alike=True, face_row=2, joker_mode=JOKER_FORCED)  # only the face's own row open
@example(open_bits=1 << 3, alike=True, face_row=2, joker_mode=JOKER_FORCED)  # only another upper row open
def test_on_a_sheet_with_an_open_row_every_hand_may_go_somewhere_open(open_bits, alike, face_row, joker_mode):
    """Whatever the joker rule, a hand always has a row to go in, and only ever an open one (the planners rely on it)."""
    yahtzee_row = YAHTZEE.category_index["yahtzee"]
    legal, _ = placement(open_bits, alike, face_row, yahtzee_row, YAHTZEE.lower_bits, joker_mode)
    assert legal != 0 and legal & ~open_bits == 0


def test_an_upper_row_that_takes_points_away_is_not_the_upper_row_of_its_face():
    """Only a row that pays for five of a face is that face's upper row: a penalty row beside it is not a second one."""
    penalty = Category("ones_penalty", lambda dice, counts: -counts[0], upper=True)
    rows = (Category("ones", upper(1), upper=True), penalty, Category("yahtzee", all_alike(50)))
    five_ones = YAHTZEE.hand([1] * 5)
    for joker in ("none", "free", "forced"):
        rules = RuleSet("x", rows, joker=joker, yahtzee_row="yahtzee")
        assert rules.score([1] * 5, "ones_penalty") == -5
        assert rules.face_rows[five_ones] == rules.category_index["ones"], joker


def test_without_a_joker_rule_a_face_paid_by_two_upper_rows_has_no_upper_row():
    """A joker rule refuses two upper rows for one face; without one, neither is *the* upper row of that face."""
    twice = (Category("ones", upper(1), upper=True), Category("aces", upper(1), upper=True), Category("yahtzee", all_alike(50)))
    rules = RuleSet("x", twice, yahtzee_row="yahtzee", yahtzee_bonus=100)
    alike = np.flatnonzero(rules.alike_hands)
    assert rules.face_rows[alike].tolist() == [-1] * 6


@pytest.mark.parametrize("rules", [YACHT, YAHTZEE], ids=lambda rules: rules.name)
def test_scoring_options_refuse_a_sheet_with_no_open_row_or_rows_it_lacks(rules):
    for open_bits in (0, -1, rules.all_open + 1):
        with pytest.raises(ValueError, match=rf"open_bits {open_bits} is out of range 1\.\.{rules.all_open}"):
            rules.scoring_options([1, 2, 3, 4, 5], open_bits)
    assert rules.scoring_options([1, 2, 3, 4, 5], 1) == (1, False)
    assert rules.scores_now([1, 2, 3, 4, 5], 0) == {}


@given(dice_strategy, st.integers(1, (1 << 13) - 1), st.integers(0, 12))
@example(dice=[1, 2, 3, 4, 5], open_bits=1 << 12, row=0)  # only the last row open: a filled row below it
@example(dice=[6, 6, 6, 6, 6], open_bits=0b1010, row=0)  # a filled row below an open one, an extra Yahtzee
def test_a_filled_row_is_refused_naming_the_open_ones(dice, open_bits, row):
    yahtzee_box = None if open_bits >> YAHTZEE.category_index["yahtzee"] & 1 else 50
    state = Sheet(open_bits, 0, yahtzee_box)
    if open_bits >> row & 1:
        assert YAHTZEE.score_on(state, dice, row).sheet.open_bits == open_bits & ~(1 << row)
    else:
        open_rows = ", ".join(name for c, name in enumerate(YAHTZEE.category_names) if open_bits >> c & 1)
        message = f"{YAHTZEE.category_names[row]!r} cannot be scored now; allowed: {open_rows}"
        with pytest.raises(ValueError, match=re.escape(message)):
            YAHTZEE.score_on(state, dice, row)


def test_forced_joker_refuses_an_open_row_below_the_upper_row_of_its_face():
    rules = YAHTZEE_FORCED_JOKER
    state = sheet(rules, ["ones", "fours"], 0, 50)
    with pytest.raises(ValueError, match="'ones' cannot be scored now; allowed: fours"):
        rules.score_on(state, [4] * 5, "ones")
    assert rules.score_on(state, [4] * 5, "fours").reward == 120


def test_a_score_result_cannot_be_changed_after_the_fact_and_can_be_hashed():
    """A result is a record of what happened: its fields cannot be rewritten, and equal results hash alike."""
    result = YAHTZEE.score_on(sheet(YAHTZEE, ["sixes", "chance"], 45), [6, 6, 6, 1, 2], "sixes")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.points = 30
    assert (result.points, result.upper_bonus, result.reward) == (18, 35, 53)
    again = YAHTZEE.score_on(sheet(YAHTZEE, ["sixes", "chance"], 45), [6, 6, 6, 1, 2], "sixes")
    assert len({result, again}) == 1


@pytest.mark.parametrize("rules", [YACHT, YAHTZEE], ids=lambda rules: rules.name)
def test_a_hand_index_outside_the_hand_table_is_refused_naming_it(rules):
    """Hands are numbered 0..251 (five dice of six faces): -1 is no hand, not the last one."""
    assert rules.dice.num_hands == 252
    state = Sheet(rules.all_open)
    for index in (-1, 252):
        message = rf"hand index {index} is out of range 0\.\.251"
        with pytest.raises(ValueError, match=message):
            rules.score_on(state, index, 0)
        with pytest.raises(ValueError, match=message):
            rules.scoring_options(index, rules.all_open)
        with pytest.raises(ValueError, match=message):
            rules.scores_now(index, rules.all_open)
    # The first and last hands, [1, 1, 1, 1, 1] and [6, 6, 6, 6, 6], in the ones row.
    assert (rules.score_on(state, 0, "ones").points, rules.score_on(state, 251, "ones").points) == (5, 0)


@pytest.mark.parametrize("name", ["yacht", "yahtzee", "yatzy"])
def test_built_in_rules_keep_the_fingerprints_their_shipped_models_record(name):
    """A shipped model names its rule set's fingerprint: a change to the fingerprint would refuse every saved model."""
    import json
    from pathlib import Path

    safetensors = pytest.importorskip("safetensors")
    shipped = Path(__file__).resolve().parents[2] / "agents" / "models" / f"{name}.safetensors"
    with safetensors.safe_open(str(shipped), "np") as model:
        recorded = json.loads(model.metadata()["yacht_model"])["rules_fingerprint"]
    assert RULE_SETS[name].fingerprint == recorded
    for rules in RULE_SETS.values():
        assert re.fullmatch(r"[0-9a-f]{32}", rules.fingerprint), rules.name
