"""Constrained policy optimisation: NPG-PD bounds and limit, general-utility PD, two-stage AC, Slater."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from rltheory.algorithms.constrained import (
    fosp_residual,
    general_utility_primal_dual,
    lagrangian_policy_gradient,
    npg_pd_step,
    npg_primal_dual,
    sample_npg_primal_dual,
    slater_slack,
    two_stage_calibrated,
    two_stage_constrained_ac,
)
from rltheory.algorithms.constrained_npg import _mc_occupancy, _mc_q
from rltheory.bounds.constrained import (
    fosp_rate,
    fosp_schedule,
    npg_pd_bounds,
    npg_pd_step_sizes,
    slater_dual_radius,
    truncation_envelope,
)
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP, occupancy_measure, q_function
from rltheory.mdp.constrained import ConstrainedMDP, evaluate_cmdp, solve_cmdp
from rltheory.mdp.utility import (
    OccupancyFunction,
    entropy_utility,
    linear_utility,
    solve_general_utility,
)
from rltheory.testing import constrained_mdps


def _bounds_for(cmdp: ConstrainedMDP, res, T: int):
    R, C, b = np.asarray(cmdp.mdp.R), np.asarray(cmdp.C), np.asarray(cmdp.b)
    g = cmdp.gamma
    eta1, eta2 = npg_pd_step_sizes(T, gamma=g, n_actions=cmdp.A)
    G = np.maximum(b - C.min(axis=(1, 2)) / (1 - g), C.max(axis=(1, 2)) / (1 - g) - b)
    xi, _ = slater_slack(cmdp)
    _, lam_star = slater_dual_radius(gamma=g, slack=xi, reward_span=float(np.ptp(R)))
    return npg_pd_bounds(
        res.trace.iteration,
        gamma=g,
        eta1=eta1,
        eta2=eta2,
        Lambda=res.Lambda,
        cost_deviation=G,
        n_actions=cmdp.A,
        reward_span=float(np.ptp(R)),
        cost_span=np.ptp(C, axis=(1, 2)),
        lam_star_l1=lam_star,
    )


def _random_cmdp(
    seed: int, S: int = 5, A: int = 3, gamma: float = 0.8, frac: float = 0.3
) -> ConstrainedMDP:
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(S), size=(S, A))
    mdp = FiniteMDP(P, rng.random((S, A)), gamma)
    C = rng.random((1, S, A))
    from rltheory.mdp import policy_iteration

    lo = -float(np.mean(policy_iteration(mdp.replace(R=-C[0])).V))
    hi = float(np.mean(policy_iteration(mdp.replace(R=C[0])).V))
    return ConstrainedMDP(mdp, C, np.array([lo + frac * (hi - lo)]))


# ------------------------------------------------------------------------ NPG-PD
@settings(max_examples=12, deadline=None)
@given(constrained_mdps(max_states=4, max_actions=3, max_constraints=2))
def test_npg_pd_averages_satisfy_the_bounds_at_every_iterate(cmdp):
    """Ding et al. (2020, Thm 1) with the constants of npg_pd_bounds: averaged gap and violation
    under the O(1/√T) bound at every t ≤ T (exact gradients, random CMDPs with Slater slack)."""
    T = 150
    res = npg_primal_dual(cmdp, iterations=T)
    bd = _bounds_for(cmdp, res, T)
    tol = 1e-9 * (1 + abs(res.reference))
    assert np.all(res.trace["avg_gap"] <= bd.gap + tol)
    assert np.all(res.trace["avg_violation"] <= bd.violation + tol)
    assert np.all(res.trace["lam_norm"] <= cmdp.m * res.Lambda + 1e-12)


def test_npg_pd_limit_matches_the_lp_optimum():
    """The averaged policy's value and cost approach the LP optimum (solve_cmdp) within the theorem's
    bound at T = 3000, and (empirically, much tighter) within 1% of V*."""
    cmdp = _random_cmdp(0)
    T = 3000
    res = npg_primal_dual(cmdp, iterations=T)
    sol = solve_cmdp(cmdp)
    value, costs = evaluate_cmdp(cmdp, res.average_policy)
    bd = _bounds_for(cmdp, res, T)
    assert sol.value - value <= bd.gap[-1] + 1e-9
    assert float(np.max(np.asarray(costs) - np.asarray(cmdp.b))) <= bd.violation[-1] + 1e-9
    # averaged occupancy's values are the averaged values
    assert value == pytest.approx(res.reference - res.trace["avg_gap"][-1], abs=1e-9)
    assert abs(value - sol.value) <= 0.01 * abs(sol.value)
    assert float(np.max(np.asarray(costs) - np.asarray(cmdp.b))) <= 0.01 * float(
        np.asarray(cmdp.b)[0]
    )


def test_npg_pd_step_reference_values():
    """One state, γ = 0: A_L(a) = r(a) − λc(a) − Σ π(r − λc); the NPG step multiplies π by exp(η A_L)."""
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    cmdp = ConstrainedMDP(mdp, np.array([[[0.0, 2.0]]]), np.array([0.5]))
    pi, lam = npg_pd_step(
        cmdp, np.full((1, 2), 0.5), np.array([1.0]), eta1=math.log(3), eta2=0.5, Lambda=10.0
    )
    # Lagrangian reward (0, 1 − 2) = (0, −1): A_L = (1/2, −1/2) → weights (√3, 1/√3) → (3/4, 1/4)
    np.testing.assert_allclose(pi, [[0.75, 0.25]], atol=1e-12)
    assert lam.tolist() == [1.0 + 0.5 * (1.0 - 0.5)]
    _, lam2 = npg_pd_step(
        cmdp, np.array([[1.0, 0.0]]), np.array([0.1]), eta1=1.0, eta2=1.0, Lambda=10.0
    )
    assert lam2.tolist() == [0.0]  # projection onto [0, Λ]


def test_slater_slack_paths_agree():
    """m = 1 by policy iteration and the m > 1 LP (a duplicated constraint) give the same ξ."""
    cmdp = _random_cmdp(3)
    xi1, pi1 = slater_slack(cmdp)
    two = ConstrainedMDP(
        cmdp.mdp, np.concatenate([cmdp.C, cmdp.C]), np.concatenate([cmdp.b, cmdp.b])
    )
    xi2, pi2 = slater_slack(two)
    assert xi1 == pytest.approx(xi2, abs=1e-8)
    _, c1 = evaluate_cmdp(cmdp, pi1)
    assert float(np.asarray(cmdp.b)[0] - np.asarray(c1)[0]) == pytest.approx(xi1, abs=1e-9)
    lam = solve_cmdp(cmdp).duals
    Lam, lam_max = slater_dual_radius(
        gamma=cmdp.gamma, slack=xi1, reward_span=float(np.ptp(np.asarray(cmdp.mdp.R)))
    )
    assert float(np.sum(lam)) <= lam_max + 1e-9 and Lam == 2 * lam_max


def test_sample_npg_pd_reproducible_and_estimators_unbiased():
    cmdp = _random_cmdp(1, S=3, A=2)
    a = sample_npg_primal_dual(cmdp, iterations=30, rollouts=5, rng=4)
    b = sample_npg_primal_dual(cmdp, iterations=30, rollouts=5, rng=4)
    c = sample_npg_primal_dual(cmdp, iterations=30, rollouts=5, rng=5)
    np.testing.assert_array_equal(a.policy, b.policy)
    np.testing.assert_array_equal(a.trace["avg_gap"], b.trace["avg_gap"])
    assert not np.array_equal(a.policy, c.policy)
    # geometric-horizon Monte Carlo: E[Q̂] = Q, E[d̂] = d (CLT check with the sample s.d.)
    P, R = np.asarray(cmdp.mdp.P), np.asarray(cmdp.mdp.R)
    pi = np.array([[0.3, 0.7], [0.6, 0.4], [0.5, 0.5]])
    gen = np.random.default_rng(0)
    reps = np.stack([_mc_q(P, R[None], pi, 0.8, 50, gen)[0] for _ in range(80)])
    Q = np.asarray(q_function(cmdp.mdp, pi))
    assert np.all(np.abs(reps.mean(0) - Q) <= 4.5 * reps.std(0) / math.sqrt(80))
    mu = np.full(3, 1 / 3)
    dr = np.stack([_mc_occupancy(P, pi, mu, 0.8, 400, gen) for _ in range(80)])
    d = np.asarray(occupancy_measure(cmdp.mdp, pi))
    assert np.all(np.abs(dr.mean(0) - d) <= 4.5 * dr.std(0) / math.sqrt(80) + 1e-12)


# --------------------------------------------------------- general utilities
def test_general_utility_pd_with_linear_utility_is_the_cmdp_method():
    """Linear F = ⟨r, d⟩, G = ⟨c, d⟩ ≤ (1−γ)b: identical iterates to the Lagrangian policy gradient on
    the CMDP with steps scaled by (1−γ) (value units); and it approaches the LP optimum."""
    cmdp = _random_cmdp(2, S=4, A=2)
    g = cmdp.gamma
    R, C, b = np.asarray(cmdp.mdp.R), np.asarray(cmdp.C), np.asarray(cmdp.b)
    gu = general_utility_primal_dual(
        cmdp.mdp,
        linear_utility(R),
        [(linear_utility(C[0]), (1 - g) * b[0])],
        iterations=300,
        eta_theta=10.0,
        eta_mu=10.0,
        Lambda=20.0,
    )
    lp = lagrangian_policy_gradient(
        cmdp, iterations=300, eta_theta=10.0 * (1 - g), eta_lambda=10.0 * (1 - g), Lambda=20.0
    )
    np.testing.assert_allclose(gu.theta, lp.theta, atol=1e-10)
    np.testing.assert_allclose(gu.duals, lp.duals, atol=1e-12)
    np.testing.assert_allclose(gu.trace["gap"] / (1 - g), lp.trace["gap"], atol=1e-10)
    assert gu.reference == pytest.approx((1 - g) * solve_cmdp(cmdp).value, abs=1e-7)


def _entropy_problem(seed: int = 0, beta: float = 0.1):
    rng = np.random.default_rng(seed)
    S, A = 4, 3
    mdp = FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), 0.8)
    R = np.asarray(mdp.R)
    H = entropy_utility(S, A)
    lin = linear_utility(R)
    F = OccupancyFunction(
        "reward+entropy",
        "concave",
        lambda d: lin.expression(d) + beta * H.expression(d),
        lambda d: lin.value(d) + beta * H.value(d),
        lambda d: R + beta * H.gradient(d),
        (S, A),
    )
    C = rng.random((S, A))
    G = linear_utility(C)
    free = solve_general_utility(mdp, F)
    cmin = -solve_general_utility(mdp, linear_utility(-C)).value
    return mdp, F, G, 0.5 * (G.value(free.occupancy) + cmin)


def test_general_utility_pd_reaches_the_convex_program_optimum():
    """Entropy-regularised utility (strictly concave): exact PD (δ = 0) converges to solve_general_utility."""
    mdp, F, G, b = _entropy_problem()
    sol = solve_general_utility(mdp, F, [(G, b)])
    res = general_utility_primal_dual(
        mdp,
        F,
        [(G, b)],
        iterations=3000,
        eta_theta=10.0,
        eta_mu=0.3,
        Lambda=10.0,
        reference=sol.value,
    )
    assert abs(res.trace["gap"][-1]) < 1e-4
    assert res.trace["violation"][-1] < 1e-4
    assert res.duals[0] == pytest.approx(sol.duals[0], abs=1e-2)
    assert res.trace["fosp"][-1] < 1e-6


def test_fosp_residual_scales_like_t_to_the_minus_two_thirds():
    """With δ ∝ T^{-1/3} the residual at θ_T is the regularisation bias (δ μ_δ)², slope → −2/3 once δ is
    small against the constraint's sensitivity to μ (SEEDS P01: −2/3 ± 0.1)."""
    mdp, F, G, b = _entropy_problem()
    Ts = [200, 800, 3200]
    out = []
    for T in Ts:
        et, em, de = fosp_schedule(T, eta_theta=10.0, eta_mu=1.0, delta_scale=0.05)
        r = general_utility_primal_dual(
            mdp,
            F,
            [(G, b)],
            iterations=T,
            eta_theta=et,
            eta_mu=em,
            Lambda=10.0,
            delta=de,
            reference=0.0,
        )
        out.append(r.trace["fosp"][-1])
    slope = np.polyfit(np.log(Ts), np.log(out), 1)[0]
    assert abs(slope - (-2 / 3)) <= 0.1


def test_general_utility_pd_sample_based_is_reproducible_and_improves():
    mdp, F, G, b = _entropy_problem()
    kw = dict(iterations=40, eta_theta=5.0, eta_mu=0.3, Lambda=10.0, rollouts=4, reference=0.0)
    a = general_utility_primal_dual(mdp, F, [(G, b)], rng=1, **kw)
    c = general_utility_primal_dual(mdp, F, [(G, b)], rng=1, **kw)
    np.testing.assert_array_equal(a.theta, c.theta)
    assert a.trace["objective"][-1] > a.trace["objective"][0]


def test_fosp_residual_reference():
    assert (
        fosp_residual([3.0, 4.0], [0.0], [-1.0], eta_mu=1.0, Lambda=5.0) == 25.0
    )  # dual already stationary
    assert (
        fosp_residual([0.0], [4.0], [2.0], eta_mu=1.0, Lambda=5.0) == 1.0
    )  # projection clips at Λ


# -------------------------------------------------------------------- two-stage
@settings(max_examples=8, deadline=None)
@given(constrained_mdps(max_states=4, max_actions=3, max_constraints=1))
def test_two_stage_is_dominated_by_the_lp(cmdp):
    """For every KL weight the two-stage policy is a feasible point of the CMDP with b' = its own costs,
    so its value cannot exceed the LP optimum there (the heuristic traces a sub-front)."""
    for w in (0.05, 0.5, 5.0):
        res = two_stage_constrained_ac(cmdp, weights=[w], tau=0.1)
        lp = solve_cmdp(ConstrainedMDP(cmdp.mdp, cmdp.C, res.costs + 1e-9))
        assert res.value <= lp.value + 1e-7


def test_two_stage_weights_interpolate():
    """Small weight → close to the unconstrained optimum's value; large weight → cost near the auxiliary
    policy's; the calibrated weight makes the constraint hold and is below the LP optimum."""
    cmdp = _random_cmdp(4, S=4, A=3)
    small = two_stage_constrained_ac(cmdp, weights=[1e-3], tau=0.1)
    from rltheory.mdp import policy_iteration

    v_free = float(np.mean(policy_iteration(cmdp.mdp).V))
    assert small.value == pytest.approx(v_free, abs=0.05)
    big = two_stage_constrained_ac(cmdp, weights=[1e3], tau=0.1)
    _, c_aux = evaluate_cmdp(cmdp, big.auxiliary[0])
    assert float(big.costs[0]) == pytest.approx(float(np.asarray(c_aux)[0]), abs=1e-2)
    cal = two_stage_calibrated(cmdp, tau=0.1)
    assert float(cal.costs[0]) <= float(np.asarray(cmdp.b)[0]) + 1e-12
    assert cal.value <= solve_cmdp(cmdp).value + 1e-9


@pytest.mark.parametrize(
    "kw, msg",
    [
        (dict(bisections=0), r"bisections must be an integer >= 1; got 0"),
        (dict(bisections=-3), r"bisections must be an integer >= 1; got -3"),
        (dict(bisections=2.5), r"bisections must be an integer >= 1; got 2\.5"),
        (dict(bisections=True), r"bisections must be an integer >= 1; got True"),
        (dict(tau=0.0), r"tau must be a finite number > 0; got 0\.0"),
        (dict(w_max=math.inf), r"w_max must be a finite number > 0; got inf"),
        (dict(w_max=-1.0), r"w_max must be a finite number > 0; got -1\.0"),
    ],
)
def test_two_stage_calibrated_validates_before_any_solve(monkeypatch, kw, msg):
    """Bug found here: ``bisections`` was checked only when the bisection loop started, after
    the first (w_max) two-stage solve; every argument is now checked before any work."""
    import rltheory.algorithms.two_stage as con  # where two_stage_calibrated reads both names

    def no_solve(*args, **kwargs):
        raise AssertionError("two_stage_calibrated solved before validating its arguments")

    monkeypatch.setattr(con, "two_stage_constrained_ac", no_solve)
    monkeypatch.setattr(con, "soft_value_iteration", no_solve)
    with pytest.raises(ValueError, match=msg):
        two_stage_calibrated(_random_cmdp(4, S=4, A=3), **kw)


# ------------------------------------------------------------------ bounds
def test_bound_functions_reference_and_validation():
    eta1, eta2 = npg_pd_step_sizes(400, gamma=0.9, n_actions=4)
    assert eta1 == pytest.approx(2 * math.log(4)) and eta2 == pytest.approx(0.2 / 20)
    bd = npg_pd_bounds(
        [1, 4],
        gamma=0.5,
        eta1=1.0,
        eta2=0.5,
        Lambda=4.0,
        cost_deviation=1.0,
        n_actions=1,
        reward_span=0.0,
        cost_span=0.0,
    )
    # P_t = 0 here: gap = η2 G²/2, violation = (Λ²/(2η2 t) + η2 G²/2)/(Λ − Λ/2)
    np.testing.assert_allclose(bd.gap, [0.25, 0.25])
    np.testing.assert_allclose(bd.violation, [(16 / 1 + 0.25) / 2, (16 / 4 + 0.25) / 2])
    assert truncation_envelope([1], phi=0.5, c=2.0).tolist() == [0.5]
    assert fosp_rate([8.0], C=1.0)[0] == pytest.approx(0.25)
    assert fosp_schedule(8)[2] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="Lambda must exceed"):
        npg_pd_bounds(
            [1],
            gamma=0.5,
            eta1=1.0,
            eta2=1.0,
            Lambda=1.0,
            cost_deviation=1.0,
            n_actions=2,
            lam_star_l1=2.0,
        )
    with pytest.raises(ValueError, match="gamma must be"):
        npg_pd_step_sizes(10, gamma=1.0, n_actions=2)
    with pytest.raises(ValueError, match="slack must be"):
        slater_dual_radius(gamma=0.5, slack=0.0)
    with pytest.raises(ValueError, match="phi must lie"):
        truncation_envelope([1], phi=1.0)
    with pytest.raises(ValueError, match="t must be >= 1"):
        npg_pd_bounds(
            [0], gamma=0.5, eta1=1.0, eta2=1.0, Lambda=1.0, cost_deviation=1.0, n_actions=2
        )


# ------------------------------------------------------------------ validation
def test_validation_messages():
    cmdp = _random_cmdp(0, S=3, A=2)
    with pytest.raises(TypeError, match="expects a ConstrainedMDP"):
        npg_primal_dual(cmdp.mdp, iterations=3)
    with pytest.raises(ValueError, match="iterations must be an integer"):
        npg_primal_dual(cmdp, iterations=0)
    with pytest.raises(ValueError, match="eta1 must be a finite number > 0"):
        npg_pd_step(cmdp, np.full((3, 2), 0.5), np.zeros(1), eta1=-1.0, eta2=1.0, Lambda=1.0)
    with pytest.raises(ValueError, match=r"lam must be a finite non-negative vector"):
        npg_pd_step(cmdp, np.full((3, 2), 0.5), np.array([-1.0]), eta1=1.0, eta2=1.0, Lambda=1.0)
    avg = ConstrainedMDP(cmdp.mdp.replace(gamma=None), cmdp.C, cmdp.b)
    with pytest.raises(ValueError, match="discounted method"):
        npg_primal_dual(avg, iterations=3)
    infeasible = ConstrainedMDP(cmdp.mdp, cmdp.C, np.array([-1.0]))
    with pytest.raises(InvalidModelError, match="Slater's condition fails"):
        npg_primal_dual(infeasible, iterations=3, reference=0.0)
    with pytest.raises(ValueError, match="weights must be"):
        two_stage_constrained_ac(cmdp, weights=[1.0, 2.0])
    with pytest.raises(TypeError, match="rng must be"):
        sample_npg_primal_dual(cmdp, iterations=2, rollouts=1, rng="x")
    with pytest.raises(ValueError, match="needs rng"):
        general_utility_primal_dual(
            cmdp.mdp,
            linear_utility(cmdp.mdp.R),
            iterations=2,
            eta_theta=1.0,
            eta_mu=1.0,
            Lambda=1.0,
            rollouts=2,
            reference=0.0,
        )
    with pytest.raises(ValueError, match="delta must be"):
        general_utility_primal_dual(
            cmdp.mdp,
            linear_utility(cmdp.mdp.R),
            iterations=2,
            eta_theta=1.0,
            eta_mu=1.0,
            Lambda=1.0,
            delta=-1.0,
            reference=0.0,
        )
    with pytest.raises(TypeError, match="objective must be an OccupancyFunction"):
        general_utility_primal_dual(
            cmdp.mdp, np.zeros((3, 2)), iterations=2, eta_theta=1.0, eta_mu=1.0, Lambda=1.0
        )


# ------------------------------------------------- validation outside the drawn ranges
@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), True, "0.5"])
def test_general_utility_threshold_must_be_finite_number(threshold) -> None:
    # With `reference` given the LP (which checks thresholds) is skipped: before the fix a
    # nan threshold surfaced as "R must be finite", and inf / bool / str ran silently.
    mdp, F, G, _ = _entropy_problem()
    with pytest.raises(ValueError, match=r"constraints\[0\] threshold must be a finite number"):
        general_utility_primal_dual(
            mdp,
            F,
            [(G, threshold)],
            iterations=2,
            eta_theta=1.0,
            eta_mu=1.0,
            Lambda=1.0,
            reference=0.0,
        )


def test_general_utility_numpy_threshold_equals_float() -> None:
    mdp, F, G, b = _entropy_problem()
    kw = dict(iterations=3, eta_theta=1.0, eta_mu=1.0, Lambda=1.0, reference=0.0)
    a = general_utility_primal_dual(mdp, F, [(G, float(b))], **kw)
    c = general_utility_primal_dual(mdp, F, [(G, np.float64(b))], **kw)
    np.testing.assert_array_equal(a.theta, c.theta)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (
            ([0.0], [1.0, 2.0], [0.0]),
            r"mu and G_minus_b must be vectors of one length m; got shapes \(2,\) and \(1,\)",
        ),
        (([0.0], [[1.0]], [[0.0]]), r"mu and G_minus_b must be vectors"),
        (([0.0], [float("nan")], [0.0]), r"mu must be finite; mu\.flat\[0\] = nan"),
        (
            ([0.0, float("inf")], [0.0], [0.0]),
            r"grad_theta must be finite; grad_theta\.flat\[1\] = inf",
        ),
        (([0.0], [0.0], [float("nan")]), r"G_minus_b must be finite"),
    ],
)
def test_fosp_residual_rejects_mismatched_or_nonfinite(args, match) -> None:
    # Before the fix mu of length 2 against G_minus_b of length 1 broadcast to 1.0 and nan returned nan.
    with pytest.raises(ValueError, match=match):
        fosp_residual(*args, eta_mu=1.0, Lambda=1.0)


def test_two_stage_rejects_bool_weights() -> None:
    cmdp = _random_cmdp(0, S=2, A=2)
    with pytest.raises(ValueError, match="weights must be 1 finite non-negative numbers"):
        two_stage_constrained_ac(cmdp, weights=True)
    with pytest.raises(ValueError, match="weights must be 1 finite non-negative numbers"):
        two_stage_constrained_ac(cmdp, weights=np.array([True]))


def test_two_stage_default_tolerance_stays_above_the_soft_round_off_floor():
    # two_stage_calibrated's bisection starts at w_max = 1e3: on the full two-stage-vs-pd preset's
    # 7×7 hazard grid (γ = 0.9) the stage-2 reward r + Σ w_i log π_i is then of size ~1e4, and the
    # fixed default tol = 1e-10 sat below soft VI's certified round-off floor (6.3e-10): the solve
    # ended with a ConvergenceWarning (certificate 1.24e-9). The default is now max(1e-10, the
    # smallest reachable target); an explicit tol is still honoured (and still warns).
    import warnings

    from rltheory.errors import ConvergenceWarning
    from rltheory.experiments.two_stage_vs_pd import Config, hazard_gridworld

    cfg = Config.full()
    cmdp = hazard_gridworld(cfg.size, cfg.slip, cfg.gamma, cfg.threshold)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = two_stage_constrained_ac(cmdp, weights=[1e3], tau=cfg.tau)
    assert np.isfinite(res.value) and np.all(np.isfinite(res.costs))
    with pytest.warns(ConvergenceWarning, match="round-off floor"):
        two_stage_constrained_ac(cmdp, weights=[1e3], tau=cfg.tau, tol=1e-10)
    with pytest.raises(ValueError, match="tol must be a finite number > 0"):
        two_stage_constrained_ac(cmdp, weights=[1e3], tau=cfg.tau, tol=0.0)
