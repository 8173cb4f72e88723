"""Discounted solvers: VI = PI = MPI = LP, certificates, LP duality, backends, caps, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.backend import to_numpy
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import (
    FiniteMDP,
    evaluate_policy,
    linear_program,
    modified_policy_iteration,
    occupancy_measure,
    policy_iteration,
    q_values,
    value_iteration,
)
from rltheory.mdp.zoo import random_mdp
from rltheory.testing import discounts, finite_mdps


def _random(seed: int, S: int, A: int, gamma: float, batch=()) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    P = rng.random(batch + (S, A, S)) ** 3
    P /= P.sum(-1, keepdims=True)
    return FiniteMDP(P, rng.random(batch + (S, A)), gamma)


def _optimal_action_sets(mdp: FiniteMDP, V: np.ndarray, atol: float) -> np.ndarray:
    Q = np.asarray(q_values(mdp, V))
    return Q >= Q.max(-1, keepdims=True) - atol


# ---- theorems on hypothesis-drawn models ------------------------------------------------
@settings(max_examples=40)
@given(finite_mdps(gamma=discounts(0.0, 0.95)))
def test_all_solvers_agree_and_certificates_hold(mdp):
    tol = 1e-9
    scale = 1.0 / (1.0 - mdp.gamma)
    pi_res = policy_iteration(mdp)
    V_star = pi_res.V
    assert pi_res.converged
    for res in (
        value_iteration(mdp, tol=tol),
        modified_policy_iteration(mdp, m=3, tol=tol),
        linear_program(mdp),
        pi_res,
    ):
        assert res.converged
        V_pi = evaluate_policy(mdp, res.policy)
        # certificate: ‖V* − V^π‖∞ ≤ bound and ‖V − V*‖∞ ≤ bound (+ round-off of the reference)
        assert np.max(V_star - V_pi) <= res.bound + 1e-10 * scale
        assert np.max(np.abs(res.V - V_star)) <= res.bound + 1e-10 * scale
        # policies agree up to ties: each chosen action is optimal within the certificate
        opt = _optimal_action_sets(mdp, V_star, atol=2 * float(res.bound) + 1e-9 * scale)
        assert np.all(np.take_along_axis(opt, res.policy[..., None], -1))


@settings(max_examples=30)
@given(finite_mdps(gamma=discounts(0.0, 0.95), with_mu=True))
def test_lp_strong_duality_and_occupancy(mdp):
    res = linear_program(mdp)
    d = np.asarray(res.occupancy)
    w = np.asarray(mdp.initial_distribution())
    if np.any(w <= 0):
        w = np.full(mdp.S, 1.0 / mdp.S)
    g = mdp.gamma
    scale = 1.0 + 1.0 / (1.0 - g)
    # strong duality (1-γ) wᵀV* = rᵀ d*
    assert abs((1 - g) * w @ res.V - np.sum(d * np.asarray(mdp.R))) <= 1e-7 * scale
    # dual feasibility = flow constraints: Σ_a d(s',a) = (1-γ)w(s') + γ Σ P(s'|s,a) d(s,a)
    flow = d.sum(-1) - (1 - g) * w - g * np.einsum("sap,sa->p", np.asarray(mdp.P), d)
    assert np.max(np.abs(flow)) <= 1e-7
    # complementary slackness: d(s,a) > 0 only on actions tight in V ≥ r + γPV
    slack = res.V[:, None] - np.asarray(q_values(mdp, res.V))
    assert np.max(d * np.abs(slack)) <= 1e-7 * scale
    # d* is the occupancy measure of the induced policy d(s,a)/Σ_b d(s,b) on visited states
    visited = d.sum(-1) > 1e-9
    pi = np.where(visited[:, None], d / np.maximum(d.sum(-1, keepdims=True), 1e-300), 1.0 / mdp.A)
    pi /= pi.sum(-1, keepdims=True)
    dpi = np.asarray(occupancy_measure(mdp, pi, w))
    assert np.max(np.abs(dpi - d)) <= 1e-6


def test_linear_program_survives_highs_numerical_trouble():
    """Found by a stress run: at γ = 1.2e-7 (every coefficient of γP below 1e-7) HiGHS's simplex at
    feasibility tolerances 1e-10 ends with model status *Unknown* on this LP (scipy status 4); the
    solver then re-solves by interior point with crossover and certifies the answer."""
    # fmt: off
    P = np.array([0.3186051472718815, 0.5916565680901946, 0.08973828463792391, 0.5633954788214076,
                  0.18519425773892373, 0.2514102634396686, 0.46331078464824343, 0.22905132153024005,
                  0.30763789382151646, 0.02089053115964342, 0.5711827132148403, 0.40792675562551634,
                  0.23198402839841684, 0.554702073152752, 0.2133138984488311, 0.4577769257967349,
                  0.13530646452325268, 0.4069166096800124, 0.16729683202816176, 0.21569457099657058,
                  0.6170085969752678, 0.16056967748471637, 0.27783354144331496, 0.5615967810719688,
                  0.4316866821569201, 0.32535727580968604, 0.24295604203339383]).reshape(3, 3, 3)
    R = np.array([0.08564916714362436, 0.2368105065960997, 0.8012744652063969, 0.5821620360643678,
                  0.09412864224039919, 0.4331269402364738, 0.479051298140834, 0.15973891463707857,
                  0.7345771514092145]).reshape(3, 3)
    # fmt: on
    mdp = FiniteMDP(P, R, 1.192092896e-07)
    res = linear_program(mdp)
    V_star = policy_iteration(mdp).V
    assert res.converged
    assert np.max(np.abs(res.V - V_star)) <= res.bound + 1e-15
    assert res.bound <= 1e-8
    np.testing.assert_array_equal(res.policy, policy_iteration(mdp).policy)


def test_linear_program_keeps_tiny_transition_probabilities():
    """HiGHS drops matrix entries below 1e-9 by default. Here P(1|0, stay) = 5e-10 carries
    γ·5e-10·V(1)/(1 − γ(1 − 5e-10)) ≈ 2.5e-4 of V*(0) at γ = 0.999 (the LP missed it by that much
    before the option was lowered to 1e-12)."""
    eps, g = 5e-10, 0.999
    P = np.zeros((2, 2, 2))
    P[0, 0] = [1 - eps, eps]
    P[0, 1] = [0.5, 0.5]
    P[1, :, 1] = 1.0
    mdp = FiniteMDP(P, np.array([[1.0, 0.0], [0.5, 0.5]]), g)
    v1 = 0.5 / (1 - g)
    v0 = (1 + g * eps * v1) / (1 - g * (1 - eps))  # action 0 is optimal: 999.99975…
    res = linear_program(mdp)
    np.testing.assert_allclose(res.V, [v0, v1], rtol=1e-12)
    np.testing.assert_allclose(policy_iteration(mdp).V, [v0, v1], rtol=1e-12)


@settings(max_examples=25)
@given(finite_mdps(max_states=5, gamma=discounts(0.1, 0.95)), st.integers(0, 50))
def test_vi_error_below_gamma_k_bound_every_iterate(mdp, k_extra):
    """a-priori rate: ‖v_k − V*‖∞ ≤ γ^k ‖v_0 − V*‖∞ for every k (Puterman Thm 6.3.1)."""
    V_star = policy_iteration(mdp).V
    g = mdp.gamma
    v = np.zeros(mdp.S)
    e0 = np.max(np.abs(v - V_star))
    for k in range(1, 20 + k_extra % 5):
        v = np.asarray(q_values(mdp, v)).max(-1)
        assert np.max(np.abs(v - V_star)) <= g**k * e0 + 1e-10 * (1 + e0)


# ---- reference values -------------------------------------------------------------------
def test_two_state_closed_form():
    # State 0: action 0 stays (reward 0), action 1 moves to state 1 (reward 0).
    # State 1 is absorbing with reward 1, so V*(1) = 1/(1−γ) and V*(0) = γ/(1−γ):
    # with γ = 0.9 these are 10 and 9; the optimal policy is (1, any) -> (1, 0) by the tie rule.
    P = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    R = np.array([[0.0, 0.0], [1.0, 1.0]])
    mdp = FiniteMDP(P, R, 0.9)
    for solve in (value_iteration, policy_iteration, modified_policy_iteration, linear_program):
        res = solve(mdp)
        np.testing.assert_allclose(res.V, [9.0, 10.0], atol=1e-7)
        np.testing.assert_array_equal(res.policy, [1, 0])


def test_gamma_zero_is_myopic():
    mdp = _random(3, 6, 3, 0.0)
    for solve in (value_iteration, policy_iteration, modified_policy_iteration, linear_program):
        res = solve(mdp)
        np.testing.assert_allclose(res.V, np.asarray(mdp.R).max(-1), atol=1e-9)
        np.testing.assert_array_equal(res.policy, np.asarray(mdp.R).argmax(-1))


# ---- consistency ------------------------------------------------------------------------
def test_batched_equals_per_instance():
    batch = _random(11, 15, 3, 0.9, batch=(4, 2))
    for solve in (value_iteration, policy_iteration, modified_policy_iteration, linear_program):
        res = solve(batch)
        assert res.V.shape == (4, 2, 15) and res.policy.shape == (4, 2, 15)
        for i in range(4):
            for j in range(2):
                single = solve(batch[i, j])
                np.testing.assert_allclose(res.V[i, j], single.V, atol=1e-7)
                np.testing.assert_array_equal(res.policy[i, j], single.policy)


def test_solvers_run_on_array_api_backends(xp):
    ref = _random(5, 12, 3, 0.9, batch=(3,))
    mdp = FiniteMDP(xp.asarray(ref.P), xp.asarray(ref.R), 0.9)
    V_ref = policy_iteration(ref).V
    for solve in (value_iteration, policy_iteration, modified_policy_iteration):
        res = solve(mdp)
        assert type(res.V) is type(mdp.P)
        np.testing.assert_allclose(to_numpy(res.V), V_ref, atol=1e-7)
        np.testing.assert_array_equal(to_numpy(res.policy), policy_iteration(ref).policy)


def test_agrees_with_quantecon():
    qe = pytest.importorskip("quantecon")
    for seed in range(5):
        mdp = _random(seed, 25, 4, 0.95)
        ddp = qe.markov.DiscreteDP(np.asarray(mdp.R), np.asarray(mdp.P), 0.95)
        ref = ddp.solve("policy_iteration")
        ours = policy_iteration(mdp)
        np.testing.assert_allclose(ours.V, ref.v, atol=1e-8)
        np.testing.assert_array_equal(ours.policy, ref.sigma)


def test_policy_iteration_does_not_cycle_on_slippery_gridworld():
    # Symmetric slippery grid: many exact ties between actions; Howard PI must stop.
    n, slip = 8, 0.1
    S, A = n * n, 4
    moves = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    P = np.zeros((S, A, S))
    for r in range(n):
        for c in range(n):
            s = r * n + c
            for a in range(A):
                for b, (dr, dc) in enumerate(moves):
                    p = (1 - slip) * (a == b) + slip / 4
                    rr, cc = min(max(r + dr, 0), n - 1), min(max(c + dc, 0), n - 1)
                    P[s, a, rr * n + cc] += p
    goal = S - 1
    P[goal] = 0.0
    P[goal, :, goal] = 1.0
    R = np.zeros((S, A))
    R[goal] = 1.0
    res = policy_iteration(FiniteMDP(P, R, 0.99))
    assert res.converged and res.iterations <= 30
    assert np.max(res.bound) <= 1e-9


# ---- caps and validation ----------------------------------------------------------------
def test_iteration_cap_reports_not_converged():
    mdp = _random(0, 20, 3, 0.99)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        res = value_iteration(mdp, tol=1e-12, max_iter=3)
    assert not res.converged and res.iterations == 3
    # the certificate is still valid
    V_star = policy_iteration(mdp).V
    assert np.max(V_star - evaluate_policy(mdp, res.policy)) <= res.bound + 1e-9
    with pytest.warns(ConvergenceWarning):
        assert not modified_policy_iteration(mdp, tol=1e-12, max_iter=2).converged
    with pytest.warns(ConvergenceWarning, match="states still changing"):
        assert not policy_iteration(mdp, max_iter=1, pi0=np.zeros(20, dtype=int)).converged


def test_converged_run_emits_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a warning would raise here
        res = value_iteration(_random(1, 10, 2, 0.9))
    assert res.converged and res.bound < 1e-8


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda m: value_iteration(m, tol=0.0), "tol must be a positive"),
        (lambda m: value_iteration(m, max_iter=0), "max_iter must be a positive integer"),
        (lambda m: value_iteration(m, V0=np.zeros(3)), r"V0 must have shape \(\.\.\., S\)"),
        (lambda m: modified_policy_iteration(m, m=-1), "m \\(partial evaluation sweeps\\)"),
        (lambda m: policy_iteration(m, pi0=np.full(5, 7)), r"is not an action index in \[0, 2\)"),
        (lambda m: linear_program(m, weights=np.zeros(5)), "strictly positive distribution"),
        (lambda m: value_iteration(m.replace(gamma=None)), "gamma is None"),
        (lambda m: policy_iteration(m.P), "expects a FiniteMDP"),
    ],
)
def test_invalid_arguments(call, match):
    mdp = _random(0, 5, 2, 0.9)
    with pytest.raises((ValueError, TypeError), match=match):
        call(mdp)


def test_sparse_successor_kernel_equals_dense(xp):
    """Backups through the padded successor lists equal the dense product (S ≥ 64, K ≤ S/8)."""
    from rltheory.mdp import expected_next
    from rltheory.mdp.zoo import garnet

    ref = garnet(80, 3, 4, gamma=0.9, rng=7, batch_shape=(2,))
    P = np.asarray(ref.P)
    mdp = FiniteMDP(xp.asarray(P), xp.asarray(np.asarray(ref.R)), 0.9)
    idx, prob = mdp.successors
    assert idx.shape == (2, 80, 3, 4)
    np.testing.assert_allclose(to_numpy(xp.sum(prob, axis=-1)), 1.0, atol=1e-12)
    # an extra batch axis broadcasts against the model's
    V = np.random.default_rng(0).random((5, 1, 80))
    dense = np.einsum("bsap,nbp->nbsa", P, V)
    np.testing.assert_allclose(to_numpy(expected_next(mdp, xp.asarray(V))), dense, atol=1e-12)
    # a dense model (K > S/8) takes the dense path and gives the same solver answer
    assert FiniteMDP(np.full((70, 2, 70), 1 / 70), np.zeros((70, 2)), 0.5).successors is None
    res = modified_policy_iteration(mdp, tol=1e-10)
    np.testing.assert_allclose(to_numpy(res.V), policy_iteration(ref).V, atol=1e-9)


def test_linear_program_is_host_only_and_says_so(xp):
    """HiGHS runs on the host: host namespaces give the same LP answer; device arrays raise."""
    from rltheory.backend import is_host

    ref = _random(2, 6, 2, 0.9)
    mdp = FiniteMDP(xp.asarray(ref.P), xp.asarray(ref.R), 0.9)
    if not is_host(mdp.xp):
        with pytest.raises(TypeError, match=r"linear_program runs on the host \(CPU\) only"):
            linear_program(mdp)
        return
    res = linear_program(mdp)
    assert type(res.V) is type(mdp.P)
    np.testing.assert_allclose(to_numpy(res.V), policy_iteration(ref).V, atol=1e-8)


def test_contraction_step_counts_survive_underflow():
    # k = min{k ≥ 0 : g^k·start ≤ tol}; the subnormal discount 5e-324 once divided by an
    # underflowed product in the solvers' a-priori caps
    from rltheory._numerics import contraction_steps

    assert contraction_steps(0.5, 1.0, 0.25) == 2 and contraction_steps(0.5, 1.0, 0.2) == 3
    assert contraction_steps(0.9, 1e-3, 1e-3) == 0 and contraction_steps(0.0, 5.0, 1e-9) == 1
    assert (
        contraction_steps(5e-324, 1.0, 1e-9) == 1 and contraction_steps(5e-324, 1e300, 1e-300) == 2
    )
    assert contraction_steps(0.99, 0.0, 1e-12) == 0
    # strict (< tol, Puterman's rules in rltheory.bounds.mdp): the boundary takes one step more
    assert (
        contraction_steps(0.5, 1.0, 0.25, strict=True) == 3
        and contraction_steps(0.5, 0.25, 0.25, strict=True) == 1
    )
    assert (
        contraction_steps(0.5, 0.2, 0.25, strict=True) == 0
        and contraction_steps(0.0, 5.0, 1e-9, strict=True) == 1
    )
    assert contraction_steps(5e-324, 1e300, 1e-300, strict=True) == 2  # start / tol would overflow
    mdp = FiniteMDP(
        np.array([[[0.3, 0.7], [1.0, 0.0]], [[0.5, 0.5], [0.0, 1.0]]]),
        np.array([[1.0, 0.0], [0.2, 2.0]]),
        gamma=5e-324,
    )
    for method in (value_iteration, modified_policy_iteration):
        sol = method(mdp)
        assert sol.converged
        np.testing.assert_allclose(sol.V, mdp.R.max(-1), atol=1e-12)  # γ ≈ 0: one-step rewards


def test_linear_program_near_gamma_one():
    # The LP used to be solved for V/max|r| ~ 1/(1−γ): at γ = 1 − 1e-5 HiGHS's absolute
    # feasibility tolerance (1e-10) sat below the round-off of values ~1e5 and it declared the
    # always-feasible LP infeasible (SolverError). Solved for u = (1−γ)V/max|r| it is exact.
    for g in (1 - 1e-5, 1 - 1e-6):
        mdp = random_mdp(2, 2, gamma=g, rng=8)
        lp, pi = linear_program(mdp), policy_iteration(mdp)
        np.testing.assert_array_equal(lp.policy, pi.policy)
        np.testing.assert_allclose(lp.V, pi.V, rtol=1e-9)
        assert np.max(np.abs(lp.V - pi.V)) <= lp.bound
        np.testing.assert_allclose(np.sum(lp.occupancy), 1.0, rtol=1e-9)  # d is a distribution


def test_policy_iteration_near_gamma_one_does_not_stop_on_a_worst_case_tie():
    # Exact advantages (50-digit arithmetic) of the first policy [0, 1, 1, 0]: state 3 gains
    # 0.0608 by switching. The old default tie tolerance 32ε·max|r|/(1−γ)² ≈ 0.7 at γ = 1 − 1e-7
    # hid it: PI stopped there, converged, 1.2 % below V*.
    mdp = random_mdp(4, 2, gamma=1 - 1e-7, rng=6)
    sol = policy_iteration(mdp)
    np.testing.assert_array_equal(sol.policy, [0, 1, 1, 1])
    np.testing.assert_allclose(sol.V, linear_program(mdp).V, rtol=1e-9)


def test_policy_iteration_on_an_exact_tie_between_absorbing_states_near_gamma_one():
    # state 0 chooses between two absorbing states of equal reward: a tie in exact arithmetic,
    # which round-off (V ~ 1e7) must not turn into a cycle
    P = np.zeros((3, 2, 3))
    P[0, 0, 1] = P[0, 1, 2] = 1.0
    P[1, :, 1] = P[2, :, 2] = 1.0
    R = np.array([[0.0, 0.0], [0.7, 0.7], [0.7, 0.7]])
    for g in (0.9, 1 - 1e-7):
        sol = policy_iteration(FiniteMDP(P, R, gamma=g))
        assert sol.converged and sol.iterations <= 3
        np.testing.assert_allclose(
            sol.V, [0.7 * g / (1 - g), 0.7 / (1 - g), 0.7 / (1 - g)], rtol=1e-9
        )


def _float32_cases():
    """Random float32 models (S 1–5, A 1–3, γ 0.9 / 0.99 / 0.999, rewards of size 1 or 100)
    with the exact V* of the stored model (rows P/σ, as the certificates' round-off terms
    assume) computed in float64."""
    for seed in range(60):
        rng = np.random.default_rng(seed)
        S, A = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        g = (0.9, 0.99, 0.999)[seed % 3]
        m = random_mdp(S, A, gamma=g, rng=seed)
        P32 = np.asarray(m.P, dtype=np.float32)
        R32 = (np.asarray(m.R) * (1.0, 100.0)[seed % 2]).astype(np.float32)
        P64 = P32.astype(np.float64)
        exact = FiniteMDP(P64 / P64.sum(-1, keepdims=True), R32.astype(np.float64), gamma=g)
        yield seed, FiniteMDP(P32, R32, gamma=g), exact, np.asarray(policy_iteration(exact).V)


def test_certificates_hold_for_float32_models():
    # Bug found here: VI and MPI certified only the span γ/(1−γ)·sp(Tv − v) of the *computed*
    # differences. In float32 the iterates reach a rounding fixed point where Tv − v is exactly 0,
    # so they returned converged=True with bound 0.0 while |V − V*| was 0.14 (VI, S = 5,
    # γ = 0.999) and 7.8 (MPI, S = 1, rewards ~100, γ = 0.999). The bounds now add the
    # round-off of the computed Q, Tv and Tv − v (Higham's γ_{S+2}); PI's adds its evaluation's
    # residual too, the LP's the same round-off.
    checked = 0
    for seed, m32, exact, V_star in _float32_cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # a tol below the float32 floor
            sols = [
                value_iteration(m32, tol=1e-4),
                modified_policy_iteration(m32, tol=1e-4),
                policy_iteration(m32),
            ]
        for sol in sols:
            loss = float(
                np.max(V_star - np.asarray(evaluate_policy(exact, np.asarray(sol.policy))))
            )
            bound = float(np.asarray(sol.bound))
            assert loss <= bound, (seed, sol.method, loss, bound)
            if sol.method != "policy_iteration":  # VI/MPI's midpoint: |V − V*| ≤ bound/2
                err = float(np.max(np.abs(np.asarray(sol.V, dtype=np.float64) - V_star)))
                assert err <= bound / 2, (seed, sol.method, err, bound)
            checked += 1
    assert checked == 180


def test_float32_tol_below_the_rounding_floor_is_reported():
    # one state, reward 100, γ = 0.999: V* = 1e5, where float32 resolves 0.0078; tol = 1e-4 can
    # no longer be certified, so VI ends converged=False with a warning naming the floor
    mdp = FiniteMDP(
        np.ones((1, 1, 1), dtype=np.float32), np.full((1, 1), 100.0, dtype=np.float32), gamma=0.999
    )
    with pytest.warns(ConvergenceWarning, match="below the round-off floor"):
        res = value_iteration(mdp, tol=1e-4)
    assert not res.converged
    assert abs(float(res.V[0]) - 1e5) <= float(res.bound) / 2


def test_lp_ties_are_judged_at_each_instance_scale():
    # one state, two actions, gamma 0.9: instance 0 pays (1e6, 0), instance 1 pays (0, 1e-6), so
    # V* = (1e7, 1e-5) with actions (0, 1). The LP's tie tolerance 1e-9·max|R|/(1−γ) was taken over
    # the whole batch (1e-2), so instance 1 took action 0 (V = 0, 100 % off) with bound 0.1;
    # alone it is solved exactly. Now each instance is judged at its own scale
    batch = FiniteMDP(np.ones((2, 1, 2, 1)), np.array([[[1e6, 0.0]], [[0.0, 1e-6]]]), 0.9)
    lp = linear_program(batch)
    np.testing.assert_array_equal(lp.policy, [[0], [1]])
    np.testing.assert_array_equal(lp.policy, policy_iteration(batch).policy)
    alone = linear_program(batch[1])
    np.testing.assert_array_equal(lp.policy[1], alone.policy)
    assert lp.bound[1] <= 1e-12 and abs(lp.V[1, 0] - 1e-5) <= lp.bound[1]


@pytest.mark.parametrize(
    "solver, kw",
    [
        (value_iteration, {}),
        (modified_policy_iteration, {}),
        (policy_iteration, {"pi0": np.array([1, 0])}),  # (its own start is optimal here)
    ],
    ids=["value_iteration", "modified_policy_iteration", "policy_iteration"],
)
def test_convergence_warnings_point_at_the_caller(solver, kw):
    # VI's and MPI's ConvergenceWarning named a line of the library (stacklevel 3 stopped in
    # value_iteration itself), so under Python's default filter ("once per location") a second
    # unconverged call from another line of the user's code printed nothing
    mdp = FiniteMDP(np.full((2, 2, 2), 0.5), np.array([[1.0, 0.0], [0.0, 0.5]]), 0.99)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solver(mdp, max_iter=1, **kw)
    assert [w.category for w in caught] == [ConvergenceWarning]
    assert caught[0].filename == __file__


def test_bellman_certificate_arguments_are_checked():
    # an average-reward model failed with "float() argument must be a string or a real number,
    # not 'NoneType'", a non-model with AttributeError "'str' object has no attribute 'xp'", a
    # (4, S) v on a (3,)-batch inside numpy's matmul, and a bound beyond the range came with
    # numpy's "overflow encountered in scalar multiply"
    from rltheory.mdp.discounted import bellman_certificate

    P = np.full((2, 2, 2), 0.5)
    with pytest.raises(
        ValueError, match=r"bellman_certificate solves discounted MDPs but mdp.gamma is None"
    ):
        bellman_certificate(FiniteMDP(P, np.ones((2, 2)), None), np.zeros(2))
    with pytest.raises(TypeError, match=r"bellman_certificate expects a FiniteMDP; got str"):
        bellman_certificate("mdp", np.zeros(2))
    batch = FiniteMDP(np.stack([P] * 3), np.ones((3, 2, 2)), 0.9)
    with pytest.raises(
        ValueError,
        match=r"v's batch shape \(4,\) does not broadcast against the model's batch shape \(3,\)",
    ):
        bellman_certificate(batch, np.zeros((4, 2)))
    big = FiniteMDP(P, np.array([[1e308, 0.0], [0.0, -1e308]]), 0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Q, Tv, D, bound = bellman_certificate(big, np.array([1e308, -1e308]))
    # Tv = (1e308, 0) and Δ = (0, 1e308): sp(Δ) = 1e308, times γ/(1 − γ) = 9 is beyond the range
    assert bound == np.inf and np.all(np.isfinite(Q))


def test_policy_iteration_start_batch_is_named():
    # pi0 of shape (5, S) on one model (or (2, S) on a (3,)-batch) failed in numpy's broadcast_to:
    # "input operand has more dimensions than allowed by the axis remapping"
    P = np.full((2, 2, 2), 0.5)
    one = FiniteMDP(P, np.array([[1.0, 0.0], [0.0, 0.5]]), 0.9)
    three = FiniteMDP(np.stack([P] * 3), np.ones((3, 2, 2)), 0.9)
    with pytest.raises(
        ValueError,
        match=r"pi0's batch shape \(5,\) does not broadcast to the model's batch shape \(\)",
    ):
        policy_iteration(one, pi0=np.zeros((5, 2), dtype=int))
    with pytest.raises(
        ValueError,
        match=r"pi0's batch shape \(2,\) does not broadcast to the model's batch shape \(3,\)",
    ):
        policy_iteration(three, pi0=np.zeros((2, 2), dtype=int))
    # a shared start, or one per instance, is accepted and gives the same optimum
    shared = policy_iteration(three, pi0=np.array([1, 1]))
    each = policy_iteration(three, pi0=np.ones((3, 2), dtype=int))
    np.testing.assert_array_equal(shared.policy, each.policy)
