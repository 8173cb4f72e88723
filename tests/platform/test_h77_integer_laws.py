"""check_probability and check_occupancy judge integer and boolean laws (helper 77).

Both read ``xp.finfo(x.dtype)`` for their tolerance: an integer or boolean array (``[[0, 1]]``,
an exact distribution) raised numpy's unlocated "'Int64DType' object has no attribute
'dtype'", and array_api_strict refused the comparison with a Python float. Integer rows are
exact: the tolerance is 1e-8 and the rule is the floating one.
"""

import array_api_strict as xps
import numpy as np
import pytest

from rltheory._validate import check_occupancy, check_probability
from rltheory.errors import InvalidModelError


@pytest.mark.parametrize("mod", [np, xps], ids=["numpy", "array_api_strict"])
def test_integer_and_boolean_distributions_are_accepted(mod):
    check_probability(mod.asarray([[0, 1], [1, 0]]), "P", ("s", "a"), "P[s, :]")
    check_probability(mod.asarray([[True, False]]), "P", ("s", "a"), "P[s, :]")
    check_occupancy(mod.asarray([[1, 0], [0, 0]]), "d")
    check_occupancy(mod.asarray([[[0, 1]], [[1, 0]]]), "d")  # one law per step h
    check_occupancy(mod.asarray([[False, True]]), "d")


@pytest.mark.parametrize("mod", [np, xps], ids=["numpy", "array_api_strict"])
def test_integer_laws_off_the_simplex_are_located(mod):
    with pytest.raises(
        InvalidModelError,
        match=r"each P\[s, :\] must sum to 1 \(atol=1e-08\); worst row \(s=1\) sums to 2",
    ):
        check_probability(mod.asarray([[0, 1], [1, 1]]), "P", ("s", "a"), "P[s, :]")
    with pytest.raises(
        InvalidModelError, match=r"P must be non-negative; most negative entry P\(s=0, a=0\) = -1"
    ):
        check_probability(mod.asarray([[-1, 2]]), "P", ("s", "a"), "P[s, :]")
    with pytest.raises(
        InvalidModelError, match=r"each d\[h\] must sum to 1 .*worst step h=1 sums to 2"
    ):
        check_occupancy(mod.asarray([[[0, 1]], [[1, 1]]]), "d")
    with pytest.raises(
        InvalidModelError, match=r"d must be finite and non-negative; d\(s=0, a=1\) = -1\.0"
    ):
        check_occupancy(mod.asarray([[2, -1]]), "d")
