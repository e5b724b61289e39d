"""The confidence interval every report computes: checked against its formula worked by hand."""

import math
import warnings
from statistics import NormalDist

import numpy as np
import pytest

from agents.evaluation.stats import Z95, mean_ci


def test_z95_is_the_two_sided_95_percent_normal_quantile():
    assert Z95 == pytest.approx(NormalDist().inv_cdf(0.975), abs=1e-12)


def test_the_interval_is_the_mean_plus_or_minus_z_times_the_standard_error():
    # 1, 2, 3, 4: mean 2.5, sample variance (2.25 + 0.25 + 0.25 + 2.25) / 3 = 5/3, standard error sqrt(5/3) / 2
    half = Z95 * math.sqrt(5 / 3) / 2
    assert mean_ci([1, 2, 3, 4]) == pytest.approx((2.5, 2.5 - half, 2.5 + half), abs=1e-12)


def test_two_values_have_an_interval_and_one_has_none():
    # 0 and 1: sample variance 1/2, standard error sqrt(1/2) / sqrt(2) = 1/2
    assert mean_ci([0, 1]) == pytest.approx((0.5, 0.5 - Z95 / 2, 0.5 + Z95 / 2), abs=1e-12)
    mean, low, high = mean_ci([7])
    assert mean == 7 and math.isnan(low) and math.isnan(high)


@pytest.mark.parametrize(
    ("values", "clipped_low", "clipped_high"),
    [([0, 0, 0, 1], True, False), ([1, 1, 1, 0], False, True), ([0, 1] * 4, False, False)],
)
def test_a_clipped_interval_is_cut_at_its_bounds_and_only_there(values, clipped_low, clipped_high):
    mean, low, high = mean_ci(values)
    assert (low < 0) == clipped_low and (high > 1) == clipped_high
    assert mean_ci(values, clip=(0.0, 1.0)) == pytest.approx((mean, max(low, 0.0), min(high, 1.0)), abs=1e-12)


def test_no_values_have_no_mean_and_no_interval():
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's "mean of empty slice"
        assert all(math.isnan(figure) for figure in mean_ci([]))
