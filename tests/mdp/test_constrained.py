"""Constrained MDPs: LP strong duality, complementary slackness, exact evaluation, ≤ m randomised
states, an independent cvxpy formulation, the Lagrangian saddle point, infeasibility and validation."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.errors import InvalidModelError, SolverError
from rltheory.mdp import (
    ConstrainedMDP,
    FiniteMDP,
    dual_function,
    evaluate_cmdp,
    lagrangian,
    linear_utility,
    occupancy_measure,
    policy_transition_matrix,
    solve_cmdp,
    solve_general_utility,
    stationary_distribution,
)
from rltheory.testing import average_reward_mdps, constrained_mdps, discounts, policies


def _instance(
    seed: int, S: int, A: int, m: int, gamma: float | None, tighten: float
) -> ConstrainedMDP:
    """Random CMDP with generic rewards/costs and thresholds that a random policy meets.

    ``b = tighten · V_C^{π0} + (1 − tighten) · min_π V_C`` per constraint, with ``π0`` a random
    stochastic policy: ``π0`` is feasible whenever ``tighten ≥ 1``; below 1 the thresholds
    are pulled towards the individual minima (still feasible for m = 1).
    """
    rng = np.random.default_rng(seed)
    P = rng.random((S, A, S)) ** 2
    if gamma is None:
        P += 0.05  # every policy irreducible: unichain average-reward model
    P /= P.sum(-1, keepdims=True)
    mdp = FiniteMDP(P, rng.random((S, A)), gamma)
    C = rng.random((m, S, A))
    pi0 = rng.dirichlet(np.ones(A), size=S)
    probe = ConstrainedMDP(mdp, C, np.zeros(m))
    _, c0 = evaluate_cmdp(probe, pi0)
    lows = np.array(
        [
            -dual_function(ConstrainedMDP(mdp.replace(R=-C[i]), C[:0], np.zeros(0)), np.zeros(0))[0]
            for i in range(m)
        ]
    )
    b = tighten * np.asarray(c0) + (1 - tighten) * lows
    return ConstrainedMDP(mdp, C, b)


def _reduced_costs(cmdp: ConstrainedMDP, sol) -> np.ndarray:
    """``v(s) − (r − λᵀC)(s,a) − γ Σ P v`` (discounted) or ``g + h(s) − (r − λᵀC) − P h`` (average)."""
    P, R, C = np.asarray(cmdp.mdp.P), np.asarray(cmdp.mdp.R), np.asarray(cmdp.C)
    lam = np.asarray(sol.duals)
    y = np.asarray(sol.state_duals)
    shaped = R - np.tensordot(lam, C, axes=1)
    if cmdp.gamma is None:
        h, g = y[:-1], y[-1]
        return g + h[:, None] - shaped - P @ h
    return y[:, None] - shaped - cmdp.gamma * (P @ y)


# ---- reference values ---------------------------------------------------------------------


@pytest.mark.parametrize("cost, b, gamma", [(1.0, 1.0, 0.5), (2.0, 3.0, 0.8), (2.0, 30.0, 0.8)])
def test_one_state_closed_form(cost, b, gamma):
    # one state; action 1 earns 1 and costs c. Playing it w.p. p gives V_R = p/(1−γ), V_C = c p/(1−γ):
    # p* = min(1, b(1−γ)/c), V* = p*/(1−γ), λ* = ∂V*/∂b = 1/c while the constraint binds, else 0.
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma)
    sol = solve_cmdp(ConstrainedMDP(mdp, np.array([[[0.0, cost]]]), np.array([b])))
    p = min(1.0, b * (1 - gamma) / cost)
    np.testing.assert_allclose(sol.policy, [[1 - p, p]], atol=1e-12)
    assert sol.value == pytest.approx(p / (1 - gamma), abs=1e-10)
    assert float(sol.duals[0]) == pytest.approx(1 / cost if p < 1 else 0.0, abs=1e-10)
    assert sol.randomised_states == ((0,) if 0 < p < 1 else ())


def test_average_reward_two_state_closed_form():
    # two states, action 0 stays, action 1 swaps; reward 1 in state 1 (any action), cost 1 there.
    # Stationary frequencies x with x(1) ≤ b: V* = b (for b ≤ 1), λ* = 1 (∂V*/∂b).
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = 1.0
    P[0, 1, 1] = P[1, 1, 0] = 1.0
    P[:, :, :] = 0.9 * P + 0.05  # unichain: every action leaks a little
    mdp = FiniteMDP(P, np.array([[0.0, 0.0], [1.0, 1.0]]), None)
    C = np.array([[[0.0, 0.0], [1.0, 1.0]]])
    sol = solve_cmdp(ConstrainedMDP(mdp, C, np.array([0.3])))
    assert sol.value == pytest.approx(0.3, abs=1e-10)
    assert float(sol.duals[0]) == pytest.approx(1.0, abs=1e-9)
    value, costs = evaluate_cmdp(ConstrainedMDP(mdp, C, np.array([0.3])), sol.policy)
    assert value == pytest.approx(0.3, abs=1e-10) and float(costs[0]) == pytest.approx(
        0.3, abs=1e-10
    )


# ---- theorems on random instances ---------------------------------------------------------


@settings(max_examples=40)
@given(
    st.integers(0, 2**31),
    st.integers(1, 5),
    st.integers(1, 3),
    st.integers(1, 2),
    st.sampled_from([0.0, 0.5, 0.9]),
    st.sampled_from([0.5, 1.0, 1.5]),
)
def test_discounted_cmdp_duality_slackness_and_evaluation(seed, S, A, m, gamma, tighten):
    cmdp = _instance(seed, S, A, m, gamma, tighten if m == 1 else max(tighten, 1.0))
    sol = solve_cmdp(cmdp)
    scale = 1.0 / (1.0 - gamma)
    tol = 1e-8 * scale
    pi = np.asarray(sol.policy)
    # policy: rows on the simplex, normalised over actions
    assert np.all(pi >= 0) and np.allclose(pi.sum(-1), 1.0, atol=1e-12)
    # exact value / costs by policy evaluation equal the LP's
    value, costs = evaluate_cmdp(cmdp, pi)
    assert value == pytest.approx(sol.value, abs=tol)
    np.testing.assert_allclose(costs, sol.costs, atol=tol)
    # occupancy is the policy's normalised occupancy
    np.testing.assert_allclose(sol.occupancy, occupancy_measure(cmdp.mdp, pi), atol=1e-9)
    # strong duality (LP dual objective and the dual function at λ*) and weak duality
    assert sol.duality_gap <= tol
    assert dual_function(cmdp, sol.duals)[0] == pytest.approx(sol.value, abs=tol)
    lam = np.random.default_rng(seed).exponential(size=m)
    assert dual_function(cmdp, lam)[0] >= sol.value - tol
    # complementary slackness: λ_i slack_i = 0, slack ≥ 0, reduced costs ≥ 0 and 0 on supp(q)
    slack, duals = np.asarray(sol.slack), np.asarray(sol.duals)
    assert np.all(slack >= -tol) and np.all(duals >= -1e-12)
    assert np.all(np.abs(duals * slack) <= tol * (1 + duals.max()))
    rc = _reduced_costs(cmdp, sol)
    assert rc.min() >= -tol * (1 + duals.max())
    assert np.abs(rc[np.asarray(sol.occupancy) > 1e-9]).max(initial=0.0) <= tol * (1 + duals.max())
    # a basic optimal solution randomises in at most m states
    assert len(sol.randomised_states) <= m


@settings(max_examples=30)
@given(st.integers(0, 2**31), st.integers(2, 5), st.integers(2, 3), st.integers(1, 2))
def test_average_reward_cmdp_duality_and_evaluation(seed, S, A, m):
    cmdp = _instance(seed, S, A, m, None, 1.0 if m == 2 else 0.6)
    sol = solve_cmdp(cmdp)
    tol = 1e-8
    value, costs = evaluate_cmdp(cmdp, sol.policy)
    assert value == pytest.approx(sol.value, abs=tol)
    np.testing.assert_allclose(costs, sol.costs, atol=tol)
    # the occupancy is the policy's stationary state-action frequency
    mu = stationary_distribution(np.asarray(policy_transition_matrix(cmdp.mdp, sol.policy)))
    np.testing.assert_allclose(sol.occupancy, mu[:, None] * np.asarray(sol.policy), atol=1e-9)
    assert sol.duality_gap <= tol
    assert dual_function(cmdp, sol.duals)[0] == pytest.approx(sol.value, abs=1e-7)
    rc = _reduced_costs(cmdp, sol)
    assert rc.min() >= -1e-8 * (1 + np.max(sol.duals))
    assert len(sol.randomised_states) <= m


@settings(max_examples=30)
@given(st.integers(0, 2**31), st.data())
def test_lagrangian_saddle_point(seed, data):
    cmdp = _instance(seed, 4, 3, 2, 0.8, 1.0)
    sol = solve_cmdp(cmdp)
    lam_star = np.asarray(sol.duals)
    L_star = lagrangian(cmdp, sol.policy, lam_star)
    assert L_star == pytest.approx(sol.value, abs=1e-8)  # complementary slackness
    pi = data.draw(policies(4, 3))
    lam = np.random.default_rng(seed).exponential(size=2)
    assert lagrangian(cmdp, pi, lam_star) <= L_star + 1e-8  # π* maximises L(·, λ*)
    assert lagrangian(cmdp, sol.policy, lam) >= L_star - 1e-8  # λ* minimises L(π*, ·) over λ ≥ 0


@settings(max_examples=25)
@given(st.integers(0, 2**31), st.integers(2, 4), st.integers(2, 3), st.integers(1, 2))
def test_independent_cvxpy_formulation_agrees(seed, S, A, m):
    gamma = 0.9
    cmdp = _instance(seed, S, A, m, gamma, 1.0)
    sol = solve_cmdp(cmdp)
    P, R, C, b = (np.asarray(x) for x in (cmdp.mdp.P, cmdp.mdp.R, cmdp.C, cmdp.b))
    mu = np.full(S, 1.0 / S)
    # unnormalised occupancy q[s, a] as a 2-D cvxpy variable, flow written per state
    q = cp.Variable((S, A), nonneg=True)
    flow = [cp.sum(q[j, :]) == mu[j] + gamma * cp.sum(cp.multiply(P[:, :, j], q)) for j in range(S)]
    costs = [cp.sum(cp.multiply(C[i], q)) <= b[i] for i in range(m)]
    prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(R, q))), flow + costs)
    # tight tolerances: an interior-point dual errs by about tol/slack on a nearly active constraint
    # (stress draw seed 45205699: slack 7e-5, default tol 1e-8 gave λ_2 = 1.3e-5 where it is 0)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == cp.OPTIMAL
    assert prob.value == pytest.approx(sol.value, abs=1e-6 * (1 + abs(sol.value)))
    np.testing.assert_allclose([c.dual_value for c in costs], sol.duals, atol=1e-5)
    # the general-utility solver with linear utilities is the same LP on normalised occupancies
    gu = solve_general_utility(
        cmdp.mdp, linear_utility(R), [(linear_utility(C[i]), (1 - gamma) * b[i]) for i in range(m)]
    )
    assert gu.value == pytest.approx((1 - gamma) * sol.value, abs=1e-7)
    np.testing.assert_allclose(gu.duals, sol.duals, atol=1e-5)


def test_value_is_concave_in_threshold_with_dual_slope():
    cmdp = _instance(7, 5, 3, 1, 0.9, 1.0)
    lo = float(cmdp.b[0]) * 0.7
    bs = np.linspace(lo, float(cmdp.b[0]) * 1.6, 13)
    vals, lams = [], []
    for b in bs:
        s = solve_cmdp(ConstrainedMDP(cmdp.mdp, cmdp.C, np.array([b])))
        vals.append(s.value)
        lams.append(float(s.duals[0]))
    vals, lams = np.array(vals), np.array(lams)
    assert np.all(np.diff(vals) >= -1e-9)  # non-decreasing
    assert np.all(np.diff(vals, 2) <= 1e-8)  # concave
    assert np.all(
        np.diff(lams) <= 1e-9
    )  # multipliers non-increasing (subgradients of a concave function)
    # λ(b) lies between the right and left difference quotients (supergradient)
    h = 1e-6
    for b, lam in zip(bs[1:-1], lams[1:-1], strict=True):
        up = solve_cmdp(ConstrainedMDP(cmdp.mdp, cmdp.C, np.array([b + h]))).value
        dn = solve_cmdp(ConstrainedMDP(cmdp.mdp, cmdp.C, np.array([b - h]))).value
        v = solve_cmdp(ConstrainedMDP(cmdp.mdp, cmdp.C, np.array([b]))).value
        assert (up - v) / h - 1e-4 <= lam <= (v - dn) / h + 1e-4


# ---- infeasibility and validation -------------------------------------------------------


def test_infeasible_threshold_raises_with_status():
    cmdp = _instance(3, 4, 2, 1, 0.9, 0.0)
    low = float(cmdp.b[0])  # tighten = 0: b equals the smallest achievable cost
    solve_cmdp(cmdp)  # exactly at the minimum: feasible
    bad = ConstrainedMDP(cmdp.mdp, cmdp.C, np.array([low - 0.01]))
    with pytest.raises(
        SolverError, match=r"infeasible \(HiGHS status 2.*min_π V_C0\(μ\) = .* > b\[0\]"
    ) as info:
        solve_cmdp(bad)
    assert info.value.status == 2
    # two constraints each satisfiable alone but not jointly: reward-free costs C0 = 1 − C1
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), 0.5)
    both = ConstrainedMDP(mdp, np.array([[[1.0, 0.0]], [[0.0, 1.0]]]), np.array([0.5, 0.5]))
    with pytest.raises(
        SolverError, match="each constraint is satisfiable alone, but not all at once"
    ):
        solve_cmdp(both)


@pytest.mark.parametrize("scale", [1e-12, 1e9])
def test_infeasibility_message_names_the_constraint_at_any_cost_scale(scale):
    # one state, costs (c, 2c) with γ = 1/2: min_π V_C = c/(1−γ) = 2c > b = c, so the constraint is
    # infeasible alone. An absolute 1e-9 slack read 2e-12 > 1e-12 as satisfiable at c = 1e-12.
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), 0.5)
    cmdp = ConstrainedMDP(mdp, scale * np.array([[[1.0, 2.0]]]), np.array([scale]))
    with pytest.raises(
        SolverError, match=r"min_π V_C0\(μ\) = 2e[-+]\d+ > b\[0\] = 1e[-+]\d+"
    ) as info:
        solve_cmdp(cmdp)
    assert info.value.status == 2


def test_duals_are_non_negative_and_certify_strong_duality_when_degenerate():
    # duplicated actions: the reward and dynamics do not depend on a, only the cost (of size 1e-12)
    # does, and b is the least achievable cost. Every λ ≥ 0 is then optimal, D(λ) = V* for all of
    # them; HiGHS's marginal came back as −3.8e-3 (round-off at λ's scale 1/1e-12), so the
    # reported multiplier was negative and dual_function rejected it.
    rng = np.random.default_rng(0)
    S = 5
    P = rng.random((S, 1, S)) ** 3
    P = np.repeat(P / P.sum(-1, keepdims=True), 2, axis=1)
    R = np.repeat(rng.random((S, 1)), 2, axis=1)
    C = 1e-12 * rng.random((1, S, 2))
    mdp = FiniteMDP(P, R, 0.3, np.r_[0.0, rng.dirichlet(np.ones(S - 1))])
    low = -dual_function(ConstrainedMDP(mdp.replace(R=-C[0]), C[:0], np.zeros(0)), np.zeros(0))[0]
    cmdp = ConstrainedMDP(mdp, C, np.array([low]))
    sol = solve_cmdp(cmdp)
    assert np.all(np.asarray(sol.duals) >= 0.0)
    d, _ = dual_function(cmdp, sol.duals)
    assert d == pytest.approx(sol.value, rel=1e-9)
    value, costs = evaluate_cmdp(cmdp, sol.policy)
    assert value == pytest.approx(sol.value, rel=1e-9)
    assert float(costs[0]) <= low * (1 + 1e-9)


def test_average_reward_cmdp_refuses_non_weakly_communicating():
    P = np.zeros((2, 1, 2))
    P[0, 0, 0] = P[1, 0, 1] = 1.0
    mdp = FiniteMDP(P, np.zeros((2, 1)), None)
    with pytest.raises(
        InvalidModelError,
        match=r"solve_cmdp \(average reward\) needs a weakly communicating.*\{0\}, \{1\}",
    ):
        solve_cmdp(ConstrainedMDP(mdp, np.zeros((1, 2, 1)), np.array([1.0])))


def test_average_reward_cmdp_split_over_classes_is_named():
    # communicating two-state model: a0 stays, a1 swaps. Reward 1 in state 0; cost 1 in state 0
    # plus 1 for every swap. With b = 1/2 the unique LP optimum x = ½δ(0,a0) + ½δ(1,a0) (value ½)
    # splits over two closed classes; any unichain policy must swap (μ0 (1 + 2ε) ≤ ½ ⇒ value < ½).
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = P[0, 1, 1] = P[1, 1, 0] = 1.0
    mdp = FiniteMDP(P, np.array([[1.0, 1.0], [0.0, 0.0]]), None)
    C = np.array([[[1.0, 2.0], [0.0, 1.0]]])
    with pytest.raises(
        InvalidModelError, match=r"split over the policy's recurrent classes \{0\}, \{1\}"
    ):
        solve_cmdp(ConstrainedMDP(mdp, C, np.array([0.5])))


def test_invalid_inputs_raise_located_errors():
    mdp = FiniteMDP(np.ones((2, 2, 2)) / 2, np.zeros((2, 2)), 0.9)
    with pytest.raises(
        InvalidModelError, match=r"C must have shape \(m, S, A\) = \(m, 2, 2\); got \(1, 2, 3\)"
    ):
        ConstrainedMDP(mdp, np.zeros((1, 2, 3)), np.zeros(1))
    with pytest.raises(InvalidModelError, match=r"C must have shape"):
        ConstrainedMDP(mdp, np.zeros((2, 2)), np.zeros(1))
    C = np.zeros((2, 2, 2))
    C[1, 0, 1] = np.nan
    with pytest.raises(InvalidModelError, match=r"C must be finite; C\(i=1, s=0, a=1\) = nan"):
        ConstrainedMDP(mdp, C, np.zeros(2))
    with pytest.raises(
        InvalidModelError,
        match=r"b must have shape \(m,\) = \(2,\) matching C's 2 constraints; got \(3,\)",
    ):
        ConstrainedMDP(mdp, np.zeros((2, 2, 2)), np.zeros(3))
    with pytest.raises(InvalidModelError, match=r"b must be finite; b\(i=0\) = inf"):
        ConstrainedMDP(mdp, np.zeros((1, 2, 2)), np.array([np.inf]))
    with pytest.raises(InvalidModelError, match="single model; mdp has batch shape"):
        ConstrainedMDP(
            FiniteMDP(np.ones((3, 2, 2, 2)) / 2, np.zeros((3, 2, 2)), 0.9),
            np.zeros((1, 2, 2)),
            np.zeros(1),
        )
    with pytest.raises(InvalidModelError, match="mdp must be a FiniteMDP"):
        ConstrainedMDP("mdp", np.zeros((1, 2, 2)), np.zeros(1))
    cmdp = ConstrainedMDP(mdp, np.zeros((1, 2, 2)), np.ones(1))
    with pytest.raises(TypeError, match="expects a ConstrainedMDP"):
        solve_cmdp(mdp)
    with pytest.raises(ValueError, match=r"lam must have shape \(m,\) = \(1,\)"):
        lagrangian(cmdp, np.zeros(2, dtype=int), np.ones(2))
    with pytest.raises(ValueError, match=r"lam must be finite and non-negative; lam\[0\] = -1.0"):
        dual_function(cmdp, np.array([-1.0]))
    with pytest.raises(ValueError, match=r"pi\(1,\) = 4 is not an action index"):
        evaluate_cmdp(cmdp, np.array([0, 4]))
    with pytest.raises(InvalidModelError, match=r"gamma must lie in \[0, 1\)"):
        ConstrainedMDP(
            FiniteMDP(np.ones((2, 2, 2)) / 2, np.zeros((2, 2)), 1.0),
            np.zeros((1, 2, 2)),
            np.zeros(1),
        )


@settings(max_examples=15)
@given(average_reward_mdps(min_states=2, max_states=4, min_actions=2, max_actions=3))
def test_average_cmdp_on_hypothesis_unichain_models(mdp):
    # thresholds met by the uniform policy are feasible; the LP value is then ≥ its value
    S, A = mdp.S, mdp.A
    rng = np.random.default_rng(S * 10 + A)
    C = rng.random((1, S, A))
    uniform = np.full((S, A), 1.0 / A)
    v0, c0 = evaluate_cmdp(ConstrainedMDP(mdp, C, np.zeros(1)), uniform)
    sol = solve_cmdp(ConstrainedMDP(mdp, C, np.asarray(c0)))
    assert sol.value >= v0 - 1e-9
    v, c = evaluate_cmdp(ConstrainedMDP(mdp, C, np.asarray(c0)), sol.policy)
    assert v == pytest.approx(sol.value, abs=1e-9) and float(c[0]) <= float(c0[0]) + 1e-9


@settings(max_examples=25)
@given(constrained_mdps(gamma=discounts(0.95, 0.999)))
def test_cmdp_solution_is_its_policys_exact_value_at_high_discount(cmdp):
    """The regime where the LP's dropped small entries showed (values ~ 1/(1−γ)): the reported value
    and costs are the returned policy's exact ones, relative to the scale 1/(1−γ)."""
    sol = solve_cmdp(cmdp)
    tol = 1e-9 / (1 - cmdp.gamma)
    value, costs = evaluate_cmdp(cmdp, sol.policy)
    assert abs(value - sol.value) <= tol
    np.testing.assert_allclose(costs, sol.costs, atol=tol, rtol=0)
    assert np.all(np.asarray(costs) <= np.asarray(cmdp.b) + tol)
    assert abs(dual_function(cmdp, sol.duals)[0] - sol.value) <= 10 * tol


def test_cmdp_feasibility_edge_with_tiny_transition_probabilities():
    """The two-constraint model of the cmdp-frontier full preset at seed 1 has transition probabilities
    down to 7e-13. Bisecting for the first feasible threshold probes LPs within 1e-6 of the feasibility
    edge; with entries kept down to 1e-12 HiGHS answered one of them with model status Unknown from
    both methods (a SolverError with status 4 stopped the preset). The helper then retries at HiGHS's
    default drop, where it reports the infeasibility (status 2) that the bisection expects."""
    from rltheory.experiments.cmdp_frontier import Config, _model, frontier  # noqa: PLC0415

    config = Config.full()
    mdp, C = _model(config, config.gamma, 2, 3)
    fr = frontier(mdp, C, 3)
    s0, low, high = float(fr["s"][0]), fr["low"], fr["high"]
    assert 0.0 < s0 < 1.0
    solve_cmdp(ConstrainedMDP(mdp, C, low + s0 * (high - low)))  # feasible at the returned edge
    with pytest.raises(SolverError) as info:  # and not 1e-6 below it
        solve_cmdp(ConstrainedMDP(mdp, C, low + (s0 - 1e-6) * (high - low)))
    assert info.value.status == 2


def test_cmdp_lp_keeps_tiny_transition_probabilities():
    """A transition probability of 5e-10 moves the CMDP value by ≈ 2.2e-4 at γ = 0.999; the LP kept
    it only once HiGHS's small_matrix_value was lowered to 1e-12. Before, the reported value missed
    the policy's exact value by that much while the reported duality gap was 1e-13."""
    eps = 5e-10
    P = np.zeros((2, 2, 2))
    P[0, 0] = [1 - eps, eps]
    P[0, 1] = [0.5, 0.5]
    P[1, :, 1] = 1.0
    mdp = FiniteMDP(P, np.array([[1.0, 0.0], [0.5, 0.5]]), 0.999, mu=np.array([1.0, 0.0]))
    cmdp = ConstrainedMDP(mdp, np.array([[[1.0, 0.0], [0.0, 0.0]]]), np.array([900.0]))
    sol = solve_cmdp(cmdp)
    value, costs = evaluate_cmdp(cmdp, sol.policy)
    assert sol.value == pytest.approx(value, rel=1e-12)
    assert float(costs[0]) == pytest.approx(900.0, rel=1e-12)
    assert sol.duality_gap <= 1e-9


@settings(max_examples=30)
@given(constrained_mdps())
def test_strong_duality_on_strictly_feasible_instances(cmdp):
    # instances from rltheory.testing.constrained_mdps satisfy Slater's condition
    sol = solve_cmdp(cmdp)
    tol = 1e-8 / (1 - cmdp.gamma)
    assert sol.duality_gap <= tol
    assert dual_function(cmdp, sol.duals)[0] == pytest.approx(sol.value, abs=tol)
    value, costs = evaluate_cmdp(cmdp, sol.policy)
    assert value == pytest.approx(sol.value, abs=tol)
    assert np.all(np.asarray(costs) <= np.asarray(cmdp.b) + tol)
    assert len(sol.randomised_states) <= cmdp.m
