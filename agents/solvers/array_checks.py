"""Checks of the integer arrays the solvers take (positions, rolls left, open sets), one-line errors."""

from __future__ import annotations

import numbers

import numpy as np

from yacht_env.dice import DiceSpace
from yacht_env.rules import RuleSet


def integer_array(values, name: str) -> np.ndarray:
    """``values`` as an int64 array (a scalar as one element), or ``ValueError`` naming ``name``."""
    array = np.asarray(values)
    if array.size == 0:
        array = array.astype(np.int64)
    if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be integers, got {values!r}")
    return array.astype(np.int64, copy=False).reshape(-1) if array.ndim == 0 else array.astype(np.int64, copy=False)


def check_range(values: np.ndarray, low: int, high: int, name: str) -> None:
    """``ValueError`` naming the first of ``values`` outside ``low..high``."""
    bad = (values < low) | (values > high)
    if bad.any():
        raise ValueError(f"{name} {int(values[bad].flat[0])} is out of range {low}..{high}")


def hand_indices(hands, dice: DiceSpace) -> np.ndarray:
    """Hands given as indices (N,) or as dice (N, num_dice) -> hand indices (intp), or ``ValueError`` naming the problem."""
    hands = integer_array(hands, "hands")
    if hands.ndim == 2 and hands.shape[1] == dice.num_dice:
        check_range(hands, 1, dice.num_faces, "die")
        return dice.hand_of_code[(hands.astype(np.int64) - 1) @ dice.place_values].astype(np.intp)
    if hands.ndim != 1:
        raise ValueError(
            f"hands must be hand indices of shape (N,) or dice of shape (N, {dice.num_dice}), got shape {hands.shape}"
        )
    check_range(hands, 0, dice.num_hands - 1, "hand index")
    return hands.astype(np.intp)


def check_rolls_left(rolls_left, rules: RuleSet) -> int:
    """``rolls_left`` as an int, or ``ValueError`` naming it and the allowed range."""
    if (
        isinstance(rolls_left, bool)
        or not isinstance(rolls_left, numbers.Integral)
        or not 0 <= int(rolls_left) < rules.rolls_per_turn
    ):
        raise ValueError(f"rolls_left must be an integer in 0..{rules.rolls_per_turn - 1}, got {rolls_left!r}")
    return int(rolls_left)
