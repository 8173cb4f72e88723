"""as_float reads object arrays entry by entry (helper 77).

A Python int beyond the float range in a model field (``R = [[10**400]]``) raised numpy's
unlocated ``OverflowError: int too large to convert to float``; a ``Decimal`` entry was refused as
"not a real number" although ``check_discount`` and ``real_scalar`` read it.
"""

from decimal import Decimal
from fractions import Fraction

import array_api_strict as xps
import numpy as np
import pytest

from rltheory.backend import array_namespace, as_float, to_numpy
from rltheory.mdp import FiniteMDP, value_iteration


@pytest.mark.parametrize("ns", [None, xps], ids=["numpy", "array_api_strict"])
def test_an_integer_beyond_the_float_range_is_located(ns):
    with pytest.raises(
        ValueError, match=r"^R must hold numbers within the float range; R\[0, 1\] = 1000"
    ):
        as_float([[1, 10**400]], ns, field="R")
    with pytest.raises(
        ValueError,
        match=r"^gamma_table must hold numbers within the float range; gamma_table = -1000",
    ):
        as_float(-(10**400), ns, field="gamma_table")
    with pytest.raises(
        ValueError, match=r"^R must hold numbers within the float range; R\[0, 0\] = 1000"
    ):
        FiniteMDP(np.ones((1, 1, 1)), [[10**400]], 0.5)


@pytest.mark.parametrize("ns", [None, xps], ids=["numpy", "array_api_strict"])
def test_exact_real_entries_are_read_as_their_nearest_doubles(ns):
    x = as_float([Fraction(1, 3), Decimal("0.5"), 2**64, True], ns)
    np.testing.assert_array_equal(to_numpy(x), [1 / 3, 0.5, 2.0**64, 1.0])
    # a reward table of Decimals: one absorbing state with r = 0.5 at gamma = 0.5 has V = 1
    mdp = FiniteMDP(np.ones((1, 1, 1)), [[Decimal("0.5")]], 0.5)
    np.testing.assert_allclose(np.asarray(value_iteration(mdp, tol=1e-12).V), [1.0], rtol=1e-10)


def test_non_numbers_in_object_arrays_are_still_named():
    with pytest.raises(TypeError, match=r"^R must hold real numbers; R\[1\] = None$"):
        as_float(np.array([0.5, None], dtype=object), field="R")
    with pytest.raises(TypeError, match=r"^R must hold real numbers; R\[0\] = '4'$"):
        as_float(np.array(["4"], dtype=object), field="R")


@pytest.mark.parametrize("ns", [None, xps], ids=["numpy", "array_api_strict"])
def test_fraction_and_decimal_scalars_are_numbers_like_floats(ns):
    # as_float(Fraction(1, 3)) raised 'input must be an array ... got Fraction', and into
    # array_api_strict 'does not support the dtype object'; as_float(0.5) was always accepted
    for v, want in ((Fraction(1, 3), 1 / 3), (Decimal("0.5"), 0.5)):
        x = as_float(v, ns)
        assert x.shape == () and float(x) == want
    assert array_namespace(xps.asarray(1.0), Fraction(1, 2)) is xps  # ignored like 0.5
