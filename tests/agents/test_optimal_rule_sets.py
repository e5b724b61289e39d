"""The exact optimum of rule sets with bonuses and jokers, against published figures and brute force.

The brute force below knows nothing of the solver, of ``RuleSet`` arrays or of ``placement``: it
scores dice with its own functions, applies the bonus and joker rules as the rule books word them,
and takes the expectation over every ordered roll of the dice.
"""

from __future__ import annotations

import dataclasses
import itertools
import os

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agents.solvers import optimal, sheet_solver, solution_cache
from agents.solvers.array_files import read_array, write_array
from agents.solvers.optimal import PUBLISHED_OPTIMA as PUBLISHED
from agents.solvers.optimal import expected_score, q_values, solve
from tests.agents.small_games import keep_children_by_hand
from yacht_env.rules import RULE_SETS, YAHTZEE, Category, RuleSet, all_alike, run, total, upper

QUICK = ("yacht", "yacht_exercism", "yahtzee")


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    """Solve into a folder of this module's own, so that nothing is read from or left in the user's cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(solution_cache.CACHE_ENV, str(tmp_path_factory.mktemp("solutions")))
        yield


@pytest.mark.parametrize("name", QUICK)
def test_named_optimum_matches_the_published_figure(name):
    assert abs(expected_score(name) - PUBLISHED[name]) < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(PUBLISHED) - set(QUICK)))
def test_named_optimum_matches_the_published_figure_slow(name):
    assert abs(expected_score(name) - PUBLISHED[name]) < 1e-6


def test_every_rule_set_is_checked():
    assert set(PUBLISHED) == set(RULE_SETS)


# -- brute force on reduced games --------------------------------------------------------------

FACE_NAMES = ("ones", "twos", "threes")
ROW_NAMES = (*FACE_NAMES, "straight", "chance", "yahtzee")
UPPER_NAMES = set(FACE_NAMES)


def brute_points(dice: tuple[int, ...], row: str, joker: bool) -> int:
    """Points of sorted dice in a row of the reduced game; ``joker`` pays the straight's joker value."""
    if row in FACE_NAMES:
        face = FACE_NAMES.index(row) + 1
        return face * dice.count(face)
    if row == "straight":
        return 30 if joker or dice == (1, 2, 3) else 0
    if row == "chance":
        return sum(dice)
    return 50 if len(set(dice)) == 1 else 0


class SheetBruteForce:
    """Expectimax over ordered dice outcomes for a small game with an upper bonus, extra Yahtzees and jokers.

    A state is (open rows as a frozenset of names, upper subtotal, points in the Yahtzee box or None).
    """

    def __init__(self, joker: str, yahtzee_bonus: int, threshold=8, bonus=20, num_dice=3, rolls=3):
        self.joker, self.yahtzee_bonus = joker, yahtzee_bonus
        self.threshold, self.bonus = threshold, bonus
        self.num_dice, self.rolls = num_dice, rolls
        self.memo = {}

    def options(self, dice, open_rows, yahtzee_box):
        """(rows allowed, joker values) as the rule books word them."""
        extra = len(set(dice)) == 1 and "yahtzee" not in open_rows
        if not extra or self.joker == "none":
            return open_rows, False
        face_row = FACE_NAMES[dice[0] - 1]
        if self.joker == "free":
            return open_rows, face_row not in open_rows
        if face_row in open_rows:  # forced: its face's upper box first,
            return {face_row}, False
        lower = open_rows - UPPER_NAMES  # then any lower box at joker values,
        return (lower, True) if lower else (open_rows, False)  # then an upper box for 0

    def score(self, dice, row, state):
        """(points + bonuses earned now, state after)."""
        open_rows, subtotal, yahtzee_box = state
        _, joker = self.options(dice, open_rows, yahtzee_box)
        points = brute_points(dice, row, joker)
        gained = points
        if len(set(dice)) == 1 and yahtzee_box == 50:
            gained += self.yahtzee_bonus
        if row in UPPER_NAMES:
            if subtotal < self.threshold <= subtotal + points:
                gained += self.bonus
            subtotal += points
        if row == "yahtzee":
            yahtzee_box = points
        return gained, (open_rows - {row}, subtotal, yahtzee_box)

    @staticmethod
    def key(state):
        open_rows, subtotal, yahtzee_box = state
        return frozenset(open_rows), subtotal, yahtzee_box

    def value(self, state) -> float:
        if not state[0]:
            return 0.0
        key = ("V", self.key(state))
        if key not in self.memo:
            self.memo[key] = self.roll((), self.rolls - 1, state)
        return self.memo[key]

    def roll(self, kept, rolls_left, state) -> float:
        key = ("K", kept, rolls_left, self.key(state))
        if key not in self.memo:
            outcomes = list(itertools.product(range(1, 4), repeat=self.num_dice - len(kept)))
            self.memo[key] = sum(self.hand(tuple(sorted(kept + o)), rolls_left, state) for o in outcomes) / len(outcomes)
        return self.memo[key]

    def score_q(self, dice, row, state) -> float:
        gained, after = self.score(dice, row, state)
        return gained + self.value(after)

    def hand(self, dice, rolls_left, state) -> float:
        key = ("W", dice, rolls_left, self.key(state))
        if key not in self.memo:
            allowed, _ = self.options(dice, state[0], state[2])
            best = max(self.score_q(dice, row, state) for row in allowed)
            if rolls_left > 0:
                for picked in range(1, 1 << self.num_dice):
                    kept = tuple(d for i, d in enumerate(dice) if not picked >> i & 1)
                    best = max(best, self.roll(kept, rolls_left - 1, state))
            self.memo[key] = best
        return self.memo[key]


def reduced_rules(joker: str, yahtzee_bonus: int) -> RuleSet:
    return RuleSet(
        name=f"reduced_{joker}_{yahtzee_bonus}",
        categories=(
            *(Category(name, upper(face), upper=True) for face, name in enumerate(FACE_NAMES, start=1)),
            Category("straight", run(3, 30), joker_points=30),
            Category("chance", total),
            Category("yahtzee", all_alike(50)),
        ),
        num_dice=3,
        num_faces=3,
        bonus_threshold=8,
        bonus_points=20,
        yahtzee_row="yahtzee",
        yahtzee_bonus=yahtzee_bonus,
        joker=joker,
    )


REDUCED = [("free", 100), ("forced", 100), ("none", 100), ("free", 0), ("forced", 0)]


@pytest.mark.parametrize("joker, yahtzee_bonus", REDUCED)
def test_every_reachable_state_value_matches_brute_force(joker, yahtzee_bonus):
    rules = reduced_rules(joker, yahtzee_bonus)
    solution = solve(rules)
    brute = SheetBruteForce(joker, yahtzee_bonus)
    values = solution.state_values
    assert values.shape == (64, 9, 2 if yahtzee_bonus else 1)
    checked = 0
    for open_bits, subtotal, full in zip(*np.nonzero(~np.isnan(values))):
        if open_bits == 0:
            continue
        open_rows = {name for c, name in enumerate(ROW_NAMES) if open_bits >> c & 1}
        box = None if "yahtzee" in open_rows else (50 if full else 0)
        expected = brute.value((open_rows, int(subtotal), box))
        assert values[open_bits, subtotal, full] == pytest.approx(expected, abs=1e-9), (open_rows, subtotal, box)
        checked += 1
    assert checked > 300
    assert solution.expected_score == pytest.approx(brute.value((set(ROW_NAMES), 0, None)), abs=1e-9)


@pytest.mark.parametrize("joker, yahtzee_bonus", REDUCED[:3])
def test_q_values_match_brute_force_on_random_positions(joker, yahtzee_bonus):
    rules = reduced_rules(joker, yahtzee_bonus)
    brute = SheetBruteForce(joker, yahtzee_bonus)
    rng = np.random.default_rng(7)
    checked = 0
    while checked < 60:
        open_bits = int(rng.integers(1, 64))
        open_rows = {name for c, name in enumerate(ROW_NAMES) if open_bits >> c & 1}
        subtotal = int(rng.integers(0, 12))
        box = None if "yahtzee" in open_rows else int(rng.choice([0, 50]))
        dice = tuple(sorted(int(d) for d in rng.integers(1, 4, size=3)))
        if len(set(dice)) > 1 and rng.random() < 0.5:
            dice = (dice[0],) * 3  # extra Yahtzees are where the rules differ
        rolls_left = int(rng.integers(0, 3))
        try:
            q = q_values(list(dice), rolls_left, sorted(open_rows), rules, upper_total=subtotal, yahtzee_box=box)
        except ValueError as error:
            assert "no game reaches" in str(error)
            continue
        state = (open_rows, subtotal, box)
        allowed, _ = brute.options(dice, open_rows, box)
        for c, name in enumerate(ROW_NAMES):
            if name in allowed:
                assert q[8 + c] == pytest.approx(brute.score_q(dice, name, state), abs=1e-9)
            else:
                assert q[8 + c] == -np.inf
        for mask in range(1, 8):
            kept = tuple(d for i, d in enumerate(dice) if not mask >> i & 1)
            expected = brute.roll(kept, rolls_left - 1, state) if rolls_left else -np.inf
            assert q[mask] == pytest.approx(expected, abs=1e-9)
        assert q[0] == -np.inf
        checked += 1


# -- the sheet states the solver solves -----------------------------------------------------------


def brute_reachable(joker: str, yahtzee_bonus: int) -> set[tuple[int, int, int]]:
    """``(open bits, subtotal capped at the threshold, full Yahtzee box)`` of every sheet a reduced game reaches.

    Every hand is scored in every row the rules allow, from the empty sheet on; the box counts as full
    only where an extra-Yahtzee bonus makes it matter.
    """
    brute = SheetBruteForce(joker, yahtzee_bonus)
    hands = list(itertools.combinations_with_replacement(range(1, 4), brute.num_dice))
    start = (frozenset(ROW_NAMES), 0, None)
    seen, frontier = {start}, [start]
    while frontier:
        state = frontier.pop()
        for dice in hands:
            allowed, _ = brute.options(dice, state[0], state[2])
            for row in allowed:
                _, (open_rows, subtotal, box) = brute.score(dice, row, state)
                after = (frozenset(open_rows), min(subtotal, brute.threshold), box)
                if after not in seen:
                    seen.add(after)
                    frontier.append(after)
    return {
        (sum(1 << ROW_NAMES.index(name) for name in open_rows), subtotal, int(box == 50 and yahtzee_bonus > 0))
        for open_rows, subtotal, box in seen
    }


@pytest.mark.parametrize("joker, yahtzee_bonus", REDUCED)
def test_reachable_states_are_the_sheets_a_game_from_the_empty_sheet_reaches(joker, yahtzee_bonus):
    reachable = sheet_solver.reachable_states(reduced_rules(joker, yahtzee_bonus))
    assert reachable.shape == (64, 9, 2 if yahtzee_bonus else 1)
    found = {(int(s), int(u), int(y)) for s, u, y in zip(*np.nonzero(reachable))}
    assert found == brute_reachable(joker, yahtzee_bonus)


@pytest.mark.parametrize("joker, yahtzee_bonus", REDUCED[:3])
def test_subtotals_that_can_no_longer_change_the_bonus_share_the_smallest_one(joker, yahtzee_bonus):
    """With no upper row open, or too few points left in them to reach 8, the subtotal no longer matters."""
    rules = reduced_rules(joker, yahtzee_bonus)
    reachable = sheet_solver.reachable_states(rules)
    representative = sheet_solver.equivalent_states(rules, reachable)
    index = np.arange(reachable.size).reshape(reachable.shape)
    for open_bits, full in itertools.product(range(64), range(reachable.shape[2])):
        most_to_come = sum(3 * face for face in (1, 2, 3) if open_bits >> (face - 1) & 1)  # three dice of the face
        settled = [u for u in range(9) if reachable[open_bits, u, full] and (most_to_come == 0 or u + most_to_come < 8)]
        for subtotal in range(9):
            shared = settled[0] if subtotal in settled else subtotal
            assert representative[open_bits, subtotal, full] == index[open_bits, shared, full], (open_bits, subtotal, full)


@settings(max_examples=20)
@given(num_dice=st.integers(1, 4), num_faces=st.integers(2, 5))
@example(num_dice=3, num_faces=3)
def test_turn_keep_children_add_one_die_of_each_face_and_are_minus_one_for_full_keeps(num_dice, num_faces):
    rules = RuleSet(
        name="keep_children",
        categories=(Category("ones", upper(1), upper=True), Category("chance", total)),
        num_dice=num_dice,
        num_faces=num_faces,
        bonus_threshold=num_dice,
        bonus_points=10,
    )
    dice = rules.dice
    children = sheet_solver.TurnArrays(rules).children
    assert children.shape == (dice.num_keeps, num_faces)
    assert children.tolist() == keep_children_by_hand(dice)


def test_the_q_value_kernel_gives_each_group_of_positions_its_own_states_q():
    """Positions come grouped by state, in any order of the groups: here the larger state index first."""
    rules = reduced_rules("free", 100)
    solution = solve(rules)
    hands = np.array([0, 3, 9, 0, 3, 9])
    sheets = [(0b111111, 0, 0)] * 3 + [(0b010001, 5, 1)] * 3  # all open; ones and chance open, 5 and a full box
    open_bits, upper, full = (np.array(part) for part in zip(*sheets))
    expected = np.concatenate(
        [solution.q_values_batch(hands[:3], 1, *sheets[0]), solution.q_values_batch(hands[3:], 1, *sheets[3])]
    )
    _, num_upper, num_yahtzee = solution.state_values.shape
    state_index = (open_bits * num_upper + upper) * num_yahtzee + full
    order = np.argsort(-state_index, kind="stable")
    assert state_index[order[0]] > state_index[order[-1]]
    q = np.full(expected.shape, -np.inf)
    positions = (order, hands.astype(np.int64), np.ones(6, dtype=np.int64), state_index)
    keep_after_reroll = rules.dice.keep_after_reroll.astype(np.int64)
    sheet_solver._q_values_rows(
        solution.arrays.kernel, solution.state_values.reshape(-1), True, positions, keep_after_reroll, rules.alike_hands, q
    )
    np.testing.assert_array_equal(q, expected)


def test_a_negative_upper_total_is_named_in_the_error():
    solution = solve(reduced_rules("free", 100))
    chance = 1 << ROW_NAMES.index("chance")
    with pytest.raises(ValueError, match="^upper total -1 is negative$"):
        solution.state_value(chance, upper_total=-1, yahtzee_full=1)
    with pytest.raises(ValueError, match="^upper total -1 is negative$"):
        solution.q_values_batch(np.array([0, 3]), 1, chance, np.array([8, -1]), 1)


@settings(max_examples=20)
@given(totals=st.lists(st.integers(-3, 9), min_size=1, max_size=4).filter(lambda totals: min(totals) < 0))
@example(totals=[0, -1])
@example(totals=[5, 0, -2, -3])
def test_the_first_negative_upper_total_is_the_one_named(totals):
    """A zero subtotal before the negative one is fine and is not the one the message names."""
    solution = solve(reduced_rules("free", 100))
    chance = 1 << ROW_NAMES.index("chance")
    first_negative = next(total for total in totals if total < 0)
    with pytest.raises(ValueError, match=f"^upper total {first_negative} is negative$"):
        solution.q_values_batch(np.zeros(len(totals), dtype=np.int64), 1, chance, np.array(totals), 1)


def test_a_state_value_defaults_to_a_fresh_sheet_and_takes_the_set_of_every_row():
    rules = reduced_rules("free", 100)
    solution = solve(rules)
    every_row = (1 << len(ROW_NAMES)) - 1
    assert solution.state_value(every_row) == solution.state_value(every_row, 0, 0) == expected_score(rules)


@pytest.mark.parametrize("past", [0, 1, 2], ids=["no-row-open", "one-row-past-every-row", "two-rows-past"])
def test_a_state_value_of_open_rows_out_of_range_is_refused_naming_them(past):
    solution = solve(reduced_rules("free", 100))
    every_row = (1 << len(ROW_NAMES)) - 1
    open_bits = 0 if past == 0 else every_row + past
    with pytest.raises(ValueError, match=f"^open_bits {open_bits} is out of range 1..{every_row}$"):
        solution.state_value(open_bits)


def test_of_several_positions_no_game_reaches_the_first_is_the_one_named():
    solution = solve(reduced_rules("free", 100))
    every_row = (1 << len(ROW_NAMES)) - 1  # nothing filled yet: only an upper total of 0 is reached
    with pytest.raises(ValueError, match=f"^no game reaches open rows {every_row:#b} with upper total 5:"):
        solution.q_values_batch(np.zeros(3, dtype=np.int64), 1, every_row, np.array([0, 5, 7]), 0)


def test_the_first_state_in_order_gets_its_own_turn_worked_out():
    """A joker rule with no bonus: the state index is the open set, so ones alone comes first of all states; on the
    last roll of the last turn scoring it is worth the ones showing, and nothing else is legal."""
    rules = dataclasses.replace(reduced_rules("free", 0), name="joker_only", bonus_threshold=0, bonus_points=0)
    solution = solve(rules)
    assert solution.state_values.shape[1:] == (1, 1)
    hands = np.arange(solution.dice.num_hands)
    q = solution.q_values_batch(hands, 0, 1)
    ones = (rules.dice.hands == 1).sum(axis=1)
    first_score = q.shape[1] - rules.num_rows
    assert q[:, first_score].tolist() == ones.tolist()
    assert np.isneginf(np.delete(q, first_score, axis=1)).all()


def test_a_row_that_only_costs_points_is_worth_its_least_cost_not_zero():
    """A penalty row (minus the dice) left alone: its state is worth the least the dice can cost, below zero, and
    scoring it on the last roll costs exactly the dice."""
    base = reduced_rules("free", 0)
    penalty = Category("penalty", lambda dice, counts: -int(sum(dice)))
    rules = dataclasses.replace(base, name="penalty", categories=(*base.categories, penalty), bonus_threshold=0, bonus_points=0)
    solution = solve(rules)
    alone = 1 << (rules.num_rows - 1)
    dice = rules.dice
    assert -dice.num_dice * 2 < solution.state_value(alone) < -dice.num_dice  # three re-rolls bring some 1s, not all
    q = solution.q_values_batch(np.arange(dice.num_hands), 0, alone)
    assert q[:, -1].tolist() == (-dice.hands.sum(axis=1)).tolist()


def test_q_values_of_a_fresh_sheet_need_no_sheet_state():
    """At the first decision nothing is written: the defaults are that sheet (no upper points, the box open)."""
    dice, every_row = [1, 2, 3, 4, 5], YAHTZEE.category_names
    explicit = q_values(dice, 2, every_row, "yahtzee", upper_total=0, yahtzee_box=None)
    np.testing.assert_array_equal(q_values(dice, 2, every_row, "yahtzee"), explicit)


def test_q_values_default_to_no_upper_points_and_no_full_yahtzee_box():
    solution = solve(reduced_rules("free", 100))
    hands = np.arange(solution.dice.num_hands)
    every_row = (1 << len(ROW_NAMES)) - 1
    for rolls_left in (0, 2):
        expected = solution.q_values_batch(hands, rolls_left, every_row, 0, 0)
        np.testing.assert_array_equal(solution.q_values_batch(hands, rolls_left, every_row), expected)
        np.testing.assert_array_equal(solution.best_actions_batch(hands, rolls_left, every_row), expected.argmax(axis=1))


def yahtzee_row_paying(other_points: int):
    """The Yahtzee row of two dice: 10 for a pair, ``other_points`` (a penalty when below 0) for any other hand."""
    return lambda dice, counts: 10 if max(counts) == len(dice) else other_points


@settings(max_examples=20)
@given(other_points=st.integers(-20, 20))
@example(other_points=-1)
@example(other_points=0)
@example(other_points=3)
def test_only_points_above_zero_in_the_yahtzee_box_earn_later_extra_yahtzee_bonuses(other_points):
    """After scoring in the Yahtzee row the sheet counts the box as full only if it got more than 0 points.

    A hand-made ``V`` (no solve) tells the two continuations apart: with only Chance left, 3 more
    points with the box not full and 40 with it full.
    """
    rules = RuleSet(
        name="penalty_yahtzee",
        categories=(Category("chance", total), Category("yahtzee", yahtzee_row_paying(other_points))),
        num_dice=2,
        num_faces=2,
        yahtzee_row="yahtzee",
        yahtzee_bonus=100,
    )
    values = np.zeros((4, 1, 2))
    values[0b01, 0] = [3.0, 40.0]  # Chance open: the box at 0 (or a penalty), the box full
    solution = sheet_solver.SheetSolution(rules, values)
    q = solution.q_values_batch(np.array([[1, 2], [2, 2]]), 0, 0b11, 0, 0)
    chance, yahtzee = solution.first_score_action, solution.first_score_action + 1
    assert q[0, chance] == 3  # 1 + 2, and nothing after
    assert q[0, yahtzee] == other_points + (40 if other_points > 0 else 3)
    assert q[1, chance] == 4
    assert q[1, yahtzee] == 10 + 40


# -- Q-values of the full rule sets ------------------------------------------------------------


def test_yahtzee_q_values_obey_the_joker_and_bonus_rules():
    # Five sixes with the Yahtzee box at 50 and the sixes row filled: free joker, any open row;
    # the full house pays 25 and every row carries the 100 bonus.
    open_rows = ["full_house", "chance", "ones"]
    q = q_values([6] * 5, 0, open_rows, "yahtzee", upper_total=20, yahtzee_box=50)
    solution = solve("yahtzee")
    bits = optimal.open_bits_from(open_rows, YAHTZEE)
    index = YAHTZEE.category_index
    after_full_house = solution.state_value(bits & ~(1 << index["full_house"]), 20, 1)
    assert q[32 + index["full_house"]] == pytest.approx(25 + 100 + after_full_house, abs=1e-9)
    after_ones = solution.state_value(bits & ~(1 << index["ones"]), 20, 1)
    assert q[32 + index["ones"]] == pytest.approx(0 + 100 + after_ones, abs=1e-9)


@pytest.mark.slow
def test_forced_joker_q_values_allow_only_the_sixes_row():
    index = YAHTZEE.category_index
    q = q_values([6] * 5, 0, ["sixes", "chance", "full_house"], "yahtzee_forced_joker", upper_total=60, yahtzee_box=0)
    assert np.isfinite(q[32:]).sum() == 1 and np.isfinite(q[32 + index["sixes"]])


@pytest.mark.parametrize("name, bonus", [("yahtzee", 35), pytest.param("yatzy", 50, marks=pytest.mark.slow)])
def test_upper_bonus_is_in_the_q_of_the_score_that_earns_it(name, bonus):
    solution = solve(name)
    rules = RULE_SETS[name]
    index = rules.category_index
    bits = optimal.open_bits_from(["sixes", "chance"], rules)
    box = {"yahtzee_box": 0} if rules.tracks_yahtzee_box else {}
    q = q_values([6, 6, 6, 1, 2], 0, ["sixes", "chance"], name, upper_total=45, **box)
    after = solution.state_value(bits & ~(1 << index["sixes"]), 63)
    assert q[32 + index["sixes"]] == pytest.approx(18 + bonus + after, abs=1e-9)
    q = q_values([6, 6, 1, 1, 2], 0, ["sixes", "chance"], name, upper_total=45, **box)
    after = solution.state_value(bits & ~(1 << index["sixes"]), 57)
    assert q[32 + index["sixes"]] == pytest.approx(12 + after, abs=1e-9)


@settings(max_examples=40)
@given(st.integers(1, (1 << 13) - 1), st.integers(0, 80), st.booleans(), st.integers(0, 2))
def test_yahtzee_bellman_identity_on_random_states(open_bits, subtotal, full, seed):
    """V(x) is the expectation over first rolls of the best Q with two rolls left."""
    solution = solve("yahtzee")
    yahtzee_open = open_bits >> YAHTZEE.yahtzee_row_index & 1
    full = 0 if yahtzee_open else int(full)
    if np.isnan(solution.state_values[open_bits, min(subtotal, 63), full]):
        return
    hands = np.arange(YAHTZEE.dice.num_hands)
    q = solution.q_values_batch(hands, 2, open_bits, subtotal, full)
    expected = YAHTZEE.dice.hand_probabilities @ q.max(axis=1)
    assert solution.state_value(open_bits, subtotal, full) == pytest.approx(expected, abs=1e-9)


def test_bad_sheet_arguments_get_clear_errors():
    with pytest.raises(ValueError, match="yahtzee_box must be None while"):
        q_values([1, 2, 3, 4, 5], 1, ["yahtzee", "chance"], "yahtzee", yahtzee_box=50)
    with pytest.raises(ValueError, match="yahtzee_box must be 0 or 50"):
        q_values([1, 2, 3, 4, 5], 1, ["chance"], "yahtzee", yahtzee_box=None)
    with pytest.raises(ValueError, match="upper_total must be an integer >= 0"):
        q_values([1, 2, 3, 4, 5], 1, ["chance"], "yahtzee", upper_total=-1, yahtzee_box=0)
    with pytest.raises(ValueError, match="no game reaches"):
        q_values([1, 2, 3, 4, 5], 1, YAHTZEE.category_names, "yahtzee", upper_total=5)
    with pytest.raises(ValueError, match="unknown rule set 'yahtzy'; expected a RuleSet or one of yacht"):
        expected_score("yahtzy")


# -- the disk cache ----------------------------------------------------------------------------


def test_a_second_process_loads_the_solution_from_disk(tmp_path, monkeypatch):
    monkeypatch.setenv(solution_cache.CACHE_ENV, str(tmp_path))
    rules = reduced_rules("free", 100)
    first = solve(rules).state_values
    files = list(tmp_path.glob("values-*.npy"))
    assert len(files) == 1 and rules.fingerprint in files[0].name
    optimal.clear_cache()
    calls = []
    monkeypatch.setattr("agents.solvers.sheet_solver.solve_sheet_values", lambda *a: calls.append(a))
    again = solve(rules).state_values
    assert calls == [] and np.array_equal(first, again, equal_nan=True)


def flip_a_value(path):
    """One stored value changed, the checksum beside it left as it was: what a bad disk sector does."""
    values = np.load(path).copy()
    values.flat[np.flatnonzero(np.isfinite(values))[-1]] += 1.0
    np.save(path, values)


def replace_with(path, make):
    path.unlink()
    make(path)


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(b"not an array file"),
        lambda path: path.write_bytes(path.read_bytes()[:1000]),
        lambda path: path.write_bytes(b""),
        lambda path: np.save(path, np.zeros(3)),
        lambda path: np.save(path, np.array([object()], dtype=object), allow_pickle=True),
        flip_a_value,
        lambda path: write_array(path, np.where(np.isnan(np.load(path)), np.nan, -np.inf)),
        lambda path: replace_with(path, os.mkfifo),
        lambda path: replace_with(path, lambda link: link.symlink_to("/dev/zero")),
    ],
    ids=["garbage", "truncated", "empty", "wrong shape", "pickled objects", "checksum", "out of range", "fifo", "device"],
)
def test_a_damaged_cache_file_is_solved_again_and_rewritten(tmp_path, monkeypatch, damage):
    monkeypatch.setenv(solution_cache.CACHE_ENV, str(tmp_path))
    rules = reduced_rules("forced", 100)
    expected = solve(rules).state_values
    (path,) = tmp_path.glob("values-*.npy")
    damage(path)
    optimal.clear_cache()
    with pytest.warns(UserWarning, match=f"{path.name}.*: solving it again"):
        assert np.array_equal(solve(rules).state_values, expected, equal_nan=True)
    assert path.is_file() and not path.is_symlink()
    assert np.array_equal(read_array(path, np.float64, expected.shape), expected, equal_nan=True)
    assert np.array_equal(solution_cache.load_values(path.name.split("-", 2)[2][:-4], expected.shape), expected, equal_nan=True)


def test_rule_sets_that_score_alike_share_a_cache_entry_and_others_do_not():
    assert reduced_rules("free", 100).fingerprint == reduced_rules("free", 100).fingerprint
    prints = {reduced_rules(j, b).fingerprint for j, b in REDUCED}
    assert len(prints) == len(REDUCED)
    assert len({rules.fingerprint for rules in RULE_SETS.values()}) == len(RULE_SETS)


def test_the_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv(solution_cache.CACHE_ENV, "")
    assert solution_cache.cache_dir() is None
    assert solution_cache.store_values("key", np.zeros(2)) is None
    assert solution_cache.load_values("key", (2,)) is None


def test_a_lone_chance_row_is_worth_the_same_in_yahtzee_and_yacht():
    """With only Chance open and a Yahtzee box at 0 nothing ties rows together: both solvers agree.

    With the box at 50 a Yahtzee earns 100 more, which is worth chasing.
    """
    from yacht_env.rules import YACHT

    chance = 1 << YAHTZEE.category_index["chance"]
    choice = 1 << YACHT.category_index["choice"]
    for solver in (optimal.solve, optimal.solve_myopic):
        yahtzee_value = solver("yahtzee").state_value(chance, 63, 0)
        assert yahtzee_value == pytest.approx(solver(YACHT).state_values[choice], abs=1e-9)
        assert 23 < yahtzee_value < 24
        assert solver("yahtzee").state_value(chance, 63, 1) > yahtzee_value + 1


def test_myopic_values_count_only_this_turn_and_its_bonuses():
    myopic = optimal.solve_myopic("yahtzee")
    # Five sixes with the sixes row open at a subtotal of 40: 30 points and the 35 bonus now.
    q = q_values([6] * 5, 0, ["sixes", "chance"], "yahtzee", upper_total=40, yahtzee_box=0)
    bits = optimal.open_bits_from(["sixes", "chance"], YAHTZEE)
    myopic_q = myopic.q_values_batch(np.array([[6] * 5]), 0, bits, 40, 0)[0]
    assert myopic_q[32 + YAHTZEE.category_index["sixes"]] == 65
    assert q[32 + YAHTZEE.category_index["sixes"]] > 65


@pytest.mark.parametrize("box", [None, -1, 0, 10])
def test_the_rules_pay_the_extra_yahtzee_bonus_only_on_a_box_holding_points(box):
    """``RuleSet.score_on`` counts the Yahtzee box as the solver (above) and the game's transition do: full only
    when it holds more than 0 points, so a penalty written there earns no later bonus."""
    from yacht_env.rules import Sheet

    rules = RuleSet(
        name="penalty_yahtzee",
        categories=(Category("chance", total), Category("yahtzee", yahtzee_row_paying(-1))),
        num_dice=2,
        num_faces=2,
        yahtzee_row="yahtzee",
        yahtzee_bonus=100,
    )
    scored = rules.score_on(Sheet(0b01, 0, box), (2, 2), "chance")
    assert scored.yahtzee_bonus == (100 if box is not None and box > 0 else 0)


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_a_refused_set_of_open_rows_is_shown_the_forms_with_its_own_rule_sets_rows(name):
    rules = RULE_SETS[name]
    with pytest.raises(ValueError) as refused:
        optimal.open_bits_from(3, rules)
    first, last = rules.category_names[0], rules.category_names[-1]
    message = str(refused.value)
    assert f"row names (['{first}', '{last}']), distinct row indices ([0, {rules.num_rows - 1}])" in message
    assert f"a boolean mask of {rules.num_rows} entries, got 3" in message
