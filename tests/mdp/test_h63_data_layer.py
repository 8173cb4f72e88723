"""Offline data layer: argument forms the rest of the offline API accepts."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp.offline_data import behaviour_policy


@pytest.mark.parametrize("alpha", [np.array(0.5), np.array(0.5, dtype=np.float32), np.array(1)])
def test_behaviour_policy_takes_a_0d_array_alpha(alpha):
    # π_b = α π* + (1 − α)/A: [[1, 0]] at α = 0.5 gives [[0.75, 0.25]]. A 0-d array alpha was refused
    # ('alpha must be a number in [0, 1]; got array(0.5)') although lcb_vi's delta, the hybrid
    # methods' eta and elliptical_bonus's beta take one
    a = float(alpha)
    np.testing.assert_array_equal(
        behaviour_policy([[1.0, 0.0]], alpha), [[a + (1 - a) / 2, (1 - a) / 2]]
    )


@pytest.mark.parametrize(
    "alpha", [True, np.array(True), "0.5", None, np.array([0.5]), np.nan, 1.5, -0.1]
)
def test_behaviour_policy_still_refuses_non_numbers(alpha):
    with pytest.raises(ValueError, match=r"alpha must be a number in \[0, 1\]; got "):
        behaviour_policy([[1.0, 0.0]], alpha)


def test_float16_distributions_are_checked_in_their_own_dtype():
    # a float16 uniform row over 7 actions sums to 0.99976 (1/7 rounds to 0.1428); cast to float64
    # first it failed the float64 tolerance 1e-8 ('target[..., :] must sum to 1 (atol=1e-08)'),
    # although check_probability's tolerance follows the dtype's eps (as for float32, 8fdc314)
    from rltheory.mdp import FiniteHorizonMDP
    from rltheory.mdp.offline_data import sample_episodes, sample_game_episodes

    p = np.full((2, 7), 1 / 7, dtype=np.float16)
    pb = behaviour_policy(p, 0.5)
    np.testing.assert_allclose(pb, np.full((2, 7), 1 / 7), rtol=1e-15)  # renormalised in float64
    fh = FiniteHorizonMDP.stationary(np.full((2, 7, 2), 0.5), np.zeros((2, 7)), H=2)
    assert sample_episodes(fh, p, 5, rng=0).actions.shape == (5, 2)
    beh = np.full((1, 1, 7, 1), 1 / 7, dtype=np.float16)
    d = sample_game_episodes(np.ones((1, 1, 7, 1, 1)), np.zeros((2, 1, 1, 7, 1)), beh, 5, rng=0)
    assert d.actions.shape == (5, 1, 2)
    # a row that is not a distribution is still refused
    bad = np.array([[0.7, 0.5]], dtype=np.float16)
    with pytest.raises(ValueError, match=r"target\[\.\.\., :\] must sum to 1"):
        behaviour_policy(bad, 0.5)
