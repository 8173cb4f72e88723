"""Edge cases of finite-horizon policy evaluation (float32 policies in a float64 model)."""

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP, evaluate_finite_horizon


def test_a_float32_policy_in_a_float64_model_is_evaluated():
    # float32(1/3) * 3 sums to 1 + 3e-8 in float64: refused at 1e-8 ('each pi[h, s, :] must sum to 1'),
    # although evaluate_policy accepts the same float32 rows (judged at float32's 16 eps)
    fh = FiniteHorizonMDP.stationary(np.ones((1, 3, 1)), np.array([[0.0, 1.0, 2.0]]), H=2)
    pi32 = np.full((2, 1, 3), 1.0 / 3.0, dtype=np.float32)
    V = evaluate_finite_horizon(fh, pi32)
    assert V.dtype == np.float64
    # each step pays the mean reward 1 (rows divided by their float32-rounded sums): V = (2, 1, 0)
    np.testing.assert_allclose(V[:, 0], [2.0, 1.0, 0.0], rtol=0, atol=4e-16)
    # the same rows in float64 are still judged at 1e-8
    with pytest.raises(InvalidModelError, match=r"each pi\[h, s, :\] must sum to 1"):
        evaluate_finite_horizon(fh, pi32.astype(np.float64))
