"""The geometric-horizon roll-out rule refuses gamma outside [0, 1) whatever max_length (helper 77)."""

import math

import pytest

from rltheory.mdp.sample import _check_rollout_length


@pytest.mark.parametrize("max_length", [1e300, 2.0**60, None])
@pytest.mark.parametrize("gamma", [1.0, 1.5, -0.25, math.nan])
def test_a_discount_outside_the_unit_interval_is_refused_at_any_cap(gamma, max_length):
    # gamma = 1 under max_length = 1e300 was accepted: 1 - 1/1e300 rounds to 1.0, so the test
    # gamma > 1 - 1/cap failed, and the caller's segments tau ~ Geom(1 - gamma) never end
    # (numpy's geometric refuses p = 0 only when drawn); NaN passed every comparison
    with pytest.raises(
        ValueError, match=r"gamma = .*: a geometric-horizon sampler needs gamma in \[0, 1\)"
    ):
        _check_rollout_length(gamma, max_length, 3)


def test_the_largest_double_below_one_is_accepted_under_a_cap_beyond_two_to_the_53():
    # documented finite behaviour: gamma = 1 - 2^-53 has expected segment length 2^53 <= 1e300
    gamma = 1.0 - 2.0**-53
    assert gamma < 1.0 and 1.0 / (1.0 - gamma) == 2.0**53
    assert _check_rollout_length(gamma, 1e300, 3) == 1e300
    # and is refused by a cap below its length, with the length named
    with pytest.raises(
        ValueError, match=r"1/\(1-gamma\) = 9\.007e\+15 steps .*above max_length = 1e\+15"
    ):
        _check_rollout_length(gamma, 1e15, 3)
