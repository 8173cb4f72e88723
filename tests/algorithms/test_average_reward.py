"""Average-reward actor-critic: differential TD, exact gradients, MLMC unbiasedness, MAC, off-policy DPG."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.average_reward import (
    SmoothActionMDP,
    StepSchedule,
    average_reward_actor_critic,
    average_reward_gradient,
    differential_td,
    dpg_gradient,
    mac_expected_terms,
    mac_sample_terms,
    mixing_step_sizes,
    mlmc_combine,
    mlmc_expectation,
    mlmc_level,
    multilevel_actor_critic,
    off_policy_dpg,
)
from rltheory.algorithms.mlmc import _mlmc_combine, _mlmc_top_level
from rltheory.algorithms.policy_gradient import softmax_policy
from rltheory.bounds.average_reward import mac_rate, markov_average_bias, mlmc_expected_samples
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP, policy_transition_matrix
from rltheory.mdp.average import gain_bias
from rltheory.mdp.mixing import stationary_distribution, tv_distances
from rltheory.testing import average_reward_mdps


def _mdp(seed: int, S: int = 4, A: int = 2) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    return FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), None)


def _asymptotic_variance(P: np.ndarray, mu: np.ndarray, f: np.ndarray) -> float:
    """σ² = Var_μ(f) + 2 Σ_{k≥1} Cov_μ(f_0, f_k) = 2 μᵀ(f̃ ∘ Z f̃) − μᵀ f̃², Z the fundamental matrix."""
    ft = f - mu @ f
    Z = np.linalg.inv(np.eye(len(mu)) - P + np.outer(np.ones(len(mu)), mu))
    return float(2 * mu @ (ft * (Z @ ft)) - mu @ ft**2)


# ---------------------------------------------------------------- differential TD
def test_differential_td_one_hot_recovers_bias_up_to_a_constant():
    """Tsitsiklis & Van Roy (1999): one-hot features → Φw_t → h^π + c1 and η_t → g^π."""
    mdp = _mdp(0)
    pi = softmax_policy(np.random.default_rng(1).normal(size=(4, 2)))
    res = differential_td(
        mdp,
        pi,
        steps=60_000,
        rng=7,
        alpha=StepSchedule(0.5, t0=200.0, power=0.7),
        beta=StepSchedule(1.0, t0=1.0, power=1.0),
        record_every=1000,
    )
    tr = res.trace
    g, h = gain_bias(mdp, pi)
    assert abs(res.gain - float(g)) < 1e-12
    # span error (a.s. convergence, noise-limited at this budget: the stationary fluctuation of w is
    # O(sqrt(α_T/λ)) with λ the smallest non-zero eigenvalue of D_μ(I − P_π)); fixed seed regression:
    # it shrinks 5x from the start and ends below 15% of sp(h). The exact statement is the mean-path test.
    assert tr["bias_span_error"][-1] < 0.2 * tr["bias_span_error"][0]
    assert tr["bias_span_error"][-1] < 0.15 * np.ptp(np.asarray(h))
    # with β_t = 1/(t+1), η_T is the running mean of rewards: CLT with the exact asymptotic variance
    P = np.asarray(policy_transition_matrix(mdp, pi))
    mu = np.asarray(stationary_distribution(P))
    r_pi = (pi * np.asarray(mdp.R)).sum(-1)
    # per-transition reward variance includes the action noise: use the (s, a) chain's variance bound
    var = _asymptotic_variance(P, mu, r_pi) + float(
        mu @ (pi * (np.asarray(mdp.R) - r_pi[:, None]) ** 2).sum(-1)
    )
    sd = math.sqrt(max(var, 1e-12) / 60_000)
    assert tr["gain_error"][-1] < 5 * sd + 10 * np.ptp(np.asarray(h)) / 60_000


def test_expected_differential_td_converges_to_bias():
    """Mean path of differential TD (the ODE's Euler steps) with one-hot features: w → h + c1 exactly."""
    mdp = _mdp(2, S=5, A=3)
    pi = softmax_policy(np.random.default_rng(3).normal(size=(5, 3)))
    P = np.asarray(policy_transition_matrix(mdp, pi))
    r = (pi * np.asarray(mdp.R)).sum(-1)
    mu = np.asarray(stationary_distribution(P))
    g, h = gain_bias(mdp, pi)
    w, eta = np.zeros(5), 0.0
    for _ in range(3000):
        w = w + 0.5 * mu * (r - eta + P @ w - w)
        eta = eta + 0.5 * (mu @ r - eta)
    assert abs(eta - float(g)) < 1e-10
    assert np.ptp(w - np.asarray(h)) < 1e-8


def test_differential_td_is_reproducible():
    mdp = _mdp(4)
    pi = np.full((4, 2), 0.5)
    a = differential_td(mdp, pi, steps=2000, rng=11)
    b = differential_td(mdp, pi, steps=2000, rng=11)
    c = differential_td(mdp, pi, steps=2000, rng=12)
    np.testing.assert_array_equal(a.w, b.w)
    assert a.eta == b.eta and not np.array_equal(a.w, c.w)


# ---------------------------------------------------------------- exact gradient
@settings(max_examples=10, deadline=None)
@given(average_reward_mdps(max_states=4, max_actions=3), st.integers(0, 2**31))
def test_average_reward_gradient_matches_finite_differences(mdp, seed):
    theta = np.random.default_rng(seed).normal(size=(mdp.S, mdp.A))
    grad, J = average_reward_gradient(mdp, theta)
    eps = 1e-6
    for idx in np.ndindex(mdp.S, mdp.A):
        tp, tm = theta.copy(), theta.copy()
        tp[idx] += eps
        tm[idx] -= eps
        fd = (average_reward_gradient(mdp, tp)[1] - average_reward_gradient(mdp, tm)[1]) / (2 * eps)
        assert abs(fd - grad[idx]) <= 1e-6 * (1 + abs(fd))


def test_expected_actor_term_is_the_gradient():
    """With the exact critic (ω = h, η = g) the stationary mean of δ∇log π is ∇J (Sutton et al. 2000)."""
    mdp = _mdp(5, S=4, A=3)
    theta = np.random.default_rng(6).normal(size=(4, 3))
    pi = softmax_policy(theta)
    g, h = gain_bias(mdp, pi)
    _, _, gbar = mac_expected_terms(mdp, theta, np.asarray(h), float(g))
    mu = np.asarray(stationary_distribution(np.asarray(policy_transition_matrix(mdp, pi))))
    grad, _ = average_reward_gradient(mdp, theta)
    np.testing.assert_allclose(np.tensordot(mu, gbar, axes=(0, 0)), grad, atol=1e-12)


# ------------------------------------------------------------------------- MLMC
@settings(max_examples=20, deadline=None)
@given(average_reward_mdps(max_states=5, max_actions=3), st.integers(1, 70), st.integers(0, 2**31))
def test_mlmc_expectation_equals_truncated_average(mdp, T_max, seed):
    """E[X^MLMC] = E[X^(j_max)] exactly (telescoping; Dorfman & Levy 2022), for all three MAC terms."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(mdp.S, mdp.A))
    Pp = np.asarray(policy_transition_matrix(mdp, softmax_policy(theta)))
    nu = rng.dirichlet(np.ones(mdp.S))
    for fbar in mac_expected_terms(mdp, theta, rng.normal(size=mdp.S), 0.3):
        E, Etr = mlmc_expectation(Pp, nu, fbar, T_max)
        np.testing.assert_allclose(E, Etr, atol=1e-12)


def test_mlmc_actor_estimate_is_unbiased_by_monte_carlo():
    """Monte Carlo mean of the MAC actor estimator (chain from s_0 = 0) vs its exact expectation."""
    mdp = _mdp(8, S=3, A=2)
    P, R = np.asarray(mdp.P), np.asarray(mdp.R)
    rng = np.random.default_rng(9)
    theta = rng.normal(size=(3, 2))
    omega = rng.normal(size=3)
    eta = 0.4
    pi = softmax_policy(theta)
    T_max, n = 8, 20_000
    Phi = np.eye(3)
    gen = np.random.default_rng(10)
    cP, cpi = np.cumsum(P, -1), np.cumsum(pi, -1)
    ests = np.empty((n, 3, 2))
    for e in range(n):
        J = mlmc_level(gen)
        N = 2**J if 2**J <= T_max else 1
        s, gs = 0, np.empty((N, 3, 2))
        for k in range(N):
            a = int(np.searchsorted(cpi[s], gen.random(), side="right"))
            s2 = int(np.searchsorted(cP[s, a], gen.random(), side="right"))
            gs[k] = mac_sample_terms(Phi, pi[s], s, a, R[s, a], s2, omega, eta)[2]
            s = s2
        ests[e] = mlmc_combine(gs, J, T_max)
    _, _, gbar = mac_expected_terms(mdp, theta, omega, eta)
    _, Etr = mlmc_expectation(
        np.asarray(policy_transition_matrix(mdp, pi)), np.eye(3)[0], gbar, T_max
    )
    se = ests.std(axis=0) / math.sqrt(n)
    # 4.5σ per coordinate (6 coords)
    assert np.all(np.abs(ests.mean(axis=0) - Etr) <= 4.5 * se + 1e-12)


@pytest.mark.parametrize("k", [1, 2, 3, 48, 49, 52, 53, 54, 64, 1000])
def test_mlmc_top_level_is_exact_at_powers_of_two(k):
    """j_max = ⌊log₂ T_max⌋ by definition 2^j_max ≤ T_max < 2^(j_max + 1): 2^k − 1 is level k − 1 and
    2^k, 2^k + 1 are level k. ``floor(log2(2**49 - 1))`` in floating point is 49 (log2 rounds up), which
    made mlmc_expectation average 2^49 instead of 2^48 samples; the level is integer arithmetic now."""
    assert _mlmc_top_level(2**k - 1) == k - 1
    assert _mlmc_top_level(2**k) == k
    assert _mlmc_top_level(2**k + 1) == k
    for T in (2**k - 1, 2**k, 2**k + 1):
        j = _mlmc_top_level(T)
        assert 2**j <= T < 2 ** (j + 1)
        assert mlmc_expected_samples(T) == j + 2.0**-j  # the bound's j_max is the same level
    if k < 63:  # numpy integers are levels too (they have no bit_length)
        assert _mlmc_top_level(np.int64(2**k - 1)) == k - 1
        assert _mlmc_top_level(np.uint64(2**k)) == k


def test_mlmc_expectation_truncates_at_the_top_level():
    """The truncated average of mlmc_expectation averages exactly 2^⌊log₂ T_max⌋ samples: with f̄ = e_s on a
    deterministic cycle 0 → 1 → … → 7 → 0 from s_0 = 0, E[x_k] = e_(k mod 8), so the mean of the first N is
    1/N on states 0..N−1 (T_max = 7 → N = 4; T_max = 8 → N = 8)."""
    P = np.roll(np.eye(8), 1, axis=1)
    for T_max, N in ((1, 1), (3, 2), (7, 4), (8, 8), (15, 8)):
        E, Etr = mlmc_expectation(P, np.eye(8)[0], np.eye(8), T_max)
        expected = np.where(np.arange(8) < N, 1.0 / N, 0.0)
        np.testing.assert_allclose(Etr, expected, atol=1e-15)
        np.testing.assert_allclose(E, expected, atol=1e-12)


def test_mlmc_reference_values():
    x = np.array([1.0, 3.0, 5.0, 7.0])
    assert float(mlmc_combine(x, 1, 8)) == 1.0 + 2 * (2.0 - 1.0)
    assert float(mlmc_combine(x, 2, 8)) == 1.0 + 4 * (4.0 - 2.0)
    assert float(mlmc_combine(x, 3, 4)) == 1.0
    assert mlmc_expected_samples(1) == 1.0 and mlmc_expected_samples(16) == 4 + 1 / 16
    gen = np.random.default_rng(0)
    Js = np.array([mlmc_level(gen) for _ in range(40_000)])
    Ns = np.where(2.0**Js <= 16, 2.0**Js, 1.0)
    assert abs(np.mean(Ns) - mlmc_expected_samples(16)) < 4 * np.std(Ns) / math.sqrt(len(Ns))


@settings(max_examples=15, deadline=None)
@given(average_reward_mdps(max_states=5, max_actions=2), st.integers(0, 2**31))
def test_markov_average_bias_bound_holds(mdp, seed):
    """|E[(1/N)Σ f(s_k)] − μ(f)| ≤ span(f)/N Σ d(k), exact expectations, every start state."""
    rng = np.random.default_rng(seed)
    pi = rng.dirichlet(np.ones(mdp.A), size=mdp.S)
    Pp = np.asarray(policy_transition_matrix(mdp, pi))
    f = rng.normal(size=mdp.S)
    mu = np.asarray(stationary_distribution(Pp))
    tv = np.asarray(tv_distances(Pp, 32))
    Ns = np.arange(1, 33)
    bound = markov_average_bias(Ns, tv[:32], float(np.ptp(f)))
    for s in range(mdp.S):
        v, acc, means = np.eye(mdp.S)[s], 0.0, []
        for k in range(32):
            acc += v @ f
            means.append(acc / (k + 1))
            v = v @ Pp
        assert np.all(np.abs(np.array(means) - mu @ f) <= bound + 1e-12)


# ------------------------------------------------------------------ actor-critics
def test_actor_critic_and_mac_improve_and_reproduce():
    mdp = _mdp(12, S=4, A=3)
    a1 = average_reward_actor_critic(
        mdp,
        steps=6000,
        rng=1,
        critic_step=StepSchedule(0.1),
        actor_step=StepSchedule(0.1),
        record_every=2000,
    )
    a2 = average_reward_actor_critic(
        mdp,
        steps=6000,
        rng=1,
        critic_step=StepSchedule(0.1),
        actor_step=StepSchedule(0.1),
        record_every=2000,
    )
    np.testing.assert_array_equal(a1.theta, a2.theta)
    assert a1.trace["gain_gap"][-1] < a1.trace["gain_gap"][0]
    m1 = multilevel_actor_critic(mdp, iterations=1500, T_max=32, rng=3, record_every=500)
    m2 = multilevel_actor_critic(mdp, iterations=1500, T_max=32, rng=3, record_every=500)
    np.testing.assert_array_equal(m1.theta, m2.theta)
    assert m1.samples == m2.samples
    assert m1.trace["gain_gap"][-1] < 0.5 * m1.trace["gain_gap"][0]
    assert np.all(m1.trace["gain_gap"] >= -1e-12)  # g* is optimal
    m3 = multilevel_actor_critic(mdp, iterations=200, T_max=32, rng=3, max_samples=150)
    assert 150 <= m3.samples < 150 + 32


def test_mixing_step_sizes_scale_inversely():
    c, a = mixing_step_sizes(10.0, critic=0.5, actor=0.05)
    assert c(0) == pytest.approx(0.05) and a(123) == pytest.approx(0.005)
    assert StepSchedule(1.0, t0=1.0, power=1.0)(3) == 0.25


# ---------------------------------------------------------------- off-policy DPG
def _smooth(seed: int, S: int = 4) -> SmoothActionMDP:
    rng = np.random.default_rng(seed)
    return SmoothActionMDP(
        rng.normal(size=(S, S)), rng.normal(size=(S, S)), rng.random(S), rng.normal(size=S), 0.5
    )


def test_dpg_gradient_matches_finite_differences():
    """Average-reward deterministic PG theorem (Saxena et al. 2023, Thm 1) on the smooth-action model."""
    m = _smooth(0)
    th = np.random.default_rng(1).normal(size=4)
    grad, J = dpg_gradient(m, th)
    eps = 1e-6
    fd = np.array(
        [
            (dpg_gradient(m, th + eps * e)[1] - dpg_gradient(m, th - eps * e)[1]) / (2 * eps)
            for e in np.eye(4)
        ]
    )
    np.testing.assert_allclose(grad, fd, atol=1e-8)
    g, h, mu = m.gain_bias(th)
    # Poisson equation
    np.testing.assert_allclose(g + h, m.reward(th) + m.kernel(th) @ h, atol=1e-12)


def test_off_policy_dpg_improves_gain_and_is_reproducible():
    m = _smooth(2)
    th1, tr1 = off_policy_dpg(m, steps=40_000, rng=5, record_every=10_000)
    th2, _ = off_policy_dpg(m, steps=40_000, rng=5, record_every=10_000)
    np.testing.assert_array_equal(th1, th2)
    assert tr1["gain"][-1] > tr1["gain"][0]
    assert tr1["grad_norm_sq"][-1] < tr1["grad_norm_sq"][0]


# ------------------------------------------------------------------ validation
def test_validation_messages():
    mdp = _mdp(0)
    with pytest.raises(ValueError, match="steps must be an integer"):
        differential_td(mdp, np.full((4, 2), 0.5), steps=0, rng=0)
    with pytest.raises(ValueError, match="features must have shape"):
        differential_td(mdp, np.full((4, 2), 0.5), steps=5, rng=0, features=np.eye(3))
    with pytest.raises(ValueError, match="pi must be a stochastic policy"):
        differential_td(mdp, np.full((4, 2), 0.7), steps=5, rng=0)
    with pytest.raises(TypeError, match="rng must be"):
        average_reward_actor_critic(mdp, steps=5, rng=None)
    with pytest.raises(ValueError, match="theta0 must have shape"):
        multilevel_actor_critic(mdp, iterations=2, T_max=4, rng=0, theta0=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="at least 2\\^J"):
        mlmc_combine(np.zeros(3), 2, 8)
    with pytest.raises(ValueError, match="T_max must be"):
        mlmc_expectation(np.eye(2), [1.0, 0.0], np.zeros(2), 0)
    with pytest.raises(ValueError, match="tau_mix"):
        mixing_step_sizes(0.5)
    with pytest.raises(ValueError, match="power"):
        StepSchedule(1.0, power=2.0)
    with pytest.raises(InvalidModelError, match="SmoothActionMDP needs"):
        SmoothActionMDP(np.zeros((2, 2)), np.zeros((3, 3)), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="theta must have shape"):
        dpg_gradient(_smooth(0), np.zeros(3))
    with pytest.raises(ValueError, match="tv must be"):
        markov_average_bias([1], [1.5], 1.0)
    with pytest.raises(ValueError, match="T_max"):
        mac_rate([1.0], T_max=1)
    assert mac_rate([4.0], tau_mix=1.0, T_max=2, C=1.0)[0] == pytest.approx(0.5)


# ------------------------------------------------- validation outside the drawn ranges
def test_step_schedule_accepts_numpy_scalars() -> None:
    # α_10 = 0.5 / (1 + 10/10)^1 = 0.25; numpy scalars were rejected as "not a finite number > 0".
    sch = StepSchedule(np.float32(0.5), t0=np.int64(10), power=np.float64(1.0))
    assert sch(10) == 0.25
    assert sch == StepSchedule(0.5, t0=10.0, power=1.0)
    assert mixing_step_sizes(np.float32(2.0)) == mixing_step_sizes(2.0)


@pytest.mark.parametrize(
    "kw", [dict(c=True), dict(c=0.5, power=True), dict(c=0.5, t0=np.float32("nan"))]
)
def test_step_schedule_still_rejects_bools_and_nan(kw) -> None:
    with pytest.raises(ValueError, match=r"StepSchedule\.(c|t0|power) must"):
        StepSchedule(**kw)


def test_multilevel_actor_critic_numpy_actor_scale_equals_float() -> None:
    mdp = _mdp(0)
    kw = dict(iterations=5, T_max=4, rng=3, record_every=5)
    a = multilevel_actor_critic(mdp, actor_scale=0.5, **kw)
    b = multilevel_actor_critic(mdp, actor_scale=np.float32(0.5), **kw)
    np.testing.assert_array_equal(a.theta, b.theta)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_actor_critics_locate_nonfinite_theta0(bad) -> None:
    # Before the fix the error blamed the derived policy: "pi must be finite; pi(s=0, a=0) = nan".
    mdp = _mdp(0)
    theta0 = np.zeros((4, 2))
    theta0[1, 1] = bad
    with pytest.raises(InvalidModelError, match=r"theta0 must be finite; theta0\(s=1, a=1\)"):
        average_reward_actor_critic(mdp, steps=2, rng=0, theta0=theta0)
    with pytest.raises(InvalidModelError, match=r"theta0 must be finite; theta0\(s=1, a=1\)"):
        multilevel_actor_critic(mdp, iterations=2, T_max=4, rng=0, theta0=theta0)


def test_step_arguments_must_be_schedules() -> None:
    mdp = _mdp(0)
    with pytest.raises(TypeError, match="alpha must be a StepSchedule"):
        differential_td(mdp, np.full((4, 2), 0.5), steps=2, rng=0, alpha=0.1)
    with pytest.raises(TypeError, match="actor_step must be a StepSchedule"):
        average_reward_actor_critic(mdp, steps=2, rng=0, actor_step=0.01)
    with pytest.raises(TypeError, match="gain_step must be a StepSchedule"):
        multilevel_actor_critic(mdp, iterations=2, T_max=4, rng=0, gain_step=0.05)


# ------------------------------------------- MLMC and MAC expected terms: located errors
def _with(shape, idx, value):
    a = np.zeros(shape)
    a[idx] = value
    return a


@pytest.mark.parametrize(
    "args, err, msg",
    [
        # before: a NaN sample propagated silently into the estimate
        (
            (_with((4, 2), (2, 1), np.nan), 2, 8),
            InvalidModelError,
            r"x must be finite; x\(k=2, i1=1\) = nan",
        ),
        ((_with(4, 3, np.inf), 2, 4), InvalidModelError, r"x must be finite; x\(k=3\) = inf"),
        # before: IndexError (too many indices / index 0 out of bounds)
        (
            (np.float64(1.0), 1, 8),
            ValueError,
            r"x must have shape \(N, \.\.\.\) with N >= 1 samples; got \(\)",
        ),
        (
            (np.zeros((0, 2)), 3, 2),
            ValueError,
            r"x must have shape \(N, \.\.\.\) with N >= 1 samples; got \(0, 2\)",
        ),
    ],
)
def test_mlmc_combine_locates_bad_samples(args, err, msg) -> None:
    with pytest.raises(err, match=msg):
        mlmc_combine(*args)


@pytest.mark.parametrize(
    "P, nu, fbar, err, msg",
    [
        # before: a wrong-length nu/fbar failed inside numpy (tensordot's "shape-mismatch
        # for sum", IndexError) and a (2, 1) P_pi with T_max = 1 returned a value
        (
            np.eye(2)[:, :1],
            [1.0, 0.0],
            np.zeros(2),
            ValueError,
            r"P_pi must have shape \(S, S\) with S >= 1; got \(2, 1\)",
        ),
        (
            np.eye(2),
            [1.0, 0.0, 0.0],
            np.zeros(2),
            ValueError,
            r"nu must have shape \(S,\) = \(2,\); got \(3,\)",
        ),
        (
            np.eye(2),
            [1.0, 0.0],
            np.zeros((3, 2)),
            ValueError,
            r"fbar must have shape \(S, \.\.\.\) = \(2, \.\.\.\); got \(3, 2\)",
        ),
        (
            np.eye(2),
            [1.0, 0.0],
            np.float64(0.0),
            ValueError,
            r"fbar must have shape \(S, \.\.\.\) = \(2, \.\.\.\); got \(\)",
        ),
        # before: NaN/inf flowed into the returned expectations
        (
            _with((2, 2), (1, 0), np.inf),
            [1.0, 0.0],
            np.zeros(2),
            InvalidModelError,
            r"P_pi must be finite; P_pi\(s=1, s'=0\) = inf",
        ),
        (
            np.eye(2),
            [1.0, np.nan],
            np.zeros(2),
            InvalidModelError,
            r"nu must be finite; nu\(s=1\) = nan",
        ),
        (
            np.eye(2),
            [1.0, 0.0],
            _with((2, 3), (1, 2), -np.inf),
            InvalidModelError,
            r"fbar must be finite; fbar\(s=1, i1=2\) = -inf",
        ),
    ],
)
def test_mlmc_expectation_locates_bad_inputs(P, nu, fbar, err, msg) -> None:
    with pytest.raises(err, match=msg):
        mlmc_expectation(P, nu, fbar, 1)


@pytest.mark.parametrize(
    "theta, omega, kw, err, msg",
    [
        # before: a (2, 2) theta broadcast against the (4, 2) model or failed in numpy;
        # a NaN theta/omega gave NaN terms; a wrong-length omega failed in matmul
        (
            np.zeros((2, 2)),
            np.zeros(4),
            {},
            ValueError,
            r"theta must have shape \(S, A\) = \(4, 2\); got \(2, 2\)",
        ),
        (
            _with((4, 2), (1, 0), np.nan),
            np.zeros(4),
            {},
            InvalidModelError,
            r"theta must be finite; theta\(s=1, a=0\) = nan",
        ),
        (
            np.zeros((4, 2)),
            np.zeros(3),
            {},
            ValueError,
            r"omega must have shape \(d,\) = \(4,\) \(one weight per feature\); got \(3,\)",
        ),
        (
            np.zeros((4, 2)),
            np.zeros(4),
            dict(features=np.ones((4, 2))),
            ValueError,
            r"omega must have shape \(d,\) = \(2,\)",
        ),
        (
            np.zeros((4, 2)),
            _with(4, 2, np.inf),
            {},
            InvalidModelError,
            r"omega must be finite; omega\(i=2\) = inf",
        ),
    ],
)
def test_mac_expected_terms_locates_bad_inputs(theta, omega, kw, err, msg) -> None:
    with pytest.raises(err, match=msg):
        mac_expected_terms(_mdp(0), theta, omega, 0.3, **kw)


def test_mac_loop_kernel_equals_the_public_mlmc_combine() -> None:
    # MAC's loop calls the unchecked kernel; the public function must give the same value.
    x = np.random.default_rng(2).normal(size=(8, 3))
    for J, T_max in ((1, 8), (2, 8), (3, 8), (3, 4)):
        np.testing.assert_array_equal(mlmc_combine(x, J, T_max), _mlmc_combine(x, J, T_max))
