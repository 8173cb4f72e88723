"""dpg_gradient at actions whose square leaves the float range.

``dpg_gradient(model, [1e300, 0])`` returned a NaN gradient and gain without a word: ``θ²``
overflowed in the reward ``r0 + r1 u − c u²`` (and with ``c = 0`` the reward was ``0·inf = NaN``).
Now an unrepresentable reward or logit is a ``ValueError`` naming ``theta`` and the entry, and a
representable one (``c = 0``, or a tiny ``c``) gives the exact gradient.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rltheory.algorithms.average_reward_dpg import SmoothActionMDP, dpg_gradient


def _model(c: float) -> SmoothActionMDP:
    # P(.|s, u) = softmax(u K[s]) with K = I: state 0 stays with prob e^u/(e^u + 1), state 1 is
    # uniform at u = 0; r(s, u) = u - c u^2
    return SmoothActionMDP(np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2), c)


@pytest.mark.parametrize("theta", [[1e300, 0.0], [0.0, -1e300], [1e200, 1e200]])
def test_a_reward_beyond_the_float_range_is_named(theta):
    s = int(np.flatnonzero(np.abs(theta) > 1e100)[0])
    with pytest.raises(
        ValueError, match=rf"reward .*theta\[{s}\] = {re.escape(repr(theta[s]))} does not"
    ):
        dpg_gradient(_model(0.5), theta)


def test_logits_beyond_the_float_range_are_named():
    m = SmoothActionMDP(np.zeros((2, 2)), 1e10 * np.eye(2), np.zeros(2), np.ones(2), 0.0)
    with pytest.raises(
        ValueError, match=r"logits L\[s\] \+ theta\[s\] K\[s\] .*theta\[1\] = 1e\+300"
    ):
        dpg_gradient(m, [0.0, 1e300])


def test_linear_reward_at_a_huge_action_has_the_closed_form_gradient():
    # c = 0, theta = (-1e300, 0): P(.|0) = (0, 1) (e^-1e300 = 0), P(.|1) = (1/2, 1/2), so
    # mu = (1/3, 2/3), r = (-1e300, 0), J = -1e300/3. Bias: h0 - h1 = r0 - J = -(2/3) 1e300.
    # dP(.|1) = P (K[1] - P K[1]) = (-1/4, 1/4), dP(.|0) = 0, so
    # dJ/dθ0 = mu0 (r1 + 0) = 1/3 and dJ/dθ1 = mu1 (1 + (h1 - h0)/4) = 2/3 + 1e300/9.
    grad, J = dpg_gradient(_model(0.0), [-1e300, 0.0])
    np.testing.assert_allclose(J, -1e300 / 3, rtol=1e-13)
    np.testing.assert_allclose(grad, [1 / 3, 2 / 3 + 1e300 / 9], rtol=1e-13)


def test_tiny_cost_at_a_huge_action_is_computed():
    # c = 1e-300, theta = (1e300, 0): c u^2 = 1e300 is representable although u^2 is not;
    # P(.|0) = (1, 0), so mu = (1, 0), J = r(0, 1e300) = 1e300 - 1e300 = 0 and
    # dJ/dθ0 = mu0 (1 - 2 c u) = 1 - 2 = -1, dJ/dθ1 = 0 (mu1 = 0)
    grad, J = dpg_gradient(_model(1e-300), [1e300, 0.0])
    assert J == 0.0
    np.testing.assert_allclose(grad, [-1.0, 0.0], rtol=1e-13, atol=0)


def test_moderate_theta_unchanged_by_the_range_check():
    # consistency: the reward with the fallback equals the plain formula where u^2 is finite
    m = _model(0.5)
    th = np.array([3.0, -1.0])
    np.testing.assert_array_equal(m.reward(th), m.r0 + m.r1 * th - m.c * th**2)


@pytest.mark.parametrize(
    ("method", "u", "message"),
    [
        # a scalar failed with numpy's IndexError, (1, S) returned a (1, S, S) "kernel", (3,)
        # failed in numpy broadcasting, text was parsed
        ("kernel", 0.5, r"^u must have shape \(S,\) = \(2,\) \(one action per state\); got \(\)$"),
        ("kernel", [[1.0, 2.0]], r"^u must have shape \(S,\) = \(2,\) .*; got \(1, 2\)$"),
        ("kernel", [1.0, 2.0, 3.0], r"^u must have shape \(S,\) = \(2,\) .*; got \(3,\)$"),
        ("reward", [1.0, 2.0, 3.0], r"^u must have shape \(S,\) = \(2,\) .*; got \(3,\)$"),
        ("gain_bias", [0.0], r"^theta must have shape \(S,\) = \(2,\) .*; got \(1,\)$"),
        # g = -inf and a NaN bias were returned
        ("gain_bias", [1e300, 0.0], r"^theta must keep the model's reward .*theta\[0\] = 1e\+300"),
    ],
)
def test_model_methods_check_their_actions(method, u, message):
    with pytest.raises(ValueError, match=message):
        getattr(_model(0.5), method)(u)


def test_kernel_with_logits_beyond_the_float_range_is_named():
    # L + u K = 1e310 gave inf - inf = NaN rows
    m = SmoothActionMDP(np.zeros((2, 2)), 1e10 * np.eye(2), np.zeros(2), np.ones(2), 0.0)
    with pytest.raises(
        ValueError, match=r"^u must keep the model's logits .*u\[0\] = 1e\+300 does not$"
    ):
        m.kernel([1e300, 0.0])


def test_model_methods_agree_with_dpg_gradient():
    # consistency: J of dpg_gradient = gain_bias's g = μ·r(θ), μ stationary for kernel(θ)
    m = _model(0.5)
    th = [0.7, -0.4]
    g, h, mu = m.gain_bias(th)
    P = m.kernel(th)
    np.testing.assert_allclose(mu @ P, mu, atol=1e-15)
    np.testing.assert_allclose(mu @ m.reward(th), g, rtol=1e-15)
    np.testing.assert_allclose(h, m.reward(th) - g + P @ h, atol=1e-14)  # Poisson equation
    assert dpg_gradient(m, th)[1] == g
