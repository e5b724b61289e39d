"""The checkpoints of a training run: checkpoints/step_<N><suffix>, N what the run had done when it was saved.

A stable-baselines3 run (train.py, :mod:`agents.training.dqn_train`) writes step_<steps>.zip, a planning run
(:mod:`agents.training.plan_train`) step_<games>.safetensors, each atomically. A name that holds no count is
refused in one line before a run starts or resumes, and a resume starts from the checkpoint of the largest count
(:func:`load_sb3_checkpoint` reads a stable-baselines3 one).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from agents.learned.model_files import ModelLoadError
from agents.policies.guard import first_line
from agents.training.config import ConfigError, shorten
from yacht_env.bounded_input import check_regular_file

if TYPE_CHECKING:
    from stable_baselines3.common.base_class import BaseAlgorithm

CHECKPOINT_NAME = re.compile(r"step_([0-9]{1,15})")
T = TypeVar("T", bound="BaseAlgorithm")
MAX_CHECKPOINT_BYTES = 4 * 2**30  # a checkpoint of the widest network the budget lets a machine train is far smaller


def checkpoint_count(path: Path) -> int:
    """The count in a checkpoint's name ``step_<N><suffix>`` (``ConfigError`` where the name holds none)."""
    name = CHECKPOINT_NAME.fullmatch(path.stem)
    if name is None:
        raise ConfigError(f"checkpoint {shorten(str(path), 300)} is not named step_<N>{path.suffix}")
    return int(name.group(1))


def check_checkpoint_names(run_dir: Path, suffix: str = ".zip", counts: str = "steps") -> None:
    """``ConfigError`` naming a file ``checkpoints/step_*<suffix>`` whose name holds no count of ``counts``."""
    for path in sorted((run_dir / "checkpoints").glob(f"step_*{suffix}")):
        if not CHECKPOINT_NAME.fullmatch(path.stem):
            raise ConfigError(
                f"checkpoint {shorten(str(path), 300)} is not named step_<N>{suffix} with N its {counts}: "
                "rename it, or move it out of checkpoints/"
            )


def latest_checkpoint(run_dir: Path, suffix: str = ".zip", counts: str = "steps") -> Path | None:
    """The run's checkpoint of the largest count, or None if it has none; ``ConfigError`` for a name that holds no
    count (checked here too, so that every resume is guarded, a sweep trial's as train.py's).
    """
    check_checkpoint_names(run_dir, suffix, counts)
    return max(sorted((run_dir / "checkpoints").glob(f"step_*{suffix}")), key=checkpoint_count, default=None)


def load_sb3_checkpoint(algorithm: type[T], path: Path, env, run_dir: Path, learning_rate) -> T:
    """A checkpoint of this run read by ``algorithm`` (a stable-baselines3 algorithm class) onto ``env``, on the CPU,
    logging to ``run_dir``/tb, its learning rate ``learning_rate`` from the config (the schedule is rebuilt by the
    caller, not unpickled); ``ModelLoadError`` in one line if it cannot be resumed. A FIFO, a device or a file over
    ``MAX_CHECKPOINT_BYTES`` in its place is refused before it is opened; a cut or foreign zip fails in many ways inside
    SB3, and is told by its error's first line.
    """
    try:
        check_regular_file(path, MAX_CHECKPOINT_BYTES)
        return algorithm.load(
            path,
            env=env,
            device="cpu",
            tensorboard_log=str(run_dir / "tb"),
            custom_objects={"learning_rate": learning_rate, "lr_schedule": None},
        )
    except Exception as error:  # whatever the loader raises, the file is the problem
        raise ModelLoadError(f"checkpoint {str(path)!r} cannot be resumed: {first_line(error)}") from None
