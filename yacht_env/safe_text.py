r"""Text that people wrote, made safe for the programs that read what the project writes: a terminal, a spreadsheet.

A person's name comes from a browser or from a record file someone sent, and reaches terminals, CSV files and LaTeX
tables. Two guards stand on the way:

* where a name comes in (the browser's name field, a record file's lines), :func:`unsafe_character` refuses a
  control character (C0, DEL, C1: an ESC starts a terminal escape sequence, a CR ends TeX's line), a bidirectional
  override (it reorders what is shown) and a lone surrogate (it has no UTF-8 form);
* where text goes out, each format escapes what it must anyway, since a database may hold older names:
  :func:`escaped_controls` for a terminal, :func:`csv_text` for CSV (and :mod:`yacht_play.report.latex` for TeX).

A CSV file written here reads back with :func:`read_csv_text`, every cell exactly as it was written (see there).
"""

from __future__ import annotations

import numbers
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")  # reorder the text shown
FORMULA_STARTS = frozenset("=+-@\t\r")  # a spreadsheet reads a cell starting so as a formula (OWASP's list)
TEXT_MARK = "'"  # put before such a cell: a spreadsheet then shows it as text

Cell = str | int | float | None


def is_unsafe(char: str) -> bool:
    """Whether ``char`` is a control character (C0, DEL, C1), a line or paragraph separator (U+2028, U+2029: a line
    break to ``str.splitlines`` and to many readers), a bidirectional control or a lone surrogate.
    """
    return unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp") or char in BIDI_CONTROLS


def unsafe_character(text: str) -> str | None:
    r"""What is wrong with the first unsafe character of ``text`` (``'\x1b' is a control character``), or None."""
    for char in text:
        if is_unsafe(char):
            category = unicodedata.category(char)
            kinds = {"Cs": "a lone surrogate", "Cc": "a control character", "Zl": "a line separator"}
            kinds["Zp"] = "a paragraph separator"
            kind = kinds.get(category, "a bidirectional control")
            return f"{ascii(char)} is {kind}"
    return None


def escaped_controls(text: str) -> str:
    r"""``text`` with every control character (C0, DEL, C1), bidirectional override and lone surrogate written as
    its Python escape (``\x1b``, ``\u202e``, ``\ud800``); everything else, accents and emoji too, as it is.
    """
    return "".join(ascii(char)[1:-1] if is_unsafe(char) else char for char in text)


# -- CSV -----------------------------------------------------------------------------------------------------------


def csv_cell(value: Cell) -> str:
    """One CSV cell: a number bare, None empty, text always quoted.

    Text has its unsafe characters escaped (:func:`escaped_controls`: a file shown with ``cat`` must not drive the
    terminal, and no cell spans lines), then a ``'`` put before it when it starts like a formula (``=``, ``+``,
    ``-``, ``@``, tab, CR) or with a ``'`` itself (so that the reader can take exactly one away).
    """
    if value is None:
        return ""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):  # a bool is written as its word
        return str(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return repr(float(value))
    text = escaped_controls(str(value))
    if text[:1] in FORMULA_STARTS or text.startswith(TEXT_MARK):
        text = TEXT_MARK + text
    return '"' + text.replace('"', '""') + '"'


def csv_text(header: Sequence[str], rows: Sequence[Sequence[Cell]], comments: Sequence[str] = ()) -> str:
    """A CSV file: each comment as a ``# `` line first (its unsafe characters escaped, on one line), then the header
    and the rows, one line each. Text cells are quoted, so a ``#`` in one never starts a comment.
    """
    lines = ["# " + escaped_controls(" ".join(comment.split())) for comment in comments]
    lines += [",".join(csv_cell(cell) for cell in row) for row in [list(header), *rows]]
    return "".join(line + "\n" for line in lines)


@dataclass(frozen=True)
class CsvFile:
    """A CSV file as :func:`read_csv_text` reads it: its comments, its header and its rows (a dict per row)."""

    comments: list[str]
    header: list[str]
    rows: list[dict[str, Cell]]


_FIELD = re.compile(r'"((?:[^"]|"")*)"|([^,"]*)')
_INTEGER = re.compile(r"-?[0-9]+")


def read_csv_text(text: str) -> CsvFile:
    """A CSV file :func:`csv_text` wrote, every cell back as it was: text exactly (its ``'`` mark taken away), an
    integer as an ``int``, any other number as a ``float``, an empty cell as None; ``ValueError`` naming the line
    for anything else.
    """
    comments, table = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            comments.append(line[1:].removeprefix(" "))
        elif line:
            table.append(_csv_cells(line, number))
    if not table:
        raise ValueError("no header line: not a CSV file of the project")
    header = [str(cell) for cell in table[0]]
    for number, row in enumerate(table[1:], 2):
        if len(row) != len(header):
            raise ValueError(f"row {number}: {len(row)} cells under a header of {len(header)}")
    return CsvFile(comments, header, [dict(zip(header, row)) for row in table[1:]])


def _csv_cells(line: str, number: int) -> list[Cell]:
    cells: list[Cell] = []
    at = 0
    while True:
        match = _FIELD.match(line, at)
        assert match is not None  # the pattern matches the empty string
        quoted, bare = match.groups()
        if quoted is not None:
            cells.append(quoted.replace('""', '"').removeprefix(TEXT_MARK))
        elif not bare:
            cells.append(None)
        elif _INTEGER.fullmatch(bare):
            cells.append(int(bare))
        else:
            try:
                cells.append(float(bare))
            except ValueError:
                raise ValueError(f"line {number}: {bare[:40]!r} is neither a number nor quoted text") from None
        at = match.end()
        if at == len(line):
            return cells
        if line[at] != ",":
            raise ValueError(f"line {number}: a cell runs on after its closing quote at character {at + 1}")
        at += 1
