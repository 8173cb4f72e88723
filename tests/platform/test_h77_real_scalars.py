"""Real scalars of every standard type as discounts and settings (helper 77).

``check_discount`` accepted ``np.array(0.9)`` but refused array_api_strict's 0-d array and
``Fraction(9, 10)`` as "not a number", and a Python int beyond the float range raised an
unlocated ``OverflowError``; ``real_scalar`` (hence ``check_real``/``check_tolerance``) read the
same values as NaN.
"""

from decimal import Decimal
from fractions import Fraction

import array_api_strict as xps
import numpy as np
import pytest

from rltheory._validate import check_discount, check_real, check_tolerance, real_scalar
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP, value_iteration

NINE_TENTHS = [
    Fraction(9, 10),
    Decimal("0.9"),
    xps.asarray(0.9),
    np.array(0.9),
    np.float64(0.9),
]


@pytest.mark.parametrize(
    "gamma", NINE_TENTHS, ids=["fraction", "decimal", "strict-0d", "numpy-0d", "numpy-scalar"]
)
def test_every_real_scalar_type_is_a_discount(gamma):
    assert check_discount(gamma) == 0.9
    assert real_scalar(gamma) == 0.9
    assert check_real(gamma, "gamma", low=0.0, high=1.0, high_open=True) == 0.9
    assert check_tolerance(gamma) == 0.9
    # closed form: one absorbing state with reward 1 has V = 1/(1 - gamma) = 10
    mdp = FiniteMDP(np.ones((1, 1, 1)), np.ones((1, 1)), gamma)
    assert mdp.gamma == 0.9
    np.testing.assert_allclose(np.asarray(value_iteration(mdp, tol=1e-12).V), [10.0], rtol=1e-10)


def test_zero_d_arrays_of_another_library_keep_their_value():
    assert check_discount(xps.asarray(0.9, dtype=xps.float32)) == float(np.float32(0.9))
    assert check_discount(xps.asarray(0)) == 0.0
    # an array_api_strict model with an array_api_strict discount
    P = xps.ones((1, 1, 1), dtype=xps.float64)
    mdp = FiniteMDP(P, xps.ones((1, 1), dtype=xps.float64), xps.asarray(0.5))
    assert mdp.gamma == 0.5


@pytest.mark.parametrize(
    ("gamma", "msg"),
    [
        (xps.asarray(True), r"gamma must be a number in \[0, 1\); got Array\(True"),
        (xps.asarray([0.9]), r"gamma must be a number in \[0, 1\); got Array\(\[0\.9\]"),
        (np.bool_(True), r"gamma must be a number in \[0, 1\); got np\.True_"),
        (0.9 + 0j, r"gamma must be a number in \[0, 1\); got \(0\.9\+0j\)"),
        ("0.9", r"gamma must be a number in \[0, 1\); got '0\.9'"),
        (Fraction(3, 2), r"gamma must lie in \[0, 1\); got 1\.5$"),
        (Decimal("NaN"), r"gamma must lie in \[0, 1\); got nan"),
        # was OverflowError: int too large to convert to float (no field, no rule)
        (10**400, r"gamma must lie in \[0, 1\); got inf \(1000+ is beyond the float range\)"),
        # below 1, but 1.0 as a double: the message says so
        (
            Fraction(10**20 - 1, 10**20),
            r"gamma must lie in \[0, 1\); got 1\.0 \(Fraction\(99999999999999999999, "
            r"100000000000000000000\) rounds to 1\.0 in floating point\)",
        ),
    ],
    ids=[
        "strict-bool",
        "strict-1d",
        "numpy-bool",
        "complex",
        "text",
        "fraction-3/2",
        "decimal-nan",
        "huge-int",
        "fraction-rounds-to-1",
    ],
)
def test_invalid_discounts_are_named(gamma, msg):
    with pytest.raises(InvalidModelError, match=msg):
        check_discount(gamma)


def test_settings_beyond_the_float_range_are_infinite_not_an_overflow():
    assert real_scalar(10**400) == np.inf and real_scalar(-Fraction(10**400)) == -np.inf
    assert np.isnan(real_scalar(Decimal("sNaN")))  # float(Decimal('sNaN')) raises ValueError
    with pytest.raises(ValueError, match=r"tol must be a positive finite number; got Fraction"):
        check_tolerance(Fraction(10**400))
