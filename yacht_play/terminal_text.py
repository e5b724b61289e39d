r"""Text from a record file or the database made safe to print on an operator's terminal.

A person's name reaches ``yacht report`` and ``yacht analyze`` from a browser or from a file someone sent;
an ESC in it would start a terminal escape sequence (``\x1b]0;...`` retitles the terminal, others move the
cursor or rewrite what is on screen), a lone surrogate would stop the print with a UnicodeEncodeError.
"""

from __future__ import annotations

from yacht_env.safe_text import BIDI_CONTROLS, escaped_controls

__all__ = ["BIDI_CONTROLS", "escaped_controls"]
