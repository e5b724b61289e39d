"""The numbers of policy names (``target:200``, ``softmax:1.5``), read one way by every policy that takes one.

Python's ``int`` and ``float`` read more than a person types as a number: ``int("٣")`` is 3 (any script's
digits), ``float("1_000")`` is 1000.0 (underscores), ``float(" 1.5 ")`` ignores the spaces, and
``"²".isdigit()`` is true though ``int("²")`` fails. A policy's name is written into records and compared as
text, so only ASCII forms are read here, and a refusal is one line naming the name and what is allowed.
"""

from __future__ import annotations

import re

from yacht_env.echo import echoed

MAX_NUMBER_TEXT = 32  # characters: more than any score or temperature needs
WHOLE = re.compile(r"[0-9]+")
DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # 2, 1.5, .5, 2e-3: no sign, inf or nan
DECIMAL_FORMS = "in digits 0-9 (a point and an exponent allowed)"


def name_number(name: str, prefix: str, whole: bool, allowed: str) -> int | float:
    """The number after ``prefix`` in the policy name ``name``: an int of ASCII digits (``whole``), else a float
    in :data:`DECIMAL_FORMS`; else ``ValueError``, one line naming ``name`` (shortened) and ``allowed``.
    """
    text = name[len(prefix) :]
    pattern = WHOLE if whole else DECIMAL
    if len(text) > MAX_NUMBER_TEXT or not pattern.fullmatch(text):
        raise ValueError(refusal(name, allowed))
    return int(text) if whole else float(text)


def refusal(name: str, allowed: str) -> str:
    """The one line refusing the policy name ``name``: the name as errors echo it, and what is allowed."""
    return f"policy {echoed(name)}: {allowed}"
