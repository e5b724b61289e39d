"""Target-score DP, exact score distributions and the win / target:T policies, against first principles.

The reference values here come from an expectimax over every *ordered* dice outcome of a reduced
game (3 dice, 3 faces, 4 rows, 3 rolls), written without hand, keep or open-set tables; the
Monte-Carlo checks play the real envs.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agents.policies.guard import unguarded
from agents.policies.win import TargetPolicy, WinPolicy
from agents.solvers.distribution import (
    at_least,
    quantiles,
    score_distribution,
    score_distributions,
)
from agents.solvers.optimal import expected_score, solve
from agents.solvers.solution_cache import cache_dir, source_version
from agents.solvers.target import (
    SOLVER_SOURCES,
    max_points_left,
    max_total,
    solve_target,
    solve_target_table,
    target_probabilities,
    turn_q_values,
)
from agents.solvers.win_chances import win_probabilities, win_share_curve
from tests.agents.small_games import MINI
from tests.reference import reference_score
from yacht_env.rules import YACHT, Category, RuleSet, total

ROOT = Path(__file__).resolve().parents[2]

FACES = range(1, 4)


def score(dice: tuple[int, ...], c: int) -> int:
    return MINI.score(dice, c)


def rolls_of(count: int):
    """Every ordered outcome of ``count`` dice, each equally likely."""
    return list(itertools.product(FACES, repeat=count))


def turn_expectimax(end_value, dice: tuple[int, ...], rolls_left: int, open_bits: int) -> float:
    """Best expected ``end_value(c, points)`` over the rest of the turn, by ordered outcomes."""
    return turn_solver(end_value, open_bits)(tuple(sorted(dice)), rolls_left)


def turn_solver(end_value, open_bits: int):
    """``best(sorted dice, rolls left)`` of one turn whose end is worth ``end_value``, memoized."""

    @cache
    def best(hand: tuple[int, ...], rolls: int) -> float:
        value = max(end_value(c, score(hand, c)) for c in range(MINI.num_rows) if open_bits >> c & 1)
        if rolls == 0:
            return value
        for mask in range(1, 1 << len(hand)):
            kept = [d for i, d in enumerate(hand) if not mask >> i & 1]
            outcomes = rolls_of(mask.bit_count())
            value = max(
                value,
                sum(best(tuple(sorted(kept + list(o))), rolls - 1) for o in outcomes) / len(outcomes),
            )
        return value

    return best


@cache
def brute_target(open_bits: int, needed: int, tie: float = 1.0) -> float:
    """max P(points to come >= needed) (``tie`` for landing exactly on it) from a turn start."""
    if open_bits == 0:
        return 1.0 if needed < 0 else (tie if needed == 0 else 0.0)
    if needed < 0:
        return 1.0

    def end_value(c, points):
        return brute_target(open_bits & ~(1 << c), needed - points, tie)

    first = rolls_of(MINI.num_dice)
    best = turn_solver(end_value, open_bits)
    return sum(best(tuple(sorted(roll)), MINI.rolls_per_turn - 1) for roll in first) / len(first)


# -- the target table -----------------------------------------------------------------------------


@pytest.mark.parametrize("tie", [1.0, 0.5])
def test_target_table_matches_brute_force_on_every_state(tie):
    table = solve_target_table(MINI, tie)
    assert table.shape == (16, max_total(MINI) + 1)
    for open_bits in range(16):
        for needed in range(table.shape[1]):
            assert table[open_bits, needed] == pytest.approx(brute_target(open_bits, needed, tie), abs=1e-12), (open_bits, needed)


def test_target_q_values_match_brute_force_inside_a_turn():
    solution = solve_target(MINI, use_disk_cache=False)
    rng = np.random.default_rng(3)
    for _ in range(25):
        dice = tuple(int(d) for d in rng.integers(1, 4, size=3))
        rolls_left = int(rng.integers(0, 3))
        open_bits = int(rng.integers(1, 16))
        needed = int(rng.integers(-2, 30))
        q = target_probabilities(
            dice,
            rolls_left,
            [c for c in range(4) if open_bits >> c & 1],
            needed,
            rules=MINI,
        )
        best = turn_expectimax(
            lambda c, p, s=open_bits, n=needed: brute_target(s & ~(1 << c), n - p),
            dice,
            rolls_left,
            open_bits,
        )
        assert q.max() == pytest.approx(best, abs=1e-12)
        for c in range(4):
            action = MINI.dice.num_rerolls + c
            if open_bits >> c & 1:
                assert q[action] == pytest.approx(
                    brute_target(open_bits & ~(1 << c), needed - score(tuple(sorted(dice)), c)),
                    abs=1e-12,
                )
            else:
                assert q[action] == -np.inf
        assert solution.at_least(needed, open_bits) == pytest.approx(brute_target(open_bits, needed), abs=1e-12)


def test_turn_q_values_with_expected_score_ends_are_the_optimal_q_values():
    solution = solve(YACHT)
    rng = np.random.default_rng(0)
    hands, rolls_left, open_bits = (
        rng.integers(0, 252, 300),
        rng.integers(0, 3, 300),
        rng.integers(1, 4096, 300),
    )
    bits = 1 << np.arange(12)
    ends = np.arange(51)[None, None, :] + solution.state_values[open_bits[:, None] & ~bits][:, :, None]
    got = turn_q_values(YACHT, hands, rolls_left, open_bits, ends)
    want = solution.q_values_batch(hands, rolls_left, open_bits)
    assert np.array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], atol=1e-9)


def test_bad_inputs_name_the_value():
    with pytest.raises(ValueError, match="rolls_left"):
        target_probabilities([1, 2, 3], 3, ["ones"], 5, rules=MINI)
    with pytest.raises(ValueError, match="needed"):
        target_probabilities([1, 2, 3], 1, ["ones"], 2.5, rules=MINI)
    with pytest.raises(ValueError, match="tie"):
        solve_target(MINI, tie=0.3)


def test_disk_cache_is_used_and_a_corrupt_file_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path))
    rules = RuleSet(
        name="mini2",
        categories=MINI.categories[:3],
        num_dice=2,
        num_faces=3,
        rolls_per_turn=2,
    )
    first = solve_target(rules)
    files = list(tmp_path.glob("target-mini2-*.npy"))
    assert len(files) == 1 and files[0].parent == cache_dir()
    np.testing.assert_array_equal(np.load(files[0], allow_pickle=False), first.chances)
    # another process: a corrupt file (here a pickled object array, never unpickled) is ignored and rewritten
    np.save(files[0], np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    again = RuleSet(
        name="mini2",
        categories=MINI.categories[:3],
        num_dice=2,
        num_faces=3,
        rolls_per_turn=2,
    )
    np.testing.assert_array_equal(solve_target(again).chances, first.chances)
    np.testing.assert_array_equal(np.load(files[0], allow_pickle=False), first.chances)
    files[0].write_bytes(b"garbage")
    third = RuleSet(
        name="mini2",
        categories=MINI.categories[:3],
        num_dice=2,
        num_faces=3,
        rolls_per_turn=2,
    )
    np.testing.assert_array_equal(solve_target(third).chances, first.chances)


def one_die_rules() -> RuleSet:
    """One two-faced die, one row worth its face, two rolls: a fresh object, so nothing of it is solved yet."""
    return RuleSet(name="one-die", categories=(Category("choice", total),), num_dice=1, num_faces=2, rolls_per_turn=2)


def test_the_table_gives_the_chance_of_at_least_the_target_by_default():
    """Keep a 2, re-roll a 1: P(>= 2) = 1 - 1/4; 0 and 1 are certain, and with no row left only 0 is reached."""
    assert solve_target_table(one_die_rules()).tolist() == [[1.0, 0.0, 0.0], [1.0, 1.0, 0.75]]


@pytest.mark.parametrize("use_disk_cache", [False, True])
def test_a_solved_target_table_is_read_only_solved_or_read_from_disk(use_disk_cache):
    """One table per rule set serves every policy: a write through any of them is refused."""
    table = solve_target(one_die_rules(), use_disk_cache=use_disk_cache).chances
    with pytest.raises(ValueError, match="read-only"):
        table[0, 0] = 0.5


def test_the_lookup_reads_the_table_up_to_the_top_total_and_nothing_past_it():
    """MINI's top total (28: a yacht and the best of each other row) is reached with some chance; 29 never."""
    solution = solve_target(MINI)
    top, all_open = solution.max_total, MINI.all_open
    assert top == max_total(MINI) and 0 < solution.chances[all_open, top] < solution.chances[all_open, top - 1] < 1
    needed = np.array([-3, 0, top - 1, top, top + 1, top + 50])
    shown = solution.lookup(np.full(len(needed), all_open), needed)
    expected = [1.0, 1.0, solution.chances[all_open, top - 1], solution.chances[all_open, top], 0.0, 0.0]
    assert shown.tolist() == expected


@pytest.mark.parametrize(
    "table, probabilities",
    [([[0.0, 1.0]], True), ([[0.5, -0.01]], False), ([[1.01, 0.5]], False), ([[np.nan, 0.5]], False), ([[np.inf]], False)],
)
def test_a_stored_table_is_taken_only_when_every_entry_is_a_probability(table, probabilities):
    from agents.solvers.target import is_probability_array

    assert is_probability_array(np.array(table)) is probabilities


def test_solve_target_stores_its_table_on_disk_named_by_the_rules_content(tmp_path, monkeypatch):
    """By default the array goes to the cache folder, named by the rules' name, a 16-hex-digit digest and the solver's
    version, with its checksum beside it."""
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path))
    solution = solve_target(one_die_rules())
    content = b"1,2,2,1" + np.array([[1], [2]], dtype=np.int16).tobytes()  # dice, faces, rolls, rows; the hand scores
    digest = hashlib.sha256(content).hexdigest()[:16]
    name = f"target-one-die-{digest}-{source_version(*SOLVER_SOURCES)}.npy"
    assert sorted(path.name for path in tmp_path.iterdir()) == [name, f"{name}.sha256"]
    np.testing.assert_array_equal(np.load(tmp_path / name, allow_pickle=False), solution.chances)


@given(
    value=st.integers(-1000, 1000),
    hand=st.integers(0, len(MINI.dice.hands) - 1),
    rolls_left=st.integers(0, MINI.rolls_per_turn - 1),
    open_bits=st.integers(1, 15),
)
@example(value=-1, hand=0, rolls_left=2, open_bits=0b1111)  # every ending costs a point, re-rolls included
@example(value=-7, hand=5, rolls_left=1, open_bits=0b0100)
def test_a_turn_whose_every_ending_is_worth_the_same_is_worth_that_after_every_legal_action(value, hand, rolls_left, open_bits):
    """Whatever is kept or written, the turn ends at ``value`` (integers: the averages are exact); illegal stays -inf."""
    ends = np.full((1, MINI.num_rows, int(MINI.hand_scores.max()) + 1), float(value))
    q = turn_q_values(MINI, [hand], [rolls_left], [open_bits], ends)[0]
    first_score = MINI.dice.num_rerolls
    legal = np.zeros(len(q), dtype=bool)
    legal[1:first_score] = rolls_left > 0  # action 0 re-rolls nothing
    legal[first_score:] = [open_bits >> c & 1 for c in range(MINI.num_rows)]
    assert q[legal].tolist() == [float(value)] * int(legal.sum())
    assert np.isneginf(q[~legal]).all()


# -- exact score distributions --------------------------------------------------------------------


def brute_turn(open_bits: int, hand: tuple[int, ...], rolls: int) -> dict[tuple[int, int], float]:
    """P(the optimal player ends this turn writing ``points`` in row ``c``), following its actions over ordered outcomes."""
    solution = solve(MINI)
    first_score = MINI.dice.num_rerolls
    action = int(solution.best_actions_batch(np.array([list(hand)]), rolls, open_bits)[0])
    if action >= first_score:
        c = action - first_score
        return {(c, score(hand, c)): 1.0}
    picked = [i for i in range(MINI.num_dice) if action >> i & 1]  # positions in the sorted hand
    kept = [d for i, d in enumerate(hand) if i not in picked]
    result: dict[tuple[int, int], float] = {}
    for outcome in rolls_of(len(picked)):
        for key, probability in brute_turn(open_bits, tuple(sorted(kept + list(outcome))), rolls - 1).items():
            result[key] = result.get(key, 0.0) + probability / 3 ** len(picked)
    return result


@cache
def brute_to_come(open_bits: int) -> tuple[float, ...]:
    """The optimal player's points-to-come distribution from a turn start (a turn start depends on the open rows alone)."""
    if open_bits == 0:
        return (1.0,)
    result = np.zeros(max_total(MINI) + 1)
    for roll in rolls_of(MINI.num_dice):
        for (c, points), probability in brute_turn(open_bits, tuple(sorted(roll)), MINI.rolls_per_turn - 1).items():
            later = brute_to_come(open_bits & ~(1 << c))
            result[points : points + len(later)] += probability / 27 * np.array(later)
    return tuple(np.trim_zeros(result, "b"))


def brute_distribution(open_bits: int, dice=None, rolls_left=None) -> dict[int, float]:
    if dice is None:
        return dict(enumerate(brute_to_come(open_bits)))
    result: dict[int, float] = {}
    for (c, points), probability in brute_turn(open_bits, tuple(sorted(dice)), rolls_left).items():
        for later, p in enumerate(brute_to_come(open_bits & ~(1 << c))):
            result[points + later] = result.get(points + later, 0.0) + probability * p
    return result


def test_distribution_matches_the_optimal_players_own_outcomes():
    for open_bits in (15, 5, 12, 1):
        pmf = score_distribution([c for c in range(4) if open_bits >> c & 1], rules=MINI)
        want = np.zeros_like(pmf)
        for points, probability in brute_distribution(open_bits).items():
            want[points] += probability
        np.testing.assert_allclose(pmf, want, atol=1e-12)
    pmf = score_distribution(["ones", "choice"], total=7, dice=[3, 1, 1], rolls_left=1, rules=MINI)
    want = np.zeros_like(pmf)
    for points, probability in brute_distribution(0b101, (1, 1, 3), 1).items():
        want[7 + points] += probability
    np.testing.assert_allclose(pmf, want, atol=1e-12)


def test_distribution_mean_is_the_optimal_expected_score_on_every_state():
    tables = score_distributions(MINI)
    means = tables.to_come @ np.arange(tables.width)
    np.testing.assert_allclose(means, solve(MINI).state_values, atol=1e-12)
    np.testing.assert_allclose(tables.to_come.sum(axis=1), 1.0, atol=1e-12)


def test_quantiles_and_tails():
    pmf = np.array([0.1, 0.2, 0.3, 0.4])
    assert quantiles(pmf, [0.05, 0.1, 0.3, 0.31, 1.0]).tolist() == [0, 0, 1, 2, 3]
    np.testing.assert_allclose(at_least(pmf, [0, 2, 3, 4, 9]), [1.0, 0.7, 0.4, 0.0, 0.0])


def test_distribution_bad_inputs():
    with pytest.raises(ValueError, match="total"):
        score_distribution(total=-1, rules=MINI)
    with pytest.raises(ValueError, match="both dice and rolls_left"):
        score_distribution(dice=[1, 1, 1], rules=MINI)


# -- policies ---------------------------------------------------------------------------------------


def test_target_policy_success_rate_is_inside_the_dp_ci():
    """Monte-Carlo: target:T in the real vector env reaches T as often as the DP says."""
    from agents.evaluate import play_games

    target = 20
    policy = TargetPolicy(target, MINI)
    games = 20_000
    log = play_games(policy, games, seed=11, rules=MINI)
    probability = solve_target(MINI).at_least(target)
    half = 3.0 * math.sqrt(probability * (1 - probability) / games)  # 3 sigma: the test is not flaky
    assert abs((log.scores >= target).mean() - probability) < half
    optimal = play_games(
        __import__("agents.registry", fromlist=["make_policy"]).make_policy("optimal", MINI),
        games,
        seed=11,
        rules=MINI,
    )
    assert (log.scores >= target).mean() > (optimal.scores >= target).mean()  # it is not just the optimum


def test_win_share_curve_counts_shared_first_places():
    # opponents: one certain 5, one at 5 or 6 with equal chance
    pmfs = np.zeros((1, 2, 8))
    pmfs[0, 0, 5] = 1.0
    pmfs[0, 1, [5, 6]] = 0.5
    g = win_share_curve(pmfs)[0]
    assert g[4] == 0.0
    assert g[5] == pytest.approx(0.5 * (1 / 3))  # three-way tie half the time, else below the 6
    assert g[6] == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)
    assert g[7] == pytest.approx(1.0)


def last_turn_win_probability(dice, rolls_left, open_bits, total, opponent_pmf):
    """Brute-force P(win, ties half) on one's last turn against a known opponent final distribution."""
    below = np.cumsum(opponent_pmf) - opponent_pmf

    def end_value(c, points):
        z = total + points
        return below[z] + 0.5 * opponent_pmf[z] if z < len(opponent_pmf) else 1.0

    return end_value, turn_expectimax(end_value, dice, rolls_left, open_bits)


def test_the_most_points_left_of_each_open_set_is_the_sum_of_its_rows_best_hands():
    """One entry per open set of Yacht's 12 rows, each the sum of its rows' best scores as RULES.md scores them."""
    hands = list(itertools.combinations_with_replacement(range(1, 7), 5))
    best = [max(reference_score(hand, name) for hand in hands) for name in YACHT.category_names]
    most = max_points_left(YACHT)
    assert most.shape == (2**12,)
    assert most.tolist() == [sum(b for c, b in enumerate(best) if open_bits >> c & 1) for open_bits in range(2**12)]
    assert most[-1] == 5 + 10 + 15 + 20 + 25 + 30 + 28 + 30 + 30 + 30 + 30 + 50  # full house 6 6 6 5 5, four of a kind five sixes


def test_the_compiled_solver_stays_inside_its_arrays(tmp_path):
    """numba checks no index unless told to: with its bounds checks on (compiled afresh), the turn-start array and a
    turn's values are made without one index past an array's end."""
    script = (
        "from agents.solvers.target import solve_target_table, target_probabilities\n"
        "from tests.agents.small_games import MINI\n"
        "solve_target_table(MINI)\n"
        "target_probabilities((1, 2, 3), 2, [0, 1, 2, 3], 5, rules=MINI)\n"
    )
    environment = os.environ | {"NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path), "YACHT_RL_CACHE_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=environment, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


@pytest.mark.parametrize("opponent_open", [0, 0b0100, 0b1001])
def test_win_policy_is_exact_on_its_last_turn(opponent_open):
    """Every opponent finished (or, modelled exactly, still to play): the choice maximizes P(win)."""
    policy = WinPolicy(MINI, num_players=2)
    rng = np.random.default_rng(opponent_open)
    for _ in range(20):
        row = int(rng.integers(0, 4))
        open_bits = 1 << row
        dice = tuple(sorted(int(d) for d in rng.integers(1, 4, size=3)))
        rolls_left = int(rng.integers(0, 3))
        # totals the filled rows can hold (the ones, twos and choice rows 3 + 6 + 9 at most, the yacht row 10)
        most = max_points_left(MINI)
        total = int(rng.integers(0, most[0b1111 & ~open_bits] + 1))
        opponent_total = int(rng.integers(0, most[0b1111 & ~opponent_open] + 1))
        opponent_pmf = (
            score_distribution([c for c in range(4) if opponent_open >> c & 1] or None, rules=MINI) if opponent_open else None
        )
        if opponent_pmf is None:
            opponent_pmf = np.zeros(max_total(MINI) + 1)
            opponent_pmf[opponent_total] = 1.0
        else:
            opponent_pmf = np.concatenate((np.zeros(opponent_total), opponent_pmf))[: max_total(MINI) + 1 + opponent_total]
        end_value, best = last_turn_win_probability(dice, rolls_left, open_bits, total, np.pad(opponent_pmf, (0, 60)))
        observation = policy.table_encoding.encode(
            MINI.hand(dice),
            rolls_left,
            open_bits,
            [total, opponent_total],
            [open_bits, opponent_open],
        )
        mask = np.zeros(MINI.dice.num_rerolls + 4, dtype=np.int8)
        mask[MINI.dice.num_rerolls + row] = 1
        if rolls_left:
            mask[1 : MINI.dice.num_rerolls] = 1
        action = policy.act(observation, mask)
        # the exact value of the chosen action
        if action >= MINI.dice.num_rerolls:
            chosen = end_value(row, score(dice, row))
        else:
            picked = [i for i in range(3) if action >> i & 1]
            kept = [d for i, d in enumerate(dice) if i not in picked]
            outcomes = rolls_of(len(picked))
            chosen = sum(
                turn_expectimax(end_value, tuple(sorted(kept + list(o))), rolls_left - 1, open_bits) for o in outcomes
            ) / len(outcomes)
        assert chosen == pytest.approx(best, abs=1e-12)
        others = [(opponent_total, [c for c in range(4) if opponent_open >> c & 1])]
        assert win_probabilities(dice, rolls_left, [row], total, others, rules=MINI).max() == pytest.approx(best, abs=1e-12)


def test_win_beats_optimal_at_a_small_table():
    """Paired deals of the reduced game: the win policy never does worse than the optimum it rolls out."""
    from agents.evaluation.tournament import tournament

    result, _ = tournament(["win", "optimal"], games=8000, seed=5, rules=MINI)
    assert result.standings[0].win_rate > 0.5


def test_policy_names_everywhere():
    from agents.registry import make_opponents, make_policy, make_table_policy
    from yacht_env.table.env import YachtTableEnv

    assert make_policy("target:150").name == "target:150"
    assert make_table_policy("target:150", 3).table_encoding.num_players == 3
    assert isinstance(unguarded(make_table_policy("win", 5)), WinPolicy)
    with pytest.raises(ValueError, match="'target:abc'.*0..303"):
        make_policy("target:abc")
    with pytest.raises(ValueError, match="0..303"):
        make_policy("target:400")
    with pytest.raises(ValueError, match="at a table"):
        make_policy("win")
    with pytest.raises(ValueError, match="2 to 5"):
        WinPolicy(num_players=1)
    env = YachtTableEnv(opponents=make_opponents(["win"]))
    _, info = env.reset(seed=0)
    done = False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[-1])
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert info["totals"][1] > 0


@pytest.mark.slow
def test_yacht_distribution_and_target_monte_carlo():
    from agents.evaluate import play_games

    pmf = score_distribution()
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert pmf @ np.arange(len(pmf)) == pytest.approx(expected_score(), abs=1e-9)
    log = play_games(TargetPolicy(200), 20_000, seed=0)
    probability = solve_target().at_least(200)
    assert abs((log.scores >= 200).mean() - probability) < 3.0 * math.sqrt(probability * (1 - probability) / 20_000)


def test_win_and_target_play_in_a_terminal_match_and_the_coach_shows_chances():
    from yacht_play.match import Match, Player
    from yacht_play.terminal import coach_text

    players = [
        Player("w", "agent", "win"),
        Player("t", "agent", "target:200"),
        Player("o", "agent", "optimal"),
    ]
    match = Match.new(players, seed=4, mode="table")
    assert isinstance(unguarded(match.seats[0].policy), WinPolicy) and isinstance(unguarded(match.seats[1].policy), TargetPolicy)
    while not match.finished:
        match.play_agent()
    assert all(seat.finished for seat in match.seats)
    dice = (5, 5, 5, 6, 1)
    chances = win_probabilities(
        dice,
        2,
        list(YACHT.category_names),
        0,
        [(28, [c for c in YACHT.category_names if c != "four_of_a_kind"])],
    )
    q = solve().q_values_batch(YACHT.hand(dice), 2, YACHT.all_open)[0]
    text = coach_text(q, 32 + 11, dice, 0, YACHT, chances=chances)
    best = int(np.argmax(q))
    assert f"(win {100 * chances[best]:.0f}%)" in text
    assert 0.3 < chances[best] < 0.7


def test_evaluate_prints_the_exact_distribution_beside_the_policies(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]  # the repository root, where agents/ lies
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "agents.evaluate",
            "--policy",
            "target:150",
            "--games",
            "300",
            "--json",
            str(tmp_path / "e.json"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        cwd=root,
        check=True,
    )
    assert "optimal (exact)" in result.stdout and "P(≥200)" in result.stdout
    rows = {row["policy"]: row for row in json.loads((tmp_path / "e.json").read_text())["score_distribution"]}
    assert set(rows) == {"target:150", "optimal (exact)"}
    pmf = score_distribution()
    assert rows["optimal (exact)"]["at_least"]["200"] == pytest.approx(at_least(pmf, [200])[0])
    assert rows["optimal (exact)"]["quantiles"]["0.5"] == quantiles(pmf, [0.5])[0]
    bad = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", "--policy", "win", "--no-progress"],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    assert bad.returncode == 2 and "at a table" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("name", ["yahtzee", "yahtzee_no_joker", "yatzy"])
def test_rule_sets_with_a_bonus_or_a_joker_are_refused_naming_why(name):
    from agents.registry import make_policy, make_table_policy
    from agents.solvers.distribution import score_distribution
    from agents.solvers.target import solve_target_table
    from yacht_env.rules import RULE_SETS

    rules = RULE_SETS[name]
    for build in (
        lambda: solve_target(rules),
        lambda: solve_target_table(rules),
        lambda: score_distribution(rules=rules),
        lambda: make_policy("target:150", rules=rules),
        lambda: make_table_policy("win", 2, rules=rules),
    ):
        with pytest.raises(ValueError, match=f"rule set '{name}' has an upper bonus, an extra-Yahtzee bonus or a joker"):
            build()


def test_beat_q_values_count_a_tie_half_on_the_last_rows():
    """With a tie worth 1/2, landing exactly on the score to beat is worth 1/2 wherever it happens."""
    solution = solve_target(MINI, tie=0.5, use_disk_cache=False)
    assert solution.lookup(np.array([0, 0, 0]), np.array([-1, 0, 1])).tolist() == [1.0, 0.5, 0.0]
    for open_bits in (1, 2, 4, 8, 3, 12):
        for hand, dice in enumerate(MINI.dice.hands.tolist()):
            for needed in range(-1, 14):
                q = solution.q_values_batch([hand], [0], [open_bits], [needed])[0]
                for c in range(4):
                    if open_bits >> c & 1:
                        want = brute_target(open_bits & ~(1 << c), needed - score(tuple(dice), c), 0.5)
                        assert q[MINI.dice.num_rerolls + c] == pytest.approx(want, abs=1e-12), (dice, open_bits, needed, c)
