"""TD(λ) and LSTD(λ) at the edge of the float range: diverging iterates are a located error (as for
NAC's TDCritic), and an LSTD matrix beyond the range is a signed inf, as documented."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms.critics import lstd_estimate, random_features, td_linear
from rltheory.mdp.zoo import random_mdp


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_td_linear_that_diverges_names_the_step(lam):
    # α = 50 with features of norm ~1 and γ = 0.9: |1 − α‖φ‖²| > 1 and the iterates grow
    # geometrically; the result was theta = NaN with numpy's overflow warnings
    mdp = random_mdp(5, 2, gamma=0.9, rng=0)
    Phi = random_features(5, 3, rng=0)
    with pytest.raises(
        ValueError, match=r"td_linear diverged: theta overflowed at step t=\d+ of run \d"
    ):
        td_linear(
            mdp, np.full((5, 2), 0.5), Phi, steps=3000, step_size=50.0, rng=0, lam=lam, n_runs=2
        )


def test_td_linear_with_a_stable_step_is_unchanged():
    # same model, α = 0.05: converges towards θ* (final error well below the initial ‖Φθ*‖_D)
    mdp = random_mdp(5, 2, gamma=0.9, rng=0)
    res = td_linear(
        mdp, np.full((5, 2), 0.5), random_features(5, 3, rng=0), steps=3000, step_size=0.05, rng=0
    )
    assert res.trace["error_avg"][-1, 0] < 0.5 * res.trace["error"][0, 0]


@pytest.mark.parametrize("lam", [0.0, 1.0])
def test_lstd_A_hat_beyond_the_range_is_signed_inf_not_nan(lam):
    # features 2^1000: Â ~ 2^2000 is beyond the range; the docstring promises inf there, but the
    # direct sums gave NaN (inf − inf) with numpy's 'invalid value encountered in matmul'
    rng = np.random.default_rng(0)
    phi, r = rng.standard_normal((201, 2)), rng.random(200)
    th1, A1, b1 = lstd_estimate(phi[:-1], r, phi[1:], gamma=0.99, lam=lam)
    c = 2.0**1000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        th, A, b = lstd_estimate(phi[:-1] * c, r, phi[1:] * c, gamma=0.99, lam=lam)
    assert np.all(np.isinf(A)) and np.array_equal(np.sign(A), np.sign(A1))
    np.testing.assert_allclose(b, b1 * c, rtol=1e-15)
    np.testing.assert_allclose(th * c, th1, rtol=1e-12)
