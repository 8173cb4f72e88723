"""Regression tests for the average-reward actor-critics (rltheory.algorithms.average_reward)."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.average_reward import (
    average_reward_actor_critic,
    multilevel_actor_critic,
)
from rltheory.mdp import FiniteMDP
from rltheory.mdp.average import average_policy_iteration


def _stay_or_switch() -> FiniteMDP:
    """Two states; action 0 stays, action 1 switches; reward 1 for staying in state 1.

    Communicating, and every softmax policy is irreducible, but the deterministic policy
    "always stay" has two recurrent classes {0}, {1}. g* = 1 (stay in state 1 forever).
    """
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = P[0, 1, 1] = P[1, 1, 0] = 1.0
    return FiniteMDP(P, np.array([[0.0, 0.0], [1.0, 0.0]]), None)


def test_actor_critics_compute_g_star_of_a_communicating_model() -> None:
    """Without optimal_gain, unichain policy iteration raised InvalidModelError ('the model is
    multichain') on this communicating model; g* = 1 is now found (= multichain PI)."""
    mdp = _stay_or_switch()
    g_pi = np.asarray(average_policy_iteration(mdp, multichain=True).gain)
    np.testing.assert_allclose(g_pi, [1.0, 1.0], atol=1e-12)
    ac = average_reward_actor_critic(mdp, steps=200, rng=0, record_every=50)
    mac = multilevel_actor_critic(mdp, iterations=40, T_max=8, rng=0, record_every=10)
    for res in (ac, mac):
        assert res.optimal_gain == pytest.approx(1.0, abs=1e-12)
        # g* − g^{π_t} ≥ 0 for every policy (up to the solvers' round-off)
        assert np.all(np.asarray(res.trace["gain_gap"]) >= -1e-12)


def test_actor_critics_refuse_a_state_dependent_optimal_gain() -> None:
    """State 0: stay (reward 1) or leave for the absorbing state 1 (reward 0): g* = (1, 0) depends
    on the state, so there is no single g* to measure the gap against; optimal_gain must be given."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = P[1, 0, 1] = P[1, 1, 1] = 1.0
    mdp = FiniteMDP(P, np.array([[1.0, 0.0], [0.0, 0.0]]), None)
    with pytest.raises(
        ValueError,
        match=r"optimal gain depends on the state \(g\*\(s=1\) = 0\.0, g\*\(s=0\) = 1\.0\).*pass optimal_gain",
    ):
        average_reward_actor_critic(mdp, steps=10, rng=0)
    with pytest.raises(ValueError, match=r"optimal gain depends on the state"):
        multilevel_actor_critic(mdp, iterations=3, T_max=4, rng=0)
    res = average_reward_actor_critic(mdp, steps=10, rng=0, optimal_gain=0.0)
    assert res.optimal_gain == 0.0
