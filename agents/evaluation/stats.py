"""Confidence intervals: the one place every report of this project computes them."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% normal quantile; the samples here are large enough for the CLT


def mean_ci(values, clip: tuple[float, float] | None = None) -> tuple[float, float, float]:
    """Mean of ``values`` and its 95% confidence interval (normal approximation): ``(mean, low, high)``.

    With fewer than two values the interval is ``nan``. ``clip`` bounds the interval, e.g. ``(0, 1)``
    for a rate, where the normal approximation can overshoot near the ends.
    """
    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    half = Z95 * float(values.std(ddof=1)) / math.sqrt(len(values)) if len(values) > 1 else float("nan")
    low, high = mean - half, mean + half
    if clip is not None:
        low, high = max(low, clip[0]), min(high, clip[1])
    return mean, low, high
