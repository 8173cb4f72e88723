"""Fits over runs (err of shape (runs, points)) far from t = 0, against exact rational least squares."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from rltheory.bounds.rates import fit_linear_rate


def _exact_slope_intercept(x: np.ndarray, y: np.ndarray) -> tuple[Fraction, Fraction]:
    """Ordinary least squares of the float data ``y ≈ a + b x`` in exact rational arithmetic."""
    xs = [Fraction(float(v)) for v in x]
    ys = [Fraction(float(v)) for v in y]
    n = len(xs)
    xm, ym = sum(xs) / n, sum(ys) / n
    b = sum((u - xm) * (v - ym) for u, v in zip(xs, ys, strict=True)) / sum(
        (u - xm) ** 2 for u in xs
    )
    return b, ym - b * xm


def test_runs_far_from_zero_t_match_exact_per_run_least_squares():
    # t = 1e16 + 2k (exactly representable), three runs err = C_j 0.9^(2k) (rate 0.9 per unit t).
    # The per-run fit subtracted the float mean of t, off by ~1 at 1e16: S_xx gained n·δ² and the
    # fit read rho = 0.90279 with an interval of width 1e-16 around it, excluding the exact 0.9.
    k = np.arange(10.0)
    t = 1e16 + 2 * k
    err = np.stack([c * 0.9 ** (2 * k) for c in (2.0, 3.0, 1.5)])
    fit = fit_linear_rate(t, err)
    slopes = [_exact_slope_intercept(t, np.log(row))[0] for row in err]
    exact = float(sum(slopes) / len(slopes))
    assert exact == pytest.approx(math.log(0.9), rel=1e-12)
    assert fit.slope == pytest.approx(exact, rel=1e-12)
    assert fit.contains(0.9) and not fit.contains(0.9027)


def test_runs_far_from_zero_t_with_distinct_rates_match_exact_mean_slope_and_intercept():
    # Runs at rho = 0.89, 0.90, 0.91 (per 2 units of t): the mean slope and mean intercept are the
    # means of the runs' exact rational least-squares fits, and the Student t interval over runs
    # is mean ± t_{2, 0.975} sd/sqrt(3) of those exact slopes (t_{2, 0.975} = 4.302652729749464).
    k = np.arange(10.0)
    t = 1e16 + 2 * k
    err = np.stack([c * r ** (2 * k) for c, r in ((2.0, 0.89), (3.0, 0.90), (1.5, 0.91))])
    fit = fit_linear_rate(t, err)
    fits = [_exact_slope_intercept(t, np.log(row)) for row in err]
    b = [f[0] for f in fits]
    mean_b = sum(b) / 3
    mean_a = sum(f[1] for f in fits) / 3
    sd = math.sqrt(float(sum((v - mean_b) ** 2 for v in b) / 2))
    half = 4.302652729749464 * sd / math.sqrt(3)
    assert fit.slope == pytest.approx(float(mean_b), rel=1e-12)
    # the intercept log C - slope·t_0 is ~1e15; its float value carries round-off of that size
    assert fit.intercept == pytest.approx(float(mean_a), rel=1e-12)
    assert fit.slope_ci[0] == pytest.approx(float(mean_b) - half, rel=1e-9)
    assert fit.slope_ci[1] == pytest.approx(float(mean_b) + half, rel=1e-9)
