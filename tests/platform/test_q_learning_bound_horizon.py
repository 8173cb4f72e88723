"""q_learning_bound covers t <= horizon only: its noise term is a union bound over the n·T entries of
the noise averages E_1, ..., E_T (rltheory.bounds.td_q_learning, Notes), so nothing is claimed after T."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.bounds import q_learning_bound

_QL = {
    "alpha": 0.1,
    "gamma": 0.5,
    "initial_error": 1.0,
    "value_span": 1.0,
    "n_pairs": 4,
    "delta": 0.1,
}


def test_times_up_to_the_horizon_give_the_formula():
    # (1 − α(1−γ))^t e0 + γ sp √(α log(2nT/δ)/2)/(1−γ) with n = 4, T = 10, δ = 0.1
    t = np.arange(11)
    want = 0.95**t + 0.5 * math.sqrt(0.1 * math.log(2 * 4 * 10 / 0.1) / 2) / 0.5
    np.testing.assert_allclose(q_learning_bound(t, horizon=10, **_QL), want, rtol=1e-15)


@pytest.mark.parametrize(
    ("t", "where"),
    [
        ([0, 5, 11], r"t\[2\] = 11\.0"),
        (12, r"got 12\.0"),
        ([[1, 2], [3, 1e300]], r"t\[1, 1\] = 1e\+300"),
    ],
)
def test_a_time_after_the_horizon_is_refused(t, where):
    # returned (1 − α(1−γ))^t e0 + the T-step noise term before: a value the union bound does not cover
    with pytest.raises(ValueError, match=r"t must be <= horizon = 10 .*" + where):
        q_learning_bound(t, horizon=10, **_QL)
