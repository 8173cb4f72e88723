"""Edge cases of the model constructors: numpy scalars, short arrays, float32 distributions."""

import warnings

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP, FiniteMDP


def test_stationary_accepts_a_numpy_integer_horizon():
    # H=np.int64(3) was refused as 'H must be a positive integer'
    P, R = np.ones((1, 2, 1)), np.array([[0.0, 1.0]])
    fh = FiniteHorizonMDP.stationary(P, R, H=np.int64(3))
    assert fh.H == 3 and isinstance(fh.H, int)
    np.testing.assert_array_equal(fh.R, FiniteHorizonMDP.stationary(P, R, H=3).R)
    with pytest.raises(ValueError, match=r"H must be a positive integer; got np.int64\(0\)"):
        FiniteHorizonMDP.stationary(P, R, H=np.int64(0))


@pytest.mark.parametrize("R", [1.0, np.array([1.0])], ids=["0-d", "1-d"])
def test_stationary_names_rewards_with_too_few_axes(R):
    # a 0-d R crashed in numpy's expand_dims ('AxisError: axis -3 is out of bounds')
    with pytest.raises(InvalidModelError, match=r"R must have shape \(\.\.\., S, A\) or \(\.\.\., S, A, S\); got shape"):
        FiniteHorizonMDP.stationary(np.ones((1, 1, 1)), R, H=2)


def test_a_float32_mu_in_a_float64_model_is_a_distribution():
    # float32(1/3) * 3 = 1 + 3e-8 (rounding in float32) was refused at the float64 tolerance 1e-8,
    # although state_occupancy(mu=...) accepts the same vector
    P = np.full((3, 1, 3), 1.0 / 3.0)
    mu32 = np.full(3, 1.0 / 3.0, dtype=np.float32)
    assert abs(float(mu32.astype(np.float64).sum()) - 1.0) > 1e-8
    for model in (FiniteMDP(P, np.zeros((3, 1)), gamma=0.5, mu=mu32), FiniteHorizonMDP(P[None], np.zeros((1, 3, 1)), mu32)):
        assert model.mu.dtype == np.float64
        assert abs(float(model.mu.sum()) - 1.0) <= 2e-16
        np.testing.assert_allclose(model.mu, 1.0 / 3.0, rtol=1e-7)
    # a float64 mu off by as much is still refused
    with pytest.raises(InvalidModelError, match=r"each mu\[:\] must sum to 1"):
        FiniteMDP(P, np.zeros((3, 1)), gamma=0.5, mu=mu32.astype(np.float64))


@pytest.mark.parametrize(
    ("make", "msg"),
    [
        (lambda: FiniteMDP(np.ones((1, 2, 1), np.float32), np.array([[1.0, 1e300]]), gamma=0.5), r"R\(s=0, a=1\) = 1e\+300"),
        (lambda: FiniteMDP(np.ones((2, 1, 2, 1), np.float32), np.array([[[0.0, 0.0]], [[0.0, -5e38]]]), gamma=0.5),
         r"R\(batch=\(1,\), s=0, a=1\) = -5e\+38"),
        (lambda: FiniteMDP(np.ones((1, 1, 1), np.float32), np.array([[[4e38]]]), gamma=0.5), r"R\(s=0, a=0, s'=0\) = 4e\+38"),
        (lambda: FiniteHorizonMDP(np.ones((2, 1, 2, 1), np.float32), np.array([[[0.0, 0.0]], [[0.0, 1e39]]])),
         r"R\(h=1, s=0, a=1\) = 1e\+39"),
    ],
    ids=["FiniteMDP", "batch", "per-transition", "FiniteHorizonMDP"],
)
def test_a_reward_beyond_the_model_dtype_is_named_with_its_value(make, msg):
    # a float64 reward 1e300 in a float32 model was reported as 'R must be finite; R(s=0, a=1) = inf'
    # after numpy's 'overflow encountered in cast': a value the caller never passed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidModelError, match=msg + r" is beyond the float32 range of the model"):
            make()
    # in range: kept (rounded to float32)
    m = FiniteMDP(np.ones((1, 2, 1), np.float32), np.array([[1.0, 3e38]]), gamma=0.5)
    assert m.R.dtype == np.float32 and m.R[0, 1] == np.float32(3e38)
