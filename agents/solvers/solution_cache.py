"""Solved value arrays kept on disk, so that a second process loads what the first one solved.

Every solver that keeps its arrays (the sheet solver behind :func:`agents.solvers.optimal.solve`, the target
DP of :mod:`agents.solvers.target`) keeps them here, in one folder: ``$YACHT_RL_CACHE_DIR`` or else
``$XDG_CACHE_HOME/yacht-rl`` (``~/.cache/yacht-rl``). Setting ``YACHT_RL_CACHE_DIR`` to an empty
string turns the cache off.

A file per rule set, solution kind and solver version, named by what the rules do, not by their names,
and by a digest of the solver's source (:func:`source_version`), so that a changed solver never reads a
array an older one stored. Files are ``.npy`` arrays with a SHA-256 beside them, written atomically and
read only through :mod:`agents.solvers.array_files` (a regular file of exactly the array's size, the
expected header, the checksum, the values in range); a file that fails a check is solved again and
overwritten (a warning says which and why), and a folder that cannot be written only costs the next
process a solve (a warning again). :func:`check_folder` is the check of a folder before a long solve
is stored in it (the two-player solution's layers).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import shutil
import warnings
from pathlib import Path
from typing import Callable

import numpy as np

from agents.solvers.array_files import ArrayFileError, Check, read_array, write_array

CACHE_ENV = "YACHT_RL_CACHE_DIR"
FORMAT = 2  # bump when the meaning or the layout of a stored array changes (2: .npy with a checksum, was .npz)


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


class CacheFolderError(OSError):
    """The cache folder cannot take what is to be stored; the message says why and what to do, in one line."""


def check_folder(folder: Path, needed_bytes: int, what: str) -> None:
    """Make ``folder`` if need be and check that it is a writable folder with ``needed_bytes`` free for ``what``.

    ``CacheFolderError`` (one line) if not: a path that is a file, a folder that cannot be written, a full disk.
    """
    advice = f"set {CACHE_ENV} to a writable folder with room for it"
    try:
        # Asking whether a path exists can fail too (a name longer than the file system allows).
        nearest = next(path for path in (folder, *folder.parents) if path.exists())
        if nearest.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CacheFolderError(f"cannot store {what} in {folder}: {error.strerror or error} ({advice})") from None
    if not nearest.is_dir():
        raise CacheFolderError(f"cannot store {what} in {folder}: {nearest} is a file, not a folder ({advice})")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CacheFolderError(f"cannot store {what} in {folder}: the folder is not writable ({advice})")
    free = shutil.disk_usage(folder).free
    if free < needed_bytes:
        raise CacheFolderError(
            f"cannot store {what} in {folder}: it needs {needed_bytes / 2**30:.2f} GiB, "
            f"the disk has {free / 2**30:.2f} GiB free ({advice})"
        )


def cache_path(key: str) -> Path | None:
    """The file that holds the values stored under ``key`` (``None`` when the cache is off)."""
    folder = cache_dir()
    return None if folder is None else folder / f"values-v{FORMAT}-{key}.npy"


def solved_values(values: np.ndarray) -> str | None:
    """The range check of a sheet solver's array: points still to come, so >= 0 and finite (NaN: a state no game reaches)."""
    if np.isinf(values).any() or (values < 0).any():
        return "holds negative or infinite points: not a solved array"
    return None


def load_values(key: str, shape: tuple[int, ...]) -> np.ndarray | None:
    """The float64 array of ``shape`` stored under ``key``, or ``None`` if absent or not that (damaged: said in a warning)."""
    return _load(cache_path(key), shape, solved_values)


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

    A file that fails the checks of :func:`agents.solvers.array_files.read_array`, or whose values ``accept``
    refuses, is built again and overwritten; with the cache off every call builds.
    """
    folder = cache_dir()
    path = None if folder is None else folder / file_name
    values = _load(path, shape, lambda values: None if accept(values) else "holds values out of range: not a solved array")
    if values is not None:
        return values
    values = build()
    _store(path, values)
    return values


def _load(path: Path | None, shape: tuple[int, ...], check: Check) -> np.ndarray | None:
    if path is None:
        return None
    try:
        return read_array(path, np.float64, shape, check)
    except ArrayFileError as error:
        warnings.warn(f"{error}: solving it again", stacklevel=3)
        return None


def _store(path: Path | None, values: np.ndarray) -> Path | None:
    if path is None:
        return None
    try:
        write_array(path, np.asarray(values, dtype=np.float64))
    except OSError as error:
        warnings.warn(f"could not cache solved values in {path.parent}: {error}", stacklevel=3)
        return None
    return path
