"""A float16 ``P`` or ``mu`` is judged at float16's rounding, as every other distribution input is.

Regression: ``FiniteMDP`` and ``FiniteHorizonMDP`` promoted float16 inputs to float64 first and
then judged their rows at ``PROB_ATOL = 1e-8``: the float16 row ``[0.3, 0.7]`` (stored as
0.29998, 0.70020, sum 1.00024) was refused as "must sum to 1 (atol=1e-08)", and so was a float16
``mu``. Now the tolerance is float16's ``16·eps = 0.0156`` (``_validate._source_atol`` of the input
as given) and the promoted rows are divided by their sums, as for a float32 ``mu`` in a float64
model.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP, FiniteMDP, evaluate_policy

P64 = np.array([[[0.3, 0.7]], [[0.5, 0.5]]])
R = np.array([[1.0], [0.0]])


def test_float16_P_is_accepted_renormalised_and_promoted():
    P16 = P64.astype(np.float16)
    assert abs(float(P16[0, 0].astype(np.float64).sum()) - 1.0) > 1e-4  # the premise: 1.00024
    m = FiniteMDP(P16, R, 0.9)
    assert m.P.dtype == np.float64
    np.testing.assert_allclose(m.P.sum(-1), 1.0, rtol=0, atol=4e-16)
    ref = P16.astype(np.float64) / P16.astype(np.float64).sum(-1, keepdims=True)
    np.testing.assert_array_equal(m.P, ref)
    # the model is the float16 model made stochastic: its values are within float16's
    # rounding of the float64 model's (|ΔP| ≤ 2.5e-4 per entry, so |ΔV| ≤ γ·2.5e-4·‖V‖/(1 − γ))
    pi = np.ones((2, 1))
    dv = np.max(np.abs(evaluate_policy(m, pi) - evaluate_policy(FiniteMDP(P64, R, 0.9), pi)))
    assert dv <= 0.9 * 2.5e-4 * 2 * 10 / 0.1


def test_float16_mu_and_finite_horizon_P_are_accepted():
    mu16 = np.array([0.3, 0.7], dtype=np.float16)
    m = FiniteMDP(P64, R, 0.9, mu=mu16)
    assert m.mu.dtype == np.float64 and float(m.mu.sum()) == pytest.approx(1.0, abs=2e-16)
    h = FiniteHorizonMDP(P64.astype(np.float16)[None], R[None])
    np.testing.assert_allclose(h.P.sum(-1), 1.0, rtol=0, atol=4e-16)


def test_float16_rows_off_by_more_than_its_rounding_are_refused():
    bad = np.array([[[0.3, 0.8]], [[0.5, 0.5]]], dtype=np.float16)
    with pytest.raises(
        InvalidModelError,
        match=r"P\[s, a, :\] must sum to 1 \(atol=0\.015625\); worst row \(s=0, a=0\)",
    ):
        FiniteMDP(bad, R, 0.9)
    # a float64 row off by 1e-5 is still judged at float64's 1e-8
    with pytest.raises(
        InvalidModelError, match=r"atol=1e-08\); worst row \(s=0, a=0\) sums to 1\.00001"
    ):
        FiniteMDP(np.array([[[0.3, 0.70001]], [[0.5, 0.5]]]), R, 0.9)
