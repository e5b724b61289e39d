"""planN files of several networks (format version 3): each table size played by the network that learned it,
written and read back as written, and every way a stranger's file can be off refused in one line."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from agents.learned.model_files import ModelLoadError
from agents.learned.planN import PlanNPolicy, ShareValue, load_value, shipped_planner
from agents.learned.planN_files import (
    LeadPrior,
    PlanNNetwork,
    network_for,
    num_features,
    read_planN_file,
    write_planN_file,
    write_planN_networks,
)
from tests.agents.test_planN import assert_refused_in_one_line, file_by_hand, header, random_layers
from tests.agents.test_planN_prior import points_table, prior_layers, some_tables
from yacht_env.rules import YACHT, rule_set

YAHTZEE = rule_set("yahtzee")


def two_networks(rules=YAHTZEE, prior=True) -> list[PlanNNetwork]:
    """A network for tables of two and one for three to five, different weights, with or without a lead prior."""
    if not prior:
        return [PlanNNetwork((2,), 30, random_layers(rules, seed=1)), PlanNNetwork((3, 4, 5), 12, random_layers(rules, seed=2))]
    points = points_table(rules)
    return [
        PlanNNetwork((2,), 30, prior_layers(rules, seed=1), LeadPrior(points, 0.5)),
        PlanNNetwork((3, 4, 5), 12, prior_layers(rules, seed=2), LeadPrior(points, 1.5)),
    ]


@pytest.mark.parametrize("prior", [True, False])
def test_each_table_size_is_played_by_the_network_that_learned_it(tmp_path, prior):
    networks = two_networks(prior=prior)
    path = write_planN_networks(tmp_path / "two.safetensors", networks, YAHTZEE)
    meta, read = read_planN_file(path)
    assert meta["format_version"] == 3 and meta["table_sizes"] == [2, 3, 4, 5] and meta["games"] == 42
    assert meta["networks"] == [{"table_sizes": [2], "games": 30}, {"table_sizes": [3, 4, 5], "games": 12}]
    assert meta["lead_prior"] is prior and meta["features"] == num_features(YAHTZEE, prior)
    for written, got in zip(networks, read, strict=True):
        assert got.table_sizes == written.table_sizes and got.games == written.games
        for (w, b), (w2, b2) in zip(written.layers, got.layers, strict=True):
            np.testing.assert_array_equal(np.float32(w), w2)
            np.testing.assert_array_equal(np.float32(b), b2)
        assert (got.prior is None) is (not prior)
        if prior:
            assert got.prior.weight == written.prior.weight
            np.testing.assert_array_equal(got.prior.points_to_come, np.float32(written.prior.points_to_come))
    for n in (2, 3, 4, 5):
        written = network_for(networks, n)
        prior_of = written.prior and LeadPrior(np.float32(written.prior.points_to_come), written.prior.weight)
        expected = ShareValue(YAHTZEE, written.layers, written.table_sizes, prior_of)
        tables = some_tables(YAHTZEE, n, seed=n)
        np.testing.assert_allclose(load_value(path, n)(tables), expected(tables), rtol=1e-6)
        policy = PlanNPolicy.load(str(path), YAHTZEE, n)
        np.testing.assert_allclose(policy.planner.value(tables), expected(tables), rtol=1e-6)
    # the two networks differ, so the check above tells them apart
    first, second = (ShareValue(YAHTZEE, n.layers, n.table_sizes, n.prior) for n in networks)
    tables = some_tables(YAHTZEE, 3, seed=9)
    assert not np.allclose(first(tables), second(tables))


def test_network_for_finds_the_one_network_of_a_size_or_none():
    networks = two_networks(prior=False)
    assert network_for(networks, 2) is networks[0]
    assert [network_for(networks, n) is networks[1] for n in (3, 4, 5)] == [True] * 3
    assert network_for(networks[:1], 3) is None and network_for([], 2) is None


def test_a_size_no_network_learned_is_refused_in_one_line(tmp_path):
    path = write_planN_networks(tmp_path / "one.safetensors", two_networks()[1:], YAHTZEE)
    for load in (lambda: load_value(path, 2), lambda: PlanNPolicy.load(str(path), YAHTZEE, 2)):
        with pytest.raises(ModelLoadError, match="learned at tables of 3, 4, 5 players; this table has 2$"):
            load()


def test_the_shipped_planner_of_each_size_is_its_own_networks(tmp_path, monkeypatch):
    import agents.learned.planN_files

    monkeypatch.setattr(agents.learned.planN_files, "SHIPPED_PLANN", tmp_path)
    networks = two_networks()
    write_planN_networks(tmp_path / "yahtzee.safetensors", networks, YAHTZEE)
    two, three, four = (shipped_planner(YAHTZEE, n) for n in (2, 3, 4))
    assert two is not three and three is four and shipped_planner(YAHTZEE, 2) is two
    tables = some_tables(YAHTZEE, 2, seed=4)
    expected = ShareValue(YAHTZEE, networks[0].layers, (2,), LeadPrior(np.float32(networks[0].prior.points_to_come), 0.5))
    np.testing.assert_allclose(two.value(tables), expected(tables), rtol=1e-6)
    assert three.value.table_sizes == (3, 4, 5)


def test_a_one_network_file_is_version_3_with_its_network_listed(tmp_path):
    path = write_planN_file(tmp_path / "w.safetensors", random_layers(YACHT), YACHT, [3, 2], 7)
    meta, (network,) = read_planN_file(path)
    assert meta["format_version"] == 3 and meta["networks"] == [{"table_sizes": [2, 3], "games": 7}]
    assert network.table_sizes == (2, 3) and network.games == 7


@pytest.mark.parametrize(
    "networks, message",
    [
        ([], "one network or more"),
        (
            [PlanNNetwork((2, 3), 1, random_layers(YAHTZEE)), PlanNNetwork((3, 4), 1, random_layers(YAHTZEE))],
            r"no table size in two of them; got table sizes \[\[2, 3\], \[3, 4\]\]",
        ),
        ([two_networks()[0], two_networks(prior=False)[1]], "either all have a lead prior or none"),
        (
            [two_networks()[0], two_networks()[1]._replace(prior=LeadPrior(points_table(YAHTZEE, seed=5), 1.0))],
            "share one lead prior's points to come",
        ),
    ],
)
def test_networks_that_do_not_fit_in_one_file_are_refused_unwritten(tmp_path, networks, message):
    with pytest.raises(ValueError, match=message):
        write_planN_networks(tmp_path / "bad.safetensors", networks, YAHTZEE)
    assert not (tmp_path / "bad.safetensors").exists()


def v3_header(**changes) -> dict:
    """A version 3 header of two Yacht networks without a prior: one for tables of two, one for three to five."""
    networks = [{"table_sizes": [2], "games": 4}, {"table_sizes": [3, 4, 5], "games": 5}]
    return header(**{"format_version": 3, "games": 9, "lead_prior": False, "networks": networks, **changes})


def v3_tensors(count=2, prior=False, drop=(), extra=None) -> dict:
    out = {}
    for k in range(count):
        layers = prior_layers(YACHT, seed=k) if prior else random_layers(YACHT, seed=k)
        for i, (w, b) in enumerate(layers):
            out[f"networks.{k}.layers.{i}.weight"] = torch.tensor(np.asarray(w), dtype=torch.float32)
            out[f"networks.{k}.layers.{i}.bias"] = torch.tensor(np.asarray(b), dtype=torch.float32)
        if prior:
            out[f"networks.{k}.lead_weight"] = torch.tensor([1.0], dtype=torch.float32)
    if prior:
        out["points_to_come"] = torch.tensor(points_table(YACHT), dtype=torch.float32)
    out.update(extra or {})
    return {name: tensor for name, tensor in out.items() if name not in drop}


PRIOR_HEADER = {"lead_prior": True, "features": num_features(YACHT, True)}


@pytest.mark.parametrize(
    "tensors, metadata, message",
    [
        (v3_tensors(), v3_header(networks="all"), "networks must be a list of 1 to 4 objects, got all"),
        (v3_tensors(), v3_header(networks=[]), "networks must be a list of 1 to 4 objects"),
        (v3_tensors(), v3_header(networks=[{"table_sizes": [n], "games": 1} for n in (2, 3, 4, 5, 5)]), "list of 1 to 4"),
        (v3_tensors(), v3_header(networks=[[2], [3, 4, 5]]), r"networks\[0\] must be an object of table_sizes, games"),
        (
            v3_tensors(),
            v3_header(networks=[{"games": 4}, {"table_sizes": [3, 4, 5], "games": 5}]),
            r"networks\[0\] must be an object of table_sizes, games, got \{'games': 4\}$",
        ),
        (
            v3_tensors(),
            v3_header(networks=[{"table_sizes": [2], "games": 4, "note": "x" * 200}, {"table_sizes": [3, 4, 5], "games": 5}]),
            "got " + re.escape(str({"table_sizes": [2], "games": 4, "note": "x" * 200})[:80]) + "$",
        ),
        (
            v3_tensors(),
            v3_header(table_sizes=[2, 3, 4]),
            r"the networks' table sizes \[\[2\], \[3, 4, 5\]\] must split table_sizes \[2, 3, 4\]",
        ),
        (
            v3_tensors(),
            v3_header(networks=[{"table_sizes": [2] * 100, "games": 4}, {"table_sizes": [3, 4, 5], "games": 5}]),
            re.escape(str([2] * 100)[:80]) + "$",
        ),
        (
            v3_tensors(),
            v3_header(networks=[{"table_sizes": [2], "games": 4, "x": 1}, {"table_sizes": [3, 4, 5], "games": 5}]),
            r"networks\[0\] must be an object",
        ),
        (
            v3_tensors(),
            v3_header(networks=[{"table_sizes": [2], "games": 4}, {"table_sizes": [5, 3], "games": 5}]),
            r"networks\[1\]: table_sizes must be increasing",
        ),
        (
            v3_tensors(),
            v3_header(networks=[{"table_sizes": [2], "games": -1}, {"table_sizes": [3, 4, 5], "games": 10}]),
            r"networks\[0\]: games must be an integer >= 0",
        ),
        (
            v3_tensors(),
            v3_header(networks=[{"table_sizes": [2, 3], "games": 4}, {"table_sizes": [3, 4, 5], "games": 5}]),
            r"must split table_sizes \[2, 3, 4, 5\], each size in one network",
        ),
        (
            v3_tensors(),
            v3_header(networks=[{"table_sizes": [2], "games": 4}, {"table_sizes": [3, 4], "games": 5}]),
            "must split table_sizes",
        ),
        (v3_tensors(), v3_header(games=10), r"the networks' games must add up to games \(10\)"),
        (v3_tensors(), {k: v for k, v in v3_header().items() if k != "networks"}, "lacks networks"),
        (v3_tensors(count=1), v3_header(), "networks.1: expected tensors layers"),
        (v3_tensors(drop=("networks.0.layers.1.bias",)), v3_header(), "networks.0: expected tensors layers"),
        (v3_tensors(count=3), v3_header(), r"unexpected tensor\(s\) \['networks.2.layers.0.bias'"),
        (
            v3_tensors(extra={"layers.0.weight": torch.zeros((5, num_features(YACHT)))}),
            v3_header(),
            r"unexpected tensor\(s\) \['layers.0.weight'\]",
        ),
        (
            v3_tensors(extra={"networks.0.layers.1.weight": torch.full((5, 16), float("nan"))}),
            v3_header(),
            "networks.0: tensor layers.1.weight holds NaN",
        ),
        (
            v3_tensors(prior=True, drop=("networks.1.lead_weight",)),
            v3_header(**PRIOR_HEADER),
            "must hold tensor networks.1.lead_weight",
        ),
        (v3_tensors(prior=True, drop=("points_to_come",)), v3_header(**PRIOR_HEADER), "must hold tensor points_to_come"),
        (
            v3_tensors(prior=True, extra={"networks.0.lead_weight": torch.tensor(1.0)}),
            v3_header(**PRIOR_HEADER),
            r"tensor networks.0.lead_weight has shape \(\), expected \(1,\)",
        ),
        (
            v3_tensors(prior=True, extra={"networks.0.lead_weight": torch.tensor([1.0, 2.0])}),
            v3_header(**PRIOR_HEADER),
            r"tensor networks.0.lead_weight has shape \(2,\), expected \(1,\)",
        ),
        (
            v3_tensors(prior=True, extra={"networks.1.lead_weight": torch.tensor([1.0], dtype=torch.float64)}),
            v3_header(**PRIOR_HEADER),
            "tensor networks.1.lead_weight has dtype torch.float64, expected float32",
        ),
        (
            v3_tensors(prior=True, extra={"networks.1.lead_weight": torch.tensor([float("inf")])}),
            v3_header(**PRIOR_HEADER),
            "tensor networks.1.lead_weight must be finite and at most 10000 in magnitude, got inf",
        ),
        (
            v3_tensors(prior=True, extra={"points_to_come": torch.zeros(3)}),
            v3_header(**PRIOR_HEADER),
            r"tensor points_to_come has shape \(3,\), the yacht rules need",
        ),
        (
            v3_tensors(prior=True, extra={"points_to_come": torch.tensor(points_table(YACHT), dtype=torch.float64)}),
            v3_header(**PRIOR_HEADER),
            "tensor points_to_come has dtype torch.float64, expected float32",
        ),
        (v3_tensors(), v3_header(format_version=4), "format_version 4 is newer than this version reads"),
    ],
)
def test_bad_files_of_several_networks_are_refused_in_one_line(tmp_path, tensors, metadata, message):
    assert_refused_in_one_line(file_by_hand(tmp_path / "bad.safetensors", tensors, metadata), message)


def test_a_good_version_3_file_made_by_hand_reads(tmp_path):
    path = file_by_hand(tmp_path / "good.safetensors", v3_tensors(prior=True), v3_header(**PRIOR_HEADER))
    meta, networks = read_planN_file(path)
    assert [network.table_sizes for network in networks] == [(2,), (3, 4, 5)] and [n.games for n in networks] == [4, 5]
    assert all(network.prior.weight == 1.0 for network in networks)


def test_a_lead_weight_at_the_bound_reads_and_one_past_it_is_refused(tmp_path):
    at_bound = {"networks.1.lead_weight": torch.tensor([-1e4])}
    path = file_by_hand(tmp_path / "edge.safetensors", v3_tensors(prior=True, extra=at_bound), v3_header(**PRIOR_HEADER))
    assert read_planN_file(path)[1][1].prior.weight == -1e4
    past = {"networks.1.lead_weight": torch.tensor([np.nextafter(np.float32(1e4), np.float32(np.inf))])}
    path = file_by_hand(tmp_path / "edge.safetensors", v3_tensors(prior=True, extra=past), v3_header(**PRIOR_HEADER))
    assert_refused_in_one_line(path, "at most 10000 in magnitude")


def test_the_shipped_files_play_tables_of_two_to_five_and_yacht_s_tables_of_two_have_a_network_of_their_own():
    from agents.learned.planN_files import SHIPPED_PLANN

    sizes = {}
    for rules in ("yacht", "yahtzee", "yatzy"):
        meta, networks = read_planN_file(SHIPPED_PLANN / f"{rules}.safetensors")
        assert meta["rules"] == rules and meta["table_sizes"] == [2, 3, 4, 5] and meta["lead_prior"] is True
        sizes[rules] = [network.table_sizes for network in networks]
    assert sizes == {"yacht": [(2,), (3, 4, 5)], "yahtzee": [(2, 3, 4, 5)], "yatzy": [(2, 3, 4, 5)]}
