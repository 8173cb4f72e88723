"""A fitted convergence rate with its confidence interval: :class:`RateFit`.

The result type of :func:`rltheory.bounds.rates.fit_rate` (algebraic rates,
``err_t ≈ C t^s``) and :func:`rltheory.bounds.rates.fit_linear_rate` (geometric rates,
``err_t ≈ C ρ^t``): slope, intercept, the interval at ``level`` for the claimed
quantity (the slope, or ``ρ = exp(slope)``), the window fitted, and how the interval
was made (pairs bootstrap widened to the HC3 Student ``t`` interval, or Student's ``t``
over runs). Re-exported by :mod:`rltheory.bounds.rates`.

References
----------
B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993,
§9.5 (bootstrapping pairs) and §13.3 (percentile interval).
J. G. MacKinnon and H. White, Some heteroskedasticity-consistent covariance matrix
estimators with improved finite sample properties, *J. Econometrics* 29, 1985 (HC3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["RateFit"]


@dataclass(frozen=True)
class RateFit:
    """A fitted convergence rate with its bootstrap confidence interval.

    Attributes
    ----------
    slope : float
        Least-squares slope: of ``log err`` against ``log t`` (``kind="algebraic"``)
        or against ``t`` (``kind="geometric"``, where ``slope = log ρ``).
    intercept : float
        Least-squares intercept, ``log C``.
    ci : tuple of float
        Interval at ``level`` for :attr:`rate` — the slope itself for an
        algebraic fit, the contraction factor ``ρ = exp(slope)`` for a geometric
        fit (``inf`` past the float range): the hull of the bootstrap percentile
        interval and the HC3 Student ``t`` interval. For a fit over runs, Student's
        ``t`` interval over the runs' slopes instead (:func:`fit_rate`, Notes).
    window : tuple of float
        ``(t_lo, t_hi)``: the smallest and largest ``t`` actually fitted.
    n : int
        Number of fitted points.
    kind : {"algebraic", "geometric"}
    slope_ci : tuple of float
        The same interval for :attr:`slope` (equals ``ci`` for algebraic fits).
    level : float
        Confidence level of the intervals.
    n_boot : int
        Number of bootstrap resamples (0 for a fit over runs: no bootstrap).
    """

    slope: float
    intercept: float
    ci: tuple[float, float]
    window: tuple[float, float]
    n: int
    kind: str
    slope_ci: tuple[float, float] = (math.nan, math.nan)
    level: float = 0.95
    n_boot: int = 1000

    def __post_init__(self) -> None:
        if self.kind not in ("algebraic", "geometric"):
            raise ValueError(f"RateFit.kind must be 'algebraic' or 'geometric', got {self.kind!r}")

    @property
    def rate(self) -> float:
        """The claimed quantity: the slope (algebraic) or ``ρ = exp(slope)`` (geometric)."""
        return self.slope if self.kind == "algebraic" else _exp(self.slope)

    @property
    def half_width(self) -> float:
        """``(ci[1] − ci[0]) / 2`` in rate units: the precision of the measurement (``inf`` when
        the interval reaches past the float range)."""
        lo, hi = float(self.ci[0]), float(self.ci[1])
        if math.isinf(lo) or math.isinf(hi):  # inf - inf is NaN for an interval (inf, inf)
            return math.inf
        return (hi - lo) / 2.0

    def contains(self, claimed: float, tol: float = 0.0) -> bool:
        """True iff ``ci[0] - tol <= claimed <= ci[1] + tol`` (rate units, see :attr:`ci`).

        ``tol`` defaults to 0; a float64 round-off allowance of ``1e-9·(1 + |claimed|)``
        is always added so an exact power law (a zero-width interval) contains its
        own exponent.
        """
        slack = tol + 1e-9 * (1.0 + abs(claimed))
        return bool(self.ci[0] - slack <= claimed <= self.ci[1] + slack)

    def predict(self, t: Any) -> np.ndarray:
        """The fitted curve ``C t^slope`` (algebraic) or ``C ρ^t`` (geometric) at ``t``."""
        t = np.asarray(t, dtype=float)
        if self.kind == "algebraic":
            return np.exp(self.intercept + self.slope * np.log(t))
        return np.exp(self.intercept + self.slope * t)

    def label(self, digits: int = 3) -> str:
        """A legend string: ``"slope -0.500 [-0.52, -0.48]"`` or ``"ρ 0.900 [0.899, 0.901]"``."""
        name = "slope" if self.kind == "algebraic" else "ρ"
        lo, hi = self.ci
        pct = int(round(100 * self.level))
        return f"{name} {self.rate:.{digits}f} ({pct}% CI [{lo:.{digits}f}, {hi:.{digits}f}])"

    @classmethod
    def from_dict(cls, d: dict) -> RateFit:
        """Inverse of :meth:`to_dict`."""
        try:
            return cls(
                slope=float(d["slope"]),
                intercept=float(d["intercept"]),
                ci=(float(d["ci"][0]), float(d["ci"][1])),
                window=(float(d["window"][0]), float(d["window"][1])),
                n=int(d["n"]),
                kind=str(d["kind"]),
                slope_ci=(float(d["slope_ci"][0]), float(d["slope_ci"][1])),
                level=float(d["level"]),
                n_boot=int(d["n_boot"]),
            )
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"not a RateFit dict ({exc!r}): {d!r}") from None

    def to_dict(self) -> dict:
        """JSON-ready summary (plain floats and lists)."""
        return {
            "kind": self.kind,
            "rate": float(self.rate),
            "ci": [float(self.ci[0]), float(self.ci[1])],
            "slope": float(self.slope),
            "slope_ci": [float(self.slope_ci[0]), float(self.slope_ci[1])],
            "intercept": float(self.intercept),
            "window": [float(self.window[0]), float(self.window[1])],
            "n": int(self.n),
            "level": float(self.level),
            "n_boot": int(self.n_boot),
        }


def _exp(v: float) -> float:
    """``exp(v)`` as a float, ``inf`` past the float range (``math.exp`` raises OverflowError there)."""
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf
