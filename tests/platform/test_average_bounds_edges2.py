"""Edge cases of rltheory.bounds.average beyond the earlier rounds: extreme ε and μ_min, numpy
scalars and non-real arrays as arguments."""

from __future__ import annotations

import math

import pytest

from rltheory.bounds.average import mixing_time_spectral_bounds


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
