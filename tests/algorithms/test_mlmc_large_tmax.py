"""mlmc_expectation at large T_max.

The truncated average ``E X^{(j_max)}`` was formed by enumerating all ``2^{j_max}`` terms
``νᵀ P^k f̄``: 9 s at ``T_max = 2^20`` and, at ``T_max = 2^40``, an attempt to allocate ``2^40``
floats (``MemoryError``). Beyond ``j_max = 16`` the level means now come from doubling
``P^{2^j}``; they agree with the closed form of a two-state chain and with the enumeration.
"""

from __future__ import annotations

import numpy as np
import pytest

import rltheory.algorithms.mlmc as mlmc
from rltheory.algorithms.mlmc import mlmc_expectation


def _two_state_mean(N: float) -> float:
    # P = [[1 - a, a], [b, 1 - b]] with a = 0.1, b = 0.2, ν = e_0, f̄ = e_0:
    # νᵀ P^k f̄ = π_0 + (1 − π_0) λ^k with π_0 = b/(a + b) = 2/3, λ = 1 − a − b = 0.7
    # (Levin, Peres & Wilmer 2017, §1.1), so the mean over k < N is
    # π_0 + (1 − π_0)(1 − λ^N)/(N (1 − λ)).
    return 2 / 3 + (1 / 3) * (1 - 0.7**N) / (N * 0.3)


@pytest.mark.parametrize("k", [17, 20, 40, 64, 1000])
def test_truncated_average_matches_the_two_state_closed_form(k):
    P = np.array([[0.9, 0.1], [0.2, 0.8]])
    E, Etr = mlmc_expectation(P, [1.0, 0.0], [1.0, 0.0], 2**k)
    np.testing.assert_allclose(Etr, _two_state_mean(2.0**k), rtol=1e-13)
    np.testing.assert_allclose(E, Etr, rtol=1e-13)  # the levels telescope


def test_doubling_agrees_with_enumeration(monkeypatch):
    rng = np.random.default_rng(7)
    P = rng.random((5, 5))
    P /= P.sum(axis=1, keepdims=True)
    nu = rng.random(5)
    nu /= nu.sum()
    f = rng.standard_normal((5, 3))
    E1, T1 = mlmc_expectation(P, nu, f, 2**12 + 5)  # enumerated
    monkeypatch.setattr(mlmc, "_ENUMERATE_LEVELS", 0)
    E2, T2 = mlmc_expectation(P, nu, f, 2**12 + 5)  # doubled
    # |f̄| <= 3.5: both within a few hundred ulps of the same sums
    np.testing.assert_allclose(T2, T1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(E2, E1, rtol=0, atol=1e-12)
