"""The pure game (yacht_env.game): one transition for any number of tables and seats, no env."""

import os
import re

import numpy as np
import pytest
from gymnasium.utils import seeding
from hypothesis import given
from hypothesis import strategies as st

from tests.reference import reference_score
from yacht_env import CATEGORIES, YACHT, game
from yacht_env.actions import ActionLayout
from yacht_env.game import GameBatch, check_game_dice, draw_game_dice, draw_table_dice, rule_arrays
from yacht_env.rules import YAHTZEE, YAHTZEE_FORCED_JOKER, RuleSet

LAYOUT = ActionLayout(YACHT)
SCORE = LAYOUT.first_score_action


def started(num_players, num_tables=1, seed=0):
    tables = GameBatch(YACHT, num_players, num_tables)
    rng = seeding.np_random(seed)[0]
    tables.start(np.stack([draw_table_dice(rng, YACHT, num_players) for _ in range(num_tables)]))
    return tables


def snapshot(tables):
    return [array.copy() for array in tables.state]


def unchanged(before, tables, table=slice(None)) -> bool:
    """Whether every array of ``tables``' state is as in the ``snapshot`` ``before`` (at ``table``, or everywhere)."""
    return all(np.array_equal(a[table], b[table]) for a, b in zip(before, tables.state))


def test_a_game_before_start_refuses_every_action():
    tables = GameBatch(YACHT, 2)
    points, legal = tables.play([SCORE])
    assert not legal[0] and points[0] == 0 and tables.legal_masks().sum() == 0


@given(
    num_players=st.integers(1, 5), seed=st.integers(0, 2**31), choices=st.lists(st.integers(0, 10**6), min_size=200, max_size=200)
)
def test_random_legal_play_follows_the_rule_book(num_players, seed, choices):
    """Whole turns in rotation, 12 rows per seat, each score as RULES.md says, and nothing after the end."""
    tables = started(num_players, seed=seed)
    scored_by = []
    choices = iter(choices * 10)
    while not tables.over[0]:
        seat = int(tables.seat[0])
        legal = np.flatnonzero(tables.legal_masks()[0])
        action = int(legal[next(choices) % len(legal)])
        dice = tuple(int(d) for d in YACHT.dice.hands[tables.hands[0, seat]])
        points, ok = tables.play([action])
        assert ok[0]
        if action >= SCORE:
            assert points[0] == reference_score(dice, CATEGORIES[action - SCORE])
            scored_by.append(seat)
    assert scored_by == list(range(num_players)) * 12
    assert (tables.turns_done[0] == 12).all() and (tables.open_bits[0] == 0).all()
    assert (tables.totals[0] == tables.sheets[0].sum(axis=1)).all()
    assert tables.legal_masks().sum() == 0
    before = snapshot(tables)
    _, legal = tables.play([SCORE])
    assert not legal[0] and unchanged(before, tables)


@given(seed=st.integers(0, 2**31), action=st.integers(0, LAYOUT.num_actions - 1))
def test_an_illegal_action_changes_nothing(seed, action):
    tables = started(3, num_tables=2, seed=seed)
    tables.play([SCORE + 0, SCORE + 1])  # seat 0 fills ones and twos at the two tables
    tables.play([SCORE + 0, SCORE + 1])  # seat 1 likewise
    tables.play([SCORE + 0, SCORE + 1])  # seat 2 likewise: seat 0 is to act again
    before = snapshot(tables)
    mask = tables.legal_masks()
    points, legal = tables.play([action, action])
    assert legal.tolist() == (mask[:, action] == 1).tolist()
    for table in np.flatnonzero(~legal):
        assert unchanged(before, tables, table)
        assert points[table] == 0


@pytest.mark.parametrize("reroll", [1, SCORE - 1])  # one die, every die
def test_a_reroll_with_no_roll_left_is_illegal_and_changes_nothing(reroll):
    tables = started(2)
    for _ in range(YACHT.rolls_per_turn - 1):
        points, legal = tables.play([reroll])
        assert legal[0] and points[0] == 0
    assert tables.rolls_left[0, 0] == 0
    before = snapshot(tables)
    points, legal = tables.play([reroll])
    assert not legal[0] and unchanged(before, tables)


def test_a_reroll_lands_the_turns_fresh_faces_in_order_on_the_picked_up_dice():
    tables = GameBatch(YACHT, 1)
    faces = np.ones((12, 3, 5), dtype=np.int8)
    faces[0, 0] = [6, 5, 4, 3, 2]  # first roll: sorted 2 3 4 5 6
    faces[0, 1] = [1, 1, 6, 6, 6]  # the second roll's first two fresh dice are 1, 1
    tables.start(faces[None, None])
    points, legal = tables.play([0b00011])  # pick up the two lowest dice (2 and 3)
    assert legal[0] and points[0] == 0
    assert YACHT.dice.hands[tables.hands[0, 0]].tolist() == [1, 1, 4, 5, 6]
    assert tables.rolls_left[0, 0] == 1


@given(
    first=st.lists(st.integers(1, 6), min_size=5, max_size=5),
    fresh=st.lists(st.integers(1, 6), min_size=5, max_size=5),
    action=st.integers(1, LAYOUT.first_score_action - 1),
)
def test_a_reroll_keeps_the_dice_it_does_not_pick_up_and_adds_the_first_fresh_faces(first, fresh, action):
    """Any pick-up, not only the lowest dice: the hand after is the kept dice plus ``faces[t, r, :k]``."""
    tables = GameBatch(YACHT, 1)
    faces = np.ones((12, 3, 5), dtype=np.int8)
    faces[0, 0], faces[0, 1] = first, fresh
    tables.start(faces[None, None])
    hand = YACHT.dice.hands[tables.hands[0, 0]].tolist()
    picked = YACHT.dice.reroll_positions[action]
    kept = [die for position, die in enumerate(hand) if position not in picked]
    _, legal = tables.play([action])
    assert legal[0]
    assert YACHT.dice.hands[tables.hands[0, 0]].tolist() == sorted(kept + fresh[: len(picked)])


def test_the_upper_bonus_is_reported_earned_from_the_threshold_on_past_it_too():
    """Upper subtotals 30, 55, 63 (the threshold) and 83 (past it): the bonus counts from 63 on, whatever the
    subtotal grows to after, and apart from the extra-Yahtzee bonuses."""
    rules = YAHTZEE
    turns = [("sixes", [6] * 5), ("fives", [5] * 5), ("twos", [2, 2, 2, 2, 1]), ("fours", [4] * 5)]
    tables = GameBatch(rules, 1)
    faces = np.ones((rules.num_turns, rules.rolls_per_turn, rules.num_dice), dtype=np.int8)
    for turn, (_, dice) in enumerate(turns):
        faces[turn, 0] = dice
    tables.start(faces[None, None])
    first_score = ActionLayout(rules).first_score_action
    subtotals = []
    for row, dice in turns:
        points, legal = tables.play([first_score + rules.category_index[row]])
        assert legal[0]
        subtotals.append(sum(subtotals[-1:]) + sum(d for d in dice if d == dice[0]))
        earned = rules.bonus_points if subtotals[-1] >= rules.bonus_threshold else 0
        assert tables.bonuses(0, 0) == (earned, 0), subtotals
    assert subtotals == [30, 55, 63, 83]


def test_a_sheet_shows_each_open_row_as_none_and_a_row_scored_0_as_0():
    """Dice 1 1 2 3 5 every turn: the Yacht row scores 0 and the Ones 2; each seat's column tells a row scored 0 from
    an open one, and only its own rows."""
    tables = GameBatch(YACHT, 2)
    assert tables.sheet(0, 1) == (None,) * YACHT.num_rows and tables.bonuses(0, 1) == (0, 0)  # open before the start too
    faces = np.tile(np.array([1, 1, 2, 3, 5], dtype=np.int8), (2, YACHT.num_turns, YACHT.rolls_per_turn, 1))
    tables.start(faces[None])
    assert tables.sheet(0, 0) == tables.sheet(0, 1) == (None,) * YACHT.num_rows
    yacht, ones = YACHT.category_index["yacht"], YACHT.category_index["ones"]
    tables.play([SCORE + yacht])  # seat 0
    tables.play([SCORE + ones])  # seat 1
    assert tables.sheet(0, 0) == tuple(0 if row == yacht else None for row in range(YACHT.num_rows))
    assert tables.sheet(0, 1) == tuple(2 if row == ones else None for row in range(YACHT.num_rows))


def test_the_yahtzee_box_shows_full_wherever_its_row_sits_the_first_row_too():
    """A rule set whose Yahtzee row is its first: its box full of 50 is shown as full, as at the end of the sheet."""
    five_alike = next(c for c in YAHTZEE.categories if c.name == "yahtzee")
    rules = RuleSet("first", (five_alike, *YAHTZEE.categories[:6]), yahtzee_row="yahtzee", yahtzee_bonus=100)
    tables = GameBatch(rules, 1)
    faces = np.ones((rules.num_turns, rules.rolls_per_turn, rules.num_dice), dtype=np.int8)
    tables.start(faces[None, None])
    assert tables.sheet_state([0], [0])[1].tolist() == [0]
    points, legal = tables.play([ActionLayout(rules).first_score_action + 0])
    assert legal[0] and points[0] == 50
    assert tables.sheet_state([0], [0])[1].tolist() == [1]


@pytest.mark.parametrize("shape", [(11, 3, 5), (13, 3, 5), (12, 2, 5), (12, 4, 5), (12, 3, 6), (12, 3), (12, 3, 5, 1)])
def test_a_dice_stream_of_any_other_shape_is_refused_naming_both_shapes(shape):
    with pytest.raises(ValueError, match=re.escape(f"of shape (12, 3, 5), got int64 of shape {shape}")):
        check_game_dice(np.ones(shape, dtype=np.int64), YACHT)


def forced_joker_with_sixes_open():
    """Yahtzee, forced joker: five sixes scored 50 in the Yahtzee box, then five sixes again with Sixes open."""
    rules = YAHTZEE_FORCED_JOKER
    tables = GameBatch(rules, 1)
    faces = np.ones((rules.num_turns, rules.rolls_per_turn, rules.num_dice), dtype=np.int8)
    faces[:2, 0] = 6
    tables.start(faces[None, None])
    first_score = ActionLayout(rules).first_score_action
    points, legal = tables.play([first_score + rules.category_index["yahtzee"]])
    assert legal[0] and points[0] == 50
    return rules, tables, first_score


def test_a_forced_joker_is_refused_every_row_but_its_upper_row_and_changes_nothing():
    rules, tables, first_score = forced_joker_with_sixes_open()
    sixes = rules.category_index["sixes"]
    assert tables.legal_masks()[0, first_score:].tolist() == [int(c == sixes) for c in range(rules.num_rows)]
    before = snapshot(tables)
    for row in range(rules.num_rows):
        if row == sixes or tables.sheets[0, 0, row] >= 0:
            continue
        points, legal = tables.play([first_score + row])
        assert not legal[0] and points[0] == 0, rules.category_names[row]
        assert unchanged(before, tables), rules.category_names[row]
    points, legal = tables.play([first_score + sixes])
    assert legal[0] and points[0] == 30 + 100  # the upper row of sixes, the extra-Yahtzee bonus on top


def test_only_the_tables_asked_for_move():
    tables = started(2, num_tables=3)
    before = snapshot(tables)
    tables.play([SCORE + 5], tables=[1])
    assert tables.seat.tolist() == [0, 1, 0]
    for table in (0, 2):
        assert unchanged(before, tables, table)


def test_bad_arguments_are_named():
    tables = started(2, num_tables=2)
    before = snapshot(tables)
    for actions in ([SCORE], [SCORE] * 3):  # one too few, one too many: neither table moves
        with pytest.raises(ValueError, match=f"need one action per table: {len(actions)} actions for 2 tables"):
            tables.play(actions)
        assert unchanged(before, tables)
    with pytest.raises(ValueError, match="action 44 is not in the action space 0..43"):
        tables.play([SCORE, 44])
    with pytest.raises(ValueError, match=r"faces must have shape \(2, 2, 12, 3, 5\)"):
        tables.start(np.ones((2, 1, 12, 3, 5)))


def test_seat_dice_are_drawn_in_seat_order_from_one_generator():
    dealt = draw_table_dice(seeding.np_random(7)[0], YACHT, 3)
    rng = seeding.np_random(7)[0]
    for seat in range(3):
        np.testing.assert_array_equal(dealt[seat], draw_game_dice(rng, YACHT))
    np.testing.assert_array_equal(draw_table_dice(seeding.np_random(7)[0], YACHT, 5)[:3], dealt)


def test_turn_counts_each_seats_turns_from_one_and_stays_at_the_last_once_done():
    tables = started(2)
    assert tables.turn([0, 0], [0, 1]).tolist() == [1, 1]
    tables.play([SCORE])  # seat 0 ends its turn 1: seat 1 plays turn 1 next, seat 0 then turn 2
    assert tables.turn([0, 0], [0, 1]).tolist() == [2, 1]
    while not tables.over[0]:
        tables.play([SCORE + int(np.flatnonzero(tables.legal_masks()[0, SCORE:])[0])])
    assert tables.turn([0, 0], [0, 1]).tolist() == [12, 12]


@pytest.mark.parametrize(
    "bad, first",
    [({(0, 1, 2): 0, (11, 2, 4): 7}, 0), ({(0, 0, 4): 7, (3, 1, 0): -1}, 7)],
    ids=["zero-then-seven", "seven-then-minus-one"],
)
def test_a_dice_stream_with_faces_out_of_range_names_the_first_of_them(bad, first):
    faces = np.ones((12, 3, 5), dtype=np.int64)
    for position, face in bad.items():
        faces[position] = face
    with pytest.raises(ValueError, match=rf"^face {first} in faces is not in 1\.\.6$"):
        check_game_dice(faces, YACHT)


@pytest.mark.parametrize("rules", [YACHT, YAHTZEE_FORCED_JOKER], ids=lambda rules: rules.name)
def test_the_rule_arrays_every_game_of_a_rule_set_shares_are_read_only(rules):
    """One bundle per rule set serves every batch, so a write through any of its arrays is refused."""
    arrays = rule_arrays(rules)
    assert GameBatch(rules).arrays is arrays
    for name, array in arrays._asdict().items():
        first = (0,) * array.ndim
        with pytest.raises(ValueError, match="read-only"):
            array[first] = array[first]
        assert not array.flags.writeable, name


@pytest.mark.parametrize("kernel", [game.start_games, game.advance, game.gather_masks], ids=lambda kernel: kernel.__name__)
def test_the_compiled_transition_is_kept_on_disk_for_the_next_process(kernel):
    """Each kernel a game calls is cached by numba, so a new process loads its machine code instead of compiling it."""
    tables = started(2)
    tables.play([SCORE])
    tables.legal_masks()
    folder = kernel.stats.cache_path
    assert folder is not None, f"{kernel.__name__} is compiled in every process"
    assert any(name.startswith(f"game.{kernel.__name__}-") and name.endswith(".nbi") for name in os.listdir(folder))
