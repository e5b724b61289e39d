r"""Text from a record file or the database made safe to print on an operator's terminal.

A person's name reaches ``yacht report`` and ``yacht analyze`` from a browser or from a file someone sent;
an ESC in it would start a terminal escape sequence (``\x1b]0;...`` retitles the terminal, others move the
cursor or rewrite what is on screen), a lone surrogate would stop the print with a UnicodeEncodeError.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")  # reorder the text shown


def escaped_controls(text: str) -> str:
    r"""``text`` with every control character (C0, DEL, C1), bidirectional override and lone surrogate written as
    its Python escape (``\x1b``, ``\u202e``, ``\ud800``); everything else, accents and emoji too, as it is.
    """
    return "".join(
        ascii(char)[1:-1] if unicodedata.category(char) in ("Cc", "Cs") or char in BIDI_CONTROLS else char for char in text
    )
