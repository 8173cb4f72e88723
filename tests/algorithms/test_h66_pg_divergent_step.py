"""Softmax PG with a step that sends the logits out of the float range names ``eta``.

float32, three states, rewards ``~1e30``, ``gamma = 0.9``: with ``tau = 1e29`` and ``eta = 1e8`` (far
above Mei et al.'s ``(1 - gamma)^3/(8 + tau(4 + 8 log|A|))``) the iterates diverge, ``tau log pi_t``
overflows and the gradient turns NaN; with ``tau = 0`` and ``eta = 1e20`` the first update already
overflows the logits to ``+inf``. Both failed at the next evaluation with "pi must be finite;
pi(s=0, a=0) = nan" (an internal name); now a ``ValueError`` names ``eta``, the iteration and the
entry. Logits of ``-inf`` with a finite maximum are still a softmax (probability 0) and are
accepted: a one-state bandit where they arise keeps its old result.
"""

import re

import numpy as np
import pytest

from rltheory.algorithms.policy_gradient import softmax_policy_gradient
from rltheory.mdp import FiniteMDP


def _model():
    rng = np.random.default_rng(0)
    P = rng.random((3, 2, 3))
    P /= P.sum(-1, keepdims=True)
    return FiniteMDP(
        P.astype(np.float32), (1e30 * rng.random((3, 2))).astype(np.float32), gamma=0.9
    )


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (the overflow the error reports)
@pytest.mark.parametrize(("tau", "eta", "t"), [(1e29, 1e8, 2), (0.0, 1e20, 1)])
def test_a_divergent_step_is_named(tau, eta, t):
    with pytest.raises(
        ValueError,
        match=re.escape(f"eta={eta!r}")
        + rf" is too large .* float32 range at iteration t={t}, theta\(s=",
    ):
        softmax_policy_gradient(_model(), eta=eta, tau=tau, iterations=5)


def test_a_small_step_still_runs():
    res = softmax_policy_gradient(_model(), eta=1e-33, tau=1e29, iterations=5)
    assert np.all(np.isfinite(res.policy)) and np.all(np.isfinite(res.theta))


def test_minus_infinite_logits_with_a_finite_maximum_are_a_policy():
    # one state, ten arms, r = (0, 100, ..., 100), gamma = 0, uniform start: V = 90 and the gradient
    # pi*(r - V) is (-9, 1, ..., 1); eta = 1e38 sends arm 0's logit to -9e38 = -inf in float32 while the
    # others reach 1e38: probability 0 for arm 0, 1/9 for each other arm, which is optimal (gradient 0
    # from then on). The old code ran this too; the check does not refuse it.
    r = np.array([[0.0] + [100.0] * 9], np.float32)
    bandit = FiniteMDP(np.ones((1, 10, 1), np.float32), r, gamma=0.0)
    res = softmax_policy_gradient(bandit, eta=1e38, iterations=3)
    assert res.theta[0, 0] == -np.inf and np.all(np.isfinite(res.theta[0, 1:]))
    np.testing.assert_allclose(res.policy[0], [0.0] + [1 / 9] * 9, rtol=1e-6)
    # optimal up to float32 round-off of values near 100 (a few ulps, 7.6e-6 each)
    assert abs(res.trace["suboptimality"][-1]) <= 8 * np.finfo(np.float32).eps * 100
