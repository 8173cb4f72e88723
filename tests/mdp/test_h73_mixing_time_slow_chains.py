"""mixing_time is exact on slowly mixing chains, against an 80-digit reference.

Repeated squaring left each row's entry near 1 with an absolute error ``u`` that every squaring
doubled, so after ``k`` squarings ``2^k u`` leaked into the small entries: ``t_mix(1/4)`` of the
two-state chain with laziness ``1 − 1e-12`` came out 346581256853 instead of 346581257254, and 57
of 120 seeded slow chains of the kinds drawn below (lazy, near-deterministic cycles, nearly decomposable; mixing
times 3e3..1.3e12) were off by up to 5.9e6 steps.

Reference: ``d(t) = max_s ½ Σ_j |P^t(s, j) − μ_j|`` in 80-digit decimal arithmetic (the float
entries converted exactly; ``μ`` by exact rational elimination), ``P^t`` by repeated squaring
(error ``≲ t·10^-78``), ``t_mix`` by bisection on the non-increasing ``d``.
"""

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp.mixing import mixing_time, tv_distances
from rltheory.testing import exact_solve

_PREC = 80


def _stationary(P):
    """μᵀ(I − P + 11ᵀ) = 1ᵀ in rationals (a unichain P)."""
    S = len(P)
    M = [[Fraction(int(i == j)) - P[j][i] + 1 for j in range(S)] for i in range(S)]
    return exact_solve(M, [Fraction(1)] * S)


def _dec(q):
    return Decimal(q.numerator) / Decimal(q.denominator)


def _mul(A, B):
    S = len(A)
    return [[sum(A[i][k] * B[k][j] for k in range(S)) for j in range(S)] for i in range(S)]


def _power(P, t):
    S = len(P)
    R = [[Decimal(int(i == j)) for j in range(S)] for i in range(S)]
    B = P
    while t:
        if t & 1:
            R = _mul(R, B)
        B, t = _mul(B, B), t >> 1
    return R


def _tmix_reference(P, eps):
    with localcontext() as ctx:
        ctx.prec = _PREC
        Pq = [[Fraction(float(x)) for x in row] for row in P]
        assert all(sum(row) == 1 for row in Pq)  # a stochastic matrix exactly
        mu = [_dec(m) for m in _stationary(Pq)]
        Pd = [[_dec(x) for x in row] for row in Pq]
        e = Decimal(eps)

        def d(t):
            M = _power(Pd, t)
            return max(sum(abs(M[s][j] - mu[j]) for j in range(len(P))) / 2 for s in range(len(P)))

        if d(0) <= e:
            return 0
        hi = 1
        while d(hi) > e:
            hi *= 2
        lo = hi // 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if d(mid) <= e else (mid, hi)
        return hi


@pytest.mark.parametrize(
    ("laziness", "eps", "expected"),
    [
        # d(t) = λ^t / 2 with λ = 2·laziness − 1 (eigenvalue of the lazy swap), so
        # t_mix(ε) = ⌈log(2ε)/log λ⌉; values from the 80-digit reference below
        (1 - 1e-12, 0.25, 346581257254),
        (1 - 1e-12, 0.01, 1956054774009),
        (1 - 2**-40, 0.25, 381061692393),
        (1 - 2**-40, 0.01, 2150657391296),
        (1 - 1e-9, 0.01, 1956011557),
    ],
)
def test_lazy_swap_closed_form(laziness, eps, expected):
    P = np.array([[laziness, 1 - laziness], [1 - laziness, laziness]])
    assert _tmix_reference(P, eps) == expected
    assert int(mixing_time(P, eps)) == expected


def _slow_chain(rng, kind):
    S = int(rng.integers(2, 5))
    delta = float(rng.choice([1e-5, 1e-7, 1e-9, 1e-11]))
    Q = rng.dirichlet(np.ones(S), size=S)
    if kind == "lazy":
        P = (1 - delta) * np.eye(S) + delta * Q
    elif kind == "cycle":  # near-deterministic cycle: eigenvalues of modulus near 1
        P = (1 - delta) * np.roll(np.eye(S), 1, axis=1) + delta * Q
    else:  # two blocks coupled by delta
        P, h = Q.copy(), S // 2
        P[:h, h:] *= delta
        P[h:, :h] *= delta
        P /= P.sum(1, keepdims=True)
    # entries on the grid 2^-53, the largest of each row the exact complement: rows sum to 1 exactly
    P = np.round(P * 2.0**53) / 2.0**53
    for s in range(S):
        j = int(np.argmax(P[s]))
        P[s, j] = 0.0
        P[s, j] = 1.0 - P[s].sum()
    return P


@pytest.mark.parametrize("coupling", [2.0**-30, 2.0**-40])
def test_balanced_blocks(coupling):
    # two blocks [[1/2, 1/2], [1/2, 1/2]] coupled by 2^-30 / 2^-40: no entry of a row above 1/2, so
    # forming the largest entry as a complement (2b3d9b6) did not help: 190530845645 for 190530846197
    d = coupling
    P = np.array(
        [
            [0.5 - d, 0.5 - d, d, d],
            [0.5 - d, 0.5 - d, d, d],
            [d, d, 0.5 - d, 0.5 - d],
            [d, d, 0.5 - d, 0.5 - d],
        ]
    )
    for eps in (0.25, 0.01):
        assert int(mixing_time(P, eps)) == _tmix_reference(P, eps)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["lazy", "cycle", "blocks"])
def test_slow_chains_match_reference(seed, kind):
    rng = np.random.default_rng(seed)
    P = _slow_chain(rng, kind)
    for eps in (0.25, 0.01):
        assert int(mixing_time(P, eps)) == _tmix_reference(P, eps), (P.tolist(), eps)


def test_batch_of_lazy_swaps():
    chains = [np.array([[lz, 1 - lz], [1 - lz, lz]]) for lz in (1 - 1e-12, 1 - 2**-40, 1 - 1e-9)]
    assert mixing_time(np.stack(chains), 0.01).tolist() == [
        1956054774009,
        2150657391296,
        1956011557,
    ]


def test_tv_distances_of_slow_chain_against_reference():
    # d(t) after t = 2000 steps of the lazy swap with laziness 1 − 1e-12: (2λ − 1)^t / 2 in decimals
    lz = 1 - 1e-12
    P = np.array([[lz, 1 - lz], [1 - lz, lz]])
    with localcontext() as ctx:
        ctx.prec = _PREC
        lam = 2 * Decimal(lz) - 1
        ref = float(lam**2000 / 2)
    got = float(tv_distances(P, 2000)[-1])
    assert abs(got - ref) <= 64 * 2.0**-53 * ref
