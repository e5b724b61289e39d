"""A masked DQN run's replay buffer, saved beside its checkpoint so that ``--resume`` continues with the same memory.

DQN learns from the transitions of its recent past; a run resumed with an empty buffer would fit its first gradient
steps to a handful of transitions and learn something else than the run it continues. So every checkpoint
(checkpoints/step_<N>.zip) writes the buffer too, as ``checkpoints/replay.npz``: the filled part of each array of
stable-baselines3's ``DictReplayBuffer`` (observations and next observations with their legal actions, actions,
rewards, dones, timeouts), its write position, whether it has wrapped, and ``steps``, the checkpoint's step count.
One file, replaced at each checkpoint, since only the latest checkpoint is resumed from.

It is a plain ``.npz`` of numbers read with ``allow_pickle=False``, within a size bound, every array's name, dtype and
shape checked against the buffer it is read into; anything else is a ``ModelLoadError`` in one line.
"""

from __future__ import annotations

from pathlib import Path
from zipfile import BadZipFile

import numpy as np

from agents.learned.model_files import ModelLoadError
from yacht_env.atomic_files import write_atomically
from yacht_env.bounded_input import InputBoundsError, check_regular_file

REPLAY_NAME = "replay.npz"
MAX_REPLAY_BYTES = 64 * 2**30  # above any buffer a config allows (the largest, 1e8 Yatzy features transitions: 63.5 GiB)
ARRAYS = ("actions", "rewards", "dones", "timeouts")
# What reading a file that is not a whole replay.npz raises: a size or kind refused, a read error, not a .npz at all,
# or zipfile's own for a cut or altered archive (a bad central directory, an unknown compression, an encrypted member).
UNREADABLE = (InputBoundsError, OSError, ValueError, EOFError, BadZipFile, NotImplementedError, RuntimeError)


def buffer_arrays(buffer) -> dict[str, np.ndarray]:
    """Every array of ``buffer`` (a ``DictReplayBuffer``) by the name the file gives it, whole."""
    arrays = {
        f"{part}.{key}": array for part in ("observations", "next_observations") for key, array in getattr(buffer, part).items()
    }
    arrays.update({name: getattr(buffer, name) for name in ARRAYS})
    return arrays


def filled(buffer) -> int:
    """The rows of ``buffer`` that hold transitions: all once it has wrapped, else those before its write position."""
    return buffer.buffer_size if buffer.full else buffer.pos


def save_replay(buffer, folder: Path, steps: int) -> Path:
    """Write the filled part of ``buffer`` and its state as ``folder/replay.npz``, atomically; return the path."""
    rows = filled(buffer)
    arrays = {name: array[:rows] for name, array in buffer_arrays(buffer).items()}
    arrays.update(pos=np.array(buffer.pos), full=np.array(buffer.full), steps=np.array(steps))
    path = folder / REPLAY_NAME
    write_atomically(path, lambda handle: np.savez(handle, **arrays))  # type: ignore[arg-type]  # numpy's stub types **kwds as allow_pickle's bool
    return path


def load_replay(buffer, folder: Path, steps: int) -> bool:
    """Fill ``buffer`` from ``folder/replay.npz`` if it was saved at ``steps``; whether it was.

    ``ModelLoadError`` (one line) if the file is there but is not a replay buffer that fits ``buffer``.
    """
    path = folder / REPLAY_NAME
    if not path.exists():
        return False
    where = f"replay buffer {str(path)!r}"
    try:
        check_regular_file(path, MAX_REPLAY_BYTES)
        with np.load(path, allow_pickle=False) as data:
            saved = {name: data[name] for name in data.files}
    except UNREADABLE as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ModelLoadError(f"{where} cannot be read: {detail[:200]}") from None
    state = check_state(saved, buffer, where)
    if state["steps"] != steps:
        return False  # a replay of another checkpoint (a kill between the two writes): the run starts a new one
    rows = buffer.buffer_size if state["full"] else state["pos"]
    for name, array in buffer_arrays(buffer).items():
        if name not in saved or saved[name].dtype != array.dtype or saved[name].shape != (rows, *array.shape[1:]):
            got = "none" if name not in saved else f"{saved[name].dtype} {saved[name].shape}"
            raise ModelLoadError(
                f"{where}: array {name} is {got}, this run's buffer needs {array.dtype} {(rows, *array.shape[1:])}"
            )
        array[:rows] = saved[name]
    buffer.pos, buffer.full = state["pos"], state["full"]
    return True


def check_state(saved: dict, buffer, where: str) -> dict:
    """The ``pos``, ``full`` and ``steps`` of a saved buffer, checked to be numbers that fit ``buffer``."""
    expected = {*buffer_arrays(buffer), "pos", "full", "steps"}
    if set(saved) != expected:
        unknown, missing = sorted(set(saved) - expected)[:3], sorted(expected - set(saved))[:3]
        raise ModelLoadError(
            f"{where}: arrays do not fit this run's buffer (missing {missing or 'none'}, unexpected {unknown or 'none'})"
        )
    scalars = {name: saved[name] for name in ("pos", "full", "steps")}
    if any(value.shape != () or value.dtype.kind not in "biu" for value in scalars.values()):
        raise ModelLoadError(f"{where}: pos, full and steps must be single integers")
    pos, full, steps = int(scalars["pos"]), bool(scalars["full"]), int(scalars["steps"])
    if not 0 <= pos < buffer.buffer_size or steps < 0:
        raise ModelLoadError(
            f"{where}: pos {pos} is outside this run's buffer of {buffer.buffer_size:,} rows, or steps {steps} < 0"
        )
    return {"pos": pos, "full": full, "steps": steps}
