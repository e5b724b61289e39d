"""``exact2`` and ``br:OPPONENT`` at a table, and decisions graded in chances of winning against the solved game.

The games are Yacht on four of its rows (five dice, three rolls): solved in about a second into a fresh cache
folder, and played out by the tournament harness that ``python -m agents.evaluate --table`` runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agents.evaluation.tournament import run_table
from agents.policies.exact2 import TIE_TOLERANCE
from agents.policies.table_reading import best_with_fallback
from agents.registry import make_table_policy, policy_spec
from agents.solvers.optimal import solve
from agents.two_player import SolutionNotComputed, load_two_player, solve_two_player
from agents.two_player.__main__ import sub_game
from agents.two_player.grading import TwoPlayerGrader, two_player_grader
from agents.two_player.kernel import SCALE
from yacht_env.rules import YACHT

ROWS = "ones,threes,fives,full_house"
Z_999 = 3.2905  # a 99.9% normal interval: the simulated figure is checked against the exact one on any seed


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Yacht on four rows, with its game and both best responses to ``optimal`` solved into a fresh cache folder."""
    rules = sub_game(YACHT, ROWS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        solutions = {
            "game": solve_two_player(rules),
            "br-p1": solve_two_player(rules, "optimal", 0),
            "br-p2": solve_two_player(rules, "optimal", 1),
            "exact2-p1": solve_two_player(rules, "optimal", 0, strategy="exact2"),
            "exact2-p2": solve_two_player(rules, "optimal", 1, strategy="exact2"),
        }
        yield rules, solutions


def play(rules, names, games, seed, grade=False):
    policies = [make_table_policy(name, 2, rules=rules, seed=i) for i, name in enumerate(names)]
    result, _ = run_table(policies, names, games, seed=seed, rules=rules, grade=grade)
    return result


def test_a_missing_solution_is_refused_in_one_line_naming_its_command(tmp_path, monkeypatch):
    import agents.two_player as two_player

    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(two_player, "_solutions", type(two_player._solutions)())  # none loaded by an earlier test
    with pytest.raises(SolutionNotComputed) as missing:
        make_table_policy("exact2", 2, rules=YACHT)
    message = str(missing.value)
    assert "\n" not in message
    assert "`python -m agents.two_player --rules yacht` computes it" in message and " min on 2 free cores" in message
    with pytest.raises(SolutionNotComputed, match="--opponent optimal`"):
        make_table_policy("br:optimal", 2, rules=YACHT)
    rules = sub_game(YACHT, ROWS)  # a rule set of one's own: the call that solves it
    with pytest.raises(SolutionNotComputed, match=r"solve_two_player\(rules, opponent='greedy'\)"):
        load_two_player(rules, "greedy")
    assert not any(tmp_path.rglob("layer-*.npy"))  # nothing was solved on the way


def test_the_names_are_checked_before_anything_loads():
    with pytest.raises(ValueError, match="a best response is solved against optimal, greedy"):
        make_table_policy("br:random", 2, rules=YACHT)
    with pytest.raises(ValueError, match="'exact2' plays at a table of 2 players; this table has 3"):
        make_table_policy("exact2", 3, rules=YACHT)
    with pytest.raises(ValueError, match="plays at a table of 2 players; this table has 4"):
        make_table_policy("br:optimal", 4, rules=YACHT)
    assert policy_spec("br:greedy").table_sizes == (2, 2)
    with pytest.raises(ValueError, match="bonus"):
        make_table_policy("exact2", 2, rules="yahtzee")


@pytest.mark.parametrize("size", [1, 3])
@pytest.mark.parametrize("opponent, label", [(None, "exact2"), ("optimal", "br:optimal"), ("greedy", "br:greedy")])
def test_the_policy_itself_refuses_a_table_of_other_size_naming_itself(opponent, label, size):
    """Built directly (not through the registry, which checks the table size first), before anything loads."""
    from agents.policies.exact2 import TwoPlayerPolicy

    with pytest.raises(ValueError, match=rf"^{label} plays at a table of 2 players \(the solved two-player game\), got {size}$"):
        TwoPlayerPolicy(YACHT, size, opponent=opponent)


def test_the_policy_built_directly_sits_at_a_table_of_two_by_default(small):
    from agents.policies.exact2 import TwoPlayerPolicy

    rules, _ = small
    assert TwoPlayerPolicy(rules, opponent="optimal").name == "br:optimal"
    assert TwoPlayerPolicy(rules).name == "exact2"


def test_exact2_loses_nothing_against_the_game_it_plays(small):
    rules, _ = small
    result = play(rules, ["exact2", "optimal"], 600, seed=5, grade=True)
    exact2, optimal = result.standings
    assert result.grading.startswith("decisions graded")
    assert exact2.loss_per_decision_pp <= 100 * TIE_TOLERANCE
    assert optimal.loss_per_decision_pp > 0.01  # the expected-score optimum gives chances away at a table


def test_exact2_plays_the_action_of_highest_chance_in_every_position_it_meets(small):
    rules, solutions = small
    policy = make_table_policy("exact2", 2, rules=rules)
    grader = TwoPlayerGrader(rules)
    rng = np.random.default_rng(3)
    layout = solutions["game"].layout
    for _ in range(200):
        mover = int(rng.integers(1, 1 << rules.num_rows))
        others = [s for s in range(1 << rules.num_rows) if layout.open_counts[mover] - layout.open_counts[s] in (0, 1)]
        other = int(rng.choice(others))
        lowest, highest = -int(layout.most_scored[other]), int(layout.most_scored[mover])
        lead, hand = int(rng.integers(lowest, highest + 1)), int(rng.integers(rules.dice.num_hands))
        rolls_left = int(rng.integers(rules.rolls_per_turn))
        q = grader.chances([mover], [other], [lead], [hand], [rolls_left])[0]
        observation = policy.table_encoding.encode_batch(
            np.array([hand]),
            np.array([rolls_left]),
            np.array([mover]),
            np.array([[50, 50 - lead]]),
            np.array([[mover, other]]),
        )
        mask = np.isfinite(q)[None].astype(np.int8)
        action = int(policy.act_batch(observation, mask)[0])
        assert q[action] >= q.max() - TIE_TOLERANCE


@given(
    step=st.integers(1, int(SCALE) - 1),
    noise=st.lists(st.floats(-0.2, 0.2), min_size=3, max_size=3),
    scores=st.lists(st.floats(0.0, 300.0), min_size=3, max_size=3, unique=True),
)
@example(step=32767, noise=[0.1, -0.1, 0.0], scores=[1.0, 2.0, 0.0])  # the higher chance, by noise, scores less
def test_exact2_lets_the_expected_score_settle_chances_less_than_half_a_stored_step_apart(step, noise, scores):
    """Chances as the solution stores them, whole steps of 1/SCALE, read back with noise well under half a step: two
    actions on the same step are one chance to the solution, and the higher expected score of the two is played; an
    action a whole step below is never played, however high its expected score."""
    q = np.array([[step + noise[0], step + noise[1], step - 1 + noise[2]]]) / SCALE
    expected = np.array([[scores[0], scores[1], max(scores) + 1.0]])
    action = best_with_fallback(q, np.ones((1, 3), dtype=np.int8), lambda tied: expected[tied], TIE_TOLERANCE)
    assert action.tolist() == [int(np.argmax(scores[:2]))]


def test_exact2_plays_the_higher_expected_score_among_actions_within_half_a_stored_step_in_a_solved_game(small):
    """Every position where both players have two rows open (the mover ones and full house, the other threes and
    fives: many re-rolls whose chances differ by less than a stored step) and the mover has one re-roll left."""
    rules, solutions = small
    policy = make_table_policy("exact2", 2, rules=rules)
    layout, mover, other = solutions["game"].layout, 0b1001, 0b0110
    leads = np.arange(-int(layout.most_scored[other]), int(layout.most_scored[mover]) + 1)
    leads, hands = (part.ravel() for part in np.meshgrid(leads, np.arange(rules.dice.num_hands), indexing="ij"))
    movers, others, rolls_left = (np.full(len(leads), value) for value in (mover, other, 1))
    q = solutions["game"].action_values_batch(movers, others, leads, hands, rolls_left)
    legal = np.isfinite(q)
    expected = np.where(legal, solve(rules).q_values_batch(hands, rolls_left, movers), -np.inf)

    def highest_expected_within(tolerance: float) -> np.ndarray:
        """Among the legal actions within ``tolerance`` of the best chance, that of highest expected score."""
        return np.where(legal & (q >= q.max(axis=1, keepdims=True) - tolerance), expected, -np.inf).argmax(axis=1)

    observations = policy.table_encoding.encode_batch(
        hands, rolls_left, movers, np.stack([np.full_like(leads, 200), 200 - leads], axis=1), np.stack([movers, others], axis=1)
    )
    played = policy.act_batch(observations, legal.astype(np.int8))
    np.testing.assert_array_equal(played, highest_expected_within(0.5 / SCALE))
    # where the plain best chance (ties aside) or a coarse tolerance would play otherwise: the positions that tell
    assert (played != highest_expected_within(0.0)).sum() > 100
    assert (played != highest_expected_within(0.5)).sum() > 100


def random_positions(rules, layout, count: int, seed: int):
    """``count`` positions a game of two reaches: (mover's open rows, other's, mover's lead, hand, rolls left)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        mover = int(rng.integers(1, 1 << rules.num_rows))
        others = [s for s in range(1 << rules.num_rows) if layout.open_counts[mover] - layout.open_counts[s] in (0, 1)]
        other = int(rng.choice(others))
        lowest, highest = -int(layout.most_scored[other]), int(layout.most_scored[mover])
        lead, hand = int(rng.integers(lowest, highest + 1)), int(rng.integers(rules.dice.num_hands))
        out.append((mover, other, lead, hand, int(rng.integers(rules.rolls_per_turn))))
    return out


def test_a_best_response_reads_each_seats_own_solution(small):
    """Player one moves with as many rows open as player two, player two with one more: each position's chances
    are those of the solution of the seat whose turn it is, in both seats."""
    rules, solutions = small
    policy = make_table_policy("br:optimal", 2, rules=rules)
    seen = {0: 0, 1: 0}
    for mover, other, lead, hand, rolls_left in random_positions(rules, solutions["game"].layout, 300, seed=8):
        seat = int(solutions["game"].layout.open_counts[mover] > solutions["game"].layout.open_counts[other])
        seen[seat] += 1
        own = solutions[f"br-p{seat + 1}"].action_values_batch([mover], [other], [lead], [hand], [rolls_left])[0]
        observation = policy.table_encoding.encode_batch(
            np.array([hand]),
            np.array([rolls_left]),
            np.array([mover]),
            np.array([[50, 50 - lead]]),
            np.array([[mover, other]]),
        )
        np.testing.assert_array_equal(policy.chances(observation)[0], own)
    assert min(seen.values()) > 100  # both seats met often


def test_simulated_best_response_wins_what_the_solution_says(small):
    rules, solutions = small
    exact = (solutions["br-p1"].start_value() + 1 - solutions["br-p2"].start_value()) / 2
    result = play(rules, ["br:optimal", "optimal"], 3000, seed=11)
    best_response = result.standings[0]
    low, high = best_response.win_rate_ci95
    half = (high - low) / 2 * Z_999 / 1.96
    assert abs(best_response.win_rate - exact) <= half, (best_response.win_rate, exact, half)
    assert exact > 0.5  # against optimal, the best response wins more than half


def test_simulated_exact2_wins_what_its_exact_chances_say(small):
    rules, solutions = small
    exact = (solutions["exact2-p1"].start_value() + 1 - solutions["exact2-p2"].start_value()) / 2
    result = play(rules, ["exact2", "optimal"], 3000, seed=13)
    exact2 = result.standings[0]
    low, high = exact2.win_rate_ci95
    assert abs(exact2.win_rate - exact) <= (high - low) / 2 * Z_999 / 1.96, (exact2.win_rate, exact)


@pytest.mark.parametrize("seat", [0, 1])
def test_exact2_against_a_policy_wins_at_least_the_game_value_and_at_most_the_best_response(small, seat):
    """In every stored state: the game's strategy keeps its guarantee against any opponent, and no strategy
    beats the best response to that opponent (each to the solves' rounding)."""
    rules, solutions = small
    exact2, best, game = solutions[f"exact2-p{seat + 1}"], solutions[f"br-p{seat + 1}"], solutions["game"]
    step = 2 * rules.num_rows / 65534 + 1e-6
    between = 0
    for num_open in range(1, game.layout.num_layers):
        values = [np.asarray(solution.layers[num_open], dtype=np.float64) / 65534 for solution in (exact2, best, game)]
        if (num_open % 2 == 1) == (seat == 1):  # the player in ``seat`` moves: its value
            low, high = values[2], values[1]
        else:  # the opponent moves: the value is the opponent's, so the order turns round
            low, high = values[1], values[2]
        assert (values[0] >= low - step).all() and (values[0] <= high + step).all(), num_open
        between += int(((values[0] > low + step) & (values[0] < high - step)).sum())
    assert between > 0  # not merely equal to one of the two everywhere


def test_a_strategys_chances_are_not_asked_for_decisions(small):
    rules, solutions = small
    with pytest.raises(ValueError, match="holds a strategy's chances, not decisions"):
        solutions["exact2-p1"].action_values_batch([1], [1], [0], [0], [0])


def test_two_exact2_players_split_what_the_game_value_says(small):
    rules, solutions = small
    first = solutions["game"].start_value()
    result = play(rules, ["exact2", "exact2"], 3000, seed=23)
    # Each plays both seats equally often: half the games from the first seat, half from the second.
    assert result.standings[0].win_rate == pytest.approx(0.5, abs=1e-12)
    assert 0.4 < first < 0.6


def test_grading_says_why_a_table_is_not_graded(small):
    rules, _ = small
    assert "tables of 2 only" in two_player_grader(rules, 3)
    assert "bonus" in two_player_grader("yahtzee", 2)
    result = play(rules, ["greedy", "optimal", "random"][:2], 40, seed=1, grade=False)
    assert result.grading == "" and result.standings[0].loss_per_game_pp is None


def test_the_table_says_how_to_grade_only_where_the_solution_would_cover_it(tmp_path, monkeypatch):
    import agents.two_player as two_player

    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(two_player, "_solutions", type(two_player._solutions)())  # none loaded by an earlier test
    yacht = run_table(
        [make_table_policy(n, 2, seed=i) for i, n in enumerate(("greedy", "random"))], ["greedy", "random"], 4, grade=True
    )[0]
    assert "not computed yet: `python -m agents.two_player --rules yacht` computes it" in yacht.grading
    for names, rules in ((("greedy", "random"), "yahtzee"), (("greedy", "random", "greedy"), "yacht")):
        policies = [make_table_policy(n, len(names), rules=rules, seed=i) for i, n in enumerate(names)]
        result = run_table(policies, list(names), 2 * len(names), rules=rules, grade=True)[0]
        assert result.grading == "" and result.standings[0].loss_per_game_pp is None
