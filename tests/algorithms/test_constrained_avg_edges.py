"""Constrained and average-reward algorithms and bounds outside the ranges the main tests draw from:
cost scales far from 1, extreme but finite bound arguments, located errors."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms.average_reward import (
    SmoothActionMDP,
    differential_td,
    dpg_gradient,
    mac_sample_terms,
    mlmc_combine,
    off_policy_dpg,
)
from rltheory.algorithms.constrained import (
    general_utility_primal_dual,
    lagrangian_policy_gradient,
    npg_pd_step,
    npg_primal_dual,
    sample_npg_primal_dual,
    slater_slack,
    two_stage_calibrated,
    two_stage_constrained_ac,
)
from rltheory.algorithms.policy_gradient import _softmax_policy, npg_step
from rltheory.bounds.average_reward import mac_rate, markov_average_bias
from rltheory.bounds.constrained import (
    fosp_schedule,
    npg_pd_bounds,
    npg_pd_step_sizes,
    truncation_envelope,
)
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP, policy_iteration
from rltheory.mdp.constrained import ConstrainedMDP, evaluate_cmdp, solve_cmdp
from rltheory.mdp.utility import linear_utility


def _slater_model(seed: int) -> tuple[FiniteMDP, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    S, A = 3, 2
    mdp = FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), 0.9)
    return mdp, rng.random((1, S, A)), np.array([4.5])


# ------------------------------------------------------------------ slater_slack at small cost scales
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("scale", [1e-12, 1e-9])
def test_slater_slack_lp_is_scale_invariant(seed, scale):
    """ξ(ρC, ρb) = ρ ξ(C, b) exactly (the slack is positively homogeneous). A constraint stated twice
    takes the m > 1 LP path; its ξ must equal the m = 1 policy-iteration value (exact at any scale).
    Before the fix the LP ran at the costs' own scale with HiGHS's absolute tolerances and 1e-12
    entry drop: at ρ = 1e-12 it returned ξ/(ρ ξ_1) = 5.7, 2.3, 4.3 (seeds 1-3) and, for seed 0
    (ξ_1 = -1.73, Slater fails), a positive ξ: Slater's condition "held" for a model where it fails."""
    mdp, C, b = _slater_model(seed)
    xi1, _ = slater_slack(ConstrainedMDP(mdp, C, b))  # m = 1: policy iteration
    xi1_scaled, _ = slater_slack(ConstrainedMDP(mdp, scale * C, scale * b))
    assert xi1_scaled == pytest.approx(scale * xi1, rel=1e-12)
    twice = ConstrainedMDP(mdp, np.concatenate([scale * C, scale * C]), np.concatenate([scale * b, scale * b]))
    xi2, pi2 = slater_slack(twice)
    assert xi2 == pytest.approx(scale * xi1, rel=1e-9)
    assert (xi2 > 0) == (xi1 > 0)
    # the returned policy attains the slack: min_i (b_i − V_{c_i}^π) = ξ
    _, costs = evaluate_cmdp(twice, pi2)
    assert float(np.min(scale * b[0] - np.asarray(costs))) == pytest.approx(xi2, rel=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_slater_slack_with_constraints_of_different_scales(seed):
    """Constraint 2 = 1e-12 × constraint 1: min(x, 1e-12 x) is x for x < 0 and 1e-12 x for x > 0, so
    ξ = ξ_1 if ξ_1 < 0 else 1e-12 ξ_1 (both monotone in x, maximised by the same policy)."""
    mdp, C, b = _slater_model(seed)
    xi1, _ = slater_slack(ConstrainedMDP(mdp, C, b))
    mixed = ConstrainedMDP(mdp, np.concatenate([C, 1e-12 * C]), np.concatenate([b, 1e-12 * b]))
    xi, pi = slater_slack(mixed)
    expected = xi1 if xi1 < 0 else 1e-12 * xi1
    assert xi == pytest.approx(expected, rel=1e-9)
    _, costs = evaluate_cmdp(mixed, pi)
    assert float(np.min(np.asarray(mixed.b) - np.asarray(costs))) == pytest.approx(expected, rel=1e-9)


# ------------------------------------------------------------------ npg_pd_bounds at extreme finite arguments
def _npg_pd_bounds_exact(t, *, gamma, eta1, eta2, Lambda, G, D0, rspan, cspan, lam_star):
    """The two bounds of npg_pd_bounds' docstring in exact rational arithmetic (D0 as a given float)."""
    F = Fraction
    g, e1, e2, Lam, t = F(gamma), F(eta1), F(eta2), F(Lambda), F(t)
    G1, G2, c = sum(F(x) for x in G), sum(F(x) ** 2 for x in G), max(F(x) for x in cspan)
    P = F(D0) / (e1 * t) + F(rspan) / ((1 - g) ** 2 * t) + e2 * G1 * c / (1 - g) ** 2
    return P + e2 * G2 / 2, (P + Lam**2 / (2 * e2 * t) + e2 * G2 / 2) / (Lam - F(lam_star))


@pytest.mark.parametrize(
    "kw",
    [
        # ‖G‖₁ = 2e308 overflowed and met span(c) = 0: e2·inf·0 = NaN (true gap ≈ 1e296; the true
        # violation ≈ Λ/(η_2 t) = 4e320 at t = 1 is beyond the float range: inf there)
        dict(eta2=1e-320, G=[1e308, 1e308], cspan=[0.0, 0.0], Lambda=4.0),
        # Λ**2 = 1e400 raised OverflowError: (34, 'Numerical result out of range') (true violation ≈ 1e200)
        dict(eta2=1.0, G=[1.0], cspan=[1.0], Lambda=1e200),
        # ‖G‖₂² = 1.09e400 overflowed: gap inf (true ≈ 2.7e149)
        dict(eta2=1e-250, G=[1e200, 3e199], cspan=[1.0, 2.0], Lambda=1e-100),
        # ordinary magnitudes: the rewritten products agree with the rational value
        dict(eta2=0.1, G=[2.0, 0.5, 1.0], cspan=[1.0, 0.3, 0.0], Lambda=8.0),
    ],
)
def test_npg_pd_bounds_finite_when_the_bound_is(kw):
    """The bound equals its rational value to 1e-12 whenever that value is a float, and is inf (never NaN,
    never an exception) only where it exceeds the float range."""
    t = np.array([1.0, 7.0, 1e6])
    out = npg_pd_bounds(t, gamma=0.9, eta1=2.0, eta2=kw["eta2"], Lambda=kw["Lambda"], cost_deviation=kw["G"],
                        n_actions=3, reward_span=1.5, cost_span=kw["cspan"])
    for k, tk in enumerate(t):
        gap, viol = _npg_pd_bounds_exact(tk, gamma=0.9, eta1=2.0, eta2=kw["eta2"], Lambda=kw["Lambda"], G=kw["G"],
                                         D0=math.log(3), rspan=1.5, cspan=kw["cspan"], lam_star=kw["Lambda"] / 2)
        for got, exact in ((out.gap[k], gap), (out.violation[k], viol)):
            if exact > Fraction(np.finfo(float).max):
                assert got == math.inf
            else:
                assert not math.isnan(got)
                assert got == pytest.approx(float(exact), rel=1e-12)


# ------------------------------------------------------------------ mac_rate arguments
@pytest.mark.parametrize("C", [1.0, 0.0])
def test_mac_rate_rejects_infinite_tau_mix(C):
    """τ_mix = inf passed the ``>= 1`` check: the rate was inf, and NaN (0·inf) with C = 0."""
    with pytest.raises(ValueError, match=r"tau_mix must be a finite number >= 1; got inf"):
        mac_rate([4.0], tau_mix=math.inf, T_max=4, C=C)
    with pytest.raises(ValueError, match=r"tau_mix must be >= 1; got 0\.5"):
        mac_rate([4.0], tau_mix=0.5)


def test_mac_rate_locates_bad_times():
    """T = 10**400 raised numpy's bare OverflowError; T entries are now checked like every bound's times."""
    with pytest.raises(ValueError, match=r"T must be >= 1 and finite as a float; got an integer beyond the float range"):
        mac_rate(10**400)
    with pytest.raises(ValueError, match=r"T must be >= 1; T\[1\] = 0\.5"):
        mac_rate([4, 0.5])
    # C √τ log₂(T_max) / √T = 0.5 · 2 · 2 / 2
    assert mac_rate(np.int64(4), tau_mix=np.float32(4.0), T_max=np.int64(4), C=0.5) == 1.0


# ------------------------------------------------------------------ step-size schedules at huge horizons
@pytest.mark.parametrize("k", [400, 1000, 5000])
def test_schedules_at_horizons_beyond_the_float_range(k):
    """T = 10**k is a valid horizon (an integer >= 1) and η_2 = 2(1−γ)/√T, δ = T^{-1/3} are floats (or 0 where
    they underflow); math.sqrt(T) and float(T) raised OverflowError before."""
    T = 10**k
    _, eta2 = npg_pd_step_sizes(T, gamma=0.5, n_actions=2)
    assert eta2 == pytest.approx(10.0 ** (-k / 2), rel=1e-13, abs=0.0) if k / 2 < 323 else eta2 == 0.0
    delta = fosp_schedule(T, delta_scale=2.0)[2]
    assert delta == pytest.approx(2.0 * 10.0 ** (-k / 3), rel=1e-13) if k / 3 < 323 else delta == 0.0
    # the large-T path continues the ordinary one: T = 3 · 2^1000 ± 1 against T / 2^1000 scaled exactly
    for T in (3 * 2**1000 - 1, 3 * 2**1000 + 1):
        assert npg_pd_step_sizes(T, gamma=0.5, n_actions=2)[1] == pytest.approx(2**-500 / math.sqrt(3), rel=1e-15)


# ------------------------------------------------------------------ markov_average_bias arguments
@pytest.mark.parametrize(
    "N, match",
    [
        # before: numpy's UFuncTypeError ("ufunc 'less' did not contain a loop ...")
        ("a", r"N must be integers in \[1, len\(tv\)=3\]; got 'a'"),
        # before: accepted as N = 1
        ([True], r"N must be integers in \[1, len\(tv\)=3\]; got \[True\]"),
        # the first bad entry is named
        ([1, 2.5], r"got \[1, 2\.5\] \(N\[1\] = 2\.5\)"),
        ([[1, 4]], r"\(N\[0, 1\] = 4\)"),
    ],
)
def test_markov_average_bias_locates_bad_lengths(N, match):
    with pytest.raises(ValueError, match=match):
        markov_average_bias(N, [1.0, 0.5, 0.25], 1.0)


def test_markov_average_bias_of_no_lengths_is_empty():
    """N = [] raised numpy's 'zero-size array to reduction operation maximum'; like every bound taking an
    array of times it now returns an empty array."""
    out = markov_average_bias([], [1.0, 0.5, 0.25], 1.0)
    assert out.shape == (0,)
    # (span/N) Σ_{k<N} d(k) = (2/2)(1 + 0.5)
    assert markov_average_bias([2], [1.0, 0.5, 0.25], 2.0).tolist() == [1.5]


# ------------------------------------------------------------------ differential_td: located policy errors
def _avg_mdp(seed: int = 0, S: int = 3, A: int = 2) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    return FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), None)


@pytest.mark.parametrize(
    "pi, match",
    [
        # before, every case read only "pi must be a stochastic policy of shape (S, A) = (3, 2)"
        (np.array([[0.5, 0.5], [1.5, -0.5], [0.5, 0.5]]), r"most negative entry pi\(s=1, a=1\) = -0\.5$"),
        (np.array([[0.5, 0.5], [0.5, 0.5], [0.7, 0.7]]), r"each pi\[s, :\] must sum to 1, row s=2 sums to 1\.4"),
        (np.full((2, 2), 0.5), r"got shape \(2, 2\)$"),
        # a bool array of the right shape was refused for its "shape"
        (np.ones((3, 2), dtype=bool), r"got an array of dtype bool$"),
    ],
)
def test_differential_td_locates_bad_policies(pi, match):
    with pytest.raises(ValueError, match=r"pi must be a stochastic policy of shape \(S, A\) = \(3, 2\); " + match):
        differential_td(_avg_mdp(), pi, steps=5, rng=0)


# ------------------------------------------------------------------ npg_pd_step: located dual errors
def _two_constraint_bandit() -> ConstrainedMDP:
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    return ConstrainedMDP(mdp, np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([0.5, 0.75]))


@pytest.mark.parametrize(
    "lam, match",
    [
        # before: accepted and read as λ = (1, 0)
        (np.array([True, False]), r"got an array of dtype bool$"),
        # before: "... got array([0., nan])" without the index
        (np.array([0.0, np.nan]), r"lam\[1\] = nan$"),
        (np.array([0.5, -0.25]), r"lam\[1\] = -0\.25$"),
        (np.array([0.5]), r"got shape \(1,\)$"),
    ],
)
def test_npg_pd_step_locates_bad_duals(lam, match):
    with pytest.raises(ValueError, match=r"lam must be a finite non-negative vector of shape \(m,\) = \(2,\); " + match):
        npg_pd_step(_two_constraint_bandit(), np.full((1, 2), 0.5), lam, eta1=1.0, eta2=1.0, Lambda=10.0)


def test_npg_pd_step_two_constraints_reference():
    """γ = 0, one state, π = (1/2, 1/2): V_c = (1/2, 1/2); λ' = Π_[0, Λ](λ + η_2 (V_c − b)) =
    clip((1, 0.1) + (0, −0.25)) = (1, 0); integer duals are numbers."""
    _, lam = npg_pd_step(_two_constraint_bandit(), np.full((1, 2), 0.5), [1, 0.1], eta1=1.0, eta2=1.0, Lambda=10.0)
    assert lam.tolist() == [1.0, 0.0]


# ------------------------------------------------------------------ Slater failure names the constraint
_BANDIT = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)


@pytest.mark.parametrize(
    "C, b, match",
    [
        # γ = 1/2, one state: V_c = 2 Σ_a π(a) c(a). Constraint 1 costs 1 for both actions: min V_c1 = 2 > 1.5
        ([[[0.0, 1.0]], [[1.0, 1.0]]], [1.0, 1.5],
         r"\(max_pi min_i b_i - V_ci = -0\.5 <= 0\): constraint 1 is infeasible: min_pi V_c1\(mu\) = 2 >= b\[1\] = 1\.5"),
        # b = min V_c = 0: feasible but tight (no strictly feasible policy)
        ([[[0.0, 1.0]]], [0.0], r"= 0 <= 0\): constraint 0 is tight: min_pi V_c0\(mu\) = 0 >= b\[0\] = 0;"),
        # each alone holds strictly, jointly π(1) < 1/4 and π(0) < 1/4 is impossible
        ([[[0.0, 1.0]], [[1.0, 0.0]]], [0.5, 0.5], r"each constraint holds strictly alone, but no policy satisfies all"),
    ],
)
def test_slater_failure_names_the_constraint(C, b, match):
    """Before: only 'Slater's condition fails (max_pi min_i b_i - V_ci = -0.5 <= 0); give Lambda explicitly'."""
    cmdp = ConstrainedMDP(_BANDIT, np.array(C), np.array(b))
    with pytest.raises(InvalidModelError, match=match):
        npg_primal_dual(cmdp, iterations=3)
    with pytest.raises(InvalidModelError, match=r"give Lambda explicitly"):
        sample_npg_primal_dual(cmdp, iterations=3, rollouts=1, rng=0)


# ------------------------------------------------------------------ off-policy DPG arguments
def _smooth2() -> SmoothActionMDP:
    return SmoothActionMDP(np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2))


def test_off_policy_dpg_accepts_numpy_noise():
    """noise=np.float32(0.5) was refused ('noise must be a finite number >= 0; got np.float32(0.5)')."""
    a, tr_a = off_policy_dpg(_smooth2(), steps=50, rng=3, noise=0.5, record_every=50)
    b, tr_b = off_policy_dpg(_smooth2(), steps=50, rng=3, noise=np.float32(0.5), record_every=50)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(tr_a["gain"], tr_b["gain"])
    with pytest.raises(ValueError, match=r"noise must be a finite number >= 0; got True"):
        off_policy_dpg(_smooth2(), steps=5, rng=0, noise=True)


def test_dpg_non_finite_theta_is_located():
    """A NaN θ ran silently: off_policy_dpg returned θ = [nan, ...] and dpg_gradient (nan, nan), nan."""
    with pytest.raises(InvalidModelError, match=r"theta0 must be finite; theta0\(s=0\) = nan"):
        off_policy_dpg(_smooth2(), steps=5, rng=0, theta0=[np.nan, 0.0])
    with pytest.raises(InvalidModelError, match=r"theta must be finite; theta\(s=1\) = inf"):
        dpg_gradient(_smooth2(), [0.0, np.inf])


def test_smooth_action_mdp_needs_a_state():
    """S = 0 (empty L, K, r0, r1) was accepted as a model."""
    with pytest.raises(InvalidModelError, match=r"with S >= 1; got \(0, 0\)"):
        SmoothActionMDP(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros(0), np.zeros(0))


# ------------------------------------------------------------------ mac_sample_terms arrays
@pytest.mark.parametrize(
    "kw, err, match",
    [
        # before: numpy's "matmul: Input operand 1 has a mismatch in its core dimension 0"
        (dict(omega=np.zeros(2)), ValueError, r"omega must have shape \(d,\) = \(3,\) \(one weight per feature\); got \(2,\)"),
        # before: NaN terms returned
        (dict(omega=np.array([0.0, np.nan, 0.0])), InvalidModelError, r"omega must be finite; omega\(i=1\) = nan"),
        (dict(pi_s=np.array([0.5, np.nan])), InvalidModelError, r"pi_s must be finite; pi_s\(a=1\) = nan"),
        (dict(Phi=np.array([[np.inf, 0, 0], [0, 1, 0], [0, 0, 1]])), InvalidModelError, r"Phi must be finite; Phi\(s=0, i=0\) = inf"),
        # before: a (1, A) row was used as pi(.|s)
        (dict(pi_s=np.array([[0.5, 0.5]])), ValueError, r"pi_s must have shape \(A,\) with A >= 1 \(the policy at s\); got \(1, 2\)"),
        (dict(pi_s=np.array([0.5, 0.7])), InvalidModelError, r"each pi_s must sum to 1"),
    ],
)
def test_mac_sample_terms_checks_its_arrays(kw, err, match):
    args = dict(Phi=np.eye(3), pi_s=np.array([0.5, 0.5]), s=0, a=1, r=1.0, s2=2, omega=np.zeros(3), eta=0.0)
    args.update(kw)
    with pytest.raises(err, match=match):
        mac_sample_terms(**args)


def test_mac_sample_terms_reference():
    """δ = r − η + φ(s')ᵀω − φ(s)ᵀω = 1 − 0.25 + 3 − 1 = 2.75; actor row s: δ(e_a − π(·|s))."""
    f, h, g = mac_sample_terms(np.eye(3), np.array([0.25, 0.75]), 0, 1, 1.0, 2, np.array([1.0, 2.0, 3.0]), 0.25)
    assert f == 0.75
    assert h.tolist() == [2.75, 0.0, 0.0]
    assert g.tolist() == [[-2.75 * 0.25, 2.75 * 0.25], [0.0, 0.0], [0.0, 0.0]]


# ------------------------------------------------------------------ CMDPs with no constraint (m = 0)
def test_primal_dual_methods_accept_a_cmdp_without_constraints():
    """m = 0 is a valid ConstrainedMDP (solve_cmdp solves it as the plain MDP LP). Before, slater_slack and
    NPG-PD raised numpy's 'zero-size array to reduction operation minimum' and the Lagrangian policy gradient
    '... maximum'. With no constraint ξ = +inf, there is no multiplier, NPG-PD is NPG on r (same iterates as
    npg_step with η_1 = 2 log|A|), and every violation is 0."""
    rng = np.random.default_rng(0)
    S, A = 3, 2
    mdp = FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), 0.7)
    free = ConstrainedMDP(mdp, np.zeros((0, S, A)), np.zeros(0))
    xi, pi0 = slater_slack(free)
    assert xi == math.inf and np.array_equal(pi0, np.full((S, A), 0.5))
    res = npg_primal_dual(free, iterations=30)
    pi = np.full((S, A), 0.5)
    for _ in range(30):
        pi = np.asarray(npg_step(mdp, pi, eta=2 * math.log(2)))
    np.testing.assert_allclose(res.policy, pi, rtol=0, atol=1e-14)
    assert res.duals.shape == (0,) and np.all(res.trace["violation"] == 0) and np.all(res.trace["avg_violation"] == 0)
    assert res.reference == pytest.approx(float(np.asarray(policy_iteration(mdp).V) @ np.full(S, 1 / S)), abs=1e-9)
    assert np.all(sample_npg_primal_dual(free, iterations=3, rollouts=2, rng=0).trace["violation"] == 0)
    lpg = lagrangian_policy_gradient(free, iterations=3, eta_theta=1.0, eta_lambda=1.0, Lambda=1.0)
    assert np.all(lpg.trace["violation"] == 0)


def test_truncation_envelope_reads_phi_like_every_scalar_argument():
    """phi = np.array(0.5) (a 0-d array, read as a number by every other bound argument) was refused with
    'phi must lie in (0, 1); got array(0.5)'. c φ^{2κ} = 1, 1/4, 1/16; bools stay refused."""
    assert truncation_envelope([0, 1, 2], phi=np.array(0.5)).tolist() == [1.0, 0.25, 0.0625]
    assert truncation_envelope([1], phi=np.float32(0.5)).tolist() == [0.25]
    with pytest.raises(ValueError, match=r"phi must lie in \(0, 1\); got array\(True\)"):
        truncation_envelope([1], phi=np.array(True))


# ------------------------------------------------------------------ two-stage AC when π_i underflows
def test_two_stage_uses_the_exact_log_of_underflowing_auxiliary_policies():
    """γ = 0, one state, c = (0, 1000), τ = 0.1: π_1 ∝ exp(−c/τ) = (1, e^{−10⁴}), whose second entry underflows
    to 0. Stage 2 with r = (0, 1000), w = 0.1 (W = w): π ∝ π_1 exp(r/W) = (1, e^{−10⁴ + 10⁴}) = (1/2, 1/2), so
    V_r = V_c = 500. Before, np.log(π_1) = −inf entered the stage-2 reward: InvalidModelError 'R must be finite;
    R(s=0, a=1) = -inf' (and a divide-by-zero RuntimeWarning)."""
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1000.0]]), gamma=0.0)
    cmdp = ConstrainedMDP(mdp, np.array([[[0.0, 1000.0]]]), np.array([600.0]))
    res = two_stage_constrained_ac(cmdp, weights=[0.1], tau=0.1)
    assert res.auxiliary[0, 0, 1] == 0.0  # π_1(1) = e^{-10000} underflows
    np.testing.assert_allclose(res.policy, [[0.5, 0.5]], rtol=0, atol=1e-12)
    assert res.value == pytest.approx(500.0, rel=1e-12)
    assert float(res.costs[0]) == pytest.approx(500.0, rel=1e-12)


# ------------------------------------------------------------------ NPG-PD with underflowing probabilities
def _bounds_at_every_iterate(cmdp: ConstrainedMDP, res, T: int):
    """npg_pd_bounds for the default run (η from npg_pd_step_sizes, Λ from Slater, ‖λ*‖₁ from the LP duals)."""
    R, C, b, g = np.asarray(cmdp.mdp.R), np.asarray(cmdp.C), np.asarray(cmdp.b), cmdp.gamma
    eta1, eta2 = npg_pd_step_sizes(T, gamma=g, n_actions=cmdp.A)
    G = np.maximum(np.abs(b - C.min(axis=(1, 2)) / (1 - g)), np.abs(C.max(axis=(1, 2)) / (1 - g) - b))
    lam_star = min(float(np.sum(solve_cmdp(cmdp).duals)), res.Lambda / 2)
    return npg_pd_bounds(res.trace.iteration, gamma=g, eta1=eta1, eta2=eta2, Lambda=res.Lambda, cost_deviation=G,
                         n_actions=cmdp.A, reward_span=float(np.ptp(R)), cost_span=np.ptp(C, axis=(1, 2)),
                         lam_star_l1=lam_star)


def test_npg_pd_recovers_an_action_whose_probability_underflowed():
    """One state, γ = 0, rewards (231, −215, 382), costs (311, −92, 328) ≤ −87 (Slater: ξ = 5, λ* = 1.42).
    The first step (λ_0 = 0) multiplies π(1) by exp(2 log 3 · (−215 − 132.7)) = e^{−764} = 0 in floating
    point (relative to the best action); the multiplicative update π' ∝ π exp(·) then kept π(1) = 0 for ever
    although λ ≥ 70 makes action 1 (the only cheap one) the Lagrangian optimum: the run sat on action 0
    with averaged violation above the theorem's bound from t = 6 on (379 > 361; 396 > 291 at T = 60). On the logits (Ding et al. 2020, Algorithm 1) the bounds hold at every
    iterate and the last policy moves to action 1."""
    mdp = FiniteMDP(np.ones((1, 3, 1)), np.array([[231.0, -215.0, 382.0]]), gamma=0.0)
    cmdp = ConstrainedMDP(mdp, np.array([[[311.0, -92.0, 328.0]]]), np.array([-87.0]))
    T = 60
    res = npg_primal_dual(cmdp, iterations=T)
    bd = _bounds_at_every_iterate(cmdp, res, T)
    tol = 1e-9 * (1 + abs(res.reference))
    assert np.all(res.trace["avg_gap"] <= bd.gap + tol)
    assert np.all(res.trace["avg_violation"] <= bd.violation + tol)
    assert res.policy[0, 1] > 0.5
    np.testing.assert_allclose(res.policy, np.asarray(_softmax_policy(res.theta)), rtol=0, atol=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_npg_pd_driver_step_is_npg_pd_step(seed):
    """The driver's logit recursion and npg_pd_step's π' ∝ π exp(η_1 A_L/(1−γ)) are the same map: two
    iterations of the driver equal two npg_pd_steps (with λ from the same rule), m = 2 constraints."""
    rng = np.random.default_rng(seed)
    S, A = 3, 3
    mdp = FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), 0.8)
    C = rng.random((2, S, A))
    cmdp = ConstrainedMDP(mdp, C, np.array([3.0, 3.0]))
    res = npg_primal_dual(cmdp, iterations=2, eta1=1.3, eta2=0.7, Lambda=5.0, reference=0.0)
    pi, lam = np.full((S, A), 1.0 / A), np.zeros(2)
    for _ in range(2):
        pi, lam = npg_pd_step(cmdp, pi, lam, eta1=1.3, eta2=0.7, Lambda=5.0)
    np.testing.assert_allclose(res.policy, pi, rtol=0, atol=1e-14)
    np.testing.assert_allclose(res.duals, lam, rtol=0, atol=1e-14)


# ------------------------------------------------------------------ MLMC at large levels
def test_mlmc_combine_large_level_needs_no_huge_integer():
    """J = 10**8 is a valid level (an integer >= 1) with 2^J > T_max: X^MLMC = x_0. The old test 2**J > T_max
    built the 12.5 MB integer 2**J first (J = 1e9: 15 s; J = 1e12 never returned); the level is now compared
    through T_max's bit length. Peak traced memory of the call stays below 1 MB."""
    import tracemalloc

    x = np.array([1.0, 3.0, 5.0, 7.0])
    tracemalloc.start()
    try:
        out = mlmc_combine(x, 10**8, 8)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert float(out) == 1.0
    assert peak < 1_000_000
    # the level test is exactly 2^J <= T_max, T_max not a power of two included
    for T_max in range(1, 40):
        for J in range(1, 7):
            xs = np.arange(1.0, 2.0**J + 1)
            expected = xs[0] if 2**J > T_max else xs[0] + 2**J * (xs.mean() - xs[: 2 ** (J - 1)].mean())
            assert float(mlmc_combine(xs, J, T_max)) == expected


# ------------------------------------------------------------------ array_api_strict (host) models
def _strict_pair():
    """The same CMDP with numpy arrays and with array_api_strict arrays (a host namespace)."""
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(0)
    S, A = 3, 2
    P, R, C = rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), rng.random((1, S, A))
    mu, b = rng.dirichlet(np.ones(S)), np.array([4.0])

    def make(xpm):
        mdp = FiniteMDP(xpm.asarray(P), xpm.asarray(R), 0.8, mu=xpm.asarray(mu))
        return mdp, ConstrainedMDP(mdp, xpm.asarray(C), xpm.asarray(b))

    return make(np), make(xps), (R, C)


_RUNS = {
    "slater_slack": lambda m, c, RC: slater_slack(c)[1],
    "npg_pd_step": lambda m, c, RC: npg_pd_step(c, np.full((3, 2), 0.5), np.zeros(1), eta1=1.0, eta2=1.0, Lambda=1.0)[0],
    "npg_primal_dual": lambda m, c, RC: npg_primal_dual(c, iterations=5).trace["avg_gap"],
    "sample_npg_primal_dual": lambda m, c, RC: sample_npg_primal_dual(c, iterations=3, rollouts=2, rng=1).policy,
    "lagrangian_policy_gradient": lambda m, c, RC: lagrangian_policy_gradient(
        c, iterations=3, eta_theta=1.0, eta_lambda=1.0, Lambda=1.0).theta,
    "two_stage_constrained_ac": lambda m, c, RC: two_stage_constrained_ac(c, weights=[1.0]).policy,
    "two_stage_calibrated": lambda m, c, RC: two_stage_calibrated(c, bisections=3).policy,
    "general_utility_primal_dual": lambda m, c, RC: general_utility_primal_dual(
        m, linear_utility(RC[0]), [(linear_utility(RC[1][0]), 1.0)], iterations=3, eta_theta=1.0, eta_mu=1.0,
        Lambda=1.0).theta,
}


@pytest.mark.parametrize("name", list(_RUNS))
def test_constrained_drivers_run_on_array_api_strict_models(name):
    """A model built from array_api_strict arrays (host memory, the test-suite's second backend) failed in
    every constrained driver with "inputs come from different array libraries" (cmdp.mdp.replace(R=numpy)
    mixed the namespaces). The host-only drivers now take a numpy copy: results equal the numpy model's."""
    (m_np, c_np), (m_x, c_x), RC = _strict_pair()
    np.testing.assert_array_equal(_RUNS[name](m_x, c_x, RC), _RUNS[name](m_np, c_np, RC))
