"""The exact discounted solvers refuse models whose values leave the float range, and empty batches.

Regression: with rewards 1e308 at γ = 0.9 (``V* = 1e309``, beyond float64) policy iteration returned
``converged=True`` with bound NaN and ``V = inf``, value iteration ran with overflow warnings and the
LP failed on an internal "v must be finite"; an empty batch crashed in numpy's reshape.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.errors import ConvergenceWarning
from rltheory.mdp import (
    FiniteMDP,
    linear_program,
    modified_policy_iteration,
    policy_iteration,
    value_iteration,
)

SOLVERS = [policy_iteration, value_iteration, modified_policy_iteration, linear_program]
P2 = np.full((2, 2, 2), 0.5)
R2 = np.array([[1e308, 0.0], [0.0, 1e308]])


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda f: f.__name__)
def test_values_beyond_the_float_range_are_refused(solver):
    # (value iteration's first sweep is still in range, V = R; its certificate is what overflows)
    with (
        pytest.raises(
            ValueError,
            match=r"(left|overflows) the float64 range: max\|R\| = 1e\+308 at gamma = 0.9",
        ),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("error")  # the located error, not a numpy RuntimeWarning first
        solver(FiniteMDP(P2, R2, 0.9))
    # the batch index of the first offending instance is named (the other instance is in range)
    batch = FiniteMDP(np.stack([P2, P2]), np.stack([R2 * 1e-10, R2]), 0.9)
    with pytest.raises(ValueError, match=r"\(batch index \(1,\)\)"):
        solver(batch)
    with pytest.raises(ValueError, match="the batch is empty"):
        solver(FiniteMDP(np.full((0, 2, 2, 2), 0.5), np.zeros((0, 2, 2)), 0.9))


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda f: f.__name__)
def test_values_inside_the_range_are_solved(solver):
    # R / 64: the optimal policy earns 1e308/64 at every step from either state, so V* = 1.5625e306/(1 − 0.9)
    # = 1.5625e307, in range; the run is certified at the model's scale
    kw = {"tol": 1e296} if solver in (value_iteration, modified_policy_iteration) else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = solver(FiniteMDP(P2, R2 / 64, 0.9), **kw)
    assert res.converged and np.all(np.isfinite(res.V))
    np.testing.assert_allclose(res.V, 1.5625e307, rtol=1e-12)
    assert float(res.bound) <= 1e-6 * 1.5625e307


def test_float32_range_is_the_float32_one():
    R = np.array([[4e37, 0.0], [0.0, 4e37]], dtype=np.float32)  # V* = 4e38 > 3.4e38
    with pytest.raises(ValueError, match="(left|overflows) the float32 range"):
        policy_iteration(FiniteMDP(P2.astype(np.float32), R, 0.9))


def test_values_at_the_edge_of_the_range_are_solved():
    # γ = 0, r = 1e308: V* = 1e308 is representable (the Q-learning family computes its Q* this way)
    res = policy_iteration(FiniteMDP(np.ones((1, 2, 1)), np.array([[1e308, -1e308]]), 0.0))
    assert res.converged and res.V[0] == 1e308 and res.policy[0] == 0


def test_values_in_range_with_a_bound_beyond_it_are_solved():
    # max|R|/(1 − γ) = 2^1024 overflows, but V* = (1.5, 0.5)·2^1023 is representable: solved, not refused
    mdp = FiniteMDP(np.full((2, 2, 2), 0.5), np.array([[2.0**1023, 0.0], [0.0, -(2.0**1023)]]), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = policy_iteration(mdp)
    np.testing.assert_array_equal(res.V, [1.5 * 2.0**1023, 0.5 * 2.0**1023])
    assert res.converged and np.isfinite(res.bound)


# V* in range while the sweeps' certificate is not. (a) R = ±2^1023 at γ = 0.5, uniform P: with
# ρ(s) = max_a r(s, a) = (2^1023, 0), V*(s) = ρ(s) + γ/(1 − γ)·mean ρ = ρ(s) + 2^1022, i.e.
# (1.5, 0.5)·2^1023. (b) r(0, ·) = 2^1022, r(1, ·) = −2^1022, uniform P at γ = 0.9: mean ρ = 0, so
# V* = ρ = (2^1022, −2^1022) exactly, while VI's first certificate γ/(1 − γ)·sp(Tv − v) = 9·2^1023
# is beyond the range and MPI's start min r/(1 − γ) = −10·2^1022 overflows.
_M = 2.0**1023
_IN_RANGE = [
    (np.array([[_M, 0.0], [0.0, -_M]]), 0.5, np.array([1.5 * _M, 0.5 * _M])),
    (np.array([[_M / 2, _M / 2], [-_M / 2, -_M / 2]]), 0.9, np.array([_M / 2, -_M / 2])),
]


@pytest.mark.parametrize("R, gamma, V_star", _IN_RANGE, ids=["pm2^1023-g0.5", "pm2^1022-g0.9"])
@pytest.mark.parametrize(
    "solver", [value_iteration, modified_policy_iteration], ids=lambda f: f.__name__
)
def test_vi_and_mpi_solve_a_model_whose_certificate_needs_scaling(solver, R, gamma, V_star):
    # they refused (a) (MPI) or (b) ('the certificate of this model overflows the float64 range')
    # or stopped unconverged, while policy iteration solves both: now they sweep R / 2^k
    mdp = FiniteMDP(np.full((2, 2, 2), 0.5), R, gamma)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = solver(mdp, tol=1e-12 * _M)
        pi = policy_iteration(mdp)
        lp = linear_program(mdp)
    assert res.converged and np.isfinite(res.bound) and res.bound < 1e-12 * _M
    np.testing.assert_array_equal(res.policy, pi.policy)
    np.testing.assert_array_equal(res.policy, lp.policy)
    # certificate: |V − V*| ≤ bound / 2 against the closed form, which PI and the LP also reach
    assert np.max(np.abs(res.V - V_star)) <= res.bound / 2
    np.testing.assert_allclose(pi.V, V_star, rtol=1e-15)
    np.testing.assert_allclose(lp.V, V_star, rtol=1e-9)
    np.testing.assert_allclose(res.Q, pi.Q, rtol=1e-12, atol=1e-12 * _M)
    assert np.all(np.isfinite(res.trace["bound"][1:]))


def test_scaled_and_unscaled_instances_in_one_batch():
    # one instance needs the scaling, the other (R / 2^1000) does not: each is certified in its
    # own units (tol = 1e-6 is below the first one's round-off floor, so the run ends unconverged
    # when that instance is stuck at its floor and the second is certified)
    R = _IN_RANGE[1][0]
    mdp = FiniteMDP(np.full((2, 2, 2, 2), 0.5), np.stack([R, R * 2.0**-1000]), 0.9)
    V_star = np.stack([_IN_RANGE[1][2], _IN_RANGE[1][2] * 2.0**-1000])
    for solver in (value_iteration, modified_policy_iteration):
        with pytest.warns(ConvergenceWarning, match="below the round-off floor"):
            res = solver(mdp, tol=1e-6)
        assert res.bound[0] < 1e-12 * _M and res.bound[1] < 1e-6
        assert np.all(np.abs(res.V - V_star) <= res.bound[:, None] / 2)


def test_float32_certificate_is_scaled_too():
    # (b) in float32: 2^126 rewards at γ = 0.9, V* = (2^126, −2^126)
    M = np.float32(2.0**126)
    mdp = FiniteMDP(np.full((2, 2, 2), 0.5, dtype=np.float32), np.array([[M, M], [-M, -M]]), 0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = value_iteration(mdp, tol=1e-3 * 2.0**126)
    assert res.V.dtype == np.float32 and res.converged
    assert np.max(np.abs(res.V.astype(np.float64) - [2.0**126, -(2.0**126)])) <= res.bound / 2


def test_lp_values_in_range_with_rho_over_one_minus_gamma_beyond_it():
    # the LP formed V = ρ/(1 − γ)·x with ρ/(1 − γ) = 2^1024 = inf and refused (a): 'V* left the
    # float64 range'; V = ρ·(x/(1 − γ)) is the same number, in range
    R, gamma, V_star = _IN_RANGE[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = linear_program(FiniteMDP(np.full((2, 2, 2), 0.5), R, gamma))
    assert np.max(np.abs(res.V - V_star)) <= res.bound and np.isfinite(res.bound)


def test_unconverged_first_sweep_reports_an_infinite_certificate():
    # max_iter=1 on (b): the first certificate 9·2^1023 is beyond the range; that is a result
    # (converged=False, bound inf, a ConvergenceWarning), not an exception
    R, gamma, _ = _IN_RANGE[1]
    with pytest.warns(ConvergenceWarning, match="certified bound is inf"):
        res = value_iteration(FiniteMDP(np.full((2, 2, 2), 0.5), R, gamma), max_iter=1)
    assert not res.converged and res.bound == np.inf and np.all(np.isfinite(res.V))


def test_policy_iteration_steps_past_an_early_certificate_beyond_the_range():
    # s0: action 0 pays 1 and falls into s1 (absorbing, V = -2^1022), action 1 pays 0 and moves to
    # s2 (absorbing, V = +2^1022); greedy(R) starts with action 0, whose certificate
    # (max(TV - V) + ...)/(1 - γ) ≈ 1.9·2^1022/0.1 is beyond the range although V* = (0.9, -1, 1)·2^1022
    # is not. PI refused it ('the certificate of this model overflows', after numpy's overflow
    # warning); it now records inf for that step and converges, as VI and the LP do
    M, g = 2.0**1022, 0.9
    P = np.zeros((3, 2, 3))
    P[0, 0, 1] = P[0, 1, 2] = 1.0
    P[1, :, 1] = P[2, :, 2] = 1.0
    R = np.array([[1.0, 0.0], [-M * (1 - g)] * 2, [M * (1 - g)] * 2])
    mdp = FiniteMDP(P, R, g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pi = policy_iteration(mdp)
        lp = linear_program(mdp)
        vi = value_iteration(mdp, tol=1e-10 * M)
    assert pi.converged and np.isfinite(pi.bound) and pi.bound < 1e-12 * M
    assert pi.trace["bound"][0] == np.inf and pi.iterations == 2
    np.testing.assert_array_equal(pi.policy, [1, 0, 0])
    np.testing.assert_array_equal(pi.policy, lp.policy)
    np.testing.assert_allclose(pi.V, [0.9 * M, -M, M], rtol=1e-14)
    assert np.max(np.abs(pi.V - vi.V)) <= pi.bound + vi.bound / 2
    assert np.max(np.abs(pi.V - lp.V)) <= pi.bound + lp.bound


def test_value_iteration_starts_broader_than_the_model_batch():
    # V0 may carry more batch axes than the model ((5, S) for one model: five runs in one call);
    # the range scaling of b16ae0f broadcast log2‖V0‖ to the model's batch and failed there with
    # numpy's "cannot broadcast a non-scalar to a scalar array". Each row must equal its own run
    rng = np.random.default_rng(11)
    mdp = FiniteMDP(np.full((2, 2, 2), 0.5), np.array([[1.0, 0.0], [0.0, 0.5]]), 0.9)
    V0 = rng.normal(size=(5, 2)) * 10
    both = value_iteration(mdp, V0=V0, tol=1e-10)
    assert both.V.shape == (5, 2) and both.bound.shape == (5,)
    for i in range(5):
        one = value_iteration(mdp, V0=V0[i], tol=1e-10)
        assert np.max(np.abs(both.V[i] - one.V)) <= (both.bound[i] + one.bound) / 2
    # ... also when the model needs the scaling: one scale per model instance serves every start
    R, gamma, V_star = _IN_RANGE[1]
    big = FiniteMDP(np.full((1, 2, 2, 2), 0.5), R[None], gamma)
    res = value_iteration(big, V0=np.stack([np.zeros(2), V_star]), tol=1e-12 * _M)
    assert res.converged and res.V.shape == (2, 2)
    assert np.all(np.abs(res.V - V_star) <= res.bound[:, None] / 2)
    # a start batch that does not broadcast against the model's is named
    three = FiniteMDP(np.full((3, 2, 2, 2), 0.5), np.ones((3, 2, 2)), 0.9)
    with pytest.raises(
        ValueError,
        match=r"V0's batch shape \(4,\) does not broadcast against the model's batch shape \(3,\)",
    ):
        value_iteration(three, V0=np.zeros((4, 2)))
