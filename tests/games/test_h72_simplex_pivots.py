"""The zero-sum kernel's ratio test: Harris's two passes before Bland's rule.

On near-tie games (integer payoffs perturbed by about the pivot tolerance 1e-11) the smallest-
ratio row of the ratio test can hold a pivot just above the tolerance; pivoting on it wrecked the
tableau, and the certificate sent the game to HiGHS on the host and raised ``SolverError`` on a
device (``fallback`` impossible). References: exact rational duality gaps of the returned
strategies, HiGHS on the same games, and Bland's rule run from the first pivot.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.backend import to_numpy
from rltheory.games import solve_zero_sum, solve_zero_sum_highs
from rltheory.games.matrix import _simplex

from .test_h55_zero_sum_scale import NEAR_TIE, _exact_gap


def _near_tie_batch(seed: int) -> np.ndarray:
    # before: the kernel missed tol·range on 14 of these 200 games (seed 720), 12 (seed 722)
    rng = np.random.default_rng(seed)
    return rng.integers(0, 3, (200, 6, 5)) + 1e-11 * rng.standard_normal((200, 6, 5))


def _range(A: np.ndarray) -> Fraction:
    return Fraction(float(np.max(A))) - Fraction(float(np.min(A)))


def test_near_tie_game_is_certified_without_fallback(xp) -> None:
    # before: a pivot of 1.02e-11 left the pure pair (row 2, column 2), exact gap 0.99999·range;
    # SolverError 'not certified' with fallback=False (and under array_api_strict)
    sol = solve_zero_sum(xp.asarray(NEAR_TIE), fallback=False)
    x, y = to_numpy(sol.x), to_numpy(sol.y)
    assert _exact_gap(NEAR_TIE, x, y) <= Fraction(1, 10**9) * _range(NEAR_TIE)
    ref = solve_zero_sum_highs(NEAR_TIE)
    assert abs(float(sol.value) - float(ref.value)) <= float(ref.gap) + float(sol.gap)


@pytest.mark.parametrize("seed", [720, 722])
def test_near_tie_batch_needs_no_fallback(seed: int) -> None:
    A = _near_tie_batch(seed)
    sol = solve_zero_sum(A, fallback=False)
    ref = solve_zero_sum_highs(A)
    for g in range(A.shape[0]):
        assert _exact_gap(A[g], sol.x[g], sol.y[g]) <= Fraction(1, 10**9) * _range(A[g]), g
    np.testing.assert_array_less(np.abs(sol.value - ref.value), ref.gap + sol.gap + 1e-300)


@pytest.mark.parametrize("kind", ["normal", "integer ties"])
def test_blands_rule_from_the_first_pivot_reaches_the_same_optimum(kind: str) -> None:
    # Bland's rule alone terminates at an optimum (Bland 1977, Theorem 1); the objective
    # 1ᵀq = 1/v(A') is the optimal value of the LP whichever rule pivots. Integer payoffs
    # 0..2 tie exactly (degenerate vertices, where cycling can occur). (Near-tie games are left
    # out: Bland's smallest-ratio row is the tiny pivot the Harris phase avoids.)
    rng = np.random.default_rng(72)
    if kind == "normal":
        A = rng.standard_normal((200, 5, 6))
    else:
        A = rng.integers(0, 3, (200, 5, 6)).astype(np.float64)
    lo = A.min(axis=(1, 2))[:, None, None]
    hi = A.max(axis=(1, 2))[:, None, None]
    Ap = (A - lo) / np.where(hi > lo, hi - lo, 1.0) + 1.0
    cap = 50 * 11 + 100
    _, _, obj, _, done = _simplex(Ap, np, cap)
    _, _, obj_b, piv_b, done_b = _simplex(Ap, np, cap, bland_after=0)
    assert bool(np.all(done)) and bool(np.all(done_b)) and piv_b < cap
    np.testing.assert_allclose(obj_b, obj, rtol=1e-12, atol=0)
    ref = solve_zero_sum_highs(Ap)
    np.testing.assert_allclose(obj, 1.0 / ref.value, rtol=1e-9, atol=0)


def test_ill_conditioned_near_tie_games_are_certified_by_the_kernel() -> None:
    # integer payoffs plus 1e-10 noise: optimal bases with condition numbers near 1e10. Before
    # the refinement step the tableau's rank-one updates left residuals that missed tol·range on
    # 14 of these 200 games (SolverError with fallback=False); one refinement step with the
    # tableau's B⁻¹ meets it on all (exact rational gaps below)
    rng = np.random.default_rng(1003)
    A = rng.integers(0, 3, (200, 8, 8)) + 1e-10 * rng.standard_normal((200, 8, 8))
    sol = solve_zero_sum(A, fallback=False)
    for g in range(A.shape[0]):
        assert _exact_gap(A[g], sol.x[g], sol.y[g]) <= Fraction(1, 10**9) * _range(A[g]), g
