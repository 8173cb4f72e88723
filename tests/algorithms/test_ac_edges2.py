"""Edge inputs of the actor-critic, hybrid and MARLHF modules (second round): reward ranges the
methods assume, numpy scalars as settings, empty or mismatched inputs, and dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.hybrid import hybrid_actor_critic, hybrid_npg
from rltheory.errors import InvalidModelError
from rltheory.mdp import EpisodeDataset, FiniteHorizonMDP


# ------------------------------------------------------------------ hybrid: rewards in [0, 1]
@pytest.mark.parametrize("method", [hybrid_npg, hybrid_actor_critic])
@pytest.mark.parametrize(("R", "where"), [
    ([[-1.0, -0.5]], r"fh\.R\[h=0, s=0, a=0\] = -1"),  # old: every Q̂ clipped to 0, the policy never moved
    ([[0.0, 2.0]], r"fh\.R\[h=0, s=0, a=1\] = 2"),  # old: Q̂_h clipped to H − h on both actions
    ([[0.0, 1e307]], r"fh\.R\[h=0, s=0, a=1\] = 1e\+307"),  # old: "behaviour must be finite ... nan"
])
def test_hybrid_methods_reject_rewards_outside_the_unit_interval(method, R, where):
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array(R), H=2)
    with pytest.raises(InvalidModelError, match=rf"{method.__name__} assumes rewards in \[0, 1\].*{where}"):
        method(fh, np.eye(2).reshape(1, 2, 2), None, iterations=5, n_online=20, eta=2.0, rng=0)


@pytest.mark.parametrize("method", [hybrid_npg, hybrid_actor_critic])
def test_hybrid_methods_reject_offline_rewards_outside_the_unit_interval(method):
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=2)
    off = EpisodeDataset(np.zeros((3, 3), int), np.ones((3, 2), int), np.array([[1.0, 1.0], [1.0, 5.0], [0.0, 1.0]]),
                         S=1, A=2)
    # old: accepted; the critic fit targets up to 6 and clipped them to H − h
    with pytest.raises(InvalidModelError, match=r"rewards in \[0, 1\].*rewards\[k=1, h=1\] = 5"):
        method(fh, np.eye(2).reshape(1, 2, 2), off, iterations=2, n_online=5, eta=1.0, rng=0)
    ok = EpisodeDataset(off.states, off.actions, np.clip(off.rewards, 0.0, 1.0), S=1, A=2)
    res = method(fh, np.eye(2).reshape(1, 2, 2), ok, iterations=2, n_online=5, eta=1.0, rng=0)
    assert res.trace["suboptimality"][-1] < res.trace["suboptimality"][0]
