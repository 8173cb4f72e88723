"""Linear critics on features whose columns differ in size by more than one float scale holds.

Theorem (covariance): for ``Φ' = Φ·diag(2^{c_j})`` the projected fixed point and the LSTD estimate
satisfy ``θ'_j = 2^{−c_j} θ_j`` and ``Φ'θ' = Φθ`` (Tsitsiklis & Van Roy 1997: ``θ*`` is defined by
the span and the coordinates). Reference: on the two-state cycle with ``r = (1, 0)``,
``γ = 1/2`` and one-hot features, ``V = (4/3, 2/3)``; with ``Φ = diag(s_0, s_1)``,
``θ* = (4/(3 s_0), 2/(3 s_1))``.

Before: every column was divided by the one power of 2 at ``max|Φ|``, so a column of ``1e-160``
next to one of ``1e160`` became subnormal and the basis transform overflowed ("SVD did not
converge", with numpy's overflow warnings), and at ``1e-200`` next to ``1e200`` it became 0 and
was reported as "column j=0 of Phi vanishes on every state with d(s) > 0", which it does not.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms.critics import (
    expected_td,
    lstd_estimate,
    projected_fixed_point,
    projection,
)
from rltheory.mdp import FiniteMDP
from rltheory.mdp.zoo import random_mdp

CYCLE = FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), gamma=0.5)
SCALES = [(1e-160, 1e160), (1e-200, 1e200), (1e-300, 1e300)]


@pytest.mark.parametrize("s", SCALES)
def test_reference_fixed_point_with_columns_far_apart(s):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warnings were raised here
        fp = projected_fixed_point(CYCLE, np.array([0, 0]), np.diag(s))
    # s is not a power of 2: θ_j·s_j carries a few roundings (ε = 2.2e-16 each)
    np.testing.assert_allclose(fp.theta * np.array(s), [4 / 3, 2 / 3], rtol=1e-15)
    np.testing.assert_allclose(fp.values, [4 / 3, 2 / 3], rtol=4e-16)


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_reference_lstd_with_columns_far_apart(s, lam):
    # the trajectory 0 -> 1 -> 0 of the cycle: the empirical model is the cycle itself
    Phi = np.diag(s)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        th, _, _ = lstd_estimate(Phi[[0, 1]], np.array([1.0, 0.0]), Phi[[1, 0]], gamma=0.5, lam=lam)
    # LSTD(λ) on two transitions: λ enters through the trace of the first one only
    ref, _, _ = lstd_estimate(
        np.eye(2)[[0, 1]], np.array([1.0, 0.0]), np.eye(2)[[1, 0]], gamma=0.5, lam=lam
    )
    np.testing.assert_allclose(th * np.array(s), ref, rtol=1e-15)  # a few roundings, as above


@pytest.mark.parametrize("lam", [0.0, 0.7, 1.0])
def test_power_of_two_column_scaling_is_covariant(lam):
    mdp = random_mdp(6, 2, gamma=0.9, rng=3)
    pi = np.full((6, 2), 0.5)
    Phi = np.random.default_rng(4).normal(size=(6, 3))
    c = np.array([-600, 0, 600])
    ref = projected_fixed_point(mdp, pi, Phi, lam=lam)
    got = projected_fixed_point(mdp, pi, np.ldexp(Phi, c), lam=lam)
    # exact powers of 2 commute with every rounding of the column-scaled solve: equal to the bit
    np.testing.assert_array_equal(got.values, ref.values)
    np.testing.assert_array_equal(got.theta, np.ldexp(ref.theta, -c))
    f0, f1 = Phi[[0, 1, 2, 3, 4]], Phi[[1, 2, 3, 4, 5]]
    r = np.array([0.3, -1.0, 0.5, 2.0, 0.1])
    th, _, _ = lstd_estimate(f0, r, f1, gamma=0.9, lam=lam)
    th2, _, _ = lstd_estimate(np.ldexp(f0, c), r, np.ldexp(f1, c), gamma=0.9, lam=lam)
    np.testing.assert_array_equal(th2, np.ldexp(th, -c))


def test_expected_td_names_columns_too_far_apart_for_one_scale():
    # the mean TD iteration runs in one scale (θ ← θ + α(b − Aθ) with A of entries 1e-320 and
    # 1e320): a located error instead of "SVD did not converge"
    with pytest.raises(
        ValueError, match=r"expected_td: theta\*\[0\] \* 2\^531 is beyond the float range"
    ):
        expected_td(
            CYCLE, np.array([0, 0]), np.diag([1e-160, 1e160]), step_size=1e-300, iterations=2
        )


@pytest.mark.parametrize("s", [(1e-320, 1.0), (5e-324, 1e308), (2.0**-1060, 2.0**1000)])
def test_projection_with_a_subnormal_column(s):
    # Π_D depends on span Φ only: Φ = [[s0, 0], [0, s1], [s0, s1]] spans R^3's plane of (1,0,1)
    # and (0,1,1), which holds V = (1, 2, 3) (= 1·(1,0,1) + 2·(0,1,1)), so Π_D V = V
    Phi = np.array([[s[0], 0.0], [0.0, s[1]], [s[0], s[1]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # overflow in the basis transform, then NaN, before
        got = projection(Phi, np.full(3, 1 / 3), np.array([1.0, 2.0, 3.0]))
    # an orthogonal projection is accurate to a few ε relative to max|V| = 3
    np.testing.assert_allclose(got, [1.0, 2.0, 3.0], rtol=0, atol=8 * 2.2e-16 * 3)


def test_batched_projection_scales_each_batch_entry():
    # column 0 is subnormal in the first entry only: a scale common to the batch kept it subnormal
    Phi = np.array(
        [[[1e-320, 0.0], [0.0, 1.0], [1e-320, 1.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]
    )
    got = projection(Phi, np.full(3, 1 / 3), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(got, [[1.0, 2.0, 3.0]] * 2, rtol=0, atol=8 * 2.2e-16 * 3)
