"""Soft value iteration, entropy-regularised NPG and PMD against independent computations (helper-85).

The references are computed here, not by rltheory, in 60-digit mpmath arithmetic: ``Q_τ^π`` by a
linear solve of ``(I − γP_π)V = r_π + τH_π`` and ``Q*_τ`` by soft policy iteration on it (checked by
its soft Bellman residual).
"""

from __future__ import annotations

import warnings
from typing import Any

import mpmath as mp
import numpy as np
import pytest

from rltheory.algorithms.policy_mirror_descent import (
    geometric_step_sizes,
    pmd_euclidean_step,
    pmd_kl_step,
    policy_mirror_descent,
)
from rltheory.algorithms.regularized_npg import entropy_regularized_npg
from rltheory.algorithms.soft import soft_bellman_operator, soft_value_iteration
from rltheory.bounds import entropy_npg_bound, entropy_npg_constant, pmd_linear_bound
from rltheory.mdp import FiniteMDP, policy_iteration


def _random_mdp(seed: int, S: int, A: int, gamma: float, dtype=np.float64) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    P = rng.random((S, A, S))
    P /= P.sum(-1, keepdims=True)
    return FiniteMDP(P.astype(dtype), rng.random((S, A)).astype(dtype), gamma=gamma)


def _mp_soft_q_pi(mdp: FiniteMDP, tau: float, pi: Any) -> list[list[mp.mpf]]:
    """``Q_τ^π`` of the stored model (entries read exactly) by a 60-digit mpmath linear solve of
    ``(I − γP_π)V = r_π + τH_π`` (``0 log 0 = 0``); ``pi`` as nested lists of mpf or an array."""
    P, R = np.asarray(mdp.P, dtype=float), np.asarray(mdp.R, dtype=float)
    S, A = R.shape
    with mp.workdps(60):
        g, t = mp.mpf(float(mdp.gamma)), mp.mpf(tau)
        M, b = mp.matrix(S, S), mp.matrix(S, 1)
        for s in range(S):
            p = [mp.mpf(pi[s][a]) for a in range(A)]
            H = -mp.fsum(p[a] * mp.log(p[a]) for a in range(A) if p[a] > 0)
            b[s] = mp.fsum(p[a] * mp.mpf(R[s, a]) for a in range(A)) + t * H
            for j in range(S):
                M[s, j] = (1 if s == j else 0) - g * mp.fsum(
                    p[a] * mp.mpf(P[s, a, j]) for a in range(A)
                )
        V = mp.lu_solve(M, b)
        return [
            [
                mp.mpf(R[s, a]) + g * mp.fsum(mp.mpf(P[s, a, j]) * V[j] for j in range(S))
                for a in range(A)
            ]
            for s in range(S)
        ]


def _mp_soft_q(mdp: FiniteMDP, tau: float) -> list[list[mp.mpf]]:
    """``Q*_τ`` of the stored model by soft policy iteration in 60-digit mpmath (``π ← softmax(Q/τ)``,
    ``Q ← Q_τ^π``: another method than soft value iteration, quadratic near the fixed point), checked
    by its soft Bellman residual ``< 1e-40``."""
    R = np.asarray(mdp.R, dtype=float)
    P = np.asarray(mdp.P, dtype=float)
    S, A = R.shape
    with mp.workdps(60):
        g, t = mp.mpf(float(mdp.gamma)), mp.mpf(tau)

        def soft_max(row: list) -> tuple[mp.mpf, list]:
            m = max(row)
            w = [mp.exp((q - m) / t) for q in row]
            z = mp.fsum(w)
            return m + t * mp.log(z), [x / z for x in w]

        Q = [[mp.mpf(R[s, a]) for a in range(A)] for s in range(S)]
        for _ in range(100):
            Qn = _mp_soft_q_pi(mdp, tau, [soft_max(Q[s])[1] for s in range(S)])
            done = (
                max(abs(Qn[s][a] - Q[s][a]) for s in range(S) for a in range(A)) < mp.mpf(10) ** -45
            )
            Q = Qn
            if done:
                break
        V = [soft_max(Q[s])[0] for s in range(S)]
        res = max(
            abs(
                mp.mpf(R[s, a]) + g * mp.fsum(mp.mpf(P[s, a, j]) * V[j] for j in range(S)) - Q[s][a]
            )
            for s in range(S)
            for a in range(A)
        )
        assert res < mp.mpf(10) ** -40
        return Q


@pytest.mark.parametrize(
    "seed, S, A, gamma, tau, dtype, tol",
    [
        (0, 3, 2, 0.9, 1e-3, np.float64, 1e-9),
        (1, 1, 3, 0.99, 1e-12, np.float64, 1e-9),  # τ tiny: the hard maximum
        (2, 2, 3, 0.9, 1e6, np.float64, 1e-5),  # τ huge: values ~ τ log|A|/(1 − γ) = 1.1e7
        (3, 3, 1, 0.99, 1.0, np.float64, 1e-9),  # one action
        (4, 1, 1, 0.5, 0.1, np.float64, 1e-9),  # one state, one action
        (5, 3, 3, 0.5, 0.1, np.float32, 1e-3),
        (6, 2, 2, 0.0, 1.0, np.float64, 1e-12),
    ],
)
def test_soft_value_iteration_bound_holds_against_mpmath(seed, S, A, gamma, tau, dtype, tol):
    # the certificate ‖Q − Q*_τ‖∞ ≤ bound against the 60-digit fixed point; converged only when bound ≤ tol
    mdp = _random_mdp(seed, S, A, gamma, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = soft_value_iteration(mdp, tau=tau, tol=tol)
    Qm = _mp_soft_q(mdp, tau)
    err = max(abs(mp.mpf(float(sol.Q[s, a])) - Qm[s][a]) for s in range(S) for a in range(A))
    assert float(err) <= float(sol.bound)
    assert sol.converged == (float(sol.bound) <= tol)


@pytest.mark.parametrize(
    "seed, S, A, gamma, tau, frac",
    [
        (0, 2, 2, 0.99, 10.0, 1.0),
        (1, 2, 3, 0.99, 0.1, 0.5),
        (2, 1, 3, 0.9, 0.1, 0.01),
        (3, 2, 2, 0.9, 1e6, 0.5),
    ],
)
def test_entropy_npg_rate_and_certificates_against_mpmath(seed, S, A, gamma, tau, frac):
    # Cen et al. (2022), Thm 1: ‖Q*_τ − Q_τ^{(t)}‖∞ ≤ C_1 γ (1 − ητ)^{t−1} for t ≥ 1, with
    # C_1 = ‖Q*_τ − Q_τ^{(0)}‖∞ + 2τ(1 − ητ/(1−γ))‖log π*_τ − log π^{(0)}‖∞, and the traced
    # q_error_bound ≥ the error against the mpmath Q*_τ; iterates recomputed here from the update.
    mdp = _random_mdp(seed, S, A, gamma)
    eta = frac * (1.0 - gamma) / tau
    res = entropy_regularized_npg(mdp, eta=eta, tau=tau, iterations=12)
    Qs = _mp_soft_q(mdp, tau)
    C1 = float(entropy_npg_constant(mdp, eta=eta, tau=tau))
    log_pi = np.full((S, A), -np.log(A))
    for t in range(13):
        pi = np.exp(log_pi)
        Qt = _mp_soft_q_pi(mdp, tau, pi)
        err = float(max(abs(Qs[s][a] - Qt[s][a]) for s in range(S) for a in range(A)))
        assert err <= float(res.trace["q_error_bound"][t])
        if t >= 1:
            q_rate = float(entropy_npg_bound(t, eta=eta, tau=tau, gamma=gamma, C1=C1)[0])
            assert err <= q_rate * (1.0 + 1e-9) + 1e-13
        Qf = np.array([[float(x) for x in row] for row in Qt])
        z = (1.0 - eta * tau / (1.0 - gamma)) * log_pi + eta / (1.0 - gamma) * Qf
        z -= z.max(-1, keepdims=True)
        log_pi = z - np.log(np.exp(z).sum(-1, keepdims=True))


@pytest.mark.parametrize("update", [pmd_kl_step, pmd_euclidean_step])
@pytest.mark.parametrize("seed, gamma, eta0", [(0, 0.9, 0.1), (1, 0.99, 1.0), (2, 0.5, 10.0)])
def test_pmd_increasing_steps_linear_rate_with_stationary_weighting(update, seed, gamma, eta0):
    # Lan (2022), Thm 2 form: η_k = η_0/γ^k and ν stationary for P_{π*} give
    # Δ_k(ν) ≤ γ^k (Δ_0(ν) + D_0(ν)/(γη_0)) with D the step's Bregman divergence (KL, ½‖·‖²)
    S, A = 3, 3
    mdp = _random_mdp(seed, S, A, gamma)
    sol = policy_iteration(mdp)
    pstar = np.zeros((S, A))
    pstar[np.arange(S), np.asarray(sol.policy)] = 1.0
    P_star = np.einsum("sa,sat->st", pstar, np.asarray(mdp.P))
    w, v = np.linalg.eig(P_star.T)
    nu = np.abs(np.real(v[:, np.argmin(np.abs(w - 1.0))]))
    nu /= nu.sum()
    pi0 = np.random.default_rng(seed).dirichlet(np.ones(A), size=S)
    res = policy_mirror_descent(
        mdp,
        step_sizes=geometric_step_sizes(eta0, 1.0 / gamma),
        iterations=25,
        update=update,
        pi0=pi0,
        rho=nu,
        V_star=np.asarray(sol.V),
    )
    sub = np.asarray(res.trace["suboptimality"])
    if update is pmd_kl_step:
        D0 = float(
            np.sum(
                nu
                * np.sum(
                    np.where(pstar > 0, pstar * np.log(np.maximum(pstar, 1e-300) / pi0), 0.0), -1
                )
            )
        )
    else:
        D0 = float(np.sum(nu * 0.5 * np.sum((pstar - pi0) ** 2, -1)))
    bound = pmd_linear_bound(np.arange(len(sub)), rate=gamma, eta0=eta0, gap0=sub[0], kl0=D0)
    assert np.all(sub <= bound + 1e-12)


def test_entropy_npg_takes_an_iteration_count_beyond_the_float_range():
    # iterations=10**400 with a tol (run until certified) failed in the a-priori logit-range check with a
    # bare "OverflowError: int too large to convert to float"; it now runs to tol like a finite budget
    mdp = _random_mdp(0, 2, 3, 0.9)
    res = entropy_regularized_npg(mdp, eta=1.0, tau=0.05, iterations=10**400, tol=1e-9)
    assert res.converged
    again = entropy_regularized_npg(mdp, eta=1.0, tau=0.05, iterations=int(res.iterations))
    np.testing.assert_array_equal(res.policy, again.policy)


def test_soft_value_iteration_names_soft_values_beyond_the_float_range():
    # r = (−1e308, 1e308), γ = 0.5, τ = 1: Q*_τ(s, 1) ≈ 2e308 is not a float64 number; the iteration ran
    # 1066 sweeps to its cap and returned Q = V = NaN with the certificate NaN (value_iteration refuses)
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[-1e308, 1e308]]), gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(
            ValueError,
            match=r"soft_value_iteration: the soft values .* left the float64 range.*\(s=0, a=1\)",
        ):
            soft_value_iteration(mdp, tau=1.0)


def test_soft_bellman_operator_names_a_sweep_beyond_the_float_range():
    # r + γ·τ log Σ exp(Q/τ) = 1e308 + 0.9·1.7e308 overflows: it returned inf without a word
    # (bellman_optimality_operator refuses the same sweep); the batch index of a batched Q is named
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[-1e308, 1e308]]), gamma=0.9)
    Q = np.array([[[0.0, 1.0]], [[1.7e308, 1.7e308]]])
    with pytest.raises(
        ValueError,
        match=r"soft_bellman_operator: .* float64 range \(batch index \(1,\)\).*\(s=0, a=1\) = inf",
    ):
        soft_bellman_operator(mdp, Q, tau=1.0)
    # finite sweeps are unchanged: per instance as the single calls
    np.testing.assert_array_equal(
        soft_bellman_operator(mdp, Q[:1], tau=1.0)[0], soft_bellman_operator(mdp, Q[0], tau=1.0)
    )


def test_geometric_step_sizes_start_at_eta0_and_never_below_it():
    # η_0 = 1e305 (a finite step above the e^700 cap) gave the constant steps 1.01e304 < η_0, and
    # η_0 = 0.1 came back as exp(log 0.1) = 0.10000000000000002 at k = 0
    big = geometric_step_sizes(1e305, 2.0)
    assert [big(k) for k in range(3)] == [1e305, 1e305, 1e305]
    rule = geometric_step_sizes(0.1, 1.0 / 0.9)
    assert rule(0) == 0.1
    steps = [
        geometric_step_sizes(0.1, 2.0)(k) for k in range(1100)
    ]  # 0.1·2^k passes e^700 at k = 1014
    assert min(steps) == 0.1 and steps[-1] == pytest.approx(np.exp(700.0), rel=1e-12)
    assert np.all(np.diff(steps) >= 0.0)
    mdp = _random_mdp(0, 2, 2, 0.9)
    res = policy_mirror_descent(mdp, step_sizes=rule, iterations=2)
    assert float(res.trace["step_size"][0]) == 0.1


def test_soft_value_iteration_near_the_float_range_without_numpy_warnings():
    # Q*_τ = (0.9·1.7e308, 1.7e308) is finite; the a-priori sweep count overflowed (to an honest inf)
    # and leaked "RuntimeWarning: overflow encountered in scalar multiply"
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.7e307]]), gamma=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        sol = soft_value_iteration(mdp, tau=1.0, tol=1e300)
    assert sol.converged
    # (tol = 1e300: bound 9.9e299, error 9.9e299 from Q*_τ; exact Q*_τ up to τ log 2 ≪ 1 ulp)
    assert float(np.max(np.abs(sol.Q - np.array([[0.9 * 1.7e308, 1.7e308]])))) <= float(sol.bound)


@pytest.mark.parametrize(
    "value",
    [[1.0], None, "1", True, np.array([1.0, 2.0]), 10**400],
    ids=["list", "None", "str", "True", "array", "int-beyond-float"],
)
def test_pmd_names_a_step_rule_value_that_is_not_a_number(value):
    # a rule k -> eta_k returning these failed in float() ("float() argument must be a string or a real
    # number, not 'list'", "only 0-dimensional arrays ...", OverflowError) or took True as 1.0
    mdp = _random_mdp(0, 2, 2, 0.9)
    with pytest.raises(ValueError, match=r"step_sizes\(0\) must be a finite number > 0"):
        policy_mirror_descent(mdp, step_sizes=lambda k: value, iterations=2)


def test_pmd_takes_numpy_scalars_from_a_step_rule():
    mdp = _random_mdp(0, 2, 2, 0.9)
    a = policy_mirror_descent(mdp, step_sizes=lambda k: np.float32(2.0), iterations=3)
    b = policy_mirror_descent(mdp, step_sizes=2.0, iterations=3)
    np.testing.assert_array_equal(a.policy, b.policy)
