"""train.py and its configs: validation, a real tiny run, resume after a kill, model loading errors."""

import csv
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

from agents.learned.ppo import ModelLoadError
from agents.registry import make_policy
from agents.training.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "ppo.total_timesteps=1024", "ppo.n_steps=64", "ppo.batch_size=128", "ppo.n_epochs=1", "ppo.net_arch=[32,32]",
    "env.num_envs=4", "run.checkpoint_every=256", "run.eval_every=512", "run.eval_games=20",
    "run.final_eval_games=20", "run.progress_bar=false",
]  # fmt: skip


def run_train(*args, check=True, **kwargs):
    result = subprocess.run([sys.executable, str(ROOT / "train.py"), *args], capture_output=True, text=True, cwd=ROOT, **kwargs)
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.mark.parametrize(
    "path",
    sorted(p for p in (ROOT / "configs").glob("*.yaml") if not p.name.startswith("sweep_")),  # sweeps: test_sweep.py
)
def test_shipped_configs_are_valid(path):
    config = load_config(path)
    assert config.ppo.total_timesteps > 0


def test_quick_config_is_the_small_default():
    quick, full = load_config(ROOT / "configs/quick.yaml"), load_config(ROOT / "configs/ppo.yaml")
    assert quick.ppo.total_timesteps < full.ppo.total_timesteps


@pytest.mark.parametrize(
    "content, overrides, message",
    [
        ({"ppo": {"learning_rat": 0.1}}, [], "unknown key 'ppo.learning_rat'"),
        ({"ppo": {"n_steps": "many"}}, [], "ppo.n_steps"),
        ({"env": {"observation_encoding": "pixels"}}, [], "pixels"),
        ({"envs": {}}, [], "unknown key 'envs'"),
        ({}, ["ppo.batch_size=1"], "ppo.batch_size"),
        ({}, ["ppo.gamma"], "key=value"),
        ({}, ["run.nope=3"], "unknown key 'run.nope'"),
        ({}, ["ppo.policy=transformer"], "ppo.policy"),
        ({}, ["ppo.lookahead_temperature=0"], "ppo.lookahead_temperature"),
        ({"env": {"observation_encoding": "dict"}, "ppo": {"policy": "lookahead"}}, [], "lookahead.*'dict'"),
        ([1, 2], [], "mapping"),
    ],
)
def test_config_errors_name_the_key(tmp_path, content, overrides, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(content))
    with pytest.raises(ConfigError, match=message):
        load_config(path, overrides)


def test_missing_config_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="nowhere.yaml"):
        load_config(tmp_path / "nowhere.yaml")
    result = run_train("--config", str(tmp_path / "nowhere.yaml"), check=False)
    assert result.returncode != 0 and "nowhere.yaml" in result.stderr and "Traceback" not in result.stderr


def test_bad_override_stops_before_training(tmp_path):
    result = run_train("--config", "configs/quick.yaml", "--runs-dir", str(tmp_path), "ppo.n_stepz=3", check=False)
    assert result.returncode != 0 and "ppo.n_stepz" in result.stderr
    assert not any(tmp_path.iterdir())


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory):
    """``run(vectorized)``: the folder of a tiny run of the plain network, trained once per module and setting."""
    runs = {}

    def run(vectorized: bool) -> Path:
        if vectorized not in runs:
            runs_dir = tmp_path_factory.mktemp("tiny")
            # the plain network here; tests/training/test_lookahead_policy.py runs the look-ahead policy quick.yaml uses
            args = ["--config", "configs/quick.yaml", "--runs-dir", str(runs_dir), "name=tiny", f"env.vectorized={vectorized}"]
            run_train(*args, *TINY, "ppo.policy=mlp")
            runs[vectorized] = runs_dir
        return runs[vectorized]

    return run


@pytest.mark.parametrize("vectorized", [False, True])
def test_tiny_run_writes_a_loadable_model(tiny_runs, vectorized):
    run = tiny_runs(vectorized) / "tiny"
    assert (run / "config.yaml").exists() and (run / "eval.json").exists()
    assert list((run / "tb").rglob("events.out.tfevents.*"))
    rows = list(csv.DictReader((run / "learning_curve.csv").open()))
    assert [int(r["steps"]) for r in rows] == sorted(int(r["steps"]) for r in rows) and rows
    assert make_policy(f"ppo-zip:{run / 'model.zip'}").model.num_timesteps >= 1024
    policy = make_policy(f"ppo:{run / 'model.safetensors'}")  # what is played and shared
    env = gym.make("Yacht-v0")
    obs, info = env.reset(seed=0)
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(policy.act(obs, info["action_mask"]))
        assert not info["illegal_action"]


def test_the_progress_bar_counts_to_the_steps_the_run_takes_and_the_table_names_the_model(tmp_path):
    """SB3 trains whole rollouts (64 steps x 4 envs here): asked for 1,000 steps it takes 1,024, and the bar's total says so."""
    overrides = [*TINY, "ppo.total_timesteps=1000", "run.progress_bar=true", "ppo.policy=mlp"]
    result = run_train("--config", "configs/quick.yaml", "--runs-dir", str(tmp_path), "name=bar", *overrides)
    bars = re.findall(r"([\d,]+)/([\d,]+)", result.stdout + result.stderr)
    assert bars and bars[-1] == ("1,024", "1,024")
    assert "trained 1,024 steps" in result.stdout
    assert f"ppo:{tmp_path / 'bar' / 'model.safetensors'}" in result.stdout  # in full, not cut to fit the table
    assert make_policy(f"ppo-zip:{tmp_path / 'bar' / 'model.zip'}").model.num_timesteps == 1024


def test_resume_after_a_kill_continues_the_step_count(tmp_path):
    run = tmp_path / "killed"
    args = ["--config", "configs/quick.yaml", "--runs-dir", str(tmp_path), "name=killed", *TINY, "ppo.total_timesteps=10000000"]
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.time() + 120
    while not list((run / "checkpoints").glob("step_*.zip")) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # let it get some way past the first checkpoint before the kill
    process.send_signal(signal.SIGKILL)
    process.wait()
    checkpoints = sorted((run / "checkpoints").glob("step_*.zip"), key=lambda p: int(p.stem.split("_")[1]))
    assert checkpoints, "no checkpoint was written before the kill"
    for checkpoint in checkpoints:  # the kill may land mid-save: every finished checkpoint must still load
        make_policy(f"ppo-zip:{checkpoint}")
    leftover = run / "checkpoints" / ".step_999.zip.abc123.partial"
    leftover.write_bytes(b"PK\x03\x04 half a checkpoint")  # what a kill mid-save leaves behind
    done = int(checkpoints[-1].stem.split("_")[1])
    result = run_train("--resume", str(run), f"ppo.total_timesteps={done + 512}")
    assert f"from step_{done}.zip ({done:,} steps done)" in result.stdout
    assert not leftover.exists() and not list(run.rglob("*.partial"))
    model = make_policy(f"ppo-zip:{run / 'model.zip'}").model
    assert model.num_timesteps >= done + 512
    rows = list(csv.DictReader((run / "learning_curve.csv").open()))
    steps = [int(r["steps"]) for r in rows]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)


def test_a_finished_run_is_not_overwritten(tiny_runs):
    runs_dir = tiny_runs(False)
    before = {path: path.stat().st_mtime_ns for path in (runs_dir / "tiny").rglob("*")}
    result = run_train("--config", "configs/quick.yaml", "--runs-dir", str(runs_dir), "name=tiny", *TINY, check=False)
    assert result.returncode != 0 and "--resume" in result.stderr
    assert {path: path.stat().st_mtime_ns for path in (runs_dir / "tiny").rglob("*")} == before


def test_missing_and_corrupted_models_give_clear_errors(tmp_path):
    with pytest.raises(ModelLoadError, match="no model file at .*missing.zip"):
        make_policy(f"ppo-zip:{tmp_path / 'missing.zip'}")
    with pytest.raises(ModelLoadError, match="no model file at .*missing.safetensors"):
        make_policy(f"ppo:{tmp_path / 'missing.safetensors'}")
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 this is not a model")
    with pytest.raises(ModelLoadError, match="broken.zip.*not a valid MaskablePPO model"):
        make_policy(f"ppo-zip:{broken}")
    result = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", "--policy", f"ppo-zip:{broken}", "--games", "10", "--no-progress"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2 and "not a valid MaskablePPO model" in result.stderr and "Traceback" not in result.stderr


# -- runs are never destroyed; bad configs and models stop before the run folder is made ----------


def train_main(*argv):
    """train.py's main in this process: its one-line error, or None when it ran to the end."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_entry", ROOT / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        module.main(list(argv))
    except SystemExit as exit_:
        return str(exit_.code)
    return None


def test_resume_never_retrains_a_finished_run_and_finishes_a_cut_final_evaluation(tmp_path, capsys):
    """Defect 5: --resume retrained from an older checkpoint and replaced model.zip."""
    assert train_main("--config", "configs/quick.yaml", "--runs-dir", str(tmp_path), "name=done", *TINY, "ppo.policy=mlp") is None
    run = tmp_path / "done"
    model = run / "model.zip"
    before = (model.stat().st_ino, model.read_bytes())
    (run / "eval.json").unlink()  # killed during the final evaluation, after model.zip was written
    (run / "model.safetensors").unlink()
    capsys.readouterr()
    assert train_main("--resume", str(run)) is None
    out = capsys.readouterr().out
    assert "finishing its final evaluation" in out and "resuming" not in out
    assert (run / "eval.json").exists() and (run / "model.safetensors").exists()
    assert (model.stat().st_ino, model.read_bytes()) == before
    assert train_main("--resume", str(run), "ppo.total_timesteps=4096") is None
    assert "nothing to resume" in capsys.readouterr().out and (model.stat().st_ino, model.read_bytes()) == before


@pytest.mark.parametrize(
    "override, message",
    [
        ("run.eval_seed=-3", "override 'run.eval_seed=-3': run.eval_seed: Input should be greater than or equal to 0"),
        ("seed=-1", "override 'seed=-1': seed"),
        ("seed=4294967296", "override 'seed=4294967296': seed: Input should be less than 4294967296"),  # numpy's 32 bits
        ("ppo.net_arch=[-5,64]", "layer widths must be >= 1, got [-5, 64]"),
        ("ppo.net_arch=[]", "ppo.net_arch: List should have at least 1 item"),
        ("ppo.learning_rate=.nan", "the learning rate must be a finite number > 0, got nan"),
        ("ppo.learning_rate=-1e-3", "the learning rate must be a finite number > 0"),
        ("ppo.learning_rate=fast", "ppo.learning_rate: expected a number or a schedule {start: ..., end: ...}, got 'fast'"),
        ("ppo.ent_coef=-0.1", "the entropy coefficient must be a finite number >= 0"),
        ("ppo.ent_coef=.nan", "the entropy coefficient must be a finite number >= 0, got nan"),
        ("env.illegal_action_penalty=.nan", "env.illegal_action_penalty: Input should be a finite number"),
        ("ppo.learnig_rate=1e-4", "override 'ppo.learnig_rate=1e-4': unknown key 'ppo.learnig_rate'"),
        ("name=../../escaped", "a run name is a plain folder name"),
        ("name=/tmp/absolute", "a run name is a plain folder name"),
        (
            "env.rules=yahtze",
            "override 'env.rules=yahtze': env.rules: unknown rule set 'yahtze'; expected one of yacht, "
            "yacht_exercism, yahtzee, yahtzee_forced_joker, yahtzee_no_joker, yahtzee_no_bonus, yatzy",
        ),
        ("env.rules=[yahtzee]", "env.rules: Input should be a valid string"),
    ],
)
def test_bad_config_values_are_refused_before_the_run_folder_is_made(tmp_path, override, message):
    """Defects 6, 7 and 9: these trained (or escaped runs/) and then failed, or answered in noise."""
    runs = tmp_path / "runs"
    error = train_main("--config", "configs/quick.yaml", "--runs-dir", str(runs), *TINY, override)
    assert error is not None and message in error and "\n" not in error, error
    assert not runs.exists() and not (tmp_path / "escaped").exists() and not Path("/tmp/absolute").exists()


def test_a_table_run_needs_final_evaluation_games_for_every_seat(tmp_path):
    error = train_main(
        "--config",
        "configs/win_vs_optimal.yaml",
        "--runs-dir",
        str(tmp_path / "runs"),
        "run.final_eval_games=3",
        "ppo.init_from=null",
    )
    assert "run.final_eval_games must be at least 4 at a table of 2" in error and not (tmp_path / "runs").exists()


def test_a_table_run_trains_and_is_judged_under_its_rule_set(tmp_path):
    runs = tmp_path / "runs"
    error = train_main(
        "--config",
        "configs/win_vs_optimal.yaml",
        "--runs-dir",
        str(runs),
        "env.rules=yahtzee",
        "ppo.init_from=null",
        "env.opponents=[greedy]",
        "name=table",
        *TINY,
        "env.vectorized=false",
        "ppo.policy=mlp",
    )
    assert error is None, error
    result = json.loads((runs / "table" / "eval.json").read_text())
    assert result["rules"] == "yahtzee" and result["table"][1] == "greedy"
    greedy = result["standings"][1]
    assert greedy["mean_score"] > 180  # greedy's Yahtzee scores (about 218), far above its Yacht ones (about 156)
    with (runs / "table" / "learning_curve.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 2


@pytest.mark.parametrize("rules", ["yahtzee", "yatzy"])
def test_rule_set_configs_are_the_quick_config_on_other_rules(rules):
    config, quick = load_config(ROOT / f"configs/{rules}_quick.yaml"), load_config(ROOT / "configs/quick.yaml")
    assert config.env.rules == rules and quick.env.rules == "yacht"
    assert config.ppo == quick.ppo and config.run == quick.run


def test_config_files_that_are_empty_binary_or_folders_are_refused(tmp_path):
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "binary.yaml").write_bytes(bytes(range(256)))
    for config, message in (("empty.yaml", "is empty"), ("binary.yaml", "is not a text file"), (".", "is a folder")):
        error = train_main("--config", str(tmp_path / config), "--runs-dir", str(tmp_path / "runs"))
        assert message in error and "\n" not in error, error
    error = train_main("--resume", str(tmp_path / "no-such-run"))
    assert "there is no run folder there" in error
    error = train_main("--resume", str(tmp_path))
    assert "holds no config.yaml" in error
    assert not (tmp_path / "runs").exists()


def test_models_from_another_env_and_cut_checkpoints_give_one_line(tmp_path):
    """Defects 6 and 9: a checkpoint or ppo.init_from of another env, or a cut one, gave a traceback."""
    runs = tmp_path / "runs"
    flat = [*TINY, "ppo.policy=mlp", "env.observation_encoding=flat"]
    error = train_main(
        "--config", "configs/quick.yaml", "--runs-dir", str(runs), *flat, f"ppo.init_from={ROOT / 'models/ppo.zip'}"
    )
    assert "ppo.init_from" in error and "reads observations Box(0.0, 1.0, (63,)" in error and "\n" not in error
    assert not runs.exists()
    cut = tmp_path / "cut.zip"
    cut.write_bytes((ROOT / "models/ppo.zip").read_bytes()[:100_000])
    error = train_main("--config", "configs/quick.yaml", "--runs-dir", str(runs), *TINY, f"ppo.init_from={cut}")
    assert "cut.zip" in error and "\n" not in error and not runs.exists()

    run = tmp_path / "foreign"
    (run / "checkpoints").mkdir(parents=True)
    from agents.training.config import dump_config

    (run / "config.yaml").write_text(dump_config(load_config(ROOT / "configs/quick.yaml", flat)))
    for name, data in (("step_512.zip", (ROOT / "models/ppo.zip").read_bytes()), ("step_1024.zip", cut.read_bytes())):
        (run / "checkpoints" / name).write_bytes(data)
        error = train_main("--resume", str(run))
        assert f"checkpoint '{run / 'checkpoints' / name}' cannot be resumed" in error and "\n" not in error, error
    assert sorted(p.name for p in run.iterdir()) == ["checkpoints", "config.yaml"]
