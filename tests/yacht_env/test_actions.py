"""The flat action layout: where each action sits, which are legal when (re-rolls while rolls are left, open rows,
the forced joker's rows), why an action is not, and how one reads, from the layout's own definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from yacht_env.actions import ActionLayout, IllegalActionError, legal_masks
from yacht_env.rules import RULE_SETS, rule_set

RULES = [rule_set(name) for name in RULE_SETS]
FORCED = rule_set("yahtzee_forced_joker")


@pytest.mark.parametrize("rules", RULES, ids=lambda rules: rules.name)
def test_rerolls_come_first_then_one_scoring_action_per_row(rules):
    layout = ActionLayout(rules)
    assert layout.first_score_action == 2**5 == rules.dice.num_rerolls
    assert layout.num_actions == 32 + rules.num_rows
    assert [layout.is_reroll(a) for a in range(layout.num_actions)] == [True] * 32 + [False] * rules.num_rows
    for row in range(rules.num_rows):
        assert layout.score_action(row) == 32 + row and layout.category(32 + row) == row


def test_the_yacht_rules_have_44_actions_as_the_module_says():
    assert ActionLayout(rule_set("yacht")).num_actions == 44


@pytest.mark.parametrize("rules", RULES, ids=lambda rules: rules.name)
def test_the_masks_are_read_only_and_of_the_documented_shape(rules):
    masks = legal_masks(rules)
    assert masks.shape == (2, 1 << rules.num_rows, 32 + rules.num_rows) and masks.dtype == np.int8
    assert not masks.flags.writeable and ActionLayout(rules).legal_masks is masks  # one table per rule set
    with pytest.raises(ValueError):
        masks[0, 0, 0] = 1


@given(
    rules=st.sampled_from(RULES),
    rolls_left=st.integers(0, 2),
    open_seed=st.integers(0, 2**15 - 1),
    action=st.integers(0, 46),
    hand=st.integers(0, 251),
)
def test_an_action_is_legal_exactly_when_the_layout_s_definition_says_and_why_illegal_agrees(
    rules, rolls_left, open_seed, action, hand
):
    layout = ActionLayout(rules)
    open_bits = open_seed & rules.all_open
    action %= layout.num_actions
    if action >= 32:
        row = action - 32
        joker_rows = rules.scoring_options(hand, open_bits)[0] if rules.joker == "forced" and open_bits else rules.all_open
        expected = bool(open_bits >> row & 1) and bool(joker_rows >> row & 1)
    else:
        expected = action != 0 and rolls_left > 0
    mask = layout.legal_mask(rolls_left, open_bits, hand)
    assert mask.shape == (layout.num_actions,) and bool(mask[action]) is expected
    assert (layout.why_illegal(action, rolls_left, open_bits, hand) is None) is expected
    # without the hand, the rows open decide (the forced joker is then not applied)
    plain = layout.legal_mask(rolls_left, open_bits)
    assert bool(plain[action]) is (bool(open_bits >> (action - 32) & 1) if action >= 32 else action != 0 and rolls_left > 0)


def test_the_forced_joker_sends_a_yahtzee_to_its_upper_row_and_the_mask_is_a_fresh_array():
    layout = ActionLayout(FORCED)
    names = list(FORCED.category_names)
    threes = FORCED.dice.hand_index[(3, 3, 3, 3, 3)]
    open_bits = FORCED.all_open & ~(1 << names.index("yahtzee"))  # the Yahtzee box filled
    mask = layout.legal_mask(1, open_bits, threes)
    assert [names[c] for c in range(13) if mask[32 + c]] == ["threes"]
    assert mask[1:32].all() and not mask[0]  # re-rolls stay legal
    assert layout.legal_masks[1, open_bits, 32:].sum() == 12  # the shared table is untouched
    message = layout.why_illegal(32 + names.index("chance"), 1, open_bits, threes)
    assert message == "action 44 scores 'chance', but the forced joker rule sends this Yahtzee to threes"
    assert layout.why_illegal(44, 1, open_bits) is None  # no hand given: the rows open decide
    without_threes = open_bits & ~(1 << names.index("threes"))
    mask = layout.legal_mask(0, without_threes, threes)
    assert [names[c] for c in range(13) if mask[32 + c]] == [
        "three_of_a_kind",
        "four_of_a_kind",
        "full_house",
        "small_straight",
        "large_straight",
        "chance",
    ]
    assert not mask[:32].any()
    message = layout.why_illegal(32 + names.index("ones"), 0, without_threes, threes)
    assert message.endswith(
        "sends this Yahtzee to three_of_a_kind, four_of_a_kind, full_house, small_straight, large_straight, chance"
    )


def test_the_forced_joker_is_not_applied_to_a_full_sheet_or_under_other_jokers():
    layout = ActionLayout(FORCED)
    threes = FORCED.dice.hand_index[(3, 3, 3, 3, 3)]
    assert not layout.legal_mask(0, 0, threes).any()  # no row open: nothing to send it to
    free = ActionLayout(rule_set("yahtzee"))
    open_bits = rule_set("yahtzee").all_open & ~(1 << 11)
    assert free.legal_mask(0, open_bits, threes)[32:].sum() == 12


def test_each_reason_an_action_is_illegal_is_said():
    yacht = rule_set("yacht")
    layout = ActionLayout(yacht)
    assert layout.why_illegal(0, 2, yacht.all_open) == (
        "action 0 re-rolls no dice, which is never allowed; keep all dice by scoring instead"
    )
    assert layout.why_illegal(5, 0, yacht.all_open) == "action 5 re-rolls dice, but no rolls are left this turn; score a category"
    assert layout.why_illegal(5, 1, yacht.all_open) is None
    assert layout.why_illegal(33, 0, yacht.all_open & ~0b10) == "action 33 scores 'twos', which is already filled"
    assert layout.why_illegal(33, 0, 0b10) is None


def test_an_action_reads_as_the_dice_it_rerolls_or_the_row_it_scores():
    layout = ActionLayout(rule_set("yacht"))
    assert layout.describe(5) == "re-roll positions 1,3"
    assert layout.describe(5, dice=np.array([2, 3, 5, 5, 6])) == "re-roll positions 1,3 (dice 2, 5)"
    assert layout.describe(31, dice=[1, 2, 3, 4, 5]) == "re-roll positions 1,2,3,4,5 (dice 1, 2, 3, 4, 5)"
    assert layout.describe(32) == "score ones" and layout.describe(43) == "score yacht"


def test_an_illegal_action_error_is_a_value_error():
    assert issubclass(IllegalActionError, ValueError)
