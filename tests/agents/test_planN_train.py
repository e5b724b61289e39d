"""Training the table planner: the table size of each iteration, the replay of visited tables and their backups, the
loss over the seats present, and the iterations of self-play."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch

from agents.learned.planN import Tables, table_features
from agents.training.config import PlanConfig
from agents.training.planN_games import SelfPlay
from agents.training.planN_train import ShareNet, learn, table_size_of
from tests.agents.test_plan2 import SELF_PLAY_RULES, assert_row_of
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import YACHT

RULES = SELF_PLAY_RULES


def plan(**fields) -> PlanConfig:
    return PlanConfig(net_arch=[4], epochs=1, batch_size=4096, **fields)


def played(n: int, count: int, seed: int) -> SelfPlay:
    """``count`` made-up turn starts of ``n`` seats with backups that split the win."""
    rng = np.random.default_rng(seed)
    shape = (count, n)
    tables = Tables(
        rng.integers(1, RULES.all_open + 1, shape), np.zeros(shape, int), np.zeros(shape, int), rng.integers(0, 90, shape)
    )
    backups = rng.dirichlet(np.ones(n), count)
    return SelfPlay(tables, backups, rng.uniform(0, 1, count))


def test_each_iteration_seats_the_next_table_size_in_increasing_order_and_starts_over():
    config = plan(table_sizes=[4, 2, 3], games_per_iteration=10)
    assert [table_size_of(config, done) for done in (0, 9, 10, 20, 30, 45, 50)] == [2, 2, 3, 4, 2, 3, 4]
    assert [table_size_of(config, done) for done in (60, 70, 80, 1_000_000)] == [2, 3, 4, 3]  # round after round


def test_the_replay_holds_the_newest_tables_first_with_each_seat_s_backup_and_the_table_size(one_torch_thread):
    model = ShareNet(RULES, plan(table_sizes=[2, 3], replay_states=5), seed=0)
    two, three = played(2, 3, seed=1), played(3, 4, seed=2)
    model.remember(two)
    model.remember(three)  # 7 tables: the oldest two of the first batch fall off
    sheets = model.value().sheets
    expected = np.concatenate([table_features(sheets, three.tables), table_features(sheets, two.tables)[:1]])
    np.testing.assert_array_equal(model.inputs, expected)
    assert model.targets.shape == (5, MAX_PLAYERS)
    np.testing.assert_allclose(model.targets[:4, :3], three.backups, rtol=1e-6)
    np.testing.assert_allclose(model.targets[4, :2], two.backups[0], rtol=1e-6)
    assert not model.targets[:4, 3:].any() and not model.targets[4, 2:].any()  # no share for a seat not at the table
    assert model.seats.tolist() == [3, 3, 3, 3, 2]


def test_the_loss_is_the_cross_entropy_over_the_seats_present_only(one_torch_thread):
    """A network that says nothing (every logit 0) gives each seat present 1/n: its loss on a table of n is log n,
    whatever the backups, as long as they split the win."""
    model = ShareNet(RULES, plan(table_sizes=[2, 3]), seed=0)
    with torch.no_grad():
        model.net[-1].weight.zero_()
        model.net[-1].bias.zero_()
    assert model.learn(played(2, 6, seed=3)) == pytest.approx(math.log(2), rel=1e-6)  # one minibatch, before its step
    fresh = ShareNet(RULES, plan(table_sizes=[2, 3]), seed=0)
    with torch.no_grad():
        fresh.net[-1].weight.zero_()
        fresh.net[-1].bias.zero_()
    assert fresh.learn(played(3, 4, seed=4)) == pytest.approx(math.log(3), rel=1e-6)


def test_self_play_learning_takes_the_table_sizes_in_turn_to_the_total_and_stops_at_the_deadline(one_torch_thread):
    config = plan(table_sizes=[2, 3], total_games=25, games_per_iteration=10)
    steps = [(games, size) for games, size, share, loss in learn(ShareNet(RULES, config, seed=0), config, seed=0)]
    assert steps == [(10, 2), (20, 3), (25, 2)]
    resumed = learn(ShareNet(RULES, config, seed=0), config, seed=0, games_done=10)
    assert [(games, size) for games, size, _, _ in resumed] == [(20, 3), (25, 2)]
    assert list(learn(ShareNet(RULES, config, seed=0), config, seed=0, deadline=time.perf_counter())) == []


def run_config(*overrides: str):
    from pathlib import Path

    from agents.training.config import load_config

    config = Path(__file__).parents[2] / "configs" / "planN_yahtzee.yaml"
    return load_config(config, ["env.rules=yacht", "plan.lead_prior=null", "plan.table_sizes=[2,3]", *overrides])


def test_a_learning_curve_row_is_the_planner_s_standing_against_the_run_s_opponents():
    from agents.learned.planN import shipped_planner
    from agents.training.planN_train import periodic_figures, tournament

    config = run_config("env.num_players=3", "env.opponents=[greedy,random]", "run.eval_games=12")
    value = shipped_planner(YACHT, 3).value  # one that wins some games
    row = periodic_figures(value, config)
    result, _ = tournament(value, "planN", config, 12)
    assert result.table == ["planN", "greedy", "random"] and (result.games, result.deals) == (12, 4)  # every seating
    (mine,) = [s for s in result.standings if s.policy == "planN"]
    assert_row_of(row, mine)


def test_a_run_s_final_tournament_plays_its_file_against_the_opponents(tmp_path, capsys):
    import json

    from agents.learned.planN_files import write_planN_file
    from agents.training.planN_train import finish_planN
    from tests.agents.test_planN import random_layers

    config = run_config("env.num_players=2", "env.opponents=[greedy]", "run.final_eval_games=4")
    run = tmp_path / "run"
    path = write_planN_file(run / "model.safetensors", random_layers(YACHT), YACHT, (2, 3), 10)
    finish_planN(config, run)
    assert f"model: {path} (play it as planN:{path})" in capsys.readouterr().out
    result = json.loads((run / "eval.json").read_text())
    assert result["table"] == [f"planN:{path}", "greedy"] and result["games"] == 4


def test_trained_logits_with_a_lead_prior_are_those_the_planner_plays(one_torch_thread):
    """The network trains on the logits the planner reads: its own plus the prior's weight times each seat's lead."""
    from agents.learned.planN import table_features

    model = ShareNet(YACHT, PlanConfig(net_arch=[8], lead_prior="plan:yacht", lead_weight=0.7, table_sizes=[2, 3]), seed=0)
    assert model.has_prior
    tables = played(3, 6, seed=5).tables
    tables = tables._replace(open_bits=np.minimum(tables.open_bits, YACHT.all_open))
    value = model.value()
    features = table_features(value.sheets, tables)
    with torch.no_grad():
        trained = model.logits(torch.from_numpy(features)).numpy()
    np.testing.assert_allclose(trained, value.logits(features), rtol=1e-5, atol=1e-5)
    without = ShareNet(YACHT, PlanConfig(net_arch=[8], lead_prior="plan:yacht", lead_weight=0.0, table_sizes=[2, 3]), seed=0)
    with torch.no_grad():
        plain = without.logits(torch.from_numpy(features)).numpy()
    assert not np.allclose(plain, trained, atol=1e-3)  # the prior's term counts


def test_learning_starts_at_the_first_learning_rate_and_reports_no_loss_for_nothing_fitted(one_torch_thread):
    model = ShareNet(RULES, plan(table_sizes=[2, 3], learning_rate=1e-3, final_learning_rate=1e-5), seed=0)
    model.learn(played(2, 6, seed=3))  # progress not given: the run's start
    assert model.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3)
    assert ShareNet(RULES, plan(table_sizes=[2, 3]), seed=0).learn(played(2, 0, seed=3)) == 0.0


def test_the_replay_s_table_sizes_stay_one_a_table_as_it_fills(one_torch_thread):
    model = ShareNet(RULES, plan(table_sizes=[2, 3], replay_states=50), seed=0)
    assert len(model.seats) == len(model.targets) == len(model.inputs) == 0
    model.remember(played(2, 3, seed=1))
    assert model.seats.tolist() == [2, 2, 2] and len(model.targets) == len(model.inputs) == 3


def test_learning_runs_to_the_total_before_a_deadline_still_ahead(one_torch_thread):
    config = plan(table_sizes=[2, 3], total_games=20, games_per_iteration=10)
    model = ShareNet(RULES, config, seed=0)
    steps = learn(model, config, seed=0, deadline=time.perf_counter() + 600, wall=600)
    assert [(games, size) for games, size, _, _ in steps] == [(10, 2), (20, 3)]


def test_a_run_resumed_past_a_lowered_total_plays_no_more_games(one_torch_thread):
    config = plan(table_sizes=[2, 3], total_games=20, games_per_iteration=10)
    assert list(learn(ShareNet(RULES, config, seed=0), config, seed=0, games_done=30)) == []
