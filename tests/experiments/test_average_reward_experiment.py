"""discount-to-gain / rvi-spectral-gap (rltheory.experiments.average_reward): reported convergence."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.errors import ConvergenceWarning
from rltheory.experiments.average_reward import RVIConfig, _random_unichain, discount_error, run_rvi


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
