r"""What a one-line error repeats of the input it refuses: short, and never a terminal escape.

A policy name, a database URL, a file name or a field of a record may be 100,000 characters long or hold an
ESC (``\x1b]0;...`` retitles the terminal, others move the cursor), a bidirectional override or a newline.
Every error message that echoes such a value writes it through here: :func:`echoed` for a value (quoted, as
``repr`` writes it), :func:`echoed_path` for a file name or URL leading a message (unquoted), both cut at a bound
with an ellipsis and the full length.
"""

from __future__ import annotations

import os

from yacht_env.safe_text import escaped_controls

MAX_ECHO = 60  # characters of a value repeated in an error message
MAX_PATH_ECHO = 200  # of a file name or URL: a real one is longer than a value, and still fits a line or two


def _cut(length: int) -> str:
    return f"... ({length:,} characters)"


def echoed(value, limit: int = MAX_ECHO) -> str:
    """``value`` as an error message repeats it: ``repr(value)`` (quoted, every control character escaped), of
    at most ``limit`` characters of the value, then ``... (N characters)`` where it was cut.
    """
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else repr(value[:limit]) + _cut(len(value))
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + _cut(len(text))


def echoed_path(path: str | os.PathLike, limit: int = MAX_PATH_ECHO) -> str:
    """A file name (or URL) as an error message leads with it: unquoted, control characters escaped
    (:func:`yacht_env.safe_text.escaped_controls`), at most ``limit`` characters of it, then ``... (N characters)``
    where it was cut.
    """
    text = os.fsdecode(path)
    return escaped_controls(text[:limit]) + (_cut(len(text)) if len(text) > limit else "")
