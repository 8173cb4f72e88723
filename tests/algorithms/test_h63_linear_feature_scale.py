"""Linear offline learners (PEVI, fitted-Q iteration) are invariant under a feature scale φ → cφ.

With ``Λ_h = Σ φφᵀ + λI``, replacing ``φ`` by ``cφ`` and ``λ`` by ``c²λ`` gives ``Λ → c²Λ``,
``ŵ → ŵ/c``, so the fitted values ``φᵀŵ``, the elliptical widths ``φᵀΛ⁻¹φ`` and
``ln det(Λ/λ)`` do not change, nor do ``Q̂``, ``V̂`` and the bonus for a given ``β`` (the
self-normalised ``β_h`` is not scale-free: its ``√(λd)(H − h)`` term assumes ``‖φ‖ ≤ 1``).
For ``c`` a power of two the scaling is exact in floating point, so the results must agree bit
for bit; ``Λ`` itself scales by ``c²``. At ``|φ| ~ 1e-160`` the Gram matrix (``~3e-320``) was
subnormal: fitted-Q iteration returned ``V̂_0 = 0.500006`` for three samples of reward 0.5 (the
least-squares value is their mean, 0.5), and at ``1e-162`` ``Λ`` was refused as singular.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.offline import certainty_equivalence, pevi
from rltheory.mdp.offline_data import EpisodeDataset


def _one_state(reward: float = 0.5, K: int = 3) -> EpisodeDataset:
    return EpisodeDataset(
        np.zeros((K, 2), int), np.zeros((K, 1), int), np.full((K, 1), reward), S=1, A=1
    )


def _random_data(seed: int) -> tuple[EpisodeDataset, np.ndarray]:
    rng = np.random.default_rng(seed)
    K, H, S, A, d = 30, 3, 3, 2, 3
    data = EpisodeDataset(
        rng.integers(0, S, (K, H + 1)), rng.integers(0, A, (K, H)), rng.random((K, H)), S=S, A=A
    )
    return data, rng.standard_normal((S, A, d))


@pytest.mark.parametrize("c", [1e-160, 1e-162, 1e-165, 1e-200])
def test_fitted_q_with_tiny_features_is_the_sample_mean(c):
    # one state, one action, H = 1, λ = 0: φᵀŵ = φ (Σ φ²)⁻¹ Σ φ r = mean reward = 0.5 for any φ ≠ 0
    res = certainty_equivalence(_one_state(), features=np.full((1, 1, 1), c), ridge=0.0)
    assert abs(res.V[0, 0] - 0.5) <= 4 * np.finfo(float).eps
    # PEVI's bonus β·|φ|/√(Σ φ²) = β/√3 at every scale
    p = pevi(_one_state(), np.full((1, 1, 1), c), ridge=0.0, beta=0.1)
    assert abs(p.bonus[0, 0, 0] - 0.1 / np.sqrt(3.0)) <= 4 * np.finfo(float).eps
    assert abs(p.V[0, 0] - (0.5 - 0.1 / np.sqrt(3.0))) <= 8 * np.finfo(float).eps


@pytest.mark.parametrize("k", [-530, -400, 200, 300])
@pytest.mark.parametrize("seed", [0, 1])
def test_power_of_two_feature_scale_leaves_every_output_unchanged(k, seed):
    data, phi = _random_data(seed)
    c = 2.0**k
    for ridge in (0.0, 1.0):
        ref = pevi(data, phi, ridge=ridge, beta=0.3)
        got = pevi(data, c * phi, ridge=ridge * c * c, beta=0.3)
        np.testing.assert_array_equal(got.Q, ref.Q)
        np.testing.assert_array_equal(got.V, ref.V)
        np.testing.assert_array_equal(got.bonus, ref.bonus)
        np.testing.assert_array_equal(got.policy, ref.policy)
        if k > -500:  # c²Λ is a normal float: the reported Λ scales exactly
            np.testing.assert_array_equal(got.Lambda, ref.Lambda * (c * c))
        ce_ref = certainty_equivalence(data, features=phi, ridge=ridge)
        ce = certainty_equivalence(data, features=c * phi, ridge=ridge * c * c)
        np.testing.assert_array_equal(ce.Q, ce_ref.Q)


def test_gram_matrix_beyond_the_range_is_still_a_located_error():
    # Λ itself (reported in the result) is not representable: |φ|² ~ 1e308·3
    with pytest.raises(ValueError, match=r"Λ_0 = Σ φφᵀ \+ ridge·I overflows at step h=0"):
        pevi(_one_state(), np.full((1, 1, 1), 1e154), ridge=0.0, beta=0.1)


@pytest.mark.parametrize("ridge", [1.0, 1e-300])
def test_features_spanning_decades_keep_the_given_scale(ridge):
    # sampled φ = 1e-300 (action 0), unsampled φ = 1e10 (action 1): the unit scale 2^-997 would
    # push 1e10 and λ past the float range, so the given scale is kept (the first version of the
    # unit-scale solve raised OverflowError 'math range error' here).
    # Λ = 3e-600 + λ = λ, ŵ = Σ φ r / λ = 1.5e-300/λ, Q̂(a=1) = 1e10 ŵ
    data = EpisodeDataset(
        np.zeros((3, 2), int), np.zeros((3, 1), int), np.full((3, 1), 0.5), S=1, A=2
    )
    phi = np.array([[[1e-300], [1e10]]])
    if ridge == 1.0:
        res = certainty_equivalence(data, features=phi, ridge=ridge)
        assert res.Q[0, 0, 1] == pytest.approx(1.5e-290, rel=1e-14)
        assert pevi(data, phi, ridge=ridge, beta=0.1).V[0, 0] == 0.0  # bonus 0.1·1e10 ≫ Q̂
    else:  # φᵀΛ⁻¹φ = 1e320 on the unsampled action: the located error, not OverflowError
        with pytest.raises(
            ValueError, match=r"φᵀΛ_0⁻¹φ at step h=0 is not finite \(first at s=0, a=1\)"
        ):
            pevi(data, phi, ridge=ridge, beta=0.1)
