"""Learning dynamics on games with payoffs at the largest floats (``dynamics_base._pow2_scale``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.games import hedge, ogda, optimistic_hedge, regret_matching


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [regret_matching, hedge, optimistic_hedge, ogda])
def test_constant_game_at_the_largest_float(f, dtype):
    # log₂(max float) rounds to 1024.0 (float32: 128.0), so the power-of-two scale was 2^1024 =
    # inf (RuntimeWarning) and A / s = 0. Every pair is an equilibrium of a constant game:
    # with the scale 2^1023 (2^127) the plays stay uniform and every gap is the allowance
    # ≈ (m + n + 6)·u·max|A| (matrix._gap_allowance).
    fmax = float(np.finfo(dtype).max)
    A = np.full((3, 3), fmax, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = f(A, 5)
    u = float(np.finfo(dtype).eps) / 2
    assert np.all(res.trace["gap_avg"] <= 20 * u * fmax)
    assert np.all(res.trace["gap_last"] <= 20 * u * fmax)
    np.testing.assert_allclose(res.x_last, np.full(3, 1 / 3), rtol=4 * u)
