"""Values of command-line options, for argparse's ``type=``: the one parser of whole numbers every command uses.

``agents.evaluate`` and ``yacht play`` read their seeds and targets through it, so a bad value gets
the same one-line message everywhere (argparse puts the option's name in front of it).
"""

from __future__ import annotations

import argparse


def whole_number(text: str, noun: str = "an integer", most: int | None = None) -> int:
    """``text`` as a whole number from 0 to ``most`` (no bound when None).

    Else ``argparse.ArgumentTypeError`` naming the value and what is allowed: ``expected {noun} 0 or
    more`` (``noun`` says what the number is), or ``expected {noun} from 0 to {most}`` for a number
    out of a bounded range.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {noun} 0 or more, got {text!r}") from None
    if most is None and value < 0:
        raise argparse.ArgumentTypeError(f"expected {noun} 0 or more, got {value}")
    if most is not None and not 0 <= value <= most:
        raise argparse.ArgumentTypeError(f"expected {noun} from 0 to {most}, got {value}")
    return value
