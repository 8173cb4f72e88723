"""Offline Markov games at the edges: overflowing rewards in the exact gap."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from rltheory.algorithms.offline_games import equilibrium_gap


# ----------------------------------------------------------------------------- exact gap, huge rewards
def test_equilibrium_gap_with_rewards_near_the_float_maximum_is_not_nan():
    """H = 2 steps of rewards 1e308: every value is 2e308 (beyond the float range) but the gap is
    representable. Constant rewards: the gap of any profile is 0; the recursion formed inf − inf
    and returned NaN."""
    P = np.ones((2, 1, 2, 2, 1))
    R = np.full((2, 2, 1, 2, 2), 1e308)
    cc = np.zeros((2, 1, 2, 2))
    cc[:, 0, 0, 0] = 1.0
    assert equilibrium_gap(P, R, cc) == 0.0
    assert equilibrium_gap(P, R, cc, concept="ce") == 0.0


def test_equilibrium_gap_near_the_float_maximum_matches_exact_arithmetic():
    """Player 1 gains r(1, 0) − r(0, 0) = 1.2e308 − 1e308 per step by deviating from (0, 0) in both
    steps; player 2 gains nothing. Exact gap (rational arithmetic on the stored floats):
    2 (fl(1.2e308) − fl(1e308)); the float recursion handles values ≤ 2.4e308 / 2^1024 after its
    scaling, so its error is a few ulps of 2.4e308 (bounded here by 8 eps · H · max R)."""
    P = np.ones((2, 1, 2, 2, 1))
    R = np.full((2, 2, 1, 2, 2), 1e308)
    R[0, :, 0, 1, 0] = 1.2e308
    cc = np.zeros((2, 1, 2, 2))
    cc[:, 0, 0, 0] = 1.0
    exact = 2 * (Fraction(1.2e308) - Fraction(1e308))
    for concept in ("nash", "cce", "ce"):
        got = equilibrium_gap(P, R, cc, concept=concept)
        assert math.isfinite(got)
        assert abs(Fraction(got) - exact) <= Fraction(8 * np.finfo(float).eps * 2 * 1.2e308)


def test_equilibrium_gap_scales_exactly_with_a_power_of_two():
    """Gap(2^k R) = 2^k Gap(R) bit for bit (the recursion only adds, multiplies and maxes), from
    2^-1000 to 2^1000 (H = 3 steps of rewards ≤ 1: values ≤ 3·2^1000, inside the range)."""
    rng = np.random.default_rng(7)
    H, S = 3, 2
    P = rng.dirichlet(np.ones(S), size=(H, S, 2, 3))
    R = rng.random((2, H, S, 2, 3))
    x = rng.dirichlet(np.ones(2), size=(H, S))
    y = rng.dirichlet(np.ones(3), size=(H, S))
    pol = x[..., :, None] * y[..., None, :]
    base = equilibrium_gap(P, R, pol)
    assert base > 0
    for k in (-1000, -300, 300, 1000):
        assert equilibrium_gap(P, np.ldexp(R, k), pol) == math.ldexp(base, k)
