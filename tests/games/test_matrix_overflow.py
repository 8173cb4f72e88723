"""Gap certificates of zero-sum games with payoffs near the float range (``matrix._gap_parts``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.games import duality_gap, solve_zero_sum, solve_zero_sum_highs

FMAX = float(np.finfo(np.float64).max)


def _no_warnings(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return f(*args)


def test_gap_of_a_constant_game_at_the_float_range_is_finite():
    # A = fmax everywhere: every pair is a saddle point (exact gap 0). fmax·y₁ + fmax·y₂ rounds
    # above fmax for this y (found among seeded random strategies; Σy = 1 exactly), so A y was
    # inf and the gap inf − fmax with a RuntimeWarning.
    A = np.full((2, 2), FMAX)
    y = np.array([0.5088915827387518, 0.4911084172612483])
    g = float(_no_warnings(duality_gap, A, y, y))
    # allowance ≈ (m + n + 6)·u·max|A| (matrix._gap_allowance): 10·2⁻⁵³·fmax < 1e-14·fmax
    assert 0.0 <= g <= 1e-14 * FMAX
    res = _no_warnings(solve_zero_sum_highs, A)
    assert abs(float(res.value) - FMAX) <= float(res.gap) <= 1e-14 * FMAX


def test_gap_beyond_the_float_range_is_inf_without_a_warning():
    # x = e_1, y = e_1 in ±1e308 matching pennies: exact gap 2e308 > fmax; inf is its only bound.
    A = np.array([[1e308, -1e308], [-1e308, 1e308]])
    e = np.array([1.0, 0.0])
    assert float(_no_warnings(duality_gap, A, e, e)) == np.inf


@pytest.mark.parametrize("solver", [solve_zero_sum, solve_zero_sum_highs])
def test_solvers_certify_matching_pennies_at_the_float_range(solver):
    # value 0, uniform strategies (matching pennies scaled by 1e308); HiGHS's solver formed
    # max A − min A = 2e308 = inf (warning) before the LP.
    A = np.array([[1e308, -1e308], [-1e308, 1e308]])
    res = _no_warnings(solver, A)
    np.testing.assert_allclose(res.x, [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(res.y, [0.5, 0.5], atol=1e-12)
    # |value − 0| ≤ gap, and gap is 2·allowance ≈ 2·10·u·1e308 (no kernel error at the optimum)
    assert abs(float(res.value)) <= float(res.gap) <= 1e-14 * 1e308
