"""What a page sees of a rule set and of a sheet (yacht_play/serve/sheets.py): from the rules and the game alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yacht_env.actions import ActionLayout
from yacht_env.rules import RULE_SETS, YACHT, YAHTZEE, RuleSet
from yacht_play.match import Match, Player, Seat
from yacht_play.serve.sheets import now_points, rule_set_title, rules_from_request, rules_view, sheet_view


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_a_rule_set_is_called_by_its_title_and_a_name_of_none_by_itself(name):
    assert rule_set_title(name) == RULE_SETS[name].title
    assert rule_set_title("house rules") == "house rules"


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_a_rule_sets_view_lists_its_rows_in_sheet_order_the_upper_ones_first(name):
    rules = RULE_SETS[name]
    view = rules_view(rules)
    assert (view["name"], view["title"], view["rolls_per_turn"]) == (name, rules.title, 3)
    assert [row["name"] for row in view["rows"]] == list(rules.category_names)
    assert [row["title"] for row in view["rows"]] == [c.title for c in rules.categories]
    upper = [row["upper"] for row in view["rows"]]
    assert upper == [True] * 6 + [False] * (len(upper) - 6)  # ones to sixes, then the rest


def test_a_rule_set_of_ones_own_is_viewed_with_its_own_rows_and_rolls():
    rules = RuleSet("eight_faced", categories=YACHT.categories[:8], num_dice=4, num_faces=8, rolls_per_turn=2)
    view = rules_view(rules)
    assert (view["name"], view["title"], view["rolls_per_turn"]) == ("eight_faced", rules.title, 2)
    assert [row["name"] for row in view["rows"]] == list(YACHT.category_names[:8])


@pytest.mark.parametrize(
    "name, threshold, points, yahtzee_bonus",
    [("yacht", 0, 0, 0), ("yahtzee", 63, 35, 100), ("yahtzee_no_bonus", 63, 35, 0), ("yatzy", 63, 50, 0)],
)
def test_a_rule_sets_view_gives_its_bonuses(name, threshold, points, yahtzee_bonus):
    view = rules_view(RULE_SETS[name])
    assert (view["bonus_threshold"], view["bonus_points"], view["yahtzee_bonus"]) == (threshold, points, yahtzee_bonus)


@pytest.mark.parametrize("name", ["yacht", "yahtzee", "yatzy"])
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), choice_seed=st.integers(0, 2**31 - 1))
def test_each_seats_sheet_adds_up_turn_after_turn(name, seed, choice_seed):
    rules = RULE_SETS[name]
    match = Match.new([Player("ann"), Player("bo")], seed=seed, mode="table", rules=rules)
    choose = np.random.default_rng(choice_seed)
    upper_rows = [c for c, category in enumerate(rules.categories) if category.upper]
    while not match.finished:
        seat = match.current
        match.play(int(choose.choice(np.flatnonzero(seat.legal_mask()))))
        for seat in match.seats:
            view = sheet_view(seat)
            assert view["seat"] == seat.index and view["cells"] == list(seat.sheet)
            subtotal = sum(view["cells"][c] or 0 for c in upper_rows)
            # the decision's sheet state: 0 under rules without an upper bonus
            assert view["upper_subtotal"] == (subtotal if rules.bonus_points else 0)
            reached = rules.bonus_points > 0 and subtotal >= rules.bonus_threshold
            assert view["upper_bonus"] == (rules.bonus_points if reached else 0)
            assert view["yahtzee_bonus"] % max(rules.yahtzee_bonus, 1) == 0 and view["yahtzee_bonus"] >= 0
            rows = sum(points for points in view["cells"] if points is not None)
            assert view["total"] == rows + view["upper_bonus"] + view["yahtzee_bonus"] == seat.total


@pytest.mark.parametrize("name", ["yahtzee", "yahtzee_forced_joker"])
def test_a_sheet_with_both_bonuses_gives_each_apart_and_in_its_total(name):
    # dice that roll a Yahtzee every turn: of sixes first (the Yahtzee box), then of ones to sixes (each in its upper row,
    # an extra Yahtzee each), then of twos for the lower rows left (joker values, an extra Yahtzee each too)
    rules = RULE_SETS[name]
    faces = [6, 1, 2, 3, 4, 5, 6] + [2] * (rules.num_turns - 7)
    stream = np.repeat(np.array(faces, dtype=np.int8)[:, None, None], 3, axis=1).repeat(5, axis=2)
    match = Match([Seat(0, Player("ann"), None, stream, rules)], "solitaire", seed=0, rules=rules)
    layout, seat = ActionLayout(rules), match.seats[0]
    rows = ["yahtzee", "ones", "twos", "threes", "fours", "fives", "sixes"]
    rows += [row for row in rules.category_names if row not in rows]
    for row in rows:
        match.play(layout.score_action(rules.category_index[row]))
    view = sheet_view(seat)
    assert match.finished and view["cells"] == [5, 10, 15, 20, 25, 30, 10, 10, 25, 30, 40, 50, 10]
    assert (view["upper_subtotal"], view["upper_bonus"], view["yahtzee_bonus"]) == (105, 35, 12 * 100)
    assert view["total"] == 280 + 35 + 1200 == seat.total


def bits(rules, *names) -> int:
    return sum(1 << rules.category_index[name] for name in names)


def test_what_the_dice_would_score_now_in_each_open_row_follows_the_rule_book():
    open_rows = bits(YACHT, "threes", "fives", "four_of_a_kind", "full_house", "choice", "yacht")
    # RULES.md: 3-3-3-3-3 scores 15 in Threes, 0 in Fives, 15 in Four of a Kind, 0 in Full House, 15 in Choice, 50 in Yacht
    assert now_points(YACHT, [3, 3, 3, 3, 3], open_rows) == {
        "threes": 15,
        "fives": 0,
        "choice": 15,
        "four_of_a_kind": 15,
        "full_house": 0,
        "yacht": 50,
    }
    assert now_points(YACHT, [2, 4, 2, 4, 4], bits(YACHT, "full_house", "little_straight")) == {
        "full_house": 16,
        "little_straight": 0,
    }
    assert now_points(YACHT, [1, 2, 3, 4, 5], 0) == {}  # no row open: nothing to show


def test_under_the_forced_joker_only_the_rows_a_yahtzee_may_go_in_are_shown_at_joker_values():
    rules = RULE_SETS["yahtzee_forced_joker"]
    fives = [5, 5, 5, 5, 5]
    # the Yahtzee box filled: the upper row of its face first, when open
    assert now_points(rules, fives, bits(rules, "fives", "full_house", "chance")) == {"fives": 25}
    # that row filled too: any lower row, at joker values
    assert now_points(rules, fives, bits(rules, "full_house", "large_straight", "chance", "ones")) == {
        "full_house": 25,
        "large_straight": 40,
        "chance": 25,
    }
    # without a joker (the Yahtzee box open) every open row, at its plain points
    assert now_points(YAHTZEE, fives, bits(YAHTZEE, "fives", "full_house", "yahtzee")) == {
        "fives": 25,
        "full_house": 0,
        "yahtzee": 50,
    }


def test_a_request_naming_no_rule_set_plays_the_default_and_one_naming_a_rule_set_plays_it():
    assert rules_from_request(None, YAHTZEE) is YAHTZEE
    for name, rules in RULE_SETS.items():
        assert rules_from_request(name, YACHT) is rules


@pytest.mark.parametrize("value", ["Yacht", "", 3, ["yacht"], "yacht\x1b[2J"])
def test_a_request_naming_anything_else_is_refused_naming_it_and_the_rule_sets(value):
    with pytest.raises(ValueError) as refused:
        rules_from_request(value, YACHT)
    message = str(refused.value)
    assert message.startswith(f"rules {value!r} is not a rule set; choose one of ")
    assert message.endswith(", ".join(RULE_SETS)) and "\x1b" not in message
