"""LSTD(λ) as γ → 1 against the exact rational estimate of the stored transitions.

``θ̂`` solves ``Âθ = b̂`` with ``Â = (1/n) Σ_t z_t (φ_t − γφ'_t)ᵀ``, ``b̂ = (1/n) Σ_t z_t r_t``,
``z_t = γλ z_{t−1} + φ_t`` (Bradtke & Barto 1996; Boyan 2002). The reference solves that system in
exact rational arithmetic from the stored floats. ``σ_min(Â) ~ 1−γ`` and the values ``φθ̂`` have
the size ``max|r|/(1−γ)``: one solve erred by ``ε·max|φθ̂|/(1−γ)``, 1.4e11·ε relative (3e-5) at
``γ = 1 − 1e-12`` for one-hot features; refined in difference form it is a few ``ε``.
"""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest

from rltheory.algorithms.critics import lstd_estimate
from rltheory.testing import exact_solve


def _exact(f0, r, f1, g, lam):
    n, k = f0.shape
    g, lam = Fr(g), Fr(lam)
    z = [Fr(0)] * k
    A = [[Fr(0)] * k for _ in range(k)]
    b = [Fr(0)] * k
    for t in range(n):
        z = [g * lam * z[j] + Fr(float(f0[t, j])) for j in range(k)]
        for i in range(k):
            b[i] += z[i] * Fr(float(r[t]))
            for j in range(k):
                A[i][j] += z[i] * (Fr(float(f0[t, j])) - g * Fr(float(f1[t, j])))
    return np.array([float(x) for x in exact_solve(A, b)])


@pytest.mark.parametrize("features", ["constant+1", "one-hot"])
@pytest.mark.parametrize("gamma", [1 - 1e-6, 1 - 1e-9, 1 - 1e-12])
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_lstd_values_match_the_exact_sample_estimate_near_gamma_one(features, gamma, lam, seed):
    rng = np.random.default_rng(seed)
    S, n = 3, 30
    s = rng.integers(0, S, n + 1)
    if features == "one-hot":
        Phi = np.eye(S)
    else:
        Phi = np.c_[np.ones(S), rng.standard_normal((S, 1))]
    r = rng.standard_normal(n)
    f0, f1 = Phi[s[:-1]], Phi[s[1:]]
    theta, _, _ = lstd_estimate(f0, r, f1, gamma=gamma, lam=lam)
    ref = Phi @ _exact(f0, r, f1, gamma, lam)
    # a few roundings of values of size max|Phi theta|
    assert np.max(np.abs(Phi @ theta - ref)) <= 64 * np.finfo(float).eps * np.max(np.abs(ref))
