"""Edge cases of rltheory.bounds.average beyond the earlier rounds: extreme ε and μ_min, numpy
scalars and non-real arrays as arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.bounds.average import (
    laurent_first_order,
    mixing_time_eps_bound,
    mixing_time_spectral_bounds,
    rvi_asymptotic_rate,
    span_contraction_coefficient,
    vanishing_discount_bound,
)
from rltheory.mdp import mixing_time


@pytest.mark.parametrize(
    ("t_rel", "eps", "mu_min"),
    [(2.0, 1e-200, 1e-200), (2.0, 5e-324, 0.5), (1.0, 5e-324, 0.5), (3.0, 0.25, 5e-324)],
)
def test_spectral_bounds_at_extreme_eps_and_mu_min(t_rel, eps, mu_min):
    # ε μ_min underflowed to 0 (ZeroDivisionError) and 1/(2ε) overflowed for a subnormal ε; the
    # bounds are (t_rel − 1)(−log 2 − log ε) and t_rel(−log ε − log μ_min), finite for every valid input
    lo, hi = mixing_time_spectral_bounds(t_rel, eps, mu_min)
    assert lo == pytest.approx((t_rel - 1.0) * -(math.log(2.0) + math.log(eps)), rel=1e-15)
    assert hi == pytest.approx(t_rel * -(math.log(eps) + math.log(mu_min)), rel=1e-15)
    assert math.isfinite(lo) and math.isfinite(hi) and 0 <= lo <= hi


def test_numpy_scalars_and_0d_arrays_are_numbers():
    # np.int64 and 0-d arrays were refused as 'must be a finite number' / 'tau must lie in (0, 1]';
    # mixing_time returns a 0-d int array, which mixing_time_eps_bound refused as t_mix
    P = np.array([[0.75, 0.25], [0.25, 0.75]])
    t = mixing_time(P)
    assert isinstance(t, np.ndarray) and t.ndim == 0
    assert mixing_time_eps_bound(t, 0.01) == 7 * int(t) == 7
    assert mixing_time_eps_bound(np.int64(3), np.array(0.25)) == 6
    expect = (math.log(2.0), 2.0 * math.log(8.0))  # (t_rel − 1) log(1/(2ε)), t_rel log(1/(ε μ_min))
    for args in [(np.int64(2), 0.25, 0.5), (np.array(2.0), np.float32(0.25), np.array(0.5))]:
        assert mixing_time_spectral_bounds(*args) == pytest.approx(expect, rel=1e-15)
    swap = np.array([[0.0, 1.0], [1.0, 0.0]])  # eigenvalue −1 ↦ 1 − 2τ
    assert rvi_asymptotic_rate(swap, np.int64(1)) == 1.0
    assert rvi_asymptotic_rate(swap, np.array(0.25)) == 0.5
    for bad in (True, np.bool_(True), "0.5", np.array([0.5])):
        with pytest.raises(ValueError, match=r"tau must lie in \(0, 1\]"):
            rvi_asymptotic_rate(swap, bad)
        with pytest.raises(ValueError, match="eps must be a finite number"):
            mixing_time_spectral_bounds(2.0, bad, 0.5)
    with pytest.raises(ValueError, match=r"t_mix must be a non-negative integer; got array\(1\.\)"):
        mixing_time_eps_bound(np.array(1.0), 0.25)


def test_non_real_and_non_finite_arrays_raise_located_errors():
    # before: a complex P or h lost its imaginary part with only a ComplexWarning (span coefficient 1.0
    # of eye(2) + 0j, RVI rate 1.0, Laurent terms of Re h), a NaN in h or g gave a NaN result, a
    # string gamma '0.5' was read as 0.5 and gamma=False as 0, and text or mismatched shapes
    # failed inside numpy without naming the argument
    eye = np.eye(2)
    with pytest.raises(
        TypeError, match="P must hold real numbers; got an array of dtype complex128"
    ):
        span_contraction_coefficient(eye + 0j)
    with pytest.raises(TypeError, match="P must hold real numbers; got an array of dtype <U1"):
        span_contraction_coefficient([["a", "b"], ["c", "d"]])
    with pytest.raises(
        TypeError, match="P_pi must hold real numbers; got an array of dtype complex128"
    ):
        rvi_asymptotic_rate(eye + 0j, 1.0)
    with pytest.raises(
        TypeError, match="h must hold real numbers; got an array of dtype complex128"
    ):
        laurent_first_order(0.5, 1.0, [1j, 1.0])
    with pytest.raises(ValueError, match=r"h must be finite; h\[0\] = nan"):
        laurent_first_order(0.5, 1.0, [np.nan, 1.0])
    with pytest.raises(ValueError, match=r"g must be finite; g\[1\] = inf"):
        laurent_first_order(0.5, [1.0, np.inf], [0.0, 1.0])
    with pytest.raises(
        ValueError, match=r"g must be a number or have the shape of h, \(3,\); got \(2,\)"
    ):
        laurent_first_order([0.5, 0.6], [1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"h must have shape \(S,\) with S >= 1; got \(\)"):
        laurent_first_order(0.5, 1.0, 2.0)
    for gamma in ("0.5", False, 0.5 + 0j):
        with pytest.raises(ValueError, match=r"gamma must lie in \[0, 1\); got"):
            vanishing_discount_bound(gamma, 1.0)
        with pytest.raises(ValueError, match=r"gamma must lie in \[0, 1\); got"):
            laurent_first_order(gamma, 1.0, [1.0])
    # boolean kernels still read as 0/1 (as in the mdp layer) and per-state gains still broadcast
    assert span_contraction_coefficient(np.eye(2, dtype=bool)) == 1.0
    np.testing.assert_array_equal(laurent_first_order([0.5], [1.0, 2.0], [2.0, 4.0]), [[2.0, 4.0]])


def test_span_coefficient_of_a_kernel_without_actions():
    # P of shape (2, 0, 2) passed the checks and crashed in numpy's max ('zero-size array to reduction
    # operation maximum which has no identity')
    with pytest.raises(
        ValueError, match=r"P must have shape \(S, A, S\) with A >= 1 actions; got \(2, 0, 2\)"
    ):
        span_contraction_coefficient(np.zeros((2, 0, 2)))
    assert span_contraction_coefficient(np.ones((3, 1, 3)) / 3) == 0.0  # identical rows


def _ceil_log2_inverse(eps: float) -> int:
    """Exact ``⌈log₂(1/ε)⌉``: the least ``ℓ`` with ``2^-ℓ ≤ ε``, in rationals."""
    from fractions import Fraction  # noqa: PLC0415

    ell = 0
    while Fraction(1, 2**ell) > Fraction(eps):
        ell += 1
    return ell


@pytest.mark.parametrize("k", [1, 2, 3, 10, 52, 60, 1000, 1073])
def test_eps_bound_uses_the_exact_ceiling_next_to_powers_of_two(k):
    # LPW §4.5: t_mix(ε) ≤ ⌈log₂ ε⁻¹⌉ t_mix. For ε one ulp below 2^-k, ceil(−log2(ε)) rounded log₂ to
    # exactly −k and gave k·t_mix, while d(k·t_mix) ≤ 2^-k only: the proven factor is k + 1
    for eps in (math.nextafter(2.0**-k, 0.0), 2.0**-k, math.nextafter(2.0**-k, 1.0)):
        if 0.0 < eps < 1.0:
            assert mixing_time_eps_bound(7, eps) == _ceil_log2_inverse(eps) * 7


def test_vanishing_discount_bound_is_never_below_the_exact_product():
    # (1 - gamma) * sp(h) rounded to nearest was one ulp below the exact value for some inputs
    # (reported by helper-35); the bound is now rounded upwards, checked in rationals
    from fractions import Fraction

    from rltheory.bounds.average import vanishing_discount_bound

    rng = np.random.default_rng(7)
    gammas = np.concatenate([rng.random(400), 1.0 - 10.0 ** -rng.uniform(1, 15, 400)])
    spans = rng.uniform(0.0, 1e3, 800)
    low = 0
    for gm, sp in zip(gammas, spans, strict=True):
        b = float(vanishing_discount_bound(float(gm), float(sp)))
        exact = (1 - Fraction(float(gm))) * Fraction(float(sp))
        assert Fraction(b) >= exact
        low += Fraction(float((1.0 - gm) * sp)) < exact  # how often round-to-nearest was low
        assert b <= np.nextafter(float((1.0 - gm) * sp), np.inf)  # at most one ulp up
    assert low > 0  # the case at hand occurs in this sample
