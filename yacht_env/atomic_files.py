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
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def remove_partial_files(folder: str | Path) -> list[Path]:
    """Delete the temporary files that killed writes left under ``folder``; return what was removed."""
    stale = sorted(Path(folder).rglob(f".*{PARTIAL_SUFFIX}"))
    for path in stale:
        path.unlink(missing_ok=True)
    return stale
