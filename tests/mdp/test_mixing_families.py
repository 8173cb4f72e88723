"""The laziness dial of ring_mdp: a family whose mixing time grows while J(θ), ∇J(θ) and g* stay fixed.

For any policy the kernel of ``ring_mdp(n, laziness=α)`` is ``P_α = αI + (1−α)P⁰`` with ``P⁰``
the kernel at ``α = 0``. Then ``μᵀP_α = μᵀ`` iff ``μᵀP⁰ = μᵀ`` (same stationary law, hence the
same gain ``g = μᵀr``), and ``(I − P_α)h = (1−α)(I − P⁰)h`` so the bias solving
``(I − P_α)h = r − g`` with ``μᵀh = 0`` is ``h_α = h⁰/(1−α)``. The advantage
``r − g + P_α h_α − h_α = r − g + P⁰h⁰ − h⁰`` (the reward does not depend on the action) and
hence the average-reward policy gradient do not depend on ``α``. The spectrum maps as
``λ ↦ α + (1−α)λ``, so the spectral gap, and with it the mixing time, scales like ``1/(1−α)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.average_reward import average_reward_gradient
from rltheory.algorithms.policy_gradient import softmax_policy
from rltheory.bounds.average import mixing_time_spectral_bounds
from rltheory.mdp import average_policy_iteration, gain_bias, policy_transition_matrix, ring_mdp
from rltheory.mdp.mixing import mixing_time, spectral_gap, stationary_distribution


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(3, 8),
    alphas=st.tuples(st.floats(0.05, 0.95), st.floats(0.05, 0.95)),
    slip=st.floats(0.0, 0.3),
    reward=st.sampled_from(["sparse", "dense"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_laziness_leaves_gain_gradient_and_stationary_law_unchanged(n, alphas, slip, reward, seed):
    theta = np.random.default_rng(seed).uniform(-3.0, 3.0, size=(n, 2))
    pi = np.asarray(softmax_policy(theta))  # full support: every chain irreducible
    out = []
    for a in alphas:
        mdp = ring_mdp(n, laziness=a, slip=slip, reward=reward)
        P = np.asarray(policy_transition_matrix(mdp, pi))
        gb = gain_bias(mdp, pi)
        grad, J = average_reward_gradient(mdp, theta)
        out.append((np.asarray(stationary_distribution(P)), float(np.asarray(gb.g)), np.asarray(gb.h), grad, J))
    (mu1, g1, h1, d1, J1), (mu2, g2, h2, d2, J2) = out
    np.testing.assert_allclose(mu1, mu2, atol=1e-9)
    assert g1 == pytest.approx(g2, abs=1e-10) and J1 == pytest.approx(J2, abs=1e-10)
    # h_α (1 − α) is the α-free bias h⁰ (both normalised by μᵀh = 0)
    np.testing.assert_allclose(h1 * (1 - alphas[0]), h2 * (1 - alphas[1]), atol=1e-8)
    np.testing.assert_allclose(d1, d2, atol=1e-9)


@pytest.mark.parametrize("alpha", [0.5, 0.75, 0.9, 0.984375])
def test_laziness_scales_spectral_gap_and_mixing_time(alpha):
    # uniform policy: P_α = αI + (1−α)(C + Cᵀ)/2 has gap (1−α)(1 − cos 2π/n) (LPW 2017 §12.3.1)
    n = 6
    P = np.asarray(policy_transition_matrix(ring_mdp(n, laziness=alpha), np.full((n, 2), 0.5)))
    sg = spectral_gap(P)
    assert sg.gap == pytest.approx((1 - alpha) * (1 - math.cos(2 * math.pi / n)), rel=1e-10)
    lo, hi = mixing_time_spectral_bounds(sg.relaxation_time, 0.25, 1.0 / n)
    t = int(mixing_time(P))
    assert lo <= t <= hi


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.9])
def test_dense_six_cycle_optimal_gain_is_seven_eighths(alpha):
    # n = 6, r(s) = (1 + cos(2πs/6))/2 = 1, 3/4, 1/4, 0, 1/4, 3/4. The best policy walks back to 0
    # from 1 and 5; its recurrent class {0, 1, 5} alternates 0 ↔ {1, 5} with equal exit rates (1 − α),
    # so μ(0) = μ({1, 5}) = 1/2 and g* = (1 + 3/4)/2 = 7/8 for every α < 1.
    res = average_policy_iteration(ring_mdp(6, laziness=alpha, reward="dense"))
    assert float(np.max(np.asarray(res.gain))) == pytest.approx(0.875, abs=1e-10)
    assert float(np.min(np.asarray(res.gain))) == pytest.approx(0.875, abs=1e-10)


def test_ring_laziness_and_slip_validation():
    with pytest.raises(ValueError, match=r"laziness must lie in \[0, 1\]; got 1.5"):
        ring_mdp(6, laziness=1.5)
    with pytest.raises(ValueError, match=r"slip must lie in \[0, 1\]; got -0.1"):
        ring_mdp(6, slip=-0.1)
    with pytest.raises(ValueError, match="reward must be 'sparse' or 'dense'"):
        ring_mdp(6, reward="graded")
