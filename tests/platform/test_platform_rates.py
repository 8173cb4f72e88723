"""rltheory.bounds.rates: rate fits with bootstrap CIs, bound checks, claims."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rltheory.bounds import (
    BoundCheck,
    Claim,
    ClaimCheck,
    RateFit,
    check_bound,
    fit_linear_rate,
    fit_rate,
)

# ---------------------------------------------------------------- theorems / exact recovery


@settings(max_examples=25)
@given(
    slope=st.floats(-3.0, 1.0),
    logC=st.floats(-5.0, 5.0),
    n=st.integers(3, 60),
)
def test_fit_rate_recovers_exact_power_law(slope, logC, n):
    t = np.arange(1, n + 1, dtype=float)
    fit = fit_rate(t, math.exp(logC) * t**slope, n_boot=200)
    assert fit.kind == "algebraic" and fit.n == n and fit.window == (1.0, float(n))
    assert fit.slope == pytest.approx(slope, abs=1e-9)
    assert fit.intercept == pytest.approx(logC, abs=1e-8)
    assert fit.contains(slope)
    assert not fit.contains(slope + 0.05)


@settings(max_examples=25)
@given(rho=st.floats(0.05, 0.999), n=st.integers(3, 80), C=st.floats(1e-3, 1e3))
def test_fit_linear_rate_recovers_exact_geometric_rate(rho, n, C):
    k = np.arange(n, dtype=float)
    fit = fit_linear_rate(k, C * rho**k, n_boot=200)
    assert fit.kind == "geometric"
    assert fit.rate == pytest.approx(rho, rel=1e-9)
    assert fit.contains(rho)
    assert not fit.contains(rho * 0.99 - 1e-3)
    # predict reproduces the data
    np.testing.assert_allclose(fit.predict(k), C * rho**k, rtol=1e-8)


@pytest.mark.parametrize("kind", ["algebraic", "geometric"])
def test_bootstrap_ci_covers_true_rate_in_at_least_90_percent_of_noisy_trials(kind):
    # 200 seeded trials, 40 points, multiplicative log-normal noise sigma = 0.2; nominal level 95 %.
    # The pairs-bootstrap percentile interval is first-order accurate: we require >= 90 % coverage.
    true = -0.7 if kind == "algebraic" else 0.93
    hits = 0
    trials = 200
    for trial in range(trials):
        rng = np.random.default_rng(1000 + trial)
        if kind == "algebraic":
            t = np.arange(1, 41, dtype=float)
            err = 2.0 * t**true * np.exp(0.2 * rng.standard_normal(40))
            fit = fit_rate(t, err, n_boot=400, seed=trial)
        else:
            t = np.arange(40, dtype=float)
            err = 2.0 * true**t * np.exp(0.2 * rng.standard_normal(40))
            fit = fit_linear_rate(t, err, n_boot=400, seed=trial)
        hits += fit.contains(true)
    assert hits / trials >= 0.90, hits


def test_wrong_claimed_rate_is_reported_as_fail():
    t = np.arange(1, 101, dtype=float)
    rng = np.random.default_rng(3)
    err = t**-0.5 * np.exp(0.05 * rng.standard_normal(100))
    fit = fit_rate(t, err)
    right = Claim("sgd", "err ~ t^-1/2", "textbook", -0.5, "rate").check(fit)
    wrong = Claim("sgd-wrong", "err ~ t^-1", "nowhere", -1.0, "rate").check(fit)
    assert right.passed and not wrong.passed
    assert Claim("upper", "slope <= -0.4", "x", -0.4, "rate_at_most").check(fit).passed
    assert not Claim("upper-bad", "slope <= -0.6", "x", -0.6, "rate_at_most").check(fit).passed
    assert Claim("lower", "slope >= -0.6", "x", -0.6, "rate_at_least").check(fit).passed
    assert not Claim("lower-bad", "slope >= -0.4", "x", -0.4, "rate_at_least").check(fit).passed


# ---------------------------------------------------------------- consistency


def test_slope_matches_scipy_linregress_and_ci_width_matches_normal_theory():
    # Homoscedastic Gaussian noise on log err, n = 300: the bootstrap 95 % CI width must be
    # within 20 % of the normal-theory width 2 * t_{0.975, n-2} * stderr (scipy.stats.linregress).
    rng = np.random.default_rng(7)
    t = np.linspace(1, 1000, 300)
    err = 5.0 * t**-1.3 * np.exp(0.3 * rng.standard_normal(300))
    fit = fit_rate(t, err, n_boot=2000, seed=1)
    ref = stats.linregress(np.log(t), np.log(err))
    assert fit.slope == pytest.approx(ref.slope, rel=1e-12)
    assert fit.intercept == pytest.approx(ref.intercept, rel=1e-12)
    width = fit.ci[1] - fit.ci[0]
    normal = 2 * stats.t.ppf(0.975, 298) * ref.stderr
    assert width == pytest.approx(normal, rel=0.2)


def test_geometric_ci_is_exp_of_slope_ci_and_window_is_reported():
    k = np.arange(100, dtype=float)
    rng = np.random.default_rng(0)
    err = 0.8**k * np.exp(0.1 * rng.standard_normal(100))
    fit = fit_linear_rate(k, err, window=(10, 60))
    assert fit.window == (10.0, 60.0) and fit.n == 51
    assert fit.ci == pytest.approx((math.exp(fit.slope_ci[0]), math.exp(fit.slope_ci[1])))
    assert fit.ci[0] <= fit.rate <= fit.ci[1]


def test_same_seed_same_ci_and_roundtrip_dict():
    t = np.arange(1, 30, dtype=float)
    err = t**-1.0 * np.exp(0.1 * np.random.default_rng(1).standard_normal(29))
    a, b = fit_rate(t, err, seed=5), fit_rate(t, err, seed=5)
    assert a == b
    d = json.loads(json.dumps(a.to_dict()))
    assert RateFit.from_dict(d) == a
    assert "CI" in a.label()


# ---------------------------------------------------------------- check_bound reference values


def test_check_bound_reference_values():
    c = check_bound([1.0, 0.5, 0.3], [1.0, 0.6, 0.2])
    # ratios 1, 5/6, 1.5: worst 1.5 at index 2, fails
    assert not c.holds and c.worst_ratio == pytest.approx(1.5) and c.argmax == (2,)
    assert c.worst_excess == pytest.approx(0.1)
    assert check_bound([1.0, 0.5], [1.0, 0.6]).holds
    # atol admits an excess of 0.1 exactly; rtol scales the bound
    assert check_bound([0.3], [0.2], atol=0.1 + 1e-15).holds
    assert check_bound([0.3], [0.2], rtol=0.5, atol=0.0).holds
    assert not check_bound([0.3], [0.2], rtol=0.49).holds
    # zero bound: exceeded -> inf, matched -> ratio 0
    z = check_bound([0.0, 1e-3], [0.0, 0.0])
    assert not z.holds and math.isinf(z.worst_ratio) and z.argmax == (1,)
    assert check_bound([0.0], [0.0]).holds
    # 2-D argmax
    m = check_bound([[1.0, 2.0], [3.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]])
    assert m.argmax == (1, 0) and m.n == 4


def test_claim_check_positional_forms_and_json():
    bc = check_bound([1.0], [2.0])
    claim = Claim("b", "x <= y", "src", None, "bound")
    cc = ClaimCheck(claim, bc)
    assert cc.bound_check is bc and cc.fit is None and cc.passed and cc.measured == 0.5
    forced = ClaimCheck(claim, bc, passed=False)
    assert forced.passed is False
    json.dumps(cc.to_dict(), allow_nan=False)
    assert isinstance(bc, BoundCheck)


# ---------------------------------------------------------------- validation


# ---------------------------------------------------------------- several runs: interval over runs


def test_runs_interval_is_student_t_over_the_runs_slopes():
    # three exact power laws, slopes -0.45, -0.5, -0.55: mean -0.5, sd 0.05; 95 % two-sided
    # t quantile with 2 degrees of freedom 4.302653 (any t table; 4.30265273 to 9 digits)
    t = np.array([1e3, 3e3, 1e4, 3e4])
    runs = 2.0 * t ** np.array([[-0.45], [-0.5], [-0.55]])
    fit = fit_rate(t, runs)
    half = 4.30265273 * 0.05 / math.sqrt(3)
    assert fit.slope == pytest.approx(-0.5, abs=1e-12)
    assert fit.intercept == pytest.approx(math.log(2.0), abs=1e-12)
    np.testing.assert_allclose(fit.ci, (-0.5 - half, -0.5 + half), rtol=1e-9)
    assert fit.n == 4 and fit.window == (1e3, 3e4)
    # not a bootstrap, and says so
    assert fit.n_boot == 0 and RateFit.from_dict(fit.to_dict()) == fit


def test_runs_that_agree_give_the_one_run_slope_with_a_zero_width_interval():
    t = np.arange(1.0, 11.0)
    one = 3.0 * t**-0.7
    fit = fit_rate(t, np.stack([one, one, one]))
    assert fit.slope == pytest.approx(fit_rate(t, one).slope, abs=1e-12)
    assert fit.ci[1] - fit.ci[0] == pytest.approx(0.0, abs=1e-12)


def test_runs_interval_covers_the_true_slope_at_its_level():
    # 1000 seeded experiments of 5 runs with independent log-normal noise (sigma 0.3) at 4
    # points. The per-run slopes are then exactly normal and Student's interval exact:
    # coverage 95 % within 3 binomial sd (2.1 %)
    t = np.array([1e3, 3e3, 1e4, 3e4])
    hits = 0
    for trial in range(1000):
        rng = np.random.default_rng(trial)
        runs = t**-0.5 * np.exp(0.3 * rng.standard_normal((5, 4)))
        hits += fit_rate(t, runs).contains(-0.5)
    assert abs(hits / 1000 - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / 1000), hits


def test_geometric_fit_over_runs_and_window():
    k = np.arange(0.0, 30.0)
    runs = np.stack([0.8**k, 0.9**k, 0.85**k * np.where(k > 20, 10.0, 1.0)])
    fit = fit_linear_rate(k, runs, window=(0, 20))
    assert fit.window == (0.0, 20.0) and fit.n == 21
    slopes = np.log([0.8, 0.9, 0.85])
    half = stats.t.ppf(0.975, 2) * slopes.std(ddof=1) / math.sqrt(3)
    assert fit.slope == pytest.approx(slopes.mean(), abs=1e-12)
    np.testing.assert_allclose(
        fit.ci, np.exp([slopes.mean() - half, slopes.mean() + half]), rtol=1e-12
    )


def test_runs_validation_messages():
    t = np.arange(1.0, 5.0)
    with pytest.raises(
        ValueError,
        match=r"a 2-D err needs at least 2 runs \(rows\) for an interval over runs; got 1",
    ):
        fit_rate(t, np.ones((1, 4)))
    with pytest.raises(
        ValueError, match=r"t and each row of err must have the same length; got 4 and 3"
    ):
        fit_rate(t, np.ones((2, 3)))
    bad = np.ones((3, 4))
    bad[2, 1] = -1.0
    with pytest.raises(ValueError, match=r"err\[2, 1\] = -1\.0 at t = 2\.0"):
        fit_rate(t, bad)
    with pytest.raises(ValueError, match="at least 3 points"):
        fit_rate(t, np.ones((2, 4)), window=(1, 2))


def test_validation_messages():
    t = np.arange(1, 6, dtype=float)
    with pytest.raises(ValueError, match=r"err\[2\] = 0\.0"):
        fit_rate(t, [1.0, 0.5, 0.0, 0.2, 0.1])
    with pytest.raises(ValueError, match=r"t\[0\] = 0\.0"):
        fit_rate(np.arange(5.0), np.ones(5))
    with pytest.raises(ValueError, match="same length"):
        fit_rate(t, np.ones(4))
    with pytest.raises(ValueError, match="at least 3 points"):
        fit_linear_rate(t, np.ones(5), window=(1, 2))
    with pytest.raises(ValueError, match="two distinct"):
        fit_linear_rate(np.ones(4), np.ones(4))
    with pytest.raises(ValueError, match="level"):
        fit_rate(t, np.ones(5), level=1.0)
    with pytest.raises(ValueError, match="n_boot"):
        fit_rate(t, np.ones(5), n_boot=0)
    with pytest.raises(ValueError, match="t_lo <= t_hi"):
        fit_rate(t, np.ones(5), window=(4, 2))
    with pytest.raises(ValueError, match=r"measured\[1\] = nan"):
        check_bound([1.0, float("nan")], [1.0, 1.0])
    with pytest.raises(ValueError, match="do not broadcast"):
        check_bound([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="non-negative"):
        check_bound([1.0], [1.0], atol=-1)
    with pytest.raises(ValueError, match="Claim.kind"):
        Claim("x", "s", "src", 1.0, "equal")
    with pytest.raises(ValueError, match="needs a finite expected"):
        Claim("x", "s", "src", None, "rate")
    with pytest.raises(TypeError, match="needs a BoundCheck"):
        Claim("x", "s", "src", None, "bound").check(fit_rate(t, t**-1.0))
    with pytest.raises(ValueError, match="needs evidence"):
        ClaimCheck(Claim("x", "s", "src", 1.0, "rate"))


# ---------------------------------------------------------------- audit regressions


@pytest.mark.parametrize("n", [3, 5, 10])
def test_single_curve_interval_reaches_its_level_with_few_points(n):
    # 2000 seeded curves with n points, log-normal noise sigma = 0.2 on a power law of slope
    # -0.7. The percentile pairs bootstrap alone covered 67 % (n = 3), 90 % (n = 5, 10): its
    # resamples of n points understate the slope's spread. The interval now contains the HC3
    # Student-t interval too; we require coverage >= 95 % - 3 binomial sd (3 * 0.49 % = 1.5 %).
    t = np.geomspace(1.0, 1000.0, n)
    trials = 2000
    hits = 0
    for trial in range(trials):
        rng = np.random.default_rng(10_000 * n + trial)
        err = 2.0 * t**-0.7 * np.exp(0.2 * rng.standard_normal(n))
        hits += fit_rate(t, err, n_boot=200, seed=trial).contains(-0.7)
    assert hits / trials >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / trials), hits


def test_single_curve_interval_contains_the_hc3_student_t_interval():
    # Reference: se_HC3(b)^2 = sum_i d_i^2 e_i^2 / (1 - h_ii)^2 / Sxx^2 (MacKinnon & White 1985),
    # written out here with numpy; the interval must contain b -/+ t_{n-2, 0.975} se_HC3.
    rng = np.random.default_rng(5)
    t = np.arange(1.0, 9.0)
    err = t**-0.5 * np.exp(0.3 * rng.standard_normal(8))
    x, y = np.log(t), np.log(err)
    b, a = np.polyfit(x, y, 1)
    d = x - x.mean()
    h = 1 / 8 + d**2 / (d**2).sum()
    se = math.sqrt(np.sum(d**2 * ((y - a - b * x) / (1 - h)) ** 2)) / (d**2).sum()
    half = stats.t.ppf(0.975, 6) * se
    fit = fit_rate(t, err)
    assert fit.slope == pytest.approx(b, rel=1e-12)
    assert fit.ci[0] <= b - half * (1 - 1e-12) and fit.ci[1] >= b + half * (1 - 1e-12)


def test_resamples_of_one_repeated_t_do_not_enter_the_interval():
    # t = 7, 7, 7, 7, 14: the mean of five copies of log 7 is not log 7 in float64, so the old
    # test "slope is finite" kept the resamples drawn from the four t = 7 points, whose slope of
    # round-off is 0: the interval of this exact slope -1 curve was (-1, 0.0).
    for t in ([7.0, 7.0, 7.0, 7.0, 14.0], [1.0, 1.0, 2.0]):
        err = 1.0 / np.asarray(t)
        fit = fit_rate(t, err)
        assert fit.ci[1] - fit.ci[0] < 1e-12, fit.ci
        assert fit.contains(-1.0) and not fit.contains(0.0)


def test_far_from_zero_t_is_centred_before_resampling():
    # t = 1e16 + 2k (exactly representable): the resamples' means rounded at the scale of |t|,
    # and the interval of the exact rate sqrt(0.9) = 0.94868 was [0.9487, 0.9757].
    k = np.arange(5.0)
    fit = fit_linear_rate(1e16 + 2 * k, 0.9**k)
    assert fit.rate == pytest.approx(math.sqrt(0.9), rel=1e-12)
    assert fit.ci[1] - fit.ci[0] < 1e-12 and not fit.contains(0.95)


def test_geometric_rate_past_the_float_range_is_inf_not_an_overflow_error():
    # slope = log(1e100) / 1e-3 = 2.3e5: math.exp raised OverflowError; rho is +inf.
    fit = fit_linear_rate([0.0, 1e-3, 2e-3], [1.0, 1e100, 1e200])
    assert fit.slope == pytest.approx(100 * math.log(10) / 1e-3, rel=1e-12)
    assert fit.rate == math.inf and fit.ci == (math.inf, math.inf)
    assert not Claim("x", "rho <= 0.9", "src", 0.9, "rate_at_most").check(fit).passed


def test_nan_t_is_rejected_even_when_a_window_is_given():
    # A NaN t lies in no window; it was dropped silently and the fit used 4 of the 5 points.
    t = np.array([1.0, 2.0, np.nan, 4.0, 5.0])
    with pytest.raises(ValueError, match=r"t must not contain NaN; t\[2\] = nan"):
        fit_rate(t, np.ones(5), window=(1.0, 5.0))
    with pytest.raises(ValueError, match=r"t\[2\] = nan"):
        fit_linear_rate(t, np.ones((2, 5)), window=(1.0, 5.0))


def test_bootstrap_count_and_claim_numbers_are_checked():
    # n_boot=2.7 was truncated to 2 resamples and n_boot=True read as 1; a Claim took expected=True
    # as the rate 1 and a string expected failed inside math.isfinite with a bare TypeError
    t = np.arange(1.0, 11.0)
    for bad in (2.7, True, 0, "9"):
        with pytest.raises(ValueError, match="n_boot must be a positive integer"):
            fit_rate(t, t**-1.0, n_boot=bad)
    assert fit_rate(t, t**-1.0, n_boot=np.int64(50)).n_boot == 50
    for bad in (True, "1", float("nan")):
        with pytest.raises(ValueError, match="needs a finite expected value"):
            Claim("x", "s", "src", bad, "rate")
    with pytest.raises(ValueError, match="Claim.tol must be finite and non-negative; got True"):
        Claim("x", "s", "src", 1.0, "rate", tol=True)
    assert Claim("x", "s", "src", np.float64(-1.0), "rate").expected == -1.0


def test_claim_takes_0d_arrays_as_numbers():
    # Claim(expected=np.array(-0.5)) was refused as "needs a finite expected value; got array(-0.5)"
    # and tol=np.array(0.1) as "Claim.tol must be finite and non-negative", while check_real's
    # arguments accept 0-d arrays (an array-API reduction returns one); they now equal their numbers
    t = np.arange(1, 21)
    fit = fit_rate(t, 2.0 * t**-0.5)
    a = Claim("x", "s", "src", np.array(-0.5), "rate", tol=np.array(0.1))
    b = Claim("x", "s", "src", -0.5, "rate", tol=0.1)
    assert a.expected == -0.5 and a.tol == 0.1 and a.to_dict() == b.to_dict()
    assert a.check(fit).passed and json.dumps(a.check(fit).to_dict())
    with pytest.raises(ValueError, match="needs a finite expected value; got array\\(True\\)"):
        Claim("x", "s", "src", np.array(True), "rate")
    with pytest.raises(ValueError, match="Claim.tol must be finite and non-negative; got -1"):
        Claim("x", "s", "src", 1.0, "rate", tol=np.array(-1))


def test_check_bound_reads_numbers_only_and_ragged_input_is_named():
    # check_bound read its arrays with np.asarray(..., dtype=float): measured=["0.5"] was parsed
    # (holds=True for a string) and [True] read as 1.0, while fit_rate refuses both; ragged lists
    # failed in numpy ("setting an array element with a sequence ... inhomogeneous shape"),
    # naming neither the argument nor the rule
    with pytest.raises(
        TypeError, match=r"measured must hold real numbers; got an array of dtype <U3"
    ):
        check_bound(["0.5"], [1.0])
    with pytest.raises(
        TypeError, match=r"bound must hold real numbers; got an array of dtype bool"
    ):
        check_bound([0.5], [True])
    with pytest.raises(
        ValueError, match=r"measured must be a rectangular array of numbers; got a ragged"
    ):
        check_bound([1.0, [2.0, 3.0]], [1.0, 2.0])
    with pytest.raises(
        ValueError, match=r"err must be a rectangular array of numbers; got a ragged"
    ):
        fit_rate([1, 2, 3], [[1.0, 2.0, 3.0], [1.0, 2.0]])
    # numbers, numpy scalars and integers keep working
    assert check_bound([1, np.float32(0.5)], [1.0, 0.6]).holds
