"""The two-player solver against a brute-force expectimax written here, over explicit dice outcomes.

The reference plays each turn by enumerating every ordered roll of the dice and every subset of dice
positions to re-roll, memoized; it shares no code with the solver but the rule set's name for its rows.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import re
from functools import lru_cache

import numpy as np
import pytest

from agents.solvers import optimal
from agents.two_player import check_rules, solve_two_player
from agents.two_player.kernel import SCALE
from agents.two_player.layout import PairLayout, layer_sizes, open_row_counts
from yacht_env.rules import YACHT, Category, RuleSet, all_alike, total, upper


def reference_points(row: str, dice: tuple[int, ...]) -> int:
    """The rows of the small games, scored from their definitions."""
    if row == "ones":
        return dice.count(1)
    if row == "threes":
        return 3 * dice.count(3)
    if row == "sixes":
        return 6 * dice.count(6)
    if row == "pair":
        return 5 if len(set(dice)) == 1 else 0
    return sum(dice)


def small_rules(name: str, rows: tuple[str, ...], faces: int, rolls: int) -> RuleSet:
    rules = {"ones": upper(1), "threes": upper(3), "sixes": upper(6), "pair": all_alike(5), "sum": total}
    return RuleSet(
        name=name, categories=tuple(Category(row, rules[row]) for row in rows), num_dice=2, num_faces=faces, rolls_per_turn=rolls
    )


# Three faces and four rows; six faces (the solver's unrolled path for six-sided dice) and three rows.
GAMES = {
    "three_faces": small_rules("two_player_three_faces", ("ones", "threes", "pair", "sum"), 3, 2),
    "six_faces": small_rules("two_player_six_faces", ("ones", "sixes", "sum"), 6, 3),
}


class Reference:
    """The brute-force expectimax of one small game."""

    def __init__(self, rules: RuleSet, opponent: str | None = None, seat: int = 0):
        self.rules = rules
        self.rows = rules.category_names
        self.faces, self.dice, self.rolls = rules.num_faces, rules.num_dice, rules.rolls_per_turn
        self.value = lru_cache(maxsize=None)(self._value)
        self.best_with = lru_cache(maxsize=None)(self._best_with)
        # A best response: the player not in ``seat`` plays the solitaire policy ``opponent``.
        self.policy = (
            None if opponent is None else (optimal.solve(rules) if opponent == "optimal" else optimal.solve_myopic(rules))
        )
        self.seat = seat

    def fixed(self, mover: frozenset, other: frozenset) -> bool:
        """Whether the mover plays the fixed policy: player one moves when both have as many rows open."""
        mover_seat = 0 if len(mover) == len(other) else 1
        return self.policy is not None and mover_seat != self.seat

    def policy_turn(self, mover: frozenset, other: frozenset, lead: int, dice: tuple[int, ...], rerolls_left: int) -> float:
        """The value of the fixed policy's action, its re-roll mask read over the sorted dice."""
        ordered = tuple(sorted(dice))
        action = int(self.policy.best_actions_batch(self.rules.hand(ordered), rerolls_left, bits(self.rules, mover))[0])
        first_score = 1 << self.dice
        if action >= first_score:
            row = self.rows[action - first_score]
            return self.after_scoring(mover, other, lead, row, reference_points(row, ordered))
        positions = [i for i in range(self.dice) if action >> i & 1]
        outcomes = list(itertools.product(range(1, self.faces + 1), repeat=len(positions)))
        total_value = 0.0
        for fresh in outcomes:
            new = list(ordered)
            for position, face in zip(positions, fresh):
                new[position] = face
            total_value += self.best_with(mover, other, lead, tuple(new), rerolls_left - 1)
        return total_value / len(outcomes)

    def _value(self, mover: frozenset, other: frozenset, lead: int) -> float:
        """The mover's chance of winning (tie 1/2) at the start of its turn, both playing to win."""
        rolls = list(itertools.product(range(1, self.faces + 1), repeat=self.dice))
        return sum(self.best_with(mover, other, lead, dice, self.rolls - 1) for dice in rolls) / len(rolls)

    def _best_with(self, mover: frozenset, other: frozenset, lead: int, dice: tuple[int, ...], rerolls_left: int) -> float:
        """The best the mover can do holding ``dice`` (in the order rolled) with ``rerolls_left`` re-rolls."""
        if self.fixed(mover, other):
            return self.policy_turn(mover, other, lead, dice, rerolls_left)
        best = max(self.after_scoring(mover, other, lead, row, reference_points(row, dice)) for row in mover)
        if rerolls_left:
            for picked in range(1, 1 << self.dice):  # each non-empty set of positions to pick up
                positions = [i for i in range(self.dice) if picked >> i & 1]
                outcomes = list(itertools.product(range(1, self.faces + 1), repeat=len(positions)))
                total_value = 0.0
                for fresh in outcomes:
                    new = list(dice)
                    for position, face in zip(positions, fresh):
                        new[position] = face
                    total_value += self.best_with(mover, other, lead, tuple(new), rerolls_left - 1)
                best = max(best, total_value / len(outcomes))
        return best

    def after_scoring(self, mover: frozenset, other: frozenset, lead: int, row: str, points: int) -> float:
        """The mover's chance after writing ``points`` in ``row``: the game's end, or the other's turn."""
        left = mover - {row}
        new_lead = lead + points
        if not left and not other:
            return 1.0 if new_lead > 0 else 0.5 if new_lead == 0 else 0.0
        return 1.0 - self.value(other, left, -new_lead)


def states(rules: RuleSet):
    """Every turn-start pair the turn order gives, as row-name sets, with the leads a game can reach."""
    names = rules.category_names
    all_dice = list(itertools.product(range(1, rules.num_faces + 1), repeat=rules.num_dice))
    most = {name: max(reference_points(name, d) for d in all_dice) for name in names}
    for a in range(1, len(names) + 1):
        for b in (a, a - 1):
            for mover in itertools.combinations(names, a):
                for other in itertools.combinations(names, b):
                    scored_mover = sum(most[n] for n in names if n not in mover)
                    scored_other = sum(most[n] for n in names if n not in other)
                    for lead in range(-scored_other, scored_mover + 1):
                        yield frozenset(mover), frozenset(other), lead


def bits(rules: RuleSet, rows: frozenset) -> int:
    return sum(1 << rules.category_index[name] for name in rows)


@pytest.fixture(scope="module", params=sorted(GAMES))
def game(request, tmp_path_factory):
    """``(rules, solution, reference)`` of each small game, solved into a fresh cache folder."""
    rules = GAMES[request.param]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield rules, solve_two_player(rules), Reference(rules)


def tolerance(rules: RuleSet) -> float:
    """Every stored value is within one rounding step per layer of the exact one (and float32 sums)."""
    return 2 * rules.num_rows * 0.5 / SCALE + 1e-6


def test_every_state_matches_brute_force(game):
    rules, solution, reference = game
    worst = 0.0
    for mover, other, lead in states(rules):
        value = solution.value(bits(rules, mover), bits(rules, other), lead)
        worst = max(worst, abs(value - reference.value(mover, other, lead)))
    assert worst <= tolerance(rules)


def test_start_value_and_bounds(game):
    rules, solution, reference = game
    every_row = frozenset(rules.category_names)
    assert solution.start_value() == pytest.approx(reference.value(every_row, every_row, 0), abs=tolerance(rules))
    for layer in solution.layers[1:]:
        assert layer.min() >= 0 and layer.max() <= SCALE


def test_the_last_turn_is_exact(game):
    # Player two's last turn reads only the end of the game: its values are rounded once.
    rules, solution, reference = game
    for row in rules.category_names:
        for lead in range(-60, 61):
            try:
                value = solution.value(bits(rules, frozenset([row])), 0, lead)
            except ValueError:
                continue
            assert value == pytest.approx(reference.value(frozenset([row]), frozenset(), lead), abs=0.5 / SCALE + 1e-7)


def test_a_bigger_lead_never_hurts(game):
    _, solution, _ = game
    for n, layer in enumerate(solution.layout.layers[1:], start=1):
        values = solution.layers[n].astype(np.int64)
        for pair in range(layer.num_pairs):
            assert (np.diff(values[layer.offset[pair] : layer.offset[pair + 1]]) >= 0).all()


def test_action_values_give_the_state_value(game):
    # V = sum over first rolls of the best action's value, and each best action's value is the reference's.
    rules, solution, reference = game
    for mover, other, lead in list(states(rules))[::11]:
        mover_bits, other_bits = bits(rules, mover), bits(rules, other)
        total_value = 0.0
        for hand, probability in zip(rules.dice.hands, rules.dice.hand_probabilities):
            q = solution.action_values(mover_bits, other_bits, lead, hand.tolist(), rules.rolls_per_turn - 1)
            total_value += probability * q.max()
            expected = reference.best_with(mover, other, lead, tuple(int(d) for d in hand), rules.rolls_per_turn - 1)
            assert q.max() == pytest.approx(expected, abs=tolerance(rules))
        assert total_value == pytest.approx(solution.value(mover_bits, other_bits, lead), abs=1e-5)


def test_rule_sets_with_bonuses_are_refused():
    with pytest.raises(ValueError, match="needs rows that score on their own"):
        check_rules("yahtzee")
    assert check_rules(YACHT) is YACHT


def test_bad_states_are_refused(game):
    rules, solution, _ = game
    every_row = rules.all_open
    with pytest.raises(ValueError, match="no turn starts"):
        solution.value(0b001, every_row, 0)
    with pytest.raises(ValueError, match="out of range"):
        solution.value(every_row, every_row, 5)


def test_leads_and_open_rows_outside_the_game_are_refused_naming_them_and_the_range_allowed(game):
    rules, solution, _ = game
    dice = list(itertools.product(range(1, rules.num_faces + 1), repeat=rules.num_dice))
    row_max = [max(reference_points(row, roll) for roll in dice) for row in rules.category_names]
    last = rules.num_rows - 1
    one_open = 1 << last  # player two's last turn: the last row open, the other's sheet full
    ahead, behind = sum(row_max) - row_max[last], -sum(row_max)  # what the filled rows can hold
    assert solution.value(one_open, 0, ahead) == 1.0 and solution.value(one_open, 0, behind) == 0.0
    assert solution.value(one_open, 0, -row_max[last] - 1) == 0.0  # further behind than the last row can make up
    assert solution.value(one_open, 0, 1) == 1.0  # ahead, and the other has nothing left to score
    for lead in (ahead + 1, behind - 1):
        with pytest.raises(ValueError, match=rf"^lead {lead} is out of range {behind}\.\.{ahead}: the filled rows"):
            solution.value(one_open, 0, lead)
    for lead in (True, 0.5, "0"):
        with pytest.raises(ValueError, match=rf"^lead must be an integer .*, got {re.escape(repr(lead))}$"):
            solution.value(one_open, 0, lead)
    assert solution.value(one_open, 0, np.int64(1)) == 1.0
    for name, state in (("mover_open", (rules.all_open + 1, 0)), ("other_open", (one_open, -1))):
        with pytest.raises(ValueError, match=rf"^{name} {state[name == 'other_open']} is out of range 0\.\.{rules.all_open}$"):
            solution.value(*state, 0)
    # the game over: a lead wins, a tie is half a win, whatever the rows were
    assert [solution.value([], frozenset(), lead) for lead in (1, 0, -1)] == [1.0, 0.5, 0.0]
    # open rows named are the rows of those names, in any kind of collection
    last_name = rules.category_names[last]
    for named in ([last_name], (last_name,), {last_name}, frozenset([last_name])):
        assert solution.value(named, [], 1) == solution.value(one_open, 0, 1) == 1.0
        assert solution.value(named, (), -row_max[last]) == solution.value(one_open, 0, -row_max[last]) < 1.0
    with pytest.raises(ValueError, match="^the mover has no open row"):
        solution.action_values(0, 0, 0, [1] * rules.num_dice, 0)


def test_a_decision_s_rolls_left_outside_the_turn_is_refused_and_a_strategy_s_chances_decide_nothing(game):
    rules, solution, _ = game
    hand, every = [1] * rules.num_dice, rules.all_open
    for rolls_left in (True, -1, rules.rolls_per_turn, rules.rolls_per_turn + 1, 1.0):
        expected = rf"^rolls_left must be an integer in 0\.\.{rules.rolls_per_turn - 1}, got {re.escape(repr(rolls_left))}$"
        with pytest.raises(ValueError, match=expected):
            solution.action_values(every, every, 0, hand, rolls_left)
    for rolls_left in (0, rules.rolls_per_turn - 1):
        assert np.isfinite(solution.action_values(every, every, 0, hand, rolls_left)).any()
    strategy = copy.copy(solution)
    strategy.decides = False
    with pytest.raises(ValueError, match=rf"^{re.escape(solution.label)} holds a strategy's chances, not decisions"):
        strategy.action_values(every, every, 0, hand, 0)


# Against greedy (a long check, `pytest -m slow`) the kernel runs as against optimal; greedy's table is checked
# decision by decision in test_fixed_opponents.py.
@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("opponent", ["optimal", pytest.param("greedy", marks=pytest.mark.slow)])
def test_best_response_matches_brute_force(opponent, seat, tmp_path, monkeypatch):
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path))
    rules = GAMES["three_faces"]
    solution, reference = solve_two_player(rules, opponent, seat), Reference(rules, opponent, seat)
    worst = 0.0
    for mover, other, lead in states(rules):
        value = solution.value(bits(rules, mover), bits(rules, other), lead)
        worst = max(worst, abs(value - reference.value(mover, other, lead)))
    assert worst <= tolerance(rules)
    # Against a fixed policy the best response wins at least what the game's value gives it.
    game_value = solve_two_player(rules).start_value()
    first_player = solution.start_value()
    assert (first_player >= game_value - 1e-4) if seat == 0 else (first_player <= game_value + 1e-4)


def test_unknown_opponents_are_refused():
    with pytest.raises(ValueError, match="unknown opponent 'perfect'; expected one of optimal, greedy"):
        solve_two_player(GAMES["three_faces"], "perfect")
    with pytest.raises(ValueError, match="seat must be 0"):
        solve_two_player(GAMES["three_faces"], "optimal", 2)


def test_only_the_legal_actions_have_a_chance(game):
    # Re-rolls (masks 1 .. 2**dice - 1) with a roll left, and the mover's open rows: every other action is -inf.
    rules, solution, _ = game
    first_score = 1 << rules.num_dice
    every = list(states(rules))
    for mover, other, lead in every[:: len(every) // 40]:
        mover_bits = bits(rules, mover)
        for rolls_left in range(rules.rolls_per_turn):
            for hand in rules.dice.hands[::2]:
                q = solution.action_values(mover_bits, bits(rules, other), lead, hand.tolist(), rolls_left)
                legal = np.zeros(first_score + rules.num_rows, dtype=bool)
                legal[1:first_score] = rolls_left > 0
                legal[first_score:] = [name in mover for name in rules.category_names]
                np.testing.assert_array_equal(np.isfinite(q), legal)
                assert (q[legal] >= 0).all() and (q[legal] <= 1 + 1e-6).all()


@pytest.mark.parametrize("seat", [0, 1])
def test_best_response_action_values_match_brute_force(seat, tmp_path, monkeypatch):
    """In the best response's turns its best action is worth what the brute force gives; in the policy's turns, the
    policy's own action is (the rest of that turn the policy's too); and the first roll's mean is the state value."""
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path))
    rules = GAMES["three_faces"]
    solution, reference = solve_two_player(rules, "optimal", seat), Reference(rules, "optimal", seat)
    rerolls = rules.rolls_per_turn - 1
    every = list(states(rules))
    met = {True: 0, False: 0}
    for mover, other, lead in every[:: len(every) // 60]:
        mover_bits, other_bits = bits(rules, mover), bits(rules, other)
        fixed = reference.fixed(mover, other)
        met[fixed] += 1
        total_value = 0.0
        for hand, probability in zip(rules.dice.hands, rules.dice.hand_probabilities):
            q = solution.action_values(mover_bits, other_bits, lead, hand.tolist(), rerolls)
            if fixed:
                chosen = q[int(reference.policy.best_actions_batch(rules.hand(hand.tolist()), rerolls, mover_bits)[0])]
            else:
                chosen = q.max()
            assert chosen == pytest.approx(
                reference.best_with(mover, other, lead, tuple(int(d) for d in hand), rerolls), abs=tolerance(rules)
            )
            total_value += probability * chosen
        assert total_value == pytest.approx(solution.value(mover_bits, other_bits, lead), abs=1e-5)
    assert min(met.values()) > 10  # both seats' turns


def test_the_stored_leads_of_a_two_row_game_as_counted_by_hand():
    """Rows ``ones`` (at most 2 with two dice) and ``sum`` (at most 6 with three faces): each pair stores the leads
    from max(-what the mover can still score, -what the other has filled) to min(what the other can still
    score, what the mover has filled)."""
    rules = small_rules("two_player_two_rows", ("ones", "sum"), 3, 2)
    layout = PairLayout(rules)
    np.testing.assert_array_equal(open_row_counts(3), [0, 1, 1, 2, 1, 2, 2, 3])
    assert [layer_sizes(n) for n in range(5)] == [(0, 0), (1, 0), (1, 1), (2, 1), (2, 2)]
    assert layout.num_layers == 5 and len(layout.layers) == 5
    ones, sum_row = 0b01, 0b10
    expected = [  # (mover's sets, other's sets, lo of each pair, width of each pair), mover's set major
        ([0], [0], [0], [1]),  # the game over: a lead of 0 is all that is stored
        ([ones, sum_row], [0], [-2, -6], [3, 7]),  # player two's last turn: behind by at most what its filled row holds
        ([ones, sum_row], [ones, sum_row], [-2, -2, -6, -2], [5, 9, 9, 5]),
        ([0b11], [ones, sum_row], [-6, -2], [7, 3]),
        ([0b11], [0b11], [0], [1]),  # the first turn: lead 0
    ]
    for layer, (movers, others, lo, width) in zip(layout.layers, expected, strict=True):
        np.testing.assert_array_equal(layer.mover_sets, movers)
        np.testing.assert_array_equal(layer.other_sets, others)
        np.testing.assert_array_equal(layer.lo, lo)
        np.testing.assert_array_equal(layer.width, width)
        np.testing.assert_array_equal(layer.offset, np.concatenate([[0], np.cumsum(width)]))
        assert layer.num_pairs == len(lo) and layer.num_values == sum(width)
    assert layout.total_values == 1 + 10 + 28 + 10 + 1
    assert layout.pair_index(sum_row, ones) == 2 and layout.pair_index(ones, sum_row) == 1
    assert layout.pair_index(0b11, sum_row) == 1 and layout.pair_index(0b11, 0b11) == 0
    for mover, other in ((0, ones), (ones, 0b11), (0, 0b11)):
        with pytest.raises(ValueError, match="no turn starts"):
            layout.pair_index(mover, other)
    # a layer is the solution's index into its stored values: fixed once made, and one layer is one key of a cache
    layer = layout.layers[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        layer.lo = layer.lo + 1
    assert layer == layout.layers[1] and layer != dataclasses.replace(layer) and len({layer, layout.layers[1]}) == 1


def test_with_more_ways_to_re_roll_than_hands_every_re_roll_still_has_its_chance(tmp_path, monkeypatch):
    # three two-faced dice: eight sets of dice to pick up, four hands (zero to three ones); the reference agrees
    rules = RuleSet(
        name="two_player_coins",
        categories=(Category("ones", upper(1)), Category("sum", total)),
        num_dice=3,
        num_faces=2,
        rolls_per_turn=2,
    )
    assert rules.dice.num_hands < 1 << rules.num_dice
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path))
    solution, reference = solve_two_player(rules), Reference(rules)
    every = rules.all_open
    for dice in ([1, 1, 2], [2, 2, 2]):
        q = solution.action_values(every, every, 0, dice, 1)
        assert np.isfinite(q[1 : 1 << rules.num_dice]).all()  # every non-empty set of dice may be picked up
        expected = reference.best_with(frozenset(rules.category_names), frozenset(rules.category_names), 0, tuple(dice), 1)
        assert q.max() == pytest.approx(expected, abs=tolerance(rules))
