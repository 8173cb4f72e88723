"""Round-off in the games' certificates: the computed gap and Shapley's sweep error.

References are exact: the duality gap of the returned strategies (normalised onto the
simplex) in rationals (``fractions.Fraction`` of the stored floats), and the one-state game's
value ``val(R)/(1 − γ)`` in closed form (pure saddle, or ``(ad − bc)/(a + d − b − c)`` for a
2×2 game without one; Owen 1995, §II.4), also in rationals.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.games import solve_zero_sum


def _exact_payoffs(A, x, y):
    """Exact ``(Ay, xᵀA)`` of ``(x/Σx, y/Σy)`` in rationals."""
    A = [[Fraction(float(a)) for a in row] for row in np.asarray(A)]
    x = [Fraction(float(v)) for v in np.asarray(x)]
    y = [Fraction(float(v)) for v in np.asarray(y)]
    sx, sy = sum(x), sum(y)
    x, y = [v / sx for v in x], [v / sy for v in y]
    Ay = [sum(a * b for a, b in zip(row, y, strict=True)) for row in A]
    xA = [sum(x[i] * A[i][j] for i in range(len(x))) for j in range(len(y))]
    return Ay, xA


def _probe_game(seed: int, dtype, scales):
    # the probe's generator: m, n in 1..4, payoffs of size 1..1e9, every fifth on a coarse grid
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sc = scales[seed % 3]
    A = (rng.uniform(-1, 1, size=(m, n)) * sc + (seed % 2) * 3 * sc).astype(dtype)
    if seed % 5 == 0:
        A = (np.round(rng.uniform(-3, 3, size=(m, n))) * sc / 3).astype(dtype)
    return A


@pytest.mark.parametrize(
    "dtype, seed, scales",
    [
        # float32, 2×3, payoffs ~100: computed gap 0, exact gap 1.9e-6
        (np.float32, 1, (1.0, 100.0, 1e6)),
        # float32, 4×3: computed gap −3e-8, value 3e-8 outside [min xᵀA, max Ay]
        (np.float32, 0, (1.0, 100.0, 1e6)),
        # float64, 2×4: computed gap 0, exact gap 1.2e-16
        (np.float64, 9, (1.0, 1e6, 1e9)),
    ],
)
def test_zero_sum_gap_covers_exact_gap_and_value_error(dtype, seed, scales):
    """gap ≥ 0, gap ≥ exact gap of the returned strategies, and |value − v(A)| ≤ gap.

    ``v(A) ∈ [min_j (xᵀA)_j, max_i (Ay)_i]`` (exact, weak duality), so ``|value − v(A)|`` is at
    most the distance of ``value`` to that interval plus its width (the exact gap).
    """
    A = _probe_game(seed, dtype, scales)
    sol = solve_zero_sum(A)
    gap = Fraction(float(np.asarray(sol.gap, dtype=np.float64)))
    Ay, xA = _exact_payoffs(A, sol.x, sol.y)
    exact_gap = max(Ay) - min(xA)
    value = Fraction(float(np.asarray(sol.value, dtype=np.float64)))
    value_err = max(value - max(Ay), min(xA) - value, Fraction(0)) + exact_gap
    assert gap >= 0
    assert exact_gap <= gap
    assert value_err <= gap
