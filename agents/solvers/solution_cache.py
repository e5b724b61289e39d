"""Solved value arrays kept on disk, so that a second process loads what the first one solved.

Every solver that keeps its arrays (the sheet solver behind :func:`agents.solvers.optimal.solve`, the target
DP of :mod:`agents.solvers.target`) keeps them here, in one folder: ``$YACHT_RL_CACHE_DIR`` or else
``$XDG_CACHE_HOME/yacht-rl`` (``~/.cache/yacht-rl``). Setting ``YACHT_RL_CACHE_DIR`` to an empty
string turns the cache off.

A file per rule set, solution kind and solver version, named by what the rules do, not by their names,
and by a digest of the solver's source (:func:`source_version`), so that a changed solver never reads a
array an older one stored. Files are
written atomically (:mod:`yacht_env.atomic_files`) and read as plain arrays (``allow_pickle=False``);
a file that does not hold the expected array is ignored and solved again, and a folder that cannot
be written only costs the next process a solve.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import warnings
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np

from yacht_env.atomic_files import write_atomically

CACHE_ENV = "YACHT_RL_CACHE_DIR"
FORMAT = 1  # bump when the meaning of a stored array changes


def cache_dir() -> Path | None:
    """The cache folder, or ``None`` when ``YACHT_RL_CACHE_DIR`` is set empty (no disk cache)."""
    if CACHE_ENV in os.environ:
        configured = os.environ[CACHE_ENV]
        return Path(configured).expanduser() if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "yacht-rl"


@functools.cache
def source_version(*modules: str) -> str:
    """A short digest of the source files of ``modules`` (dotted names): the version of a solver built from them.

    Any edit to those files gives another version, so a array solved before the edit is never read after it.
    """
    digest = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        origin = None if spec is None else spec.origin
        if origin is None or not Path(origin).is_file():
            raise ValueError(f"solver module {name!r} has no source file to version its arrays by")
        digest.update(name.encode() + b"\0" + Path(origin).read_bytes())
    return digest.hexdigest()[:12]


def cache_path(key: str) -> Path | None:
    """The file that holds the values stored under ``key`` (``None`` when the cache is off)."""
    folder = cache_dir()
    return None if folder is None else folder / f"values-v{FORMAT}-{key}.npz"


def load_values(key: str, shape: tuple[int, ...]) -> np.ndarray | None:
    """The float64 array of ``shape`` stored under ``key``, or ``None`` if absent or not readable as such."""
    return _load(cache_path(key), shape)


def store_values(key: str, values: np.ndarray) -> Path | None:
    """Write ``values`` under ``key``; returns the file, or ``None`` if the cache is off or unwritable."""
    return _store(cache_path(key), values)


def cached_array(
    file_name: str,
    shape: tuple[int, ...],
    build: Callable[[], np.ndarray],
    accept: Callable[[np.ndarray], bool] = lambda values: True,
) -> np.ndarray:
    """The float64 array of ``shape`` in ``file_name`` (``.npy``) of the cache folder, else ``build()``, then stored.

    A file whose array has another shape or type, or that ``accept`` refuses, is built again and
    overwritten; with the cache off every call builds.
    """
    folder = cache_dir()
    path = None if folder is None else folder / file_name
    values = _load(path, shape)
    if values is not None and accept(values):
        return values
    values = build()
    _store(path, values)
    return values


def _load(path: Path | None, shape: tuple[int, ...]) -> np.ndarray | None:
    if path is None or not path.is_file():
        return None
    try:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as stored:
                values = stored["values"]
        else:
            values = np.load(path, allow_pickle=False)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if values.shape != shape or values.dtype != np.float64:
        return None
    values.setflags(write=False)
    return values


def _store(path: Path | None, values: np.ndarray) -> Path | None:
    if path is None:
        return None
    if path.suffix == ".npz":
        write = lambda handle: np.savez(handle, values=values)
    else:
        write = lambda handle: np.save(handle, np.ascontiguousarray(values), allow_pickle=False)
    try:
        write_atomically(path, write)
    except OSError as error:
        warnings.warn(f"could not cache solved values in {path.parent}: {error}", stacklevel=3)
        return None
    return path
