"""Files and JSON from outside the program, read within bounds.

A record file or a model's metadata may come from anyone. ``json.loads`` recurses once per level of
nesting, so a line of 100,000 ``[`` ends in a ``RecursionError``; a device such as ``/dev/zero`` never
ends and a FIFO blocks the reader. Every reader of such input goes through here: JSON is checked for
size and depth before it is parsed, only regular files are opened, and lines are read up to a length.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from yacht_env.echo import echoed_path

MAX_JSON_BYTES = 1_000_000
MAX_JSON_DEPTH = 64  # records and model metadata nest 6 levels at most
MAX_LINE_BYTES = 1_000_000

_OPENERS = frozenset(b"[{")
_CLOSERS = frozenset(b"]}")
_QUOTE, _BACKSLASH = ord('"'), ord("\\")


class InputBoundsError(ValueError):
    """Input over a size or depth limit, or a file that is not a regular one: refused before it is read."""


def load_json(data: str | bytes, where: str, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH):
    """``json.loads(data)``, refused with ``InputBoundsError`` (one line naming ``where`` and the limit) if too big or too deep.

    Other malformed JSON raises ``json.JSONDecodeError`` (a ``ValueError``) as ``json.loads`` does.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > max_bytes:
        raise InputBoundsError(f"{where}: {len(raw):,} bytes of JSON, more than the {max_bytes:,} allowed")
    if nested_deeper_than(raw, max_depth):
        raise InputBoundsError(f"{where}: JSON nested deeper than the {max_depth} levels allowed")
    return json.loads(data)


def nested_deeper_than(raw: bytes, limit: int) -> bool:
    """Whether the arrays and objects of JSON text ``raw`` nest more than ``limit`` deep (brackets in strings not counted)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:  # the common case, at C speed
        return False
    depth, in_string, escaped = 0, False, False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == _BACKSLASH:
                escaped = True
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPENERS:
            depth += 1
            if depth > limit:
                return True
        elif byte in _CLOSERS:
            depth -= 1
    return False


def open_regular_file(path: str | Path, max_bytes: int | None = None) -> BinaryIO:
    """``path`` opened for reading in binary; ``InputBoundsError`` for a device, FIFO, socket or folder, or a file
    over ``max_bytes`` (never opened). ``FileNotFoundError`` (an ``OSError``) if there is nothing there.
    """
    check_regular_file(path, max_bytes)
    return open(path, "rb")


def check_regular_file(path: str | Path, max_bytes: int | None = None) -> int:
    """The size of the regular file at ``path``; ``InputBoundsError`` (one line) for a device, FIFO, socket or
    folder (a link counts as what it points to), or a file over ``max_bytes``: what to check before opening it.
    """
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise InputBoundsError(f"{echoed_path(path)} is not a regular file ({_file_kind(info.st_mode)}): give a file")
    if max_bytes is not None and info.st_size > max_bytes:
        raise InputBoundsError(f"{echoed_path(path)} is {info.st_size:,} bytes, more than the {max_bytes:,} allowed: not read")
    return info.st_size


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a plain file")


def bounded_lines(handle: BinaryIO, where: str, max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(number, line)`` for each line of ``handle`` from 1, newline kept; ``InputBoundsError`` naming ``where:number``
    at a line longer than ``max_bytes``, before more of it is read.
    """
    number = 0
    while line := handle.readline(max_bytes + 1):
        number += 1
        if len(line) > max_bytes and not (len(line) == max_bytes + 1 and line.endswith(b"\n")):
            raise InputBoundsError(f"{where}:{number}: a line longer than the {max_bytes:,} bytes allowed")
        yield number, line
