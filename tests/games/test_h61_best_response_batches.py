"""best_response names its own argument when the policy's batch does not fit the game's.

A game batch (2,) with a policy batch (3,) was reported as 'the batch shapes of the game (2,)
and nu (3,) ...' (or mu), names of the internal checks, not of the argument ``policy``.
"""

import numpy as np
import pytest

from rltheory.games.exploit import best_response
from rltheory.games.shapley import evaluate_policy_pair
from rltheory.games.zoo import random_zero_sum_markov_game


@pytest.mark.parametrize("player", [0, 1])
def test_unbroadcastable_policy_batch_is_named_policy(player):
    g = random_zero_sum_markov_game(0, 2, 2, 3, 0.9, batch_shape=(2,))
    with pytest.raises(
        ValueError, match=r"the batch shapes of the game \(2,\) and policy \(3,\) do not"
    ):
        best_response(g, np.zeros((3, 2), dtype=int), player=player)


def test_broadcast_policy_batch_best_response_dominates_every_pure_reply():
    """Theorem (optimality of the best response): against a batch (3, 1) of column policies on
    a game batch (2,), the row best response's value is at least every pure row policy's value,
    instance by instance (4 pure stationary row policies on 2 states x 2 actions)."""
    g = random_zero_sum_markov_game(1, 2, 2, 3, 0.9, batch_shape=(2,))
    nu = np.random.default_rng(2).dirichlet(np.ones(3), size=(3, 1, 2))
    br = best_response(g, nu, player=0)
    V = np.asarray(br.V)
    assert V.shape == (3, 2, 2)
    for a0 in range(2):
        for a1 in range(2):
            v = np.asarray(evaluate_policy_pair(g, np.array([a0, a1]), nu))
            assert np.all(V >= v - 1e-12 * np.abs(v).max())
