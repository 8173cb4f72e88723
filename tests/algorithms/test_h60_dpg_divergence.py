"""off_policy_dpg runs that leave the float range are named where they do, not blamed on theta."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms.average_reward_dpg import SmoothActionMDP, off_policy_dpg
from rltheory.algorithms.step_schedules import StepSchedule


def test_overflowing_steps_are_named_at_the_step_without_numpy_warnings():
    # constant steps 5 (critic) and 50 (actor) on r(s, u) = u - u^2/2: the iterates overflow; this
    # surfaced as overflow warnings and then "InvalidModelError: theta must be finite;
    # theta(s=0) = nan" at the next record, blaming the argument theta
    m = SmoothActionMDP(np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError,
            match=r"off_policy_dpg diverged: the critic or the actor overflowed at step t = \d+",
        ):
            off_policy_dpg(
                m,
                steps=5000,
                rng=0,
                record_every=1000,
                critic_step=StepSchedule(5.0, t0=1.0, power=0.0),
                actor_step=StepSchedule(50.0, t0=1.0, power=0.0),
            )


def test_a_behaviour_sample_beyond_the_float_range_is_named():
    # noise 1e300 with K = 1e10 I: at step 1 (u = 6.4e299 at s = 0) the logit u K[0, 0] overflows
    # to +inf, a logit SmoothActionMDP.kernel refuses ("beyond the float range"). The loop's
    # softmax was NaN, _draw read s' = 0 off a NaN cdf whatever the state, and the run returned
    # theta = (0, 0) and a trace under numpy's overflow warnings only. (At step 0, u = -1.3e299 at
    # s = 1, the logit is -inf: probability 0, as it should be, and the run goes on.)
    m = SmoothActionMDP(np.zeros((2, 2)), 1e10 * np.eye(2), np.zeros(2), np.zeros(2), 0.0)
    with pytest.raises(
        ValueError,
        match=r"off_policy_dpg diverged: at step t = 1 the behaviour action u = 6\.40\d*e\+299 at "
        r"state s = 0 \(theta\[0\] = 0\.0, noise = 1e\+300\) puts the reward or the logits",
    ):
        off_policy_dpg(m, steps=3, rng=0, noise=1e300, record_every=10)
