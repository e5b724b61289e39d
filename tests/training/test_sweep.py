"""Sweeps: the sweep file is checked before anything runs; trials on Ray Tune are train.py runs; a killed sweep resumes."""

import csv
import io
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st
from PIL import Image

from agents.training.config import ConfigError
from agents.training.sweep import METRIC, load_sweep, run_trial, trial_name

ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "ppo.total_timesteps=1024", "ppo.n_steps=64", "ppo.batch_size=128", "ppo.n_epochs=1", "ppo.net_arch=[32,32]",
    "env.num_envs=4", "run.checkpoint_every=256", "run.eval_every=512", "run.eval_games=20",
    "run.final_eval_games=20", "run.progress_bar=false",
]  # fmt: skip
CURVE_FIGURES = ["steps", "mean_score", "percent_of_optimal", "regret_per_decision"]  # all but the wall time


def write_sweep(folder: Path, **fields) -> Path:
    sweep = {
        "name": "tiny",
        "base": str(ROOT / "configs" / "quick.yaml"),
        "space": {"ppo.learning_rate": {"grid": [0.001, 0.0003]}},
    }
    sweep.update(fields)
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep))
    return path


def run(*args, check=True, **kwargs):
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, **kwargs)
    if check:
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result


def curve(run_dir: Path, columns=CURVE_FIGURES) -> list[list[str]]:
    with (run_dir / "learning_curve.csv").open(newline="") as handle:
        return [[row[column] for column in columns] for row in csv.DictReader(handle)]


# -- the sweep file -------------------------------------------------------------------------------


def test_the_shipped_sweep_is_valid():
    sweep = load_sweep(ROOT / "configs" / "sweep_quick.yaml")
    assert sweep.spec.trial_count() >= 8 and set(sweep.spec.space) == {"ppo.lookahead_temperature", "ppo.learning_rate"}
    assert sweep.base_config.name == "quick" and not sweep.base_config.run.progress_bar
    # every trial's own config, under the trial's folder name, is a valid run config
    params = {"ppo.lookahead_temperature": 0.3, "ppo.learning_rate": 0.000421}
    config = sweep.trial_config(params, trial_name(8, params))
    assert config.name == "t08_lookahead_temperature=0.3_learning_rate=0.000421"
    assert config.ppo.learning_rate == 0.000421 and config.ppo.lookahead_temperature == 0.3


@pytest.mark.parametrize("kind", ["asha", "none"])
def test_a_sweep_schedules_its_trials_as_its_file_says(tmp_path, kind):
    pytest.importorskip("ray", reason="sweeps need Ray: pip install 'yacht-rl[ray]'")
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

    from agents.training.sweep import trial_scheduler

    sweep = load_sweep(write_sweep(tmp_path, overrides=TINY, scheduler={"type": kind, "grace_period": 512}))
    scheduler = trial_scheduler(sweep.spec, sweep.base_config)
    if kind == "none":  # every trial runs to its end
        assert type(scheduler) is FIFOScheduler
    else:  # rungs from the grace period up to the trials' last step
        assert isinstance(scheduler, ASHAScheduler)
        assert "Bracket: Iter 1024.000: None | Iter 512.000: None" in scheduler.debug_string()


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"spaces": {}}, "unknown key 'spaces'"),
        ({"base": "nowhere.yaml"}, "base config 'nowhere.yaml' does not exist"),
        ({"space": {"ppo.learning_rate": {"loguniform": [0.0, 0.1]}}}, "needs low > 0"),
        ({"space": {"ppo.learning_rate": {"uniform": [0.1, 0.01]}}}, "needs low < high"),
        # a range's ends are read as the config reads a number: no boolean, padded text, other digits or infinity
        ({"space": {"ppo.learning_rate": {"uniform": [True, 2]}}}, "finite numbers.*True"),
        ({"space": {"ppo.learning_rate": {"uniform": [" 1 ", "2"]}}}, "finite numbers.*' 1 '"),
        ({"space": {"ppo.learning_rate": {"loguniform": ["١e-4", 0.1]}}}, "finite numbers"),
        ({"space": {"ppo.learning_rate": {"uniform": [1, float("inf")]}}}, "finite numbers"),
        ({"space": {"ppo.learning_rate": {"loguniform": [1e-4, "1e400"]}}}, "finite numbers"),
        ({"space": {"ppo.learning_rate": {"grid": [0.1], "choice": [0.2]}}}, "exactly one of"),
        ({"space": {"ppo.learning_rate": {"grid": []}}}, "grid needs at least one value"),
        ({"space": {"ppo.learning_rate": {"choice": []}}}, "choice needs at least one value"),
        ({"space": {"ppo.learning_rat": {"grid": [0.1]}}}, "unknown key 'ppo.learning_rat'"),
        ({"space": {"ppo.n_steps": {"choice": [64, -1]}}}, "ppo.n_steps.*-1"),
        ({"space": {}}, "space"),
        ({"num_samples": 0}, "num_samples"),
        ({"scheduler": {"type": "hyperband"}}, "scheduler.type"),
        ({"scheduler": {"reduction_factor": 1}}, "reduction_factor"),
        ({"name": "a/b"}, "name"),
        ({"overrides": ["env.num_players=2"]}, "opponent"),
    ],
)
def test_bad_sweep_files_are_one_line_errors(tmp_path, fields, message):
    path = write_sweep(tmp_path, **fields)
    with pytest.raises(ConfigError, match=message) as error:
        load_sweep(path)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    "base, algorithm",
    [("plan_yacht.yaml", "plan"), ("plan2_yacht.yaml", "plan2"), ("planN_yacht.yaml", "planN"), ("benchmark/dqn.yaml", "dqn")],
)
def test_a_sweep_of_another_algorithm_than_ppo_is_refused(tmp_path, base, algorithm):
    # a trial is train.py's PPO loop: sweeping a plan or dqn config would train PPO under its name
    path = write_sweep(tmp_path, base=str(ROOT / "configs" / base))
    with pytest.raises(ConfigError, match=f"algorithm '{algorithm}' cannot be swept: a sweep trains algorithm 'ppo' only"):
        load_sweep(path, allow_large=True)
    result = run("train.py", "--sweep", str(path), "--runs-dir", str(tmp_path / "runs"), check=False)
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and f"algorithm '{algorithm}'" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_each_kind_of_range_draws_as_named(tmp_path):
    pytest.importorskip("ray", reason="sweeps need Ray: pip install 'yacht-rl[ray]'")
    space = {
        "ppo.learning_rate": {"uniform": [0.1, 0.9]},
        "ppo.ent_coef": {"loguniform": [0.1, 0.9]},
        "ppo.gamma": {"choice": [0.9, 0.99]},
    }
    sweep = load_sweep(write_sweep(tmp_path, space=space, max_concurrent_trials=1))
    assert sweep.spec.max_concurrent_trials == 1  # one trial at a time is a limit a sweep may set
    draws = {
        key: dimension.to_tune().sample(size=4000, random_state=np.random.default_rng(7))
        for key, dimension in sweep.spec.space.items()
    }
    assert abs(np.median(draws["ppo.learning_rate"]) - 0.5) < 0.03  # uniform: the middle of the range
    assert abs(np.median(draws["ppo.ent_coef"]) - 0.3) < 0.03  # log-uniform: the geometric middle, sqrt(0.1 * 0.9)
    assert set(draws["ppo.gamma"]) == {0.9, 0.99}


def test_a_sweep_over_the_algorithm_is_refused(tmp_path):
    path = write_sweep(tmp_path, space={"algorithm": {"grid": ["ppo", "dqn"]}})
    with pytest.raises(ConfigError, match="space key 'algorithm' value 'dqn': algorithm 'dqn' cannot be swept"):
        load_sweep(path, allow_large=True)


def test_a_bad_sweep_file_stops_train_py_with_one_line(tmp_path):
    path = write_sweep(tmp_path, space={"ppo.nope": {"grid": [1]}})
    result = run("train.py", "--sweep", str(path), "--runs-dir", str(tmp_path / "runs"), check=False)
    assert result.returncode != 0 and "unknown key 'ppo.nope'" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "runs").exists()


def test_a_sweep_without_ray_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT))
    import train

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--sweep", str(write_sweep(tmp_path)), "--runs-dir", str(tmp_path / "runs")])
    message = str(exit_info.value.code)
    assert message.startswith("error:") and "Ray" in message and '.[distributed]"' in message and "\n" not in message
    assert not (tmp_path / "runs").exists()


def test_trial_names_say_number_and_values():
    assert (
        trial_name(3, {"ppo.lookahead_temperature": 0.3, "ppo.learning_rate": 0.000421})
        == "t03_lookahead_temperature=0.3_learning_rate=0.000421"
    )
    assert trial_name(0, {"ppo.net_arch": [64, 64]}) == "t00_net_arch=-64--64-"


# -- sweeps on a local Ray with two CPUs -----------------------------------------------------------


def test_a_one_trial_sweep_makes_an_ordinary_run_folder(tmp_path, ray_cluster):
    """The short sweep that CI runs: one trial on the local Ray, from the sweep file to the ranking."""
    path = write_sweep(tmp_path, overrides=TINY, scheduler={"type": "none"}, space={"ppo.lookahead_temperature": {"grid": [0.3]}})
    result = run("train.py", "--sweep", str(path), "--runs-dir", str(tmp_path / "runs"), "--ray-address", ray_cluster)
    trial_dir = tmp_path / "runs" / "tiny" / "t00_lookahead_temperature=0.3"
    for artefact in ("config.yaml", "learning_curve.csv", "model.zip", "model.safetensors", "eval.json"):
        assert (trial_dir / artefact).exists(), f"the trial has no {artefact}: {result.stdout[-1500:]}"
    assert yaml.safe_load((trial_dir / "config.yaml").read_text())["ppo"]["lookahead_temperature"] == 0.3
    assert len(curve(trial_dir)) == 2
    with (tmp_path / "runs" / "tiny" / "trials.csv").open(newline="") as handle:
        assert [(row["trial"], row["status"]) for row in csv.DictReader(handle)] == [(trial_dir.name, "finished")]


@pytest.mark.slow
def test_two_trial_sweep_gives_the_learning_curves_of_train_py(tmp_path, ray_cluster):
    # ASHA with its one rung at the last step: a trial there must still finish its run folder
    path = write_sweep(tmp_path, overrides=TINY, scheduler={"type": "asha", "grace_period": 1024})
    result = run("train.py", "--sweep", str(path), "--runs-dir", str(tmp_path / "runs"), "--ray-address", ray_cluster)
    sweep_dir = tmp_path / "runs" / "tiny"
    trials = {"t00_learning_rate=0.001": 0.001, "t01_learning_rate=0.0003": 0.0003}
    for trial, learning_rate in trials.items():
        trial_dir = sweep_dir / trial
        for artefact in ("config.yaml", "learning_curve.csv", "model.zip", "eval.json"):
            assert (trial_dir / artefact).exists(), f"{trial} has no {artefact}"
        assert list((trial_dir / "tb").rglob("events.out.tfevents.*"))
        run(
            "train.py",
            "--config",
            "configs/quick.yaml",
            "--runs-dir",
            str(tmp_path / "direct"),
            f"name={trial}",
            f"ppo.learning_rate={learning_rate}",
            *TINY,
        )
        direct = curve(tmp_path / "direct" / trial)
        assert len(direct) == 2 and curve(trial_dir) == direct
    with (sweep_dir / "trials.csv").open(newline="") as handle:
        ranking = list(csv.DictReader(handle))
    assert [row["trial"] for row in ranking] == sorted(trials, key=lambda t: -max(float(r[2]) for r in curve(sweep_dir / t)))
    assert all(row["status"] == "finished" for row in ranking)
    assert "ranked by the best % of the optimum" in result.stdout and (sweep_dir / "trials.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_a_killed_sweep_resumes_where_it_stopped(tmp_path, ray_cluster):
    # three trials one at a time, each long enough to be killed in the middle of
    longer = [*TINY, "ppo.total_timesteps=6144", "run.checkpoint_every=1024", "run.eval_every=1024"]
    path = write_sweep(
        tmp_path,
        overrides=longer,
        scheduler={"type": "none"},
        max_concurrent_trials=1,
        space={"ppo.learning_rate": {"grid": [0.001, 0.0005, 0.0003]}},
    )
    sweep_dir = tmp_path / "runs" / "tiny"
    first, second = sweep_dir / "t00_learning_rate=0.001", sweep_dir / "t01_learning_rate=0.0005"
    command = [
        sys.executable,
        "train.py",
        "--sweep",
        str(path),
        "--runs-dir",
        str(tmp_path / "runs"),
        "--ray-address",
        ray_cluster,
    ]
    driver = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while not (second / "learning_curve.csv").exists() and time.time() < deadline:  # checkpoint, then evaluation
        time.sleep(0.2)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    assert (first / "eval.json").exists() and not (second / "eval.json").exists(), "the kill did not land in the second trial"
    time.sleep(3)  # the cluster ends the dead driver's trial
    finished_model = (first / "model.zip").read_bytes()
    done = max(int(p.stem.split("_")[1]) for p in (second / "checkpoints").glob("step_*.zip"))
    kept = [row for row in curve(second, ["steps", "wall_seconds", "percent_of_optimal"]) if int(row[0]) <= done]

    result = run(*command[1:])
    assert "resuming sweep tiny" in result.stdout
    assert (first / "model.zip").read_bytes() == finished_model  # the finished trial was not trained again
    resumed = curve(second, ["steps", "wall_seconds", "percent_of_optimal"])
    assert resumed[: len(kept)] == kept  # continued from its checkpoint: the rows before it are untouched
    steps = [int(row[0]) for row in resumed]
    assert steps == sorted(set(steps)) and steps[-1] == 6144
    with (sweep_dir / "trials.csv").open(newline="") as handle:
        assert [row["status"] for row in csv.DictReader(handle)] == ["finished"] * 3

    # Tune's state lost as well: the finished trial folders are recognised and not trained again
    models = {trial.name: (trial / "model.zip").read_bytes() for trial in sweep_dir.glob("t0*")}
    shutil.rmtree(sweep_dir / "tune")
    result = run(*command[1:])
    assert "resuming sweep" not in result.stdout
    assert {trial.name: (trial / "model.zip").read_bytes() for trial in sweep_dir.glob("t0*")} == models
    with (sweep_dir / "trials.csv").open(newline="") as handle:
        assert [row["status"] for row in csv.DictReader(handle)] == ["finished"] * 3


def test_ray_flags_go_with_sweep(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    import train

    with pytest.raises(SystemExit, match="--ray-address and --ray-cpus go with --sweep"):
        train.main(["--config", "configs/quick.yaml", "--ray-cpus", "2"])


def test_the_command_line_refuses_fewer_than_one_ray_cpu_in_its_options_words(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT))
    import train

    with pytest.raises(SystemExit) as stopped:
        train.main(["--sweep", "configs/sweep_quick.yaml", "--ray-cpus", "0"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().endswith("error: argument --ray-cpus: expected an integer 1 or more, got 0")


def test_a_range_given_in_exponent_text_reads_as_its_numbers(tmp_path):
    # YAML 1.1 reads 2e-4 (no point) as a string: the range takes it as the config takes any number in text
    path = write_sweep(tmp_path, space={"ppo.learning_rate": {"loguniform": ["2e-4", "+3E-3"]}})
    assert load_sweep(path).spec.space["ppo.learning_rate"].loguniform == (0.0002, 0.003)


@pytest.mark.parametrize(
    "scheduler, grace, refused",
    [("asha", 1024, False), ("asha", 1025, True), ("none", 4096, False)],
    ids=["asha-rung-at-the-last-step", "asha-past-the-last-step", "no-scheduler-any-grace"],
)
def test_a_grace_period_is_refused_only_where_asha_could_never_stop_a_trial(tmp_path, scheduler, grace, refused):
    path = write_sweep(tmp_path, overrides=TINY, scheduler={"type": scheduler, "grace_period": grace})
    if not refused:
        assert load_sweep(path).spec.scheduler.grace_period == grace
        return
    with pytest.raises(ConfigError, match=r"scheduler.grace_period 1,025 is past ppo.total_timesteps 1,024 of the base"):
        load_sweep(path)


def test_one_ray_cpu_is_enough_for_a_sweep(tmp_path, monkeypatch):
    pytest.importorskip("ray", reason="sweeps need Ray: pip install 'yacht-rl[ray]'")
    from agents.evaluation import distributed
    from agents.training.sweep import main_sweep

    asked = []

    def connect(address, cpus):  # where the sweep would start Ray: this test stops it there
        asked.append(cpus)
        raise ValueError("no Ray started by this test")

    monkeypatch.setattr(distributed, "connect", connect)
    path = write_sweep(tmp_path, overrides=TINY)
    for cpus, said in ((0, "error: --ray-cpus must be at least 1, got 0"), (1, "error: no Ray started by this test")):
        with pytest.raises(SystemExit) as stopped:
            main_sweep(str(path), print, str(tmp_path / "runs"), [], None, cpus)  # the train step is never reached
        assert str(stopped.value) == said
    assert asked == [1]


@pytest.mark.parametrize("kind, scale", [("uniform", "linear"), ("loguniform", "log"), ("grid", "log"), ("choice", "linear")])
def test_the_trials_plot_shades_by_rank_and_spreads_a_log_range_on_a_log_axis(tmp_path, monkeypatch, kind, scale):
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    from agents.training.sweep import _cell

    values = {"uniform": [0.1, 0.9], "loguniform": [0.001, 0.1], "grid": [0.001, 0.01, 0.1], "choice": [0.0, 0.1]}[
        kind
    ]  # a choice holding 0 cannot be drawn on a log axis
    key = "ppo.ent_coef" if kind == "choice" else "ppo.learning_rate"  # a learning rate may not be 0
    figure = plot_trials(tmp_path, monkeypatch, {key: {kind: values}}, [{key: rate} for rate in (0.01, 0.05, 0.1)])
    curves, scatter = figure.axes[:2]
    assert [to_rgba(line.get_color()) for line in curves.lines] == [tuple(plt.cm.viridis(share)) for share in (0.0, 0.5, 1.0)]
    assert scatter.get_xscale() == scale
    short = key.split(".")[1]  # the legend names a value by its key without the section: ent_coef=, learning_rate=
    assert [text.get_text().split(" ")[:2] for text in curves.get_legend().get_texts()] == [
        [f"#{rank}", f"{short}={_cell(rate, 4)}"] for rank, rate in ((1, 0.01), (2, 0.05), (3, 0.1))
    ]
    plt.close(figure)


def test_without_ray_tune_a_sweep_names_the_extra_in_one_line(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray", reason="sweeps need Ray: pip install 'yacht-rl[ray]'")
    from agents.training.sweep import main_sweep

    monkeypatch.delattr(ray, "tune", raising=False)
    monkeypatch.setitem(sys.modules, "ray.tune", None)  # Ray without its tune extra: `from ray import tune` fails
    with pytest.raises(SystemExit) as stopped:
        main_sweep(str(write_sweep(tmp_path, overrides=TINY)), print, str(tmp_path / "runs"), [], None, None)
    assert str(stopped.value) == 'error: sweeps need Ray Tune, which is not installed: pip install -e ".[distributed]"'


@pytest.fixture
def tune_session(monkeypatch):
    """Tune's side of one trial, as a trial sees it: its name, and what it reports (in order, with the trial's events)."""
    tune = pytest.importorskip("ray.tune", reason="sweeps need Ray: pip install 'yacht-rl[ray]'")
    events: list = []
    monkeypatch.setattr(tune, "get_context", lambda: SimpleNamespace(get_trial_name=lambda: "t00"))
    monkeypatch.setattr(tune, "report", lambda result: events.append(("reported", result["steps"], result[METRIC])))
    return events


def test_a_trial_reports_each_evaluation_and_the_last_only_once_its_run_is_saved(tmp_path, tune_session):
    sweep = load_sweep(write_sweep(tmp_path, overrides=TINY))

    def train(config, run_dir, resume, on_evaluation):
        on_evaluation(512, {"percent_of_optimal": 60.0})
        on_evaluation(1024, {"percent_of_optimal": 50.0})
        tune_session.append(("saved", run_dir.name))

    run_trial({"ppo.learning_rate": 0.001}, sweep=sweep, sweep_dir=str(tmp_path / "runs"), train=train)
    assert tune_session == [("reported", 512, 60.0), ("saved", "t00"), ("reported", 1024, 60.0)]


def test_a_resumed_trial_starts_from_the_best_evaluation_up_to_its_newest_checkpoint(tmp_path, tune_session):
    longer = [*(o for o in TINY if not o.startswith("ppo.total_timesteps")), "ppo.total_timesteps=2048"]
    sweep = load_sweep(write_sweep(tmp_path, overrides=longer))
    run_dir = tmp_path / "runs" / "t00"
    (run_dir / "checkpoints").mkdir(parents=True)
    for steps in (512, 1024):  # by name, step_1024 sorts before step_512: the newest is found by number
        (run_dir / "checkpoints" / f"step_{steps}.zip").write_bytes(b"")
    # the curve holds an evaluation past the newest checkpoint (written before the kill): the resumed run repeats it
    (run_dir / "learning_curve.csv").write_text("steps,percent_of_optimal\n512,40.0\n1024,70.0\n1536,95.0\n")
    resumed = []

    def train(config, run_dir, resume, on_evaluation):
        resumed.append(resume)
        on_evaluation(1536, {"percent_of_optimal": 50.0})
        on_evaluation(2048, {"percent_of_optimal": 55.0})

    run_trial({"ppo.learning_rate": 0.001}, sweep=sweep, sweep_dir=str(tmp_path / "runs"), train=train)
    assert resumed == [True] and (run_dir / "checkpoints").is_dir()
    assert tune_session == [("reported", 1536, 70.0), ("reported", 2048, 70.0)]


def test_trials_are_ranked_from_one_by_their_best_evaluation(tmp_path):
    from agents.training.sweep import collect_trials

    for trial, best in (("t00_a", 40.0), ("t01_b", 80.0), ("t02_c", 60.0)):
        (tmp_path / trial).mkdir()
        (tmp_path / trial / "config.yaml").write_text("name: " + trial + "\n")
        (tmp_path / trial / "learning_curve.csv").write_text(f"steps,percent_of_optimal,wall_seconds\n512,{best},1.0\n")
    rows = collect_trials(tmp_path, [])
    assert [(row.rank, row.trial) for row in rows] == [(1, "t01_b"), (2, "t02_c"), (3, "t00_a")]


def test_a_trial_row_holds_its_best_and_last_evaluations_and_the_steps_it_reached(tmp_path):
    from agents.training.sweep import collect_trials

    (tmp_path / "t00_a").mkdir()
    (tmp_path / "t00_a" / "config.yaml").write_text("name: t00_a\n")
    curve = "steps,percent_of_optimal,wall_seconds\n512,40.0,1.5\n1024,70.0,3.0\n1536,65.0,4.5\n"
    (tmp_path / "t00_a" / "learning_curve.csv").write_text(curve)
    (tmp_path / "t01_b").mkdir()  # a trial stopped before its first evaluation
    (tmp_path / "t01_b" / "config.yaml").write_text("name: t01_b\n")
    reached, waiting = collect_trials(tmp_path, [])
    assert (reached.best_percent_of_optimal, reached.best_at_steps) == (70.0, 1024)
    assert (reached.last_percent_of_optimal, reached.steps, reached.train_seconds) == (65.0, 1536, 4.5)
    assert (waiting.best_percent_of_optimal, waiting.best_at_steps, waiting.last_percent_of_optimal) == (None, None, None)
    assert (waiting.steps, waiting.train_seconds) == (0, None)
    assert (reached.status, waiting.status) == ("stopped early", "not run")


@pytest.mark.parametrize(
    "value, digits, shown",
    [
        (0.5, 2, "0.50"),
        (0.1, 2, "0.10"),
        (0.05, 2, "0.05"),
        (0.000421, 4, "0.000421"),
        (0.0, 2, "0.00"),
        (-0.5, 2, "-0.50"),
        (-0.000421, 4, "-0.000421"),
    ],
)
def test_a_swept_value_is_shown_to_its_digits_or_to_three_significant_ones_when_small(value, digits, shown):
    from agents.training.sweep import _cell

    assert _cell(value, digits) == shown


def test_a_sweep_folder_keeps_its_sweep_record_in_the_order_of_its_file(tmp_path):
    from agents.training.sweep import check_same_sweep

    sweep = load_sweep(write_sweep(tmp_path, overrides=TINY))
    (tmp_path / "runs").mkdir()
    check_same_sweep(tmp_path / "runs", sweep)
    text = (tmp_path / "runs" / "sweep.yaml").read_text()
    assert text.startswith("sweep:\n  name: tiny\n") and "\nbase_config:\n" in text


def test_a_grace_period_of_one_step_is_taken(tmp_path):
    path = write_sweep(tmp_path, overrides=TINY, scheduler={"type": "asha", "grace_period": 1})
    assert load_sweep(path).spec.scheduler.grace_period == 1


@pytest.mark.parametrize(
    "space, got",
    [
        ({"grid": [0.1], "choice": [0.2]}, "got ['grid', 'choice']"),
        ({"uniform": [0.1, 0.2], "loguniform": [0.1, 0.2]}, "got ['uniform', 'loguniform']"),
        ({}, "got none"),
    ],
    ids=["grid-and-choice", "two-ranges", "no-kind"],
)
def test_a_dimension_with_two_kinds_or_none_names_what_it_got(tmp_path, space, got):
    path = write_sweep(tmp_path, space={"ppo.learning_rate": space})
    with pytest.raises(ConfigError, match="give exactly one of grid, choice, uniform, loguniform") as error:
        load_sweep(path)
    assert got in str(error.value)


@pytest.mark.parametrize(
    "fields",
    [{"overrides": ["ppo.total_timesteps=1e12"]}, {"space": {"ppo.total_timesteps": {"grid": [600_000, 10**12]}}}],
    ids=["base-config", "listed-value"],
)
def test_a_sweep_past_the_machines_budget_is_refused_unless_allowed(tmp_path, fields):
    path = write_sweep(tmp_path, **fields)
    with pytest.raises(ConfigError, match="ppo.total_timesteps makes the run take at least .* pass --allow-large"):
        load_sweep(path)
    assert load_sweep(path, allow_large=True).spec.name == "tiny"


def test_extra_overrides_go_to_the_sweep_file_or_to_every_trials_config_by_their_prefix(tmp_path):
    sweep = load_sweep(write_sweep(tmp_path, overrides=TINY), ["sweep.num_samples=3", "ppo.n_epochs=2"])
    assert sweep.spec.num_samples == 3 and sweep.spec.trial_count() == 6
    assert sweep.base_config.ppo.n_epochs == 2 and sweep.trial_config({}, "t00").ppo.n_epochs == 2
    assert "ppo.n_epochs=2" in sweep.overrides and not [text for text in sweep.overrides if text.startswith("sweep.")]


@pytest.mark.parametrize("limit", [None, 2], ids=["no-limit", "two-at-once"])
def test_a_sweep_runs_as_many_trials_at_once_as_its_file_allows(tmp_path, monkeypatch, limit):
    tune = pytest.importorskip("ray.tune", reason="sweeps need Ray: pip install 'yacht-rl[ray]'")
    from agents.training.sweep import run_sweep

    made = []

    class Tuner:  # Tune's tuner, as far as a new sweep uses it: nothing runs
        def __init__(self, trainable, *, param_space, tune_config, run_config):
            made.append(tune_config)

        @staticmethod
        def can_restore(path):
            return False

        def fit(self):
            return []

    monkeypatch.setattr(tune, "Tuner", Tuner)
    monkeypatch.setattr(tune, "with_parameters", lambda trainable, **parameters: trainable)  # no object store
    sweep = load_sweep(write_sweep(tmp_path, overrides=TINY, max_concurrent_trials=limit))
    run_sweep(sweep, print, tmp_path / "runs")
    # Tune's generator reads 0 as no limit: as many trials at once as the CPUs allow
    assert made[0].search_alg.max_concurrent == (limit or 0)


@given(
    names=st.sets(st.from_regex(r"[a-z0-9_][a-z0-9._=+-]{0,11}", fullmatch=True).filter(lambda name: name != "tune"), max_size=4)
)
@example(names={"t00_learning_rate=0.001", "v00_copied"})  # a folder on either side of tune/, by name
def test_every_run_folder_of_a_sweep_is_ranked_but_tunes_own_state(names):
    from agents.training.sweep import collect_trials

    with tempfile.TemporaryDirectory() as folder:
        sweep_dir = Path(folder)
        for name in [*names, "tune"]:
            (sweep_dir / name).mkdir()
            (sweep_dir / name / "config.yaml").write_text(f"name: '{name}'\n")
        assert sorted(row.trial for row in collect_trials(sweep_dir, [])) == sorted(names)


def test_a_whole_number_is_shown_with_thousands_separators_and_text_or_a_flag_as_it_is():
    from agents.training.sweep import _cell

    assert [_cell(12_288), _cell(7), _cell("relu"), _cell(True), _cell(False)] == ["12,288", "7", "relu", "True", "False"]


def printed_table(monkeypatch, rows, keys) -> list[list[str]]:
    """The cells of the table print_trials prints, by line: the column names, then one line per trial."""
    from rich.console import Console

    import yacht_env.render
    from agents.training.sweep import print_trials

    console = Console(file=io.StringIO(), width=250, record=True)
    monkeypatch.setattr(yacht_env.render, "report_console", lambda: console)
    print_trials(rows, "tiny", keys)
    lines = [line for line in console.export_text().splitlines() if re.search("[│┃]", line)]
    return [[cell.strip() for cell in re.split("[│┃]", line)[1:-1]] for line in lines]


def test_the_printed_ranking_has_a_column_per_swept_key_named_by_its_last_part(monkeypatch):
    from agents.training.sweep import TrialRow

    keys = ["seed", "ppo.activation", "env.vectorized"]  # a key of one part (no section) too
    params = {"seed": 3, "ppo.activation": "relu", "env.vectorized": True}
    row = TrialRow(1, "t00", params, "finished", 71.25, 8192, 70.5, 12_288, 42.0, 70.75, 10_000)
    header, line = printed_table(monkeypatch, [row], keys)
    assert header == [
        "rank", "seed", "activation", "vectorized", "best %", "at steps", "last %", "steps", "train s", "final %", "status",
    ]  # fmt: skip
    assert line == ["1", "3", "relu", "True", "71.25", "8,192", "70.50", "12,288", "42", "70.75", "finished"]


def plot_trials(tmp_path, monkeypatch, space, params):
    """The trials plot (its figure, left open) of a sweep over ``space`` whose trials, best first, took ``params``."""
    import matplotlib.pyplot as plt

    from agents.training.sweep import TrialRow, save_trials_plot

    sweep = load_sweep(write_sweep(tmp_path, space=space))
    rows = []
    for rank, values in enumerate(params, start=1):
        trial = f"t{rank:02d}"
        (tmp_path / trial).mkdir()
        (tmp_path / trial / "learning_curve.csv").write_text(f"steps,percent_of_optimal\n512,{50 - rank}\n1024,{60 - rank}\n")
        rows.append(TrialRow(rank, trial, values, "finished", 60.0 - rank, 1024, 60.0 - rank, 1024, 1.0, None, None))
    kept = []
    with monkeypatch.context() as patch:
        patch.setattr(plt, "close", kept.append)
        save_trials_plot(tmp_path / "trials.png", rows, tmp_path, sweep)
    return kept[0]


def test_two_trials_are_drawn_in_the_two_ends_of_the_colour_scale(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    space = {"ppo.learning_rate": {"grid": [0.001, 0.01]}}
    figure = plot_trials(tmp_path, monkeypatch, space, [{"ppo.learning_rate": 0.001}, {"ppo.learning_rate": 0.01}])
    curves = figure.axes[0]
    assert [to_rgba(line.get_color()) for line in curves.lines] == [tuple(plt.cm.viridis(share)) for share in (0.0, 1.0)]
    plt.close(figure)


def test_the_plots_legend_names_a_key_of_one_part_as_it_is(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    figure = plot_trials(tmp_path, monkeypatch, {"seed": {"grid": [0, 1]}}, [{"seed": 1}, {"seed": 0}])
    assert [text.get_text() for text in figure.axes[0].get_legend().get_texts()] == ["#1 seed=1", "#2 seed=0"]
    with Image.open(tmp_path / "trials.png") as image:  # 13 by 5 inches at 110 dots an inch
        assert image.size == (1430, 550)
    plt.close(figure)


@pytest.mark.parametrize(
    "space, params, shade",
    [
        (
            {"ppo.activation": {"choice": ["tanh", "relu"]}, "ppo.ent_coef": {"uniform": [0.001, 0.01]}},
            [{"ppo.activation": "relu", "ppo.ent_coef": 0.002}, {"ppo.activation": "tanh", "ppo.ent_coef": 0.008}],
            [0.002, 0.008],
        ),
        (
            {"ppo.ent_coef": {"uniform": [0.001, 0.01]}, "ppo.policy": {"choice": ["mlp", "lookahead"]}},
            [{"ppo.ent_coef": 0.002, "ppo.policy": "mlp"}, {"ppo.ent_coef": 0.008, "ppo.policy": "lookahead"}],
            None,
        ),
        (
            {"ppo.gamma": {"choice": [0.9, 0.99]}, "ppo.learning_rate": {"grid": [0.001, 0.01]}, "seed": {"grid": [0]}},
            [
                {"ppo.gamma": 0.99, "ppo.learning_rate": 0.001, "seed": 0},
                {"ppo.gamma": 0.9, "ppo.learning_rate": 0.01, "seed": 0},
            ],
            [0.001, 0.01],
        ),
    ],
    ids=["text-then-number", "number-then-text", "three-keys"],
)  # each space in the order of its keys, as the sweep file (written with its keys sorted) lists them
def test_the_scatter_is_shaded_by_the_second_key_where_it_is_a_number(tmp_path, monkeypatch, space, params, shade):
    import matplotlib.pyplot as plt

    figure = plot_trials(tmp_path, monkeypatch, space, params)
    scatter = figure.axes[1]
    second = list(space)[1]
    if shade is None:  # no colour scale for text
        assert len(figure.axes) == 2
    else:  # a colour bar beside the scatter, named by the second key, and each point coloured by its value
        assert len(figure.axes) == 3 and figure.axes[2].get_ylabel() == second
        assert scatter.collections[0].get_array().tolist() == shade
    plt.close(figure)


def test_a_failed_trial_is_named_with_the_first_line_of_its_own_error(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ray", reason="sweeps need Ray: pip install 'yacht-rl[ray]'")
    from ray.exceptions import RayTaskError

    from agents.evaluation import distributed
    from agents.training import sweep as sweep_module

    def in_a_worker(error: Exception) -> Exception:  # as Tune hands a trial's exception back: in the worker's RayTaskError
        try:
            raise error
        except Exception:
            trace = traceback.format_exc()
        return RayTaskError(
            "ImplicitFunc.train", trace, error, "ray::ImplicitFunc.train", 4242, "192.0.2.2"
        ).as_instanceof_cause()

    sweep_dir = tmp_path / "runs" / "tiny"
    errors = {
        "t00_learning_rate=0.001": ValueError("learning rate 0.001 diverged\nlower it"),
        "t01_learning_rate=0.0003": MemoryError(),
    }
    for trial in errors:
        (sweep_dir / trial).mkdir(parents=True)
        (sweep_dir / trial / "config.yaml").write_text(f"name: {trial}\nppo:\n  learning_rate: 0.001\n")
        (sweep_dir / trial / "learning_curve.csv").write_text("steps,percent_of_optimal,wall_seconds\n512,40.0,1.0\n")
    results = [SimpleNamespace(path=str(sweep_dir / "tune" / trial), error=in_a_worker(error)) for trial, error in errors.items()]
    monkeypatch.setattr(distributed, "connect", lambda address, cpus: None)
    monkeypatch.setattr(sweep_module, "run_sweep", lambda sweep, train, folder: results)
    sweep_module.main_sweep(str(write_sweep(tmp_path, overrides=TINY)), print, str(tmp_path / "runs"), [], None, None)
    printed = capsys.readouterr().out
    # the first line of the trial's own message (not the worker's process title), else the error's type
    for trial, line in (("t00_learning_rate=0.001", "learning rate 0.001 diverged"), ("t01_learning_rate=0.0003", "MemoryError")):
        assert f"trial {trial} failed: {line} (see {sweep_dir / 'tune' / trial})\n" in printed
    with (sweep_dir / "trials.csv").open(newline="") as handle:
        assert [row["status"] for row in csv.DictReader(handle)] == ["error", "error"]


def test_a_sweep_folder_is_resumed_by_its_own_sweep_only(tmp_path):
    from agents.training.sweep import check_same_sweep

    runs = tmp_path / "runs"
    runs.mkdir()
    check_same_sweep(runs, load_sweep(write_sweep(tmp_path, overrides=TINY)))
    saved = (runs / "sweep.yaml").read_text()
    check_same_sweep(runs, load_sweep(write_sweep(tmp_path, overrides=TINY)))  # the same file again: resumed
    changed = load_sweep(write_sweep(tmp_path, overrides=[*TINY, "ppo.n_epochs=2"]))
    with pytest.raises(ConfigError, match="holds sweep 'tiny' run with another sweep file or base config"):
        check_same_sweep(runs, changed)
    assert (runs / "sweep.yaml").read_text() == saved


def test_a_trial_resumed_from_a_checkpoint_older_than_its_first_evaluation_has_no_best_yet(tmp_path, tune_session):
    longer = [*(o for o in TINY if not o.startswith("ppo.total_timesteps")), "ppo.total_timesteps=2048"]
    sweep = load_sweep(write_sweep(tmp_path, overrides=longer))
    run_dir = tmp_path / "runs" / "t00"
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "checkpoints" / "step_256.zip").write_bytes(b"")
    # the evaluation at 512 was written after the checkpoint, before the kill: the resumed run makes it again
    (run_dir / "learning_curve.csv").write_text("steps,percent_of_optimal\n512,40.0\n")

    def train(config, run_dir, resume, on_evaluation):
        on_evaluation(512, {"percent_of_optimal": 35.0})

    run_trial({"ppo.learning_rate": 0.001}, sweep=sweep, sweep_dir=str(tmp_path / "runs"), train=train)
    assert tune_session == [("reported", 512, 35.0)]


def finished_gamma_row():
    """A finished trial's row in the ranking: one swept gamma, every figure given."""
    from agents.training.sweep import TrialRow

    return TrialRow(1, "t00", {"ppo.gamma": 0.99}, "finished", 71.25, 8192, 70.5, 12_288, 42.0, 70.75, 10_000)


def test_the_printed_ranking_aligns_its_figures_right_its_status_left_and_a_swept_number_to_four_digits(monkeypatch):
    from agents.training.sweep import print_trials

    printed = []
    monkeypatch.setattr("yacht_env.render.report_console", lambda: SimpleNamespace(print=printed.append))
    row = finished_gamma_row()
    print_trials([row], "tiny", ["ppo.gamma"])
    (table,) = printed
    assert [column.justify for column in table.columns] == ["right"] * 8 + ["left"]  # rank, gamma, six figures, status
    assert list(table.columns[1].cells) == ["0.9900"]


@pytest.mark.parametrize(
    "space, logarithmic",
    [
        ({"ppo.ent_coef": {"loguniform": [0.0001, 0.01]}, "ppo.learning_rate": {"uniform": [0.001, 0.01]}}, False),
        ({"ppo.ent_coef": {"uniform": [0.001, 0.01]}, "ppo.learning_rate": {"loguniform": [0.0001, 0.01]}}, True),
        ({"ppo.ent_coef": {"uniform": [0.001, 0.01]}, "ppo.learning_rate": {"grid": [0.002, 0.005]}}, False),
        ({"ppo.ent_coef": {"uniform": [0.001, 0.01]}, "ppo.learning_rate": {"choice": [0.002, 0.005]}}, False),
    ],
    ids=["first-loguniform", "second-loguniform", "second-grid", "second-choice"],
)
def test_the_scatter_s_colour_scale_is_logarithmic_where_the_second_key_is_drawn_so(tmp_path, monkeypatch, space, logarithmic):
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    params = [{"ppo.ent_coef": 0.002, "ppo.learning_rate": 0.005}, {"ppo.ent_coef": 0.008, "ppo.learning_rate": 0.002}]
    figure = plot_trials(tmp_path, monkeypatch, space, params)
    assert isinstance(figure.axes[1].collections[0].norm, LogNorm) == logarithmic
    plt.close(figure)


def test_the_ranking_s_csv_has_the_rank_the_trial_the_swept_keys_then_every_figure_by_its_field(tmp_path):
    from dataclasses import fields

    from agents.training.sweep import TrialRow, save_trials_csv

    row = finished_gamma_row()
    save_trials_csv(tmp_path / "trials.csv", [row], ["ppo.gamma"])
    with (tmp_path / "trials.csv").open(newline="") as handle:
        (written,) = csv.DictReader(handle)
    figures = [field.name for field in fields(TrialRow)][3:]  # after rank, trial and the params
    assert list(written) == ["rank", "trial", "ppo.gamma", *figures]
    assert written == {"rank": "1", "trial": "t00", "ppo.gamma": "0.99"} | {name: str(getattr(row, name)) for name in figures}
