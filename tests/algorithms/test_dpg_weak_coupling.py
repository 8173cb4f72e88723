"""SmoothActionMDP.gain_bias / dpg_gradient on weakly coupled and on split chains.

The stationary law came from solving ``(I − P + 11ᵀ/S)ᵀ μ = 1/S``: with two states coupled by
``e^-40`` (``1 − P(s|s)`` rounds to 0) it raised ``LinAlgError: Singular matrix`` although the
chain is irreducible, and with ``e^-1000 = 0`` (two recurrent classes, no single gain) the same
bare ``LinAlgError``. Now the library's chain solvers (GTH when ill-conditioned) give the exact
answer in the first case and a located ``ValueError`` in the second.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.algorithms.average_reward_dpg import SmoothActionMDP, dpg_gradient


def _pair(L: float) -> SmoothActionMDP:
    # P(.|s, u) = softmax(L[s]) with L = [[0, L], [L, 0]] (K = 0: u moves only the reward
    # r(s, u) = r0[s] + u - u^2/2 with r0 = (0, 1))
    return SmoothActionMDP(
        np.array([[0.0, L], [L, 0.0]]), np.zeros((2, 2)), np.array([0.0, 1.0]), np.ones(2)
    )


def test_weakly_coupled_pair_has_the_closed_form_gain_and_bias():
    # symmetric switching probability d = e^-40/(1 + e^-40): mu = (1/2, 1/2), g = 1/2 at u = 0,
    # and h0 - h1 = (r0 - r1)/(2d) with mu^T h = 0, so h = (-1/(4d), 1/(4d)); the gradient is
    # mu(s)(1 - u_s + dP h) with dP = 0 (K = 0): (1/2, 1/2)
    m = _pair(-40.0)
    d = math.exp(-40.0) / (1.0 + math.exp(-40.0))
    g, h, mu = m.gain_bias([0.0, 0.0])
    np.testing.assert_allclose(mu, [0.5, 0.5], rtol=1e-15)
    assert g == pytest.approx(0.5, rel=1e-15)
    np.testing.assert_allclose(h, [-1 / (4 * d), 1 / (4 * d)], rtol=1e-12)
    grad, J = dpg_gradient(m, [0.0, 0.0])
    np.testing.assert_allclose(grad, [0.5, 0.5], rtol=1e-15)
    assert J == pytest.approx(0.5, rel=1e-15)


def test_split_chain_is_named():
    with pytest.raises(ValueError, match=r"must be unichain .*recurrent classes \{0\}, \{1\}"):
        _pair(-1000.0).gain_bias([0.0, 0.0])
    with pytest.raises(ValueError, match=r"must be unichain .*recurrent classes \{0\}, \{1\}"):
        dpg_gradient(_pair(-1000.0), [0.0, 0.0])


def test_well_conditioned_model_agrees_with_the_poisson_solve():
    # consistency with the direct formulas mu^T (I - P + 11^T/S) = 1^T/S, h = Z (r - g)
    rng = np.random.default_rng(3)
    S = 4
    m = SmoothActionMDP(
        rng.standard_normal((S, S)),
        rng.standard_normal((S, S)),
        rng.standard_normal(S),
        rng.standard_normal(S),
        0.3,
    )
    th = rng.standard_normal(S)
    P, r = m.kernel(th), m.reward(th)
    mu = np.linalg.solve((np.eye(S) - P + np.ones((S, S)) / S).T, np.ones(S) / S)
    g = mu @ r
    h = np.linalg.inv(np.eye(S) - P + np.outer(np.ones(S), mu)) @ (r - g)
    g2, h2, mu2 = m.gain_bias(th)
    np.testing.assert_allclose(mu2, mu, rtol=1e-12)
    assert g2 == pytest.approx(g, rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(h2, h, rtol=1e-10, atol=1e-13)
