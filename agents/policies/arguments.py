"""The numbers of policy names (``target:200``, ``softmax:1.5``), read one way by every policy that takes one.

A policy's name is written into records and compared as text, so its number is read in the ASCII forms a
person types (:mod:`yacht_env.option_values`, which the programs' options read theirs with too), and a refusal is
one line naming the name and what is allowed.
"""

from __future__ import annotations

from yacht_env.echo import echoed
from yacht_env.option_values import DECIMAL, MAX_NUMBER_TEXT, WHOLE


def name_number(name: str, prefix: str, whole: bool, allowed: str) -> int | float:
    """The number after ``prefix`` in the policy name ``name``: an int of ASCII digits (``whole``), else a float
    in :data:`yacht_env.option_values.DECIMAL_FORMS`; else ``ValueError``, one line naming ``name`` (shortened) and ``allowed``.
    """
    text = name[len(prefix) :]
    pattern = WHOLE if whole else DECIMAL
    if len(text) > MAX_NUMBER_TEXT or not pattern.fullmatch(text):
        raise ValueError(refusal(name, allowed))
    return int(text) if whole else float(text)


def refusal(name: str, allowed: str) -> str:
    """The one line refusing the policy name ``name``: the name as errors echo it, and what is allowed."""
    return f"policy {echoed(name)}: {allowed}"
