"""Bounds of rltheory.bounds.games at payoff range / Lipschitz constant 0 (constant games)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.bounds.games import (
    hedge_gap_bound,
    hedge_regret_bound,
    hedge_tuned_regret,
    optimistic_gap_bound,
    optimistic_max_step,
    regret_matching_gap_bound,
)
from rltheory.games import hedge, ogda, optimistic_hedge, regret_matching

# a constant 3×2 game: every pair is an equilibrium, every regret and every exact gap is 0; the
# traces hold only the round-off allowance max|A|·((1 + δ_y)γ_{n+3} + δ_y + (1 + δ_x)γ_{m+3} + δ_x)
# (matrix._gap_allowance), δ the averages' sum defects plus γ_k: about 22·u·max|A| here, below
# 100·u·max|A|
A = np.full((3, 2), 2.5)
T = 50
ALLOW = 100 * np.finfo(np.float64).eps / 2 * 2.5


def test_bounds_at_zero_range_bound_the_dynamics_of_a_constant_game():
    t = np.arange(1, T + 1)
    rm = regret_matching(A, T)
    assert np.all(regret_matching_gap_bound(t, 3, 2, 0.0) == 0.0)
    assert np.all(rm.trace["gap_avg"] <= regret_matching_gap_bound(t, 3, 2, 0.0) + ALLOW)
    hd = hedge(A, T)
    ex, ey = float(hd.eta[0]), float(hd.eta[1])
    hb = hedge_gap_bound(t, 3, 2, ex, ey, 0.0)
    # R = 0: the step terms vanish, [ln m/η_x + ln n/η_y]/t remains
    np.testing.assert_allclose(hb, (math.log(3) / ex + math.log(2) / ey) / t, rtol=1e-15)
    assert np.all(hd.trace["gap_avg"] <= hb + ALLOW)
    om = optimistic_hedge(A, T)
    assert np.all(
        om.trace["gap_avg"]
        <= optimistic_gap_bound(t, math.log(3), math.log(2), float(om.eta[0])) + ALLOW
    )
    og = ogda(A, T)
    assert np.all(
        og.trace["gap_avg"] <= optimistic_gap_bound(t, 0.5, 0.5, float(og.eta[0])) + ALLOW
    )


def test_zero_range_values():
    # regret of a constant game is 0 for every play; the theorems' bounds at R = 0 (L = 0)
    assert float(hedge_tuned_regret(800, 2, 0.0)) == 0.0
    assert float(hedge_regret_bound(100, 2, 0.5, 0.0)) == pytest.approx(
        math.log(2) / 0.5, rel=1e-15
    )
    assert optimistic_max_step(0.0) == math.inf  # η L² ≤ 1/(8η) holds for every η when L = 0


@pytest.mark.parametrize(
    ("f", "args", "msg"),
    [
        (
            hedge_regret_bound,
            (10, 2, 0.1, -1.0),
            r"payoff_range must be a finite number >= 0; got -1\.0",
        ),
        (
            hedge_tuned_regret,
            (10, 2, -0.5),
            r"payoff_range must be a finite number >= 0; got -0\.5",
        ),
        (
            regret_matching_gap_bound,
            (10, 2, 2, -2.0),
            r"payoff_range must be a finite number >= 0; got -2\.0",
        ),
        (optimistic_max_step, (-1e-300,), r"lipschitz must be a finite number >= 0; got -1e-300"),
    ],
)
def test_negative_range_is_refused(f, args, msg):
    with pytest.raises(ValueError, match=msg):
        f(*args)
