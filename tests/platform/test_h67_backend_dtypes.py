"""backend.as_float refuses dates, durations and records by field (helper 67's bug hunt)."""

import numpy as np
import pytest

from rltheory.backend import as_float
from rltheory.mdp import FiniteMDP


@pytest.mark.parametrize(
    ("x", "what"),
    [
        (np.array([["2020-01-01"]], dtype="datetime64[D]"), "datetime64"),
        (np.array([[5]], dtype="timedelta64[s]"), "timedelta64"),
        ([[np.timedelta64(5, "s")]], "timedelta64"),
        (np.zeros((1, 1), dtype=[("r", float)]), r"record \(void\)"),
    ],
    ids=["date", "duration", "duration-list", "record"],
)
def test_model_rewards_must_be_numbers_not_dates_or_records(x, what):
    # a float cast read 2020-01-01 as the reward 18262.0, five seconds as 5.0 and a one-field
    # record as its field: FiniteMDP(P, R) built a model from them
    with pytest.raises(TypeError, match=rf"R must hold real numbers; got a {what} array"):
        FiniteMDP(np.ones((1, 1, 1)), x, gamma=0.5)
    with pytest.raises(TypeError, match=rf"mu must hold real numbers; got a {what} array"):
        FiniteMDP(np.ones((1, 1, 1)), np.zeros((1, 1)), gamma=0.5, mu=np.reshape(x, (1,)))


def test_as_float_keeps_real_dtypes():
    # the documented policy is unchanged: float32 stays, integers and booleans become float64
    assert as_float(np.ones(2, np.float32)).dtype == np.float32
    assert as_float(np.ones(2, np.int16)).dtype == np.float64
    assert as_float([True, False]).dtype == np.float64
    assert as_float(np.float32(0.5)).dtype == np.float32
