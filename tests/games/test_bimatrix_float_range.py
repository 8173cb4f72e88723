"""Bimatrix NashConv at payoffs near the float range, against exact rational NashConv.

NashConv ``[max_i (Ay)_i − xᵀAy] + [max_j (xᵀB)_j − xᵀBy]`` of payoffs ``±9e307`` is in range at
most strategy pairs (0 at an equilibrium), but the round-off allowance summed the magnitudes of the
four terms (up to ``4·9e307``) and overflowed: the certificate read ``inf`` even at exact equilibria.
Reference: exact rational arithmetic on ``x/Σx``, ``y/Σy``.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np

from rltheory.games import bimatrix_nash_conv, nash_equilibria
from rltheory.games.zoo import battle_of_the_sexes

FMAX = float(np.finfo(np.float64).max)


def _exact_nash_conv(A: np.ndarray, B: np.ndarray, x: np.ndarray, y: np.ndarray) -> Fraction:
    xf, yf = [Fraction(float(t)) for t in x], [Fraction(float(t)) for t in y]
    xf, yf = [t / sum(xf) for t in xf], [t / sum(yf) for t in yf]
    m, n = A.shape
    Ay = [sum(Fraction(float(A[i, j])) * yf[j] for j in range(n)) for i in range(m)]
    xB = [sum(xf[i] * Fraction(float(B[i, j])) for i in range(m)) for j in range(n)]
    return (max(Ay) - sum(a * b for a, b in zip(xf, Ay, strict=True))) + (
        max(xB) - sum(a * b for a, b in zip(xB, yf, strict=True))
    )


def test_nash_conv_at_an_exact_equilibrium_of_a_huge_game_is_finite():
    # battle of the sexes x 2^1022 (payoffs up to 8.99e307): its three equilibria have NashConv 0.
    # Before: inf at every one.
    U = battle_of_the_sexes() * 2.0**1022
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        eqs = nash_equilibria(U[0], U[1])
        assert len(eqs) == 3
        for x, y in eqs:
            cert = bimatrix_nash_conv(U[0], U[1], x, y)
            assert np.isfinite(cert)
            assert Fraction(cert) >= _exact_nash_conv(U[0], U[1], x, y)
            assert cert <= 1e-12 * 2.0**1022


def test_nash_conv_at_the_float_range_bounds_the_exact_value():
    rng = np.random.default_rng(31)
    bad = []
    for t in range(120):
        m, n = (int(v) for v in rng.integers(1, 5, size=2))
        A, B = rng.uniform(-1.0, 1.0, size=(2, m, n)) * FMAX
        x, y = rng.dirichlet(np.full(m, 0.5)), rng.dirichlet(np.full(n, 0.5))
        if t % 3 == 0:
            x, y = np.eye(m)[rng.integers(m)], np.eye(n)[rng.integers(n)]
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            cert = bimatrix_nash_conv(A, B, x, y)
        exact = _exact_nash_conv(A, B, x, y)
        if exact > FMAX:
            ok = cert == np.inf
        else:  # finite, at least the exact value, within round-off of it
            ok = (
                np.isfinite(cert)
                and Fraction(cert) >= exact
                and cert - float(exact) <= 1e-13 * FMAX
            )
        if not ok:
            bad.append((t, float(exact), cert))
    assert not bad, f"(game, exact NashConv, certified): {bad[:5]}"
