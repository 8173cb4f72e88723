"""Game certificates near the underflow threshold: the zero-sum duality gap, bimatrix NashConv, CE/CCE gaps.

Each certificate adds a relative round-off allowance (Higham's ``γ_n``) to the computed value; a
product with a subnormal result errs by up to half the subnormal spacing absolutely, which that
allowance misses. Without an underflow term, games with payoffs ~1e-310 (float32: ~1e-40) got
certificates below the exact values. References: exact rational arithmetic on the normalised
strategies ``x/Σx``, ``y/Σy``, ``μ/Σμ`` (the objects every certificate is about).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from rltheory.games import solve_zero_sum
from rltheory.games.bimatrix import bimatrix_nash_conv
from rltheory.games.correlated import cce_gap, ce_gap
from rltheory.games.matrix import duality_gap


def _normalised(v: np.ndarray) -> list[Fraction]:
    f = [Fraction(float(t)) for t in v]
    s = sum(f)
    return [t / s for t in f]


def _payoffs(M: np.ndarray, x: list[Fraction], y: list[Fraction]) -> tuple[list[Fraction], list[Fraction]]:
    m, n = M.shape
    My = [sum(Fraction(float(M[i, j])) * y[j] for j in range(n)) for i in range(m)]
    xM = [sum(x[i] * Fraction(float(M[i, j])) for i in range(m)) for j in range(n)]
    return My, xM


@pytest.mark.parametrize("dtype, scale", [(np.float32, 1e-40), (np.float64, 1e-310)])
def test_zero_sum_gap_counts_underflow(dtype: type, scale: float) -> None:
    # before: 125 of 300 random strategy pairs got duality_gap below the exact gap, and
    # solve_zero_sum reported gap 0 for games whose exact gap was up to 2.4e-47 (float32)
    rng = np.random.default_rng(11)
    bad = []
    for t in range(40):
        m, n = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        A = (rng.normal(size=(m, n)) * scale).astype(dtype)
        sol = solve_zero_sum(A)
        x0, y0 = rng.dirichlet(np.ones(m)).astype(dtype), rng.dirichlet(np.ones(n)).astype(dtype)
        for x, y, cert in ((np.asarray(sol.x), np.asarray(sol.y), sol.gap), (x0, y0, duality_gap(A, x0, y0))):
            Ay, xA = _payoffs(A, _normalised(x), _normalised(y))
            exact = max(Ay) - min(xA)
            if exact > Fraction(float(cert)):
                bad.append((t, float(exact), float(cert)))
    assert not bad, f"duality-gap certificates below the exact gap (game, exact, certified): {bad[:5]}"


def test_bimatrix_nash_conv_counts_underflow() -> None:
    # before: 89 of 300 probes at payoffs ~1e-310 certified below the exact NashConv
    rng = np.random.default_rng(12)
    bad = []
    for t in range(60):
        m, n = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        A, B = rng.normal(size=(m, n)) * 1e-310, rng.normal(size=(m, n)) * 1e-310
        x, y = rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(n))
        xf, yf = _normalised(x), _normalised(y)
        Ay, _ = _payoffs(A, xf, yf)
        _, xB = _payoffs(B, xf, yf)
        exact = (max(Ay) - sum(a * b for a, b in zip(xf, Ay, strict=True))) + (
            max(xB) - sum(a * b for a, b in zip(xB, yf, strict=True)))
        cert = bimatrix_nash_conv(A, B, x, y)
        if exact > Fraction(float(cert)):
            bad.append((t, float(exact), float(cert)))
    assert not bad, f"NashConv certificates below the exact value (game, exact, certified): {bad[:5]}"


def _exact_correlated_gap(U: np.ndarray, mu: np.ndarray, swap: bool) -> Fraction:
    """Largest gain of a deviation from the recommendation (``swap``: per recommended action, CE)."""
    shape = U.shape[1:]
    joint = list(itertools.product(*map(range, shape)))
    w = _normalised(np.array([mu[k] for k in joint]))
    best = Fraction(0)
    for i in range(U.shape[0]):
        for rec in (range(shape[i]) if swap else [None]):
            for b in range(shape[i]):
                gain = Fraction(0)
                for k, p in zip(joint, w, strict=True):
                    if rec is not None and k[i] != rec:
                        continue
                    dev = k[:i] + (b,) + k[i + 1:]
                    gain += p * (Fraction(float(U[(i, *dev)])) - Fraction(float(U[(i, *k)])))
                best = max(best, gain)
    return best


def test_correlated_gaps_count_underflow() -> None:
    # before: 182 of 400 CE/CCE probes at payoffs ~1e-310 certified below the exact gap
    rng = np.random.default_rng(13)
    bad = []
    for t in range(40):
        shape = tuple(int(v) for v in rng.integers(1, 4, size=2))
        U = rng.normal(size=(2, *shape)) * 1e-310
        mu = rng.dirichlet(np.ones(int(np.prod(shape)))).reshape(shape)
        for swap, fn in ((True, ce_gap), (False, cce_gap)):
            exact, cert = _exact_correlated_gap(U, mu, swap), fn(U, mu)
            if exact > Fraction(float(cert)):
                bad.append((t, fn.__name__, float(exact), float(cert)))
    assert not bad, f"CE/CCE gap certificates below the exact gap (game, which, exact, certified): {bad[:5]}"
