"""Learning dynamics outside the ranges of test_dynamics.py: numpy scalar arguments, exact
tie-breaking, steps and payoffs at the ends of the float range. Each test failed on the code
before its fix (see the commit that added it)."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.games import fictitious_play, hedge, ogda, optimistic_hedge, regret_matching

_ALL = [fictitious_play, regret_matching, hedge, optimistic_hedge, ogda]
_STEPPED = [hedge, optimistic_hedge, ogda]
_GAME = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -3.0], [-2.0, 3.0, 0.0]])


@pytest.mark.parametrize("f", _ALL)
def test_numpy_integer_horizon_is_a_horizon(f):
    # T = np.int64(40) (e.g. from np.arange or a config array) raised "T (number of rounds)
    # must be a positive integer; got np.int64(40)"
    ref = f(_GAME, 40)
    out = f(_GAME, np.int64(40))
    assert out.iterations == 40 and type(out.iterations) is int
    np.testing.assert_array_equal(out.trace["gap_avg"], ref.trace["gap_avg"])


@pytest.mark.parametrize("f", _STEPPED)
@pytest.mark.parametrize("eta", [np.float32(0.25), np.int64(1), np.float64(0.25)])
def test_numpy_real_step_is_a_step(f, eta):
    # eta = np.float32(0.25) or np.int64(1) raised "eta must be a positive finite number"
    ref = f(_GAME, 30, eta=float(eta))
    out = f(_GAME, 30, eta=eta)
    np.testing.assert_array_equal(out.x_last, ref.x_last)


@pytest.mark.parametrize("f", _STEPPED)
@pytest.mark.parametrize(
    "eta",
    [True, -1.0, 0.0, np.nan, np.inf, "0.1", pytest.param(10**400, id="1e400"), np.float32(-1.0)],
)
def test_bad_step_is_a_located_value_error(f, eta):
    # 10**400 raised a bare OverflowError from math.isfinite
    with pytest.raises(ValueError, match=r"eta must be a positive finite number; got"):
        f(_GAME, 5, eta=eta)


@pytest.mark.parametrize("f", _ALL)
@pytest.mark.parametrize("T", [0, -3, True, 2.0, np.float64(3.0), "5"])
def test_bad_horizon_is_a_located_value_error(f, T):
    with pytest.raises(ValueError, match=r"T \(number of rounds\) must be a positive integer; got"):
        f(_GAME, T)
