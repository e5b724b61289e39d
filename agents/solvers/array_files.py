"""The one reader and writer of every solved array kept on disk (``.npy``), checked before a byte of it is trusted.

The single-player arrays (:mod:`agents.solvers.solution_cache`) and the two-player layers
(:mod:`agents.two_player.solve`) are read here, and a file is taken only if all of this holds:

- it is a regular file (a FIFO, a device such as ``/dev/zero`` or a folder is refused before it is opened
  for reading; a link counts as what it points to);
- its ``.npy`` header names the expected dtype and shape, in C order, and its size is exactly that header
  plus the array's bytes (so nothing larger than the array is ever read);
- the SHA-256 of the whole file matches the checksum written beside it, ``NAME.sha256``, in the format of
  ``sha256sum`` (``sha256sum -c NAME.sha256`` checks it by hand);
- the caller's range check passes on the values.

A file written before checksums were (no ``NAME.sha256``) is accepted after the size, header and range
checks: those catch a truncated, empty or out-of-range file, which is what damage looks like; a wrong
checksum is refused. Anything refused is an :class:`ArrayFileError` naming the file and the problem in one line.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
from pathlib import Path
from typing import Callable

import numpy as np

from yacht_env.atomic_files import write_atomically
from yacht_env.bounded_input import InputBoundsError, open_regular_file

CHECKSUM_SUFFIX = ".sha256"
MAX_HEADER_BYTES = 10_000  # numpy's own bound on a .npy header
CHUNK_BYTES = 1 << 22

Check = Callable[[np.ndarray], "str | None"]  # the problem with the values, or None when they are in range


class ArrayFileError(ValueError):
    """A stored array file that cannot be used; the message names the file and what is wrong, in one line."""


def checksum_path(path: Path) -> Path:
    """The file beside ``path`` that holds its SHA-256."""
    return path.with_name(path.name + CHECKSUM_SUFFIX)


def write_array(path: str | Path, values: np.ndarray) -> Path:
    """Write ``values`` as a ``.npy`` file with its checksum beside it, each atomically (``OSError`` if the folder cannot).

    The checksum goes first: a kill between the two leaves a checksum without its array, which reads as
    no array (and is written again with the next one), never an array under an older checksum.
    """
    path = Path(path)
    values = np.ascontiguousarray(values)
    data = values.view(np.uint8).reshape(-1).data  # the array's bytes, in memory order, not copied
    digest = hashlib.sha256()
    header = _npy_header(values)
    digest.update(header)
    digest.update(data)
    for target in (checksum_path(path), path):
        _clear_non_file(target)
    write_atomically(checksum_path(path), lambda handle: handle.write(f"{digest.hexdigest()}  {path.name}\n".encode()))

    def write(handle) -> None:
        handle.write(header)
        handle.write(data)

    write_atomically(path, write)
    return path


def _clear_non_file(path: Path) -> None:
    """Remove a FIFO, a device's node or a link to one (or to nothing) found where a stored array belongs.

    The cache folder is the project's own: such a thing there is damage, never a file someone wants written
    through, and an atomic write (which replaces only regular files) would otherwise be refused at every solve.
    """
    if (os.path.islink(path) or path.exists()) and not path.is_file() and not path.is_dir():
        path.unlink()


def _npy_header(values: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, np.lib.format.header_data_from_array_1_0(values))
    return buffer.getvalue()


def read_array(
    path: str | Path, dtype, shape: tuple[int, ...], check: Check | None = None, mmap: bool = False
) -> np.ndarray | None:
    """The array of ``dtype`` and ``shape`` stored at ``path``, read-only (memory-mapped with ``mmap``); ``None`` if absent.

    ``ArrayFileError`` (one line) for a file that is there but fails a check of the module's list.
    """
    path = Path(path)
    where = f"{path}"
    try:
        handle = open_regular_file(path)
    except (FileNotFoundError, NotADirectoryError):
        return None  # nothing stored there (or a parent is a file)
    except InputBoundsError:
        raise ArrayFileError(f"{where} is not a regular file (a folder, FIFO or device): not read") from None
    except OSError as error:
        raise ArrayFileError(f"{where} cannot be read: {error.strerror or error}") from None
    with handle:
        info = os.fstat(handle.fileno())
        if info.st_size == 0:
            raise ArrayFileError(f"{where} is empty (0 bytes): a write was cut short or the disk was full")
        data_offset = _check_header(handle, where, np.dtype(dtype), shape)
        expected = data_offset + int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        if info.st_size != expected:
            raise ArrayFileError(f"{where} is {info.st_size:,} bytes, expected {expected:,} for a {dtype} array of shape {shape}")
        _check_checksum(path, handle, where)
        handle.seek(data_offset)
        values: np.ndarray
        if mmap:
            values = np.memmap(handle, dtype=dtype, mode="r", offset=data_offset, shape=shape)
        else:
            values = np.fromfile(handle, dtype=dtype, count=int(np.prod(shape, dtype=np.int64))).reshape(shape)
            values.setflags(write=False)
    problem = None if check is None else check(values)
    if problem is not None:
        raise ArrayFileError(f"{where}: {problem}")
    return values


def _check_header(handle, where: str, dtype: np.dtype, shape: tuple[int, ...]) -> int:
    """Where the array's bytes start, after checking the ``.npy`` header names ``dtype`` and ``shape`` in C order."""
    try:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            header = np.lib.format.read_array_header_1_0(handle, max_header_size=MAX_HEADER_BYTES)
        elif version == (2, 0):
            header = np.lib.format.read_array_header_2_0(handle, max_header_size=MAX_HEADER_BYTES)
        else:
            raise ValueError(f"format version {version}")
    except Exception as error:  # numpy parses the header with ast and tokenize: a damaged one raises any of their errors
        detail = " ".join(str(error).split())[:120] or type(error).__name__
        raise ArrayFileError(f"{where} is not a .npy array file ({detail})") from None
    stored_shape, fortran, stored_dtype = header
    if stored_dtype != dtype or fortran or tuple(stored_shape) != tuple(shape):
        order = "Fortran" if fortran else "C"
        raise ArrayFileError(
            f"{where} holds a {stored_dtype} array of shape {tuple(stored_shape)} ({order} order), "
            f"expected {dtype} of shape {tuple(shape)}"
        )
    return handle.tell()


def _check_checksum(path: Path, handle, where: str) -> None:
    """Compare the file's SHA-256 with the one written beside it (none there: a file from before checksums)."""
    beside = checksum_path(path)
    try:
        info = beside.stat()
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISREG(info.st_mode) or info.st_size > 1_000:
        raise ArrayFileError(f"{beside} is not a checksum file: not read")
    expected = beside.read_text(encoding="ascii", errors="replace").split(maxsplit=1)[:1]
    digest = hashlib.sha256()
    handle.seek(0)
    while chunk := handle.read(CHUNK_BYTES):
        digest.update(chunk)
    if expected != [digest.hexdigest()]:
        raise ArrayFileError(f"{where} does not match its checksum {beside.name}: the file is damaged")
