"""compatible_critic with float32 compatible features on a float64 model.

Consistency: ``ψ`` rounded to float32 spans, to float32's rounding, the same space as the exact
``ψ``; the minimum-norm critic ``w*`` (Sutton et al. 2000, Thm 2; Kakade 2001) for the float32
``ψ`` must be the float64 one to float32 accuracy, as on a float32 model. The centring
``Σ_a π(a|s) ψ(s, a) = 0`` leaves a null direction per state; rounded to float32 it sits at
``ε32·|ψ|``, and a rounding cut at float64's ``ε`` kept it: before the fix the critic for
``_case(0, 1, 3, 3)`` below (one state, three actions, three features) was
``(−0.078, −0.455, −0.156)`` where both the float64 answer and the float32 model's answer are
``(−0.214, −0.129, 0.059)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.critics import compatible_critic, compatible_features
from rltheory.mdp import FiniteMDP


def _case(seed: int, S: int, A: int, d: int):
    rng = np.random.default_rng(seed)
    P = rng.random((S, A, S))
    P /= P.sum(-1, keepdims=True)
    mdp = FiniteMDP(P, rng.random((S, A)), gamma=0.5)
    phi = rng.normal(size=(S, A, d))
    pi = rng.random((S, A))
    pi /= pi.sum(-1, keepdims=True)
    return mdp, pi, compatible_features(phi, pi)


@pytest.mark.parametrize(
    ("seed", "S", "A", "d"), [(0, 1, 3, 3), (1, 2, 3, 4), (0, 2, 2, 3), (2, 2, 2, 3), (2, 3, 3, 5)]
)
def test_float32_features_give_the_float64_minimum_norm_critic(seed, S, A, d):
    mdp, pi, psi = _case(seed, S, A, d)
    w64, res64 = compatible_critic(mdp, pi, psi)
    w32, res32 = compatible_critic(mdp, pi, psi.astype(np.float32))
    # the float32 rounding of ψ moves the fit by about ε32·cond relative: 1e-5 of max|w| is ample,
    # and the wrong null component was of the size of w itself
    assert np.max(np.abs(w32 - w64)) <= 1e-5 * np.max(np.abs(w64))
    # the fit's weighted residual is the float64 one up to float32's rounding of ψ (|ψw| ≲ 10 here)
    assert abs(res32 - res64) <= 1e-6


def test_reference_one_state_critic():
    # one state: F w* = E_π[ψ A] with the centred ψ of rank A − 1 = 2 < d = 3; the minimum-norm w*
    # from the float64 SVD (numpy.linalg.lstsq, rcond 1e-10), identical for float32 ψ
    mdp, pi, psi = _case(0, 1, 3, 3)
    sw = np.sqrt(pi[0])
    w, _ = compatible_critic(mdp, pi, psi.astype(np.float32))
    adv = np.asarray(mdp.R)[0] - pi[0] @ np.asarray(mdp.R)[0]  # γ-terms cancel: one state
    ref = np.linalg.lstsq(sw[:, None] * psi[0], sw * adv, rcond=1e-10)[0]
    np.testing.assert_allclose(w, ref, rtol=0, atol=1e-5 * np.max(np.abs(ref)))
