"""Edge cases of the tabular Q-learning family and its bound, found by a bug hunt outside the
ranges the other tests draw from (each test failed on the code before its fix)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.bounds import q_learning_bound

_QL = dict(alpha=0.1, gamma=0.5, initial_error=1.0, value_span=1.0)


@pytest.mark.parametrize(("n_pairs", "horizon", "delta"), [
    (1, 10**400, 0.1),          # T beyond the float range: 2.0 * n * T raised OverflowError
    (10**10, 10**300, 0.1),     # 2nT = 2e310 overflowed to inf: a vacuous bound of inf
    (4, 100, 1e-320),           # subnormal δ: 2nT/δ = inf although log(2nT/δ) = 743.5
], ids=["T=1e400", "nT=1e310", "delta=1e-320"])
def test_q_learning_bound_is_finite_where_only_2nT_over_delta_overflows(n_pairs, horizon, delta):
    # the bound is (1 − α(1−γ))^t e0 + γ sp √(α log(2nT/δ)/2)/(1−γ); its logarithm is a few hundred,
    # computed here from the exact big integer 2nT (math.log of an int does not overflow)
    log_term = math.log(2 * n_pairs * horizon) - math.log(delta)
    t = np.array([0.0, 5.0])
    want = 0.95**t * 1.0 + 0.5 * math.sqrt(0.1 * log_term / 2.0) / 0.5
    got = q_learning_bound(t, n_pairs=n_pairs, horizon=horizon, delta=delta, **_QL)
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_q_learning_bound_is_monotone_in_the_horizon_across_the_float_range():
    # non-decreasing in T (a union bound over more steps) on both sides of T = 1.8e308
    horizons = [10**k for k in (2, 300, 308, 309, 400, 4000)]
    vals = [float(q_learning_bound([3], n_pairs=6, horizon=h, delta=0.05, **_QL)[0]) for h in horizons]
    assert all(math.isfinite(v) for v in vals)
    assert all(a < b for a, b in zip(vals, vals[1:], strict=False))
    # ordinary sizes are unchanged to the bit: log(2nT/δ) as one quotient
    assert vals[0] == 0.95**3 + 0.5 * math.sqrt(0.1 * math.log(2.0 * 6 * 100 / 0.05) / 2.0) / 0.5
