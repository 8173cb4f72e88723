"""dpg_gradient where P(·|s, θ_s) is nearly deterministic, against the two-state closed form.

Two states with switching probabilities ``p = P(1|0, θ_0)`` and ``q = P(0|1, θ_1)`` have
``μ = (q, p)/(p + q)`` and ``J = (q r_0 + p r_1)/(p + q)``, so (differentiating)

``∂J/∂θ_0 = [q r_0' + q (r_1 − r_0) p'/(p + q)]/(p + q)`` with ``p' = p(1 − p)(K[0,1] − K[0,0])``,
``∂J/∂θ_1 = [p r_1' + p (r_0 − r_1) q'/(p + q)]/(p + q)`` with ``q' = q(1 − q)(K[1,0] − K[1,1])``,

``p = σ(L[0,1] − L[0,0] + θ_0 (K[0,1] − K[0,0]))`` (``σ`` the logistic function), ``q`` likewise and
``r_s' = r1[s] − 2 c θ_s``. Every factor is a product of positive numbers or a difference of model
entries, so the float evaluation below is accurate to a few ulps: an independent reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from rltheory.algorithms.average_reward_dpg import SmoothActionMDP, dpg_gradient


def _closed_form(m: SmoothActionMDP, th: np.ndarray) -> tuple[np.ndarray, float]:
    zp = m.L[0, 1] - m.L[0, 0] + th[0] * (m.K[0, 1] - m.K[0, 0])
    zq = m.L[1, 0] - m.L[1, 1] + th[1] * (m.K[1, 0] - m.K[1, 1])
    p, q = expit(zp), expit(zq)
    dp = p * expit(-zp) * (m.K[0, 1] - m.K[0, 0])
    dq = q * expit(-zq) * (m.K[1, 0] - m.K[1, 1])
    r = m.r0 + m.r1 * th - m.c * th * th
    dr = m.r1 - 2 * m.c * th
    n = p + q
    g0 = (q * dr[0] + q * (r[1] - r[0]) * dp / n) / n
    g1 = (p * dr[1] + p * (r[0] - r[1]) * dq / n) / n
    return np.array([g0, g1]), float((q * r[0] + p * r[1]) / n)


@pytest.mark.parametrize(
    ("K", "theta"),
    [
        # K[1] = (0, 1): P(0|1) = 5.2e-18, and K[1] - sum_s' P(s'|1) K[1, s'] read 1 - 1.0 = 0 for
        # s' = 1, so dP(1|1)/du = 5.2e-18 became 0; times the bias |h| = 4.5e16 that moved dQ by
        # 0.23: the gradient was (-0.16061, -0.29168) for the exact (-0.16061, -0.41310)
        ([[0.0, 1.0], [0.0, 1.0]], [0.3, -0.2]),
        ([[0.0, 1.0], [0.0, 1.0]], [-1.0, 2.0]),
        ([[0.0, -2.0], [3.0, 0.5]], [0.7, 0.1]),
        ([[1.0, 0.0], [0.0, -1.0]], [0.0, 0.0]),
    ],
)
def test_slowly_mixing_pair_matches_the_closed_form_gradient(K, theta):
    m = SmoothActionMDP(
        np.array([[0.0, -40.0], [-40.0, 0.0]]),
        np.array(K),
        np.array([1.0, 0.0]),
        np.array([0.5, -0.5]),
        0.5,
    )
    th = np.array(theta)
    want, J_want = _closed_form(m, th)
    grad, J = dpg_gradient(m, th)
    assert J == pytest.approx(J_want, rel=1e-12)
    np.testing.assert_allclose(grad, want, rtol=1e-11)


def test_pairs_from_well_to_badly_conditioned_match_the_closed_form():
    # coupling e^-1 .. e^-36 (bias up to ~1e15): the gradient agrees with the closed form to
    # ~1e-13 relative (the direct form K - sum P K lost up to all of dP where P(s|s) ~ 1)
    rng = np.random.default_rng(60)
    for coupling in (1.0, 5.0, 15.0, 25.0, 36.0):
        for _ in range(5):
            L = rng.standard_normal((2, 2)) - coupling * (1 - np.eye(2))
            m = SmoothActionMDP(
                L, rng.standard_normal((2, 2)), rng.standard_normal(2), rng.standard_normal(2), 0.5
            )
            th = rng.standard_normal(2)
            want, _ = _closed_form(m, th)
            grad, _ = dpg_gradient(m, th)
            np.testing.assert_allclose(grad, want, rtol=1e-11, atol=1e-14 * np.abs(want).max())
