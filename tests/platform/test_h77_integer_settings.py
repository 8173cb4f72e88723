"""Counts and sizes given as 0-d integer arrays (helper 77).

check_real accepted np.array(0.5) as a real setting, but check_int / check_positive_int refused
np.array(3) (and array_api_strict's asarray(3)) as "not an integer"; a count read from an array
(``n = counts.sum()`` on a strict array) could not be passed on.
"""

import array_api_strict as xps
import numpy as np
import pytest

from rltheory._validate import check_int, check_positive_int
from rltheory.mdp.sample import sample_transitions
from rltheory.mdp.zoo import two_state


@pytest.mark.parametrize("n", [np.array(3), xps.asarray(3), np.array(3, dtype=np.uint8)])
def test_zero_d_integer_arrays_are_counts(n):
    assert check_int(n, "n") == 3 and check_positive_int(n, "n") == 3
    assert type(check_int(n, "n")) is int
    np.testing.assert_array_equal(sample_transitions(two_state(), n, rng=0).sum(-1), 3)


@pytest.mark.parametrize(
    "n", [np.array(3.0), np.array(True), xps.asarray(True), np.array([3]), np.array(0), 3.0]
)
def test_non_integers_and_out_of_range_counts_are_still_refused(n):
    with pytest.raises(ValueError, match=r"^n must be an integer >= 1; got "):
        check_int(n, "n")
    with pytest.raises(ValueError, match=r"^n must be a positive integer; got "):
        check_positive_int(n, "n")
