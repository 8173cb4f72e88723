"""solve_zero_sum's fallback target is relative to the payoff range: ``A·2^-k`` is solved as ``A``.

Scaling a game by a power of two scales every payoff, strategy payoff and gap exactly (while the
payoffs stay normal), and keeps the optimal strategies. The fallback test was
``gap > tol·max(1, max A − min A)``, whose floor ``tol`` exceeds the whole range of a game scaled
by ``2^-60``, so any pair the kernel returned passed there while the same game unscaled went to
HiGHS. References: exact rational arithmetic for duality gaps, HiGHS on the unscaled game.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.games import solve_zero_sum, solve_zero_sum_highs

# Payoffs 0 and 2 perturbed by ~1e-11: the kernel pivots on a column entry 1.02e-11 (just above
# its pivot tolerance 1e-11), loses feasibility and ends at the pure pair (row 2, column 2),
# whose duality gap is 0.99999 of the range. Unscaled, the certificate sends it to HiGHS.
NEAR_TIE = np.array(
    [
        [2.1877020407936448e-11, -1.7354385299088617e-11, 1.9999999999878335, 1.999999999995715],
        [
            2.000000000003621,
            1.2058308217275279e-12,
            -1.8602132860792717e-11,
            2.2397589060941384e-11,
        ],
        [1.999999999993619, 2.000000000017301, -3.103757271429351e-12, 1.7725863230242246e-11],
    ]
)


def _exact_gap(A: np.ndarray, x: np.ndarray, y: np.ndarray) -> Fraction:
    """``max_i (A y)_i − min_j (xᵀA)_j`` of ``(x/Σx, y/Σy)`` in rational arithmetic."""
    m, n = A.shape
    xf = [Fraction(float(t)) for t in x]
    yf = [Fraction(float(t)) for t in y]
    sx, sy = sum(xf), sum(yf)
    Af = [[Fraction(float(A[i, j])) for j in range(n)] for i in range(m)]
    Ay = [sum(Af[i][j] * yf[j] for j in range(n)) / sy for i in range(m)]
    xA = [sum(xf[i] * Af[i][j] for i in range(m)) / sx for j in range(n)]
    return max(Ay) - min(xA)


@pytest.mark.parametrize("k", [0, 30, 60, 500])
def test_near_tie_game_scaled_is_optimal_to_tol_times_range(k: int) -> None:
    # before, at k = 60: x = y = pure strategy 2, exact gap 0.99999·range, value −3.1e-12·2^-60
    # (the game's value is 1.0·2^-60 within 2e-11·2^-60, from HiGHS on the unscaled game)
    c = 2.0**-k
    A = NEAR_TIE * c
    sol = solve_zero_sum(A)
    rng = Fraction(float(np.max(A))) - Fraction(float(np.min(A)))
    assert _exact_gap(A, sol.x, sol.y) <= Fraction(1, 10**9) * rng
    ref = solve_zero_sum_highs(NEAR_TIE)
    assert abs(float(sol.value) / c - float(ref.value)) <= float(ref.gap) + float(sol.gap) / c
    # was 1 (HiGHS re-solved it); Harris's ratio test (helper-72) avoids the 1.02e-11 pivot and
    # the kernel certifies the game itself (tests/games/test_h72_simplex_pivots.py)
    assert sol.n_fallback == 0


def _scaled_pairs(dtype: type) -> list[np.ndarray]:
    rng = np.random.default_rng(55)
    normal = rng.standard_normal((60, 6, 5))
    # near-tie integer games: the kernel misses tol·range on some and HiGHS re-solves them
    near_tie = rng.integers(0, 3, (60, 4, 6)) + 1e-9 * rng.standard_normal((60, 4, 6))
    return [normal.astype(dtype), near_tie.astype(dtype)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 20, 60])
def test_power_of_two_scaling_keeps_strategies_and_scales_value(dtype: type, k: int) -> None:
    # before, k = 60: HiGHS re-solved 60 of the 60 float32 normal games unscaled and none scaled
    # (strategies differed by 1.3e-6, exact gaps reached 2.0e-7 of the range against 1.5e-8);
    # of the float64 near-tie games 5 unscaled and none scaled (strategies differed by 0.25, exact
    # gap 4.1e-8 of the range against tol 1e-9)
    c = dtype(2.0**-k)
    for A in _scaled_pairs(dtype):
        s1, s2 = solve_zero_sum(A), solve_zero_sum(A * c)
        assert s2.n_fallback == s1.n_fallback
        np.testing.assert_array_equal(s2.x, s1.x)
        np.testing.assert_array_equal(s2.y, s1.y)
        # exact: every payoff, sum and allowance scales by 2^-k; the underflow term of the
        # allowance (~1e-322 in float64, ~4e-44 in float32) is below half an ulp of the gap
        np.testing.assert_array_equal(s2.value, s1.value * c)
        np.testing.assert_array_equal(s2.gap, s1.gap * c)


@pytest.mark.parametrize("k", [0, 60])
def test_near_tie_games_meet_tol_times_range_after_fallback(k: int) -> None:
    # the kernel misses tol·range on 1 of these 60 games and HiGHS re-solves it; at scipy's
    # default HiGHS tolerances (1e-7) one came back with exact gap 1.31e-9·range, above the
    # target tol = 1e-9 (HiGHS alone: up to 2.3e-9·range on this batch), now 1.4e-10. (5 before
    # the kernel's Harris ratio test and refinement step, helper-72; the count only makes sure
    # HiGHS is exercised.)
    A = _scaled_pairs(np.float64)[1] * 2.0**-k
    sol = solve_zero_sum(A)
    assert sol.n_fallback == 1
    for g in range(A.shape[0]):
        rng = Fraction(float(np.max(A[g]))) - Fraction(float(np.min(A[g])))
        assert _exact_gap(A[g], sol.x[g], sol.y[g]) <= Fraction(1, 10**9) * rng, g


def test_highs_reference_meets_tol_on_near_ties() -> None:
    # before: exact gaps up to 2.3e-9 of the range (scipy's default tolerances)
    A = _scaled_pairs(np.float64)[1]
    ref = solve_zero_sum_highs(A)
    for g in range(A.shape[0]):
        rng = Fraction(float(np.max(A[g]))) - Fraction(float(np.min(A[g])))
        assert _exact_gap(A[g], ref.x[g], ref.y[g]) <= Fraction(1, 10**9) * rng, g


def test_subnormal_range_game_needs_no_fallback() -> None:
    # [[2, 0], [0, 1]]·2^-1070 has payoffs 2^-1069 and 2^-1070 (subnormal); its optimum is
    # x = y = (1/3, 2/3) and value 2/3·2^-1070. tol·range underflows to 0, so without the
    # underflow floor the round-off of the computed gap (~2^-1074) alone sent it to HiGHS
    A = np.array([[2.0, 0.0], [0.0, 1.0]]) * 2.0**-1070
    sol = solve_zero_sum(A)
    assert sol.n_fallback == 0
    np.testing.assert_allclose(sol.x, [1 / 3, 2 / 3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(sol.y, [1 / 3, 2 / 3], rtol=0, atol=1e-15)
    assert abs(float(sol.value) - 2.0**-1070 * 2 / 3) <= float(sol.gap)
