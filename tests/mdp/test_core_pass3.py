"""MDP core, third pass: finite-horizon models, Bellman helpers and the data layer."""

import warnings

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP


def test_stationary_names_a_reward_beyond_the_model_dtype_with_its_value():
    # FiniteHorizonMDP.stationary cast R to P's dtype before the constructor's range check, so a
    # float64 reward 1e300 with a float32 P read 'R must be finite; R(h=0, s=0, a=1) = inf' after
    # numpy's 'overflow encountered in cast'
    P = np.ones((1, 2, 1), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            InvalidModelError, match=r"R\(h=0, s=0, a=1\) = 1e\+300 is beyond the float32 range"
        ):
            FiniteHorizonMDP.stationary(P, np.array([[1.0, 1e300]]), H=2)
        with pytest.raises(
            InvalidModelError,
            match=r"R\(h=0, s=0, a=0, s'=0\) = 4e\+38 is beyond the float32 range",
        ):
            FiniteHorizonMDP.stationary(P[:, :1], np.array([[[4e38]]]), H=3)
    # in range: cast to P's dtype as the constructor does, same model as the explicit one
    fh = FiniteHorizonMDP.stationary(P, np.array([[1.0, 3e38]]), H=2)
    assert fh.R.dtype == np.float32 and fh.R[1, 0, 1] == np.float32(3e38)
    explicit = FiniteHorizonMDP(np.stack([P, P]), np.array([[[1.0, 3e38]]] * 2))
    assert np.array_equal(fh.R, explicit.R) and np.array_equal(fh.P, explicit.P)
