"""Linear critics read ``Phi`` in the model's dtype, and say so when that loses the features.

float32 features on a float64 model are promoted exactly: the fixed point is the one of the stored
float32 values, to float64 accuracy (checked against exact rationals). float64 features on a
float32 model are rounded to float32; an entry beyond float32's range (``1e50``) was reported as
"Phi must be finite; Phi(s=0, j=0) = inf", an input the caller never gave, and a column of
``1e-50`` (0 in float32) as a column that "vanishes on every state with d(s) > 0".
"""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest

from rltheory.algorithms.critics import (
    lstd,
    projected_fixed_point,
    projection,
    td_linear,
    weighted_norm,
)
from rltheory.mdp import FiniteMDP
from rltheory.testing import dyadic_model, exact_solve


def _model(dtype=np.float64):
    P, R = dyadic_model(0, S=4, A=2)
    return FiniteMDP(P.astype(dtype), R.astype(dtype), gamma=0.9), np.full((4, 2), 0.5, dtype=dtype)


def _callers():
    return [
        lambda m, pi, Phi: projected_fixed_point(m, pi, Phi),
        lambda m, pi, Phi: td_linear(m, pi, Phi, steps=5, step_size=0.1, rng=0),
        lambda m, pi, Phi: lstd(m, pi, Phi, steps=20, rng=0),
    ]


@pytest.mark.parametrize("call", _callers())
def test_float64_features_beyond_float32_name_the_entry(call):
    m, pi = _model(np.float32)
    Phi = np.ones((4, 2))
    Phi[2, 1] = 1e50
    with pytest.raises(
        ValueError,
        match=r"Phi\(s=2, j=1\) = 1e\+50 is beyond the range of the model's dtype float32 "
        r"\(max 3\.4e\+38\): Phi \(float64\) is read in the model's dtype",
    ):
        call(m, pi, Phi)


@pytest.mark.parametrize("call", _callers())
def test_a_float64_column_that_rounds_to_zero_in_float32_is_named(call):
    m, pi = _model(np.float32)
    Phi = np.c_[np.ones(4), np.array([1e-50, 0.0, -2e-50, 0.0])]
    with pytest.raises(
        ValueError,
        match=r"column j=1 of Phi \(max\|Phi\[:, 1\]\| = 2e-50\) rounds to 0 in the model's dtype "
        r"float32",
    ):
        call(m, pi, Phi)


def test_float64_features_in_float32_range_are_the_rounded_features():
    m, pi = _model(np.float32)
    Phi = np.random.default_rng(1).standard_normal((4, 2))
    a = projected_fixed_point(m, pi, Phi)
    b = projected_fixed_point(m, pi, Phi.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(a.theta), np.asarray(b.theta))
    assert a.theta.dtype == np.float32


def test_float32_features_on_a_float64_model_give_the_stored_values_fixed_point():
    # exact rational TD(0) fixed point for the stored float32 features (read exactly), the stored
    # P (rows k/64) and R, and the exact stationary d: theta* = (Phi^T D (I - gamma P) Phi)^-1 Phi^T D r
    m, pi = _model()
    Phi = np.random.default_rng(2).standard_normal((4, 2)).astype(np.float32)
    fp = projected_fixed_point(m, pi, Phi)
    P, R = np.asarray(m.P), np.asarray(m.R)
    Pp = [
        [sum(Fr(0.5) * Fr(float(P[s, a, t])) for a in range(2)) for t in range(4)] for s in range(4)
    ]
    r = [sum(Fr(0.5) * Fr(float(R[s, a])) for a in range(2)) for s in range(4)]
    stat = [[Fr(int(s == t)) - Pp[s][t] for s in range(4)] for t in range(4)]
    stat[-1] = [Fr(1)] * 4
    d = exact_solve(stat, [Fr(0)] * 3 + [Fr(1)])
    F = [[Fr(float(Phi[s, j])) for j in range(2)] for s in range(4)]
    g = Fr(0.9)
    LF = [
        [F[s][j] - g * sum(Pp[s][t] * F[t][j] for t in range(4)) for j in range(2)]
        for s in range(4)
    ]
    A = [[sum(F[s][i] * d[s] * LF[s][j] for s in range(4)) for j in range(2)] for i in range(2)]
    b = [sum(F[s][i] * d[s] * r[s] for s in range(4)) for i in range(2)]
    theta = np.array([float(x) for x in exact_solve(A, b)])
    assert fp.theta.dtype == np.float64
    np.testing.assert_allclose(np.asarray(fp.theta), theta, rtol=0, atol=64 * np.finfo(float).eps)


def test_projection_and_weighted_norm_compute_in_the_promoted_dtype():
    # Π_D V for the constant feature is the d-average of V: (1 + 1e-9 + 1)/2 = 1 + 5e-10. float32
    # features rounded the float64 V to float32 and returned 1.0 (float32); promotion (float32 with
    # float64 is float64, as in the array API) keeps V, and the float32 features are exact in it
    Phi = np.ones((2, 1), dtype=np.float32)
    V = np.array([1.0 + 1e-9, 1.0])
    got = projection(Phi, np.array([0.5, 0.5]), V)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [0.5 * (V[0] + V[1])] * 2, rtol=4 * np.finfo(float).eps)
    # ‖x‖_D of a float32 x under a float64 d: √(0.3·1 + 0.7·(1 + 2^-20)²), in float64
    x = np.array([1.0, 1.0 + 2.0**-20], dtype=np.float32)
    d = np.array([0.3, 0.7])
    ref = np.sqrt(0.3 + 0.7 * (1.0 + 2.0**-20) ** 2)
    got = weighted_norm(x, d)
    assert got.dtype == np.float64 and abs(float(got) - ref) <= 4 * np.finfo(float).eps
    # all float32: stays float32
    assert projection(Phi, d.astype(np.float32), V.astype(np.float32)).dtype == np.float32
