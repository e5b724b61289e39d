"""The two-player solver against a brute-force expectimax written here, over explicit dice outcomes.

The reference plays each turn by enumerating every ordered roll of the dice and every subset of dice
positions to re-roll, memoized; it shares no code with the solver but the rule set's name for its rows.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import pytest

from agents.two_player import check_rules, solve_two_player
from agents.two_player.kernel import SCALE
from yacht_env.rules import YACHT, Category, RuleSet, all_alike, total, upper

FACES = 3
DICE = 2
ROLLS = 2
ROWS = ("ones", "threes", "pair", "sum")


def reference_points(row: str, dice: tuple[int, ...]) -> int:
    """The rows of the small game, scored from their definitions."""
    if row == "ones":
        return dice.count(1)
    if row == "threes":
        return 3 * dice.count(3)
    if row == "pair":
        return 5 if len(set(dice)) == 1 else 0
    return sum(dice)


SMALL = RuleSet(
    name="small_two_player",
    categories=(Category("ones", upper(1)), Category("threes", upper(3)), Category("pair", all_alike(5)), Category("sum", total)),
    num_dice=DICE,
    num_faces=FACES,
    rolls_per_turn=ROLLS,
)


@lru_cache(maxsize=None)
def reference_value(mover: frozenset, other: frozenset, difference: int) -> float:
    """The mover's chance of winning (tie 1/2) at the start of its turn, both playing to win."""
    rolls = list(itertools.product(range(1, FACES + 1), repeat=DICE))
    return sum(best_with(mover, other, difference, dice, ROLLS - 1) for dice in rolls) / len(rolls)


@lru_cache(maxsize=None)
def best_with(mover: frozenset, other: frozenset, difference: int, dice: tuple[int, ...], rerolls_left: int) -> float:
    """The best the mover can do holding ``dice`` (in the order rolled) with ``rerolls_left`` re-rolls."""
    best = max(after_scoring(mover, other, difference, row, reference_points(row, dice)) for row in mover)
    if rerolls_left:
        for picked in range(1, 1 << DICE):  # each non-empty set of positions to pick up
            positions = [i for i in range(DICE) if picked >> i & 1]
            outcomes = list(itertools.product(range(1, FACES + 1), repeat=len(positions)))
            total_value = 0.0
            for fresh in outcomes:
                new = list(dice)
                for position, face in zip(positions, fresh):
                    new[position] = face
                total_value += best_with(mover, other, difference, tuple(new), rerolls_left - 1)
            best = max(best, total_value / len(outcomes))
    return best


def after_scoring(mover: frozenset, other: frozenset, difference: int, row: str, points: int) -> float:
    """The mover's chance after writing ``points`` in ``row``: the game's end, or the other's turn."""
    left = mover - {row}
    lead = difference + points
    if not left and not other:
        return 1.0 if lead > 0 else 0.5 if lead == 0 else 0.0
    return 1.0 - reference_value(other, left, -lead)


def states(rules: RuleSet):
    """Every turn-start pair the turn order gives, as row-name sets, with the differences a game can reach."""
    names = rules.category_names
    most = {name: max(reference_points(name, d) for d in itertools.product(range(1, FACES + 1), repeat=DICE)) for name in names}
    for a in range(1, len(names) + 1):
        for b in (a, a - 1):
            for mover in itertools.combinations(names, a):
                for other in itertools.combinations(names, b):
                    scored_mover = sum(most[n] for n in names if n not in mover)
                    scored_other = sum(most[n] for n in names if n not in other)
                    for difference in range(-scored_other, scored_mover + 1):
                        yield frozenset(mover), frozenset(other), difference


def bits(rules: RuleSet, rows: frozenset) -> int:
    return sum(1 << rules.category_index[name] for name in rows)


@pytest.fixture(scope="module")
def small_solution(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield solve_two_player(SMALL)


# Every stored value is within one rounding step per layer of the exact one.
TOLERANCE = 2 * len(ROWS) * 0.5 / SCALE + 1e-6


def test_every_state_matches_brute_force(small_solution):
    worst = 0.0
    for mover, other, difference in states(SMALL):
        value = small_solution.value(bits(SMALL, mover), bits(SMALL, other), difference)
        worst = max(worst, abs(value - reference_value(mover, other, difference)))
    assert worst <= TOLERANCE


def test_start_value_and_bounds(small_solution):
    assert small_solution.start_value() == pytest.approx(reference_value(frozenset(ROWS), frozenset(ROWS), 0), abs=TOLERANCE)
    for layer in small_solution.layers[1:]:
        assert layer.min() >= 0 and layer.max() <= SCALE


def test_the_last_turn_is_exact(small_solution):
    # Player two's last turn reads only the end of the game: its values are rounded once.
    for row in ROWS:
        for difference in range(-30, 31):
            try:
                value = small_solution.value(bits(SMALL, frozenset([row])), 0, difference)
            except ValueError:
                continue
            assert value == pytest.approx(reference_value(frozenset([row]), frozenset(), difference), abs=0.5 / SCALE + 1e-7)


def test_a_bigger_lead_never_hurts(small_solution):
    layout = small_solution.layout
    for n, layer in enumerate(layout.layers[1:], start=1):
        values = small_solution.layers[n].astype(np.int64)
        for pair in range(layer.num_pairs):
            run = values[layer.offset[pair] : layer.offset[pair + 1]]
            assert (np.diff(run) >= 0).all()


def test_action_values_give_the_state_value(small_solution):
    # V = sum over first rolls of the best action's value, and each action's value is the reference's.
    dice = SMALL.dice
    for mover, other, difference in list(states(SMALL))[::7]:
        mover_bits, other_bits = bits(SMALL, mover), bits(SMALL, other)
        total_value = 0.0
        for hand, probability in zip(dice.hands, dice.hand_probabilities):
            q = small_solution.action_values(mover_bits, other_bits, difference, hand.tolist(), ROLLS - 1)
            total_value += probability * q.max()
            expected = best_with(mover, other, difference, tuple(int(d) for d in hand), ROLLS - 1)
            assert q.max() == pytest.approx(expected, abs=TOLERANCE)
        assert total_value == pytest.approx(small_solution.value(mover_bits, other_bits, difference), abs=1e-5)


def test_rule_sets_with_bonuses_are_refused():
    with pytest.raises(ValueError, match="needs rows that score on their own"):
        check_rules("yahtzee")


def test_bad_states_are_refused(small_solution):
    with pytest.raises(ValueError, match="no turn starts"):
        small_solution.value(0b0001, 0b1111, 0)
    with pytest.raises(ValueError, match="out of range"):
        small_solution.value(0b1111, 0b1111, 5)
    assert check_rules(YACHT) is YACHT
