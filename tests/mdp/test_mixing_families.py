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
from rltheory.bounds import kl_to_policy
from rltheory.bounds.average import mixing_time_spectral_bounds
from rltheory.mdp import (
    average_policy_iteration,
    gain_bias,
    policy_iteration,
    policy_transition_matrix,
    ring_mdp,
)
from rltheory.mdp.mixing import limiting_matrix, mixing_time, spectral_gap, stationary_distribution
from rltheory.mdp.zoo import garnet


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
        out.append(
            (
                np.asarray(stationary_distribution(P)),
                float(np.asarray(gb.g)),
                np.asarray(gb.h),
                grad,
                J,
            )
        )
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


# ---------------------------------------------------------------- stationary laws of nearly decomposable chains
def _birth_death(p, q):
    """Birth–death chain with up-rates ``p[i]`` (i → i+1) and down-rates ``q[i]`` (i+1 → i);
    its stationary law has the closed form ``μ_{i+1}/μ_i = p[i]/q[i]`` (detailed balance)."""
    S = len(p) + 1
    P = np.zeros((S, S))
    for i in range(S - 1):
        P[i, i + 1], P[i + 1, i] = p[i], q[i]
    P[np.arange(S), np.arange(S)] = 1.0 - P.sum(axis=1)
    ratios = np.concatenate([[1.0], np.cumprod(np.asarray(p) / np.asarray(q))])
    return P, ratios / ratios.sum()


@pytest.mark.parametrize("delta", [1e-30, 1e-200])
def test_stationary_law_of_a_chain_coupled_below_round_off(delta):
    """``I − P + 11ᵀ`` is singular in float64 when 1 − δ rounds to 1; the solve falls back to
    GTH and returns the closed form (3/4, 1/4) exactly, batched and through limiting_matrix."""
    P = np.array([[1.0 - delta, delta], [3.0 * delta, 1.0 - 3.0 * delta]])
    np.testing.assert_array_equal(stationary_distribution(P), [0.75, 0.25])
    np.testing.assert_array_equal(stationary_distribution(np.stack([P, P])), [[0.75, 0.25]] * 2)
    np.testing.assert_array_equal(limiting_matrix(P), [[0.75, 0.25]] * 2)


def test_gth_is_entrywise_accurate_where_the_solve_is_not():
    """A 6-state birth–death chain whose middle link has rates 1e-14: GTH matches the detailed-
    balance closed form to 1e-14 relative in every entry; the plain linear solve was off by more
    than 1e-6 relative (its error grows like ε/δ), so ``method="solve"`` now detects the
    ill-conditioning and redoes the chain by GTH (this test asserted the solve's error > 1e-6 until
    that fallback; tests/mdp/test_h58_stationary_accuracy.py checks the solve's stated bound)."""
    p = [0.3, 0.2, 1e-14, 0.4, 0.1]
    q = [0.1, 0.5, 3e-14, 0.2, 0.3]
    P, mu = _birth_death(p, q)
    gth = np.asarray(stationary_distribution(P, method="gth"))
    solve = np.asarray(stationary_distribution(P))
    assert np.max(np.abs(gth - mu) / mu) < 1e-14
    assert np.max(np.abs(solve - mu) / mu) < 1e-14


def test_gth_equals_the_solve_on_well_conditioned_chains_with_transient_states():
    """On random unichain chains (state 0 transient, states 1.. a dense recurrent class) both
    methods agree to 1e-13, and both put zero mass on the transient state."""
    rng = np.random.default_rng(11)
    P = rng.random((5, 7, 7))
    P[:, 1:, 0] = 0.0  # nothing enters state 0: transient
    P /= P.sum(axis=-1, keepdims=True)
    gth = np.asarray(stationary_distribution(P, method="gth"))
    solve = np.asarray(stationary_distribution(P))
    np.testing.assert_allclose(gth, solve, rtol=0, atol=1e-13)
    assert np.all(gth[:, 0] == 0.0)
    np.testing.assert_allclose(np.einsum("bs,bst->bt", gth, P), gth, rtol=0, atol=1e-15)


def test_stationary_solve_returns_a_probability_vector_on_transient_states():
    """The optimal chain of garnet(200, 5, 5, γ=0.95, rng=0) has a transient state (181) where
    the solve of ``(I − P + 11ᵀ)ᵀμ = 1`` leaves −2.5e-17: the result is clipped there to the
    exact 0 and renormalised, so it is a probability vector that weight validators accept
    (the pmd-linear full preset passes it to ``kl_to_policy``, which rejected it), and it
    still agrees with GTH."""
    mdp = garnet(200, 5, 5, gamma=0.95, rng=0)
    P = policy_transition_matrix(mdp, policy_iteration(mdp).policy)
    mu = np.asarray(stationary_distribution(P))
    assert mu.min() == 0.0 and mu[181] == 0.0
    assert abs(mu.sum() - 1.0) <= 1e-15
    np.testing.assert_allclose(
        mu, np.asarray(stationary_distribution(P, method="gth")), rtol=0, atol=1e-14
    )
    pi0 = np.full((mdp.S, mdp.A), 1.0 / mdp.A)
    assert np.isfinite(kl_to_policy(mdp, policy_iteration(mdp).policy, pi0, mu))


def test_stationary_method_is_checked():
    with pytest.raises(ValueError, match=r"method must be 'solve' or 'gth'; got 'lu'"):
        stationary_distribution(np.eye(1), method="lu")
    with pytest.raises(ValueError, match=r"needs a unichain P .*batch index \(1,\)"):
        stationary_distribution(
            np.stack([np.array([[0.5, 0.5], [0.5, 0.5]]), np.eye(2)]), method="gth"
        )


def test_ring_structure_at_the_edges_of_its_parameter_ranges():
    # The structure claims of rltheory.mdp.mixing_zoo's notes, checked by classify_mdp / chain_structure.
    from rltheory.mdp import classify_mdp
    from rltheory.mdp.structure import chain_structure

    assert classify_mdp(ring_mdp(2)).kind == "recurrent"
    assert classify_mdp(ring_mdp(3)).kind == "unichain"
    for n in (4, 5, 6):
        st_ = classify_mdp(ring_mdp(n))
        assert st_.kind == "communicating" and st_.unichain is False
    # laziness 0: the uniform walk on an even cycle has period 2 (mixing_time refuses), odd n is aperiodic
    for n, period in ((4, 2), (6, 2), (5, 1)):
        mdp = ring_mdp(n, laziness=0.0)
        P = policy_transition_matrix(mdp, np.full((n, 2), 0.5))
        assert chain_structure(P).periods == (period,)
    with pytest.raises(ValueError, match="periodic"):
        mixing_time(policy_transition_matrix(ring_mdp(4, laziness=0.0), np.full((4, 2), 0.5)))
    # laziness 1: P = I, every state absorbing: the sparse reward's optimal gain is 1 in state 0 only
    mdp = ring_mdp(4, laziness=1.0)
    np.testing.assert_array_equal(mdp.P, np.broadcast_to(np.eye(4)[:, None, :], (4, 2, 4)))
    np.testing.assert_allclose(
        average_policy_iteration(mdp, multichain=True).gain, [1.0, 0.0, 0.0, 0.0]
    )
