"""discount-to-gain / rvi-spectral-gap (rltheory.experiments.average_reward): reported convergence."""

from __future__ import annotations

import warnings

from rltheory.errors import ConvergenceWarning
from rltheory.experiments.average_reward import RVIConfig, run_rvi


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
