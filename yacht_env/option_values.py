"""Numbers a person types: on a command line (argparse types) and in policy names, in their ASCII forms only.

Python's ``int`` and ``float`` read more than a person types as a number: ``int("٣")`` is 3 (any script's
digits), ``float("1_000")`` is 1000.0 (underscores), ``int(" 5 ")`` ignores the spaces, ``float("nan")`` and
``float("inf")`` are numbers, and ``"²".isdigit()`` is true though ``int("²")`` fails. A number typed here is
written into records, run folders and messages and compared as text, so only the forms of :data:`WHOLE` and
:data:`DECIMAL` are read, and a refusal is one line naming the value and what is allowed.

Every program's integer and decimal options are read through :func:`whole_number` and :func:`decimal_number`
(:func:`whole_numbers` for a comma-separated list)::

    parser.add_argument("--port", type=whole_number(noun="a port", most=65535), default=8080)
    parser.add_argument("--sizes", type=whole_numbers(noun="table sizes", least=2, most=5), default=[2, 3])
    parser.add_argument("--temperature", type=decimal_number(noun="a temperature in points"), default=1.0)

argparse puts ``argument --port:`` in front of the refusal and exits with status 2:
``error: argument --port: expected a port from 0 to 65535 in digits 0-9, got '٨٠٨٠'``. Policy names read their
numbers with the same patterns (:mod:`agents.policies.arguments`).
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass

from yacht_env.echo import echoed

MAX_NUMBER_TEXT = 32  # characters: more than any score, seed, count or temperature needs
MAX_LIST_TEXT = 200  # characters of a comma-separated list: dozens of numbers
WHOLE = re.compile(r"[0-9]+")
WHOLE_LIST = re.compile(r"[0-9]+(?:,-?[0-9]+)*")  # 2,3,5 (each may have a -: the first's is taken off before)
DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # 2, 1.5, .5, 2e-3: no sign, inf or nan
WHOLE_FORMS = "in digits 0-9"
DECIMAL_FORMS = "in digits 0-9 (a point and an exponent allowed)"


def _span(least: float | None, most: float | None) -> str:
    """The range as a refusal says it: `` 0 or more``, `` from 1 to 5``, `` 10 or less``, or nothing (any)."""

    def shown(bound: float) -> str:
        return str(bound) if isinstance(bound, int) else f"{bound:g}"

    if least is not None and most is not None:
        return f" from {shown(least)} to {shown(most)}"
    if least is not None:
        return f" {shown(least)} or more"
    return f" {shown(most)} or less" if most is not None else ""


def checked_form(text: str, pattern, forms: str, expected: str, longest: int = MAX_NUMBER_TEXT) -> str:
    """``expected`` when ``text`` is at most ``longest`` characters and in ``pattern``'s forms (a ``-`` before them),
    else ``argparse.ArgumentTypeError`` naming it and ``forms``.
    """
    if len(text) > longest:
        raise argparse.ArgumentTypeError(f"{expected} of at most {longest} characters, got {echoed(text)}")
    if not pattern.fullmatch(text.removeprefix("-")):
        raise argparse.ArgumentTypeError(f"{expected} {forms}, got {echoed(text)}")
    return expected


@dataclass(frozen=True)
class WholeNumber:
    """An argparse type: a whole number in ASCII digits (a ``-`` before them), from ``least`` to ``most`` (no bound
    where None). Made by :func:`whole_number`.
    """

    noun: str
    least: int | None
    most: int | None

    def __call__(self, text: str) -> int:
        """``text`` as the number, else ``argparse.ArgumentTypeError`` naming it and what is allowed."""
        expected = checked_form(text, WHOLE, WHOLE_FORMS, f"expected {self.noun}{_span(self.least, self.most)}")
        value = int(text)
        if (self.least is not None and value < self.least) or (self.most is not None and value > self.most):
            raise argparse.ArgumentTypeError(f"{expected}, got {value}")
        return value


@dataclass(frozen=True)
class DecimalNumber:
    """An argparse type: a finite decimal number in :data:`DECIMAL`'s forms (a ``-`` before it), from ``least`` to
    ``most`` (no bound where None). Made by :func:`decimal_number`.
    """

    noun: str
    least: float | None
    most: float | None

    def __call__(self, text: str) -> float:
        """``text`` as the number, else ``argparse.ArgumentTypeError`` naming it and what is allowed."""
        expected = checked_form(text, DECIMAL, DECIMAL_FORMS, f"expected {self.noun}{_span(self.least, self.most)}")
        value = float(text)
        low = self.least is not None and value < self.least
        if not math.isfinite(value) or low or (self.most is not None and value > self.most):  # 1e999 is inf
            raise argparse.ArgumentTypeError(f"{expected}, got {text}")
        return value


@dataclass(frozen=True)
class WholeNumbers:
    """An argparse type: comma-separated whole numbers (``2,3,5``), each in ASCII digits (a ``-`` before it) from
    ``least`` to ``most``. Made by :func:`whole_numbers`.
    """

    noun: str
    least: int | None
    most: int | None

    def __call__(self, text: str) -> list[int]:
        """``text`` as its numbers in order, else ``argparse.ArgumentTypeError`` naming it and what is allowed."""
        span = _span(self.least, self.most)
        expected = checked_form(text, WHOLE_LIST, WHOLE_FORMS, f"expected {self.noun}{span}, comma-separated", MAX_LIST_TEXT)
        values = [int(part) for part in text.split(",")]
        if any((self.least is not None and v < self.least) or (self.most is not None and v > self.most) for v in values):
            raise argparse.ArgumentTypeError(f"{expected}, got {echoed(text)}")
        return values


def whole_number(*, noun: str = "an integer", least: int | None = 0, most: int | None = None) -> WholeNumber:
    """The argparse type of a whole-number option: ``least`` to ``most``, 0 or more unless told (``least=None``:
    negative numbers allowed too). ``noun`` says what the number is in a refusal.
    """
    return WholeNumber(noun, least, most)


def whole_numbers(*, noun: str = "integers", least: int | None = 0, most: int | None = None) -> WholeNumbers:
    """The argparse type of an option that takes comma-separated whole numbers (``--sizes 2,3,5``): each from
    ``least`` to ``most``, 0 or more unless told. ``noun`` (a plural) says what the numbers are in a refusal.
    """
    return WholeNumbers(noun, least, most)


def decimal_number(*, noun: str = "a number", least: float | None = 0.0, most: float | None = None) -> DecimalNumber:
    """The argparse type of a decimal option: a finite number from ``least`` to ``most``, 0 or more unless told
    (``least=None``: negative numbers allowed too). ``noun`` says what the number is in a refusal.
    """
    return DecimalNumber(noun, least, most)
