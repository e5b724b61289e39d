"""Joining planN files: each table size goes to the network of the first file that learned it, and files that do
not fit together are refused in one line, nothing written."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from agents.learned.join_planN import joined_networks, main
from agents.learned.model_files import ModelLoadError
from agents.learned.planN_files import LeadPrior, read_planN_file, write_planN_file, write_planN_networks
from tests.agents.test_planN import random_layers
from tests.agents.test_planN_prior import points_table, prior_layers
from yacht_env.rules import YACHT, rule_set

YAHTZEE = rule_set("yahtzee")


def planN_file(folder, name, sizes, games, seed=0, rules=YAHTZEE, prior_seed=0, weight=1.0):
    """A small planN file of one network with a lead prior (``prior_seed`` None: none)."""
    if prior_seed is None:
        return write_planN_file(folder / name, random_layers(rules, seed=seed), rules, sizes, games)
    prior = LeadPrior(points_table(rules, seed=prior_seed), weight)
    return write_planN_file(folder / name, prior_layers(rules, seed=seed), rules, sizes, games, prior)


def same_layers(a, b) -> bool:
    return all(np.array_equal(w, w2) and np.array_equal(b1, b2) for (w, b1), (w2, b2) in zip(a, b, strict=True))


def test_the_first_file_takes_each_table_size_and_the_next_keeps_the_rest(tmp_path, capsys):
    two = planN_file(tmp_path, "two.safetensors", [2], 300, seed=1, weight=0.5)
    every = planN_file(tmp_path, "every.safetensors", [2, 3, 4, 5], 100, seed=2, weight=1.5)
    out = tmp_path / "joined.safetensors"
    assert main([str(out), str(two), str(every)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "tables of 2: a network of 300 games",
        "tables of 3, 4, 5: a network of 100 games",
        f"wrote {out}",
    ]
    meta, networks = read_planN_file(out)
    assert meta["networks"] == [{"table_sizes": [2], "games": 300}, {"table_sizes": [3, 4, 5], "games": 100}]
    assert meta["games"] == 400 and meta["rules"] == "yahtzee" and meta["lead_prior"] is True
    (_, first), (_, second) = read_planN_file(two), read_planN_file(every)
    assert same_layers(networks[0].layers, first[0].layers) and networks[0].prior.weight == 0.5
    assert same_layers(networks[1].layers, second[0].layers) and networks[1].prior.weight == 1.5


def test_the_order_of_the_files_decides_which_network_plays_a_size(tmp_path):
    two = planN_file(tmp_path, "two.safetensors", [2, 3], 5, seed=1, prior_seed=None)
    every = planN_file(tmp_path, "every.safetensors", [3, 4], 7, seed=2, prior_seed=None)
    rules, networks = joined_networks([every, two])
    assert rules == "yahtzee" and [n.table_sizes for n in networks] == [(3, 4), (2,)] and [n.games for n in networks] == [7, 5]
    rules, networks = joined_networks([two, every])
    assert [n.table_sizes for n in networks] == [(2, 3), (4,)]


def test_a_joined_file_joins_again_network_by_network(tmp_path):
    a = planN_file(tmp_path, "a.safetensors", [2], 1, seed=1)
    b = planN_file(tmp_path, "b.safetensors", [3], 2, seed=2)
    c = planN_file(tmp_path, "c.safetensors", [4, 5], 3, seed=3)
    ab = tmp_path / "ab.safetensors"
    write_planN_networks(ab, joined_networks([a, b])[1], YAHTZEE)
    _, networks = joined_networks([ab, c])
    assert [n.table_sizes for n in networks] == [(2,), (3,), (4, 5)] and [n.games for n in networks] == [1, 2, 3]


def refused(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
    return err


def test_files_that_do_not_fit_together_are_refused_in_one_line_and_nothing_written(tmp_path, capsys):
    out = tmp_path / "out.safetensors"
    yahtzee = planN_file(tmp_path, "y.safetensors", [2], 1)
    yacht = planN_file(tmp_path, "yacht.safetensors", [3], 1, rules=YACHT)
    assert "is of the yacht rules, the first of yahtzee" in refused(capsys, [str(out), str(yahtzee), str(yacht)])
    assert "is of the yahtzee rules, the first of yacht" in refused(capsys, [str(out), str(yacht), str(yahtzee)])
    again = planN_file(tmp_path, "again.safetensors", [2], 1, seed=4)
    err = refused(capsys, [str(out), str(yahtzee), str(again)])
    assert f"planN file {again}: its network for tables of 2 adds no table size that an earlier file has not" in err
    other_points = planN_file(tmp_path, "p.safetensors", [3], 1, prior_seed=7)
    assert "share one lead prior's points to come" in refused(capsys, [str(out), str(yahtzee), str(other_points)])
    no_prior = planN_file(tmp_path, "n.safetensors", [3], 1, prior_seed=None)
    assert "either all have a lead prior or none" in refused(capsys, [str(out), str(yahtzee), str(no_prior)])
    (tmp_path / "junk.safetensors").write_bytes(b"not a file of tensors")
    assert "planN file" in refused(capsys, [str(out), str(yahtzee), str(tmp_path / "junk.safetensors")])
    assert f"no planN file at {str(tmp_path / 'none.safetensors')!r}" in refused(
        capsys, [str(out), str(tmp_path / "none.safetensors")]
    )
    (tmp_path / "folder.safetensors").mkdir()
    assert "is a folder" in refused(capsys, [str(tmp_path / "folder.safetensors"), str(yahtzee)])
    assert not out.exists()


@pytest.mark.parametrize("name", ["out.zip", "out.pt", "out", "out.safetensors.tmp"])
def test_an_output_that_is_not_a_safetensors_file_is_a_usage_error(tmp_path, capsys, name):
    yahtzee = planN_file(tmp_path, "y.safetensors", [2], 1)
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / name), str(yahtzee)])
    assert exit_.value.code == 2
    assert f"the output file must end in .safetensors, got {tmp_path / name}" in capsys.readouterr().err
    assert not (tmp_path / name).exists()


def test_no_file_to_join_is_refused():
    with pytest.raises(ModelLoadError, match="no planN file to join"):
        joined_networks([])


def test_the_command_joins_files_from_the_shell(tmp_path):
    two = planN_file(tmp_path, "two.safetensors", [2], 3, seed=1)
    rest = planN_file(tmp_path, "rest.safetensors", [3, 4, 5], 4, seed=2)
    out = tmp_path / "joined.safetensors"
    done = subprocess.run(
        [sys.executable, "-m", "agents.learned.join_planN", str(out), str(two), str(rest)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"wrote {out}"
    assert [n.table_sizes for n in read_planN_file(out)[1]] == [(2,), (3, 4, 5)]
