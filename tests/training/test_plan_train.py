"""train.py's planning runs: config validation, a tiny run, resume from a checkpoint, refused checkpoints."""

import csv
import json
import os
import re
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.learned.model_files import MAX_FILE_BYTES
from agents.learned.plan import PlanPolicy
from agents.policies.guard import unguarded
from agents.registry import make_policy
from agents.training.config import ConfigError, load_config
from train import main as train_main

ROOT = Path(__file__).resolve().parents[2]
CONFIG = str(ROOT / "configs" / "plan_yacht.yaml")
CONFIG2 = str(ROOT / "configs" / "plan2_yacht.yaml")
CONFIGN = str(ROOT / "configs" / "planN_yahtzee.yaml")
TINY = [
    "plan.total_games=400", "plan.games_per_iteration=100", "plan.max_wall_minutes=null", "run.checkpoint_every=200",
    "run.eval_every=200", "run.eval_games=20", "run.final_eval_games=20",
]  # fmt: skip


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["env.num_players=2", "env.opponents=[optimal]"], "algorithm 'plan' trains a solitaire agent"),
        (["env.rules=yahtzee", "plan.value_model=tabular"], "plan.value_model 'tabular' fits rule sets without a sheet state"),
        (["plan.epsilon=2"], "plan.epsilon: Input should be less than or equal to 1"),
        (["plan.net_arch=[0]"], "layer widths must be >= 1, got [0]"),
        (["plan.max_wall_minutes=-1"], "plan.max_wall_minutes: Input should be greater than 0"),
        (["plan.gamma=1"], "unknown key 'plan.gamma'"),
        (["algorithm=sac"], "algorithm: Input should be 'ppo', 'plan', 'plan2', 'planN' or 'dqn'"),
    ],
)
def test_plan_configs_are_validated(overrides, message):
    with pytest.raises(ConfigError) as error:
        load_config(CONFIG, overrides)
    assert message in str(error.value) and "\n" not in str(error.value), str(error.value)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["env.num_players=1", "env.opponents=[]"], "algorithm 'plan2' trains a player for a table of two"),
        (["env.rules=yahtzee"], "'yahtzee' has a bonus or a joker"),
        (["env.num_players=3", "env.opponents=[optimal,optimal]"], "needs env.num_players 2, got 3"),
    ],
)
def test_plan2_configs_are_validated(overrides, message):
    with pytest.raises(ConfigError) as error:
        load_config(CONFIG2, overrides)
    assert message in str(error.value) and "\n" not in str(error.value), str(error.value)


def test_the_shipped_plan_configs_name_the_planning_agent():
    for name, rules in (("plan_yacht", "yacht"), ("plan_yahtzee", "yahtzee"), ("plan_yatzy", "yatzy")):
        config = load_config(ROOT / "configs" / f"{name}.yaml")
        assert config.algorithm == "plan" and config.env.rules == rules and config.name == name


def curve_steps(run: Path) -> list[int]:
    with (run / "learning_curve.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][:3] == ["steps", "wall_seconds", "mean_score"]
    return [int(row[0]) for row in rows[1:]]


def test_a_tiny_plan_run_writes_a_playable_model_and_resumes_from_its_checkpoint(tmp_path, capsys):
    assert train_main(["--config", CONFIG, "--runs-dir", str(tmp_path), "name=tiny", *TINY]) is None
    run = tmp_path / "tiny"
    assert curve_steps(run) == [200, 400]
    assert sorted(path.name for path in (run / "checkpoints").iterdir()) == ["step_200.safetensors", "step_400.safetensors"]
    assert isinstance(unguarded(make_policy(f"plan:{run / 'model.safetensors'}", rules="yacht")), PlanPolicy)
    assert json.loads((run / "eval.json").read_text())["games"] == 20
    with pytest.raises(SystemExit, match="already holds a run"):
        train_main(["--config", CONFIG, "--runs-dir", str(tmp_path), "name=tiny", *TINY])
    # Killed after the checkpoint at 200 games: its later files are gone.
    for name in ("model.safetensors", "eval.json", "checkpoints/step_400.safetensors"):
        (run / name).unlink()
    capsys.readouterr()
    assert train_main(["--resume", str(run), "plan.total_games=600"]) is None
    assert "from step_200.safetensors (200 games done)" in capsys.readouterr().out
    assert curve_steps(run) == [200, 400, 600]
    assert train_main(["--resume", str(run)]) is None
    assert "nothing to resume" in capsys.readouterr().out


def test_a_run_of_games_that_are_no_multiple_of_an_iteration_plays_exactly_its_games(tmp_path):
    assert train_main(["--config", CONFIG, "--runs-dir", str(tmp_path), "name=odd", *TINY, "plan.total_games=250"]) is None
    assert sorted(path.name for path in (tmp_path / "odd" / "checkpoints").iterdir()) == [
        "step_200.safetensors",
        "step_250.safetensors",  # the last iteration plays the 50 games left, not 100
    ]


def test_a_cut_checkpoint_is_refused_in_one_line(tmp_path):
    assert train_main(["--config", CONFIG, "--runs-dir", str(tmp_path), "name=cut", *TINY]) is None
    run = tmp_path / "cut"
    (run / "model.safetensors").unlink()
    (run / "checkpoints" / "step_400.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(SystemExit) as error:
        train_main(["--resume", str(run)])
    assert "step_400.safetensors' cannot be resumed" in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    "metadata, words",
    [
        ({"games": 400, "value_model": "net"}, "holds a 'net' value model, this run's is 'tabular'"),
        ("[" * 100_000 + "]" * 100_000, "nested"),
    ],
    ids=["other value model", "nested metadata"],
)
def test_a_checkpoint_that_does_not_fit_the_run_is_refused_in_one_line(tmp_path, metadata, words):
    from safetensors.torch import load_file, save_file

    assert train_main(["--config", CONFIG, "--runs-dir", str(tmp_path), "name=odd", *TINY]) is None
    run = tmp_path / "odd"
    (run / "model.safetensors").unlink()
    checkpoint = run / "checkpoints" / "step_400.safetensors"
    text = metadata if isinstance(metadata, str) else json.dumps(metadata)
    save_file(load_file(str(checkpoint)), str(checkpoint), metadata={"yacht_plan_checkpoint": text})
    with pytest.raises(SystemExit) as error:
        train_main(["--resume", str(run)])
    assert "cannot be resumed" in str(error.value) and words in str(error.value) and "\n" not in str(error.value)


TINY2 = [
    "plan.total_games=60", "plan.games_per_iteration=20", "plan.max_wall_minutes=null", "plan.net_arch=[16]",
    "run.checkpoint_every=40", "run.eval_every=40", "run.eval_games=8", "run.final_eval_games=8",
]  # fmt: skip


def test_a_tiny_plan2_run_writes_a_table_player_and_resumes_from_its_checkpoint(tmp_path, capsys):
    from agents.learned.plan2 import Plan2Policy
    from agents.registry import make_table_policy

    assert train_main(["--config", CONFIG2, "--runs-dir", str(tmp_path), "name=two", *TINY2]) is None
    run = tmp_path / "two"
    with (run / "learning_curve.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["steps", "wall_seconds", "win_rate", "win_rate_low", "win_rate_high", "mean_score"]
    assert [int(row[0]) for row in rows[1:]] == [40]
    assert sorted(path.name for path in (run / "checkpoints").iterdir()) == ["step_40.safetensors", "step_60.safetensors"]
    assert isinstance(unguarded(make_table_policy(f"plan2:{run / 'model.safetensors'}", 2)), Plan2Policy)
    result = json.loads((run / "eval.json").read_text())
    assert result["games"] == 8 and result["table"] == [f"plan2:{run / 'model.safetensors'}", "optimal"]
    for name in ("model.safetensors", "eval.json", "checkpoints/step_60.safetensors"):
        (run / name).unlink()
    capsys.readouterr()
    assert train_main(["--resume", str(run), "plan.total_games=80"]) is None
    assert "from step_40.safetensors (40 games done)" in capsys.readouterr().out
    assert (run / "model.safetensors").exists()
    assert train_main(["--resume", str(run)]) is None
    assert "nothing to resume" in capsys.readouterr().out


# -- a checkpoint is held to the checks of the file the run ends in ------------------------------------------------

TRAINED = {
    "table": (CONFIG, TINY, "step_400.safetensors"),
    "net": (CONFIG, [*TINY, "plan.value_model=net", "plan.net_arch=[16]"], "step_400.safetensors"),
    "net2": (CONFIG2, TINY2, "step_60.safetensors"),
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished tiny run of each value model, its final model and evaluation taken away: a run killed at its end."""
    runs = {}
    for kind, (config, overrides, _) in TRAINED.items():
        folder = tmp_path_factory.mktemp(kind)
        assert train_main(["--config", config, "--runs-dir", str(folder), f"name={kind}", *overrides]) is None
        for name in ("model.safetensors", "eval.json"):
            (folder / kind / name).unlink()
        runs[kind] = folder / kind
    return runs


def with_metadata(change):
    def damage(path):
        from safetensors import safe_open
        from safetensors.torch import load_file, save_file

        with safe_open(str(path), framework="pt") as handle:
            meta = json.loads(handle.metadata()["yacht_plan_checkpoint"])
        change(meta)
        save_file(load_file(str(path)), str(path), metadata={"yacht_plan_checkpoint": json.dumps(meta)})

    return damage


def with_first_tensor(change):
    """The checkpoint's first tensor (by name) replaced by ``change(tensor)``, its metadata kept."""

    def damage(path):
        from safetensors import safe_open
        from safetensors.torch import load_file, save_file

        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata()
        tensors = load_file(str(path))
        name = sorted(tensors)[0]
        tensors[name] = change(tensors[name])
        save_file(tensors, str(path), metadata=metadata)

    return damage


def with_value(value):
    """The first tensor's first entry set to ``value``: a table's value, or a network's first weight."""

    def change(tensor):
        tensor.view(-1)[1] = value
        return tensor

    return with_first_tensor(change)


def with_shape(shape):
    """The first tensor replaced by zeros of ``shape``: a checkpoint of another table or network."""

    def change(tensor):
        import torch

        return torch.zeros(shape, dtype=tensor.dtype)

    return with_first_tensor(change)


def replaced_by(make):
    def damage(path):
        path.unlink()
        make(path)

    return damage


CHECKPOINT_DAMAGES = {
    "games -1000": (with_metadata(lambda meta: meta.update(games=-1000)), "games must be an integer >= 0 and at most"),
    "games 1e308": (with_metadata(lambda meta: meta.update(games=1e308)), "games must be an integer >= 0 and at most"),
    "no games": (with_metadata(lambda meta: meta.pop("games")), "its metadata must hold games and value_model"),
    "NaN": (with_value(float("nan")), "NaN or infinite"),
    "3e38": (with_value(3e38), "NaN or infinite|above 1e\\+06 points|beyond 10000 in magnitude"),
    "another shape": (
        with_shape((3,)),
        r"cannot reshape array of size 3 |Error\(s\) in loading state_dict",
    ),
    "fifo": (replaced_by(os.mkfifo), "is not a regular file"),
    "device": (replaced_by(lambda path: path.symlink_to("/dev/zero")), "is not a regular file"),
    "huge": (lambda path: os.truncate(path, MAX_FILE_BYTES + 1), "more than a checkpoint may be"),
}


def files_of(run: Path) -> dict[str, bytes]:
    return {str(path.relative_to(run)): path.read_bytes() for path in sorted(run.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("kind", sorted(TRAINED))
@pytest.mark.parametrize("damage", sorted(CHECKPOINT_DAMAGES))
def test_a_damaged_checkpoint_is_refused_in_one_line_and_the_run_left_as_it_was(trained, tmp_path, kind, damage):
    run = tmp_path / kind
    shutil.copytree(trained[kind], run)
    make, words = CHECKPOINT_DAMAGES[damage]
    make(run / "checkpoints" / TRAINED[kind][2])
    before = files_of(run)
    with pytest.raises(SystemExit) as refused:
        train_main(["--resume", str(run)])
    message = str(refused.value)
    assert "\n" not in message and f"{TRAINED[kind][2]}' cannot be resumed: " in message
    assert re.search(words, message), message
    assert files_of(run) == before


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            ["plan.table_sizes=[2,3]", "env.num_players=4", "env.opponents=[optimal,optimal,optimal]"],
            "must be one of plan.table_sizes",
        ),
        (["plan.table_sizes=[1,2]"], "table sizes must be distinct, each from 2 to 5"),
        (["plan.table_sizes=[2,2]"], "table sizes must be distinct"),
        (["plan.table_sizes=[2,6]"], "each from 2 to 5"),
        (["plan.table_sizes=[]"], "plan.table_sizes"),
    ],
)
def test_planN_configs_are_validated(overrides, message):
    with pytest.raises(ConfigError) as error:
        load_config(CONFIGN, overrides)
    assert message in str(error.value) and "\n" not in str(error.value), str(error.value)


def test_the_shipped_planN_configs_name_the_table_planner_for_every_table_size():
    for rules in ("yacht", "yahtzee", "yatzy"):
        config = load_config(ROOT / "configs" / f"planN_{rules}.yaml")
        assert config.algorithm == "planN" and config.env.rules == rules and config.name == f"planN_{rules}"
        assert config.plan.table_sizes == [2, 3, 4, 5] and config.plan.max_wall_minutes <= 60


TINYN = [
    "plan.total_games=60", "plan.games_per_iteration=20", "plan.max_wall_minutes=null", "plan.net_arch=[16]",
    "plan.table_sizes=[2,3]", "run.checkpoint_every=40", "run.eval_every=40", "run.eval_games=8", "run.final_eval_games=8",
]  # fmt: skip


def test_a_tiny_planN_run_writes_a_table_player_and_resumes_from_its_checkpoint(tmp_path, capsys):
    from agents.learned.planN import PlanNPolicy
    from agents.learned.planN_files import read_planN_file
    from agents.registry import make_table_policy

    assert train_main(["--config", CONFIGN, "--runs-dir", str(tmp_path), "name=n", *TINYN]) is None
    run = tmp_path / "n"
    with (run / "learning_curve.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["steps", "wall_seconds", "win_rate", "win_rate_low", "win_rate_high", "mean_score"]
    assert [int(row[0]) for row in rows[1:]] == [40]
    assert sorted(path.name for path in (run / "checkpoints").iterdir()) == ["step_40.safetensors", "step_60.safetensors"]
    meta, _ = read_planN_file(run / "model.safetensors")
    assert meta["games"] == 60 and meta["table_sizes"] == [2, 3] and meta["rules"] == "yahtzee"
    assert isinstance(unguarded(make_table_policy(f"planN:{run / 'model.safetensors'}", 3, rules="yahtzee")), PlanNPolicy)
    result = json.loads((run / "eval.json").read_text())
    assert result["games"] == 8 and result["table"] == [f"planN:{run / 'model.safetensors'}", "optimal"]
    for name in ("model.safetensors", "eval.json", "checkpoints/step_60.safetensors"):
        (run / name).unlink()
    capsys.readouterr()
    assert train_main(["--resume", str(run), "plan.total_games=80"]) is None
    assert "from step_40.safetensors (40 games done)" in capsys.readouterr().out
    assert read_planN_file(run / "model.safetensors")[0]["games"] == 80
    assert train_main(["--resume", str(run)]) is None
    assert "nothing to resume" in capsys.readouterr().out


def test_table_figures_are_the_learners_win_rate_and_mean_score_as_the_curves_write_them():
    from types import SimpleNamespace

    from agents.training.plan_train import table_figures

    standing = SimpleNamespace(win_rate=0.512345, mean_score=170.12345, name="learner")
    assert table_figures(standing) == {"win_rate": "0.5123", "mean_score": "170.123"}


# -- the loop both planning runs share -----------------------------------------------------------------------------


def test_the_share_of_a_run_done_is_by_its_games_or_by_its_wall_time_whichever_is_further():
    from agents.training.plan_train import run_progress

    assert run_progress(25, 100) == 0.25
    assert run_progress(25, 100, deadline=None, wall=60.0) == 0.25  # no deadline: the games alone
    half_gone = time.perf_counter() + 30.0
    assert run_progress(25, 100, deadline=half_gone, wall=60.0) == pytest.approx(0.5, abs=0.01)
    just_started = time.perf_counter() + 59.0
    assert run_progress(25, 100, deadline=just_started, wall=60.0) == 0.25


class CountingModel:
    """What the loop needs of a model: its kind and tensors for the checkpoints."""

    kind = "table"

    def tensors(self):
        import torch

        return {"values": torch.zeros(2, dtype=torch.float64)}


def test_the_loop_checkpoints_and_evaluates_each_time_its_games_pass_a_multiple_and_checkpoints_at_the_end(tmp_path):
    from agents.training.plan_train import drive_run

    config = load_config(CONFIG, [*TINY, "run.checkpoint_every=50", "run.eval_every=40", "plan.max_wall_minutes=2"])
    run = tmp_path / "run"
    seen, evaluated = [], []

    def iterate(games_done, deadline, wall):
        seen.append((games_done, deadline - time.perf_counter(), wall))
        for games in (30, 60, 80, 100, 110):
            yield games, {"train/x": 1.0}

    def figures():
        evaluated.append(len(evaluated))
        return {"mean_score": f"{len(evaluated):.3f}"}

    assert drive_run(config, run, False, CountingModel(), iterate, figures, "plan") == 110
    ((start, left, wall),) = seen
    assert start == 0 and wall == 120 and 110 < left <= 120
    # past 50, then at 100 (a multiple reached counts), then the last one
    assert sorted(int(path.stem[5:]) for path in (run / "checkpoints").iterdir()) == [60, 100, 110]
    assert curve_steps(run) == [60, 80]  # past 40, then at 80; 100 and 110 are short of 120
    assert (run / "config.yaml").exists() and (run / "tb" / "plan").is_dir()


def test_the_loops_wall_time_counts_from_its_start_and_its_summary_counts_its_games(tmp_path, monkeypatch, capsys):
    from agents.training import plan_train

    monkeypatch.setattr(plan_train, "time", SimpleNamespace(perf_counter=lambda: 500.0))  # a clock standing still
    config = load_config(CONFIG, [*TINY, "run.checkpoint_every=50", "run.eval_every=40"])

    def iterate(games_done, deadline, wall):
        yield from ((games, {"train/x": 1.0}) for games in (30, 60, 80, 110))

    assert (
        plan_train.drive_run(config, tmp_path / "run", False, CountingModel(), iterate, lambda: {"mean_score": "1"}, "plan")
        == 110
    )
    with (tmp_path / "run" / "learning_curve.csv").open(newline="") as handle:
        assert [row[:2] for row in list(csv.reader(handle))[1:]] == [["60", "0.0"], ["80", "0.0"]]
    assert "trained 110 games in 0 s, 110 in all" in capsys.readouterr().out


def test_a_resumed_loop_has_the_wall_time_its_run_had_left_and_logs_its_evaluations(tmp_path, monkeypatch, capsys):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from agents.training import plan_train
    from yacht_env.rules import YACHT

    now = [500.0]
    monkeypatch.setattr(plan_train, "time", SimpleNamespace(perf_counter=lambda: now[0]))  # a clock the loop moves
    config = load_config(CONFIG, [*TINY, "run.checkpoint_every=50", "run.eval_every=40", "plan.max_wall_minutes=2"])
    run, model, deadlines = tmp_path / "run", plan_train.value_model(config, YACHT), []

    def iterate(games_done, deadline, wall):
        deadlines.append(deadline - now[0])
        now[0] += 30.0  # thirty seconds a stretch of games
        yield games_done + 60, {"train/x": 1.0}

    plan_train.drive_run(config, run, False, model, iterate, lambda: {"mean_score": "1.5"}, "plan")  # 60 games, 30 s
    events = EventAccumulator(str(run / "tb" / "plan"))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("eval/mean_score")] == [(60, 1.5)]
    leftover = run / "checkpoints" / ".step_90.safetensors.abc123.partial"
    leftover.write_bytes(b"half a checkpoint")  # what a kill mid-save leaves behind
    capsys.readouterr()
    plan_train.drive_run(config, run, True, model, iterate, lambda: {"mean_score": "2.5"}, "plan")
    assert deadlines == [120.0, 90.0]  # two minutes, less the 30 s the run had used before its checkpoint
    assert f"removed {leftover}, left by a write that was killed" in capsys.readouterr().out and not leftover.exists()
