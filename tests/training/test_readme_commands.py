"""The train.py and agents.evaluate commands of the README and the documentation site, run as written from a fresh folder.

Each runs with a small budget.

A fresh folder is what a user has after cloning: relative paths (configs/, runs/, models/) resolve
against it, not against this repository, so a command that works only with absolute paths fails
here as it would for them. The budget is cut by overrides (``key=value``, ``sweep.key=value``,
``--games``), never by changing the command itself.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.training.test_train import TINY

ROOT = Path(__file__).resolve().parents[2]
ONE_TINY_TRIAL = [
    "sweep.num_samples=1",
    "sweep.space={ppo.lookahead_temperature: {grid: [0.3]}}",
    "sweep.scheduler.grace_period=512",
    "sweep.max_concurrent_trials=1",
]
COMMAND = re.compile(r"^(?:\S+=\S+ )*python (?:train\.py|-m agents\.evaluate)\b")
NEEDS_A_CLUSTER = "HEAD_IP"  # the cluster examples: no cluster here
PLACEHOLDER = "NAME"  # `--rules NAME`: a name to fill in


def readme_commands() -> list[str]:
    """Every train.py and agents.evaluate command the README and the docs pages show, in their order, comments dropped."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    lines = [line for page in pages for line in page.read_text().splitlines()]
    commands = []
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        while line.endswith("\\") and index + 1 < len(lines):  # a command continued on the next line
            index += 1
            line = line[:-1] + " " + lines[index].strip()
        if COMMAND.match(line):
            commands.append(re.split(r"\s+#\s", line)[0].strip())
        commands += re.findall(r"`(python (?:train\.py|-m agents\.evaluate)[^`]*)`", line)
        index += 1
    return list(dict.fromkeys(command.strip() for command in commands))


def with_small_budget(command: str) -> list[str]:
    """The command's arguments (``python`` made this interpreter), with overrides that make it take seconds."""
    words = shlex.split(command)
    assert words[0] == "python", command
    words[0] = sys.executable
    if words[1] == "train.py":
        return [*words, *(ONE_TINY_TRIAL if "--sweep" in words else []), *TINY]
    if "--games" in words:
        words[words.index("--games") + 1] = "20"
    else:
        words += ["--games", "20"]
    return [*words, "--no-progress"]


def fresh_folder(tmp_path: Path) -> Path:
    """What a clone holds for these commands: train.py, configs/ and models/ (the code is imported from here)."""
    folder = tmp_path / "clone"
    folder.mkdir()
    shutil.copy(ROOT / "train.py", folder / "train.py")
    shutil.copytree(ROOT / "configs", folder / "configs")
    shutil.copytree(ROOT / "models", folder / "models")
    return folder


def run_as_written(command: str, folder: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """The command in ``folder``, with the small budget; the code under test found through PYTHONPATH."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        with_small_budget(command), cwd=folder, capture_output=True, text=True, timeout=timeout, env=environment
    )


def failure(command: str, result: subprocess.CompletedProcess) -> str:
    return f"{command!r} failed ({result.returncode}): {result.stdout[-1500:]} {result.stderr[-3000:]}"


def test_the_readme_commands_are_found():
    commands = readme_commands()
    assert "python train.py --config configs/quick.yaml" in commands
    assert "python train.py --sweep configs/sweep_quick.yaml" in commands
    assert "python train.py --resume runs/ppo" in commands
    assert any(command.startswith("python -m agents.evaluate --policy random --policy greedy") for command in commands)
    assert all(COMMAND.match(command) for command in commands)


def test_the_quick_start_runs_as_written_from_a_fresh_folder(tmp_path):
    folder = fresh_folder(tmp_path)
    for command in (
        "python train.py --config configs/quick.yaml",
        "python -m agents.evaluate --policy ppo:runs/quick/model.safetensors --policy greedy",
    ):
        assert command in readme_commands()
        result = run_as_written(command, folder)
        assert result.returncode == 0 and "Traceback" not in result.stderr, failure(command, result)
    assert (folder / "runs" / "quick" / "eval.json").exists()


def test_a_sweep_whose_grace_period_is_past_its_steps_is_refused_before_ray_starts(tmp_path):
    """ASHA's grace period 200,000 against ppo.total_timesteps=8192 ended in Ray's AssertionError traceback."""
    folder = fresh_folder(tmp_path)
    words = [sys.executable, "train.py", "--sweep", "configs/sweep_quick.yaml", "ppo.total_timesteps=8192"]
    result = subprocess.run(
        words, cwd=folder, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    line = result.stderr.strip()
    assert result.returncode == 1 and "\n" not in line and "Traceback" not in line, line
    assert "grace_period 200,000" in line and "ppo.total_timesteps 8,192" in line
    assert not (folder / "runs").exists()  # refused before the sweep folder (or Ray) was made


@pytest.mark.slow
def test_the_readme_sweep_runs_as_written_from_a_fresh_folder(tmp_path):
    """From a fresh folder, the sweep handed Ray the relative path runs/sweep_quick/tune: pyarrow's ArrowInvalid."""
    folder = fresh_folder(tmp_path)
    command = "python train.py --sweep configs/sweep_quick.yaml"
    result = run_as_written(command, folder)
    assert result.returncode == 0 and "Traceback" not in result.stderr, failure(command, result)
    trial = folder / "runs" / "sweep_quick" / "t00_lookahead_temperature=0.3"
    assert (trial / "eval.json").exists() and (folder / "runs" / "sweep_quick" / "trials.csv").exists()


@pytest.mark.slow
def test_every_readme_command_runs_as_written_from_a_fresh_folder(tmp_path):
    """All of them, in the README's order, in one folder: a later command may use an earlier one's run."""
    folder = fresh_folder(tmp_path)
    failures = []
    for command in readme_commands():
        if NEEDS_A_CLUSTER in command or PLACEHOLDER in command.split():
            continue
        result = run_as_written(command, folder)
        if result.returncode != 0 or "Traceback" in result.stderr:
            failures.append(failure(command, result))
    assert not failures, "\n\n".join(failures)
