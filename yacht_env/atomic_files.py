"""Files written so that a crash, Ctrl-C or a kill never leaves half of one behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

PARTIAL_SUFFIX = ".partial"


def write_atomically(path: str | Path, write) -> None:
    """Write through a temporary file in the same folder, then rename: a crash never leaves half a file.

    The temporary file is hidden and ends in ``.partial``, so a kill (which no handler can catch) leaves
    at most a ``.<name>.<random>.partial`` that nothing mistakes for the real file;
    :func:`remove_partial_files` clears them away.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=PARTIAL_SUFFIX)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp makes 0600; the file gets what open() would give
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
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
