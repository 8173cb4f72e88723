"""Coverage coefficients (rltheory.bounds.coverage) at the edges: float32, extreme scales, bad settings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.bounds.coverage import (
    all_policy_concentrability,
    feature_covariance,
    induced_mdp,
    relative_condition_number,
    single_policy_concentrability,
    unilateral_concentrability,
)
from rltheory.mdp import FiniteHorizonMDP


def _rotation(k: int, seed: int) -> np.ndarray:
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((k, k)))[0]


# ----------------------------------------------------------------------------- relative condition number
@pytest.mark.parametrize("rtol", [math.nan, -1.0, math.inf, True, "1e-10"])
def test_relative_condition_number_checks_rtol(rtol):
    """rtol = NaN kept no eigenvalue and skipped the null-space test (0.0 for κ = 1); rtol = −1
    kept the zero eigenvalues (1/√0, NaN, 0.0); True was rtol = 1 (0.0); a string raised
    numpy's TypeError."""
    assert relative_condition_number(np.eye(2), np.eye(2)) == pytest.approx(1.0, rel=1e-15)
    with pytest.raises(ValueError, match="rtol must be a finite number >= 0; got "):
        relative_condition_number(np.eye(2), np.eye(2), rtol=rtol)


@pytest.mark.parametrize("c_t, c_d, want", [(1e300, 1e-300, math.inf), (1e150, 1e-150, 1e300), (1e-320, 1e-320, 1.0),
                                             (1e-310, 1e-300, 1e-10)])
def test_relative_condition_number_at_extreme_scales(c_t, c_d, want):
    """κ(c_t Σ, c_d Σ') = (c_t/c_d)·κ(Σ, Σ'); with Σ = Σ' = I (formed as U Uᵀ, U a rotation, so
    not exactly diagonal) κ = c_t/c_d. Old: 1e300 against 1e-300 formed 1e150·1e300·1e150 = inf, inf·0 = NaN
    off the diagonal and returned 0.0 (the bound below the quantity); 1e-320 against 1e-320 fell
    under the rank cut's absolute floor 1e-300 and returned 0.0 for κ = 1; 1e-310 against 1e-300
    returned 0.0 for 1e-10."""
    U = _rotation(3, 0)
    I3 = U @ U.T
    got = relative_condition_number(c_t * I3, c_d * I3)
    if math.isinf(want):
        assert got == math.inf
    else:
        assert got == pytest.approx(want, rel=1e-12)


def test_relative_condition_number_in_float32_cuts_rounding_eigenvalues():
    """Σ_data = U diag(1, 0.5, 0) Uᵀ is singular; against Σ_target = I, κ = ∞, and against
    Σ_target = U diag(2, 0.5, 0) Uᵀ, κ = 2. In float32 the computed null eigenvalue of Σ_data is
    rounding noise ≈ 1e-9·max w, above the default rtol = 1e-10: the old code kept it as range
    and returned κ ≈ 7.9e8 and 6.4. The cut is now never below k·eps(float32)."""
    U = _rotation(3, 1)
    D = (U @ np.diag([1.0, 0.5, 0.0]) @ U.T).astype(np.float32)
    T = (U @ np.diag([2.0, 0.5, 0.0]) @ U.T).astype(np.float32)
    assert relative_condition_number(np.eye(3, dtype=np.float32), D) == math.inf
    eps32 = float(np.finfo(np.float32).eps)
    assert relative_condition_number(T, D) == pytest.approx(2.0, rel=64 * eps32)
    # float64: the same matrices agree with the exact value to rounding
    D64 = U @ np.diag([1.0, 0.5, 0.0]) @ U.T
    T64 = U @ np.diag([2.0, 0.5, 0.0]) @ U.T
    assert relative_condition_number(np.eye(3), D64) == math.inf
    assert relative_condition_number(T64, D64) == pytest.approx(2.0, rel=1e-13)


# ----------------------------------------------------------------------------- feature covariance
def test_feature_covariance_broadcasts_leading_axes_both_ways():
    """Leading axes broadcast (docstring): per-step features (H, S, A, k) with one weight table
    (1, S, A) give H covariances Σ_h = Σ_{s,a} d(s, a) φ_h(s, a) φ_h(s, a)ᵀ. The old code took the
    longer lead alone and called broadcast_to(features, (1, S, A, k)): numpy's bare 'operands could
    not be broadcast' for valid input; (3, S, A, k) with (2, 1, S, A) likewise."""
    rng = np.random.default_rng(0)
    phi = rng.random((3, 2, 2, 4))
    w = rng.dirichlet(np.ones(4)).reshape(1, 2, 2)
    want = np.stack([sum(w[0, s, a] * np.outer(phi[h, s, a], phi[h, s, a]) for s in range(2) for a in range(2))
                     for h in range(3)])
    np.testing.assert_allclose(feature_covariance(phi, w), want, rtol=1e-14)
    w2 = np.stack([w, rng.dirichlet(np.ones(4)).reshape(1, 2, 2)])  # (2, 1, S, A)
    out = feature_covariance(phi, w2)
    assert out.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(out[0], want, rtol=1e-14)
    with pytest.raises(ValueError, match=r"leading axes of features \(3,\) and d \(2,\) do not broadcast"):
        feature_covariance(phi, np.full((2, 2, 2), 0.25))


# ----------------------------------------------------------------------------- concentrability ratios, mixed dtypes
def test_concentrability_ratios_use_the_promoted_dtype():
    """A float32 target (or model) with float64 data: the data were cast to float32 first, which
    rounds a weight of 1e-50 to 0, so C = 0.5/1e-50 = 5e49 (single-policy) and 1/1e-50 = 1e50
    (all-policy; one state, H = 1, every action reachable) were reported as ∞ (uncovered)."""
    t = np.array([0.5, 0.5], dtype=np.float32)
    d = np.array([1.0 - 1e-50, 1e-50])
    assert single_policy_concentrability(t, d) == pytest.approx(0.5 / 1e-50, rel=1e-15)
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1), dtype=np.float32), np.zeros((1, 2), dtype=np.float32), H=1)
    assert all_policy_concentrability(fh, d.reshape(1, 1, 2)) == pytest.approx(1e50, rel=1e-15)
    # unilateral: one-shot 2×2 game, both players uniform; sup over player 1's deviations of the
    # occupancy of (0, 1) is 1 · ½ (player 2 plays 1 w.p. ½), data weight 1e-50: ratio 5e49
    pi = [np.full((1, 1, 2), 0.5, dtype=np.float32)] * 2
    rho = np.array([[[[0.5, 1e-50], [0.5, 0.5]]]])
    assert unilateral_concentrability(np.ones((1, 1, 2, 2, 1), dtype=np.float32), pi, rho) == pytest.approx(
        0.5 / 1e-50, rel=1e-15
    )


def test_all_policy_concentrability_of_a_non_model_is_a_type_error():
    """all_policy_concentrability('x', d) read model.xp first: AttributeError instead of
    max_occupancy's TypeError naming what it needs."""
    with pytest.raises(TypeError, match="max_occupancy needs a FiniteHorizonMDP or a discounted FiniteMDP; got str"):
        all_policy_concentrability("x", np.ones(2) / 2)


@pytest.mark.parametrize("player", [0.5, "0", True, 1.0, None])
def test_induced_mdp_player_must_be_an_integer_index(player):
    """player = 0.5 matched no player in the product and failed later with an unrelated
    'P must have shape (..., H, S, A, S); got shape (1, 1, 1)'; '0' raised numpy's comparison
    TypeError; True and 1.0 were accepted as player 1."""
    P = np.ones((1, 1, 2, 2, 1))
    pols = [np.full((1, 1, 2), 0.5)] * 2
    assert induced_mdp(P, None, pols, np.int64(1)).A == 2
    with pytest.raises(ValueError, match=r"player must be in \[0, 2\) and policies must list 2 policies; got player="):
        induced_mdp(P, None, pols, player)
