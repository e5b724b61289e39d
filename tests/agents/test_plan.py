"""The planning agent: exact planning inside a turn, its learned value, its files and its policy name."""

import json

import numpy as np
import pytest
import torch
from safetensors.torch import save

from agents.learned.model_files import ModelLoadError
from agents.learned.plan import PlanPolicy, TurnPlanner
from agents.learned.plan_files import METADATA_KEY, read_plan_file, value_shape, write_plan_file
from agents.policies.guard import unguarded
from agents.policies.policy import OptimalPolicy
from agents.registry import check_plays_rules, make_policy
from agents.solvers.optimal import solve
from agents.solvers.sheet_solver import reachable_states
from agents.training.plan_games import GamePlayer
from agents.training.plan_train import learn
from agents.training.plan_values import NetValue, TabularValue, features, follow_schedule, state_parts, upper_row_maxima
from tests.agents.test_plan_files import header
from tests.agents.turn_by_hand import SUM_OF_DICE, points_are_distributed_as_by_hand, points_by_hand, rows_filled_are_uniform
from yacht_env.encoding import make_encoding
from yacht_env.rules import RULE_SETS, UPPER_ROWS, YACHT, Category, RuleSet, all_alike, full_house, rule_set, total

TINY = RuleSet("tiny", categories=(UPPER_ROWS[0], UPPER_ROWS[5], Category("choice", total), YACHT.categories[-1]), num_dice=3)
"""3 dice, 4 rows (ones, sixes, choice, yacht), no bonus: 16 sheets, a table learns them."""
TINY_BONUS = RuleSet("tiny_bonus", categories=TINY.categories, num_dice=3, bonus_threshold=12, bonus_points=20)
"""TINY with an upper bonus (20 points once ones and sixes reach 12): a sheet state, learned by the network."""


def reachable_positions(rules, count: int, seed: int = 0):
    """``count`` random positions whose sheet a game can reach (the exact values are finite there)."""
    values = solve(rules).state_values.reshape(value_shape(rules))
    states = np.argwhere(np.isfinite(values) & (np.arange(values.shape[0]) > 0)[:, None, None])
    rng = np.random.default_rng(seed)
    chosen = states[rng.integers(0, len(states), count)]
    hands = rng.integers(0, rules.dice.num_hands, count)
    rolls_left = rng.integers(0, rules.rolls_per_turn, count)
    upper_totals = chosen[:, 1] + rng.integers(0, 2, count) * (chosen[:, 1] == rules.upper_cap) * (rules.upper_cap > 0) * 5
    return hands, rolls_left, chosen[:, 0], upper_totals, chosen[:, 2]


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_planner_with_the_exact_values_plays_optimal(name):
    rules = rule_set(name)
    exact = np.nan_to_num(solve(rules).state_values.reshape(value_shape(rules)))
    encoding = make_encoding("flat", rules)
    positions = reachable_positions(rules, 4000)
    observations = encoding.encode_batch(*positions)
    optimal = OptimalPolicy(rules)
    masks = np.isfinite(optimal.solution.q_values_batch(*(positions if rules.has_bonus_or_joker else positions[:3])))
    planner = PlanPolicy(TurnPlanner(rules, exact), rules=rules)
    np.testing.assert_array_equal(planner.act_batch(observations, masks), optimal.act_batch(observations, masks))


@pytest.mark.parametrize("name", ["yacht", "yahtzee"])
def test_self_play_under_the_exact_values_scores_the_optimum_and_backups_reproduce_them(name):
    rules = rule_set(name)
    player = GamePlayer(rules)
    exact = np.nan_to_num(solve(rules).state_values.reshape(player.shape))
    states, scores = player.play_games(exact, 3000, 0.0, seed=1)
    assert abs(scores.mean() - solve(rules).expected_score) < 4 * scores.std() / np.sqrt(len(scores))
    visited = np.unique(states)
    np.testing.assert_allclose(player.backups(exact, visited), exact.reshape(-1)[visited], atol=1e-9)


@pytest.mark.parametrize("num_dice", [1, 2])
@pytest.mark.parametrize("epsilon", [0.0, 0.5])
def test_self_play_rolls_keeps_and_explores_as_the_turn_is_played_by_hand(num_dice, epsilon):
    """Each decision of a turn is the plan's (under a value of 0 for every sheet: the most points now) or, with
    probability epsilon, one taken at random; and a turn has its three rolls, no more: the scores of 20,000 games of
    one turn average what that play gives by hand."""
    games, rules = 20_000, SUM_OF_DICE[num_dice]
    player = GamePlayer(rules)
    _, scores = player.play_games(np.zeros(player.shape), games, epsilon, seed=3)
    assert abs(scores.mean() - points_by_hand(num_dice, epsilon)) < 5 * scores.std() / np.sqrt(games) + 1e-9
    assert points_are_distributed_as_by_hand(scores, num_dice, epsilon)  # each number of points as often


def test_self_play_keeps_a_filled_yahtzee_box_whatever_its_points_and_pays_the_extra_bonus_after_it():
    """With one die every roll is alike: a box worth 1 point, filled first, holds its points, so the next alike roll
    scores the extra bonus of 100 on top of its face; filled second, no bonus is paid."""
    rules = RuleSet(
        "one_point_box",
        categories=(Category("box", all_alike(1)), Category("choice", total)),
        num_dice=1,
        yahtzee_row="box",
        yahtzee_bonus=100,
    )
    player = GamePlayer(rules)
    states, scores = player.play_games(np.zeros(player.shape), 400, 1.0, seed=1)  # rows in a random order
    open_bits, _, box = state_parts(player.shape, states[:, 1])
    box_first = (open_bits & 1) == 0
    assert 0 < box_first.sum() < 400
    assert (box[box_first] == 1).all() and (box[~box_first] == 0).all()
    assert (scores[box_first] >= 1 + 100 + 1).all() and (scores[~box_first] <= 1 + 6).all()


def test_self_play_scores_a_joker_at_its_joker_points_once_the_yahtzee_box_is_filled():
    """With one die every roll is alike and has no upper row: once the box is filled, a roll scored in the full house
    (which one die never makes) is a joker worth its 25 joker points; scored before the box, it is worth 0."""
    rules = RuleSet(
        "one_die_joker",
        categories=(Category("box", all_alike(1)), Category("full_house", full_house, joker_points=25)),
        num_dice=1,
        yahtzee_row="box",
        joker="free",
    )
    player = GamePlayer(rules)
    states, scores = player.play_games(np.zeros(player.shape), 400, 1.0, seed=2)  # rows in a random order
    box_first = (state_parts(player.shape, states[:, 1])[0] & 1) == 0
    assert 0 < box_first.sum() < 400
    assert (scores[box_first] == 1 + 25).all() and (scores[~box_first] == 0 + 1).all()


def test_self_play_games_of_different_seeds_differ_and_of_one_seed_repeat():
    player = GamePlayer(TINY)
    values = np.zeros(player.shape)
    games = [player.play_games(values, 50, 0.5, seed) for seed in (1, 3, 1)]
    assert not np.array_equal(games[0][0], games[1][0])
    np.testing.assert_array_equal(games[0][0], games[2][0])
    np.testing.assert_array_equal(games[0][1], games[2][1])


def test_the_open_rows_of_a_sheet_are_counted_from_its_flat_index_with_subtotals_and_a_box():
    rules = RuleSet(
        "tiny_box",
        categories=TINY.categories,
        num_dice=3,
        bonus_threshold=12,
        bonus_points=20,
        yahtzee_row="yacht",
        yahtzee_bonus=100,
    )
    player = GamePlayer(rules)
    assert player.shape[1:] == (13, 2)  # subtotals 0 to 12, and the box
    every = np.arange(int(np.prod(player.shape)))
    open_bits, _, _ = state_parts(player.shape, every)
    expected = [bin(int(bits)).count("1") for bits in open_bits]
    assert player.open_counts(every).tolist() == expected


def test_self_play_adds_to_the_upper_subtotal_only_the_points_of_upper_rows_wherever_they_stand():
    """A rule set listing a lower row before its upper one: scoring the lower row first leaves the subtotal at 0."""
    rules = RuleSet(
        "lower_first", categories=(Category("choice", total), UPPER_ROWS[5]), num_dice=3, bonus_threshold=12, bonus_points=20
    )
    player = GamePlayer(rules)
    states, _ = player.play_games(np.zeros(player.shape), 400, 1.0, seed=4)  # rows in a random order
    open_bits, upper, _ = state_parts(player.shape, states[:, 1])
    choice_first = (open_bits & 1) == 0
    assert 0 < choice_first.sum() < 400
    assert (upper[choice_first] == 0).all() and (upper[~choice_first] > 0).any()


def test_self_play_with_full_exploration_scores_in_a_uniformly_random_open_row():
    games, player = 4000, GamePlayer(TINY)
    states, _ = player.play_games(np.zeros(player.shape), games, 1.0, seed=2)
    open_after_first = states[:, 1] // (player.shape[1] * player.shape[2])
    assert rows_filled_are_uniform((1 << TINY.num_rows) - 1, open_after_first, TINY.num_rows)
    # and only open rows: every turn starts with one row fewer open
    open_rows = player.open_counts(states.reshape(-1)).reshape(states.shape)
    assert (open_rows == TINY.num_rows - np.arange(TINY.num_rows)).all()


def test_a_table_learns_the_exact_values_of_a_small_rule_set_from_its_own_games():
    player = GamePlayer(TINY)
    model = TabularValue(player)
    for _ in learn(model, games=600, games_per_iteration=100, epsilon=0.3, seed=0):
        pass
    exact = solve(TINY).state_values.reshape(player.shape)
    np.testing.assert_allclose(model.sheet_values(), exact, atol=1e-9)  # every sheet of 4 rows is visited, and backed up exactly


def test_one_sweep_fewest_open_rows_first_backs_up_every_sheet_exactly():
    """A sheet's backup reads only sheets with fewer rows open: one pass over every sheet, fewest first, is exact."""
    player = GamePlayer(TINY)
    model = TabularValue(player)
    every = np.arange(1, np.prod(player.shape))  # the full sheet (no row open) is worth 0, never backed up
    model.learn(every[::-1])  # handed most open first: the model orders them
    np.testing.assert_allclose(model.sheet_values(), solve(TINY).state_values.reshape(player.shape), atol=1e-9)


@pytest.mark.parametrize("feature_set", ["basic", "upper"])
def test_the_network_s_features_of_every_sheet_as_the_module_defines_them(feature_set):
    """Rows open, u / threshold, 1 from the threshold on, y, the share of rows open (and the upper rows' slack)."""
    player = GamePlayer(TINY_BONUS)
    sheets, uppers, boxes = player.shape
    every = np.arange(sheets * uppers * boxes)
    upper_max = upper_row_maxima(TINY_BONUS)
    assert upper_max.tolist() == [3.0, 18.0, 0.0, 0.0]  # three ones, three sixes; choice and yacht are not upper rows
    got = features(player.shape, 4, every, upper_max if feature_set == "upper" else None)
    for state in every:
        open_bits, u, y = state // (uppers * boxes), state // boxes % uppers, state % boxes
        rows = [float(open_bits >> c & 1) for c in range(4)]
        expected = [*rows, u / 12, float(u == 12), float(y), sum(rows) / 4]
        if feature_set == "upper":
            need, most = max(12 - u, 0), rows[0] * 3 + rows[1] * 18
            expected += [(0.6 * most - need) / 12, (most - need) / 12]
        np.testing.assert_allclose(got[state], expected, rtol=1e-6, err_msg=str((open_bits, u, y)))
    assert got[:, 5].sum() == sheets * boxes  # the threshold reached: one upper subtotal of each sheet


ONES_ALONE = 3 * (1 - (5 / 6) ** 3)
"""Ones being the one row open, 3 dice, 3 rolls: keep every one, so each die ends a one with chance 1 - (5/6)**3."""


def test_state_parts_splits_a_flat_index_into_open_rows_upper_subtotal_and_yahtzee_box():
    """The flat index is (S * U + u) * Y + y, so a Yahtzee box (Y = 2) interleaves the subtotals."""
    shape = (8, 5, 2)
    expected = [(s, u, y) for s in range(8) for u in range(5) for y in range(2)]
    flat = [(s * 5 + u) * 2 + y for s, u, y in expected]
    open_bits, upper, yahtzee = state_parts(shape, np.array(flat))
    assert list(zip(open_bits.tolist(), upper.tolist(), yahtzee.tolist(), strict=True)) == expected
    assert upper.dtype == np.int64


def test_features_of_a_rule_set_without_a_bonus_never_reach_a_threshold():
    """Without an upper bonus the subtotal is always 0 and there is no threshold: both its features stay 0."""
    player = GamePlayer(TINY)
    assert player.shape == (16, 1, 1)
    got = features(player.shape, 4, np.arange(16))
    for open_bits in range(16):
        rows = [float(open_bits >> c & 1) for c in range(4)]
        np.testing.assert_allclose(got[open_bits], [*rows, 0.0, 0.0, 0.0, sum(rows) / 4], err_msg=str(open_bits))


def test_the_learning_rate_follows_the_schedule_clamped_to_its_ends():
    weights = [torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))]
    optimizer = torch.optim.Adam([{"params": [weights[0]]}, {"params": [weights[1]]}], lr=1.0)
    for progress, rate in [(0.0, 4.0), (0.25, 3.5), (0.5, 3.0), (1.0, 2.0), (-0.5, 4.0), (3.0, 2.0)]:
        follow_schedule(optimizer, (4.0, 2.0), progress)
        assert [group["lr"] for group in optimizer.param_groups] == [rate, rate], progress


def test_a_table_s_learning_returns_the_mean_absolute_change_of_its_values():
    player = GamePlayer(TINY)
    model = TabularValue(player)
    ones_open = np.array([0b0001])
    assert model.learn(ones_open) == pytest.approx(ONES_ALONE)  # from 0 to its value
    assert model.sheet_values()[1, 0, 0] == pytest.approx(ONES_ALONE)
    assert model.learn(ones_open) == 0.0  # its backup reads only the full sheet: nothing left to change


def small_net(player, replay: int = 100, epochs: int = 2):
    return NetValue(player, [8], learning_rate=1e-2, epochs=epochs, batch_size=4, replay=replay, seed=0)


def test_a_network_s_output_is_read_in_hundreds_of_points(one_torch_thread):
    """Checkpoints keep the network's weights: the unit of its output must not change under a saved run."""
    player = GamePlayer(TINY_BONUS)
    model = small_net(player)
    with torch.no_grad():
        model.net[-1].weight.zero_()
        model.net[-1].bias.fill_(1.0)
    model.restore(model.tensors())
    reachable = reachable_states(TINY_BONUS)
    values = model.sheet_values()
    np.testing.assert_array_equal(values[1:][reachable[1:]], 100.0)  # copies of a shared value included
    np.testing.assert_array_equal(values[1:][~reachable[1:]], 0.0)
    np.testing.assert_array_equal(values[0], 0.0)  # the full sheet: nothing more to score


def test_a_network_s_loss_is_in_squared_points(one_torch_thread):
    """A network that outputs 0, fitted to one sheet: its one minibatch's loss is the sheet's backup squared."""
    player = GamePlayer(TINY_BONUS)
    model = small_net(player, epochs=1)  # one minibatch, its loss taken before the step
    with torch.no_grad():
        model.net[-1].weight.zero_()
        model.net[-1].bias.zero_()
    _, uppers, boxes = player.shape
    ones_open_nothing_scored = (0b0001 * uppers + 0) * boxes + 0  # 3 ones at most: the bonus's 12 out of reach
    assert model.learn(np.array([ones_open_nothing_scored])) == pytest.approx(ONES_ALONE**2, rel=1e-5)


def test_a_replay_filled_to_its_size_trains_as_one_with_room_left(one_torch_thread):
    """Only a replay over its size is subsampled (drawing from the model's generator, so changing what follows)."""
    player = GamePlayer(TINY_BONUS)
    _, uppers, boxes = player.shape
    states = np.arange(1, 16) * uppers * boxes  # every sheet with a row open, nothing scored in the upper rows
    full, roomy = small_net(player, replay=len(states)), small_net(player, replay=len(states) + 1)
    full.learn(states)
    roomy.learn(states)
    np.testing.assert_array_equal(full.sheet_values(), roomy.sheet_values())


def test_a_network_learns_the_value_of_a_small_bonus_rule_set_within_half_a_point(one_torch_thread):
    player = GamePlayer(TINY_BONUS)
    model = NetValue(player, [32, 32], learning_rate=3e-3, epochs=20, batch_size=32, replay=10_000, seed=0)
    for _ in learn(model, games=3000, games_per_iteration=200, epsilon=0.3, seed=0):
        pass
    optimum = solve(TINY_BONUS).expected_score
    assert abs(model.sheet_values()[-1, 0, 0] - optimum) < 0.5, (model.sheet_values()[-1, 0, 0], optimum)


# -- plan files -------------------------------------------------------------------------------------


@pytest.fixture
def yacht_values():
    return solve("yacht").state_values.reshape(value_shape(YACHT)).copy()


def test_a_plan_file_round_trips_and_plays_by_name(tmp_path, yacht_values):
    path = write_plan_file(tmp_path / "plan.safetensors", yacht_values, "yacht", "tabular", 123)
    meta, values = read_plan_file(path)
    assert meta["rules"] == "yacht" and meta["games"] == 123 and meta["value_model"] == "tabular"
    np.testing.assert_allclose(values, yacht_values, rtol=1e-6)
    policy = make_policy(f"plan:{path}", rules=YACHT)
    assert isinstance(unguarded(policy), PlanPolicy) and policy.name == f"plan:{path}"


def write_raw(path, tensors, metadata):
    path.write_bytes(save(tensors, metadata=None if metadata is None else {METADATA_KEY: json.dumps(metadata)}))
    return path


def changed(**fields):
    meta = header()
    for key, value in fields.items():
        if value is None:
            meta.pop(key)
        else:
            meta[key] = value
    return meta


VALUES = torch.zeros((4096, 1, 1), dtype=torch.float32)


@pytest.mark.parametrize(
    "tensors, metadata, message",
    [
        ({"values": VALUES}, None, "has no 'yacht_plan' metadata"),
        ({"values": VALUES}, changed(format="yacht-model"), "format is 'yacht-model'"),
        ({"values": VALUES}, changed(format_version=2), "newer than this version reads"),
        ({"values": VALUES}, changed(games=None), "metadata lacks games"),
        ({"values": VALUES}, changed(extra=1), "unknown metadata field(s) 'extra'"),
        ({"values": VALUES}, changed(rules="chess"), "rules must be one of"),
        ({"values": VALUES}, changed(rules_fingerprint="0" * 16), "the rules changed since"),
        ({"values": VALUES}, changed(value_model="forest"), "value_model must be one of"),
        ({"values": VALUES}, changed(games=-1), "games must be an integer >= 0"),
        ({"values": torch.zeros((4096, 1, 2))}, header(), "the yacht rules need (4096, 1, 1)"),
        ({"values": VALUES.double()}, header(), "expected float32"),
        ({"values": VALUES, "more": VALUES.clone()}, header(), "expected exactly one tensor 'values'"),
        ({"values": VALUES.clone().fill_(float("nan"))}, header(), "NaN or infinite"),
        ({"values": VALUES.clone().fill_(1e9)}, header(), "above 1e+06 points"),
        ({"values": VALUES.clone().fill_(1.0)}, header(), "value of the full sheet (no row open) must be 0"),
    ],
)
def test_bad_plan_files_are_refused_in_one_line(tmp_path, tensors, metadata, message):
    path = write_raw(tmp_path / "bad.safetensors", tensors, metadata)
    with pytest.raises(ModelLoadError) as error:
        make_policy(f"plan:{path}", rules=YACHT)
    assert message in str(error.value) and "\n" not in str(error.value), str(error.value)


@pytest.mark.parametrize(
    "content, message",
    [(b"PK\x03\x04 a zip", "is a zip, not a .safetensors plan file"), (b"\x10\x00 not safetensors", "not a readable")],
)
def test_files_that_are_not_safetensors_are_refused(tmp_path, content, message):
    path = tmp_path / "plan.safetensors"
    path.write_bytes(content)
    with pytest.raises(ModelLoadError, match=message):
        read_plan_file(path)
    with pytest.raises(ModelLoadError, match="no plan file at"):
        read_plan_file(tmp_path / "missing.safetensors")


def test_a_plan_plays_only_its_own_rules(tmp_path, yacht_values):
    path = write_plan_file(tmp_path / "plan.safetensors", yacht_values, "yacht", "tabular", 0)
    with pytest.raises(ModelLoadError, match="trained on the 'yacht' rules, but this game plays 'yatzy'"):
        make_policy(f"plan:{path}", rules=rule_set("yatzy"))
    with pytest.raises(ValueError, match="trained for the yacht rules; this game plays yatzy"):
        check_plays_rules(f"plan:{path}", rule_set("yatzy"))


def test_a_plan_sits_at_a_table_and_the_server_shows_no_path(tmp_path, yacht_values):
    from agents.registry import make_opponents
    from yacht_play.serve.games import shown_policy

    path = write_plan_file(tmp_path / "plan.safetensors", yacht_values, "yacht", "tabular", 0)
    (opponent,) = make_opponents([f"plan:{path}"], rules=YACHT)
    assert isinstance(unguarded(opponent), PlanPolicy)
    assert shown_policy(f"plan:{path}") == "plan:plan.safetensors"


# -- the planner's inputs and the masks it is given ---------------------------------------------------


def test_a_planner_takes_only_finite_values_of_its_rules_shape():
    with pytest.raises(ValueError) as error:
        TurnPlanner(YACHT, np.zeros((4096, 1, 2)))
    assert str(error.value) == "values of the yacht rules have shape (4096, 1, 1), got (4096, 1, 2)"
    with pytest.raises(ValueError, match=r"have shape \(4096, 1, 1\), got \(2048, 1, 1\)"):
        TurnPlanner(YACHT, np.zeros((2048, 1, 1)))
    with pytest.raises(ValueError, match=r"got \(4096,\)"):
        TurnPlanner(YACHT, np.zeros(4096))
    for bad in (np.nan, np.inf):
        values = np.zeros((4096, 1, 1))
        values[5, 0, 0] = bad
        with pytest.raises(ValueError, match="values must be finite for every sheet state"):
            TurnPlanner(YACHT, values)


def test_a_planner_s_values_cannot_be_changed_once_it_plans_with_them():
    planner = TurnPlanner(YACHT, np.zeros((4096, 1, 1)))
    with pytest.raises(ValueError, match="read-only"):
        planner.state_values[1, 0, 0] = 5.0


def hand_of(rules, dice):
    return int(np.flatnonzero((rules.dice.hands == sorted(dice)).all(axis=1))[0])


def test_the_planner_plays_only_what_the_masks_allow_even_where_it_scores_nothing():
    """Values 0 beyond the turn: each row's Q is its points. The masks given narrow the legal actions further."""
    from yacht_env.actions import ActionLayout

    layout = ActionLayout(YACHT)
    policy = PlanPolicy(TurnPlanner(YACHT, np.zeros((4096, 1, 1))), rules=YACHT)
    yacht_row = YACHT.category_names.index("yacht")
    every_row, yacht_alone = (1 << 12) - 1, 1 << yacht_row
    sixes = YACHT.category_names.index("sixes")
    hands = [hand_of(YACHT, [6] * 5), hand_of(YACHT, [1, 2, 3, 4, 5]), hand_of(YACHT, [6] * 5)]
    observations = make_encoding("flat", YACHT).encode_batch(
        np.array(hands), np.array([0, 0, 0]), np.array([every_row, yacht_alone, every_row])
    )
    masks = np.zeros((3, layout.num_actions), dtype=np.int8)
    masks[0, layout.score_action(0)] = 1  # five sixes, only the ones row allowed: 0 points rather than 50
    masks[1, layout.score_action(yacht_row)] = 1  # the yacht row alone open, no yacht: 0 points, the only move
    masks[2, [layout.score_action(0), layout.score_action(sixes)]] = 1  # ones or sixes: the 30 points, not the lower index
    expected = [layout.score_action(0), layout.score_action(yacht_row), layout.score_action(sixes)]
    assert policy.act_batch(observations, masks).tolist() == expected
    assert policy.act_batch(observations, masks.astype(bool)).tolist() == expected
