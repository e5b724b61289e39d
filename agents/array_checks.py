"""Checks of the integer arrays the solvers take (positions, rolls left, open sets), one-line errors."""

from __future__ import annotations

import numpy as np


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
