"""Pointwise bound checks and the pass/fail verdicts of claims: the judging side of "theory as code".

A theorem claims a rate (judged on a :class:`~rltheory.bounds.rates.RateFit`: the fitted
interval contains the claimed value and is narrow enough to tell it from half and double
of it, or the fitted rate is at most / at least it) or a
bound ``err_t ≤ B_t`` at every iterate (judged by :func:`check_bound`, which also reports
how tight the bound is). A :class:`Claim` states the theorem's number with its source; a
:class:`ClaimCheck` holds the claim, its evidence and the verdict that experiments write
to their JSON (``"pass": true|false``). Re-exported by :mod:`rltheory.bounds.rates`.
:func:`check_bound` and :class:`BoundCheck` live in :mod:`rltheory.bounds.bound_check` and are
re-exported here.

References
----------
M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, Theorem 6.3.3 (the value
iteration bound ``‖v_k − v*‖∞ ≤ γ^k ‖v_0 − v*‖∞`` used in the examples).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .bound_check import BoundCheck, check_bound
from .rate_fit import RateFit

__all__ = ["CLAIM_KINDS", "BoundCheck", "check_bound", "Claim", "ClaimCheck"]

#: Claim kinds understood by :meth:`Claim.check`.
CLAIM_KINDS = ("rate", "rate_at_most", "rate_at_least", "bound")


@dataclass(frozen=True)
class Claim:
    """A theorem's quantitative claim, as checked by an experiment.

    Attributes
    ----------
    name : str
        Short identifier, e.g. ``"vi-rate-gridworld"``.
    statement : str
        The claim in words with its formula, e.g. ``"‖v_k − v*‖∞ ≤ γ^k ‖v_0 − v*‖∞"``.
    source : str
        Citation with theorem number.
    expected : float or None
        The claimed value (rate units of :attr:`RateFit.rate`); ``None`` for
        ``kind="bound"``.
    kind : {"rate", "rate_at_most", "rate_at_least", "bound"}
        ``"rate"``: the fitted interval, widened by ``tol``, contains ``expected`` *and* the
        fit is informative (below);
        ``"rate_at_most"``: fitted rate ``≤ expected + tol``;
        ``"rate_at_least"``: fitted rate ``≥ expected − tol`` (both with the round-off
        allowance ``1e-9·(1 + |expected|)`` of :meth:`RateFit.contains`);
        ``"bound"``: a :class:`BoundCheck` holds.
    tol : float
        Allowance for the rate kinds; its justification belongs in ``statement``.
    precision : float or None
        The largest half-width ``(ci[1] − ci[0]) / 2`` of the fitted interval (rate units, as
        ``expected`` and ``tol``) that counts as a measurement; a wider interval makes the
        claim fail as *unmeasured*. ``None`` (the default): for ``kind="rate"`` the default
        precision below, for the one-sided kinds no requirement. Not allowed for ``"bound"``.

    Notes
    -----
    *Why a precision.* A ``"rate"`` claim passes when its interval contains ``expected``, and
    a wider interval contains more: three noisy points give ``fit_rate([1, 2, 4], [1, 3, 0.1])``
    the interval ``(−60, 57)``, which contains every claimed slope. A measurement that cannot
    tell the claimed rate from a clearly different one is no evidence for it, so a
    ``"rate"`` claim also requires ``half_width ≤ precision`` (plus the float64 round-off
    allowance ``1e-9·(1 + |expected|)`` of :meth:`RateFit.contains`).

    *Default precision* (``kind="rate"``): ``max(tol, d)``, where ``d`` is the distance from
    the claimed rate to the nearer of the rates with half and with double its exponent — the
    fit must at least tell the claimed rate from those. Algebraic fits (``err ≈ C t^s``,
    rate ``s``): the neighbours are ``s/2`` and ``2s``, so ``d = |s|/2``. Geometric fits
    (``err ≈ C ρ^t``, rate ``ρ``; the exponent is ``log ρ``): the neighbours are ``√ρ`` and
    ``ρ²``, so ``d = min(|√ρ − ρ|, |ρ² − ρ|)`` (``0.0487`` for ``ρ = 0.9``, ``0.00499`` for
    ``ρ = 0.99``); ``d = 0`` for ``ρ ≤ 0``. The default never asks for more than the claim's
    own ``tol`` resolves.

    *Claimed rate 0* (a plateau, ``s = 0``, or no contraction, ``ρ = 1``): half and double of
    it are itself, ``d = 0``, so the default precision is ``tol``; with ``tol = 0`` only an
    exact fit (a zero-width interval, as for a deterministic power law) is a measurement.
    Such a claim should state its ``precision``: the smallest rate it must be told from.

    The one-sided kinds are judged on the fitted rate, not on the interval, so a wider
    interval does not make them easier to pass; they check ``half_width ≤ precision`` only
    when the claim states one. :meth:`ClaimCheck.to_dict` reports the half-width, the
    precision applied and whether the fit was informative.

    Examples
    --------
    >>> from rltheory.bounds.rates import fit_rate
    >>> claim = Claim("sgd", "err ∝ t^(−1/2)", "none", expected=-0.5, kind="rate", tol=0.05)
    >>> noisy = fit_rate([1, 2, 4], [1, 3, 0.1], seed=0)  # interval (−60, 57)
    >>> noisy.contains(-0.5), claim.check(noisy).passed  # contains it, but measures nothing
    (True, False)
    >>> claim.check(fit_rate([1, 2, 4, 8], [1, 0.7, 0.5, 0.36])).passed
    True
    """

    name: str
    statement: str
    source: str
    expected: float | None = None
    kind: str = "rate"
    tol: float = 0.0
    precision: float | None = None

    def __post_init__(self) -> None:
        for name in ("name", "statement", "source"):  # None as a name keyed every seed report
            if not isinstance(getattr(self, name), str):
                raise TypeError(
                    f"Claim.{name} must be a str; got {type(getattr(self, name)).__name__}"
                )
        # a 0-d real array (an array-API reduction's result) is its number, as in check_real
        for name in ("expected", "tol", "precision"):
            v = getattr(self, name)
            if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iuf":
                object.__setattr__(self, name, v.item())
        if self.kind not in CLAIM_KINDS:
            raise ValueError(f"Claim.kind must be one of {CLAIM_KINDS}; got {self.kind!r}")
        if self.kind != "bound" and (
            self.expected is None
            or isinstance(self.expected, bool)
            or not isinstance(self.expected, (int, float, np.integer, np.floating))
            or not math.isfinite(self.expected)
        ):  # (True passed as the expected rate 1)
            raise ValueError(
                f"Claim {self.name!r} of kind {self.kind!r} needs a finite expected value; got {self.expected!r}"
            )
        if (
            isinstance(self.tol, bool)
            or not isinstance(self.tol, (int, float, np.integer, np.floating))
            or not (self.tol >= 0 and math.isfinite(self.tol))
        ):
            raise ValueError(f"Claim.tol must be finite and non-negative; got {self.tol!r}")
        if self.precision is not None:
            if (
                isinstance(self.precision, bool)
                or not isinstance(self.precision, (int, float, np.integer, np.floating))
                or not (self.precision >= 0 and math.isfinite(self.precision))
            ):
                raise ValueError(
                    f"Claim {self.name!r}: precision must be None or finite and non-negative; "
                    f"got {self.precision!r}"
                )
            if self.kind == "bound":
                raise ValueError(
                    f"Claim {self.name!r} of kind 'bound' takes no precision (it judges a BoundCheck, "
                    f"not a fitted interval); got precision={self.precision!r}"
                )

    def check(self, evidence: RateFit | BoundCheck) -> ClaimCheck:
        """Judge ``evidence`` (a :class:`RateFit` or a :class:`BoundCheck`) against this claim."""
        if self.kind == "bound":
            if not isinstance(evidence, BoundCheck):
                raise TypeError(
                    f"claim {self.name!r} of kind 'bound' needs a BoundCheck; got {type(evidence).__name__}"
                )
            return ClaimCheck(self, bound_check=evidence)
        if not isinstance(evidence, RateFit):
            raise TypeError(
                f"claim {self.name!r} of kind {self.kind!r} needs a RateFit; got {type(evidence).__name__}"
            )
        return ClaimCheck(self, fit=evidence)

    def required_precision(self, fit: RateFit) -> float | None:
        """The largest interval half-width (rate units) that counts as a measurement of this claim.

        :attr:`precision` when stated; else, for ``kind="rate"``, ``max(tol, d)`` with ``d``
        the distance from ``expected`` to the nearer of the rates with half and double its
        exponent (``|s|/2`` for an algebraic fit, ``min(|√ρ − ρ|, |ρ² − ρ|)`` for a geometric
        one; class Notes); ``None`` (no requirement) for the one-sided kinds without a stated
        precision and for ``"bound"``.
        """
        if self.kind == "bound":
            return None
        if self.precision is not None:
            return float(self.precision)
        if self.kind != "rate":
            return None
        return max(float(self.tol), _half_double_distance(float(self.expected), fit.kind))  # type: ignore[arg-type]

    def informative(self, fit: RateFit) -> bool | None:
        """``fit.half_width ≤ required_precision(fit) + 1e-9·(1 + |expected|)``; ``None`` when
        no precision is required (:meth:`required_precision`)."""
        p = self.required_precision(fit)
        if p is None:
            return None
        slack = 1e-9 * (1.0 + abs(float(self.expected)))  # type: ignore[arg-type]
        return bool(fit.half_width <= p + slack)  # a NaN or inf half-width is not informative

    def decided(self, fit: RateFit) -> bool | None:
        """For the one-sided kinds: whether the whole interval lies on the verdict's side of
        ``expected ± tol`` (with the verdict's round-off allowance; ``ci[1] ≤ expected + tol``
        or ``ci[0] > expected + tol`` for
        ``"rate_at_most"``, mirrored for ``"rate_at_least"``); ``None`` for the other kinds.

        The one-sided verdict reads the fitted rate itself, so an interval that straddles the
        threshold (``npg-primal-dual``'s former quick ``gap-rate``: [−1.67, −0.10] against −0.4) passes
        or fails on a point estimate the data cannot pin down; ``decided`` says so in the JSON
        without changing the verdict.
        """
        if self.kind not in ("rate_at_most", "rate_at_least"):
            return None
        lo, hi = (float(c) for c in fit.ci)
        t = self._threshold()
        return bool(hi <= t or lo > t) if self.kind == "rate_at_most" else bool(lo >= t or hi < t)

    def _threshold(self) -> float:
        """``expected ± tol`` of a one-sided kind, widened by the round-off allowance
        ``1e-9·(1 + |expected|)`` of :meth:`RateFit.contains` (an exact power law ``t^s`` fits
        ``s ± 1e-17``: it failed ``"rate_at_most"`` or ``"rate_at_least"`` ``s`` with ``tol = 0``)."""
        e = float(self.expected)  # type: ignore[arg-type]
        allowance = float(self.tol) + 1e-9 * (1.0 + abs(e))
        return e + allowance if self.kind == "rate_at_most" else e - allowance

    def judge(self, evidence: RateFit | BoundCheck) -> bool:
        """The pass/fail rule of :attr:`kind` applied to ``evidence``.

        A rate claim whose fit is not informative (:meth:`informative` is False) fails as
        unmeasured, whatever the fitted rate.
        """
        if self.kind == "bound":
            return bool(evidence.holds)  # type: ignore[union-attr]
        fit: RateFit = evidence  # type: ignore[assignment]
        if self.informative(fit) is False:
            return False
        if self.kind == "rate":
            return fit.contains(float(self.expected), tol=self.tol)  # type: ignore[arg-type]
        t = self._threshold()
        return bool(fit.rate <= t) if self.kind == "rate_at_most" else bool(fit.rate >= t)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "statement": self.statement,
            "source": self.source,
            "expected": None if self.expected is None else float(self.expected),
            "kind": self.kind,
            "tol": float(self.tol),
            "precision": None if self.precision is None else float(self.precision),
        }


def _half_double_distance(expected: float, fit_kind: str) -> float:
    """Distance from a claimed rate to the nearer of the rates with half and double its exponent.

    Algebraic (``t^s``): ``min(|s/2 − s|, |2s − s|) = |s|/2``. Geometric (``ρ^t = e^{t log ρ}``):
    ``min(|√ρ − ρ|, |ρ² − ρ|)``, and 0 for ``ρ ≤ 0`` (no exponent).
    """
    if fit_kind == "algebraic":
        return abs(expected) / 2.0
    if not expected > 0.0:
        return 0.0
    return min(abs(math.sqrt(expected) - expected), abs(expected * expected - expected))


@dataclass(frozen=True)
class ClaimCheck:
    """A claim with its evidence and verdict.

    Build it with :meth:`Claim.check`; or directly as ``ClaimCheck(claim, fit_or_bound_check)``
    (the verdict is then computed by :meth:`Claim.judge`), or with an explicit ``passed``.

    Attributes
    ----------
    claim : Claim
    fit : RateFit or None
    bound_check : BoundCheck or None
    passed : bool
        ``None`` (the default) to compute it with :meth:`Claim.judge`; else a ``bool``
        (``numpy.bool_`` accepted; anything else, e.g. NaN, is a ``TypeError``).
    """

    claim: Claim
    fit: RateFit | None = None
    bound_check: BoundCheck | None = None
    passed: bool | None = field(default=None)

    def __post_init__(self) -> None:
        if isinstance(self.fit, BoundCheck):  # ClaimCheck(claim, bound_check) positionally
            if self.bound_check is not None:
                raise ValueError(
                    "give either a RateFit or a BoundCheck as evidence, not two BoundChecks"
                )
            object.__setattr__(self, "bound_check", self.fit)
            object.__setattr__(self, "fit", None)
        if not isinstance(self.claim, Claim):
            raise TypeError(f"ClaimCheck.claim must be a Claim; got {type(self.claim).__name__}")
        # (a dict or tuple failed later in the verdict or to_dict, or was stored as evidence)
        for name, cls in (("fit", RateFit), ("bound_check", BoundCheck)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, cls):
                raise TypeError(
                    f"ClaimCheck for {self.claim.name!r}: {name} must be None or a {cls.__name__}; "
                    f"got {type(value).__name__}"
                )
        if self.fit is None and self.bound_check is None:
            raise ValueError(
                f"ClaimCheck for {self.claim.name!r} needs evidence: a RateFit or a BoundCheck"
            )
        if self.passed is None:
            evidence = self.fit if self.claim.kind != "bound" else self.bound_check
            if evidence is None:
                raise ValueError(
                    f"claim {self.claim.name!r} of kind {self.claim.kind!r} needs "
                    f"{'a BoundCheck' if self.claim.kind == 'bound' else 'a RateFit'} as evidence"
                )
            object.__setattr__(self, "passed", self.claim.judge(evidence))
        elif isinstance(self.passed, (bool, np.bool_)):
            object.__setattr__(self, "passed", bool(self.passed))
        else:  # bool(nan) and bool("no") are True: a verdict must be a bool
            raise TypeError(
                f"ClaimCheck for {self.claim.name!r}: passed must be None or a bool; got {self.passed!r} "
                f"({type(self.passed).__name__})"
            )

    @property
    def measured(self) -> float:
        """The measured number: the fitted rate (rate kinds), or the bound's worst ratio
        (``"bound"``); NaN where the claim's kind has no such evidence (the stand-in
        BoundCheck of a rate claim that could not be fitted measured no rate)."""
        evidence = self.bound_check if self.claim.kind == "bound" else self.fit
        if evidence is None:
            return math.nan
        return float(evidence.worst_ratio if self.claim.kind == "bound" else evidence.rate)  # type: ignore[union-attr]

    def to_dict(self) -> dict:
        """JSON-ready: claim, measured vs expected, CI/window or worst ratio, ``pass``.

        ``"verdict"`` is ``"pass"``, ``"fail"``, or ``"unmeasured"`` for a failure whose fit was
        not informative, or for a ``"rate"`` claim's failure with no fit at all (an explicit
        ``passed=False`` where too few points could be fitted). With a fit it also holds ``"half_width"`` (of the interval, rate
        units), ``"precision"`` (the half-width required, :meth:`Claim.required_precision`;
        ``None`` when none is), ``"informative"`` (``half_width ≤ precision``; ``None`` when
        no precision is required) and ``"decided"`` (one-sided kinds: the whole interval on the
        verdict's side of the threshold, :meth:`Claim.decided`; ``None`` for the others).
        """
        informative = (
            self.claim.informative(self.fit)
            if self.fit is not None and self.claim.kind != "bound"
            else None
        )
        # a two-sided rate claim failed with no fit at all (too few points to fit, an explicit
        # verdict) has no interval either: unmeasured, as a too wide one, not an interval miss
        no_interval = self.fit is None and self.claim.kind == "rate"
        out: dict = {
            "claim": self.claim.to_dict(),
            "measured": self.measured,
            "pass": bool(self.passed),
            "verdict": "pass"
            if self.passed
            else ("unmeasured" if informative is False or no_interval else "fail"),
        }
        if self.fit is not None:
            out["fit"] = self.fit.to_dict()
            out["half_width"] = float(self.fit.half_width)
            out["precision"] = (
                self.claim.required_precision(self.fit) if self.claim.kind != "bound" else None
            )
            out["informative"] = informative
            out["decided"] = self.claim.decided(self.fit) if self.claim.kind != "bound" else None
        if self.bound_check is not None:
            out["bound_check"] = self.bound_check.to_dict()
        return out
