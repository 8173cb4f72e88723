"""The compatible critic and natural actor-critic at the ends of the float range of the features.

The least-squares problem ``min_w Σ d(s)π(a|s)(ψ(s, a)ᵀw − A(s, a))²`` is covariant under a scaling
of the features: ``ψ → cψ`` gives ``w → w/c`` with the same residual, and NAC with features ``cφ``
runs through the same policies (``θ → θ/c``, logits unchanged). For ``c`` a power of 2 every
quantity at unit scale is represented exactly at scale ``c``, so the answers must agree to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.actor_critic import LSTDCritic, natural_actor_critic
from rltheory.algorithms.critics import compatible_critic, compatible_features
from rltheory.mdp import FiniteMDP


def _problem(seed: int = 0) -> tuple[FiniteMDP, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    S, A, d = 3, 2, 3
    P = rng.dirichlet(np.ones(S), size=(S, A))
    mdp = FiniteMDP(P, rng.random((S, A)), gamma=0.9)
    return mdp, rng.dirichlet(np.ones(A), size=S), rng.standard_normal((S, A, d))


@pytest.mark.parametrize("k", [-1000, -700, -400, 400, 700, 1000])
def test_compatible_critic_scales_inversely_with_the_features(k):
    # Features 2^-1000 ~ 1e-301 fell under the SVD cut's absolute floor 1e-300 and gave w = 0 with
    # the residual of w = 0 (0.143 here instead of ~1e-16).
    mdp, pi, phi = _problem()
    w1, r1 = compatible_critic(mdp, pi, compatible_features(phi, pi))
    c = np.ldexp(1.0, k)
    w, r = compatible_critic(mdp, pi, compatible_features(phi * c, pi))
    scale = float(np.max(np.abs(w1)))
    np.testing.assert_allclose(np.ldexp(w, k), w1, rtol=0, atol=1e-13 * scale)
    # the residual of the 3-parameter fit is at rounding level for both (6 rows, 3 of them independent
    # after the per-state centring: the fit is exact), i.e. far below the advantage's size
    assert float(r) < 1e-13 and float(r1) < 1e-13


def test_compatible_critic_beyond_the_float_range_is_a_located_error():
    # Features 1e-310 (subnormal): the critic would be ~1e309, beyond the float range; it was returned as 0
    mdp, pi, phi = _problem()
    with pytest.raises(
        ValueError, match=r"least-squares weights are beyond the float range: w\[\d\]"
    ):
        compatible_critic(mdp, pi, compatible_features(phi * 1e-310, pi))


@pytest.mark.parametrize("k", [-700, -300, 300, 700])
@pytest.mark.parametrize("one_hot", [True, False])
def test_nac_trace_is_invariant_under_a_power_of_two_scaling_of_the_features(k, one_hot):
    # One-hot features c·e: the closed-form critic formed 1/c², inf for c = 2^-700 (a NaN actor step);
    # random features 2^700: the SVD cut's rounding levels were squared to inf (NaN critic).
    mdp, _, phi = _problem(1)
    f = np.eye(6).reshape(3, 2, 6) if one_hot else phi
    base = natural_actor_critic(mdp, f, eta=0.5, iterations=8)
    res = natural_actor_critic(mdp, np.ldexp(f, k), eta=0.5, iterations=8)
    for key in ("suboptimality", "critic_error"):
        np.testing.assert_allclose(res.trace[key], base.trace[key], rtol=0, atol=1e-13)
    np.testing.assert_allclose(
        res.trace["approximation_error"], base.trace["approximation_error"], rtol=0, atol=1e-13
    )
    np.testing.assert_allclose(
        np.ldexp(res.theta, k),
        base.theta,
        rtol=1e-12,
        atol=1e-12 * float(np.max(np.abs(base.theta))),
    )


def test_nac_critic_error_scales_with_the_rewards():
    # Rewards ×2^700 with η ×2^-700 run through the same policies (w scales with the rewards, the
    # actor step η w/(1−γ) does not), so every trace entry in reward units scales by 2^700. The
    # critic error squared ψᵀ(w − w*) ~ 1e210 and came out inf.
    mdp, _, phi = _problem(0)
    big = FiniteMDP(np.asarray(mdp.P), np.ldexp(np.asarray(mdp.R), 700), gamma=0.9)
    base = natural_actor_critic(
        mdp, phi, eta=0.5, iterations=3, critic=LSTDCritic(samples=200), rng=0
    )
    res = natural_actor_critic(
        big, phi, eta=np.ldexp(0.5, -700), iterations=3, critic=LSTDCritic(samples=200), rng=0
    )
    for key in ("suboptimality", "critic_error", "approximation_error"):
        np.testing.assert_allclose(
            np.ldexp(res.trace[key], -700), base.trace[key], rtol=1e-12, atol=1e-15
        )


def test_compatible_features_that_overflow_are_a_located_error():
    # ψ(0, 0) = φ(0, 0) − E_πφ = 1.5e308 + 0.9·1.5e308 is beyond the float range: returned as inf
    phi = np.array([[[1.5e308, 0.0], [-1.5e308, 0.0]]])
    with pytest.raises(ValueError, match=r"compatible_features: .* overflow at \(s=0, a=0, j=0\)"):
        compatible_features(phi, np.array([[0.1, 0.9]]))


def test_nac_with_features_whose_compatible_features_overflow_is_a_located_error():
    # features up to 1.7e308: after one step ψ overflows; the SVD of a design holding inf did not
    # return (LAPACK), and before the scaling the run stood still at w = 0
    mdp, _, phi = _problem(0)
    f = phi / np.max(np.abs(phi)) * 1.7e308
    with pytest.raises(ValueError, match=r"natural_actor_critic at iteration t=1: .* overflow at"):
        natural_actor_critic(mdp, f, eta=0.5, iterations=3)


@pytest.mark.parametrize("ridge", [np.float32(1e-8), np.int64(0), np.array(0.5)])
def test_lstd_critic_takes_numpy_scalar_ridges(ridge):
    # np.float32(1e-8) and np.int64(0) were refused with 'ridge must be >= 0; got np.float32(1e-08)'
    assert LSTDCritic(ridge=ridge).ridge == float(ridge)


@pytest.mark.parametrize("ridge", [True, "1", -1.0, np.float32(-1.0)])
def test_lstd_critic_refuses_a_ridge_that_is_not_a_number_at_least_zero(ridge):
    with pytest.raises(ValueError, match="ridge must be >= 0"):
        LSTDCritic(ridge=ridge)


def _float32_problem():
    mdp, pi, phi = _problem()
    P = np.asarray(mdp.P, dtype=np.float32)
    P /= P.sum(axis=-1, keepdims=True)
    m32 = FiniteMDP(P, np.asarray(mdp.R, dtype=np.float32), gamma=np.float32(0.9))
    return m32, pi.astype(np.float32), phi.astype(np.float32)


def test_float32_compatible_critic_scales_inversely_with_the_features():
    mdp, pi, phi = _float32_problem()
    w1, _ = compatible_critic(mdp, pi, compatible_features(phi, pi))
    w, _ = compatible_critic(mdp, pi, compatible_features(np.ldexp(phi, -120), pi))
    np.testing.assert_allclose(np.ldexp(w.astype(np.float64), -120), w1, rtol=0, atol=1e-6)


def test_float32_critic_beyond_the_range_is_a_located_error():
    # features 2^-135 (float32 subnormals): the scaling factor 2^135 was cast to float32 inf and
    # the SVD of the resulting inf design failed ('SVD did not converge')
    mdp, pi, phi = _float32_problem()
    f = np.ldexp(phi, -135).astype(np.float32)
    with pytest.raises(ValueError, match=r"least-squares weights are beyond the float range"):
        compatible_critic(mdp, pi, compatible_features(f, pi))
