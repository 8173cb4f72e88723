"""td_fixed_point_bound and tvr_fixed_point_bound against exact rational arithmetic as gamma -> 1.

Reference values: ``1/sqrt(1 - kappa^2)`` with ``kappa = gamma(1 - lam)/(1 - gamma lam)`` and
``(1 - lam gamma)/(1 - gamma)`` (Tsitsiklis & Van Roy 1997, Lemma 6 / Thm 1(iii)), evaluated for the
stored floats gamma and lam in ``fractions.Fraction`` and a 60-digit ``decimal`` square root.
A bound is a certificate: its float value must not fall below the exact one by more than rounding.
``1.0 - kappa**2`` cancelled for gamma near 1 (4.7% low at gamma = 1 - 4e-16, lam = 0.9).
"""

from __future__ import annotations

from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from rltheory.bounds import td_fixed_point_bound, tvr_fixed_point_bound

EPS = float(np.finfo(np.float64).eps)


def _dec(f: Fraction) -> Decimal:
    return Decimal(f.numerator) / Decimal(f.denominator)


def _exact(gamma: float, lam: float) -> tuple[Decimal, Decimal]:
    getcontext().prec = 60
    g, lm = Fraction(gamma), Fraction(lam)
    kappa = g * (1 - lm) / (1 - g * lm)
    return 1 / _dec(1 - kappa * kappa).sqrt(), _dec((1 - lm * g) / (1 - g))


GAMMAS = [0.5, 0.9, 0.999, 1 - 2.0**-30, 1 - 1e-12, 1 - 2.1e-15, 1 - 4e-16, 1 - 2.0**-53]
LAMS = [0.0, 0.5, 0.9, 1 - 2.0**-30, 1 - 1e-12, 1.0]


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("lam", LAMS)
def test_td_bounds_match_exact_rational_values(gamma: float, lam: float) -> None:
    pyth, tvr = _exact(gamma, lam)
    got_p = Decimal(float(td_fixed_point_bound(1.0, gamma=gamma, lam=lam)))
    got_t = Decimal(float(tvr_fixed_point_bound(1.0, gamma=gamma, lam=lam)))
    assert abs(got_p / pyth - 1) <= Decimal(8 * EPS), (gamma, lam, float(got_p), float(pyth))
    assert abs(got_t / tvr - 1) <= Decimal(8 * EPS), (gamma, lam, float(got_t), float(tvr))


def test_td_bound_is_not_below_its_exact_value_near_one() -> None:
    # gamma = 1 - 4e-16, lam = 0.9: kappa = 0.99999999999999964; 1 - kappa**2 came out 10% large
    gamma, lam = 1 - 4e-16, 0.9
    pyth, _ = _exact(gamma, lam)
    got = float(td_fixed_point_bound(3.0, gamma=gamma, lam=lam))
    assert got >= 3.0 * float(pyth) * (1 - 4 * EPS)
    assert got <= float(tvr_fixed_point_bound(3.0, gamma=gamma, lam=lam))


def test_bounds_beyond_the_float_range_are_inf_without_warnings():
    # 1e308 / sqrt(1 - 0.99^2) = 7.1e308 and 1e308 * 100 exceed the float range: the bound is inf,
    # as in the other bounds, not numpy's overflow RuntimeWarning (an error under -W error)
    import warnings

    from rltheory.bounds import q_learning_bound

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = td_fixed_point_bound([1.0, 1e308], gamma=0.99)
        assert got[1] == np.inf and got[0] == pytest.approx(1 / np.sqrt(1 - 0.99**2), rel=1e-12)
        assert float(tvr_fixed_point_bound(1e308, gamma=0.99)) == np.inf
        q = q_learning_bound(
            [0, 5],
            alpha=0.1,
            gamma=0.99,
            initial_error=1e308,
            value_span=1e308,
            n_pairs=2,
            horizon=5,
            delta=0.1,
        )
        assert np.all(q == np.inf)
