"""train.py and its configs: validation, a real tiny run, resume after a kill, model loading errors."""

import csv
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

from agents.training.config import ConfigError, load_config
from agents.policy import make_policy
from agents.ppo import ModelLoadError

ROOT = Path(__file__).resolve().parents[1]
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


@pytest.mark.parametrize("path", sorted(p for p in (ROOT / "configs").glob("*.yaml") if not p.name.startswith("sweep_")))  # sweeps: test_sweep.py
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


@pytest.mark.parametrize("vectorized", [False, True])
def test_tiny_run_writes_a_loadable_model(tmp_path, vectorized):
    # the plain network here; tests/test_lookahead_policy.py runs the look-ahead policy quick.yaml uses
    run_train("--config", "configs/quick.yaml", "--runs-dir", str(tmp_path), "name=tiny", f"env.vectorized={vectorized}", *TINY, "ppo.policy=mlp")
    run = tmp_path / "tiny"
    assert (run / "config.yaml").exists() and (run / "eval.json").exists()
    assert list((run / "tb").rglob("events.out.tfevents.*"))
    rows = list(csv.DictReader((run / "learning_curve.csv").open()))
    assert [int(r["steps"]) for r in rows] == sorted(int(r["steps"]) for r in rows) and rows
    policy = make_policy(f"ppo:{run / 'model.zip'}")
    assert policy.model.num_timesteps >= 1024
    env = gym.make("Yacht-v0")
    obs, info = env.reset(seed=0)
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(policy.act(obs, info["action_mask"]))
        assert not info["illegal_action"]


def test_resume_after_a_kill_continues_the_step_count(tmp_path):
    run = tmp_path / "killed"
    args = ["--config", "configs/quick.yaml", "--runs-dir", str(tmp_path), "name=killed", *TINY, "ppo.total_timesteps=10000000"]
    process = subprocess.Popen([sys.executable, str(ROOT / "train.py"), *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while not list((run / "checkpoints").glob("step_*.zip")) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # let it get some way past the first checkpoint before the kill
    process.send_signal(signal.SIGKILL)
    process.wait()
    checkpoints = sorted((run / "checkpoints").glob("step_*.zip"), key=lambda p: int(p.stem.split("_")[1]))
    assert checkpoints, "no checkpoint was written before the kill"
    for checkpoint in checkpoints:  # the kill may land mid-save: every finished checkpoint must still load
        make_policy(f"ppo:{checkpoint}")
    leftover = run / "checkpoints" / ".step_999.zip.abc123.partial"
    leftover.write_bytes(b"PK\x03\x04 half a checkpoint")  # what a kill mid-save leaves behind
    done = int(checkpoints[-1].stem.split("_")[1])
    result = run_train("--resume", str(run), f"ppo.total_timesteps={done + 512}")
    assert f"from step_{done}.zip ({done:,} steps done)" in result.stdout
    assert not leftover.exists() and not list(run.rglob("*.partial"))
    model = make_policy(f"ppo:{run / 'model.zip'}").model
    assert model.num_timesteps >= done + 512
    rows = list(csv.DictReader((run / "learning_curve.csv").open()))
    steps = [int(r["steps"]) for r in rows]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)


def test_a_finished_run_is_not_overwritten(tmp_path):
    run_train("--config", "configs/quick.yaml", "--runs-dir", str(tmp_path), "name=once", *TINY)
    result = run_train("--config", "configs/quick.yaml", "--runs-dir", str(tmp_path), "name=once", *TINY, check=False)
    assert result.returncode != 0 and "--resume" in result.stderr


def test_missing_and_corrupted_models_give_clear_errors(tmp_path):
    with pytest.raises(ModelLoadError, match="no model file at .*missing.zip"):
        make_policy(f"ppo:{tmp_path / 'missing.zip'}")
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 this is not a model")
    with pytest.raises(ModelLoadError, match="broken.zip.*not a valid MaskablePPO model"):
        make_policy(f"ppo:{broken}")
    result = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", "--policy", f"ppo:{broken}", "--games", "10", "--no-progress"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 2 and "not a valid MaskablePPO model" in result.stderr and "Traceback" not in result.stderr
