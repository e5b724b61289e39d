"""The table planner's lead prior: each seat's points to come from a solitaire planner's learned sheet value, its
expected lead in the inputs and the logits, and the files and runs that carry it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import save

from agents.learned.plan_files import read_plan_file, value_shape, write_plan_file
from agents.learned.planN import ShareValue, Tables, load_value, prior_lead_columns, table_features
from agents.learned.planN_files import METADATA_KEY, PRIOR_EXTRA, LeadPrior, num_features, read_planN_file, write_planN_file
from agents.training.config import ConfigError, load_config
from tests.agents.test_planN import assert_refused_in_one_line, file_by_hand, header, random_layers, tensors_of
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import YACHT, rule_set

YAHTZEE = rule_set("yahtzee")


def points_table(rules, seed=0) -> np.ndarray:
    """A made-up value of every sheet: any finite table with 0 for the full sheet is a valid prior."""
    points = np.random.default_rng(seed).uniform(0, 300, value_shape(rules))
    points[0] = 0.0
    return points


def prior_layers(rules, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(0, 0.3, (MAX_PLAYERS, num_features(rules, True))), rng.normal(0, 0.1, MAX_PLAYERS))]


def zero_network(rules):
    return [(np.zeros((MAX_PLAYERS, num_features(rules, True))), np.zeros(MAX_PLAYERS))]


def some_tables(rules, n, count=40, seed=0) -> Tables:
    """Random tables of ``n`` seats, every seat with at least one row open and upper subtotals within the cap."""
    rng = np.random.default_rng(seed)
    shape = (count, n)
    open_bits = rng.integers(1, 1 << rules.num_rows, shape)
    upper = rng.integers(0, rules.upper_cap + 1, shape)
    yahtzee = rng.integers(0, 2 if rules.tracks_yahtzee_box else 1, shape)
    return Tables(open_bits, upper, yahtzee, rng.integers(0, 200, shape))


@pytest.mark.parametrize("n", [2, 3, 5])
def test_each_seat_reads_its_points_to_come_and_its_expected_lead_over_the_mover(n):
    points = points_table(YAHTZEE)
    sheets = ShareValue(YAHTZEE, zero_network(YAHTZEE), prior=LeadPrior(points, 1.0)).sheets
    tables = some_tables(YAHTZEE, n)
    features = table_features(sheets, tables)
    assert features.shape == (len(tables.totals), num_features(YAHTZEE, True))
    width = YAHTZEE.num_rows + 8 + PRIOR_EXTRA
    rows_open = sum(((tables.open_bits >> c) & 1).sum(axis=1) for c in range(YAHTZEE.num_rows))
    scale = 1.0 / (10.0 * np.sqrt(1.0 + rows_open))
    expected_totals = tables.totals + points[tables.open_bits, tables.upper, tables.yahtzee]
    for j in range(n):
        block = features[:, j * width : (j + 1) * width]
        to_come = points[tables.open_bits[:, j], tables.upper[:, j], tables.yahtzee[:, j]]
        lead = expected_totals[:, j] - expected_totals[:, 0]
        np.testing.assert_allclose(block[:, -3], to_come / 100.0, rtol=1e-6)
        np.testing.assert_allclose(block[:, -2], lead / 100.0, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(block[:, -1], lead * scale, rtol=1e-5, atol=1e-6)
    assert not features[:, n * width : MAX_PLAYERS * width].any()  # the seats the table lacks
    # the columns the logits add are those scaled expected leads
    np.testing.assert_array_equal(prior_lead_columns(sheets), np.arange(MAX_PLAYERS) * width + width - 1)


@pytest.mark.parametrize("weight", [0.5, 2.0])
def test_with_no_network_the_shares_are_the_softmax_of_weight_times_the_scaled_expected_leads(weight):
    points = points_table(YAHTZEE, seed=1)
    value = ShareValue(YAHTZEE, zero_network(YAHTZEE), prior=LeadPrior(points, weight))
    tables = some_tables(YAHTZEE, 3, seed=2)
    rows_open = sum(((tables.open_bits >> c) & 1).sum(axis=1) for c in range(YAHTZEE.num_rows))
    expected = tables.totals + points[tables.open_bits, tables.upper, tables.yahtzee]
    logits = weight * (expected - expected[:, :1]) / (10.0 * np.sqrt(1.0 + rows_open))[:, None]
    shares = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(value(tables), shares, rtol=1e-4)
    # the seat expected to finish ahead is favoured, before anything is learned
    assert (value(tables).argmax(axis=1) == expected.argmax(axis=1)).all()


def test_a_file_with_a_lead_prior_round_trips_and_plays_as_written(tmp_path):
    points, layers = points_table(YAHTZEE), prior_layers(YAHTZEE)
    path = write_planN_file(tmp_path / "p.safetensors", layers, YAHTZEE, [2, 3], 9, LeadPrior(points, 1.75))
    meta, ((_, _, _, prior),) = read_planN_file(path)
    assert meta["lead_prior"] is True and meta["format_version"] == 3
    assert meta["features"] == num_features(YAHTZEE, True) == num_features(YAHTZEE) + MAX_PLAYERS * PRIOR_EXTRA
    assert prior.weight == 1.75
    np.testing.assert_array_equal(prior.points_to_come, points.astype(np.float32))
    tables = some_tables(YAHTZEE, 2, seed=3)
    written = ShareValue(YAHTZEE, layers, (2, 3), LeadPrior(points.astype(np.float32), 1.75))
    np.testing.assert_allclose(load_value(path, 2)(tables), written(tables), rtol=1e-6)
    # without a prior the file says so and holds no prior tensors
    unprimed = write_planN_file(tmp_path / "q.safetensors", random_layers(YAHTZEE), YAHTZEE, [2], 1)
    meta, ((_, _, _, prior),) = read_planN_file(unprimed)
    assert meta["lead_prior"] is False and prior is None


def prior_header(**changes) -> dict:
    return header(**{"format_version": 2, "lead_prior": True, "features": num_features(YACHT, True), **changes})


def prior_tensors(points=None, weight=None, drop=()) -> dict:
    tensors = tensors_of(prior_layers(YACHT))
    tensors["points_to_come"] = torch.tensor(points_table(YACHT) if points is None else points, dtype=torch.float32)
    tensors["lead_weight"] = torch.tensor([1.0] if weight is None else weight, dtype=torch.float32)
    return {name: tensor for name, tensor in tensors.items() if name not in drop}


NAN_POINTS = points_table(YACHT)
NAN_POINTS[5] = np.nan
FULL_SHEET = points_table(YACHT)
FULL_SHEET[0] = 3.0


@pytest.mark.parametrize(
    ("tensors", "metadata", "message"),
    [
        (prior_tensors(drop=("points_to_come",)), prior_header(), "must hold tensor points_to_come"),
        (prior_tensors(drop=("lead_weight",)), prior_header(), "must hold tensor lead_weight"),
        (prior_tensors(drop=("points_to_come", "lead_weight")), prior_header(), "must hold tensor points_to_come$"),  # the first
        (prior_tensors(points=np.zeros((8, 1, 1))), prior_header(), r"points_to_come has shape \(8, 1, 1\)"),
        (prior_tensors(weight=[1.0, 2.0]), prior_header(), r"lead_weight has shape \(2,\)"),
        (prior_tensors(weight=[np.inf]), prior_header(), "lead_weight must be finite"),
        (prior_tensors(weight=[2e4]), prior_header(), "lead_weight must be finite and at most 10000"),
        (prior_tensors(points=NAN_POINTS), prior_header(), "points_to_come holds NaN"),
        (prior_tensors(points=FULL_SHEET), prior_header(), "the value of the full sheet"),
        (prior_tensors(), prior_header(lead_prior="yes"), "lead_prior must be true or false"),
        (prior_tensors(), prior_header(features=num_features(YACHT)), f"features must be {num_features(YACHT, True)}"),
        (  # wider than the rules need is refused as narrower is, and the message says the width is the prior's
            prior_tensors(),
            prior_header(features=num_features(YACHT, True) + 1),
            f"must be {num_features(YACHT, True)} for the yacht rules with a lead prior, got {num_features(YACHT, True) + 1}$",
        ),
        (
            tensors_of(random_layers(YACHT)),
            header(features=num_features(YACHT) + 1),
            f"for the yacht rules, got {num_features(YACHT) + 1}$",
        ),
        (prior_tensors(), prior_header(features="9" * 100), "with a lead prior, got 9{40}$"),  # the value echoed cut to 40
        (tensors_of(random_layers(YACHT)), header(format_version=2), "lacks lead_prior"),
        (tensors_of(random_layers(YACHT)), header(lead_prior=False), "unknown metadata field"),  # not in version 1
        (prior_tensors(), prior_header(lead_prior=False, features=num_features(YACHT)), "expected tensors layers"),
    ],
)
def test_bad_lead_priors_are_refused_in_one_line(tmp_path, tensors, metadata, message):
    assert_refused_in_one_line(file_by_hand(tmp_path / "bad.safetensors", tensors, metadata), message)


def test_a_version_1_file_reads_with_no_prior(tmp_path):
    path = tmp_path / "v1.safetensors"
    path.write_bytes(save(tensors_of(random_layers(YACHT)), metadata={METADATA_KEY: json.dumps(header())}))
    meta, ((sizes, games, layers, prior),) = read_planN_file(path)
    assert meta["format_version"] == 1 and prior is None and layers[0][0].shape[1] == num_features(YACHT)
    assert sizes == tuple(meta["table_sizes"]) and games == meta["games"]


# -- training -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["yahtzee", "plan:", "plan: x", "ppo:yahtzee"])
def test_a_lead_prior_must_name_a_plan_file(tmp_path, value):
    path = tmp_path / "c.yaml"
    path.write_text(f"algorithm: planN\nenv: {{rules: yahtzee}}\nplan: {{lead_prior: {json.dumps(value)}}}\n")
    with pytest.raises(ConfigError, match="lead_prior"):
        load_config(path)


def tiny_run(tmp_path, run_name, extra=""):
    from train import main as train_main

    plan_path = tmp_path / "prior.safetensors"
    if not plan_path.exists():
        write_plan_file(plan_path, points_table(YAHTZEE, seed=4), YAHTZEE, "net", 10)
    config = tmp_path / f"{run_name}.yaml"
    config.write_text(
        f"name: {run_name}\nalgorithm: planN\nseed: 3\nenv: {{rules: yahtzee, num_players: 2, opponents: [optimal]}}\n"
        f"plan: {{total_games: {{games}}, games_per_iteration: 4, table_sizes: [2, 3], net_arch: [8], "
        f"lead_prior: 'plan:{plan_path}', lead_weight: 0.75{extra}}}\n"
        "run: {checkpoint_every: 4, eval_every: 1000, eval_games: 4, final_eval_games: 4, progress_bar: false}\n"
    )
    return config, train_main, plan_path


def test_a_run_with_a_lead_prior_learns_its_weight_and_writes_it_with_the_plan_files_values(tmp_path):
    config, train_main, plan_path = tiny_run(tmp_path, "prior")
    config.write_text(config.read_text().replace("{games}", "8"))
    assert train_main(["--config", str(config), "--runs-dir", str(tmp_path / "runs")]) in (0, None)
    meta, ((_, _, layers, prior),) = read_planN_file(tmp_path / "runs" / "prior" / "model.safetensors")
    assert meta["lead_prior"] is True and meta["games"] == 8
    np.testing.assert_array_equal(prior.points_to_come, read_plan_file(plan_path)[1].astype(np.float32))
    assert prior.weight != 0.75  # learned: two fits moved it from where it started
    assert layers[0][0].shape == (8, num_features(YAHTZEE, True))


def test_a_checkpoint_keeps_the_lead_weight_and_a_resume_takes_it_back(tmp_path):
    from agents.training.config import PlanConfig
    from agents.training.planN_train import ShareNet

    plan_path = write_plan_file(tmp_path / "prior.safetensors", points_table(YAHTZEE, seed=4), YAHTZEE, "net", 10)
    plan = PlanConfig(net_arch=[8], table_sizes=[2], lead_prior=f"plan:{plan_path}", lead_weight=0.5)
    trained = ShareNet(YAHTZEE, plan, seed=1)
    with torch.no_grad():
        trained.lead_weight.fill_(3.25)
    resumed = ShareNet(YAHTZEE, plan, seed=2)
    assert float(resumed.lead_weight.detach()) == 0.5
    resumed.restore(trained.tensors())
    assert float(resumed.lead_weight.detach()) == 3.25 and resumed.prior().weight == 3.25
    tables = some_tables(YAHTZEE, 2, seed=5)
    np.testing.assert_allclose(resumed.value()(tables), trained.value()(tables), rtol=1e-6)
    with pytest.raises(ValueError, match=r"lead_weight has shape \(2,\)"):
        resumed.restore({**trained.tensors(), "lead_weight": torch.zeros(2)})


def test_a_lead_prior_of_other_rules_is_refused_in_one_line(tmp_path):
    from train import main as train_main

    plan_path = write_plan_file(tmp_path / "yacht.safetensors", points_table(YACHT), YACHT, "tabular", 1)
    config = tmp_path / "c.yaml"
    config.write_text(
        f"algorithm: planN\nenv: {{rules: yahtzee, num_players: 2, opponents: [optimal]}}\n"
        f"plan: {{total_games: 4, games_per_iteration: 4, lead_prior: 'plan:{plan_path}'}}\n"
        "run: {progress_bar: false}\n"
    )
    with pytest.raises(SystemExit, match="trained on the 'yacht' rules"):
        train_main(["--config", str(config), "--runs-dir", str(tmp_path / "runs")])


def test_a_shipped_file_with_a_lead_prior_is_the_one_the_coach_and_the_table_read(tmp_path, monkeypatch):
    import agents.learned.planN_files
    from agents.learned import planN
    from agents.registry import make_table_policy

    monkeypatch.setattr(agents.learned.planN_files, "SHIPPED_PLANN", tmp_path)
    monkeypatch.setattr(planN, "_shipped", {})
    monkeypatch.setattr(planN, "_planners", {})
    points, layers = points_table(YAHTZEE, seed=6), prior_layers(YAHTZEE, seed=6)
    write_planN_file(tmp_path / "yahtzee.safetensors", layers, YAHTZEE, [2, 3], 3, LeadPrior(points, 0.8))
    planner = planN.shipped_planner(YAHTZEE, 3)
    assert planner is not None and planner.value.prior.weight == pytest.approx(0.8)
    tables = some_tables(YAHTZEE, 3, seed=7)
    expected = ShareValue(YAHTZEE, layers, (2, 3), LeadPrior(points.astype(np.float32), 0.8))(tables)
    np.testing.assert_allclose(planner.value(tables), expected, rtol=1e-6)
    policy = make_table_policy("planN:yahtzee", 2, rules=YAHTZEE)
    assert policy.name == "planN:yahtzee"
