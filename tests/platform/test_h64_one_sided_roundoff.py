"""One-sided rate claims take the same float64 round-off allowance as two-sided ones."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.bounds import Claim, fit_linear_rate, fit_rate


@pytest.mark.parametrize("s", [-2.0, -1.1, -0.7, -0.5, -0.2, -0.15, -0.1])
@pytest.mark.parametrize("n", [5, 10, 37])
def test_an_exact_power_law_meets_its_own_exponent_from_both_sides(s, n):
    # err = 3 t^s exactly: the fitted slope is s to ~1e-17, on either side of s. The two-sided
    # claim passed (RateFit.contains allows 1e-9 (1 + |s|)); "rate <= s" or "rate >= s" with
    # tol = 0 failed on the last bit (84 of 117 such fits over s in [-2, -0.1], n = 5, 10, 37)
    t = np.arange(1.0, n + 1.0)
    fit = fit_rate(t, 3.0 * t**s, n_boot=50)
    assert abs(fit.slope - s) < 1e-14
    for kind in ("rate", "rate_at_most", "rate_at_least"):
        claim = Claim("c", f"slope {kind} {s}", "closed form", s, kind)
        assert claim.check(fit).passed, (kind, fit.slope - s)
        assert claim.decided(fit) in (None, True)  # the zero-width interval is on the pass side


def test_an_exact_geometric_rate_meets_its_own_factor_from_both_sides():
    k = np.arange(30.0)
    for rho in (0.3, 0.9, 0.99):
        fit = fit_linear_rate(k, 2.0 * rho**k, n_boot=50)
        for kind in ("rate_at_most", "rate_at_least"):
            assert Claim("c", "rho", "closed form", rho, kind).check(fit).passed


def test_the_allowance_is_round_off_only():
    # a rate 1e-6 past the threshold still fails, and the interval says the verdict is decided
    t = np.arange(1.0, 11.0)
    fit = fit_rate(t, t ** (-0.5 + 1e-6), n_boot=50)
    at_most = Claim("c", "s <= -1/2", "closed form", -0.5, "rate_at_most")
    assert not at_most.check(fit).passed and at_most.decided(fit) is True
    at_least = Claim("c", "s >= -1/2 + 2e-6", "closed form", -0.5 + 2e-6, "rate_at_least")
    assert not at_least.check(fit).passed and at_least.decided(fit) is True
