"""The exact average-reward gradient stays exact on slowly mixing chains.

``∂J/∂θ[s, a] = μ(s) π(a|s) (Q(s, a) − h(s))`` with ``Q − h = r − g + Σ_{s'} P(s'|s,a) h(s') − h(s)``.
On a chain that switches state with probability ``p``, ``h`` is of size ``1/p`` while ``Q − h`` is of
size 1; forming ``P @ h − h`` lost ``ε·|h|`` to cancellation, a relative error ``≈ ε/p`` in ``∇J``
(2e-7 at ``p = 1e-9``, 1.8e-4 at ``p = 1e-12``, 1% at ``1e-14``). The same cancellation was in
``mac_expected_terms``' ``E[δ | s, a]``. Both now sum ``P(s'|s,a)(h(s') − h(s))``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.average_reward import average_reward_gradient, mac_expected_terms
from rltheory.algorithms.policy_gradient import softmax_policy
from rltheory.mdp import FiniteMDP, policy_transition_matrix
from rltheory.mdp.average import gain_bias
from rltheory.mdp.mixing import stationary_distribution


def _two_state(eps: float) -> FiniteMDP:
    """Switch state w.p. ``eps (1 + a)``; reward 1 in state 1.

    Closed form: with ``x = π(1|0)``, ``y = π(1|1)``, ``J = μ(1) = (1 + x)/(2 + x + y)`` for every
    ``eps`` (the switching rates ``eps(1 + x)`` and ``eps(1 + y)`` share the factor ``eps``).
    At ``θ = 0`` (``x = y = 1/2``): ``J = 1/2``, ``∂J/∂x = (1 + y)/(2 + x + y)² = 1/6``,
    ``∂J/∂y = −1/6`` and ``∂x/∂θ[0, 1] = −∂x/∂θ[0, 0] = x(1 − x) = 1/4``, so
    ``∇J = [[−1, 1], [1, −1]]/24``.
    """
    P = np.zeros((2, 2, 2))
    for s in range(2):
        for a in range(2):
            P[s, a, 1 - s] = eps * (1 + a)
            P[s, a, s] = 1 - eps * (1 + a)
    return FiniteMDP(P, np.array([[0.0, 0.0], [1.0, 1.0]]), None)


GRAD = np.array([[-1.0, 1.0], [1.0, -1.0]]) / 24


@pytest.mark.parametrize("eps", [1e-2, 1e-6, 1e-9, 1e-12, 1e-14])
def test_gradient_closed_form_on_a_slow_two_state_chain(eps):
    grad, J = average_reward_gradient(_two_state(eps), np.zeros((2, 2)))
    assert J == pytest.approx(0.5, abs=1e-12)  # (gain_bias's accuracy)
    # 3e-10 at eps = 1e-8, 5e-6 at 1e-12, 3e-4 at 1e-14 before
    np.testing.assert_allclose(grad, GRAD, rtol=0, atol=1e-15)


@pytest.mark.parametrize("eps", [1e-9, 1e-12])
def test_expected_actor_term_is_the_gradient_on_a_slow_chain(eps):
    """With the exact critic (ω = h, η = g), Σ_s μ(s) ḡ(s) = ∇J (Sutton et al. 2000)."""
    mdp = _two_state(eps)
    pi = softmax_policy(np.zeros((2, 2)))
    g, h = gain_bias(mdp, pi)
    _, _, gbar = mac_expected_terms(mdp, np.zeros((2, 2)), np.asarray(h), float(g))
    mu = np.asarray(stationary_distribution(np.asarray(policy_transition_matrix(mdp, pi))))
    np.testing.assert_allclose(np.tensordot(mu, gbar, axes=(0, 0)), GRAD, rtol=0, atol=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_lazy_chains_share_the_gradient(seed):
    """``J`` of ``αI + (1−α)P`` equals ``J`` of ``P`` for every ``θ`` (same stationary laws), so ``∇J``
    is the same at every laziness; ``α = 1 − 1e-11`` (bias ~1e11) matches the fast chain."""
    rng = np.random.default_rng(seed)
    S, A = 4, 3
    P = rng.dirichlet(np.ones(S), size=(S, A))
    R, theta = rng.random((S, A)), rng.standard_normal((S, A))
    fast, J_fast = average_reward_gradient(FiniteMDP(P, R, None), theta)
    lam = 1e-11
    lazy = lam * P
    lazy[np.arange(S), :, np.arange(S)] += 1 - lam
    slow, J_slow = average_reward_gradient(FiniteMDP(lazy, R, None), theta)
    assert J_slow == pytest.approx(J_fast, abs=1e-12)
    scale = np.abs(fast).max()
    # relative error ~1e-5 before
    np.testing.assert_allclose(slow, fast, rtol=0, atol=1e-11 * scale)
