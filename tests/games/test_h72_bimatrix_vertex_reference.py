"""nash_equilibria against an independent exact reference: vertex enumeration of both
best-response polytopes in rational arithmetic.

For ``B' = B − min B + 1 > 0`` the polytope ``P = {x ≥ 0 : B'ᵀx ≤ 1}`` has labels ``i`` where
``x_i = 0`` and ``m + j`` where ``(B'ᵀx)_j = 1``; likewise ``Q = {y ≥ 0 : A'y ≤ 1}``. The game is
degenerate iff some vertex has more than ``m`` (resp. ``n``) labels, and the extreme equilibria
are the completely labelled vertex pairs ``(x, y) ≠ 0``, normalised (von Stengel 2007, §3.4,
Thm 3.4). The reference chooses every set of ``m`` tight constraints and solves it exactly, which
shares nothing with support enumeration. Checked: the degeneracy warning is given iff the game is
degenerate; every returned profile is the correctly rounded image of an exact equilibrium and is
listed once; on a nondegenerate game every equilibrium is listed. Payoffs at ``2^±60``,
``1e±300``, subnormal, float32, mixed magnitudes, ``1×k`` and ``k×1`` games, integer ties.
"""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.games.bimatrix import DegenerateGameWarning, nash_equilibria
from rltheory.testing import exact_solve


def _solve(M: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    try:
        return exact_solve(M, b)
    except StopIteration:  # (a singular system: no vertex)
        return None


def _vertices(M: list[list[Fraction]]) -> dict[tuple[Fraction, ...], frozenset[int]]:
    """Vertices ``z ≠ 0`` of ``{z ≥ 0 : Mᵀz ≤ 1}`` (``M`` k×l, positive) with their labels:
    ``i < k`` where ``z_i = 0``, ``k + j`` where ``(Mᵀz)_j = 1``."""
    k, l = len(M), len(M[0])
    out = {}
    for S in itertools.combinations(range(k + l), k):
        rows = [
            [Fraction(int(i == s)) for i in range(k)] if s < k else [M[i][s - k] for i in range(k)]
            for s in S
        ]
        z = _solve(rows, [Fraction(int(s >= k)) for s in S])
        if z is None or min(z) < 0 or all(t == 0 for t in z):
            continue
        pay = [sum((M[i][j] * z[i] for i in range(k)), Fraction(0)) for j in range(l)]
        if max(pay) > 1:
            continue
        zeros = [i for i in range(k) if z[i] == 0]
        out[tuple(z)] = frozenset(zeros + [k + j for j in range(l) if pay[j] == 1])
    return out


def _reference(A: np.ndarray, B: np.ndarray) -> tuple[bool, set]:
    """(degenerate, extreme equilibria as exact tuples) of the float payoffs ``A, B``."""
    m, n = A.shape
    Af = [[Fraction(float(v)) for v in r] for r in A]
    Bf = [[Fraction(float(v)) for v in r] for r in B]
    la, lb = min(map(min, Af)), min(map(min, Bf))
    P = _vertices([[v - lb + 1 for v in r] for r in Bf])
    Q0 = _vertices([[Af[i][j] - la + 1 for i in range(m)] for j in range(n)])
    # Q's labels in the game's numbering: y_j = 0 is m + j, (A'y)_i = 1 is i
    Q = {y: frozenset(m + t if t < n else t - n for t in lab) for y, lab in Q0.items()}
    degenerate = any(len(t) > m for t in P.values()) or any(len(t) > n for t in Q.values())
    eqs = set()
    for x, lx in P.items():
        for y, ly in Q.items():
            if lx | ly == frozenset(range(m + n)):
                sx, sy = sum(x), sum(y)
                eqs.add((tuple(t / sx for t in x), tuple(t / sy for t in y)))
    return degenerate, eqs


def _games() -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(72)
    out = []
    for t in range(48):
        m, n = (int(v) for v in rng.integers(1, 5, 2))
        if t % 8 == 0:
            m = 1
        elif t % 8 == 1:
            n = 1
        kind = t % 6
        if kind == 0:  # integer ties: degenerate games
            A, B = (rng.integers(-1, 2, (m, n)).astype(np.float64) for _ in range(2))
        elif kind == 1:
            s = 2.0 ** float(rng.choice([-60, 60]))
            A, B = (rng.integers(-3, 4, (m, n)) * s for _ in range(2))
        elif kind == 2:
            s = float(rng.choice([1e300, 1e-300, 1e-310]))
            A, B = (rng.standard_normal((m, n)) * s for _ in range(2))
        elif kind == 3:
            A, B = (rng.standard_normal((m, n)).astype(np.float32) for _ in range(2))
        elif kind == 4:  # magnitudes from 1e-300 to 1e300 in one game
            A, B = (
                rng.standard_normal((m, n)) * 10.0 ** rng.choice([-300, 0, 300], (m, n))
                for _ in range(2)
            )
        else:  # integer payoffs perturbed by an ulp: nondegenerate, near-degenerate in floats
            base = rng.integers(0, 3, (m, n)).astype(np.float64)
            A = base * (1.0 + 2.0**-52 * rng.integers(-2, 3, (m, n)))
            B = rng.integers(0, 3, (m, n)) * (1.0 + 2.0**-52 * rng.integers(-2, 3, (m, n)))
        out.append((f"{t}-{m}x{n}-kind{kind}", A, B))
    return out


@pytest.mark.parametrize(("name", "A", "B"), _games(), ids=[g[0] for g in _games()])
def test_equilibria_match_exact_vertex_enumeration(name: str, A: np.ndarray, B: np.ndarray):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = nash_equilibria(A, B)
    warned = any(issubclass(w.category, DegenerateGameWarning) for w in caught)
    degenerate, eqs = _reference(np.asarray(A, np.float64), np.asarray(B, np.float64))
    assert warned == degenerate
    rounded = {(tuple(float(t) for t in x), tuple(float(t) for t in y)): (x, y) for x, y in eqs}
    keys = [(tuple(x.tolist()), tuple(y.tolist())) for x, y in got]
    assert len(set(keys)) == len(keys)  # each equilibrium once
    assert set(keys) <= set(rounded)  # each the rounding of an exact equilibrium
    if not degenerate:
        assert set(keys) == set(rounded)  # and none missed
