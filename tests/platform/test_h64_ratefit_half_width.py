"""RateFit.half_width of a geometric interval past the float range is inf, as documented."""

from __future__ import annotations

import math

import numpy as np

from rltheory.bounds import Claim, fit_linear_rate
from rltheory.bounds.rate_fit import RateFit


def test_an_interval_wholly_past_the_float_range_has_infinite_half_width():
    # log err climbs by 1400 over t in [0, 0.003]: slope ~ 4.7e5, so rho = exp(slope) and both
    # ends of its interval are past the float range, ci = (inf, inf); the half-width was
    # inf - inf = NaN where the docstring promises inf
    t = np.array([0.0, 0.001, 0.002, 0.003])
    fit = fit_linear_rate(t, np.exp([-700.0, -200.0, 300.0, 700.0]))
    assert fit.ci == (math.inf, math.inf) and all(map(math.isfinite, fit.slope_ci))
    assert fit.half_width == math.inf
    check = Claim("rho", "rho >= 2", "made up", 2.0, "rate_at_least", precision=0.5).check(fit)
    record = check.to_dict()
    assert record["half_width"] == math.inf and record["verdict"] == "unmeasured"


def test_finite_and_half_open_intervals_keep_their_half_widths():
    # (hi - lo)/2 for a finite interval; inf where one end is past the float range; NaN stays NaN
    def fit(ci):
        return RateFit(slope=0.0, intercept=0.0, ci=ci, window=(1.0, 2.0), n=3, kind="geometric")

    assert fit((0.5, 0.75)).half_width == 0.125
    assert fit((0.5, math.inf)).half_width == math.inf
    assert math.isnan(fit((math.nan, 0.5)).half_width)
