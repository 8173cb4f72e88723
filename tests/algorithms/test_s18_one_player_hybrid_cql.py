"""hybrid_npg, hybrid_actor_critic and cql read a one-player game dataset as single-agent.

Regression (helper-90's open item): f264fd1 made ``_offline_common._check_data`` return a
one-player game dataset (``A = (A_1,)``, actions and rewards ``[K, H, 1]``) as the single-agent
dataset it is, but ``hybrid.py`` and ``conservative.py`` discarded its return value, so
``hybrid_npg`` still failed with numpy's "non-broadcastable output operand" and ``cql`` built
its model from the game-shaped dataset. Now the results equal those on the same episodes given
with ``A = 2``, bit for bit.
"""

from __future__ import annotations

import numpy as np

from rltheory.algorithms.conservative import cql
from rltheory.algorithms.hybrid import hybrid_actor_critic, hybrid_npg
from rltheory.mdp import FiniteHorizonMDP
from rltheory.mdp.offline_data import EpisodeDataset, sample_episodes


def _setup(seed=0):
    rng = np.random.default_rng(seed)
    H, S, A = 2, 3, 2
    fh = FiniteHorizonMDP(rng.dirichlet(np.ones(S), size=(H, S, A)), rng.uniform(size=(H, S, A)))
    d = sample_episodes(fh, np.full((H, S, A), 0.5), 40, rng=rng, rewards="bernoulli")
    game = EpisodeDataset(d.states, d.actions[..., None], d.rewards[..., None], S=S, A=(A,))
    return fh, d, game


def test_hybrid_methods_take_a_one_player_game_dataset():
    fh, d, game = _setup()
    phi = np.eye(6).reshape(3, 2, 6)
    for fn in (hybrid_npg, hybrid_actor_critic):
        a = fn(fh, phi, d, iterations=3, n_online=10, eta=1.0, rng=5)
        b = fn(fh, phi, game, iterations=3, n_online=10, eta=1.0, rng=5)
        np.testing.assert_array_equal(a.policy, b.policy)


def test_cql_takes_a_one_player_game_dataset():
    _, d, game = _setup(1)
    a, b = cql(d, alpha=0.5), cql(game, alpha=0.5)
    np.testing.assert_array_equal(a.policy, b.policy)
    np.testing.assert_array_equal(a.V, b.V)
