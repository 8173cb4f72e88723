"""``Trajectories.discounted_returns`` near the top of the float range."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp.sample import Trajectories, rollout
from rltheory.mdp.zoo import random_mdp


def _episodes(rewards: list[list[float]]) -> Trajectories:
    r = np.asarray(rewards, dtype=float)
    K, H = r.shape
    return Trajectories(np.zeros((K, H + 1), int), np.zeros((K, H), int), r)


def test_a_representable_return_is_returned_where_the_partial_sums_overflowed():
    # (1e308, 1e308, −1e308) at γ = 1 is 1e308 and (1e308, −1e308, 0) is 0; at γ = 1/2 they are
    # 1e308 + 5e307 − 2.5e307 = 1.25e308 and 5e307 (exact rational sums, rounded once): the old sum
    # overflowed to inf in its partial sums, with numpy's overflow warning
    tr = _episodes([[1e308, 1e308, -1e308], [1e308, -1e308, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for g in (1.0, 0.5):
            want = [
                float(sum(Fraction(r) * Fraction(g) ** t for t, r in enumerate(row)))
                for row in tr.rewards
            ]
            np.testing.assert_allclose(tr.discounted_returns(g), want, rtol=4e-16, atol=0)


def test_a_return_beyond_the_float_range_names_the_episode():
    # 1e308 + 0.9e308 = 1.9e308 > 1.8e308: no float holds it (it was inf with a warning)
    tr = _episodes([[1.0, 1.0], [1e308, 1e308]])
    with pytest.raises(
        ValueError, match=r"discounted return of episode 1 at gamma = 0\.9 is beyond"
    ):
        tr.discounted_returns(0.9)


def test_ordinary_returns_are_the_same_bits_as_the_dot_product():
    tr = rollout(random_mdp(4, 2, gamma=0.9, rng=0), [0, 1, 0, 1], 30, 50, rng=1)
    w = 0.9 ** np.arange(30)
    np.testing.assert_array_equal(tr.discounted_returns(0.9), tr.rewards @ w)
