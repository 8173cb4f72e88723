"""discount-to-gain / rvi-spectral-gap (rltheory.experiments.average_reward): reported convergence."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.errors import ConvergenceWarning
from rltheory.experiments.average_reward import (
    Config,
    RVIConfig,
    _random_unichain,
    discount_error,
    run,
    run_rvi,
)


def test_rvi_panels_report_whether_rvi_converged() -> None:
    """A tol below the certificate's round-off floor stops RVI unconverged (ConvergenceWarning);
    run_rvi dropped that flag, so meta's "iterations" read as an iteration count to tol. The flag
    is now in meta, False there and True at the quick tol."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        low = run_rvi(RVIConfig(bottlenecks=(0.3,), tol=1e-300))
    assert low.meta["fits"]["p=0.3"]["converged"] is False
    ok = run_rvi(RVIConfig(bottlenecks=(0.3,)))
    assert ok.meta["fits"]["p=0.3"]["converged"] is True
    # the tail rate is the SLEM of τP + (1 − τ)I either way (the claim of the experiment)
    assert low.passed and ok.passed


@pytest.mark.parametrize("g_star", [float("nan"), float("inf"), True, "0.5"])
def test_discount_error_needs_a_finite_gain(g_star) -> None:
    """discount_error(mdp, 0.9, nan) returned err = nan, True was read as g* = 1 and "0.5" failed
    inside numpy (UFuncTypeError); now a ValueError naming g_star."""
    mdp = _random_unichain(4, 2, 0)
    with pytest.raises(ValueError, match=r"g_star must be a finite number; got "):
        discount_error(mdp, 0.9, g_star)


def test_discount_error_numpy_gain_equals_float() -> None:
    mdp = _random_unichain(4, 2, 0)
    assert discount_error(mdp, 0.9, np.float64(0.5))["err"] == discount_error(mdp, 0.9, 0.5)["err"]


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        (dict(x_max=2.0), r"Config\.x_max must be a finite number in \(0, 1\); got 2\.0"),
        (dict(x_min=0.0), r"Config\.x_min must be a finite number in \(0, 0\.1\); got 0\.0"),
        (dict(x_min=0.5), r"Config\.x_min must be a finite number in \(0, 0\.1\); got 0\.5"),
        (dict(n_points=1), r"Config\.n_points must be an integer >= 2; got 1"),
        (dict(fit_max=-1.0), r"Config\.fit_max must be a finite number > 0; got -1\.0"),
    ],
)
def test_discount_to_gain_config_is_checked(kw, msg) -> None:
    """x_max = 2 failed in the solver ('gamma must lie in [0, 1); got -1.0'), x_min = 0 in numpy's
    geomspace, and n_points = 1 or x_min >= x_max in run with 'max() arg is an empty sequence'."""
    with pytest.raises(ValueError, match=msg):
        Config(**kw)


@pytest.mark.parametrize(("fit_max", "k"), [(1e-6, 0), (1.1e-5, 1)])
def test_discount_to_gain_needs_two_points_in_the_slope_window(fit_max, k) -> None:
    """A slope window below the second-smallest 1−γ raised 'max() arg is an empty sequence' (or fit
    one point); now the window and its grid are named."""
    with pytest.raises(
        ValueError, match=rf"Config\.fit_max = {fit_max!r} leaves {k} of the 13 values"
    ):
        run(Config(fit_max=fit_max))


def test_discount_to_gain_config_takes_numpy_numbers() -> None:
    assert run(Config(n_points=np.int64(13), x_min=np.float64(1e-5))).passed


def test_rvi_config_needs_a_bottleneck() -> None:
    """RVIConfig(bottlenecks=()) ran nothing and returned a result with no claims (passed False)."""
    with pytest.raises(ValueError, match=r"RVIConfig\.bottlenecks must not be empty"):
        RVIConfig(bottlenecks=())
