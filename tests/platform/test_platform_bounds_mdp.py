"""rltheory.bounds.mdp: VI a-priori/a-posteriori bounds, stopping rules, PI iteration bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.bounds import (
    pi_iteration_bound,
    span_stopping_iterations,
    vi_certificate,
    vi_certificate_floor,
    vi_error_bound,
    vi_iterations_to_threshold,
    vi_stopping_threshold,
    vi_sweep_error,
)
from rltheory.errors import InvalidModelError
from rltheory.mdp import (
    FiniteMDP,
    bellman_optimality_operator,
    evaluate_policy,
    greedy,
    policy_iteration,
    q_values,
    value_iteration,
)
from rltheory.testing import discounts, finite_mdps


def _round(vstar: np.ndarray, gamma: float) -> float:
    # round-off allowance: reference V* from an exact linear solve and k floating-point backups,
    # each accurate to a few ulps of ‖V*‖∞; 1e-9·(1 + ‖V*‖∞) dominates both for γ ≤ 0.99.
    return 1e-9 * (1.0 + float(np.max(np.abs(vstar))))


# ---------------------------------------------------------------- theorems on random MDPs


@settings(max_examples=30)
@given(mdp=finite_mdps(gamma=discounts(0.0, 0.99)), seed=st.integers(0, 2**31 - 1))
def test_vi_error_bound_and_certificate_hold_at_every_iterate(mdp, seed):
    g = float(mdp.gamma)
    vstar = np.asarray(policy_iteration(mdp).V)
    v = np.random.default_rng(seed).normal(0.0, 3.0, mdp.S)
    e0 = np.max(np.abs(v - vstar))
    atol = _round(vstar, g)
    for k in range(1, 40):
        nxt = np.asarray(bellman_optimality_operator(mdp, v))
        e = np.max(np.abs(nxt - vstar))
        assert e <= vi_error_bound(k, g, e0) + atol
        assert e <= vi_certificate(np.max(np.abs(nxt - v)), g) + atol
        v = nxt


@settings(max_examples=30)
@given(mdp=finite_mdps(gamma=discounts(0.05, 0.99)), eps=st.sampled_from([1e-1, 1e-2, 1e-4]))
def test_puterman_rule_gives_eps_optimal_policy_within_predicted_sweeps(mdp, eps):
    g = float(mdp.gamma)
    thr = vi_stopping_threshold(eps, g)
    v = np.zeros(mdp.S)
    v1 = np.asarray(bellman_optimality_operator(mdp, v))
    limit = vi_iterations_to_threshold(eps, g, float(np.max(np.abs(v1 - v))))
    vstar = np.asarray(policy_iteration(mdp).V)
    for _k in range(limit + 1):
        nxt = np.asarray(bellman_optimality_operator(mdp, v))
        if np.max(np.abs(nxt - v)) < thr:
            pi = greedy(q_values(mdp, nxt))
            loss = np.max(vstar - np.asarray(evaluate_policy(mdp, pi)))
            assert loss <= eps + _round(vstar, g)  # Thm 6.3.1 (c)
            assert np.max(np.abs(nxt - vstar)) <= eps / 2 + _round(vstar, g)  # Thm 6.3.1 (d)
            break
        v = nxt
    else:
        pytest.fail(f"Puterman's rule did not fire within the predicted {limit} sweeps")


@settings(max_examples=30)
@given(mdp=finite_mdps(gamma=discounts(0.0, 0.99)), tol=st.sampled_from([1e-2, 1e-6, 1e-9]))
def test_value_iteration_stops_within_span_rule_count(mdp, tol):
    g = float(mdp.gamma)
    T0 = np.asarray(bellman_optimality_operator(mdp, np.zeros(mdp.S)))
    span0 = float(T0.max() - T0.min())
    res = value_iteration(mdp, tol=tol)
    assert res.converged
    # floating point: each sweep's rounding error is bounded by vi_sweep_error, and the rule's
    # own product and comparison round by at most 4u (the exact-arithmetic count alone can be
    # exceeded: see the regression test below)
    u = np.finfo(float).eps / 2
    # value_iteration's rule also adds its certificate's round-off allowance (vi_certificate_floor)
    target = tol * (1 - 4 * u) - vi_certificate_floor(mdp)
    assert res.iterations <= span_stopping_iterations(g, target, span0, sweep_error=vi_sweep_error(mdp))


def _chain_found_by_stress() -> FiniteMDP:
    # Found by a stress run (HYPOTHESIS_PROFILE=stress): a deterministic 4-state chain with a
    # 2-cycle, gamma = 0.99, |V| ~ 65; the span of T v_k - v_k decays exactly like gamma^k.
    P = np.zeros((4, 1, 4))
    P[0, 0, 1] = P[1, 0, 2] = P[2, 0, 1] = P[3, 0, 3] = 1.0
    R = np.array([[0.8404344639392375], [0.9512425430292725], [0.34381112252250623], [0.4056486710335552]])
    return FiniteMDP(P, R, gamma=0.99)


def test_span_count_in_floating_point_covers_the_rounding_floor():
    mdp = _chain_found_by_stress()
    T0 = np.asarray(bellman_optimality_operator(mdp, np.zeros(mdp.S)))
    span0 = float(T0.max() - T0.min())
    u = np.finfo(float).eps / 2
    eps = vi_sweep_error(mdp)
    floor = vi_certificate_floor(mdp)
    # tol = 1e-9 sits below the rounding floor 4 gamma eps/(1-gamma)^2 (about 4.2e-9): the span
    # rule alone fires after 2473 evaluations where exact arithmetic needs the count 2471 (its
    # spans decay exactly like gamma^k, so the exact count is tight), and no a-priori count is
    # claimed. value_iteration's certificate adds its round-off allowance (<= floor, 6.7e-11
    # here), which takes 3 sweeps more at gamma = 0.99: 2476.
    res = value_iteration(mdp, tol=1e-9)
    assert res.converged and res.iterations == 2476
    assert span_stopping_iterations(0.99, 1e-9, span0) == 2471
    # the exact-arithmetic count at tol - floor: the a-priori allowance (6.7e-11) exceeds the one
    # value_iteration met at run time, so this count is the larger
    assert span_stopping_iterations(0.99, 1e-9 - floor, span0) == 2478
    assert span_stopping_iterations(0.99, 1e-9, span0, sweep_error=eps) == math.inf
    # above the floor the rounding-aware count holds and exceeds the exact one
    for tol in (1e-6, 1e-8):
        n = value_iteration(mdp, tol=tol).iterations
        exact = span_stopping_iterations(0.99, tol, span0)
        aware = span_stopping_iterations(0.99, tol * (1 - 4 * u) - floor, span0, sweep_error=eps)
        assert n <= aware and exact <= aware < math.inf


@settings(max_examples=30)
@given(mdp=finite_mdps(max_states=4, max_actions=3, gamma=discounts(0.0, 0.99)), k=st.integers(0, 30))
def test_vi_sweep_error_bounds_the_rounding_of_a_sweep(mdp, k):
    # One float64 sweep T v_k (v_k the k-th VI iterate from 0) against the exact sweep of the
    # row-normalised (stochastic) model P/sigma in rational arithmetic.
    from fractions import Fraction

    v = np.zeros(mdp.S)
    for _ in range(k):
        v = np.asarray(bellman_optimality_operator(mdp, v))
    Tv = np.asarray(bellman_optimality_operator(mdp, v))
    P, R, g = np.asarray(mdp.P), np.asarray(mdp.R), Fraction(float(mdp.gamma))
    worst = Fraction(0)
    for s in range(mdp.S):
        best = None
        for a in range(mdp.A):
            row = [Fraction(float(p)) for p in P[s, a]]
            sigma = sum(row)
            q = Fraction(float(R[s, a])) + g * sum(p * Fraction(float(x)) for p, x in zip(row, v, strict=True)) / sigma
            best = q if best is None else max(best, q)
        worst = max(worst, abs(Fraction(float(Tv[s])) - best))
    assert float(worst) <= vi_sweep_error(mdp)


@settings(max_examples=30)
@given(mdp=finite_mdps(max_states=6, max_actions=4), data=st.data())
def test_policy_iteration_changes_at_most_scherrer_bound(mdp, data):
    pi0 = np.asarray(data.draw(st.lists(st.integers(0, mdp.A - 1), min_size=mdp.S, max_size=mdp.S)))
    res = policy_iteration(mdp, pi0=pi0)
    assert res.converged
    assert res.iterations - 1 <= pi_iteration_bound(mdp.S, mdp.A, float(mdp.gamma))


# ---------------------------------------------------------------- reference values


def test_single_state_vi_error_equals_the_bound():
    # One state, one action, reward 1: v_k = (1-γ^k)/(1-γ) from v_0 = 0 and V* = 1/(1-γ),
    # so ‖v_k − V*‖∞ = γ^k/(1−γ) = γ^k ‖v_0 − V*‖∞ exactly: the bound is attained.
    g = 0.8
    mdp = FiniteMDP(np.ones((1, 1, 1)), np.ones((1, 1)), g)
    v = np.zeros(1)
    for k in range(1, 30):
        v = np.asarray(bellman_optimality_operator(mdp, v))
        assert abs(v[0] - 1 / (1 - g)) == pytest.approx(float(vi_error_bound(k, g, 1 / (1 - g))), rel=1e-12)
        # a-posteriori: γ/(1−γ)·γ^{k−1} = γ^k/(1−γ): also attained
        assert float(vi_certificate(g ** (k - 1), g)) == pytest.approx(g**k / (1 - g), rel=1e-12)


def test_reference_numbers():
    # ⌈log(1/(1−0.9))/(1−0.9)⌉ = ⌈23.03⌉ = 24; (S·A − S) = 30 → 720
    assert pi_iteration_bound(10, 4, 0.9) == 720
    # γ = 0.99: log(100)/0.01 = 460.5 → 461; (2·2 − 2) = 2 → 922
    assert pi_iteration_bound(2, 2, 0.99) == 922
    assert pi_iteration_bound(5, 1, 0.9) == 0  # one action: nothing to improve
    assert pi_iteration_bound(3, 2, 0.0) == 3  # γ = 0: one change per non-optimal action
    assert vi_stopping_threshold(0.1, 0.5) == pytest.approx(0.05)
    # γ = 0.5, threshold 0.5, ‖v1 − v0‖ = 4: 4, 2, 1, 0.5, 0.25 → first below at k = 4
    assert vi_iterations_to_threshold(1.0, 0.5, 4.0) == 4
    assert vi_iterations_to_threshold(1.0, 0.5, 0.1) == 0
    # γ = 0.5: certificates 1·sp_k = 1, 0.5, 0.25 with tol 0.3 → third evaluation
    assert span_stopping_iterations(0.5, 0.3, 1.0) == 3
    # certificates 1, 0.5, 0.25, 0.125 must drop strictly below 0.25: the fourth evaluation
    assert span_stopping_iterations(0.5, 0.25, 1.0) == 4
    assert span_stopping_iterations(0.0, 1e-9, 5.0) == 1
    # with sweep error eps the target shrinks by 4 gamma eps/(1-gamma)^2: gamma = 0.5, eps = 0.0125
    # -> 0.3 - 0.1 = 0.2, reached by the certificate 0.125 (fourth evaluation)
    assert span_stopping_iterations(0.5, 0.3, 1.0, sweep_error=0.0125) == 4
    assert span_stopping_iterations(0.5, 0.3, 1.0, sweep_error=0.075) == math.inf  # floor 0.6 > tol
    with pytest.raises(ValueError, match="sweep_error"):
        span_stopping_iterations(0.5, 0.3, 1.0, sweep_error=-1e-3)
    with pytest.raises(TypeError, match="vi_sweep_error takes a FiniteMDP; got ndarray"):
        vi_sweep_error(np.ones((2, 1, 2)))
    np.testing.assert_allclose(vi_error_bound(np.arange(4), 0.5, 8.0), [8, 4, 2, 1])


def test_solver_count_agrees_with_bound_when_span_contracts_exactly_by_gamma():
    # Two states swapping deterministically under one action, rewards (1, 0): T v − v alternates
    # sign with |sp| shrinking exactly by γ each sweep, so the bound is attained (equality).
    g = 0.9
    P = np.array([[[0.0, 1.0]], [[1.0, 0.0]]])
    mdp = FiniteMDP(P, np.array([[1.0], [0.0]]), g)
    for tol in (1e-2, 1e-5, 1e-8):
        res = value_iteration(mdp, tol=tol)
        assert res.iterations == span_stopping_iterations(g, tol, 1.0)


# ---------------------------------------------------------------- validation


def test_validation():
    with pytest.raises(InvalidModelError, match="gamma"):
        vi_error_bound(1, 1.0, 1.0)
    with pytest.raises(ValueError, match="non-negative"):
        vi_error_bound(-1, 0.5, 1.0)
    with pytest.raises(ValueError, match="integers"):
        vi_error_bound(0.5, 0.5, 1.0)
    with pytest.raises(ValueError, match=r"initial_error must be finite and non-negative"):
        vi_error_bound(1, 0.5, -1.0)
    with pytest.raises(ValueError, match=r"diff_norm\[1\] = nan"):
        vi_certificate([1.0, math.nan], 0.5)
    with pytest.raises(ValueError, match="epsilon"):
        vi_stopping_threshold(0.0, 0.5)
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        vi_stopping_threshold(0.1, 0.0)
    with pytest.raises(ValueError, match="tol"):
        span_stopping_iterations(0.5, -1.0, 1.0)
    with pytest.raises(ValueError, match="S must be a positive integer"):
        pi_iteration_bound(0, 2, 0.5)
    with pytest.raises(ValueError, match="A must be a positive integer"):
        pi_iteration_bound(2, 2.5, 0.5)
    with pytest.raises(InvalidModelError):
        pi_iteration_bound(2, 2, -0.1)
