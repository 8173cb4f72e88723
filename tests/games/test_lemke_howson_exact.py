"""Lemke–Howson on games whose payoffs span many orders of magnitude, against exact rationals.

The float path runs on payoffs rescaled to [1, 2], where differences below round-off of the payoff
range vanish: it ended at complementary bases that are not equilibria of the game as given. The
endpoint is now checked in exact arithmetic (and the path redone exactly when it fails).
Reference: every equilibrium with equal-size supports by rational support enumeration (all of
them for the nondegenerate games used), written in the test independently of the library.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings

from rltheory.games import bimatrix_nash_conv, is_degenerate, lemke_howson, nash_equilibria
from rltheory.testing import matrix_games


def _solve(M, b):
    n = len(b)
    T = [list(r) + [v] for r, v in zip(M, b, strict=True)]
    for c in range(n):
        p = next((r for r in range(c, n) if T[r][c] != 0), None)
        if p is None:
            return None
        T[c], T[p] = T[p], T[c]
        for r in range(n):
            if r != c and T[r][c] != 0:
                f = T[r][c] / T[c][c]
                T[r] = [a - f * b for a, b in zip(T[r], T[c], strict=True)]
    return [T[r][n] / T[r][r] for r in range(n)]


def _exact_equilibria(A, B):
    Af = [[Fraction(float(v)) for v in r] for r in A]
    Bf = [[Fraction(float(v)) for v in r] for r in B]
    m, n = A.shape
    out = []
    for k in range(1, min(m, n) + 1):
        for I in itertools.combinations(range(m), k):
            for J in itertools.combinations(range(n), k):
                one = [[Fraction(1)] * k + [Fraction(0)]]
                rhs = [Fraction(0)] * k + [Fraction(1)]
                sx = _solve([[Bf[i][j] for i in I] + [Fraction(-1)] for j in J] + one, rhs)
                sy = _solve([[Af[i][j] for j in J] + [Fraction(-1)] for i in I] + one, rhs)
                if sx is None or sy is None or min(sx[:k]) < 0 or min(sy[:k]) < 0:
                    continue
                x, y = [Fraction(0)] * m, [Fraction(0)] * n
                for t, i in enumerate(I):
                    x[i] = sx[t]
                for t, j in enumerate(J):
                    y[j] = sy[t]
                if max(sum(x[i] * Bf[i][j] for i in range(m)) for j in range(n)) > sx[k]:
                    continue
                if max(sum(Af[i][j] * y[j] for j in range(n)) for i in range(m)) > sy[k]:
                    continue
                out.append(([float(v) for v in x], [float(v) for v in y]))
    return out


def test_a_wide_range_game_from_label_1():
    # unique equilibrium (row 0, column 0): against column 0 row 0 pays 3.4e7 > 1.6e5, against
    # row 0 column 0 pays 1.1e9 > 2.4e-3; the game is nondegenerate. Before: from label 1 the path
    # ended at (row 1, column 1), where the row player gains 7.2e-7 - 6.5e-9 by switching.
    A = np.array([[33554432.0, 7.152557373046875e-07], [163840.0, 6.51925802230835e-09]])
    B = np.array([[1073741824.0, 0.00244140625], [20.0, 112.0]])
    assert _exact_equilibria(A, B) == [([1.0, 0.0], [1.0, 0.0])]
    for label in range(4):
        x, y = lemke_howson(A, B, initial_label=label)
        assert (x.tolist(), y.tolist()) == ([1.0, 0.0], [1.0, 0.0])


@pytest.mark.parametrize("R", [30, 60])
def test_every_endpoint_is_an_exact_equilibrium(R):
    # payoffs k 2^e (k = 1..8, |e| <= R): before, 5 (R = 30) and 32 (R = 60) of ~300 games had
    # an endpoint off the exact list
    rng = np.random.default_rng(R)
    bad = []
    for t in range(40):
        m, n = (int(v) for v in rng.integers(1, 4, size=2))
        A, B = rng.integers(1, 9, (2, m, n)) * 2.0 ** rng.integers(-R, R + 1, (2, m, n))
        ref = _exact_equilibria(A, B)
        for label in range(m + n):
            x, y = lemke_howson(A, B, initial_label=label)
            if (x.tolist(), y.tolist()) not in ref:  # an exact equilibrium, correctly rounded
                bad.append((t, label, x.tolist(), y.tolist()))
    assert not bad, f"(game, label, x, y) off the exact equilibria: {bad[:3]}"


@pytest.mark.parametrize("label", range(5))
def test_degenerate_integer_games_end_at_nash_profiles(label):
    # the exact check also holds on degenerate games (ties everywhere): NashConv at round-off
    # (the certificate's allowance is about (m + n) u (max|A| + max|B|) = 5 u 4 times a small constant)
    rng = np.random.default_rng(50 + label)
    for _ in range(20):
        A, B = rng.integers(0, 3, (2, 3, 2)).astype(float)
        x, y = lemke_howson(A, B, initial_label=label)
        assert bimatrix_nash_conv(A, B, x, y) <= 1e-13


def test_the_exact_path_pivots_as_the_float_path():
    # consistency of the two implementations: on well-scaled games (random normal, and small
    # integers with ties resolved by the lexicographic rule) both end at the same bases, and the
    # exact path's endpoint is an exact equilibrium
    from rltheory.games._bimatrix_common import _positive
    from rltheory.games._support_exact import ExactGame
    from rltheory.games.lemke_howson import (
        _exact_endpoint,
        _exact_path,
        _exact_positive,
        _float_path,
    )

    rng = np.random.default_rng(7)
    for t in range(60):
        m, n = (int(v) for v in rng.integers(1, 6, size=2))
        A, B = (
            rng.integers(-3, 4, (2, m, n)).astype(float)
            if t % 2
            else rng.standard_normal((2, m, n))
        )
        game = ExactGame(A, B)
        Aq, BqT = _exact_positive(game, "A", m), _exact_positive(game, "BT", n)
        for label in range(m + n):
            bp, bq, outcome, _ = _float_path(_positive(A), _positive(B), label, 10_000)
            assert outcome == "end"
            ep, eq = _exact_path(Aq, BqT, label, 10_000)
            assert (sorted(bp), sorted(bq)) == (sorted(ep), sorted(eq))
            assert _exact_endpoint(game, Aq, BqT, ep, eq) is not None


@given(matrix_games(batch_shape=(2,), max_actions=4))
@settings(max_examples=40, deadline=None)
def test_lemke_howson_endpoints_are_listed_by_support_enumeration(U):
    # two exact methods agree: on a nondegenerate game every Lemke-Howson endpoint (from every
    # label) is one of the equilibria support enumeration lists, bit for bit (both are exact
    # equilibria rounded once); on any game (ties, duplicated rows, constant, 1 x n) it is Nash
    # up to the certificate's round-off allowance (about (m + n) u (max|A| + max|B|))
    A, B = U[0], U[1]
    m, n = A.shape
    scale = max(1.0, float(np.abs(U).max()))
    degenerate = is_degenerate(A, B)
    eqs = (
        None
        if degenerate
        else [(x.tolist(), y.tolist()) for x, y in nash_equilibria(A, B, strict=True)]
    )
    for label in range(m + n):
        x, y = lemke_howson(A, B, initial_label=label)
        assert bimatrix_nash_conv(A, B, x, y) <= 1e-13 * scale
        if eqs is not None:
            assert (x.tolist(), y.tolist()) in eqs
