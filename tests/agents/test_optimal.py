"""The exact optimal strategy against values derived here from first principles.

Every expected value is recomputed in this file without the solver or the DiceSpace arrays:
closed forms for lone rows, a brute-force expectimax over ordered dice outcomes, Bellman
identities on random states, and Monte-Carlo play on the env.
"""

from __future__ import annotations

import gc
import itertools
import math
import re
import weakref
from collections import Counter

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agents.solvers import sheet_solver, solution_cache
from agents.solvers.optimal import clear_cache, expected_score, keep_children, open_bits_from, q_values, solve, solve_myopic
from tests.agents.small_games import keep_children_by_hand
from tests.reference import reference_score
from yacht_env import CATEGORIES, YACHT, YachtEnv
from yacht_env.actions import ActionLayout
from yacht_env.dice import DiceSpace
from yacht_env.rules import Category, RuleSet, all_alike, of_a_kind, total, upper

NUM_CATEGORIES = len(CATEGORIES)
ALL_OPEN = (1 << NUM_CATEGORIES) - 1
FIRST_SCORE_ACTION = 32
NUM_ACTIONS = 44


def bit(name: str) -> int:
    return 1 << CATEGORIES.index(name)


class BruteForce:
    """Expectimax over every ordered dice outcome, memoized on sorted dice.

    ``score(dice, c)`` scores sorted dice in category index ``c``. Knows nothing of hand or keep
    indices: a re-roll picks up any non-empty subset of dice positions, and the new dice are
    every ordered outcome of the picked-up dice, equally likely. With ``plan_ahead=False`` the
    rows left after this turn are worth nothing (the myopic player).
    """

    def __init__(self, score, num_rows: int, num_dice: int = 5, num_faces: int = 6, rolls: int = 3, plan_ahead=True):
        self.score = score
        self.plan_ahead = plan_ahead
        self.num_rows = num_rows
        self.num_dice = num_dice
        self.faces = range(1, num_faces + 1)
        self.rolls = rolls
        self.state_memo = {0: 0.0}
        self.hand_memo = {}
        self.keep_memo = {}

    def state_value(self, open_bits: int) -> float:
        """Expected points still to come at the start of a turn."""
        if open_bits not in self.state_memo:
            self.state_memo[open_bits] = self.roll_value((), self.rolls - 1, open_bits)
        return self.state_memo[open_bits]

    def later_value(self, open_bits: int) -> float:
        return self.state_value(open_bits) if self.plan_ahead else 0.0

    def roll_value(self, kept: tuple, rolls_left: int, open_bits: int) -> float:
        """Expected value of rolling the dice not in ``kept``, with ``rolls_left`` after that roll."""
        key = (kept, rolls_left, open_bits)
        if key not in self.keep_memo:
            outcomes = list(itertools.product(self.faces, repeat=self.num_dice - len(kept)))
            self.keep_memo[key] = sum(
                self.hand_value(tuple(sorted(kept + outcome)), rolls_left, open_bits) for outcome in outcomes
            ) / len(outcomes)
        return self.keep_memo[key]

    def hand_value(self, dice: tuple, rolls_left: int, open_bits: int) -> float:
        key = (dice, rolls_left, open_bits)
        if key not in self.hand_memo:
            best = max(
                self.score(dice, c) + self.later_value(open_bits & ~(1 << c)) for c in range(self.num_rows) if open_bits >> c & 1
            )
            if rolls_left > 0:
                for picked in range(1, 1 << self.num_dice):
                    kept = tuple(d for i, d in enumerate(dice) if not picked >> i & 1)
                    best = max(best, self.roll_value(kept, rolls_left - 1, open_bits))
            self.hand_memo[key] = best
        return self.hand_memo[key]


@pytest.fixture(scope="module")
def solution():
    return solve()


@pytest.fixture(scope="module")
def brute_force():
    return BruteForce(lambda dice, c: reference_score(dice, CATEGORIES[c]), NUM_CATEGORIES)


def all_ordered_rolls(num_dice: int = 5):
    return itertools.product(range(1, 7), repeat=num_dice)


def hand_probability(dice) -> float:
    """Multinomial probability of a sorted hand when all five dice are rolled."""
    counts = Counter(dice).values()
    return math.factorial(len(dice)) / math.prod(math.factorial(c) for c in counts) / 6 ** len(dice)


# -- shape of the solution -----------------------------------------------------------------------


def test_tables_have_the_documented_shapes_and_are_read_only(solution):
    assert solution.state_values.shape == (1 << NUM_CATEGORIES,)
    assert solution.keep_values.shape == (3, 1 << NUM_CATEGORIES, 462)
    assert solution.state_values.dtype == solution.keep_values.dtype == np.float64
    assert solution.state_values[0] == 0.0
    assert not np.any(solution.keep_values[0])
    with pytest.raises(ValueError):
        solution.state_values[1] = 0.0
    with pytest.raises(ValueError):
        solution.keep_values[1, 1, 0] = 0.0


def test_solve_is_cached_per_rule_set():
    assert solve() is solve(YACHT)
    assert expected_score() == solve().state_values[ALL_OPEN]


def test_the_cache_lets_go_of_a_rule_set_nobody_uses():
    rules = RuleSet("one row", (Category("sum", total),), num_dice=2, num_faces=3, rolls_per_turn=2)
    assert expected_score(rules) == pytest.approx(2 * (2 + 2 + 3) / 3)  # re-roll a 1 once: E = 7/3 per die
    rules_ref = weakref.ref(rules)
    del rules
    gc.collect()
    assert rules_ref() is None


def test_clear_cache_gives_a_fresh_identical_solution(solution):
    clear_cache()
    fresh = solve()
    assert fresh is not solution
    np.testing.assert_array_equal(fresh.state_values, solution.state_values)
    np.testing.assert_array_equal(fresh.keep_values, solution.keep_values)


def upper_bonus_only_rules() -> RuleSet:
    """One die with faces 1 and 2, one roll, one upper row: a 1 scores 1 point and the 10-point bonus."""
    return RuleSet(
        "one die, upper bonus",
        (Category("ones", upper(1), upper=True),),
        num_dice=1,
        num_faces=2,
        rolls_per_turn=1,
        bonus_threshold=1,
        bonus_points=10,
    )


@pytest.mark.parametrize("solver", [solve, solve_myopic], ids=["optimal", "myopic"])
def test_an_upper_bonus_without_an_extra_yacht_bonus_is_loaded_from_disk_by_the_next_process(tmp_path, monkeypatch, solver):
    monkeypatch.setenv(solution_cache.CACHE_ENV, str(tmp_path))
    rules = upper_bonus_only_rules()
    assert rules.has_bonus_or_joker and not rules.tracks_yahtzee_box
    assert solver(rules).expected_score == 5.5  # a 1 half the time: (1 + 10) / 2
    (stored,) = tmp_path.glob("values-*.npy")
    monkeypatch.setattr(sheet_solver, "solve_sheet_values", lambda *args: pytest.fail("solved again, the stored table unread"))
    same_rules = upper_bonus_only_rules()  # another object, as in another process: nothing held in memory
    again = solver(same_rules)
    assert again.state_values.shape == (2, 2, 1)  # open rows, upper subtotal 0..1, no Yacht box state
    assert again.expected_score == 5.5 and again.state_value(1) == 5.5
    assert list(tmp_path.glob("values-*.npy")) == [stored]


# -- keep arrays ----------------------------------------------------------------------------------


@settings(max_examples=20)
@given(num_dice=st.integers(1, 4), num_faces=st.integers(2, 5))
@example(num_dice=2, num_faces=3)
def test_keep_children_add_one_die_of_each_face_and_are_minus_one_for_full_keeps(num_dice, num_faces):
    dice = DiceSpace(num_dice, num_faces)
    children = keep_children(dice)
    assert children.shape == (dice.num_keeps, num_faces)
    assert children.tolist() == keep_children_by_hand(dice)


# -- closed forms for a lone open row on the last turn -------------------------------------------


def test_only_ones_open_scores_each_die_that_shows_one_within_three_rolls(solution):
    assert solution.state_values[bit("ones")] == pytest.approx(5 * (1 - (5 / 6) ** 3), abs=1e-12)


def test_only_choice_open_is_seventy_thirds(solution):
    # One die, optimal stopping: re-roll while the face is below the value of re-rolling.
    faces = np.arange(1, 7)
    value = faces.mean()
    assert value == 3.5
    value = np.maximum(faces, value).mean()
    assert value == 4.25
    value = np.maximum(faces, value).mean()
    assert value == pytest.approx(14 / 3, abs=1e-15)
    assert solution.state_values[bit("choice")] == pytest.approx(5 * value, abs=1e-12)
    assert solution.state_values[bit("choice")] == pytest.approx(70 / 3, abs=1e-12)


def probability_of_five_alike_keeping_the_most_common_face() -> float:
    memo = {}

    def succeed(dice, rolls_left):
        if (dice, rolls_left) not in memo:
            face, count = Counter(dice).most_common(1)[0]
            if count == 5:
                memo[dice, rolls_left] = 1.0
            elif rolls_left == 0:
                memo[dice, rolls_left] = 0.0
            else:
                outcomes = list(all_ordered_rolls(5 - count))
                memo[dice, rolls_left] = sum(succeed(tuple(sorted((face,) * count + o)), rolls_left - 1) for o in outcomes) / len(
                    outcomes
                )
        return memo[dice, rolls_left]

    return sum(succeed(tuple(sorted(roll)), 2) for roll in all_ordered_rolls()) / 6**5


def test_only_yacht_open_is_fifty_times_the_chance_of_five_alike(solution):
    probability = probability_of_five_alike_keeping_the_most_common_face()
    assert probability == pytest.approx(0.046028642525704, abs=1e-12)  # the classic 4.6%
    assert solution.state_values[bit("yacht")] == pytest.approx(50 * probability, abs=1e-9)


# -- brute-force expectimax on the last turns of the game ----------------------------------------

SMALL_OPEN_SETS = [
    *[(name,) for name in CATEGORIES],
    ("ones", "sixes"),
    ("choice", "yacht"),
    ("full_house", "four_of_a_kind"),
    ("little_straight", "big_straight"),
    ("threes", "full_house"),
    ("yacht", "big_straight"),
    ("sixes", "four_of_a_kind", "yacht"),
    ("ones", "full_house", "little_straight"),
    ("twos", "choice", "big_straight"),
    ("ones", "twos", "threes", "choice"),
]


@pytest.mark.parametrize("open_names", SMALL_OPEN_SETS, ids="+".join)
def test_state_values_match_brute_force_expectimax(solution, brute_force, open_names):
    open_bits = sum(bit(name) for name in open_names)
    assert solution.state_values[open_bits] == pytest.approx(brute_force.state_value(open_bits), abs=1e-9)


def test_keep_values_match_brute_force_for_every_keep_on_the_last_turn(solution, brute_force):
    open_bits = bit("full_house") | bit("little_straight")
    brute_force.state_value(open_bits)
    dice = YACHT.dice
    for k, keep in enumerate(dice.keeps):
        for rerolls_left in (1, 2):
            expected = brute_force.roll_value(keep, rerolls_left - 1, open_bits)
            assert solution.keep_values[rerolls_left, open_bits, k] == pytest.approx(expected, abs=1e-9), keep


def variant_rules() -> list[RuleSet]:
    return [
        RuleSet(
            "three dice, four faces, two rolls",
            (
                Category("ones", upper(1)),
                Category("fours", upper(4)),
                Category("pair", of_a_kind(2)),
                Category("alike", all_alike(10)),
            ),
            num_dice=3,
            num_faces=4,
            rolls_per_turn=2,
        ),
        RuleSet(
            "two dice, three faces, four rolls",
            (Category("threes", upper(3)), Category("sum", total), Category("alike", all_alike(7))),
            num_dice=2,
            num_faces=3,
            rolls_per_turn=4,
        ),
        RuleSet(
            "two dice, one roll",
            (Category("sixes", upper(6)), Category("sum", total), Category("alike", all_alike(20))),
            num_dice=2,
            num_faces=6,
            rolls_per_turn=1,
        ),
    ]


@pytest.mark.parametrize("rules", variant_rules(), ids=lambda rules: rules.name)
def test_other_rule_sets_match_brute_force_on_every_open_set(rules):
    def score(dice, c):
        counts = tuple(dice.count(f) for f in range(1, rules.num_faces + 1))
        return rules.categories[c].rule(dice, counts)

    brute_force = BruteForce(score, rules.num_rows, rules.num_dice, rules.num_faces, rules.rolls_per_turn)
    solution = solve(rules)
    expected = [brute_force.state_value(open_bits) for open_bits in range(1 << rules.num_rows)]
    np.testing.assert_allclose(solution.state_values, expected, rtol=0, atol=1e-9)
    assert expected_score(rules) == pytest.approx(expected[-1], abs=1e-9)
    assert solution.keep_values.shape == (rules.rolls_per_turn, 1 << rules.num_rows, rules.dice.num_keeps)
    num_actions = (1 << rules.num_dice) + rules.num_rows
    q = q_values([1] * rules.num_dice, rules.rolls_per_turn - 1, rules.category_names, rules)
    assert q.shape == (num_actions,)
    best = brute_force.hand_value((1,) * rules.num_dice, rules.rolls_per_turn - 1, rules.all_open)
    assert np.max(q) == pytest.approx(best, abs=1e-9)


# -- the myopic player -------------------------------------------------------------------------


@pytest.mark.parametrize("open_names", [CATEGORIES, ("choice", "yacht"), ("ones", "full_house", "big_straight")], ids="+".join)
def test_myopic_values_match_a_one_turn_brute_force(open_names):
    open_bits = sum(bit(name) for name in open_names)
    brute_force = BruteForce(lambda dice, c: reference_score(dice, CATEGORIES[c]), NUM_CATEGORIES, plan_ahead=False)
    myopic = solve_myopic()
    assert myopic.state_values[open_bits] == pytest.approx(brute_force.state_value(open_bits), abs=1e-9)
    q = myopic.q_values_batch(np.array([[6, 6, 6, 6, 6]]), 0, open_bits)[0]
    expected = [reference_score([6] * 5, name) if name in open_names else -np.inf for name in CATEGORIES]
    np.testing.assert_array_equal(q[FIRST_SCORE_ACTION:], expected)


def test_myopic_and_optimal_agree_on_the_last_turn(solution):
    myopic = solve_myopic()
    assert solve_myopic() is myopic and myopic is not solve()
    last_turns = [1 << c for c in range(NUM_CATEGORIES)]
    np.testing.assert_array_equal(myopic.state_values[last_turns], solution.state_values[last_turns])
    np.testing.assert_array_equal(myopic.keep_values[:, last_turns], solution.keep_values[:, last_turns])


# -- Bellman identities on random states ---------------------------------------------------------

open_sets = st.integers(1, ALL_OPEN)
dice_lists = st.lists(st.integers(1, 6), min_size=5, max_size=5)
PROPERTY_SETTINGS = settings(max_examples=40)


def best_q(solution, hands, rolls_left, open_bits) -> np.ndarray:
    return solution.q_values_batch(hands, rolls_left, open_bits).max(axis=1)


@PROPERTY_SETTINGS
@given(open_bits=open_sets)
def test_start_of_turn_value_is_the_expected_best_q_of_the_first_roll(solution, open_bits):
    hands = [tuple(int(d) for d in hand) for hand in YACHT.dice.hands]
    probabilities = np.array([hand_probability(hand) for hand in hands])
    assert probabilities.sum() == pytest.approx(1.0, abs=1e-15)
    best = best_q(solution, np.array(hands), 2, open_bits)
    assert probabilities @ best == pytest.approx(solution.state_values[open_bits], abs=1e-9)


@PROPERTY_SETTINGS
@given(open_bits=open_sets, kept=st.lists(st.integers(1, 6), max_size=4), rerolls_left=st.sampled_from([1, 2]))
def test_keep_value_is_the_expected_best_q_after_the_reroll(solution, open_bits, kept, rerolls_left):
    kept = tuple(sorted(kept))
    outcomes = np.array([kept + roll for roll in all_ordered_rolls(5 - len(kept))])
    expected = best_q(solution, outcomes, rerolls_left - 1, open_bits).mean()
    k = YACHT.dice.keep_index[kept]
    assert solution.keep_values[rerolls_left, open_bits, k] == pytest.approx(expected, abs=1e-9)


@PROPERTY_SETTINGS
@given(open_bits=open_sets, rerolls_left=st.sampled_from([1, 2]))
def test_keep_values_agree_with_the_keep_to_hand_table(solution, open_bits, rerolls_left):
    hands = np.arange(YACHT.dice.num_hands)
    after = best_q(solution, hands, rerolls_left - 1, open_bits)
    expected = YACHT.dice.keep_to_hand @ after
    np.testing.assert_allclose(solution.keep_values[rerolls_left, open_bits], expected, rtol=0, atol=1e-9)


@PROPERTY_SETTINGS
@given(dice=dice_lists, rolls_left=st.integers(0, 2), open_bits=open_sets)
def test_q_values_are_minus_infinity_exactly_on_illegal_actions(dice, rolls_left, open_bits):
    mask = [bool(open_bits >> c & 1) for c in range(NUM_CATEGORIES)]
    q = q_values(dice, rolls_left, mask)
    assert q.shape == (NUM_ACTIONS,) and q.dtype == np.float64
    legal = ActionLayout(YACHT).legal_mask(rolls_left, open_bits).astype(bool)
    np.testing.assert_array_equal(np.isneginf(q), ~legal)
    assert np.all(np.isfinite(q[legal]))


@PROPERTY_SETTINGS
@given(dice=dice_lists, rolls_left=st.integers(0, 2), open_bits=open_sets)
def test_q_values_follow_their_definition(solution, dice, rolls_left, open_bits):
    q = q_values(dice, rolls_left, open_bits_to_names(open_bits))
    sorted_dice = sorted(dice)
    for c, name in enumerate(CATEGORIES):
        if open_bits >> c & 1:
            expected = reference_score(dice, name) + solution.state_values[open_bits & ~(1 << c)]
            assert q[FIRST_SCORE_ACTION + c] == expected
    if rolls_left:
        for action in range(1, FIRST_SCORE_ACTION):
            kept = tuple(d for i, d in enumerate(sorted_dice) if not action >> i & 1)
            k = YACHT.dice.keep_index[kept]
            assert q[action] == solution.keep_values[rolls_left, open_bits, k]


def open_bits_to_names(open_bits: int) -> list[str]:
    return [name for c, name in enumerate(CATEGORIES) if open_bits >> c & 1]


@PROPERTY_SETTINGS
@given(
    positions=st.lists(st.tuples(dice_lists, st.integers(0, 2), open_sets), min_size=1, max_size=20),
)
def test_q_values_equal_the_rows_of_q_values_batch(solution, positions):
    dice = np.array([p[0] for p in positions])
    rolls_left = np.array([p[1] for p in positions])
    open_bits = np.array([p[2] for p in positions])
    hands = np.array([YACHT.hand(d) for d in dice])
    batch = solution.q_values_batch(hands, rolls_left, open_bits)
    np.testing.assert_array_equal(solution.q_values_batch(dice, rolls_left, open_bits), batch)
    for row, (d, r, o) in zip(batch, positions):
        np.testing.assert_array_equal(q_values(d, r, open_bits_to_names(o)), row)
        np.testing.assert_array_equal(q_values(d, r, [c for c in range(NUM_CATEGORIES) if o >> c & 1]), row)
        np.testing.assert_array_equal(q_values(d[::-1], r, np.array([o >> c & 1 for c in range(12)], bool)), row)


@PROPERTY_SETTINGS
@given(
    positions=st.lists(st.tuples(dice_lists, st.integers(0, 2), open_sets), min_size=1, max_size=20),
)
def test_best_action_is_the_lowest_index_maximizing_q(solution, positions):
    dice = np.array([p[0] for p in positions])
    rolls_left = np.array([p[1] for p in positions])
    open_bits = np.array([p[2] for p in positions])
    q = solution.q_values_batch(dice, rolls_left, open_bits)
    best = solution.best_actions_batch(dice, rolls_left, open_bits)
    assert best.dtype == np.int64 and best.shape == (len(positions),)
    for row, action in zip(q, best):
        rounding = 1e-12 * max(abs(row.max()), 1.0)  # equal values summed in another order differ by less
        assert row[action] >= row.max() - rounding
        assert np.all(row[:action] < row.max() - rounding)


def test_equal_re_rolls_break_ties_towards_the_lowest_action(solution):
    # 2-2-3-4-5 going for Little Straight: keep 2-3-4-5 and re-roll one 2, which is die 0 or
    # die 1 (actions 1 and 2) of the sorted dice; the tie goes to action 1.
    q = q_values([5, 2, 4, 2, 3], 2, ["little_straight"])
    assert q[1] == q[2] == q.max()
    assert np.sum(q == q.max()) == 2
    assert solution.best_actions_batch(np.array([[2, 2, 3, 4, 5]]), 2, bit("little_straight"))[0] == 1


@pytest.mark.parametrize(
    ("dice", "rolls_left", "open_rows", "lower", "higher"),
    [
        # only Yacht open: a pair of 2s and a pair of 5s are worth the same (any faces are), and keeping the 5s
        # (re-roll dice 0, 1 and 4 of the sorted 2 2 5 5 6: action 19) is the lower action of the two (2s: 28)
        ((2, 2, 5, 5, 6), 2, ["yacht"], 0b10011, 0b11100),
        # Little and Big Straight are mirror images (face f <-> 7 - f): scratching either leaves the same value
        ((1, 1, 3, 3, 6), 0, ["little_straight", "big_straight"], 32 + 9, 32 + 10),
    ],
)
def test_choices_equal_by_symmetry_go_to_the_lower_action_whatever_their_rounding(dice, rolls_left, open_rows, lower, higher):
    from agents.registry import make_policy

    q = q_values(dice, rolls_left, open_rows)
    assert q[lower] != q[higher] and q[lower] == pytest.approx(q[higher], rel=1e-15) and q.max() == max(q[lower], q[higher])
    bits = open_bits_from(open_rows)
    assert solve().best_actions_batch(np.array([dice]), rolls_left, bits)[0] == lower
    policy = make_policy("optimal")
    observation = policy.encoding.encode_batch(np.array([YACHT.hand(dice)]), np.array([rolls_left]), np.array([bits]))
    assert policy.act_batch(observation, np.isfinite(q)[None].astype(np.int8))[0] == lower


# -- Monte-Carlo play on the env -----------------------------------------------------------------


def play_optimal_games(solution, num_games: int, num_envs: int = 64, seed: int = 2024) -> np.ndarray:
    """Final scores of games seeded ``seed .. seed + num_games - 1``, played in lockstep by reused envs."""
    totals = np.zeros(num_games)
    games = iter(range(num_games))
    playing = {}  # env -> index of the game it plays
    for env in [YachtEnv(illegal_action="raise") for _ in range(min(num_envs, num_games))]:
        playing[env] = game = next(games)
        env.reset(seed=seed + game)
    while playing:
        envs = list(playing)
        states = np.array([env.state for env in envs])
        actions = solution.best_actions_batch(states[:, 0], states[:, 1], states[:, 2]).tolist()
        for env, action in zip(envs, actions):
            _, reward, terminated, _, _ = env.step(action)
            totals[playing[env]] += reward
            if terminated:
                game = next(games, None)
                if game is None:
                    del playing[env]
                else:
                    playing[env] = game
                    env.reset(seed=seed + game)
    return totals


def test_optimal_play_scores_the_expected_score_on_average(solution):
    scores = play_optimal_games(solution, num_games=16000)
    expected = expected_score()
    mean, std = scores.mean(), scores.std(ddof=1)
    assert abs(mean - expected) <= 2.576 * std / np.sqrt(len(scores)), (mean, expected, std)


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dice", [[1, 2, 3, 4, 7], [0, 1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4, 5, 6], "12345", [1, 2, 3, 4, 2.5]])
def test_bad_dice_are_rejected(dice):
    with pytest.raises(ValueError, match="dice|die"):
        q_values(dice, 2, CATEGORIES)


@pytest.mark.parametrize("rolls_left", [3, -1, 10])
def test_out_of_range_rolls_left_is_rejected_by_name(rolls_left):
    with pytest.raises(ValueError, match=f"rolls_left {rolls_left}"):
        q_values([1, 2, 3, 4, 5], rolls_left, CATEGORIES)


@pytest.mark.parametrize("rolls_left", [1.0, "2", None, True])
def test_non_integer_rolls_left_is_rejected(rolls_left):
    with pytest.raises(ValueError, match="rolls_left"):
        q_values([1, 2, 3, 4, 5], rolls_left, CATEGORIES)


@pytest.mark.parametrize(
    "open_categories, named",
    [
        (["ones", "sevens"], "sevens"),
        (["Yacht"], "Yacht"),
        ([0, 12], "12"),
        ([-1], "-1"),
        ([1.5], "1.5"),
        ([True] * 11, "12 entries"),
        (np.ones(13, dtype=bool), "12 entries"),
        (7, "7"),
    ],
)
def test_bad_open_categories_are_rejected_by_name(open_categories, named):
    with pytest.raises(ValueError, match=named):
        q_values([1, 2, 3, 4, 5], 2, open_categories)


@pytest.mark.parametrize(
    "rules, rolls_left, said",
    [
        ("yacht", 1.5, "rolls_left must be an integer in 0..2, got 1.5"),
        ("yacht", True, "rolls_left must be an integer in 0..2, got True"),
        ("yacht", 3, "rolls_left 3 is out of range 0..2"),
        ("yahtzee", "1", "rolls_left must be an integer in 0..2, got '1'"),
    ],
)
def test_bad_rolls_left_are_rejected_naming_the_range(rules, rolls_left, said):
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
        q_values([1, 2, 3, 4, 5], rolls_left, ["chance"], rules)


@pytest.mark.parametrize("open_categories", [[], (), set(), [False] * 12, np.zeros(12, dtype=bool)])
def test_no_open_category_means_the_game_is_over(open_categories):
    with pytest.raises(ValueError, match="no category is open"):
        q_values([1, 2, 3, 4, 5], 2, open_categories)


def test_open_categories_accept_names_indices_and_masks():
    expected = bit("ones") | bit("yacht")
    assert open_bits_from(["ones", "yacht"], YACHT) == expected
    assert open_bits_from("yacht", YACHT) == bit("yacht")
    assert open_bits_from([0, 11], YACHT) == expected
    assert open_bits_from(np.array([0, 11]), YACHT) == expected
    assert open_bits_from([True] + [False] * 10 + [True], YACHT) == expected
    assert open_bits_from(np.array([1] + [0] * 10 + [1], dtype=bool), YACHT) == expected
    assert open_bits_from(CATEGORIES) == ALL_OPEN


@pytest.mark.parametrize(
    "rolls_per_turn, rolls_left",
    [(3, 3), (3, -1), (1, 1), (4, 4), (4, -2)],
)
def test_out_of_range_rolls_left_names_the_allowed_range(rolls_per_turn, rolls_left):
    rules = RuleSet("one row", (Category("sum", total),), num_dice=2, num_faces=3, rolls_per_turn=rolls_per_turn)
    message = f"rolls_left {rolls_left} is out of range 0..{rolls_per_turn - 1}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        q_values([1, 2], rolls_left, ["sum"], rules)


@pytest.mark.parametrize(
    "hands, rolls_left, open_bits, named",
    [
        ([252], 2, 1, "hand index 252"),
        ([-1], 2, 1, "hand index -1"),
        ([[1, 2, 3, 4, 7]], 2, 1, "die 7"),
        ([0], 3, 1, "rolls_left 3"),
        ([0], 2, 0, "open_bits 0"),
        ([0], 2, 1 << 12, "open_bits 4096"),
        ([0.5], 2, 1, "hands"),
        ([[1, 2, 3]], 2, 1, "shape"),
    ],
)
def test_bad_batches_are_rejected_by_name(solution, hands, rolls_left, open_bits, named):
    with pytest.raises(ValueError, match=named):
        solution.q_values_batch(hands, rolls_left, open_bits)
