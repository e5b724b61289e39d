"""Solved value tables kept on disk, so that a second process loads what the first one solved.

A file per rule set and solution kind, named by :attr:`yacht_env.rules.RuleSet.fingerprint` (a hash
of what the rules do, not of their names), under ``$YACHT_RL_CACHE_DIR`` or else
``$XDG_CACHE_HOME/yacht-rl`` (``~/.cache/yacht-rl``). Setting ``YACHT_RL_CACHE_DIR`` to an empty
string turns the cache off. Files are written atomically (:mod:`yacht_env.atomic_files`) and read
as plain arrays (``allow_pickle=False``); a file that does not hold the expected array is ignored
and solved again, and a folder that cannot be written only costs the next process a solve.
"""

from __future__ import annotations

import os
import warnings
import zipfile
from pathlib import Path

import numpy as np

from yacht_env.atomic_files import write_atomically

CACHE_ENV = "YACHT_RL_CACHE_DIR"
FORMAT = 1  # bump when the meaning of a stored table changes


def cache_dir() -> Path | None:
    """The cache folder, or ``None`` when ``YACHT_RL_CACHE_DIR`` is set empty (no disk cache)."""
    if CACHE_ENV in os.environ:
        configured = os.environ[CACHE_ENV]
        return Path(configured).expanduser() if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "yacht-rl"


def cache_path(key: str) -> Path | None:
    """The file that holds the values stored under ``key`` (``None`` when the cache is off)."""
    folder = cache_dir()
    return None if folder is None else folder / f"values-v{FORMAT}-{key}.npz"


def load_values(key: str, shape: tuple[int, ...]) -> np.ndarray | None:
    """The float64 array of ``shape`` stored under ``key``, or ``None`` if absent or not readable as such."""
    path = cache_path(key)
    if path is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as stored:
            values = stored["values"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if values.shape != shape or values.dtype != np.float64:
        return None
    values.setflags(write=False)
    return values


def store_values(key: str, values: np.ndarray) -> Path | None:
    """Write ``values`` under ``key``; returns the file, or ``None`` if the cache is off or unwritable."""
    path = cache_path(key)
    if path is None:
        return None
    try:
        write_atomically(path, lambda handle: np.savez(handle, values=values))
    except OSError as error:
        warnings.warn(f"could not cache solved values in {path.parent}: {error}", stacklevel=2)
        return None
    return path
