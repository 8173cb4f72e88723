"""Occupancy measures at discounts close to 1: still distributions (bellman.state_occupancy)."""

from fractions import Fraction

import numpy as np
import pytest

from rltheory._validate import check_occupancy
from rltheory.mdp import FiniteMDP, occupancy_measure, random_mdp, state_occupancy
from rltheory.testing import exact_solve

EPS = np.finfo(np.float64).eps


@pytest.mark.parametrize("gamma", [1 - 1e-9, 1 - 1e-12, float(np.nextafter(1.0, 0.0) - 2 * EPS)])
def test_the_occupancy_sums_to_one_near_gamma_one(gamma):
    # d = (1−γ) μ^T (I − γP_π)^{-1} sums to 1 exactly; the solve alone was off by 1.7e-7 at
    # γ = 1 − 1e-9 (refused by check_occupancy, 1e-8·(1+√SA)) and by 0.15 at γ = 1 − 1e-15
    rng = np.random.default_rng(1)
    for _ in range(20):
        S, A = 5, 2
        P = rng.dirichlet(np.full(S, 0.3), size=(S, A))
        m = FiniteMDP(P, rng.normal(size=(S, A)), gamma=gamma)
        pi = rng.integers(0, A, size=S)
        d = state_occupancy(m, pi)
        assert np.all(d >= 0) and abs(float(d.sum()) - 1.0) <= 4 * S * EPS
        check_occupancy(occupancy_measure(m, pi), "d")
        # flow: d = (1−γ) μ + γ P_π^T d, to the solve's error times 1 − γ (plus round-off)
        flow = d - ((1 - gamma) * m.initial_distribution() + gamma * P[np.arange(S), pi].T @ d)
        assert np.abs(flow).max() <= 1e-10


def _exact_occupancy(P, pi, gamma, mu):
    """(1−γ) μ^T (I − γP_π)^{-1} in fractions (rltheory.testing.exact_solve on the transposed system)."""
    S = len(mu)
    g = Fraction(gamma)
    M = [[(1 if i == j else 0) - g * Fraction(P[j, pi[j], i]) for j in range(S)] for i in range(S)]
    b = [(1 - g) * Fraction(mu[i]) for i in range(S)]
    return np.array([float(x) for x in exact_solve(M, b)])


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.9])
def test_the_occupancy_matches_exact_arithmetic(gamma):
    m = random_mdp(4, 3, gamma=gamma, rng=7, alpha=0.5)
    pi = np.array([2, 0, 1, 1])
    d = state_occupancy(m, pi)
    ref = _exact_occupancy(m.P, pi, gamma, np.asarray(m.initial_distribution()))
    np.testing.assert_allclose(d, ref, rtol=0, atol=20 * EPS / (1 - gamma))
