"""A step-size schedule must return real numbers: complex, string and boolean steps are refused.

Regression: ``_alpha`` cast the schedule's result with ``np.asarray(..., dtype=float)``, so a complex
step ``0.5+0.5j`` ran as 0.5 with only a ``ComplexWarning``, the string ``"0.5"`` was parsed as 0.5 and
``True`` (a comparison returned by mistake) was taken as the step 1: every learner returned a table.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms import (
    double_q_learning,
    q_learning,
    q_learning_replay,
    synchronous_q_learning,
    va_learning,
)
from rltheory.mdp import FiniteMDP

MDP = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)

LEARNERS = {
    "synchronous_q_learning": lambda rule: synchronous_q_learning(
        MDP, iterations=3, step_size=rule, rng=0
    ),
    "q_learning": lambda rule: q_learning(MDP, steps=3, step_size=rule, rng=0),
    "q_learning_replay": lambda rule: q_learning_replay(
        MDP, steps=3, step_size=rule, rng=0, replay_every=1, replay_updates=1, buffer_size=2
    ),
    "double_q_learning": lambda rule: double_q_learning(MDP, steps=3, step_size=rule, rng=0),
    "va_learning": lambda rule: va_learning(MDP, steps=3, step_size=rule, rng=0),
}

RULES = [
    ("complex", r"a complex value \(0\.5\+0\.5j\)", lambda n: np.zeros(np.shape(n)) + (0.5 + 0.5j)),
    ("string", r"a string value '0\.5'", lambda n: "0.5"),
    ("string", r"a string value '0\.5'", lambda n: np.full(np.shape(n), "0.5")),
    ("boolean", r"a boolean value True", lambda n: np.asarray(n) < 5),
]


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize(("what", "value", "rule"), RULES)
def test_a_schedule_returning_non_real_steps_is_refused(name, what, value, rule):
    # the synchronous learner calls the schedule with the iteration t = 0, the others with the
    # visit counts of the runs (shape (n_runs,) = (1,)); double Q first with the counts of table A,
    # empty when the step updates table B (then an empty array of the wrong dtype is named)
    at = {
        "synchronous_q_learning": r"step_size\(0\)",
        "double_q_learning": r"step_size\(n\) for counts n of shape \([01],\)",
    }.get(name, r"step_size\(n\) for counts n of shape \(1,\)")
    if name == "double_q_learning":
        value = rf"a {what} (value|array of shape \(0,\))"
    msg = rf"^step_size must return real steps in \[0, 1\]; {at} returned {value}"
    with pytest.raises(TypeError, match=msg):
        LEARNERS[name](rule)


@pytest.mark.parametrize("name", list(LEARNERS))
def test_integer_and_float32_steps_are_still_accepted(name):
    # an integer step 1 (α = 1) and a float32 step 0.5 are real numbers: the same tables as the float64 ones
    one = LEARNERS[name](lambda n: np.ones(np.shape(n), dtype=np.int64)).Q
    np.testing.assert_array_equal(one, LEARNERS[name](lambda n: np.ones(np.shape(n))).Q)
    half = LEARNERS[name](lambda n: np.full(np.shape(n), 0.5, dtype=np.float32)).Q
    np.testing.assert_array_equal(half, LEARNERS[name](lambda n: np.full(np.shape(n), 0.5)).Q)
