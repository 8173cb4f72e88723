"""MARLHF's reward fit and certificate do their work once per distinct item.

Regression (CI time): the marlhf-coverage quick preset took ~24 s CPU, about half of it in
``bradley_terry_mle``'s SVD of the ``K × D`` difference matrix ``X`` (``K`` up to 12 800) and most of
the rest in ``marlhf_equilibrium``'s 63 one-policy occupancy calls per run (9 candidates × (1 + 3 +
3) deviations, each validating a fresh model and policy). Now the fit works on the distinct rows of
``X`` with their counts (an SVD of ``diag(√c) U``, ``m ≤ 81`` rows for one step and 9 joint
actions) and the search makes one batched occupancy call; the quick preset takes about 2 s CPU, its
JSON unchanged to 1.8e-15 (tests/experiments/test_h70_marlhf_quick_unchanged.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import rltheory.algorithms.marlhf as marlhf
from rltheory.algorithms.marlhf import bradley_terry_mle, marlhf_equilibrium, trajectory_features
from rltheory.experiments.marlhf_coverage import coverage_behaviour, witness_games
from rltheory.mdp.offline_data import (
    EpisodeDataset,
    PreferenceDataset,
    sample_game_episodes,
    sample_preferences,
)

P1 = np.ones((1, 1, 3, 3, 1))


def _prefs(N: int, seed: int, kind: str = "unilateral"):
    R = witness_games()["I"]
    rng = np.random.default_rng(seed)
    t1, t2 = (sample_game_episodes(P1, R, coverage_behaviour(kind), N, rng=rng) for _ in range(2))
    return sample_preferences(t1, t2, R, rng=rng, scale=5.0)


def _full_row_fit(prefs, ridge):
    """Reference: the same Newton iteration on every row of X (the former code path)."""
    X = trajectory_features(prefs.first) - trajectory_features(prefs.second)
    Y = prefs.labels.astype(float)
    _, sv, Vt = np.linalg.svd(X, full_matrices=False)
    r = int(np.sum(sv > sv[0] * max(X.shape) * np.finfo(float).eps))
    Z = X @ Vt[:r].T
    out = []
    for i in range(Y.shape[1]):
        b = np.zeros(r)
        for _ in range(50):
            z = Z @ b
            p, q = marlhf._sigmoid(z), marlhf._sigmoid(-z)
            g = Z.T @ ((1 - Y[:, i]) * p - Y[:, i] * q) + ridge * b
            Hm = (Z * (p * q)[:, None]).T @ Z + ridge * np.eye(r)
            b -= np.linalg.solve(Hm, g)
        out.append(Vt[:r].T @ b)
    return X, np.stack(out)


def test_the_fit_takes_the_svd_of_the_distinct_rows_only(monkeypatch):
    prefs = _prefs(3000, 0)
    shapes = []
    svd = np.linalg.svd

    def spy(a, *args, **kwargs):
        shapes.append(np.shape(a))
        return svd(a, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "svd", spy)
    fit = bradley_terry_mle(prefs, ridge=1e-3)
    monkeypatch.undo()
    # unilateral data: pairs of joint actions among 7 => at most 7·6 + 1 distinct differences
    assert len(shapes) == 1 and shapes[0][0] <= 43 and shapes[0][1] == 9
    X, theta = _full_row_fit(prefs, 1e-3)
    # XᵀX has integer entries: the gram is exact either way
    np.testing.assert_array_equal(fit.gram, X.T @ X + 1e-3 * np.eye(9))
    # |θ| ≲ 5 (rewards times the scale c = 5); summation order only: 3000·eps·cond ≈ 1e-11
    np.testing.assert_allclose(fit.theta.reshape(2, -1), theta, rtol=0, atol=1e-10)


@pytest.mark.parametrize("H, S", [(1, 1), (2, 2)])
def test_the_certificate_makes_one_batched_occupancy_call(monkeypatch, H, S):
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(S), size=(H, S, 2, 2))
    R = rng.uniform(size=(2, H, S, 2, 2))
    beh = np.full((H, S, 2, 2), 0.25)
    t1, t2 = (sample_game_episodes(P, R, beh, 400, rng=rng) for _ in range(2))
    prefs = sample_preferences(t1, t2, R, rng=rng)
    cands = [
        np.einsum(
            "hsa,hsb->hsab",
            np.eye(2)[rng.integers(2, size=(H, S))],
            np.eye(2)[rng.integers(2, size=(H, S))],
        )
        for _ in range(5)
    ]
    calls = []
    occ = marlhf.finite_horizon_occupancy

    def spy(fh, pi):
        calls.append(np.shape(pi))
        return occ(fh, pi)

    monkeypatch.setattr(marlhf, "finite_horizon_occupancy", spy)
    out = marlhf_equilibrium(prefs, P, cands, beta=2.0)
    monkeypatch.undo()
    n_dev = 2 ** (H * S)
    assert calls == [(5 * (1 + 2 * n_dev), H, S, 4)]
    # the same gaps from one candidate at a time, each deviation's occupancy on its own
    fit = out.fit
    quad = marlhf._inverse_gram_norm(prefs, 1e-3)
    theta = fit.theta.reshape(2, -1)
    for c, pol in enumerate(cands):
        psi = np.asarray(
            occ(
                marlhf.FiniteHorizonMDP(P.reshape(H, S, 4, S), np.zeros((H, S, 4))),
                pol.reshape(H, S, 4),
            )
        ).ravel()
        total = 0.0
        for i in range(2):
            best = 0.0
            for dv in marlhf._player_deviations(H, S, 2):
                x, y = pol.sum(3), pol.sum(2)
                joint = (
                    dv[..., :, None] * y[..., None, :]
                    if i == 0
                    else x[..., :, None] * dv[..., None, :]
                )
                fh = marlhf.FiniteHorizonMDP(P.reshape(H, S, 4, S), np.zeros((H, S, 4)))
                d = np.asarray(occ(fh, joint.reshape(H, S, 4))).ravel() - psi
                best = max(
                    best, float(theta[i] @ d + 2.0 * np.sqrt(max(float(quad(d[None])[0]), 0.0)))
                )
            total += best
        assert out.gap_ucb[c] == pytest.approx(total, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_grouped_fit_equals_the_full_row_fit_on_multi_step_data(seed):
    # pairs that agree at some steps (a 0 block in x_k) and repeated rows: the grouping key must
    # identify x_k exactly; the gram is bit-equal and θ equal up to summation order
    rng = np.random.default_rng(seed)
    H, S, A, K = 3, 2, (2, 2), 60
    st, ac = rng.integers(0, S, size=(K, H + 1)), rng.integers(0, 2, size=(K, H, 2))
    e1 = EpisodeDataset(st, ac, np.zeros((K, H, 2)), S=S, A=A)
    keep = rng.random((K, H + 1)) < 0.6
    st2 = np.where(keep, st, rng.integers(0, S, size=(K, H + 1)))
    ac2 = np.where(keep[:, :H, None], ac, rng.integers(0, 2, size=(K, H, 2)))
    e2 = EpisodeDataset(st2, ac2, np.zeros((K, H, 2)), S=S, A=A)
    prefs = PreferenceDataset(e1, e2, rng.integers(0, 2, size=(K, 2)))
    fit = bradley_terry_mle(prefs, ridge=1e-2)
    X, theta = _full_row_fit(prefs, 1e-2)
    np.testing.assert_array_equal(fit.gram, X.T @ X + 1e-2 * np.eye(X.shape[1]))
    np.testing.assert_allclose(fit.theta.reshape(2, -1), theta, rtol=0, atol=1e-10)
