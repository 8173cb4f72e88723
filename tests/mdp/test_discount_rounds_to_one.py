"""A discount that rounds to 1 in ``P``'s dtype is refused when the model is built.

float32 ``P`` with ``γ = 1 − 2^-30``: the model computes ``I − γP_π`` in float32, where ``γ`` is 1,
so ``policy_iteration`` died with numpy's unlocated ``LinAlgError: Singular matrix`` (the Markov
games refuse such a ``γ`` the same way, through the same check).
"""

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP, policy_iteration


def _model(dtype, gamma):
    P = np.array([[[0.5, 0.5], [1.0, 0.0]], [[0.0, 1.0], [0.5, 0.5]]], dtype=dtype)
    R = np.array([[1.0, 0.0], [0.0, 2.0]], dtype=dtype)
    return FiniteMDP(P, R, gamma=gamma)


def test_float32_discount_that_rounds_to_one_is_refused():
    with pytest.raises(
        InvalidModelError, match=r"gamma = 0\.99999999906.* rounds to 1 in P's dtype float32"
    ):
        _model(np.float32, 1.0 - 2.0**-30)


def test_replace_revalidates_the_discount():
    m = _model(np.float32, 0.9)
    with pytest.raises(InvalidModelError, match="rounds to 1 in P's dtype float32"):
        m.replace(gamma=1.0 - 2.0**-26)


def test_the_largest_float32_discount_below_one_is_accepted():
    g = 1.0 - 2.0**-24  # float32's largest number below 1
    res = policy_iteration(_model(np.float32, g))
    exact = policy_iteration(_model(np.float64, g))  # the same discount, computed in float64
    # float32 cannot resolve values ~3e7 at this discount, but its certificate must say so
    assert np.max(np.abs(res.V.astype(float) - exact.V)) <= res.bound


def test_float64_keeps_the_discount():
    assert _model(np.float64, 1.0 - 2.0**-30).gamma == 1.0 - 2.0**-30
