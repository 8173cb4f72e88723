"""Improper natural PG: small steps reach the best mixture, a large step can stop at another vertex.

Documents the limitation stated in :func:`improper_policy_gradient`'s Notes (every vertex of the
simplex of mixture weights is a stationary point of the softmax-weight parametrisation). Reference:
a grid search over the simplex (step 1/100); the natural steps themselves were checked against
exact rational arithmetic (``tests/algorithms/test_improper_vertex.py`` does this near a vertex).
"""

from __future__ import annotations

import numpy as np

from rltheory.algorithms.actor_critic import improper_policy_gradient, mixture_policy
from rltheory.mdp import FiniteMDP
from rltheory.mdp.bellman import evaluate_policy


def _problem():
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(3), size=(3, 2))
    R = rng.random((3, 2))
    K = rng.dirichlet(np.ones(2), size=(3, 3))
    return FiniteMDP(P, R, 0.9), K


def _value(mdp, pi):
    return float(np.asarray(mdp.initial_distribution()) @ np.asarray(evaluate_policy(mdp, pi)))


def test_grid_best_is_vertex_0_and_vertex_1_is_no_local_maximum():
    mdp, K = _problem()
    n = 100
    vals = {
        (i, j): _value(mdp, np.tensordot(np.array([i, j, n - i - j]) / n, K, axes=(0, 0)))
        for i in range(n + 1)
        for j in range(n + 1 - i)
    }
    best = max(vals, key=vals.get)
    assert best == (n, 0)  # vertex 0
    assert abs(vals[(n, 0)] - 5.3030) < 1e-4 and abs(vals[(0, n)] - 5.2793) < 1e-4
    # from vertex 1, moving toward vertex 0 increases V: vertex 1 is no local maximum of the class
    assert vals[(1, n - 1)] > vals[(0, n)]


def test_small_natural_steps_reach_the_best_mixture_and_a_large_one_stops_at_vertex_1():
    mdp, K = _problem()
    best = _value(mdp, K[0])
    small = improper_policy_gradient(mdp, K, eta=0.1, iterations=300)
    assert small.trace["value"][-1] >= best - 1e-9
    plain = improper_policy_gradient(mdp, K, eta=5.0, iterations=300, natural=False)
    assert plain.trace["value"][-1] >= best - 1e-3
    large = improper_policy_gradient(mdp, K, eta=1.0, iterations=300)
    w1 = np.asarray(large.trace["weights"][1])
    assert w1[1] > 1 - 1e-8  # one step: next to vertex 1
    assert abs(large.trace["value"][-1] - _value(mdp, K[1])) < 1e-9
    assert large.trace["value"][-1] < best - 0.02
    np.testing.assert_allclose(np.asarray(mixture_policy(K, large.theta)), K[1], rtol=0, atol=1e-8)
