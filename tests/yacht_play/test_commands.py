"""What a person types at the prompt (yacht_play.commands), turned into actions and phrased back, against the
dice it names: keeps by value, re-rolls by position, rows by number, name, start or alias."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yacht_env.rules import RULE_SETS, YACHT
from yacht_play.commands import (
    ROW_ALIASES,
    SCORE_ONLY,
    USAGE,
    CommandError,
    choice_label,
    describe_choice,
    digits,
    find_row,
    keep_mask,
    parse_command,
    reroll_mask,
    split_command,
)

ALL_OPEN = YACHT.all_open
HANDS = st.lists(st.integers(1, 6), min_size=5, max_size=5).map(lambda dice: tuple(sorted(dice)))


@pytest.mark.parametrize(
    "text, parts",
    [
        ("k 3 3", ("k", "3 3")),
        ("K33", ("k", "33")),
        ("  score   full house ", ("score", "full house")),
        ("r1,4", ("r", "1,4")),
        ("s9", ("s", "9")),
        ("x33", ("x33", "")),
        ("", ("", "")),
    ],
)
def test_a_command_is_its_word_and_the_rest_and_single_letters_may_run_into_digits(text, parts):
    assert split_command(text) == parts


def test_digits_are_read_one_by_one_with_spaces_and_commas_alike():
    assert digits("3 3", "die value") == digits("33", "die value") == digits(" 3, ,3 ", "die value") == [3, 3]
    assert digits("", "die value") == [] and digits(",3,3,", "die value") == [3, 3]  # commas around them too
    with pytest.raises(CommandError, match=r"^'٣' is not a die value: k DICE"):
        digits("3 ٣", "die value")


@given(HANDS, st.data())
def test_keeping_values_re_rolls_exactly_the_other_dice_leftmost_kept(dice, data):
    kept = data.draw(st.lists(st.sampled_from(dice), max_size=4).filter(lambda v: not Counter(v) - Counter(dice)))
    mask = keep_mask(kept, dice, YACHT)
    left = Counter(kept)
    for position, face in enumerate(dice):
        keeps = left[face] > 0
        left[face] -= keeps
        assert bool(mask >> position & 1) != keeps
    assert mask < 1 << 5


@pytest.mark.parametrize(
    "values, words",
    [
        ([7], "7 is not a die face (1..6); k takes dice values, r takes positions"),
        ([0], "0 is not a die face (1..6)"),
        ([3, 3, 3], "cannot keep 3 3 3: your dice are 1 3 3 4 6"),
        ([1, 3, 3, 4, 6], "keeping every die is not a re-roll"),
    ],
)
def test_a_keep_the_dice_cannot_give_is_refused(values, words):
    with pytest.raises(CommandError) as refused:
        keep_mask(values, (1, 3, 3, 4, 6), YACHT)
    assert str(refused.value).startswith(words)


def test_re_rolls_pick_up_the_dice_at_the_positions_named():
    assert reroll_mask([1, 4], 5) == 0b01001 and reroll_mask([5, 5], 5) == 0b10000 and reroll_mask([], 5) == 0
    for position in (0, 6):
        with pytest.raises(CommandError, match=f"there is no die at position {position}: positions are 1 to 5"):
            reroll_mask([position], 5)


@pytest.mark.parametrize("rules_name", ["yacht", "yahtzee"])
def test_a_row_is_found_by_number_name_title_start_or_alias(rules_name):
    rules = RULE_SETS[rules_name]
    for c, category in enumerate(rules.categories):
        for text in (str(c + 1), category.name, category.title, category.title.upper(), category.name.replace("_", "-")):
            assert find_row(text, rules) == c
    for alias, names in ROW_ALIASES.items():
        found = [name for name in names if name in rules.category_index]
        if found:
            assert find_row(alias, rules) == rules.category_index[found[0]]
    assert find_row("ful", rules) == rules.category_index["full_house"]


def test_a_row_not_there_or_ambiguous_is_refused_saying_what_is_allowed():
    for number in (0, 13):
        with pytest.raises(CommandError, match=f"there is no row {number}: rows are numbered 1 to 12"):
            find_row(str(number), YACHT)
    with pytest.raises(CommandError, match="'f' could be fours, fives, four_of_a_kind, full_house: type more"):
        find_row("f", YACHT)
    with pytest.raises(
        CommandError, match="there is no row called 'bingo': use a number 1 to 12 or a name like ones, choice, yacht"
    ):
        find_row("bingo", YACHT)
    with pytest.raises(CommandError, match="s needs a row: a number 1 to 12"):
        find_row("  ", YACHT)


def command(text: str, dice=(1, 3, 3, 4, 6), rolls_left=2, open_bits=ALL_OPEN, rules=YACHT):
    return parse_command(text, dice, rolls_left, open_bits, rules)


def test_every_kind_of_command_parses_to_its_action():
    assert command("?").kind == command("help").kind == "help" and command("exit").kind == "quit"
    assert command("k none").action == command("r all").action == command("r *").action == 0b11111
    assert command("keep 3 3").action == keep_mask([3, 3], (1, 3, 3, 4, 6), YACHT)
    assert command("reroll 14").action == 0b01001
    assert command("s 9").action == YACHT.dice.num_rerolls + 8 == command("score full_house").action


@pytest.mark.parametrize(
    "text, words",
    [
        ("", USAGE),
        ("jump", f"unknown command 'jump': {USAGE}"),
        ("k", "k needs the dice values to keep"),
        ("r", "r needs the positions to re-roll"),
    ],
)
def test_a_command_short_of_what_it_needs_says_what_is_allowed(text, words):
    with pytest.raises(CommandError) as refused:
        command(text)
    assert str(refused.value) == words or str(refused.value).startswith(words)


def test_without_rolls_left_only_scoring_is_allowed_and_a_filled_row_is_refused_naming_the_open_ones():
    for text in ("k 3", "r 1"):
        with pytest.raises(CommandError, match=f"^{SCORE_ONLY}$"):
            command(text, rolls_left=0)
    with pytest.raises(CommandError, match="^Full House is already filled; open rows: 1 2 3$"):
        command("s fh", rolls_left=0, open_bits=0b111)


def test_the_forced_joker_rule_names_where_a_yahtzee_must_go():
    rules = RULE_SETS["yahtzee_forced_joker"]
    yahtzee_filled = rules.all_open & ~(1 << rules.category_index["yahtzee"])
    with pytest.raises(CommandError, match=r"^Chance cannot take this Yahtzee: the forced joker rule sends it to Fives \(5\)$"):
        command("s chance", dice=(5, 5, 5, 5, 5), rolls_left=0, open_bits=yahtzee_filled, rules=rules)
    assert command("s 5", dice=(5, 5, 5, 5, 5), rolls_left=0, open_bits=yahtzee_filled, rules=rules).action


def test_choices_are_phrased_by_what_they_keep_or_score():
    dice = (1, 3, 3, 4, 6)
    assert choice_label(0b11111, dice, YACHT) == "re-roll all"
    assert choice_label(0b11001, dice, YACHT) == "keep 3 3"
    assert describe_choice(0b11001, dice, YACHT) == "keep 3 3 (re-roll 1,4,5)"
    assert describe_choice(0, dice, YACHT) == "keep 1 3 3 4 6"
    assert describe_choice(YACHT.dice.num_rerolls + 6, dice, YACHT) == "score Choice (17)"
    assert describe_choice(0b11111, dice, YACHT) == "re-roll all"


@pytest.mark.parametrize("rules_name, joker_points", [("yahtzee", 25), ("yahtzee_forced_joker", 25), ("yahtzee_no_joker", 0)])
def test_a_joker_s_row_is_phrased_at_joker_points_given_the_open_rows(rules_name, joker_points):
    """Five fives with the Yahtzee box and Fives filled: a joker where the rules have one, so Full House takes 25."""
    rules = RULE_SETS[rules_name]
    open_rows = [name for name in rules.category_names if name not in ("yahtzee", "fives")]
    full_house = rules.dice.num_rerolls + rules.category_index["full_house"]
    assert choice_label(full_house, [5] * 5, rules, open_rows) == f"score Full House ({joker_points})"
    assert choice_label(full_house, [5] * 5, rules) == "score Full House (0)"  # without the open rows: the usual points
