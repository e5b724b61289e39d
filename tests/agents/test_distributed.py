"""Evaluations on Ray: the same figures as the local run, to the last bit; a clear line without Ray."""

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from agents.evaluate import evaluate
from agents.evaluate import main as evaluate_main
from agents.evaluation.tournament import tournament
from agents.registry import make_policy

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"ppo:{ROOT / 'models' / 'ppo.safetensors'}"


def test_evaluation_on_ray_equals_the_local_run(ray_cluster):
    # batch 50: 400 games are 8 batches per policy, so the Ray run cuts them into several slices
    names = ["random", "greedy"]
    local, local_logs = evaluate(names, games=400, seed=321, batch_size=50)
    remote, remote_logs = evaluate(names, games=400, seed=321, batch_size=50, on_ray=True)
    assert [asdict(s) for s in remote] == [asdict(s) for s in local]
    for name in [*names, "optimal"]:
        for field in ("scores", "regret", "decisions"):
            np.testing.assert_array_equal(getattr(remote_logs[name], field), getattr(local_logs[name], field))
    assert local[0].mean < local[1].mean  # random < greedy: real play


def test_on_ray_the_policies_are_built_and_played_in_the_workers(ray_cluster, monkeypatch):
    """This process builds each named policy once, to refuse a bad name before any task; the games are Ray's."""
    import agents.evaluate

    built = []

    def counted(name, **kwargs):
        built.append(name)
        return make_policy(name, **kwargs)

    monkeypatch.setattr(agents.evaluate, "make_policy", counted)
    evaluate(["random", "greedy"], games=200, seed=4, batch_size=50, on_ray=True)
    assert built == ["random", "greedy"]
    evaluate(["random", "greedy"], games=200, seed=4, batch_size=50)  # the local run builds them here, optimal too
    assert built[2:] == ["random", "greedy", "optimal"]


def test_on_ray_the_games_are_cut_into_about_four_tasks_per_cpu_of_whole_batches(ray_cluster, monkeypatch):
    import agents.evaluate
    from agents.evaluation.distributed import cluster_cpus, run_tasks

    sent = []

    def recorded(function, arguments, on_ray=False, progress=None):
        sent.extend(arguments)
        return run_tasks(function, arguments, on_ray, progress)

    monkeypatch.setattr(agents.evaluate, "run_tasks", recorded)
    evaluate(["random", "greedy"], games=400, seed=4, batch_size=50, on_ray=True)
    assert cluster_cpus() == 2
    # 3 policies (optimal too) of 8 batches: 24 batches for 8 tasks, 3 batches (150 games) a task
    assert [(policy, games, seed) for policy, games, seed, _, _ in sent] == [
        (policy, games, seed) for policy in ("random", "greedy", "optimal") for games, seed in ((150, 4), (150, 154), (100, 304))
    ]


@pytest.mark.slow
def test_a_trained_model_on_ray_equals_the_local_run(ray_cluster):
    # the workers load the model and run torch on one thread each: the actions must still be the same
    local, local_logs = evaluate([MODEL], games=500, seed=77, batch_size=64)
    remote, remote_logs = evaluate([MODEL], games=500, seed=77, batch_size=64, on_ray=True)
    assert [asdict(s) for s in remote] == [asdict(s) for s in local]
    np.testing.assert_array_equal(remote_logs[MODEL].scores, local_logs[MODEL].scores)
    assert local[0].percent_of_optimal > 95


def test_tournament_on_ray_equals_the_local_run(ray_cluster):
    names = ["random", "greedy", "optimal"]
    local, local_log = tournament(names, games=600, seed=9, batch_size=48)
    remote, remote_log = tournament(names, games=600, seed=9, batch_size=48, on_ray=True)
    assert asdict(remote) == asdict(local)
    np.testing.assert_array_equal(remote_log.totals, local_log.totals)


def test_a_rule_set_with_bonuses_on_ray_equals_the_local_run(ray_cluster):
    # the workers rebuild the policies and the DP for the named rules; regret reads each game's sheet state
    rules = "yahtzee_forced_joker"
    local, local_logs = evaluate(["greedy"], games=600, seed=12, rules=rules, batch_size=128)
    remote, remote_logs = evaluate(["greedy"], games=600, seed=12, rules=rules, batch_size=128, on_ray=True)
    assert [asdict(s) for s in remote] == [asdict(s) for s in local]
    for name in ("greedy", "optimal"):
        np.testing.assert_array_equal(remote_logs[name].regret, local_logs[name].regret)
    assert local[0].regret_per_decision > 0
    local_table, local_log = tournament(["optimal", "greedy"], games=200, seed=5, rules=rules, batch_size=32)
    remote_table, remote_log = tournament(["optimal", "greedy"], games=200, seed=5, rules=rules, batch_size=32, on_ray=True)
    assert asdict(remote_table) == asdict(local_table) and remote_table.rules == rules
    np.testing.assert_array_equal(remote_log.totals, local_log.totals)


@pytest.mark.slow
def test_command_line_on_a_cluster_prints_and_writes_what_the_local_run_does(ray_cluster, tmp_path):
    common = ["-m", "agents.evaluate", "--games", "600", "--seed", "4", "--batch-size", "64", "--no-progress"]
    outputs = {}
    for where, extra in (("local", []), ("ray", ["--ray-address", ray_cluster])):
        for mode in (["--policy", "random", "--policy", "greedy"], ["--table", "greedy,random"]):
            path = tmp_path / f"{where}-{mode[0]}.json"
            result = subprocess.run(
                [sys.executable, *common, *mode, "--json", str(path), *extra],
                capture_output=True,
                text=True,
                cwd=ROOT,
                check=True,
            )
            outputs[where, mode[0]] = (result.stdout, json.loads(path.read_text()))
    for mode in ("--policy", "--table"):
        assert outputs["ray", mode] == outputs["local", mode]
    assert "greedy" in outputs["local", "--policy"][0]


def test_a_ray_flag_without_ray_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(SystemExit) as exit_info:
        evaluate_main(["--ray", "--games", "10", "--no-progress"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "Ray" in error and '.[distributed]"' in error


def test_ray_arguments_are_checked(capsys):
    with pytest.raises(SystemExit):
        evaluate_main(["--ray-cpus", "2", "--games", "10"])
    assert "--ray-cpus goes with --ray" in capsys.readouterr().err


@pytest.mark.parametrize("cpus", ["0", "-3"])
def test_ray_cpus_below_one_are_refused_before_ray_is_asked(monkeypatch, capsys, cpus):
    monkeypatch.setitem(sys.modules, "ray", None)  # were Ray asked, the error would name the extra instead
    with pytest.raises(SystemExit) as exit_info:
        evaluate_main(["--ray", "--ray-cpus", cpus, "--games", "10", "--no-progress"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().endswith(f"error: argument --ray-cpus: expected an integer 1 or more, got {cpus}")
    with pytest.raises(SystemExit):  # one CPU is enough: what stops it is Ray missing
        evaluate_main(["--ray", "--ray-cpus", "1", "--games", "10", "--no-progress"])
    assert '.[distributed]"' in capsys.readouterr().err


def test_a_bad_cluster_address_is_one_line():
    pytest.importorskip("ray")
    result = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", "--ray-address", "nowhere:port", "--games", "10", "--no-progress"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "error: could not join the Ray cluster at 'nowhere:port'" in result.stderr
