"""marlhf_equilibrium on valid float32 models and on fits that cannot certify anything.

Regressions:

* a ``fit`` with a NaN in ``theta`` (or ``gram``) made every deviation's UCB term NaN, which the
  maximum with the zero deviation dropped: every candidate was certified a Nash gap of 0;
* a ``fit.gram`` that is not positive definite gave negative ``‖Δ‖²_{Σ^{-1}}``, whose β-term was
  clipped to 0 (a smaller certificate than any positive definite Σ gives);
* a float32 ``P`` or ``mu`` (accepted by FiniteHorizonMDP and sample_game_episodes) was cast to
  float64 and refused at float64's 1e-8 ("each P[h, s, a, :] must sum to 1 ... 0.99999997"), and a
  float32 candidate's float64 copy was refused by the occupancy computation with
  "each pi[s, :] must sum to 1", naming no candidate.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.marlhf import BradleyTerryResult, bradley_terry_mle, marlhf_equilibrium
from rltheory.algorithms.offline_games import _equilibrium_gap
from rltheory.mdp.offline_data import sample_game_episodes, sample_preferences

H, S = 2, 2


def _game(seed: int = 3):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(S), size=(H, S, 2, 2))
    R = rng.uniform(size=(2, H, S, 2, 2))
    t1, t2 = (
        sample_game_episodes(P, R, np.full((H, S, 2, 2), 0.25), 300, rng=rng) for _ in range(2)
    )
    prefs = sample_preferences(t1, t2, R, rng=rng)
    prod = [
        np.einsum(
            "hsa,hsb->hsab",
            rng.dirichlet(np.ones(2), size=(H, S)),
            rng.dirichlet(np.ones(2), size=(H, S)),
        )
        for _ in range(4)
    ]
    pure = [
        np.einsum(
            "hsa,hsb->hsab",
            np.eye(2)[rng.integers(2, size=(H, S))],
            np.eye(2)[rng.integers(2, size=(H, S))],
        )
        for _ in range(3)
    ]
    return P, R, prefs, prod + pure


def _with(fit, **changes):
    fields = dict(theta=fit.theta, gram=fit.gram, converged=True, iterations=0, trace=fit.trace)
    fields.update(changes)
    return BradleyTerryResult(**fields)


@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_a_fit_with_a_nan_is_refused_not_certified_zero(beta):
    P, R, prefs, cands = _game()
    fit = bradley_terry_mle(prefs)
    theta = fit.theta.copy()
    theta[1, 0, 1, 0, 1] = np.nan
    with pytest.raises(
        ValueError, match=r"fit\.theta must be finite; fit\.theta\[1, 0, 1, 0, 1\] = nan"
    ):
        marlhf_equilibrium(prefs, P, cands, beta=beta, fit=_with(fit, theta=theta))
    gram = fit.gram.copy()
    gram[2, 3] = np.inf
    with pytest.raises(ValueError, match=r"fit\.gram must be finite; fit\.gram\[2, 3\] = inf"):
        marlhf_equilibrium(prefs, P, cands, beta=beta, fit=_with(fit, gram=gram))


def test_a_gram_that_is_not_positive_definite_is_refused():
    P, R, prefs, cands = _game()
    fit = bradley_terry_mle(prefs)
    with pytest.raises(
        ValueError, match=r"fit\.gram must be positive definite .* smallest eigenvalue is -"
    ):
        marlhf_equilibrium(prefs, P, cands, beta=1.0, fit=_with(fit, gram=-fit.gram))
    g = fit.gram.copy()
    g[0, 1] += 0.5
    with pytest.raises(
        ValueError,
        match=r"fit\.gram must be symmetric .*fit\.gram\[0, 1\] = .* but fit\.gram\[1, 0\]",
    ):
        marlhf_equilibrium(prefs, P, cands, beta=1.0, fit=_with(fit, gram=g))


@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_float32_models_and_candidates_are_read_at_float32_precision(beta):
    P, R, prefs, cands = _game()
    fit = bradley_terry_mle(prefs)
    P32 = P.astype(np.float32)
    assert np.abs(P32.astype(np.float64).sum(-1) - 1.0).max() > 1e-8  # refused before
    mu32 = np.array([0.3, 0.7], dtype=np.float32)
    c32 = [c.astype(np.float32) for c in cands]
    got = marlhf_equilibrium(prefs, P32, c32, beta=beta, mu=mu32, fit=fit)
    # reference: the float64 copies with their rows divided by their sums
    P64 = P32.astype(np.float64)
    P64 /= P64.sum(-1, keepdims=True)
    mu64 = mu32.astype(np.float64) / mu32.astype(np.float64).sum()
    c64 = [c.astype(np.float64) / c.astype(np.float64).sum(axis=(2, 3), keepdims=True) for c in c32]
    want = marlhf_equilibrium(prefs, P64, c64, beta=beta, mu=mu64, fit=fit)
    np.testing.assert_allclose(got.gap_ucb, want.gap_ucb, rtol=1e-13, atol=1e-13)
    assert got.candidate == want.candidate
    # float32 candidates alone (float64 P): the occupancy computation refused their float64 copies
    alone = marlhf_equilibrium(prefs, P, c32, beta=beta, fit=fit)
    ref = marlhf_equilibrium(prefs, P, c64, beta=beta, fit=fit)
    np.testing.assert_allclose(alone.gap_ucb, ref.gap_ucb, rtol=1e-13, atol=1e-13)


def test_the_gap_with_the_true_rewards_and_beta_zero_is_nashconv():
    # NashConv(π) = Σ_i max_{π_i'} V_i(π_i', π_-i) − V_i(π): the certificate with θ = r, β = 0
    P, R, prefs, cands = _game(5)
    fit = bradley_terry_mle(prefs)
    mu = np.array([0.25, 0.75])
    out = marlhf_equilibrium(prefs, P, cands, beta=0.0, mu=mu, fit=_with(fit, theta=R))
    nc = [_equilibrium_gap(P, R, c, "nash", mu) for c in cands]
    np.testing.assert_allclose(out.gap_ucb, nc, rtol=0, atol=1e-13)
    # enumeration (β > 0, here below every term's resolution) agrees with the backward induction
    tiny = marlhf_equilibrium(prefs, P, cands, beta=1e-300, mu=mu, fit=_with(fit, theta=R))
    np.testing.assert_allclose(tiny.gap_ucb, nc, rtol=0, atol=1e-13)
