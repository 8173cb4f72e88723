"""One-sided rate claims say in their JSON whether the interval decides the verdict.

``rate_at_most``/``rate_at_least`` judge the fitted rate itself; an interval that straddles the
threshold (npg-primal-dual's former quick gap-rate, [−1.67, −0.10] against −0.5 + 0.1) passes on a
point estimate the data cannot pin down (reported by helper-49). ``"decided"`` reports it.
"""

import pytest

from rltheory.bounds.claims import Claim
from rltheory.bounds.rate_fit import RateFit


def _fit(rate, lo, hi):
    return RateFit(
        slope=rate,
        intercept=0.0,
        ci=(lo, hi),
        window=(1.0, 100.0),
        n=5,
        kind="algebraic",
        slope_ci=(lo, hi),
    )


@pytest.mark.parametrize(
    ("kind", "ci", "decided"),
    [
        ("rate_at_most", (-0.9, -0.6), True),  # whole interval below -0.4: pass decided
        ("rate_at_most", (-0.3, -0.1), True),  # whole interval above: fail decided
        ("rate_at_most", (-1.67, -0.10), False),  # straddles -0.4
        ("rate_at_most", (-0.5, -0.4), True),  # upper end on the threshold
        ("rate_at_least", (-0.5, -0.3), True),  # whole interval above -0.6
        ("rate_at_least", (-0.7, -0.5), False),
    ],
)
def test_decided_reads_the_interval_against_the_threshold(kind, ci, decided):
    c = Claim("c", "s", "src", expected=-0.5, kind=kind, tol=0.1)
    fit = _fit(sum(ci) / 2, *ci)
    d = c.check(fit).to_dict()
    assert d["decided"] is decided
    assert d["pass"] == c.judge(fit)  # the verdict itself is unchanged


def test_two_sided_and_bound_claims_report_none():
    c = Claim("c", "s", "src", expected=-0.5, kind="rate", tol=0.1)
    assert c.check(_fit(-0.5, -0.55, -0.45)).to_dict()["decided"] is None
    b = Claim("b", "s", "src", kind="bound")
    assert b.decided(_fit(-0.5, -0.55, -0.45)) is None
