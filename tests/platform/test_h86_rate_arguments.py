"""Arguments of the rate fits: a 0-d integer array is an integer seed, and a window end that is
not a number is named.

``n_boot=np.array(50)`` was accepted (``check_positive_int``) but ``seed=np.array(3)`` refused as
"not an integer"; ``window=(1, "a")`` was reported as ``t_lo > t_hi`` without saying that
``t_hi`` is not a number.
"""

import numpy as np
import pytest

from rltheory.bounds.rates import fit_linear_rate, fit_rate

T = np.arange(1, 21)
ERR = 3.0 * T**-0.5


@pytest.mark.parametrize("fit", [fit_rate, fit_linear_rate])
def test_a_zero_dimensional_integer_seed_is_that_integer(fit):
    a, b = (
        fit(T, ERR * (1 + 0.01 * np.sin(T)), seed=np.array(3)),
        fit(T, ERR * (1 + 0.01 * np.sin(T)), seed=3),
    )
    assert a.ci == b.ci and a.slope == b.slope
    with pytest.raises(
        ValueError,
        match=r"^seed must be an integer >= 0 or a numpy.random.Generator; got array\(-1\)$",
    ):
        fit(T, ERR, seed=np.array(-1))
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0 .*; got array\(1\.5\)$"):
        fit(T, ERR, seed=np.array(1.5))


@pytest.mark.parametrize(
    ("window", "end"),
    [
        ((1, "a"), r"t_hi = 'a'"),
        ((True, 5), r"t_lo = True"),
        ((float("nan"), 5), r"t_lo = nan"),
        ((1, None), r"t_hi = None"),
    ],
)
def test_a_window_end_that_is_not_a_number_is_named(window, end):
    with pytest.raises(
        ValueError, match=rf"^window must satisfy t_lo <= t_hi; got .* \({end} is not a number\)$"
    ):
        fit_rate(T, ERR, window=window)
