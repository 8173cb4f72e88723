"""bradley_terry_mle's convergence report against a high-precision optimum.

Reference: Newton's method with backtracking on the same penalised Bradley–Terry objective in
long double, started at the returned estimate and run to a decrement at long double's rounding;
``converged=True`` at ``tol`` must mean ``f(θ̂) − min f ≤ tol`` for every player.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.marlhf import bradley_terry_mle, trajectory_features
from rltheory.mdp.offline_data import EpisodeDataset
from rltheory.mdp.preference_data import PreferenceDataset

LD = np.longdouble


def _objective(theta, X, y, ridge):
    z = X @ theta
    return np.sum(np.logaddexp(LD(0), -z) * y + np.logaddexp(LD(0), z) * (1 - y)) + ridge / 2 * (
        theta @ theta
    )


def _minimum(X, y, ridge, start):
    th, X, y = np.asarray(start, dtype=LD), X.astype(LD), y.astype(LD)
    for _ in range(400):
        p = 1 / (1 + np.exp(-(X @ th)))
        g = X.T @ (p - y) + ridge * th
        H = (X * (p * (1 - p))[:, None]).T @ X + ridge * np.eye(th.size, dtype=LD)
        step = np.linalg.solve(H.astype(float), g.astype(float)).astype(LD)
        f0, s = _objective(th, X, y, ridge), LD(1)
        while _objective(th - s * step, X, y, ridge) > f0 and s > 1e-12:
            s /= 2
        th = th - s * step
    return _objective(th, X, y, ridge)


def _data(seed: int, separable: bool) -> PreferenceDataset:
    rng = np.random.default_rng(seed)
    K, S, A = int(rng.integers(5, 40)), 2, 3
    e1, e2 = (
        EpisodeDataset(
            rng.integers(0, S, size=(K, 2)),
            rng.integers(0, A, size=(K, 1)),
            np.zeros((K, 1)),
            S=S,
            A=A,
        )
        for _ in range(2)
    )
    X = trajectory_features(e1) - trajectory_features(e2)
    y = (X @ rng.standard_normal(X.shape[1]) > 0) if separable else rng.integers(0, 2, size=K)
    return PreferenceDataset(e1, e2, np.asarray(y, dtype=int)[:, None])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("separable", [True, False])
@pytest.mark.parametrize(
    ("ridge", "tol"), [(1e-3, 1e-3), (1e-6, 1e-1), (1e-9, 1e-8), (1e-12, 1e-10)]
)
def test_converged_means_the_objective_gap_is_at_most_tol(seed, separable, ridge, tol):
    prefs = _data(seed, separable)
    fit = bradley_terry_mle(prefs, ridge=ridge, tol=tol, max_iter=200)
    assert fit.converged
    X = trajectory_features(prefs.first) - trajectory_features(prefs.second)
    th = fit.theta[0].ravel().astype(LD)
    f = _objective(th, X.astype(LD), prefs.labels[:, 0].astype(LD), ridge)
    assert float(f - _minimum(X, prefs.labels[:, 0], ridge, th)) <= tol
    # the trace's last loss is the objective of the returned estimate (one player)
    assert fit.trace["loss"][-1] == pytest.approx(float(f), rel=1e-12)
