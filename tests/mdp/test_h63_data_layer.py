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
