"""Support enumeration on games whose payoffs span many orders of magnitude, against exact rationals.

The floating-point pass rescales all payoffs to [1, 2] and judged probabilities and best-response
ties within ``tol = 1e-9`` there, so payoffs that differ by less than 1e-9 of the payoff range
counted as ties: nondegenerate games were reported degenerate (``strict=True`` raised) and profiles
that are not equilibria were listed. References, written independently of the library: support
enumeration over all equal-size support pairs and vertex enumeration of both best-response
polytopes, both in :class:`fractions.Fraction` on the payoffs as given.
"""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.games import DegenerateGameWarning, is_degenerate, nash_equilibria


def _solve(M: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
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


def _frac(M: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(float(v)) for v in row] for row in M]


def _exact_equilibria(A: np.ndarray, B: np.ndarray) -> list[tuple[list[Fraction], list[Fraction]]]:
    """All equilibria with equal-size supports (all equilibria of a nondegenerate game)."""
    Af, Bf = _frac(A), _frac(B)
    m, n = A.shape
    out = []
    for k in range(1, min(m, n) + 1):
        for I in itertools.combinations(range(m), k):
            for J in itertools.combinations(range(n), k):
                one = [[Fraction(1)] * k + [Fraction(0)]]
                sx = _solve(
                    [[Bf[i][j] for i in I] + [Fraction(-1)] for j in J] + one,
                    [Fraction(0)] * k + [Fraction(1)],
                )
                sy = _solve(
                    [[Af[i][j] for j in J] + [Fraction(-1)] for i in I] + one,
                    [Fraction(0)] * k + [Fraction(1)],
                )
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
                if (x, y) not in out:
                    out.append((x, y))
    return out


def _exact_degenerate(A: np.ndarray, B: np.ndarray) -> bool:
    """Some vertex of P = {x >= 0: B'^T x <= 1} or Q = {y >= 0: A' y <= 1} (payoffs shifted to
    be >= 1) has more labels than its dimension (von Stengel 2007, §3.4)."""
    Af, Bf = _frac(A), _frac(B)
    lo = min(min(r) for r in Af + Bf)
    Af = [[a - lo + 1 for a in r] for r in Af]
    Bf = [[b - lo + 1 for b in r] for r in Bf]
    m, n = A.shape

    def has_degenerate_vertex(M: list[list[Fraction]], d: int) -> bool:
        rows = [[Fraction(int(t == i)) for t in range(d)] for i in range(d)] + M
        rhs = [Fraction(0)] * d + [Fraction(1)] * len(M)
        for T in itertools.combinations(range(len(rows)), d):
            z = _solve([rows[t] for t in T], [rhs[t] for t in T])
            if (
                z is None
                or min(z) < 0
                or any(sum(a * b for a, b in zip(r, z, strict=True)) > 1 for r in M)
            ):
                continue
            labels = sum(1 for v in z if v == 0) + sum(
                1 for r in M if sum(a * b for a, b in zip(r, z, strict=True)) == 1
            )
            if labels > d:
                return True
        return False

    BT = [[Bf[i][j] for i in range(m)] for j in range(n)]
    return has_degenerate_vertex(BT, m) or has_degenerate_vertex(Af, n)


def test_a_wide_range_nondegenerate_game_has_its_one_equilibrium():
    # Row 1 strictly dominates (1.2e-4 > 3.1e-5 and 1.05e7 > 1.3e5); against it column 1 pays
    # 8.4e6 > 1.5: the unique equilibrium is (row 1, column 1). Before: 3 "equilibria" and a
    # DegenerateGameWarning (the rows' 9e-5 difference is 9e-12 of the payoff range).
    A = np.array([[3.0517578125e-05, 131072.0], [0.0001220703125, 10485760.0]])
    B = np.array([[64.0, 0.005859375], [1.5, 8388608.0]])
    assert not _exact_degenerate(A, B)
    assert not is_degenerate(A, B)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eqs = nash_equilibria(A, B, strict=True)
    assert [(x.tolist(), y.tolist()) for x, y in eqs] == [([0.0, 1.0], [0.0, 1.0])]


@pytest.mark.parametrize("seed", range(4))
def test_wide_range_games_match_exact_support_enumeration(seed):
    # payoffs k 2^e, k in 1..8, |e| <= 30: before, 22 of 287 nondegenerate probes (at |e| <= 20)
    # disagreed with the exact list or were reported degenerate
    rng = np.random.default_rng(seed)
    bad = []
    for t in range(40):
        m, n = (int(v) for v in rng.integers(1, 4, size=2))
        A, B = rng.integers(1, 9, (2, m, n)) * 2.0 ** rng.integers(-30, 31, (2, m, n))
        degenerate = _exact_degenerate(A, B)
        if is_degenerate(A, B) != degenerate:
            bad.append((t, "degeneracy", degenerate))
            continue
        if degenerate:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error", DegenerateGameWarning)
            ours = [(x.tolist(), y.tolist()) for x, y in nash_equilibria(A, B, strict=True)]
        ref = [([float(v) for v in x], [float(v) for v in y]) for x, y in _exact_equilibria(A, B)]
        if sorted(ours) != sorted(ref):  # exact equilibria, each probability correctly rounded
            bad.append((t, ours, ref))
    assert not bad, f"(game, ours, exact): {bad[:3]}"


@pytest.mark.parametrize("seed", range(3))
def test_small_integer_games_match_exact_references(seed):
    # ties are frequent here: degeneracy and, for nondegenerate games, the list must be exact
    rng = np.random.default_rng(100 + seed)
    bad = []
    for t in range(60):
        m, n = (int(v) for v in rng.integers(1, 4, size=2))
        A, B = rng.integers(-3, 4, (2, m, n)).astype(float)
        degenerate = _exact_degenerate(A, B)
        if is_degenerate(A, B) != degenerate:
            bad.append((t, "degeneracy", degenerate))
        elif not degenerate:
            ours = [(x.tolist(), y.tolist()) for x, y in nash_equilibria(A, B, strict=True)]
            ref = [
                ([float(v) for v in x], [float(v) for v in y]) for x, y in _exact_equilibria(A, B)
            ]
            if sorted(ours) != sorted(ref):
                bad.append((t, ours, ref))
    assert not bad, f"(game, ours, exact): {bad[:3]}"


def _compare(A: np.ndarray, B: np.ndarray) -> tuple | None:
    """None when nash_equilibria and is_degenerate agree with the exact references, else the mismatch."""
    degenerate = _exact_degenerate(A, B)
    if is_degenerate(A, B) != degenerate:
        return ("degeneracy", degenerate)
    if degenerate:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateGameWarning)
        ours = sorted((x.tolist(), y.tolist()) for x, y in nash_equilibria(A, B, strict=True))
    ref = sorted(([float(v) for v in x], [float(v) for v in y]) for x, y in _exact_equilibria(A, B))
    return None if ours == ref else (ours, ref)


def test_an_equilibrium_singular_only_after_the_rescaling_is_found():
    # Payoffs from 9.5e-30 to 1.9e25: on the rescaling to [1, 2] the differences 8.7e-19, 1.7e-18
    # and 8.3e-17 of A's entries vanish, the mixed pair's indifference system came out singular
    # (determinant below the old 1e-12 cutoff) and the pair was dropped: 2 equilibria listed,
    # exact enumeration gives 3 (nondegenerate game).
    A = np.array(
        [
            [8.673617379884035e-19, 1.9342813113834067e25, 8.326672684688674e-17],
            [0.0, 1.734723475976807e-18, 5.587935447692871e-09],
        ]
    )
    B = np.array(
        [
            [34359738368.0, 0.0, 17179869184.0],
            [5.293955920339377e-23, 9.466330862652142e-30, 128.0],
        ]
    )
    assert not _exact_degenerate(A, B)
    ref = _exact_equilibria(A, B)
    assert len(ref) == 3
    # the third is mixed: y = (6442450848, 0, 1) / 6442450849 makes rows 0 and 1 indifferent
    assert [Fraction(6442450848, 6442450849), 0, Fraction(1, 6442450849)] in [y for _, y in ref]
    assert len(nash_equilibria(A, B, strict=True)) == 3
    assert _compare(A, B) is None


@pytest.mark.parametrize("seed", range(4))
def test_payoffs_at_two_to_the_plus_minus_100_match_exact_enumeration(seed):
    # payoffs k 2^e, k in 0..3, |e| <= 100 (ties and zeros included): before, 3 of these 280 games
    # (254 nondegenerate) lost an equilibrium whose system is singular after the rescaling
    rng = np.random.default_rng(1000 + seed)
    bad = []
    for t in range(70):
        m, n = (int(v) for v in rng.integers(1, 4, size=2))
        A, B = rng.integers(0, 4, (2, m, n)) * 2.0 ** rng.integers(-100, 101, (2, m, n))
        diff = _compare(A, B)
        if diff is not None:
            bad.append((t, diff))
    assert not bad, f"(game, mismatch): {bad[:3]}"


@given(
    st.integers(1, 3),
    st.integers(1, 3),
    st.data(),
)
@settings(max_examples=60, deadline=None)
def test_wide_range_games_match_exact_enumeration_hypothesis(m, n, data):
    k = st.integers(0, 3)
    e = st.integers(-100, 100)
    draw = lambda: [[data.draw(k) * 2.0 ** data.draw(e) for _ in range(n)] for _ in range(m)]  # noqa: E731
    A, B = np.array(draw()), np.array(draw())
    assert _compare(A, B) is None
