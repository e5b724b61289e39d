"""The table planner: exact planning inside a turn under every seat's share of the win, its self-play, files and name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save

from agents.evaluation.tournament import run_table
from agents.learned.model_files import ModelLoadError
from agents.learned.planN import PlanNPlanner, PlanNPolicy, ShareValue, Tables, TurnEnds, shipped_planner, table_features
from agents.learned.planN_files import METADATA_KEY, num_features, read_planN_file, write_planN_file
from agents.learned.planN_turn import decision_values, plan_scratch, plan_turn
from agents.policies.guard import unguarded
from agents.registry import make_opponents, make_policy, make_table_policy
from agents.solvers.optimal import solve
from agents.solvers.sheet_solver import reachable_states
from agents.training.planN_games import SelfPlayer
from agents.two_player import solve_two_player
from tests.agents.test_plan2 import SELF_PLAY_RULES, decisions
from tests.agents.test_two_player import GAMES
from tests.agents.turn_by_hand import SUM_OF_DICE, points_are_distributed_as_by_hand, points_by_hand, rows_filled_are_uniform
from yacht_env.actions import ActionLayout
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import RULE_SETS, YACHT, Category, RuleSet, all_alike, rule_set, total, upper

YAHTZEE = rule_set("yahtzee")


class ExactShares:
    """A solved two-player game's chances in the place of learned shares: what the planner must then play exactly."""

    def __init__(self, solution):
        self.solution, self.rules = solution, solution.rules

    def __call__(self, tables: Tables) -> np.ndarray:
        mine = [
            self.solution.value(int(m), int(o), int(a - b)) if m or o else 0.5 * (1 + np.sign(a - b))
            for m, o, a, b in zip(tables.open_bits[:, 0], tables.open_bits[:, 1], tables.totals[:, 0], tables.totals[:, 1])
        ]
        return np.stack([mine, 1.0 - np.array(mine)], axis=1)


@pytest.fixture(scope="module", params=sorted(GAMES))
def solved(request, tmp_path_factory):
    """``(rules, solution)`` of each small game of the two-player tests, solved into a fresh cache folder."""
    rules = GAMES[request.param]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield rules, solve_two_player(rules)


def pair_tables(movers, others, leads) -> Tables:
    zeros = np.zeros((len(movers), 2), dtype=np.int64)
    totals = np.stack([np.asarray(leads), np.zeros(len(movers), dtype=np.int64)], axis=1)
    return Tables(np.stack([movers, others], axis=1).astype(np.int64), zeros, zeros.copy(), totals.astype(np.int64))


def test_at_two_seats_under_the_solved_chances_the_planner_values_every_action_as_the_solution(solved):
    rules, solution = solved
    movers, others, leads, hands, rolls_left = decisions(rules, 800)
    planned = PlanNPlanner(ExactShares(solution)).action_values(pair_tables(movers, others, leads), hands, rolls_left)
    exact = solution.action_values_batch(movers, others, leads, hands, rolls_left)
    np.testing.assert_array_equal(np.isfinite(planned), np.isfinite(exact))
    legal = np.isfinite(exact)
    np.testing.assert_allclose(planned[legal], exact[legal], atol=2e-6)


def test_self_play_backups_under_the_solved_chances_reproduce_them(solved):
    rules, solution = solved
    played = SelfPlayer(rules).play_games(ExactShares(solution), 300, 2, 0.2, seed=3)
    exact = ExactShares(solution)(played.tables)
    np.testing.assert_allclose(played.backups, exact, atol=2 * rules.num_rows / 65534 + 1e-5)
    shares = SelfPlayer(rules).play_games(ExactShares(solution), 3000, 2, 0.0, seed=4).first_player_shares
    assert abs(shares.mean() - solution.start_value()) < 4 * shares.std() / np.sqrt(len(shares))


class TotalsValue:
    """Shares that grow with each seat's total alone, ``1/n + (total - the table's mean) / 400``: a planner under it
    plays each turn for the most points, and the mover's backup at the first turn is ``1/n + (1 - 1/n) points / 400``
    for the most points expected."""

    def __init__(self, rules):
        self.rules = rules

    def __call__(self, tables: Tables) -> np.ndarray:
        totals = tables.totals.astype(np.float64)
        return 1 / totals.shape[1] + (totals - totals.mean(axis=1, keepdims=True)) / 400


@pytest.mark.parametrize("n", [2, 3])
def test_self_play_without_exploration_plays_the_turn_it_plans(n):
    """The first turn's points, read from the first mover's total at the second turn, average what the first turn's
    backup planned: every keep and the row are the plan's (a random keep, or one re-roll skipped, falls short of it)."""
    games, rules = 2000, SELF_PLAY_RULES
    played = SelfPlayer(rules).play_games(TotalsValue(rules), games, n, 0.0, seed=7)
    planned = played.backups[:games, 0]  # the first turn of every game: every sheet empty
    np.testing.assert_allclose(planned, planned[0])
    points = played.tables.totals[games : 2 * games, -1]  # the first mover is listed last at the next turn
    realized = 1 / n + (1 - 1 / n) * points / 400
    assert abs(realized.mean() - planned[0]) < 5 * realized.std() / np.sqrt(games), (realized.mean(), planned[0])


@pytest.mark.parametrize("num_dice", [1, 2])
@pytest.mark.parametrize("epsilon", [0.0, 0.5])
def test_self_play_rolls_keeps_and_explores_as_the_turn_is_played_by_hand(num_dice, epsilon):
    """Each decision of a turn is the plan's or, with probability epsilon, one taken at random; and a turn has its
    three rolls, no more: the points of 20,000 first turns average what that play gives by hand."""
    games, rules = 20_000, SUM_OF_DICE[num_dice]
    played = SelfPlayer(rules).play_games(TotalsValue(rules), games, 2, epsilon, seed=3)
    points = played.tables.totals[games : 2 * games, -1]
    assert abs(points.mean() - points_by_hand(num_dice, epsilon)) < 5 * points.std() / np.sqrt(games) + 1e-9
    assert points_are_distributed_as_by_hand(points, num_dice, epsilon)  # each number of points as often


def test_self_play_with_full_exploration_scores_in_a_uniformly_random_open_row():
    games, rules = 3000, SELF_PLAY_RULES
    played = SelfPlayer(rules).play_games(TotalsValue(rules), games, 2, 1.0, seed=6)
    after_first = played.tables.open_bits[games : 2 * games, -1]
    assert rows_filled_are_uniform(rules.all_open, after_first, rules.num_rows)


@pytest.mark.parametrize("name", ["yahtzee", pytest.param("yatzy", marks=pytest.mark.slow), "yahtzee_forced_joker"])
def test_with_points_and_the_optimum_after_them_the_turn_is_the_solitaire_optimum_of_bonus_rules(name):
    # every outcome's end worth its points (bonuses and jokers included) plus the optimum's value of the sheet it
    # leaves: the planned turn must then be the exact solitaire solver's turn, action by action
    rules = rule_set(name)
    solution = solve(rules)
    reachable = np.argwhere(reachable_states(rules)[1:]) + [1, 0, 0]
    rng = np.random.default_rng(0)
    chosen = reachable[rng.integers(0, len(reachable), 300)]
    tables = Tables(*(np.asarray(chosen[:, i : i + 1], dtype=np.int64) for i in range(3)), np.zeros((300, 1), np.int64))
    ends_of = TurnEnds(ShareValue(rules, random_layers(rules)))
    out_index, counts, rows, gains, uppers, yahtzees = ends_of.outcomes(tables)
    after = (tables.open_bits[:, :1] & ~(1 << rows), uppers, yahtzees if rules.tracks_yahtzee_box else 0 * yahtzees)
    mover = np.where(np.arange(rows.shape[1]) < counts[:, None], gains + solution.state_values[after], 0.0)
    # a second seat's column that orders the outcomes otherwise: the mover plans by its own column, and reads it
    ends = np.stack([mover, 7.0 - 3.0 * mover], axis=2)
    hands, rolls_left = rng.integers(0, rules.dice.num_hands, 300), rng.integers(0, rules.rolls_per_turn, 300)
    layout = ActionLayout(rules)
    planned = np.full((300, layout.num_actions), -np.inf)
    keeps = rules.dice.keep_after_reroll.astype(np.int64)
    decision_values(ends_of.kernel, out_index, ends, np.arange(300), hands, rolls_left, keeps, layout.first_score_action, planned)
    exact = solution.q_values_batch(hands, rolls_left, *chosen.T)
    np.testing.assert_array_equal(np.isfinite(planned), np.isfinite(exact))
    np.testing.assert_allclose(planned[np.isfinite(exact)], exact[np.isfinite(exact)], atol=1e-9)


def test_a_turn_s_outcomes_keep_the_smallest_bonus_and_a_yahtzee_box_filled_by_one_point_apart():
    # rules whose extra-Yahtzee bonus is 1 and whose Yahtzee row pays 1: the least a bonus or a full box can be
    rows = (Category("ones", upper(1), upper=True), Category("yahtzee", all_alike(1)), Category("chance", total))
    rules = RuleSet("least_bonus", rows, yahtzee_row="yahtzee", yahtzee_bonus=1)
    ends_of = TurnEnds(ShareValue(rules, random_layers(rules)))
    chance, yahtzee_row = rules.category_index["chance"], rules.category_index["yahtzee"]
    full_box = Tables(*(np.array([[part]]) for part in (rules.all_open & ~(1 << yahtzee_row), 0, 1, 0)))
    out_index, _, _, gains, _, _ = ends_of.outcomes(full_box)
    five_twos, ten_otherwise = rules.hand([2] * 5), rules.hand([1, 2, 2, 2, 3])
    assert gains[0, out_index[0, chance, five_twos]] == 10 + 1  # five alike on a full box: the bonus
    assert gains[0, out_index[0, chance, ten_otherwise]] == 10
    empty_box = Tables(*(np.array([[part]]) for part in (rules.all_open, 0, 0, 0)))
    out_index, _, _, gains, _, yahtzees = ends_of.outcomes(empty_box)
    scored = out_index[0, yahtzee_row, five_twos]
    assert gains[0, scored] == 1 and yahtzees[0, scored] == 1  # its one point fills the box: a later bonus is earned
    assert yahtzees[0, out_index[0, yahtzee_row, ten_otherwise]] == 0


def random_layers(rules, widths=(16,), seed=0):
    rng = np.random.default_rng(seed)
    sizes = [num_features(rules), *widths, MAX_PLAYERS]
    return [(rng.normal(0, 0.3, (out, width)), rng.normal(0, 0.1, out)) for width, out in zip(sizes[:-1], sizes[1:])]


def ship_planN(monkeypatch, folder, rules, seed=0) -> Path:
    """A small planN file of ``rules`` written to ``folder`` as the shipped ``planN:<rules>`` (the coach reads it)."""
    import agents.learned.planN_files

    monkeypatch.setattr(agents.learned.planN_files, "SHIPPED_PLANN", folder)
    return write_planN_file(folder / f"{rules.name}.safetensors", random_layers(rules, seed=seed), rules, [2, 3, 4, 5], 1)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_every_backup_is_a_split_of_the_win_and_the_games_end_in_the_rules_shares(n):
    value = ShareValue(YAHTZEE, random_layers(YAHTZEE, seed=n))
    played = SelfPlayer(YAHTZEE).play_games(value, 6, n, 0.3, seed=n)
    assert played.tables.open_bits.shape == (6 * n * 13, n) and played.backups.shape == (6 * n * 13, n)
    np.testing.assert_allclose(played.backups.sum(axis=1), 1.0, atol=1e-9)
    assert (played.backups >= 0).all()
    # a game's shares are the rules': 1/k for each of k equal first places
    assert set(np.round(played.first_player_shares * 60).astype(int)) <= {0, 12, 15, 20, 30, 60}


@pytest.mark.parametrize("n", [2, 3])
def test_a_game_s_share_is_the_first_player_s_as_the_last_turn_settles_it(n):
    """At the last turn's start the first player's total is final; where it is below the last mover's total already,
    the first player lost, and where no last turn can catch it up, the first player won alone."""
    games, rules = 600, SELF_PLAY_RULES
    played = SelfPlayer(rules).play_games(TotalsValue(rules), games, n, 1.0, seed=11)
    last = played.tables.totals[-games:]  # the last mover first, then the first player and the others in play order
    first, mover, others = last[:, 1], last[:, 0], last[:, 2:]
    last_row = np.log2(played.tables.open_bits[-games:, 0]).astype(int)  # the mover's one open row
    most_in_its_row = rules.hand_scores.max(axis=0)[last_row]
    lost = first < mover
    won = (first > mover + most_in_its_row) & (first[:, None] > others).all(axis=1)
    assert lost.sum() > 20 and won.sum() > 20
    assert (played.first_player_shares[lost] == 0).all() and (played.first_player_shares[won] == 1).all()


def test_a_finished_table_is_split_by_the_rules_and_a_live_one_by_the_network():
    value = ShareValue(YAHTZEE, random_layers(YAHTZEE))
    over = Tables(
        np.zeros((2, 3), np.int64), np.zeros((2, 3), np.int64), np.zeros((2, 3), np.int64), np.array([[9, 9, 4], [1, 2, 3]])
    )
    np.testing.assert_array_equal(value(over), [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    live = Tables.start(YAHTZEE, 4, 4)
    shares = value(live)
    assert shares.shape == (4, 4) and np.allclose(shares.sum(axis=1), 1.0) and (shares > 0).all()


def test_the_features_are_as_wide_as_a_planN_file_says_and_say_the_table_size():
    for rules in RULE_SETS.values():
        for n in range(2, MAX_PLAYERS + 1):
            features = table_features(ShareValue(rules, random_layers(rules)).sheets, Tables.start(rules, 3, n))
            assert features.shape == (3, num_features(rules))
            assert features[0, -MAX_PLAYERS:-1].tolist() == [float(size == n) for size in range(2, MAX_PLAYERS + 1)]


def test_each_input_of_a_table_of_four_under_bonus_rules_is_what_the_sheets_say():
    # counted by hand: the upper rows pay at most five times their face, Yahtzee's bonus threshold is 63
    rules = YAHTZEE
    row = {name: 1 << c for c, name in enumerate(rules.category_names)}
    lower = sum(row[name] for name in rules.category_names[6:])
    tables = Tables(
        open_bits=np.array([[rules.all_open & ~row["ones"], row["chance"], row["sixes"] | lower, row["fives"] | lower]]),
        # 3 + 100 still to come: in reach; 63: reached; 33 + 30 = 63: just in reach; 37 + 25 = 62: just out of reach
        upper=np.array([[3, 63, 33, 37]]),
        yahtzee=np.array([[0, 1, 0, 1]]),
        totals=np.array([[3, 250, 100, 3]]),
    )
    features = table_features(ShareValue(rules, random_layers(rules)).sheets, tables)[0]
    rows_open = 12 + 1 + 8 + 8
    scale = 1 / (10 * np.sqrt(1 + rows_open))
    seats = [
        (tables.open_bits[0, 0], 3 / 63, 0, 0, 0, 0.0, 0.0, 12 / 13),
        (row["chance"], 1.0, 1, 0, 1, 2.47, 247 * scale, 1 / 13),
        (row["sixes"] | lower, 33 / 63, 0, 0, 0, 0.97, 97 * scale, 8 / 13),
        (row["fives"] | lower, 37 / 63, 0, 1, 1, 0.0, 0.0, 8 / 13),
    ]
    expected = []
    for open_bits, *sheet in seats:
        expected += [1.0, *[(open_bits >> c) & 1 for c in range(13)], *sheet]
    expected += [0.0] * (13 + 8) + [0, 0, 1, 0] + [rows_open / (4 * 13)]
    np.testing.assert_allclose(features, np.array(expected, dtype=np.float32), rtol=1e-6)


def test_a_decision_needs_an_open_row_of_the_mover_s_and_sheets_within_the_rule_set_s_rows():
    planner = PlanNPlanner(ShareValue(YACHT, random_layers(YACHT)))
    full, beyond = YACHT.all_open, 1 << YACHT.num_rows
    for mover, other in ((0, full), (full, beyond), (beyond, full), (-1, full), (full, 2 * beyond), (3 * beyond, full)):
        tables = Tables(np.array([[mover, other]]), *[np.zeros((1, 2), dtype=np.int64)] * 3)
        with pytest.raises(
            ValueError, match="^a decision needs at least one open row of the mover's, within the rule set's rows"
        ):
            planner.action_values(tables, [0], [2])
    tables = Tables(np.array([[1, full]]), *[np.zeros((1, 2), dtype=np.int64)] * 3)  # one row left, the first
    assert np.isfinite(planner.action_values(tables, [0], [0])[0]).sum() == 1


def test_a_planner_is_seated_only_at_the_table_sizes_it_learned():
    value = ShareValue(YACHT, random_layers(YACHT), table_sizes=(2, 3))
    for num_players in (4, 5):
        with pytest.raises(
            ValueError, match=rf"^planN plays at tables of 2, 3 players \(those it learned at\), got {num_players}$"
        ):
            PlanNPolicy(value, num_players=num_players)
    assert PlanNPolicy(value, num_players=3).num_players == 3


def test_the_shipped_planner_is_read_once_and_only_for_its_own_rules_and_the_tables_it_learned(tmp_path, monkeypatch):
    import agents.learned.planN_files

    monkeypatch.setattr(agents.learned.planN_files, "SHIPPED_PLANN", tmp_path)
    write_planN_file(tmp_path / "yahtzee.safetensors", random_layers(YAHTZEE), YAHTZEE, [2, 3], 1)
    first = shipped_planner(YAHTZEE, 2)
    (tmp_path / "yahtzee.safetensors").write_bytes(b"not read again")
    assert isinstance(first, PlanNPlanner) and shipped_planner(YAHTZEE, 3) is first
    assert shipped_planner(RuleSet("yahtzee", YACHT.categories), 2) is None  # rules of the same name, other rows
    others = [RuleSet("yahtzee", rule_set(name).categories) for name in ("yacht", "yatzy")]
    assert {other.fingerprint < YAHTZEE.fingerprint for other in others} == {True, False}  # on either side of it
    assert all(shipped_planner(other, 2) is None for other in others)
    assert shipped_planner(YAHTZEE, 4) is None  # a size it did not learn
    assert shipped_planner(rule_set("yatzy"), 2) is None  # no file shipped for those rules
    write_planN_file(tmp_path / "yacht.safetensors", random_layers(YAHTZEE), YAHTZEE, [2], 1)
    assert shipped_planner(YACHT, 2) is None  # a file under Yacht's name that learned other rules


# -- files and names --------------------------------------------------------------------------------


def test_a_planN_file_round_trips_and_sits_at_the_tables_it_learned(tmp_path):
    layers = random_layers(YAHTZEE)
    path = write_planN_file(tmp_path / "w.safetensors", layers, "yahtzee", [2, 3], 77)
    meta, (network,) = read_planN_file(path)
    assert meta["games"] == 77 and meta["table_sizes"] == [2, 3] and meta["features"] == num_features(YAHTZEE)
    assert network.table_sizes == (2, 3) and network.games == 77 and network.prior is None
    for (w, b), (w2, b2) in zip(layers, network.layers, strict=True):
        np.testing.assert_array_equal(w.astype(np.float32), w2)
        np.testing.assert_array_equal(b.astype(np.float32), b2)
    policy = make_table_policy(f"planN:{path}", 3, rules=YAHTZEE)
    assert isinstance(unguarded(policy), PlanNPolicy) and policy.name == f"planN:{path}"
    assert PlanNPolicy.load(str(path), YAHTZEE).num_players == 2  # a table of two unless told otherwise
    assert PlanNPolicy(ShareValue(YAHTZEE, layers, [2, 3])).num_players == 2
    opponents = [make_table_policy("optimal", 3, rules=YAHTZEE) for _ in range(2)]
    result, _ = run_table([policy, *opponents], ["planN", "a", "b"], 6, seed=1, rules=YAHTZEE)
    assert sum(s.games for s in result.standings) == 18
    with pytest.raises(ModelLoadError, match="learned at tables of 2, 3 players; this table has 4"):
        make_table_policy(f"planN:{path}", 4, rules=YAHTZEE)
    with pytest.raises(ValueError, match="plays at a table of 2 to 5"):
        make_policy(f"planN:{path}", rules=YAHTZEE)
    with pytest.raises(ModelLoadError, match="trained on the 'yahtzee' rules, but this game plays 'yatzy'"):
        make_table_policy(f"planN:{path}", 2, rules=rule_set("yatzy"))


def header(**changes) -> dict:
    meta = {
        "format": "yacht-planN",
        "format_version": 1,
        "rules": "yacht",
        "rules_fingerprint": YACHT.fingerprint,
        "features": num_features(YACHT),
        "table_sizes": [2, 3, 4, 5],
        "games": 5,
    }
    meta.update(changes)
    return meta


def tensors_of(layers) -> dict:
    out = {}
    for i, (w, b) in enumerate(layers):
        out[f"layers.{i}.weight"] = torch.tensor(np.asarray(w), dtype=torch.float32)
        out[f"layers.{i}.bias"] = torch.tensor(np.asarray(b), dtype=torch.float32)
    return out


GOOD = random_layers(YACHT)
NAN = [(w.copy(), b.copy()) for w, b in GOOD]
NAN[1][0][0, 0] = np.nan
ONE_OUT = [GOOD[0], (GOOD[1][0][:1], GOOD[1][1][:1])]


@pytest.mark.parametrize(
    ("tensors", "metadata", "message"),
    [
        (tensors_of(GOOD), header(format="yacht-plan2"), "format is 'yacht-plan2'"),
        (tensors_of(GOOD), header(features=27), f"features must be {num_features(YACHT)}"),
        (tensors_of(GOOD), header(table_sizes=[1, 2]), "table_sizes must be increasing table sizes from 2 to 5"),
        (tensors_of(GOOD), header(table_sizes=[3, 2]), "table_sizes must be increasing"),
        (tensors_of(GOOD), header(table_sizes=[]), "table_sizes must be"),
        (tensors_of(GOOD), header(table_sizes="2"), "table_sizes must be"),
        (tensors_of(GOOD), {k: v for k, v in header().items() if k != "table_sizes"}, "lacks table_sizes"),
        (tensors_of(GOOD), header(rules_fingerprint="0" * 16), "fingerprint"),
        (tensors_of(ONE_OUT), header(), "layers.1.weight has shape"),
        (tensors_of(NAN), header(), "layers.1.weight holds NaN"),
    ],
)
def test_bad_planN_files_are_refused_in_one_line(tmp_path, tensors, metadata, message):
    assert_refused_in_one_line(file_by_hand(tmp_path / "bad.safetensors", tensors, metadata), message)


def file_by_hand(path, tensors: dict, metadata: dict):
    """A planN file of these tensors and this metadata, written as a stranger might (nothing checked)."""
    path.write_bytes(save(tensors, metadata={METADATA_KEY: json.dumps(metadata)}))
    return path


def assert_refused_in_one_line(path, message: str) -> None:
    """Reading the planN file at ``path`` fails with a one-line ``ModelLoadError`` that matches ``message``."""
    with pytest.raises(ModelLoadError, match=message) as error:
        read_planN_file(path)
    assert "\n" not in str(error.value)


def test_a_planN_file_is_a_table_opponent_at_every_table_size_it_learned(tmp_path):
    import gymnasium as gym

    name = f"planN:{write_planN_file(tmp_path / 'w.safetensors', random_layers(YAHTZEE), 'yahtzee', [2, 3, 4, 5], 1)}"
    env = gym.make("YachtTable-v0", rules="yahtzee", opponents=make_opponents([name, "optimal"], rules=YAHTZEE))
    _, info = env.reset(seed=1)
    done, turns = False, 0
    while not done:
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        done, turns = terminated or truncated, turns + 1
    assert info["turn"] == 13 and info["totals"][1] > 0  # thirteen rows each; the planner scored


def test_the_coach_shows_the_shipped_planners_learned_chances_at_a_table_under_bonus_rules(tmp_path, monkeypatch):
    from yacht_play.coach import LEARNED_LABEL, Grader, coach_decision
    from yacht_play.match import Match, Player

    name = f"planN:{ship_planN(monkeypatch, tmp_path, YAHTZEE, seed=5)}"
    match = Match.new([Player("ann"), Player(name, "agent", name), Player("optimal", "agent", "optimal")], 4, "table", YAHTZEE)
    grader, coached = Grader(YAHTZEE), 0
    while not match.finished:
        seat = match.current
        if seat.kind == "agent":
            match.play_agent()  # as yacht play --vs and yacht serve seat it
            continue
        action = int(np.flatnonzero(seat.legal_mask())[-1])
        coaching = coach_decision(grader, match, action)
        policy = PlanNPolicy(ShareValue(YAHTZEE, random_layers(YAHTZEE, seed=5)), "mine", 3)
        at = match.seats.index(seat)
        order = match.seats[at:] + match.seats[:at]
        upper, full = [min(s.sheet_state[0], 63) for s in order], [s.sheet_state[1] for s in order]
        seats_open, totals = [s.open_bits for s in order], [s.total for s in order]
        tables = Tables(np.array([seats_open]), np.array([upper]), np.array([full]), np.array([totals]))
        expected = policy.planner.action_values(tables, [seat.hand], [seat.rolls_left])[0]
        assert coaching.chances_label == LEARNED_LABEL and coaching.chosen_chance == pytest.approx(expected[action])
        # the learned chances are the only ones here: shown once, as the chances, with no second figure beside them
        assert coaching.chosen_learned_chance is None and all(o.learned_chance is None for o in coaching.options)
        coached += 1
        match.play(action)
    assert coached >= 13 and match.seats[1].total > 0


@pytest.mark.parametrize("n", [2, 3, 5])
def test_the_last_turn_of_the_game_is_planned_with_the_exact_chance_of_winning(n):
    # the last seat's last turn ends the game: whatever was learned, every end is the rules' own split of the win,
    # so each action's value is the exact chance of winning (ties shared) that the win tables give there
    from agents.solvers.win_chances import win_probabilities

    planner = PlanNPlanner(ShareValue(YACHT, random_layers(YACHT, seed=n)))
    rng = np.random.default_rng(n)
    for _ in range(30):
        row = int(rng.integers(0, 12))
        total = int(rng.integers(60, 180))
        others = [int(total + rng.integers(-25, 40)) for _ in range(n - 1)]
        dice, rolls_left = rng.integers(1, 7, 5), int(rng.integers(0, 3))
        exact = win_probabilities(dice, rolls_left, [row], total, [(t, []) for t in others], YACHT)
        tables = Tables(np.array([[1 << row] + [0] * (n - 1)]), np.zeros((1, n), np.int64), np.zeros((1, n), np.int64),
                        np.array([[total, *others]]))  # fmt: skip
        planned = planner.action_values(tables, [YACHT.hand(dice)], [rolls_left])[0]
        np.testing.assert_array_equal(np.isfinite(planned), np.isfinite(exact))
        np.testing.assert_allclose(planned[np.isfinite(exact)], exact[np.isfinite(exact)], atol=1e-6)


def test_the_server_seats_a_planN_file_at_a_table_of_three_and_coaches_with_its_learned_chances(tmp_path, monkeypatch):
    from tests.yacht_play.test_two_player_grading import serve_client

    path = ship_planN(monkeypatch, tmp_path, YAHTZEE)  # the coach reads the shipped planner
    service, client = serve_client(YAHTZEE, tmp_path, [f"planN:{path}", "optimal"])
    shown = "planN:yahtzee.safetensors"  # the server's folders are not shown
    with client:
        offer = {a["policy"]: a for a in client.get("/api/agents").json()["agents"]}
        assert offer[shown]["table_sizes"] == [2, 5] and offer[shown]["alone"] is False
        body = {"name": "ann", "mode": "table", "agents": [shown, "optimal"], "coach": True, "rules": "yahtzee"}
        secret = client.post("/api/games", json=body).json()["secret"]
        view, coached = client.get(f"/api/games/{secret}").json(), 0
        while not view["finished"]:
            row = next(r["name"] for r in view["rows"] if r["name"] in view["current"]["now"])
            view = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "row": row}).json()
            coach = view["coach"]
            assert coach["win_learned"] is True and 0 <= coach["chosen_win"] <= 1, coach
            assert "learned_win_label" not in coach and all("learned_win" not in o for o in coach["options"])
            coached += 1
    assert coached == 13
    decisions = service.live(secret).match.decisions
    assert sum(d["kind"] == "agent" for d in decisions) >= 13  # the planner played its thirteen turns


@pytest.mark.parametrize("n", [3, 5])
def test_the_policy_reads_every_seats_sheet_from_table_observations_as_the_game_holds_it(n):
    from yacht_env.game import GameBatch
    from yacht_env.table.encoding import make_table_encoding

    policy = PlanNPolicy(ShareValue(YAHTZEE, random_layers(YAHTZEE)), "mine", n)
    from agents.evaluation.tournament import deal_dice

    games = GameBatch(YAHTZEE, n, 40)
    games.start(deal_dice(n, 40, n, YAHTZEE))
    rng = np.random.default_rng(0)
    for _ in range(rng.integers(30, 60)):  # random legal play until the sheets differ
        masks = games.legal_masks(np.arange(40))
        games.play(np.array([rng.choice(np.flatnonzero(m)) for m in masks]), np.arange(40))
    rows, seats = np.arange(40), games.seat.copy()
    observations = make_table_encoding("dict", n, YAHTZEE).of_tables(games, rows, seats)
    tables, _, _ = policy.tables(observations)
    order = (seats[:, None] + np.arange(n)) % n  # from the observer, in play order
    upper, full = games.sheet_state(rows[:, None], order)
    np.testing.assert_array_equal(tables.open_bits, games.open_bits[rows[:, None], order])
    np.testing.assert_array_equal(tables.totals, games.totals[rows[:, None], order])
    np.testing.assert_array_equal(tables.upper, np.minimum(upper, 63))
    np.testing.assert_array_equal(tables.yahtzee, full)


def test_a_turn_is_not_planned_into_a_scratch_of_another_width():
    # the kernels write whole rows without bounds checks: a scratch narrower than the ends would be overrun
    rules = YACHT
    ends_of = TurnEnds(ShareValue(rules, random_layers(rules)))
    tables = Tables.start(rules, 1, 2)
    out_index, ends, _ = ends_of(tables)
    for width in (1, 3, ends.shape[1]):
        with pytest.raises(ValueError, match="scratch's width"):
            plan_turn(ends_of.kernel, out_index[0], ends[0], plan_scratch(ends_of.kernel, width))
    scratch = plan_scratch(ends_of.kernel, 2)
    plan_turn(ends_of.kernel, out_index[0], ends[0], scratch)
    assert 0.0 <= scratch.turn_value[0] <= 1.0 and abs(scratch.turn_value.sum() - 1.0) < 1e-9


def test_the_value_s_logits_are_its_layers_applied_in_order_with_relu_between_and_none_after_the_last():
    layers = random_layers(YACHT, widths=(16, 8), seed=7)
    features = np.random.default_rng(7).normal(0.0, 1.0, (6, layers[0][0].shape[1])).astype(np.float32)
    hidden = np.maximum(features @ layers[0][0].T + layers[0][1], 0.0)
    hidden = np.maximum(hidden @ layers[1][0].T + layers[1][1], 0.0)
    expected = hidden @ layers[2][0].T + layers[2][1]
    assert (expected < 0).any()  # the last layer's negative outputs are kept as they are
    np.testing.assert_allclose(ShareValue(YACHT, layers).logits(features), expected, rtol=1e-5, atol=1e-5)
