"""``span_contraction_coefficient`` against exact rational arithmetic: it must be an upper bound.

Dobrushin's ``δ(P) = ½ max_{x,y} Σ_j |P(x, j) − P(y, j)|`` is evaluated in ``fractions.Fraction`` on
the float entries as given (Seneta 2006, §3.1). The float result must never lie below it (a
contraction coefficient used in a bound), and it is the smallest float that does not.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from rltheory.bounds.average import span_contraction_coefficient


def _exact_delta(P: np.ndarray) -> Fraction:
    rows = [
        [Fraction(float(x)) for x in row]
        for row in np.asarray(P, dtype=np.float64).reshape(-1, P.shape[-1])
    ]
    best = Fraction(0)
    for x in range(len(rows)):
        for y in range(x + 1, len(rows)):
            best = max(
                best,
                sum((abs(a - b) for a, b in zip(rows[x], rows[y], strict=True)), Fraction(0)) / 2,
            )
    return best


def _random_kernel(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    S = int(rng.integers(2, 7))
    shape = (S, S) if seed % 3 else (S, int(rng.integers(1, 4)), S)
    P = rng.random(shape)
    if seed % 5 == 0:
        P[P < 0.3] = 0.0  # sparse rows, exact zeros
    if seed % 7 == 0:
        P = P.astype(np.float32)
    P[..., 0] += P.sum(-1) == 0  # keep every row non-empty
    return P / P.sum(-1, keepdims=True)


@pytest.mark.parametrize("seed", range(120))
def test_coefficient_is_the_smallest_float_above_the_exact_value(seed):
    # the plain float formula returned values up to ~1.7e-16 below the exact δ (about half of these
    # seeds), so the bound sp(Pv) ≤ δ sp(v) built on it could fail in exact arithmetic
    P = _random_kernel(seed)
    delta = span_contraction_coefficient(P)
    exact = _exact_delta(P)
    assert Fraction(delta) >= exact
    assert Fraction(math.nextafter(delta, -math.inf)) < exact


def test_subnormal_half_is_rounded_up():
    # ½·(smallest subnormal) rounds to 0 in float arithmetic; the bound must be the next float up
    tiny = 5e-324
    P = np.array(
        [[1.0 - tiny, tiny], [1.0, 0.0]]
    )  # 1 − tiny rounds to 1: rows [1, tiny] and [1, 0]
    exact = _exact_delta(P)
    assert exact == Fraction(tiny) / 2
    assert span_contraction_coefficient(P) == tiny


def test_many_near_ties_fall_back_to_an_upper_bound():
    # every pair of rows attains the maximum (more pairs than are evaluated exactly), so the
    # a-priori allowance (S + 2)u, rounded up, is returned; it must still bound the exact δ
    S = 120
    rng = np.random.default_rng(3)
    perm = rng.permutation(S)
    P = np.zeros((S, S))
    P[np.arange(S), perm] = 1.0
    P = 0.7 * P + 0.3 / S
    a, b = P[0, perm[0]], P[0, perm[1]]  # every row holds one a and S − 1 copies of b
    exact = Fraction(float(a)) - Fraction(float(b))  # each pair differs by a − b in two columns
    delta = span_contraction_coefficient(P)
    assert Fraction(delta) >= exact
    assert Fraction(delta) - exact <= 4 * (S + 4) * Fraction(2) ** -53 * exact + Fraction(2) ** -52
