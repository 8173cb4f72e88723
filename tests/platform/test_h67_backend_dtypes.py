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


def test_non_arrays_are_named_not_called_a_mix_of_libraries():
    import array_api_strict as xps
    import scipy.sparse as sp

    from rltheory.backend import array_namespace
    from rltheory.mdp import FiniteHorizonMDP

    P, R = np.ones((1, 1, 1)), np.zeros((1, 1))
    # old: 'inputs come from different array libraries: str is not a supported array type' (one
    # library), and None became the 0-d array nan ('R must be finite; R() = nan')
    with pytest.raises(TypeError, match=r"^P must hold real numbers; got a string array$"):
        FiniteMDP("abc", R, 0.5)
    with pytest.raises(TypeError, match=r"^mu must hold real numbers; got a string array$"):
        FiniteMDP(P, R, 0.5, mu="a")
    with pytest.raises(TypeError, match=r"^R must be an array of real numbers; got None$"):
        FiniteMDP(P, None, 0.5)
    with pytest.raises(
        TypeError,
        match=r"^P must be an array \(numpy, cupy or an array-API library\) or a list of numbers; "
        r"got csr_matrix$",
    ):
        FiniteMDP(sp.csr_matrix(np.eye(1)), R, 0.5)
    with pytest.raises(TypeError, match=r"^R must be an array .*; got dict$"):
        FiniteHorizonMDP.stationary(P, {0: 1.0}, 2)
    # a real mix names who comes from where
    with pytest.raises(
        TypeError,
        match=r"^inputs come from different array libraries: P from array_api_strict, R from "
        r"array_api_compat\.numpy$",
    ):
        FiniteMDP(xps.ones((1, 1, 1), dtype=xps.float64), R, 0.5)
    with pytest.raises(TypeError, match=r"^argument 1 must be an array .*; got dict$"):
        array_namespace(np.ones(1), {})
