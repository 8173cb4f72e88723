"""A ``"rate"`` claim needs an informative fit: an interval too wide to tell the claimed rate
from half or double of it fails as unmeasured (Claim Notes in rltheory/bounds/claims.py).

Before, ``Claim(kind="rate")`` passed whenever the interval widened by ``tol`` contained
``expected``, so three noisy points (``fit_rate([1, 2, 4], [1, 3, 0.1])``, interval (−60, 57))
passed every claimed slope.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.bounds import Claim, RateFit, check_bound, fit_linear_rate, fit_rate
from rltheory.experiments.base import jsonable


def _fit(lo: float, hi: float, kind: str = "algebraic") -> RateFit:
    """A fit with the interval ``(lo, hi)`` in rate units, centred."""
    if kind == "algebraic":
        return RateFit(
            slope=(lo + hi) / 2, intercept=0.0, ci=(lo, hi), window=(1.0, 8.0), n=4, kind=kind
        )
    slope = math.log((lo + hi) / 2)
    return RateFit(
        slope=slope,
        intercept=0.0,
        ci=(lo, hi),
        window=(0.0, 9.0),
        n=10,
        kind=kind,
        slope_ci=(math.log(lo), math.log(hi)),
    )


def _rate(expected: float, tol: float = 0.0, **kw) -> Claim:
    return Claim("c", "a rate", "none", expected, "rate", tol, **kw)


# ---------------------------------------------------------------- the reproduction


@pytest.mark.parametrize("expected", [-0.5, -1.0, 0.5, -2.0])
def test_the_minus_60_to_57_fit_fails_every_claimed_slope_as_unmeasured(expected):
    fit = fit_rate([1, 2, 4], [1, 3, 0.1], seed=0)
    assert fit.ci[0] < -59 and fit.ci[1] > 56 and fit.contains(expected)  # the old rule's "pass"
    check = _rate(expected, 0.1).check(fit)
    assert check.passed is False
    d = check.to_dict()
    assert d["verdict"] == "unmeasured" and d["informative"] is False and d["pass"] is False
    assert d["half_width"] == pytest.approx((fit.ci[1] - fit.ci[0]) / 2) and d["half_width"] > 58
    assert d["precision"] == pytest.approx(max(0.1, abs(expected) / 2))


def test_a_precise_fit_passes_and_a_precise_wrong_one_fails_not_unmeasured():
    t = np.arange(1, 51, dtype=float)
    rng = np.random.default_rng(3)
    err = 2.0 * t**-0.5 * np.exp(0.02 * rng.standard_normal(t.size))
    fit = fit_rate(t, err, seed=0)
    ok = _rate(-0.5, 0.02).check(fit)
    assert ok.passed and ok.to_dict()["informative"] is True and ok.to_dict()["verdict"] == "pass"
    assert fit.half_width < 0.05  # far inside the default precision 0.25
    wrong = _rate(-1.0, 0.02).check(fit)
    assert not wrong.passed and wrong.to_dict()["verdict"] == "fail"  # measured, and different
    exact = fit_linear_rate(np.arange(30), 2.0 * 0.9 ** np.arange(30))
    assert _rate(0.9).check(exact).passed and exact.half_width < 1e-9


# ---------------------------------------------------------------- the default precision


def test_default_precision_is_the_distance_to_half_or_double_the_exponent():
    # algebraic t^s: neighbours s/2, 2s, nearer at |s|/2
    assert _rate(-0.5).required_precision(_fit(-0.6, -0.4)) == 0.25
    assert _rate(-0.5, 0.3).required_precision(_fit(-0.6, -0.4)) == 0.3  # tol resolves no finer
    # geometric ρ^t: neighbours √ρ and ρ²; ρ = 0.9: √0.9 − 0.9 = 0.0486833 (nearer than 0.9 − 0.81)
    g = _fit(0.89, 0.91, "geometric")
    assert _rate(0.9).required_precision(g) == pytest.approx(math.sqrt(0.9) - 0.9, rel=1e-15)
    assert _rate(0.99).required_precision(g) == pytest.approx(0.0049874, abs=1e-7)
    # ρ = 0.2: ρ − ρ² = 0.16 < √0.2 − 0.2 = 0.247
    assert _rate(0.2).required_precision(g) == pytest.approx(0.16, rel=1e-14)
    # ρ = 2 (divergence): 2 − √2 = 0.586 < 4 − 2
    assert _rate(2.0).required_precision(g) == pytest.approx(2 - math.sqrt(2), rel=1e-14)


def test_the_half_width_boundary_is_sharp():
    c = _rate(-0.5)  # precision 0.25
    assert c.check(_fit(-0.74, -0.26)).passed  # half-width 0.24
    assert not c.check(_fit(-0.76, -0.24)).passed  # half-width 0.26, contains -0.5
    g = _rate(0.9)  # precision 0.04868
    assert g.check(_fit(0.86, 0.94, "geometric")).passed  # half-width 0.04
    assert not g.check(_fit(0.84, 0.96, "geometric")).passed  # 0.06


@settings(max_examples=200, deadline=None)
@given(
    expected=st.floats(-3.0, 3.0).filter(lambda e: abs(e) > 1e-3),
    lo=st.floats(-8.0, 8.0),
    width=st.floats(0.0, 10.0),
)
def test_a_passing_algebraic_claim_tells_the_claimed_slope_from_half_and_double(
    expected, lo, width
):
    # with tol = 0 a pass puts the claimed slope s in an interval of width ≤ |s|, while s/2 and 2s lie
    # 1.5|s| apart: the interval cannot hold both (up to the round-off allowance)
    fit = _fit(lo, lo + width)
    if _rate(expected).check(fit).passed:
        slack = 3e-9 * (1 + abs(expected))
        assert not (
            fit.contains(expected / 2, tol=-slack) and fit.contains(2 * expected, tol=-slack)
        )
        assert fit.half_width <= abs(expected) / 2 + slack


# ---------------------------------------------------------------- expected = 0


def test_a_zero_rate_claim_uses_tol_or_its_stated_precision():
    plateau = _fit(-0.1, 0.1)  # a noisy flat curve
    assert _rate(0.0).required_precision(plateau) == 0.0
    assert not _rate(0.0).check(plateau).passed  # tol = 0: only an exact fit measures "exactly 0"
    assert _rate(0.0, 0.1).check(plateau).passed  # precision = tol
    assert _rate(0.0, precision=0.2).check(plateau).passed  # told from slopes beyond 0.2
    assert not _rate(0.0, precision=0.05).check(plateau).passed
    t = np.arange(1.0, 11.0)
    flat = fit_rate(t, np.full(10, 3.0))  # exact: an interval of round-off width at slope 0
    assert flat.half_width < 1e-15 and _rate(0.0).check(flat).passed  # round-off width only
    # geometric ρ = 1 (no contraction): half and double the exponent 0 are 0 too
    assert _rate(1.0, 1e-3).required_precision(_fit(0.99, 1.01, "geometric")) == 1e-3


# ---------------------------------------------------------------- one-sided kinds


def test_one_sided_claims_check_precision_only_when_stated():
    wide = _fit(-4.05, 0.28)  # the point estimate -1.885 is below -0.4, the interval straddles it
    at_most = Claim("m", "slope ≤ −1/2 + 0.1", "none", -0.5, "rate_at_most", 0.1)
    assert at_most.required_precision(wide) is None and at_most.check(wide).passed
    d = at_most.check(wide).to_dict()
    assert d["informative"] is None and d["precision"] is None and d["verdict"] == "pass"
    stated = Claim("m", "slope ≤ −1/2 + 0.1", "none", -0.5, "rate_at_most", 0.1, precision=0.25)
    assert not stated.check(wide).passed and stated.check(wide).to_dict()["verdict"] == "unmeasured"
    assert stated.check(_fit(-0.9, -0.6)).passed
    at_least = Claim("l", "slope ≥ −0.2", "none", -0.2, "rate_at_least", precision=0.1)
    assert at_least.check(_fit(-0.15, 0.0)).passed and not at_least.check(_fit(-0.2, 0.2)).passed


# ---------------------------------------------------------------- JSON and validation


def test_json_adds_keys_and_keeps_the_old_ones():
    fit = fit_rate(np.arange(1, 21), 3.0 * np.arange(1, 21) ** -1.0)
    d = _rate(-1.0, 0.05).check(fit).to_dict()
    assert {"claim", "measured", "pass", "fit"} <= set(d)
    assert {"half_width", "precision", "informative", "verdict"} <= set(d)
    assert set(d["claim"]) == {
        "name",
        "statement",
        "source",
        "expected",
        "kind",
        "tol",
        "precision",
    }
    assert d["claim"]["precision"] is None and d["precision"] == 0.5 and d["informative"] is True
    assert json.loads(json.dumps(d)) == d
    stated = Claim("c", "a rate", "none", -1.0, "rate", precision=0.1).to_dict()
    assert stated["precision"] == 0.1
    inf_fit = RateFit(0.0, 0.0, (0.5, math.inf), (0.0, 1.0), 3, "geometric", (-0.7, 800.0))
    di = _rate(0.9).check(inf_fit).to_dict()
    assert di["half_width"] == math.inf and di["verdict"] == "unmeasured"
    assert jsonable(di)["half_width"] is None  # strict JSON


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf, True, "0.1"])
def test_precision_is_validated_with_its_value(bad):
    with pytest.raises(
        ValueError, match=r"Claim 'c': precision must be None or finite and non-negative; got"
    ):
        _rate(-0.5, precision=bad)


def test_a_bound_claim_takes_no_precision():
    with pytest.raises(ValueError, match=r"Claim 'b' of kind 'bound' takes no precision"):
        Claim("b", "x ≤ 1", "none", None, "bound", precision=0.1)


def test_precision_takes_a_0d_array():
    assert _rate(-0.5, precision=np.float64(0.2)).precision == 0.2
    assert type(_rate(-0.5, precision=np.array(0.2)).precision) is float


def test_every_check_has_a_verdict_in_its_json():
    bound = Claim("b", "x ≤ 1", "none", None, "bound").check(check_bound([0.5, 2.0], [1.0, 1.0]))
    assert bound.to_dict()["verdict"] == "fail" and "informative" not in bound.to_dict()
    ok = Claim("b", "x ≤ 1", "none", None, "bound").check(check_bound([0.5], [1.0]))
    assert ok.to_dict()["verdict"] == "pass"
