"""Exact policy gradient, NPG, entropy-regularised NPG and projected PG against their theorems."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.policy_gradient import (
    entropy_npg_step,
    entropy_regularized_npg,
    natural_policy_gradient,
    npg_step,
    projected_gradient_step,
    projected_policy_gradient,
    softmax_gradient,
    softmax_policy,
    softmax_policy_gradient,
)
from rltheory.algorithms.soft import (
    regularized_values,
    soft_bellman_operator,
    soft_reference,
    soft_value_iteration,
)
from rltheory.backend import to_numpy
from rltheory.bounds.policy_optimization import (
    entropy_npg_bound,
    entropy_npg_constant,
    entropy_pg_bound,
    entropy_pg_step_size,
    mismatch_coefficient,
    npg_bound,
    projected_pg_bound,
    regularization_bias_bound,
    softmax_pg_bound,
)
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP, advantage, evaluate_policy, policy_iteration, state_occupancy
from rltheory.mdp.zoo import random_mdp
from rltheory.testing import discounts, exact_policy_values, finite_mdps, policies


def _value(mdp, theta, rho, tau):
    pi = softmax_policy(theta)
    if tau == 0.0:
        return float(evaluate_policy(mdp, pi) @ rho)
    return float(regularized_values(mdp, pi, tau=tau)[0] @ rho)


# -- theorems -----------------------------------------------------------------------


@settings(max_examples=25)
@given(
    finite_mdps(max_states=4, max_actions=3, gamma=discounts(0.0, 0.9)),
    st.integers(0, 2**31),
    st.sampled_from([0.0, 0.3]),
)
def test_exact_gradient_equals_central_finite_differences(mdp, seed, tau):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(mdp.S, mdp.A))
    rho = np.asarray(mdp.initial_distribution())
    grad = softmax_gradient(mdp, theta, rho=rho, tau=tau)
    h = 1e-5
    fd = np.zeros_like(theta)
    for s in range(mdp.S):
        for a in range(mdp.A):
            e = np.zeros_like(theta)
            e[s, a] = h
            fd[s, a] = (_value(mdp, theta + e, rho, tau) - _value(mdp, theta - e, rho, tau)) / (2 * h)
    np.testing.assert_allclose(grad, fd, atol=1e-6, rtol=0)


@given(finite_mdps(max_states=5, max_actions=4), st.data())
def test_npg_step_is_the_closed_form_and_the_fisher_preconditioned_step(mdp, data):
    pi = data.draw(policies(mdp.S, mdp.A, deterministic_rows=False))
    pi = 0.5 * pi + 0.5 / mdp.A  # full support, so the Fisher matrix has the one-dimensional null space per state
    eta = data.draw(st.floats(0.01, 5.0))
    g = mdp.gamma
    new = npg_step(mdp, pi, eta=eta)
    # closed form from the advantage of rltheory.mdp
    z = eta * np.asarray(advantage(mdp, pi)) / (1 - g)
    w = pi * np.exp(z - z.max(-1, keepdims=True))  # shifting each row leaves the ratio unchanged, avoids inf/inf
    np.testing.assert_allclose(new, w / w.sum(-1, keepdims=True), atol=1e-12)
    # independent route: theta + eta * pinv(F) grad (Kakade 2001), states with d(s) > 0
    mu = np.full(mdp.S, 1.0 / mdp.S)
    theta = np.log(pi)
    grad = np.asarray(softmax_gradient(mdp, theta, rho=mu)).ravel()
    d = np.asarray(state_occupancy(mdp, pi, mu))
    F = np.zeros((mdp.S * mdp.A,) * 2)
    for s in range(mdp.S):
        blk = d[s] * (np.diag(pi[s]) - np.outer(pi[s], pi[s]))
        F[s * mdp.A : (s + 1) * mdp.A, s * mdp.A : (s + 1) * mdp.A] = blk
    nat = np.linalg.pinv(F, rcond=1e-12) @ grad
    fisher = softmax_policy(theta + eta * nat.reshape(mdp.S, mdp.A))
    np.testing.assert_allclose(fisher, new, atol=1e-8)


@given(finite_mdps(max_states=6, max_actions=4), st.data())
def test_npg_step_never_decreases_any_state_value(mdp, data):
    pi = data.draw(policies(mdp.S, mdp.A))
    eta = data.draw(st.floats(1e-3, 50.0))
    V0 = np.asarray(evaluate_policy(mdp, pi))
    V1 = np.asarray(evaluate_policy(mdp, npg_step(mdp, pi, eta=eta)))
    assert np.all(V1 >= V0 - 1e-9 * (1 + np.abs(V0).max()))


@settings(max_examples=30)
@given(finite_mdps(max_states=6, max_actions=4, gamma=discounts(0.0, 0.95)), st.floats(0.05, 20.0))
def test_npg_sublinear_bound_holds_at_every_iterate_in_sup_norm(mdp, eta):
    res = natural_policy_gradient(mdp, eta=eta, iterations=40)
    t = np.arange(1, 41)
    bound = npg_bound(t, eta=eta, gamma=mdp.gamma, n_actions=mdp.A)
    # the theorem holds for every rho, so for point masses: the sup-norm gap
    assert np.all(res.trace["suboptimality_inf"][1:] <= bound + 1e-9)
    assert np.all(res.trace["suboptimality"][1:] <= bound + 1e-9)


@settings(max_examples=20)
@given(finite_mdps(max_states=4, max_actions=3, gamma=discounts(0.0, 0.8)))
def test_softmax_pg_mei_bound_holds_at_every_iterate(mdp):
    g = mdp.gamma
    eta = (1 - g) ** 3 / 8
    T = 60
    res = softmax_policy_gradient(mdp, eta=eta, iterations=T)
    rho = np.asarray(mdp.initial_distribution())
    pi_star = policy_iteration(mdp).policy
    c = np.minimum.accumulate(res.trace["optimal_action_prob"])[1:]
    bound = softmax_pg_bound(
        np.arange(1, T + 1), gamma=g, n_states=mdp.S, c=c,
        mismatch=float(mismatch_coefficient(mdp, pi_star, rho)), inv_rho=1 / rho.min(),
    )
    assert np.all(res.trace["suboptimality"][1:] <= bound + 1e-9)


def _mei_entropy_bound(mdp, tau, res, soft):
    # Mei et al. (2020), Thm 6, with rho = mu (the objective's start distribution): trace
    # index k is the paper's t = k + 1; c is the running minimum of min_{s,a} pi_k(a|s).
    mu = np.asarray(mdp.initial_distribution())
    c = np.minimum.accumulate(res.trace["min_prob"])
    k = np.arange(len(c))
    return entropy_pg_bound(
        k + 1, gamma=mdp.gamma, tau=tau, n_actions=mdp.A, c=c,
        mismatch=float(mismatch_coefficient(mdp, soft.policy, mu)), inv_mu=1 / mu.min(),
    )


@settings(max_examples=15)
@given(finite_mdps(max_states=4, max_actions=3, gamma=discounts(0.0, 0.9)), st.sampled_from([0.1, 0.5, 2.0]))
def test_entropy_softmax_pg_mei_linear_bound_holds_at_every_iterate(mdp, tau):
    soft = soft_reference(mdp, tau=tau)  # (a fixed 1e-13 lies below soft VI's round-off floor for some models)
    eta = entropy_pg_step_size(gamma=mdp.gamma, tau=tau, n_actions=mdp.A)
    res = softmax_policy_gradient(mdp, eta=eta, tau=tau, iterations=60, soft=soft)
    bound = _mei_entropy_bound(mdp, tau, res, soft)
    atol = 1e-9 * (1 + np.abs(np.asarray(soft.V)).max())
    assert np.all(res.trace["suboptimality"] <= bound + atol)
    # with c fixed at the run's infimum the bound contracts by exp(-C) < 1 per step (C > 0);
    # with the running minimum it need not be monotone (c shrinks while t grows)
    mu = np.asarray(mdp.initial_distribution())
    fixed = entropy_pg_bound([1, 2], gamma=mdp.gamma, tau=tau, n_actions=mdp.A, c=res.trace["min_prob"].min(),
                             mismatch=float(mismatch_coefficient(mdp, soft.policy, mu)), inv_mu=1 / mu.min())
    assert 0 < fixed[1] / fixed[0] < 1


def test_entropy_softmax_pg_long_run_sits_under_a_non_trivial_mei_bound():
    # Bandit (S = 1, gamma = 0), r = (0, 1), tau = 1: after 3000 steps the Thm 6 bound is far
    # below the trivial range (1 + tau log A)/(1 - gamma)^2 = 1 + log 2, and the measured
    # regularised gap must still sit under it at every iterate.
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    tau, T = 1.0, 3000
    soft = soft_value_iteration(mdp, tau=tau, tol=1e-14)
    res = softmax_policy_gradient(mdp, eta=entropy_pg_step_size(gamma=0.0, tau=tau, n_actions=2),
                                  tau=tau, iterations=T, soft=soft)
    bound = _mei_entropy_bound(mdp, tau, res, soft)
    assert bound[-1] < 1e-2 * (1 + math.log(2))
    assert np.all(res.trace["suboptimality"] <= bound + 1e-12)


def test_entropy_pg_bound_reference_values():
    # C = (1-g)^4/(8/tau + 4 + 8 log A) * c^2 / (inv_mu * mismatch); bound(t) = inv_mu (1 + tau log A)/(1-g)^2 e^{-C(t-1)}.
    # gamma = 1/2, tau = 2, A = 1 (log A = 0), c = 1, mismatch = 2, inv_mu = 4:
    # C = (1/16)/(4 + 4) / 8 = 1/1024; bound(1) = 4 * 1 / (1/4) = 16; bound(1025) = 16/e.
    b = entropy_pg_bound([1, 1025], gamma=0.5, tau=2.0, n_actions=1, c=1.0, mismatch=2.0, inv_mu=4.0)
    np.testing.assert_allclose(b, [16.0, 16.0 / math.e], rtol=1e-14)
    # eta = (1 - gamma)^3/(8 + tau(4 + 8 log A)): gamma = 1/2, tau = 1, A = 1 -> (1/8)/12
    assert entropy_pg_step_size(gamma=0.5, tau=1.0, n_actions=1) == pytest.approx(1 / 96, rel=1e-15)
    with pytest.raises(ValueError, match="c must be > 0"):
        entropy_pg_bound(1, gamma=0.5, tau=1.0, n_actions=2, c=0.0, mismatch=1.0, inv_mu=1.0)
    with pytest.raises(ValueError, match="tau must be a finite number > 0"):
        entropy_pg_bound(1, gamma=0.5, tau=0.0, n_actions=2, c=0.5, mismatch=1.0, inv_mu=1.0)
    with pytest.raises(ValueError, match=r"t must be >= 1"):
        entropy_pg_bound(0, gamma=0.5, tau=1.0, n_actions=2, c=0.5, mismatch=1.0, inv_mu=1.0)
    with pytest.raises(ValueError, match="n_actions must be an integer >= 1"):
        entropy_pg_step_size(gamma=0.5, tau=1.0, n_actions=0)


def _soft_tol(mdp):
    """A soft-VI tolerance 10× below these tests' comparison tolerances (1e-9 relative to the
    values, which are at least ``‖r‖``-sized in the bound checks). Fixed tolerances such as 1e-13
    sat under the certificate's round-off floor ``γ/(1−γ)·(a few ε)·‖Q‖∞`` once ``γ`` nears
    0.99; soft VI then stops at its cap (a warning; its values are as exact as float64 allows)."""
    return 1e-10 * (1 + np.abs(np.asarray(mdp.R)).max())


@settings(max_examples=25)
@given(
    finite_mdps(max_states=5, max_actions=4, gamma=discounts(0.0, 0.95)),
    st.floats(0.05, 2.0),
    st.floats(0.05, 1.0),
)
def test_entropy_npg_cen_bounds_hold_at_every_iterate(mdp, tau, frac):
    g = mdp.gamma
    eta = frac * (1 - g) / tau
    soft = soft_value_iteration(mdp, tau=tau, tol=_soft_tol(mdp))
    res = entropy_regularized_npg(mdp, eta=eta, tau=tau, iterations=30, soft=soft)
    C1 = float(entropy_npg_constant(mdp, eta=eta, tau=tau, soft=soft))
    qb, lb = entropy_npg_bound(np.arange(1, 31), eta=eta, tau=tau, gamma=g, C1=C1)
    atol = 1e-9 * (1 + np.abs(np.asarray(soft.Q)).max())
    assert np.all(res.trace["q_error"][1:] <= qb + atol)
    assert np.all(res.trace["log_policy_error"][1:] <= lb + atol / tau)


@settings(max_examples=20)
@given(finite_mdps(max_states=5, max_actions=4, gamma=discounts(0.0, 0.9)), st.floats(0.1, 1.0))
def test_entropy_npg_converges_to_the_soft_optimal_policy(mdp, tau):
    # the reference at the accuracy round-off allows (a fixed tol=1e-13 lies below soft VI's
    # certified round-off floor for some drawn models, and warned)
    soft = soft_reference(mdp, tau=tau)
    res = entropy_regularized_npg(mdp, eta=(1 - mdp.gamma) / tau, tau=tau, iterations=400, tol=1e-10, soft=soft)
    assert res.converged is True
    np.testing.assert_allclose(res.policy, soft.policy, atol=1e-8)
    # the soft-optimal policy is a fixed point of the entropy-regularised NPG step
    np.testing.assert_allclose(entropy_npg_step(mdp, soft.policy, eta=0.5 * (1 - mdp.gamma) / tau, tau=tau),
                               soft.policy, atol=1e-9)


@given(finite_mdps(max_states=5, max_actions=4), st.floats(0.01, 2.0))
def test_regularisation_bias_inequality(mdp, tau):
    soft = soft_value_iteration(mdp, tau=tau, tol=_soft_tol(mdp))
    Vstar = np.asarray(policy_iteration(mdp).V)
    b = regularization_bias_bound(tau=tau, n_actions=mdp.A, gamma=mdp.gamma)
    diff = np.asarray(soft.V) - Vstar
    tol = 1e-9 * (1 + np.abs(Vstar).max())
    assert np.all(diff >= -tol) and np.all(diff <= b + tol)
    V_soft_policy = np.asarray(evaluate_policy(mdp, soft.policy))
    assert np.all(V_soft_policy >= Vstar - b - tol)


@given(finite_mdps(max_states=5, max_actions=3), st.floats(0.05, 3.0))
def test_soft_bellman_operator_is_a_gamma_contraction(mdp, tau):
    rng = np.random.default_rng(0)
    U, W = rng.normal(size=(2, mdp.S, mdp.A)) * 3
    lhs = np.abs(soft_bellman_operator(mdp, U, tau=tau) - soft_bellman_operator(mdp, W, tau=tau)).max()
    assert lhs <= mdp.gamma * np.abs(U - W).max() + 1e-12


@settings(max_examples=20)
@given(finite_mdps(min_actions=2, max_states=4, max_actions=3, gamma=discounts(0.1, 0.8)))
def test_projected_pg_agarwal_bound_on_best_iterate(mdp):
    g = mdp.gamma
    eta = (1 - g) ** 3 / (2 * g * mdp.A)
    T = 40
    res = projected_policy_gradient(mdp, eta=eta, iterations=T)
    rho = np.asarray(mdp.initial_distribution())
    mism = float(mismatch_coefficient(mdp, policy_iteration(mdp).policy, rho))
    best = np.minimum.accumulate(res.trace["suboptimality"])[:-1]  # min over t < T
    bound = projected_pg_bound(np.arange(1, T + 1), gamma=g, n_states=mdp.S, n_actions=mdp.A, mismatch=mism)
    assert np.all(best <= bound + 1e-9)


# -- reference values -----------------------------------------------------------------


def test_npg_on_a_bandit_has_the_exponential_weights_closed_form():
    # S = 1, gamma = 0: A^pi(a) = r(a) - <pi, r>; per-state constants cancel in the
    # normalisation, so from uniform pi_T(a) = exp(eta T r(a)) / sum_b exp(eta T r(b)).
    r = np.array([[0.2, 0.5, 0.9]])
    mdp = FiniteMDP(np.ones((1, 3, 1)), r, gamma=0.0)
    res = natural_policy_gradient(mdp, eta=0.7, iterations=5)
    w = np.exp(0.7 * 5 * r)
    np.testing.assert_allclose(res.policy, w / w.sum(), atol=1e-13)


def test_soft_value_iteration_single_state_closed_form():
    # One state: V = gamma V + tau log sum_a exp(r_a / tau)  =>  V = tau log sum exp(r/tau) / (1 - gamma).
    r = np.array([[0.0, 1.0, 3.0]])
    tau, g = 0.5, 0.8
    sol = soft_value_iteration(FiniteMDP(np.ones((1, 3, 1)), r, gamma=g), tau=tau, tol=1e-12)
    V = tau * np.log(np.exp(r / tau).sum()) / (1 - g)
    assert sol.converged
    np.testing.assert_allclose(sol.V, [V], atol=1e-10)
    np.testing.assert_allclose(sol.policy, np.exp(r / tau) / np.exp(r / tau).sum(), atol=1e-12)


def test_soft_value_iteration_at_its_cap_warns_and_names_the_round_off_floor():
    mdp = random_mdp(4, 3, gamma=0.99, rng=3)
    with pytest.warns(ConvergenceWarning, match=r"stopped at max_iter=5 with certificate") as rec:
        sol = soft_value_iteration(mdp, tau=1.0, tol=1e-6, max_iter=5)
    assert sol.converged is False and sol.iterations == 5
    assert "round-off floor" not in str(rec[0].message)  # far from the floor: just the cap
    # tol = 1e-12 at γ = 0.99 sits at the certificate's round-off floor γ/(1−γ)·4ε·‖Q‖∞ (a few
    # 1e-12): some instances reach an exact floating-point fixed point, the others stall within
    # a few ulps of it; every stalled run must say that tol is the problem, not the cap.
    stalled = 0
    for seed in range(10):
        for tau in (0.01, 0.3):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                sol = soft_value_iteration(random_mdp(3, 2, gamma=0.99, rng=seed), tau=tau, tol=1e-12)
            if not sol.converged:
                stalled += 1
                assert float(np.max(sol.bound)) < 1e-10  # as far as float64 allows
                # the message now names the floor the certificate itself counts (the rounding of
                # the computed T_τ Q over 1−γ; before it, the bound could be 0 below the true error)
                assert re.search(r"round-off floor \(about [0-9.e+-]+, the rounding of the computed T_τ Q over 1−γ\)"
                                 r" in this dtype: ask for a larger tol", str(caught[-1].message))
    assert stalled > 0


def _float32_twin(seed):
    """A float32 model at γ = 0.999 and its float64 twin on the row-normalised stored P."""
    rng = np.random.default_rng(seed)
    P = rng.random((3, 2, 3))
    P /= P.sum(-1, keepdims=True)
    m32 = FiniteMDP(P.astype(np.float32), (10.0 * rng.random((3, 2))).astype(np.float32), gamma=0.999)
    P64 = np.asarray(m32.P, dtype=np.float64)
    return m32, FiniteMDP(P64 / P64.sum(-1, keepdims=True), np.asarray(m32.R, dtype=np.float64), gamma=0.999)


_DRIVERS = {"softmax": softmax_policy_gradient, "projected": projected_policy_gradient,
            "npg": natural_policy_gradient}


@pytest.mark.parametrize("driver, eta", [("softmax", 10.0), ("projected", 0.01), ("npg", 1.0)])
def test_pg_stopping_rule_is_certified_on_float32_models(driver, eta):
    # float32 policy iteration on this model stopped at a policy 11.7 below optimal (its own
    # certified bound said 34.6); the drivers stopped on the computed suboptimality ≤ 0 with
    # converged=True and a true suboptimality of 11.7 (NPG after one iteration). They now stop on
    # suboptimality_bound (computed gap + the certified errors of V^π, V* and the ρ-weighting),
    # which covers the float64 truth; tol = 1e-4 is below its round-off floor here, and the run
    # says so. (Since 15bf39b float32 policy iteration finds the optimal policy here, so the
    # computed gap is honest: softmax PG at η = 10 is truly 11.73 below after 60 iterations, and
    # only the drivers that get near the optimum are asked for a computed gap ≤ 1e-4.)
    fn = _DRIVERS[driver]
    m32, m64 = _float32_twin(16)
    V_star = np.asarray(policy_iteration(m64).V)
    with pytest.warns(ConvergenceWarning, match=r"reached iterations=60 with certified suboptimality .* tol is "
                                                r"below the round-off floor"):
        res = fn(m32, eta=eta, iterations=60, tol=1e-4)
    assert res.converged is False and res.iterations == 60
    pi = np.asarray(res.policy, dtype=np.float64)
    true = float(np.mean(V_star - np.asarray(evaluate_policy(m64, pi / pi.sum(-1, keepdims=True)))))
    assert res.trace["suboptimality_bound"][-1] >= true
    if driver == "softmax":  # far from the optimum: the computed gap is the true one within the bound
        assert true > 11.0
        gap, bound = float(res.trace["suboptimality"][-1]), float(res.trace["suboptimality_bound"][-1])
        assert abs(gap - true) <= bound - gap  # the certified errors the bound adds to the gap
    else:
        assert np.min(res.trace["suboptimality"]) <= 1e-4  # what the old rule stopped on


@pytest.mark.parametrize("driver, eta, tol", [("softmax", 5.0, 1e-3), ("projected", 0.5, 1e-6), ("npg", 1.0, 1e-9)])
def test_pg_certified_stop_in_float64(driver, eta, tol):
    # In float64 the certificate's floor is ~1e-14 here: tol is certified (converged=True), the
    # bound covers the exact suboptimality, and it exceeds the computed one by at most the floor.
    # (Softmax PG's O(1/t) rate: tol 1e-3 within the budget.)
    fn = _DRIVERS[driver]
    mdp = random_mdp(5, 3, gamma=0.5, rng=7)
    res = fn(mdp, eta=eta, iterations=5000, tol=tol)
    assert res.converged is True
    b, sub = res.trace["suboptimality_bound"], res.trace["suboptimality"]
    assert b[-1] <= tol and np.all(b >= sub) and np.all(b - sub <= 1e-12)
    V_star = np.asarray(policy_iteration(mdp).V)
    exact = float(np.asarray(mdp.initial_distribution()) @ (V_star - np.asarray(evaluate_policy(mdp, res.policy))))
    assert exact <= b[-1]


def test_entropy_softmax_pg_stop_is_certified_on_float32_models():
    # τ = 0.1, float32, γ = 0.999: the float32 soft reference and regularised evaluations are each
    # off by tens, so the computed regularised suboptimality was −30.3 after one iteration and the
    # old rule returned converged=True at a true suboptimality of 2.36 (16 of 40 such float32
    # runs). Now the stop is on suboptimality_bound, which covers the float64 truth.
    m32, m64 = _float32_twin(1)
    with pytest.warns(ConvergenceWarning, match=r"tol is below the round-off floor"):
        res = softmax_policy_gradient(m32, eta=1.0, tau=0.1, iterations=20, tol=1e-3)
    assert res.converged is False and np.min(res.trace["suboptimality"]) < 0
    ref = soft_reference(m64, tau=0.1)
    pi = np.asarray(res.policy, dtype=np.float64)
    V, _ = regularized_values(m64, pi / pi.sum(-1, keepdims=True), tau=0.1)
    assert float(np.mean(np.asarray(ref.V) - np.asarray(V))) - float(ref.bound) <= res.trace["suboptimality_bound"][-1]


def test_entropy_npg_stop_counts_probabilities_that_underflowed():
    # float32, τ = 0.01: the soft-optimal policy has probabilities far below float32's range, so
    # the evaluated (and returned) policy has exact zeros and its log-policy error is infinite.
    # The old rule measured the error on the finite log-softmax and stopped after 2 iterations
    # with converged=True; now the error is inf there and the run says it did not converge.
    m32, _ = _float32_twin(16)
    mdp = FiniteMDP(m32.P, m32.R, gamma=0.9)
    with pytest.warns(ConvergenceWarning, match=r"reached iterations=30 with certified error inf > tol=0\.1"):
        res = entropy_regularized_npg(mdp, eta=0.1 / 0.01, tau=0.01, iterations=30, tol=0.1)
    assert res.converged is False
    assert np.any(np.asarray(res.policy) == 0)
    assert np.isinf(res.trace["log_policy_error"][-1]) and np.isinf(res.trace["log_policy_error_bound"][-1])


def test_entropy_npg_error_bounds_cover_the_float64_truth():
    # float32 model, τ = 1: q_error_bound and log_policy_error_bound cover the errors of the
    # returned policy against the float64 soft-optimal Q and log-policy of the same stored model
    # (row-normalised), and a tol above their floor is certified in float64.
    m32, m64 = _float32_twin(16)
    m32, m64 = FiniteMDP(m32.P, m32.R, gamma=0.9), FiniteMDP(m64.P, m64.R, gamma=0.9)
    res = entropy_regularized_npg(m32, eta=0.05, tau=1.0, iterations=40)
    ref = soft_reference(m64, tau=1.0)
    pi = np.asarray(res.policy, dtype=np.float64)
    pi /= pi.sum(-1, keepdims=True)
    _, Q = regularized_values(m64, pi, tau=1.0)
    true_q = np.max(np.abs(np.asarray(ref.Q) - np.asarray(Q))) - float(ref.bound)
    true_log = np.max(np.abs(np.log(pi) - np.asarray(ref.log_policy))) - 2 * float(ref.bound)
    assert true_q <= res.trace["q_error_bound"][-1] and true_log <= res.trace["log_policy_error_bound"][-1]
    assert res.trace["q_error_bound"][-1] < 10 * (res.trace["q_error"][-1] + 1e-3)  # and not vacuous
    res64 = entropy_regularized_npg(m64, eta=0.05, tau=1.0, iterations=2000, tol=1e-8)
    assert res64.converged is True and res64.trace["q_error_bound"][-1] <= 1e-8


def test_projection_step_scaled_form_equals_the_direct_projection():
    # project_step takes Π(π + ηd) as η·Π_{1/η}(π/η + d) where π + ηd overflows; the two forms
    # are the same point (Π(cz) = cΠ_{1/c}(z)): checked where both are finite.
    import array_api_compat.numpy as xp

    from rltheory.algorithms._policy_opt import _project_to_sum, project_simplex

    rng = np.random.default_rng(5)
    for eta in (0.3, 7.0, 1e3):
        pi = rng.dirichlet(np.ones(4), size=(6,))
        d = rng.standard_normal((6, 4))
        direct = project_simplex(pi + eta * d, xp)
        scaled = eta * _project_to_sum(pi / eta + d, 1.0 / eta, xp)
        np.testing.assert_allclose(scaled, direct, rtol=0, atol=1e-12)
        np.testing.assert_allclose(scaled.sum(-1), 1.0, atol=1e-12)


def test_projected_pg_and_euclidean_pmd_take_steps_whose_size_overflows():
    # R = (0, 1e300) with η = 1e8 (and R = (0, 1) with η = 1e308): π + η∇ overflowed to inf,
    # the projection formed inf − inf and the next evaluation raised "pi must be finite" for an
    # input the caller never passed. The step is the vertex of the better action.
    from rltheory.algorithms.policy_mirror_descent import pmd_euclidean_step, policy_mirror_descent

    huge = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1e300]]), gamma=0.9)
    res = projected_policy_gradient(huge, eta=1e8, iterations=2)
    np.testing.assert_allclose(res.policy, [[0.0, 1.0]], rtol=0, atol=4e-16)  # (the scaled form's rounding)
    assert res.trace["suboptimality"][-1] <= 1e-15 * 1e301
    unit = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.9)
    step = pmd_euclidean_step(unit, np.full((1, 2), 0.5), eta=1e308)
    np.testing.assert_allclose(step, [[0.0, 1.0]], rtol=0, atol=4e-16)
    res = policy_mirror_descent(unit, step_sizes=1e308, iterations=2, update=pmd_euclidean_step)
    np.testing.assert_allclose(res.policy, [[0.0, 1.0]], rtol=0, atol=4e-16)
    assert res.trace["suboptimality_bound"][-1] <= 1e-12


@pytest.mark.parametrize("dtype, eta", [(np.float64, 1e306), (np.float32, 1e38)])
def test_npg_rejects_a_step_whose_logits_would_overflow(dtype, eta):
    # eta = 1e308 (float64) or 1e38 (float32) on a unit-reward bandit: the scores eta*A/(1-gamma)
    # overflowed, inf - inf made the policy NaN, and the run returned it without a word. A step
    # whose updates can leave the range is now a located error; 1e300 (float64) still runs.
    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=dtype), np.array([[0.0, 1.0]], dtype=dtype), gamma=0.9)
    with pytest.raises(ValueError, match=re.escape(f"eta={eta:g}") + r" is too large for this model: over 5 "
                                         r"iterations the logit "
                                         rf"updates eta\*A/\(1-gamma\) can exceed .* \(an eighth of the largest "
                                         rf"{np.dtype(dtype).name} number\)"):
        natural_policy_gradient(mdp, eta=eta, iterations=5)
    ok = natural_policy_gradient(mdp, eta=eta * 1e-8, iterations=5)
    np.testing.assert_array_equal(ok.policy, [[0.0, 1.0]])


def test_softmax_pg_plateau_is_slower_than_npg_on_the_same_instance():
    mdp = random_mdp(8, 3, gamma=0.9, rng=3)
    pg = softmax_policy_gradient(mdp, eta=(1 - 0.9) ** 3 / 8, iterations=200)
    npg = natural_policy_gradient(mdp, eta=1.0, iterations=200)
    assert npg.trace["suboptimality"][-1] < 1e-3 * pg.trace["suboptimality"][-1]


# -- consistency ------------------------------------------------------------------------


def test_batched_runs_equal_per_instance_runs():
    mdp = random_mdp(6, 3, gamma=0.9, rng=1, batch_shape=(3,))
    runs = {
        "npg": lambda m: natural_policy_gradient(m, eta=0.5, iterations=15),
        "entropy": lambda m: entropy_regularized_npg(m, eta=0.05, tau=0.5, iterations=15),
        "pg": lambda m: softmax_policy_gradient(m, eta=0.5, iterations=15),
        "proj": lambda m: projected_policy_gradient(m, eta=0.05, iterations=15),
    }
    for name, run in runs.items():
        batch = run(mdp)
        for i in range(3):
            single = run(mdp[i])
            np.testing.assert_allclose(batch.policy[i], single.policy, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(
                batch.trace["suboptimality"][:, i], single.trace["suboptimality"], atol=1e-12, err_msg=name
            )


def test_npg_driver_equals_iterated_checked_steps_and_keeps_zero_support():
    # The driver runs unchecked kernels (A = r - K V, fused log-space normalise); the
    # public npg_step validates and uses evaluate_policy/q_values: the iterates must agree.
    mdp = random_mdp(6, 3, gamma=0.9, rng=4)
    pi0 = np.full((6, 3), 1 / 3)
    pi0[0] = [0.5, 0.5, 0.0]
    res = natural_policy_gradient(mdp, eta=0.8, iterations=7, pi0=pi0)
    pi = pi0
    for _ in range(7):
        pi = npg_step(mdp, pi, eta=0.8)
    np.testing.assert_allclose(res.policy, pi, atol=1e-12)
    assert res.policy[0, 2] == 0.0
    np.testing.assert_allclose(
        res.trace["suboptimality"][-1], (policy_iteration(mdp).V - evaluate_policy(mdp, pi)) @ mdp.initial_distribution(),
        atol=1e-12,
    )


def test_entropy_npg_with_the_largest_step_is_soft_policy_iteration():
    mdp = random_mdp(5, 3, gamma=0.8, rng=2)
    pi = np.full((5, 3), 1 / 3)
    tau = 0.4
    _, Q = regularized_values(mdp, pi, tau=tau)
    spi = np.exp(Q / tau) / np.exp(Q / tau).sum(-1, keepdims=True)
    np.testing.assert_allclose(entropy_npg_step(mdp, pi, eta=(1 - 0.8) / tau, tau=tau), spi, atol=1e-12)


def test_kernels_run_under_every_backend(xp):
    m = random_mdp(4, 3, gamma=0.9, rng=5)
    mdp = FiniteMDP(xp.asarray(np.asarray(m.P)), xp.asarray(np.asarray(m.R)), gamma=0.9)
    pi = xp.asarray(np.full((4, 3), 1 / 3))
    ref = npg_step(m, np.full((4, 3), 1 / 3), eta=0.3)
    np.testing.assert_allclose(to_numpy(npg_step(mdp, pi, eta=0.3)), ref, atol=1e-12)
    np.testing.assert_allclose(
        to_numpy(softmax_gradient(mdp, xp.zeros((4, 3), dtype=xp.float64))),
        softmax_gradient(m, np.zeros((4, 3))), atol=1e-12,
    )
    np.testing.assert_allclose(
        to_numpy(entropy_npg_step(mdp, pi, eta=0.1, tau=0.5)),
        entropy_npg_step(m, np.full((4, 3), 1 / 3), eta=0.1, tau=0.5), atol=1e-12,
    )
    np.testing.assert_allclose(
        to_numpy(projected_gradient_step(mdp, pi, eta=0.1)),
        projected_gradient_step(m, np.full((4, 3), 1 / 3), eta=0.1), atol=1e-12,
    )
    res = natural_policy_gradient(mdp, eta=0.5, iterations=3)
    np.testing.assert_allclose(
        res.trace["suboptimality"], natural_policy_gradient(m, eta=0.5, iterations=3).trace["suboptimality"],
        atol=1e-12,
    )


def _eval_level(S, A, g, v_norm, r_norm, dtype=np.float64):
    """A-priori ceiling of NPG's ``evaluation_bound``: the stopping residual ``16ε(‖V‖ + ‖r‖)``
    (an LU solution's own level) plus the round-off allowance of computing that residual
    (Higham's ``γ_n``; ``WarmEvaluator._allowance``), with the row-sum defects of a normalised
    ``P`` and of softmax policies at most ``3γ_{n+2}`` of their row length ``n`` (settled rows
    take at least ``16ε`` for the policies' defect), all over ``1 − γ``."""
    eps = float(np.finfo(dtype).eps)
    u = eps / 2

    def gam(n):
        return n * u / (1 - n * u)

    aS, aA = gam(S + 3), gam(A)
    delta, nu = 3 * gam(S + 2), max(3 * gam(A + 2), 16 * eps)
    scale = r_norm + (1 + g * (1 + delta)) * v_norm
    e = (aS + (aA * (1 + nu) + 2 * nu) * (1 + aS)) * scale + g * delta * v_norm
    return (16 * eps * (v_norm + r_norm) * (1 + 16 * eps) + e) * (1 + 8 * u) / (1 - g) * (1 + 8 * eps)


def _npg_policies(mdp, eta, T):
    """NPG iterates by the checked one-step function (LU evaluation each step)."""
    pi = np.full((mdp.S, mdp.A), 1.0 / mdp.A) * np.ones(mdp.batch_shape + (1, 1))
    out = [pi]
    for _ in range(T):
        pi = npg_step(mdp, pi, eta=eta)
        out.append(pi)
    return out


def test_warm_evaluation_certificate_bounds_the_true_error_at_every_call():
    # The warm-started evaluator (stored inverse + extrapolation + Richardson steps) must return,
    # for each instance and call, a bound >= the true error against an LU solve, and that bound
    # must be at the LU level (residual <= 16 eps (|V| + |r|)).
    from rltheory.algorithms._warm_eval import WARM_MIN_BATCH, WarmEvaluator

    B = 2 * WARM_MIN_BATCH
    mdp = random_mdp(12, 4, gamma=0.95, rng=11, batch_shape=(B,))
    ev = WarmEvaluator(np.asarray(mdp.P), np.asarray(mdp.R), 0.95, mdp.xp)
    for pi in _npg_policies(mdp, 2.0, 40):
        V, adv, bound = ev.evaluate(np.ascontiguousarray(np.swapaxes(pi, -1, -2)))
        V_lu = np.asarray(evaluate_policy(mdp, pi))
        err = np.max(np.abs(V - V_lu), axis=-1)
        assert np.all(err <= bound + 1e-14 * np.max(np.abs(V_lu))), (err, bound)
        assert np.all(bound <= _eval_level(12, 4, 0.95, np.max(np.abs(V), -1), 1.0))
        np.testing.assert_allclose(np.swapaxes(adv, -1, -2), np.asarray(advantage(mdp, pi)), atol=1e-11)
    assert ev.exact_solves < B * 41  # the warm steps replaced most LU solves


def test_evaluation_bound_covers_the_exact_error_of_one_state_models():
    # With one state V^π = r/(1 − γ). The computed residual r − (1 − γ)V is often exactly 0
    # while V is off by an ulp: the certificate residual/(1 − γ) then claimed 0 (274 of 300 such
    # models before the residual's own round-off was counted). Checked in exact arithmetic.
    from fractions import Fraction

    from rltheory.algorithms._warm_eval import WarmEvaluator

    rng = np.random.default_rng(3)
    for _ in range(200):
        g, r = float(rng.uniform(0.5, 0.999)), float(rng.uniform(0.1, 10.0))
        ev = WarmEvaluator(np.ones((1, 1, 2, 1)), np.full((1, 1, 2), r), g, np)
        V, _, bound = ev.evaluate(np.full((1, 2, 1), 0.5))
        err = abs(Fraction(float(V[0, 0])) - Fraction(r) / (1 - Fraction(g)))
        assert err <= Fraction(float(bound[0])), (g, r, float(err), bound[0])


def test_evaluation_bound_covers_the_exact_error_along_warm_npg_runs():
    # Batched (warm-started) evaluation along NPG iterates of 3-state models, γ up to 0.999 and
    # rewards from 1e-3 to 1e6: every certificate covers the exact error (rational arithmetic).
    # Before the residual's round-off was counted, 46 of 480 such certificates were too small
    # (worst true error 2.8 times the bound).
    from fractions import Fraction

    from rltheory.algorithms._warm_eval import WarmEvaluator

    worst = 0.0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        g = float(rng.choice([0.9, 0.99, 0.999]))
        mdp = random_mdp(3, 2, gamma=g, rng=seed, batch_shape=(8,))
        P, R = np.asarray(mdp.P), np.asarray(mdp.R) * 10.0 ** rng.integers(-3, 7)
        ev = WarmEvaluator(P, R, g, np)
        theta = np.zeros((8, 2, 3))
        for _ in range(12):
            pi = np.exp(theta)
            pi /= pi.sum(1, keepdims=True)
            V, adv, bound = ev.evaluate(pi)
            for b in range(8):
                exact = exact_policy_values(P[b], R[b], g, pi[b].T)
                err = max(abs(Fraction(float(V[b, s])) - exact[s]) for s in range(3))
                assert err <= Fraction(float(bound[b])), (seed, b, float(err), bound[b])
                worst = max(worst, float(err) / bound[b])
            theta += adv / (1 - g)
            theta -= theta.max(1, keepdims=True)
    assert worst > 0.01  # the bound is not vacuous: some errors come within 100× of it


def test_batched_warm_run_equals_per_instance_lu_runs():
    # Batches of >= WARM_MIN_BATCH instances use the warm evaluator, single instances an LU
    # solve per iteration: the two exact routes agree to round-off along the whole run.
    mdp = random_mdp(10, 3, gamma=0.9, rng=12, batch_shape=(12,))
    batch = natural_policy_gradient(mdp, eta=1.0, iterations=60)
    assert np.max(batch.trace["evaluation_bound"]) < 1e-11
    for i in (0, 5, 11):
        single = natural_policy_gradient(mdp[i], eta=1.0, iterations=60)
        np.testing.assert_allclose(batch.policy[i], single.policy, atol=1e-11)
        np.testing.assert_allclose(batch.trace["suboptimality"][:, i], single.trace["suboptimality"], atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(finite_mdps(max_states=6, max_actions=4, gamma=discounts(0.0, 0.99), batch_shape=(9,)), st.floats(0.05, 20.0))
def test_batched_warm_npg_equals_per_instance_lu_npg_on_random_batches(mdp, eta):
    # Property version of the test above over hypothesis-drawn batches (reward ties, γ up to
    # 0.99, large steps): the warm route (extrapolation, Richardson steps, Newton–Schulz
    # refreshes, masked LU fallbacks) certifies every value at the LU level and gives the
    # per-instance LU run's iterates. Both routes are exact up to round-off, which the NPG
    # step amplifies by at most c = η/(1−γ) per iteration in the logits: the tolerance is
    # that first-order drift, built from the certificates themselves.
    T, g = 30, mdp.gamma
    batch = natural_policy_gradient(mdp, eta=eta, iterations=T)
    eps = np.finfo(float).eps
    # the LU-level residual plus the round-off of computing it (_eval_level); with ‖V‖ = 1/(1 − γ)
    # and ‖r‖ = 1 exactly (all rewards 1) the bound can sit near that ceiling
    assert np.max(batch.trace["evaluation_bound"]) <= _eval_level(mdp.S, mdp.A, g, 1 / (1 - g), 1.0)
    lu_err = 64 * eps * (1 / (1 - g) + 1) / (1 - g)  # an LU solution's own error, same scale
    drift = 2 * (eta / (1 - g)) * T * (np.max(batch.trace["evaluation_bound"]) + lu_err)
    for i in (0, 4, 8):
        single = natural_policy_gradient(mdp[i], eta=eta, iterations=T)
        np.testing.assert_allclose(batch.policy[i], single.policy, rtol=0, atol=4 * drift + 1e-12)
        np.testing.assert_allclose(batch.trace["suboptimality"][:, i], single.trace["suboptimality"],
                                   rtol=0, atol=4 * drift / (1 - g) + 2 * lu_err)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.floats(0.01, 30.0))
def test_residual_along_a_fixed_advantage_is_monotone(seed, n_actions, c):
    # The lemma behind settled instances: for fixed logits θ and advantage A, the residual
    # ρ(k) = Σ_a softmax(θ + k c A)_a A_a is non-decreasing in k ≥ 0 (its derivative is
    # c·Var(A) under the policy), so it stays between ρ(0) and max_a A.
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_actions) * rng.choice([0.1, 3.0, 30.0])
    adv = rng.normal(size=n_actions)
    ks = np.linspace(0.0, 50.0 / c, 400)
    z = theta[None, :] + ks[:, None] * c * adv[None, :]
    w = np.exp(z - z.max(axis=1, keepdims=True))
    rho = (w * adv).sum(axis=1) / w.sum(axis=1)
    scale = 1e-12 * np.max(np.abs(adv))
    assert np.all(np.diff(rho) >= -scale)
    assert np.all(rho >= rho[0] - scale) and np.all(rho <= adv.max() + scale)


def _lu_npg(mdp, eta, T):
    # NPG with an LU solve at every iteration and no settling (reference for the driver)
    g = mdp.gamma
    P, R = np.asarray(mdp.P), np.asarray(mdp.R)
    theta = np.zeros(R.shape)
    for _ in range(T):
        pi = np.exp(theta - theta.max(axis=-1, keepdims=True))
        pi /= pi.sum(axis=-1, keepdims=True)
        V = np.asarray(evaluate_policy(mdp, pi))
        A = R + g * np.einsum("...sat,...t->...sa", P, V) - V[..., None]
        theta = theta + eta / (1 - g) * A
        theta -= theta.max(axis=-1, keepdims=True)
    pi = np.exp(theta)
    return pi / pi.sum(axis=-1, keepdims=True)


def test_settled_instances_leave_the_run_and_stay_certified(monkeypatch):
    # Instances whose value is certified for every later iterate leave the active arrays and
    # their logits advance in closed form. Checks: some do settle; the final policies equal an
    # LU-every-iteration NPG and the same driver with settling switched off; the recorded
    # value of the final iterate is within its recorded bound of an exact evaluation.
    import rltheory.algorithms._npg_chunk as npg_module
    import rltheory.algorithms._warm_eval as warm_module

    mdp = random_mdp(8, 3, gamma=0.8, rng=16, batch_shape=(10,))
    T, eta = 150, 3.0
    retired = []
    real_retire = warm_module.WarmEvaluator.retire
    monkeypatch.setattr(warm_module.WarmEvaluator, "retire",
                        lambda self, done: retired.append(int(done.sum())) or real_retire(self, done))
    res = natural_policy_gradient(mdp, eta=eta, iterations=T)
    assert sum(retired) >= 5  # most instances settle well before T
    ref = _lu_npg(mdp, eta, T)
    np.testing.assert_allclose(res.policy, ref, rtol=0, atol=1e-10)
    # settled probabilities are tiny: compare them in log space (the closed form's step count)
    live = ref > 1e-250
    np.testing.assert_allclose(np.log(res.policy[live]), np.log(ref[live]), rtol=0, atol=1e-8)
    monkeypatch.setattr(npg_module, "_SETTLE", False)  # the same driver without settling
    plain = natural_policy_gradient(mdp, eta=eta, iterations=T)
    np.testing.assert_allclose(res.policy, plain.policy, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.trace["suboptimality"], plain.trace["suboptimality"], rtol=0, atol=1e-12)
    V_star = np.asarray(policy_iteration(mdp).V)
    exact = np.einsum("bs,bs->b", V_star - np.asarray(evaluate_policy(mdp, res.policy)),
                      np.asarray(mdp.initial_distribution()))
    lu_err = 64 * np.finfo(float).eps * (1 / 0.2 + 1) / 0.2
    assert np.all(np.abs(res.trace["suboptimality"][-1] - exact) <= res.trace["evaluation_bound"][-1] + lu_err)
    assert np.max(res.trace["evaluation_bound"]) <= _eval_level(mdp.S, mdp.A, 0.8, 1 / 0.2, 1.0)


def test_settling_respects_actions_outside_the_initial_support(monkeypatch):
    # Actions with probability 0 in π_0 keep it (logit −∞); settling must take the maximum
    # advantage over the other actions only, so instances whose best action is excluded
    # still settle, and the run equals the one without settling.
    import rltheory.algorithms._npg_chunk as npg_module
    import rltheory.algorithms._warm_eval as warm_module

    mdp = random_mdp(6, 3, gamma=0.7, rng=18, batch_shape=(10,))
    pi0 = np.full((10, 6, 3), 0.5)
    pi0[..., 0] = 0.0  # action 0 never played
    retired = []
    real_retire = warm_module.WarmEvaluator.retire
    monkeypatch.setattr(warm_module.WarmEvaluator, "retire",
                        lambda self, done: retired.append(int(done.sum())) or real_retire(self, done))
    res = natural_policy_gradient(mdp, eta=4.0, iterations=120, pi0=pi0)
    assert sum(retired) >= 6
    assert np.all(res.policy[..., 0] == 0)
    monkeypatch.setattr(npg_module, "_SETTLE", False)
    plain = natural_policy_gradient(mdp, eta=4.0, iterations=120, pi0=pi0)
    np.testing.assert_allclose(res.policy, plain.policy, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.trace["suboptimality"], plain.trace["suboptimality"], rtol=0, atol=1e-12)
    # the restricted problem is solved (over actions 1, 2) but not the full one
    assert np.max(res.trace["suboptimality"][-1]) > 1e-3
    assert np.all(res.trace["evaluation_bound"] <= _eval_level(6, 3, 0.7, 1 / 0.3, 1.0))


def test_npg_leaves_the_callers_arrays_unchanged():
    # With one state the action-major copies are reshapes of the caller's arrays; the driver
    # updates its arrays in place (settled instances are compacted away), so they must be copies.
    rng = np.random.default_rng(17)
    R = rng.random((9, 1, 2))
    mdp = FiniteMDP(np.ones((9, 1, 2, 1)), R.copy(), gamma=0.5)
    pi0 = np.tile(np.array([0.3, 0.7]), (9, 1, 1))
    natural_policy_gradient(mdp, eta=3.0, iterations=40, pi0=pi0.copy())
    np.testing.assert_array_equal(np.asarray(mdp.R), R)
    res = natural_policy_gradient(mdp, eta=3.0, iterations=40, pi0=pi0)
    np.testing.assert_array_equal(pi0, np.tile(np.array([0.3, 0.7]), (9, 1, 1)))
    assert np.all(res.policy.argmax(-1)[:, 0] == R[:, 0].argmax(-1))


def test_chunked_batched_run_with_tol_equals_one_chunk(monkeypatch):
    # Host runs split the batch into cache-sized chunks; with tol each chunk stops when its own
    # instances are done and then continues to the common last iterate: the result must not
    # depend on the chunking (same policies, same traces, one stopping iterate, converged).
    import rltheory.algorithms.npg as npg_module

    mdp = random_mdp(8, 3, gamma=0.9, rng=14, batch_shape=(30,))
    whole = natural_policy_gradient(mdp, eta=2.0, iterations=400, tol=1e-8)
    monkeypatch.setattr(npg_module, "_CHUNK_BYTES", 8 * 3 * 8 * 8 * 10)  # chunks of 10 instances
    chunked = natural_policy_gradient(mdp, eta=2.0, iterations=400, tol=1e-8)
    assert whole.converged is True and chunked.converged is True
    assert chunked.iterations == whole.iterations
    assert chunked.trace["suboptimality"].shape == (whole.iterations + 1, 30)
    assert np.all(chunked.trace["suboptimality"][-1] <= 1e-8)
    np.testing.assert_allclose(chunked.policy, whole.policy, atol=1e-12)
    np.testing.assert_allclose(chunked.trace["suboptimality"], whole.trace["suboptimality"], atol=1e-12)


def test_warm_evaluation_in_float32_is_certified_at_float32_precision():
    m = random_mdp(10, 3, gamma=0.9, rng=15, batch_shape=(12,))
    m32 = FiniteMDP(np.asarray(m.P, dtype=np.float32), np.asarray(m.R, dtype=np.float32), gamma=0.9)
    res = natural_policy_gradient(m32, eta=1.0, iterations=40)
    ref = natural_policy_gradient(m, eta=1.0, iterations=40)
    assert res.policy.dtype == np.float32
    assert all(res.trace[k].dtype == np.float64 for k in ("suboptimality", "evaluation_bound"))  # traces in float64
    bound = _eval_level(10, 3, 0.9, 1 / 0.1, 1.0, np.float32)
    assert np.max(res.trace["evaluation_bound"]) <= bound
    # V*(ρ) and V^{π_t}(ρ) are each float32 evaluations: each within the certificate `bound`
    np.testing.assert_allclose(res.trace["suboptimality"], ref.trace["suboptimality"], atol=2 * bound)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_actions", [2, 5, 40])
def test_softmax_sum_defect_bounds_the_action_sums_of_logit_step_policies(dtype, n_actions):
    # The evaluator's certificate takes |Σ_a π(a|s) − 1| <= γ_{A+1} for logit_step's policies
    # (softmax_sum_defect); measured exactly (Fractions) over random logits of wide spread.
    from fractions import Fraction

    from rltheory.algorithms._policy_opt import logit_step, softmax_sum_defect

    rng = np.random.default_rng(n_actions)
    theta = (rng.standard_normal((20, n_actions, 30)) * rng.choice([1.0, 30.0, 300.0], (20, 1, 30))).astype(dtype)
    pi, _ = logit_step(theta, np.zeros_like(theta), np)
    bound = Fraction(softmax_sum_defect(n_actions, np.finfo(dtype).eps))
    worst = max(abs(sum(Fraction(float(x)) for x in pi[b, :, s]) - 1) for b in range(20) for s in range(30))
    assert worst <= bound, (float(worst), float(bound))
    assert worst > bound / 100  # the bound is the right order (the sums do miss 1 by ulps)


@pytest.mark.parametrize("dtype, n_actions", [(np.float64, 3), (np.float32, 3), (np.float64, 20)])
def test_logit_step_fast_path_matches_the_plain_softmax_and_keeps_exact_zeros(dtype, n_actions):
    # The numpy path of logit_step (in place, chained reductions, floored exp) against the plain
    # formula; logits of -inf (outside the support) and far below the floor give exactly 0.
    import array_api_strict as xps

    from rltheory.algorithms._policy_opt import _exp_floor, logit_step

    rng = np.random.default_rng(21)
    # > 16 actions: the reductions over actions take numpy's reduce instead of elementwise chains
    scale = np.resize(np.array([1.0, 50.0, 1e4]), n_actions)
    theta = (rng.normal(size=(4, n_actions, 7)) * scale[None, :, None]).astype(dtype)
    theta[0, 2, :] = -np.inf
    scores = rng.normal(size=theta.shape).astype(dtype)
    pi_ref, theta_ref = logit_step(xps.asarray(theta), xps.asarray(scores), xps)
    pi, th = logit_step(theta.copy(), scores, np)
    assert pi.dtype == dtype and np.all(pi >= 0)
    np.testing.assert_allclose(th, np.asarray(theta_ref), rtol=np.finfo(dtype).eps * 8)
    floor, w_floor = _exp_floor(dtype)
    np.testing.assert_allclose(pi, np.asarray(pi_ref), rtol=0, atol=4 * np.finfo(dtype).eps + 2 * float(w_floor))
    assert np.all(pi[th <= floor] == 0) and np.all(pi[0, 2] == 0)
    np.testing.assert_allclose(pi.sum(axis=1), 1.0, rtol=4 * np.finfo(dtype).eps)


def test_newton_schulz_refresh_squares_the_contraction():
    # W' = W(2I − MW) satisfies I − MW' = (I − MW)^2: the warm evaluator's cheap refresh.
    from rltheory.algorithms._warm_eval import WarmEvaluator

    mdp = random_mdp(9, 3, gamma=0.9, rng=22, batch_shape=(8,))
    # cold=0: W is formed at the first call (drivers start with `COLD` LU-only calls, which form no W);
    # mixed=False: W in float64, so the identity holds to float64 round-off (drivers keep it in float32)
    ev = WarmEvaluator(np.asarray(mdp.P), np.asarray(mdp.R), 0.9, mdp.xp, cold=0, mixed=False)
    pis = _npg_policies(mdp, 0.3, 2)
    old, new = (np.ascontiguousarray(np.swapaxes(p, -1, -2)) for p in (pis[0], pis[2]))
    ev.evaluate(old)  # W = inverse of the first policy's matrix
    M = np.einsum("bas,bast->bst", new, ev.K4)
    E = np.eye(9) - M @ ev.W
    W2 = ev._new_inverse(np.arange(8), M)  # a Newton–Schulz step for every instance
    np.testing.assert_allclose(np.eye(9) - M @ W2, E @ E, atol=1e-13)
    assert np.max(np.abs(E @ E)) < np.max(np.abs(E))


def test_warm_evaluation_runs_under_every_backend(xp):
    # numpy takes the warm steps, other namespaces an LU solve per call: same policies.
    m = random_mdp(6, 3, gamma=0.9, rng=13, batch_shape=(9,))
    mdp = FiniteMDP(xp.asarray(np.asarray(m.P)), xp.asarray(np.asarray(m.R)), gamma=0.9)
    res = natural_policy_gradient(mdp, eta=1.5, iterations=25)
    ref = natural_policy_gradient(m, eta=1.5, iterations=25)
    np.testing.assert_allclose(to_numpy(res.policy), ref.policy, atol=1e-12)
    for name in ("suboptimality", "suboptimality_inf"):  # a device keeps its rows until the end
        assert type(res.trace[name]) is np.ndarray
        np.testing.assert_allclose(res.trace[name], ref.trace[name], atol=1e-12)
    w = res.trace.wall_time
    assert w.shape == (26,) and w[0] >= 0 and np.all(np.diff(w) >= 0)
    # certificates at the LU level on every backend (warm steps on hosts, LU solves on GPUs)
    for r in (res, ref):
        assert np.max(r.trace["evaluation_bound"]) <= _eval_level(6, 3, 0.9, 1 / 0.1, 1.0)  # ‖r‖ ≤ 1, ‖V‖ ≤ 1/(1−γ)


# -- validation ---------------------------------------------------------------------------


def test_invalid_arguments_are_rejected_with_located_messages():
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    pi = np.full((3, 2), 0.5)
    with pytest.raises(ValueError, match="eta must be a finite number > 0"):
        npg_step(mdp, pi, eta=0.0)
    with pytest.raises(ValueError, match="eta must be a finite number > 0"):
        natural_policy_gradient(mdp, eta=math.nan, iterations=3)
    with pytest.raises(ValueError, match="iterations must be an integer >= 0"):
        natural_policy_gradient(mdp, eta=1.0, iterations=-1)
    with pytest.raises(ValueError, match=r"eta <= \(1 - gamma\)/tau"):
        entropy_npg_step(mdp, pi, eta=1.0, tau=1.0)
    with pytest.raises(ValueError, match="full support"):
        entropy_regularized_npg(mdp, eta=0.01, tau=1.0, iterations=2, pi0=np.array([[1.0, 0.0]] * 3))
    with pytest.raises(ValueError, match=r"theta must have shape \(\.\.\., S, A\)"):
        softmax_gradient(mdp, np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"tau must be a finite number >= 0; got -1\.0"):
        softmax_gradient(mdp, np.zeros((3, 2)), tau=-1.0)
    with pytest.raises(ValueError, match="each rho"):
        natural_policy_gradient(mdp, eta=1.0, iterations=1, rho=np.array([0.5, 0.2, 0.2]))
    with pytest.raises(ValueError, match="tol must be None or a number >= 0"):
        natural_policy_gradient(mdp, eta=1.0, iterations=1, tol=-1.0)
    with pytest.raises(ValueError, match="pi"):
        npg_step(mdp, np.full((3, 3), 1 / 3), eta=1.0)
    with pytest.raises(ValueError, match="discounted model"):
        npg_step(FiniteMDP(np.asarray(mdp.P), np.asarray(mdp.R), None), pi, eta=1.0)
    with pytest.raises(TypeError, match="FiniteMDP"):
        npg_step("mdp", pi, eta=1.0)
    with pytest.raises(ValueError, match="V_star must have shape"):
        natural_policy_gradient(mdp, eta=1.0, iterations=1, V_star=np.zeros(4))


def test_reaching_the_cap_warns_and_reports_not_converged():
    mdp = random_mdp(5, 3, gamma=0.9, rng=0)
    with pytest.warns(ConvergenceWarning, match="natural_policy_gradient reached iterations=2"):
        res = natural_policy_gradient(mdp, eta=0.01, iterations=2, tol=1e-12)
    assert res.converged is False and res.iterations == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed = natural_policy_gradient(mdp, eta=0.01, iterations=2)
    assert fixed.converged is None and len(fixed.trace) == 3
    done = natural_policy_gradient(mdp, eta=5.0, iterations=500, tol=1e-9)
    assert done.converged is True and done.trace["suboptimality"][-1] <= 1e-9


@pytest.mark.parametrize("gamma, scale", [(0.99, 1.0), (0.999, 1.0), (0.9, 1e9)])
def test_default_soft_reference_reaches_its_round_off_floor_without_a_warning(gamma, scale):
    # The default reference Q*_τ was soft VI at an absolute tol=1e-12, below the certificate's
    # round-off floor γ/(1−γ)·(a few ε)·‖Q‖∞ at γ = 0.99 or large rewards: every default call
    # ran soft VI to its cap and raised a ConvergenceWarning the caller could not act on.
    base = random_mdp(6, 3, gamma=gamma, rng=2, batch_shape=(4,))
    mdp = FiniteMDP(base.P, scale * base.R, gamma=gamma)
    tau = 0.1 * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = entropy_regularized_npg(mdp, eta=(1 - gamma) / tau, tau=tau, iterations=60, tol=None)
        pg = softmax_policy_gradient(mdp, eta=0.1 / scale, tau=tau, iterations=3)
        C1 = entropy_npg_constant(mdp, eta=(1 - gamma) / tau, tau=tau)
    # the reference agrees with soft policy iteration (η = (1−γ)/τ) to round-off of ‖Q‖∞
    q_size = scale / (1 - gamma)
    assert np.max(res.trace["q_error"][-1]) <= 1e-11 * q_size
    assert np.all(np.isfinite(pg.trace["suboptimality"])) and np.all(np.isfinite(C1))


def test_numpy_integer_iterations_and_negative_seeds():
    # iterations=np.int64(2) was refused ("must be an integer >= 0; got np.int64(2)"), and a negative
    # integer seed reached numpy's SeedSequence ("expected non-negative integer", naming nothing)
    from rltheory.mdp.zoo import random_mdp as _rm

    mdp = _rm(3, 2, gamma=0.9, rng=0)
    a = natural_policy_gradient(mdp, eta=1.0, iterations=np.int64(2))
    b = natural_policy_gradient(mdp, eta=1.0, iterations=2)
    assert a.iterations == 2 and np.array_equal(np.asarray(a.policy), np.asarray(b.policy))
    with pytest.raises(ValueError, match=r"rng must be a numpy.random.Generator or an int seed >= 0; got -1"):
        _rm(3, 2, gamma=0.9, rng=-1)
