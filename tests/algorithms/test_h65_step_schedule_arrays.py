"""``StepSchedule`` evaluates arrays of times elementwise, as the Q-learning family calls its schedules.

The trajectory learners call ``step_size(n)`` with the visit counts of all runs (an array);
``StepSchedule`` refused ``array([0.])`` with "defined for times t >= 0", a time that is ``≥ 0``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.q_learning import q_learning, synchronous_q_learning
from rltheory.algorithms.step_schedules import StepSchedule
from rltheory.mdp.zoo import random_mdp


def test_array_times_give_the_closed_form_elementwise():
    # α_t = c/(1 + t/t0)^p = 0.5/(1 + t)^0.5: 0.5, 0.25, 0.125 at t = 0, 3, 15
    sch = StepSchedule(0.5, t0=1.0, power=0.5)
    np.testing.assert_array_equal(sch(np.array([0, 3, 15])), [0.5, 0.25, 0.125])
    np.testing.assert_array_equal(sch(np.array([[0.0], [3.0]])), [[0.5], [0.25]])
    # scalar times are unchanged: floats
    assert sch(3) == 0.25 and isinstance(sch(np.int64(3)), float)


def test_q_learning_runs_with_a_step_schedule_as_with_the_same_rule_written_out():
    mdp = random_mdp(4, 2, gamma=0.8, rng=2)
    kw = dict(steps=300, rng=7, n_runs=3, record_every=100)
    sch = StepSchedule(0.9, t0=4.0, power=0.8)
    a = q_learning(mdp, step_size=sch, **kw)
    b = q_learning(mdp, step_size=lambda n: 0.9 / (1.0 + np.asarray(n) / 4.0) ** 0.8, **kw)
    np.testing.assert_array_equal(a.Q, b.Q)
    s = synchronous_q_learning(mdp, iterations=50, step_size=sch, rng=1)
    w = synchronous_q_learning(
        mdp, iterations=50, step_size=lambda t: 0.9 / (1 + t / 4.0) ** 0.8, rng=1
    )
    np.testing.assert_array_equal(s.Q, w.Q)


@pytest.mark.parametrize(
    ("t", "msg"),
    [
        (np.array([1.0, -1.0]), r"got t\[1\] = -1\.0"),
        (np.array([[0.0, np.nan]]), r"got t\[0, 1\] = nan"),
        (np.array([True]), r"real times t >= 0; got an array of dtype bool"),
    ],
)
def test_a_bad_entry_of_an_array_of_times_is_located(t, msg):
    with pytest.raises(ValueError, match=msg):
        StepSchedule(0.5, power=1.0)(t)


def test_a_time_beyond_the_float_range_is_the_limit_of_the_schedule():
    # t = 10**400: t/t0 is inf, α = c/inf^p = 0 for p > 0 and c for p = 0 (OverflowError before)
    assert StepSchedule(0.5, power=0.7)(10**400) == 0.0
    assert StepSchedule(0.5)(10**400) == 0.5
