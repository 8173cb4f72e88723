"""Counts given as numpy integers or 0-d integer arrays, as the other bounds read them.

``pi_iteration_bound(np.int64(2**62), 4, 0.5)`` multiplied numpy int64 scalars and wrapped to
``-9223372036854775808`` (a negative iteration bound, with only a RuntimeWarning); the exact
``(S·A − S)·⌈log(1/(1−γ))/(1−γ)⌉ = 3·2^62·2``. ``np.array(2)`` was refused as ``S``, ``A`` and as
``npg_bound``'s ``n_actions`` while every other count (``_count``) accepted it.
"""

import math

import numpy as np
import pytest

from rltheory.bounds.mdp import pi_iteration_bound
from rltheory.bounds.policy_optimization import npg_bound


def test_pi_iteration_bound_is_exact_for_numpy_counts_beyond_int64():
    # γ = 1/2: ⌈log 2/(1/2)⌉ = ⌈1.386⌉ = 2 eliminations per action; m − S = 4S − S = 3S
    S = np.int64(2**62)
    assert pi_iteration_bound(S, 4, 0.5) == 3 * 2**62 * 2
    assert pi_iteration_bound(S, np.int32(4), 0.5) == 3 * 2**62 * 2
    assert type(pi_iteration_bound(S, 4, 0.5)) is int


def test_zero_dimensional_integer_arrays_are_counts():
    assert (
        pi_iteration_bound(np.array(10), np.array(4), 0.9) == pi_iteration_bound(10, 4, 0.9) == 720
    )
    b = npg_bound([1, 10], eta=1.0, gamma=0.5, n_actions=np.array(2))
    assert b.tolist() == npg_bound([1, 10], eta=1.0, gamma=0.5, n_actions=2).tolist()
    assert b[1] == pytest.approx(math.log(2) / 10 + 4 / 10, rel=1e-15)


@pytest.mark.parametrize(
    "bad", [True, np.True_, 2.0, np.array(2.0), np.array([2]), np.array(0), "2"]
)
def test_non_integer_counts_are_still_refused(bad):
    with pytest.raises(ValueError, match=r"^S must be a positive integer; got "):
        pi_iteration_bound(bad, 2, 0.5)
    with pytest.raises(
        ValueError, match=r"^give kl0 or n_actions \(an integer >= 1\); got n_actions="
    ):
        npg_bound(10, eta=1.0, gamma=0.5, n_actions=bad)
