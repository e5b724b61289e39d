"""The one writer of every output file: a crash, Ctrl-C or a kill never leaves half of one behind, and only a file is
ever replaced.

:func:`write_atomically` writes a temporary file beside the target, then renames it over the target. A rename puts a
new file where the path was, so it is done only where that is what writing the path means:

* a new path, or a regular file: replaced atomically (the old file or the new one, never half of each);
* a symbolic link: followed to the end of its chain, and the regular file it names replaced there (the link stays a
  link, as ``open(path, "w")`` would leave it); a link to nothing, or to something other than a regular file, is
  refused like that thing;
* a folder, a device (``/dev/full``, ``/dev/stdout``), a FIFO or a socket: refused with :class:`OutputError`, before
  anything is written and with nothing changed (renaming over ``/dev/null`` would turn the device into a file).

Every failure to write, the checks above or the operating system's own (no permission, a disk full), is an
:class:`OutputError`: an ``OSError`` whose message is one line naming the path asked for (never the temporary file).
:func:`output_folder` is the same for an output folder (``yacht report --csv DIR``).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

PARTIAL_SUFFIX = ".partial"


class OutputError(OSError):
    """An output path that cannot be written; ``str()`` is one line naming the path and why."""

    def __init__(self, path: str | Path, reason: str, code: int = 0):
        super().__init__(code, reason, str(path))

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words."""
    kinds = (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def output_target(path: str | Path) -> Path:
    """The file that writing ``path`` replaces: ``path`` itself when new or a regular file, the regular file a
    symbolic link leads to; :class:`OutputError` for anything else (nothing is touched).
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # follows links: the thing a link names is what gets written
    except FileNotFoundError:
        if os.path.islink(path):
            raise OutputError(path, f"a symbolic link to {os.readlink(path)}, which does not exist") from None
        return path
    except OSError as error:
        raise OutputError(path, error.strerror or str(error), error.errno or 0) from None
    if not stat.S_ISREG(mode):
        hint = "; give a file path in it" if stat.S_ISDIR(mode) else ", not a regular file; give a file path"
        raise OutputError(path, f"it is {file_kind(mode)}{hint}")
    return Path(os.path.realpath(path)) if os.path.islink(path) else path


def output_folder(path: str | Path) -> Path:
    """``path`` as a folder to write files into, made (with its parents) if missing; :class:`OutputError` if it is
    something else.
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(path, f"it is {file_kind(os.stat(path).st_mode)}, not a folder; give a folder path") from None
    except OSError as error:
        raise OutputError(path, error.strerror or str(error), error.errno or 0) from None
    return path


def check_outputs(files=(), folders=()) -> None:
    """Refuse, before any work, an output path that the write at the end would refuse (``None`` paths are skipped)."""
    for path in files:
        if path is not None:
            output_target(path)
    for path in folders:
        if path is not None and os.path.lexists(path):
            output_folder(path)


def write_atomically(path: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` through ``write(handle)`` on a temporary file in the same folder, then rename it over the target
    (:func:`output_target`): a crash never leaves half a file, and only a regular file is ever replaced.

    The temporary file is hidden and ends in ``.partial``, so a kill (which no handler can catch) leaves
    at most a ``.<name>.<random>.partial`` that nothing mistakes for the real file;
    :func:`remove_partial_files` clears them away.
    """
    target = output_target(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=PARTIAL_SUFFIX)
    except OSError as error:
        raise OutputError(path, error.strerror or str(error), error.errno or 0) from None
    try:
        os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp makes 0600; the file gets what open() would give
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError) and not isinstance(error, OutputError):
            raise OutputError(path, error.strerror or str(error), error.errno or 0) from error
        raise


def current_umask() -> int:
    """The process's umask (read by setting it and restoring it at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def remove_partial_files(folder: str | Path) -> list[Path]:
    """Delete the temporary files that killed writes left under ``folder``; return what was removed."""
    stale = sorted(Path(folder).rglob(f".*{PARTIAL_SUFFIX}"))
    for path in stale:
        path.unlink(missing_ok=True)
    return stale
