"""Product policies of another float dtype than the game's P (unilateral coverage, induced MDP)."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.bounds.coverage import induced_mdp, unilateral_concentrability


def _uniform32(A: int) -> np.ndarray:
    # float32 1/7 = 0.14285715: the row sums to 1 + 4.5e-8, a distribution in float32's own precision
    return np.full((1, 1, A), 1 / A, dtype=np.float32)


def test_float32_policies_with_a_float64_game():
    # one-shot 7x7 game, uniform players, uniform data 1/49: sup over a unilateral deviation of
    # d(a) is 1 · π_{-i}(a_{-i}) = 1/7, so C_uni = (1/7)/(1/49) = 7. The float32 policies were cast
    # to the game's float64 and refused: 'policies[1][h, s, :] must sum to 1 (atol=1e-08); ... 1.0000000447'
    P = np.ones((1, 1, 7, 7, 1))
    pi = [_uniform32(7), _uniform32(7)]
    assert unilateral_concentrability(P, pi, np.full((1, 1, 7, 7), 1 / 49)) == pytest.approx(
        7.0, rel=1e-15
    )
    # r̄(a_0) = Σ_{a_1} π_1(a_1) r(a_0, a_1) with r = a_0 + a_1/10: a_0 + 0.3
    R = np.zeros((2, 1, 1, 7, 7))
    R[0, 0, 0] = np.arange(7)[:, None] + np.arange(7)[None, :] / 10
    m = induced_mdp(P, R, pi, 0)
    assert m.P.dtype == np.float64
    np.testing.assert_allclose(np.asarray(m.R)[0, 0], np.arange(7) + 0.3, rtol=1e-15)


def test_a_policy_off_the_simplex_in_its_own_dtype_is_still_refused():
    P = np.ones((1, 1, 2, 2, 1))
    bad = np.array([[[0.5, 0.6]]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"policies\[1\]\[h, s, :\] must sum to 1"):
        unilateral_concentrability(P, [bad, bad], np.full((1, 1, 2, 2), 0.25))
