"""Natural actor-critic with non-one-hot (random Gaussian) features: the trace's suboptimality,
approximation error and critic error against an independent computation from exact policy
evaluation (rltheory.mdp.evaluate_policy) and a plain weighted least-squares fit (numpy.linalg.lstsq).

Reference per iterate: π_t = softmax(φθ_t), V^{π_t} exact, A = Q − V, d = (1−γ)ρᵀ(I − γP_π)^{-1},
ψ = φ − E_πφ, w* = argmin ‖√(d⊗π)(ψw − A)‖ (minimum norm), θ_{t+1} = θ_t + η w_t/(1−γ).
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.actor_critic import natural_actor_critic
from rltheory.mdp import FiniteMDP, evaluate_policy, value_iteration


def _reference(mdp, f, rho, eta, T, fixed_w=None):
    P, R, g = np.asarray(mdp.P), np.asarray(mdp.R), float(mdp.gamma)
    S, A, k = f.shape
    V_star = np.asarray(value_iteration(mdp, tol=1e-13).V)
    th = np.zeros(k)
    sub, approx, cerr = [], [], []
    for _ in range(T + 1):
        z = f @ th
        pi = np.exp(z - z.max(axis=1, keepdims=True))
        pi /= pi.sum(axis=1, keepdims=True)
        V = np.asarray(evaluate_policy(mdp, pi))
        adv = R + g * P @ V - V[:, None]
        P_pi = np.einsum("sa,sat->st", pi, P)
        d = (1 - g) * np.linalg.solve(np.eye(S) - g * P_pi.T, rho)
        psi = f - np.einsum("sa,saj->sj", pi, f)[:, None, :]
        wts = (d[:, None] * pi).ravel()
        X, y = psi.reshape(S * A, k), adv.ravel()
        w_star = np.linalg.lstsq(np.sqrt(wts)[:, None] * X, np.sqrt(wts) * y, rcond=None)[0]
        w = w_star if fixed_w is None else fixed_w
        sub.append(rho @ (V_star - V))
        approx.append(np.sqrt(np.sum(wts * (X @ w_star - y) ** 2)))
        cerr.append(np.sqrt(np.sum(wts * (X @ (w - w_star)) ** 2)))
        th = th + eta * w / (1 - g)
    return np.array(sub), np.array(approx), np.array(cerr)


class _FixedCritic:
    """A 'critic' that always answers the same w: the trace's critic error is then ‖ψᵀ(w − w*_t)‖."""

    def __init__(self, w):
        self.w = w

    def fit(self, mdp, pi, phi_sa, rho, rng, w0):
        return self.w


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("d", [2, 3, 7])  # 7 > S(A − 1) = 6: a rank-deficient Fisher matrix
def test_nac_trace_with_random_features_matches_exact_evaluation(seed, d):
    rng = np.random.default_rng(seed)
    S, A = 3, 3
    mdp = FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), gamma=0.8)
    f = rng.standard_normal((S, A, d))
    rho = rng.dirichlet(np.ones(S))
    res = natural_actor_critic(mdp, f, eta=0.3, iterations=12, rho=rho)
    sub, approx, _ = _reference(mdp, f, rho, 0.3, 12)
    np.testing.assert_allclose(res.trace["suboptimality"], sub, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.trace["approximation_error"], approx, rtol=0, atol=1e-12)
    assert np.all(res.trace["critic_error"] == 0.0)  # the exact critic


@pytest.mark.parametrize("seed", range(3))
def test_nac_critic_error_of_an_inexact_critic_matches_exact_evaluation(seed):
    rng = np.random.default_rng(10 + seed)
    S, A, d = 4, 2, 3
    mdp = FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), gamma=0.7)
    f = rng.standard_normal((S, A, d))
    rho = rng.dirichlet(np.ones(S))
    w = rng.standard_normal(d)
    res = natural_actor_critic(
        mdp, f, eta=0.2, iterations=8, rho=rho, critic=_FixedCritic(w), rng=0
    )
    sub, approx, cerr = _reference(mdp, f, rho, 0.2, 8, fixed_w=w)
    np.testing.assert_allclose(res.trace["suboptimality"], sub, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.trace["approximation_error"], approx, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.trace["critic_error"], cerr, rtol=0, atol=1e-12)
