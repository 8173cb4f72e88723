"""A caller's ``V_star`` is certified by its Bellman residual, not taken as exact.

On a one-state model with rewards (0, 1) at γ = 0.5 (V* = 2), ``natural_policy_gradient(...,
V_star=[1.0])`` certified ``suboptimality_bound = -0.995`` where the true gap is 0.005
(reported by helper-39): the certificate assumed the caller's ``V_star`` exact. Now its error is
``‖T V_star − V_star‖∞/(1 − γ)`` plus round-off (Puterman 1994, Prop. 6.6.1 via the contraction).
"""

import numpy as np
import pytest

from rltheory.algorithms import natural_policy_gradient, softmax_policy_gradient
from rltheory.mdp import FiniteMDP, evaluate_policy, policy_iteration, random_mdp


def _true_gap(mdp, pi, rho):
    V = np.asarray(evaluate_policy(mdp, pi))
    V_star = np.asarray(policy_iteration(mdp).V)
    return float(np.sum(rho * (V_star - V), axis=-1).max())


def test_wrong_v_star_no_longer_certifies_a_negative_gap():
    m = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    r = natural_policy_gradient(m, eta=1, iterations=3, V_star=np.array([1.0]))
    gap = _true_gap(m, np.asarray(r.policy), np.ones(1))
    assert gap == pytest.approx(0.00494525, rel=1e-6)
    assert r.trace["suboptimality_bound"][-1] >= gap


@pytest.mark.parametrize("shift", [-0.3, 0.0, 1e-9, 0.7])
@pytest.mark.parametrize("driver", [natural_policy_gradient, softmax_policy_gradient])
def test_bound_holds_for_perturbed_v_star(driver, shift):
    rng = np.random.default_rng(11)
    m = random_mdp(4, 3, gamma=0.9, rng=rng)
    V_star = np.asarray(policy_iteration(m).V)
    given = V_star + shift * rng.random(4)
    r = driver(m, iterations=20, V_star=given, eta=0.5)
    gap = _true_gap(m, np.asarray(r.policy), np.full(4, 0.25))
    assert r.trace["suboptimality_bound"][-1] >= gap


def test_an_exact_v_star_keeps_a_round_off_sized_allowance():
    m = random_mdp(5, 2, gamma=0.8, rng=np.random.default_rng(2))
    V_star = policy_iteration(m).V
    a = natural_policy_gradient(m, eta=1.0, iterations=30, V_star=V_star)
    b = natural_policy_gradient(m, eta=1.0, iterations=30)
    # the residual of an exact V* is round-off: the two certificates agree to ~1e-13
    np.testing.assert_allclose(
        a.trace["suboptimality_bound"], b.trace["suboptimality_bound"], rtol=0, atol=1e-12
    )
