"""Soft value iteration's certificate counts the round-off of the computed soft Bellman step."""

import math
import re
import warnings

import numpy as np
import pytest

from rltheory.algorithms.soft import soft_reference, soft_value_iteration
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP


def _one_state_q_star(r: np.ndarray, gamma: float, tau: float) -> np.ndarray:
    # one state: V* = τ log Σ_a exp((r_a + γV*)/τ), i.e. (1 − γ)V* = τ log Σ_a exp(r_a/τ),
    # and Q*(a) = r_a + γV*  (float64 here, far more accurate than the solvers checked)
    r = np.asarray(r, dtype=np.float64)
    m = float(np.max(r))
    v = (m + tau * math.log(float(np.sum(np.exp((r - m) / tau))))) / (1.0 - gamma)
    return r + gamma * v


@pytest.mark.parametrize(
    ("dtype", "scale", "gamma", "tau", "seed"),
    [(np.float32, 1.0, 0.9, 0.1, 0), (np.float32, 100.0, 0.999, 100.0, 10), (np.float64, 1e6, 0.99, 1e6, 1)],
)
def test_soft_certificate_covers_the_rounding_fixed_point(dtype, scale, gamma, tau, seed):
    # Bug found here: the bound was γ/(1−γ)·‖Q_{k+1} − Q_k‖∞ of the *computed* iterates. They
    # reach a rounding fixed point (Q_{k+1} = Q_k exactly) and were certified with bound 0 while
    # ‖Q − Q*_τ‖∞ was 2.1e-6 (float32, first case) and 2.4e-6 (float64, rewards 1e6); the
    # soft_reference target ran 1.07x past its bound (float32, γ = 0.999). The bound now adds
    # the rounding of the computed T_τ Q over 1 − γ.
    rng = np.random.default_rng(seed)
    A = int(rng.integers(1, 4))
    R = (rng.uniform(size=(1, A)) * scale).astype(dtype)
    mdp = FiniteMDP(np.ones((1, A, 1), dtype=dtype), R, gamma=gamma)
    q_star = _one_state_q_star(R[0], gamma, tau)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a tol below the rounding floor
        sols = [soft_value_iteration(mdp, tau=tau, tol=1e-12 * scale), soft_reference(mdp, tau=tau)]
    for sol in sols:
        err = float(np.max(np.abs(np.asarray(sol.Q, dtype=np.float64)[0] - q_star)))
        assert err <= float(sol.bound), (err, float(sol.bound))


def test_soft_tol_below_the_rounding_floor_is_reported():
    # float32, rewards 100, γ = 0.99: Q* ≈ 1e4 is resolved to 1e-3 only; tol = 1e-6 cannot be
    # certified, so the run ends converged=False with a warning naming the floor
    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=np.float32), np.array([[100.0, 50.0]], dtype=np.float32), gamma=0.99)
    with pytest.warns(ConvergenceWarning, match="round-off floor"):
        sol = soft_value_iteration(mdp, tau=1.0, tol=1e-6)
    assert not sol.converged
    err = float(np.max(np.abs(np.asarray(sol.Q, dtype=np.float64)[0] - _one_state_q_star([100.0, 50.0], 0.99, 1.0))))
    assert err <= float(sol.bound)


def test_soft_float64_unit_scale_unchanged_up_to_the_allowance():
    # at unit scale in float64 the allowance is ~1e-14: the answer and iteration count are those
    # of the contraction rule
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[1.0, 0.0]]), gamma=0.9)
    sol = soft_value_iteration(mdp, tau=1.0, tol=1e-10)
    assert sol.converged
    np.testing.assert_allclose(sol.Q[0], _one_state_q_star([1.0, 0.0], 0.9, 1.0), rtol=0, atol=1e-10)
    assert float(sol.bound) <= 1e-10


@pytest.mark.parametrize(("dtype", "tau"), [(np.float64, 1e-310), (np.float32, 1e-40), (np.float32, 1e-44)])
def test_soft_values_of_a_temperature_far_below_the_rewards_do_not_overflow(dtype, tau):
    # Bug found here: V = τ·logsumexp(Q/τ) divided first, and Q/τ overflowed (rewards 1, τ = 1e-310
    # in float64, τ = 1e-40 in float32): inf − inf = NaN, and soft value iteration failed with
    # "cannot convert float NaN to integer". One state, r = (1, 0), γ = 0.5: (1 − γ)V* =
    # τ log(e^{1/τ} + 1) = 1 + τ log(1 + e^{−1/τ}) = 1 to any precision, so Q* = r + γV* = (2, 1).
    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=dtype), np.array([[1.0, 0.0]], dtype=dtype), gamma=0.5)
    sol = soft_reference(mdp, tau=tau)
    err = float(np.max(np.abs(np.asarray(sol.Q, dtype=np.float64)[0] - [2.0, 1.0])))
    assert sol.converged
    assert err <= float(sol.bound) <= 1e-5
    # π*_τ puts e^{−1/τ} (0 here) on the worse action
    np.testing.assert_array_equal(np.asarray(sol.policy)[0], [1.0, 0.0])


def test_a_temperature_that_rounds_to_zero_in_the_dtype_is_named():
    # τ = 1e-46 is a positive number but 0 in float32 (smallest subnormal 1.4e-45): the soft values
    # divided by 0 and soft value iteration failed with "cannot convert float NaN to integer"
    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=np.float32), np.array([[1e-44, 0.0]], dtype=np.float32), gamma=0.5)
    with pytest.raises(ValueError, match=r"tau=1e-46 rounds to 0 in the model's dtype float32"):
        soft_value_iteration(mdp, tau=1e-46)
    # float64 holds it
    mdp64 = FiniteMDP(np.ones((1, 2, 1)), np.array([[1e-44, 0.0]]), gamma=0.5)
    assert soft_value_iteration(mdp64, tau=1e-46).converged


def test_soft_value_iteration_takes_numpy_tol_and_max_iter():
    # Bug found here: tol=np.float32(1e-6) (a float32 model's own bound is one) and np.array(1e-6)
    # were refused as "tol must be > 0", max_iter=np.int64(50) as "max_iter must be a positive
    # integer". Now any real scalar; the run is the same as with Python numbers.
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    ref = soft_value_iteration(mdp, tau=1.0, tol=float(np.float32(1e-6)), max_iter=50)
    for tol, max_iter in ((np.float32(1e-6), 50), (np.array(np.float32(1e-6)), np.int64(50))):
        sol = soft_value_iteration(mdp, tau=1.0, tol=tol, max_iter=max_iter)
        assert sol.converged and sol.iterations == ref.iterations
        np.testing.assert_array_equal(sol.Q, ref.Q)
    for bad in (True, math.nan, -1.0, "x"):
        with pytest.raises(ValueError, match="tol must be > 0; got "):
            soft_value_iteration(mdp, tau=1.0, tol=bad)
    with pytest.raises(ValueError, match="max_iter must be a positive integer; got np.True_"):
        soft_value_iteration(mdp, tau=1.0, max_iter=np.True_)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_soft_bellman_operator_refuses_a_non_finite_q_by_entry(bad):
    # Bug found here: soft_bellman_operator(Q = [[nan, 0]]) returned [[nan, nan]] without a word
    # (bellman_optimality_operator refuses a non-finite V: "V must be finite; V(s=0) = nan").
    from rltheory.algorithms.soft import soft_bellman_operator

    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    with pytest.raises(ValueError, match=r"Q must be finite; Q\(s=0, a=1\) = " + re.escape(str(bad))):
        soft_bellman_operator(mdp, np.array([[0.0, bad]]), tau=1.0)


def test_a_temperature_beyond_the_dtype_is_named():
    # Bug found here: τ = 1e40 is a finite float but inf in float32, and soft value iteration failed
    # with "OverflowError: cannot convert float infinity to integer" (entropy-regularised NPG with
    # "tol must be a positive finite number; got inf", from its reference). Now a ValueError naming
    # tau and the dtype; float64 takes it (π*_τ is uniform to within 1/τ).
    from rltheory.algorithms.npg import entropy_regularized_npg

    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=np.float32), np.array([[0.0, 1.0]], dtype=np.float32), gamma=0.5)
    msg = r"tau=1e\+40 exceeds the largest number of the model's dtype float32"
    with pytest.raises(ValueError, match=msg):
        soft_value_iteration(mdp, tau=1e40)
    with pytest.raises(ValueError, match=msg):
        entropy_regularized_npg(mdp, eta=1e-41, tau=1e40, iterations=2)
    mdp64 = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    # (Q ≈ 1.4e40 carries an absolute error ~1e25, i.e. ~1e-15 in Q/τ)
    np.testing.assert_allclose(soft_reference(mdp64, tau=1e40).policy, [[0.5, 0.5]], rtol=0, atol=1e-14)
