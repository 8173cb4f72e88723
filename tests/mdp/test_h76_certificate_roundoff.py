"""The public span certificate counts its round-off, as the solvers' certificates do.

``bellman_certificate`` returned ``γ/(1−γ)·sp(Δ)`` of the computed ``Δ = Tv − v`` alone. At a
float32 rounding tie that is 0 while the greedy policy is below ``V*`` (one state, rewards
``(1, 1 + 2⁻²³)``, γ = 0.999, ``v = 1000``: both ``Q_v`` entries round to 1000, the greedy
policy takes action 0, ``V* − V^π = 2⁻²³/(1−γ) ≈ 1.2e-4``). References: exact rational values
of the stored model (``rltheory.testing``).
"""

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP, bellman_certificate
from rltheory.testing import exact_optimal_values, exact_policy_values


def _loss(P, R, gamma, Q):
    """``max_s (V* − V^π)(s)`` exactly, ``π`` greedy (lowest index) for the computed ``Q``."""
    S, A = R.shape
    pi = np.zeros((S, A))
    pi[np.arange(S), np.argmax(np.asarray(Q, dtype=np.float64), axis=-1)] = 1.0
    v_star = exact_optimal_values(P, R, gamma)
    return max(a - b for a, b in zip(v_star, exact_policy_values(P, R, gamma, pi), strict=True))


def test_certificate_at_a_float32_rounding_tie_covers_the_loss():
    R = np.array([[1.0, 1.0 + 2.0**-23]], dtype=np.float32)
    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=np.float32), R, gamma=0.999)
    Q, Tv, D, bound = bellman_certificate(mdp, np.array([1000.0], dtype=np.float32))
    assert np.all(np.asarray(D) == 0.0)  # the computed Δ says "fixed point"
    loss = _loss(np.ones((1, 2, 1)), R.astype(np.float64), float(mdp.gamma), Q)
    assert float(loss) > 1e-4
    assert loss <= Fraction(float(bound))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_certificate_covers_the_loss_near_the_fixed_point(dtype):
    # v = V* plus noise of a few ulps of V* (where the computed Δ is mostly rounding), on random
    # 3-state models with near-tied actions at γ = 0.999
    u = float(np.finfo(dtype).eps)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        P = rng.dirichlet(np.ones(3), size=(3, 2)).astype(dtype).astype(np.float64)
        R = rng.uniform(0.0, 1.0, size=(3, 2))
        R[:, 1] = R[:, 0] + u * rng.integers(-2, 3, size=3)  # ties and near-ties
        R = R.astype(dtype).astype(np.float64)
        mdp = FiniteMDP(P.astype(dtype), R.astype(dtype), gamma=0.999)
        v_star = np.array([float(x) for x in exact_optimal_values(P, R, float(mdp.gamma))])
        v = (v_star * (1.0 + u * rng.integers(-4, 5, size=3))).astype(dtype)
        Q, _, _, bound = bellman_certificate(mdp, v)
        loss = _loss(P, R, float(mdp.gamma), Q)
        assert loss <= Fraction(float(bound)), (seed, float(loss), float(bound))
