"""Confidence radii and elliptical bonuses: the stated formula for every count, symmetric Λ only."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from rltheory.bounds.offline import elliptical_bonus, hoeffding_radius, hybrid_npg_bound, pevi_bound


@pytest.mark.parametrize("n", [0.25, 0.5, 0.9])
def test_hoeffding_radius_of_a_fractional_count_is_the_stated_formula(n):
    # min(B √(ln(2/δ)/(2n)), B): n = 0.9, δ = 0.9 gives √(ln(2/0.9)/1.8) = 0.66604 < 1; the old
    # max(n, 1) returned the n = 1 radius √(ln(2/0.9)/2) = 0.63186, below the stated one
    delta = 0.9
    want = min(math.sqrt(math.log(2.0 / delta) / (2.0 * n)), 1.0)
    assert float(hoeffding_radius(n, 1.0, delta)) == pytest.approx(want, rel=1e-15)


def test_hoeffding_radius_of_a_subnormal_count_is_the_range():
    # ln(2/δ)/(2n) overflows: the radius is B (0 for B = 0, not 0·inf = NaN), without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = hoeffding_radius(np.array([1e-320, 1e-320, 4.0]), np.array([2.0, 0.0, 1.0]), 0.5)
    np.testing.assert_array_equal(r, [2.0, 0.0, math.sqrt(math.log(4.0) / 8.0)])


@pytest.mark.parametrize(
    "f", [elliptical_bonus, lambda phi, L, b: pevi_bound(np.array([[[1.0, 0.0]]]), phi, L, b)]
)
def test_a_non_symmetric_lambda_is_refused(f):
    # [[1, 5], [-5, 1]] has the positive definite symmetric part I; its inverse gave the bonus
    # β/√26 = 0.196 where Λ = I gives β = 1
    phi = np.eye(2).reshape(1, 2, 2)
    L = np.array([[[1.0, 5.0], [-5.0, 1.0]]])
    with pytest.raises(
        ValueError,
        match=r"Lambda\[0\] must be symmetric .*Lambda\[0, 0, 1\] = 5 but Lambda\[0, 1, 0\] = -5",
    ):
        f(phi, L, 1.0)


def test_round_off_asymmetry_of_a_gram_matrix_is_accepted():
    # Λ = Σ φφᵀ + I summed in two orders (entry (i, j) in one, (j, i) in the other) differs by
    # round-off only; float32 sums too. The bonus is β √(φᵀΛ⁻¹φ) of the symmetric Λ to round-off.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 3))
    fwd = sum(np.outer(x, x) for x in X)
    bwd = sum(np.outer(x, x) for x in X[::-1])
    L = np.triu(fwd) + np.tril(bwd, -1) + np.eye(3)
    assert np.any(L != L.T)
    phi = rng.standard_normal((2, 2, 3))
    ref = 0.5 * np.sqrt(np.einsum("sai,ij,saj->sa", phi, np.linalg.inv((L + L.T) / 2), phi))
    np.testing.assert_allclose(elliptical_bonus(phi, L[None], 0.5)[0], ref, rtol=1e-12)
    L32 = np.triu(fwd.astype(np.float32)) + np.tril(
        sum(np.outer(x, x) for x in X[::-1].astype(np.float32)), -1
    )
    elliptical_bonus(phi, (L32 + np.eye(3, dtype=np.float32))[None], 0.5)


def test_hybrid_npg_bound_refuses_a_2d_critic_term_array():
    # a (3, 2) array was flattened and read as the terms of T = 6 iterations (six bounds returned)
    with pytest.raises(
        ValueError, match=r"critic_terms must be .* of shape \(T,\) .*got shape \(3, 2\)"
    ):
        hybrid_npg_bound(2, 2, 1.0, np.zeros((3, 2)))
    # the (T,) form: H ln A/(ηT) + H(H+1)/(2T) + (1/T) Σ E_t; H = 2, A = 2, η = 1, E = (0, 0)
    np.testing.assert_allclose(
        hybrid_npg_bound(2, 2, 1.0, [0.0, 0.0]),
        [2 * math.log(2) + 3, math.log(2) + 1.5],
        rtol=1e-15,
    )


def test_hybrid_npg_bound_locates_a_non_finite_critic_term():
    # the message printed the whole array (repr of E) and named no entry
    with pytest.raises(ValueError, match=r"critic_terms\[2\] = inf"):
        hybrid_npg_bound(2, 2, 1.0, [0.0, 0.1, np.inf, np.nan])


def test_radius_arguments_that_do_not_broadcast_are_named():
    # numpy's 'operands could not be broadcast together with shapes (2,) (3,)' named no argument
    from rltheory.bounds.offline import empirical_bernstein_radius

    with pytest.raises(
        ValueError,
        match=r"n, value_range must broadcast together; got shapes n \(3,\), value_range \(2,\)",
    ):
        hoeffding_radius(np.ones(3), np.ones(2), 0.1)
    with pytest.raises(
        ValueError,
        match=r"n, variance, value_range must broadcast together; got shapes n \(3,\), variance \(2,\), value_range \(\)",
    ):
        empirical_bernstein_radius(np.full(3, 3.0), np.ones(2), 1.0, 0.1)
    # shapes that broadcast still do: √(2·0·L/n) + 7·B·L/(3(n − 1)) with L = ln(4/0.1), n = 1000, B = (1, 2)
    L = math.log(40.0)
    r = empirical_bernstein_radius(np.full((1, 1), 1000.0), np.zeros(1), np.array([1.0, 2.0]), 0.1)
    np.testing.assert_allclose(r, [[7 * L / (3 * 999), 14 * L / (3 * 999)]], rtol=1e-15)
