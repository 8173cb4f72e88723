"""``to_gymnasium(mdp, seed=s)`` seeds the env as ``reset(seed=s)`` does, and records the seed.

The constructor set ``env.np_random`` directly, which gymnasium records as an unknown seed
(``env.np_random_seed == -1``); a negative seed failed inside gymnasium's spaces with its own
``Error`` class ("Seed must be greater or equal to zero").
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP
from rltheory.mdp.interop import to_gymnasium


def _model() -> FiniteMDP:
    rng = np.random.default_rng(0)
    return FiniteMDP(rng.dirichlet(np.ones(4), size=(4, 2)), rng.random((4, 2)), 0.9)


def _trajectory(env, seed=None, n=30):
    out = [env.reset(seed=seed)[0]]
    out += [env.step(t % 2)[0] for t in range(n)]
    return out


@pytest.mark.parametrize("seed", [0, 3, np.int64(12345)])
def test_the_constructor_seed_is_the_reset_seed_and_is_recorded(seed):
    env = to_gymnasium(_model(), seed=seed)
    assert env.np_random_seed == int(seed)  # old: -1
    # the same stream as reset(seed=seed) on an unseeded env, and reproducible
    assert _trajectory(env) == _trajectory(to_gymnasium(_model()), seed=int(seed))
    assert _trajectory(to_gymnasium(_model(), seed=seed)) == _trajectory(env, seed=int(seed))


def test_a_negative_seed_is_a_located_value_error():
    with pytest.raises(ValueError, match=r"seed must be a non-negative int or None; got -1"):
        to_gymnasium(_model(), seed=-1)
