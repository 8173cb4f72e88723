"""bradley_terry_mle against scipy.optimize on the same penalised likelihood (a check, no regression).

``f(θ) = Σ_k [y_k log(1 + e^{−x_kᵀθ}) + (1 − y_k) log(1 + e^{x_kᵀθ})] + (λ/2)‖θ‖²`` per player,
minimised by scipy's BFGS from 0 (gtol 1e-12, analytic gradient) on the full ``K × D`` matrix
``X``. The Newton fit must reach an objective no worse than BFGS's (to 1e-12 relative) and carry
the rigorous certificate ``f(θ̂) − min f ≤ ‖∇f(θ̂)‖²/(2λ) ≤ tol`` (λ-strong convexity).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from rltheory.algorithms.marlhf import bradley_terry_mle, trajectory_features
from rltheory.mdp.offline_data import sample_game_episodes, sample_preferences


def _f(theta, X, y, lam):
    z = X @ theta
    return float(
        np.sum(y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z)) + 0.5 * lam * theta @ theta
    )


def _grad(theta, X, y, lam):
    return X.T @ (expit(X @ theta) - y) + lam * theta


@pytest.mark.parametrize(
    "H, S, N, lam", [(2, 2, 300, 1e-3), (1, 1, 50, 1e-2), (3, 2, 1000, 1e-2), (2, 3, 40, 1e-3)]
)
def test_newton_matches_bfgs_and_certifies_its_gap(H, S, N, lam):
    rng = np.random.default_rng(H * 100 + S * 10 + N)
    P = rng.dirichlet(np.ones(S), size=(H, S, 2, 2))
    R = rng.uniform(size=(2, H, S, 2, 2))
    t1, t2 = (sample_game_episodes(P, R, np.full((H, S, 2, 2), 0.25), N, rng=rng) for _ in range(2))
    prefs = sample_preferences(t1, t2, R, rng=rng)
    fit = bradley_terry_mle(prefs, ridge=lam)
    assert fit.converged
    X = trajectory_features(prefs.first) - trajectory_features(prefs.second)
    for i in range(2):
        y, th = prefs.labels[:, i].astype(float), fit.theta[i].ravel()
        ref = minimize(
            _f,
            np.zeros(X.shape[1]),
            args=(X, y, lam),
            jac=_grad,
            method="BFGS",
            options={"gtol": 1e-12},
        )
        f_ours, f_ref = _f(th, X, y, lam), _f(ref.x, X, y, lam)
        assert f_ours <= f_ref + 1e-12 * (1 + abs(f_ref))
        assert np.linalg.norm(_grad(th, X, y, lam)) ** 2 / (2 * lam) <= 1e-12
        # λ-strong convexity: ‖θ − θ*‖ ≤ ‖∇f(θ)‖/λ for both estimates (plus round-off of θ, ~1e-14)
        bound = (
            np.linalg.norm(_grad(ref.x, X, y, lam)) + np.linalg.norm(_grad(th, X, y, lam))
        ) / lam
        assert np.linalg.norm(th - ref.x) <= bound + 1e-12
