"""The checkpoints of a stable-baselines3 run (PPO, DQN): checkpoints/step_<N>.zip, N the steps done when it was saved.

Written atomically by the run (train.py, :mod:`agents.training.dqn_train`); a name that holds no step count is
refused in one line before a run starts or resumes, and a resume starts from the checkpoint of most steps.
"""

from __future__ import annotations

import re
from pathlib import Path

from agents.training.config import ConfigError, shorten

CHECKPOINT_NAME = re.compile(r"step_([0-9]{1,15})")


def checkpoint_steps(path: Path) -> int:
    """The number of steps of a checkpoint file, read from its name ``step_<N>.zip``."""
    return int(path.stem.split("_")[-1])


def check_checkpoint_names(run_dir: Path) -> None:
    """``ConfigError`` naming a file ``checkpoints/step_*.zip`` whose name holds no step count."""
    for path in sorted((run_dir / "checkpoints").glob("step_*.zip")):
        if not CHECKPOINT_NAME.fullmatch(path.stem):
            raise ConfigError(
                f"checkpoint {shorten(str(path), 300)} is not named step_<N>.zip with N its steps: "
                "rename it, or move it out of checkpoints/"
            )


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The run's checkpoint of most steps, or None if it has none; ``ConfigError`` for a name that holds no step
    count (checked here too, so that every resume is guarded, a sweep trial's as train.py's).
    """
    check_checkpoint_names(run_dir)
    checkpoints = sorted((run_dir / "checkpoints").glob("step_*.zip"), key=checkpoint_steps)
    return checkpoints[-1] if checkpoints else None
