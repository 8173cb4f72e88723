"""Argument checks of the policy-optimisation bounds (private): the ranges the problem
constants' definitions imply (a probability ``c``, a mismatch ``≥ 1``, ``1/min ρ ≥ S``) and counts
beyond the float range. Split out of :mod:`rltheory.bounds.policy_optimization`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._argcheck import _beyond_float, _constant, _real_entries, _where


def _probability_floor(c: Any) -> np.ndarray:
    """``c = inf_t min π_t(·|s)``: a probability in ``(0, 1]`` (located error otherwise).

    Read by :func:`~rltheory.bounds._argcheck._real_entries`: ``np.asarray(c, dtype=float)``
    took ``True`` and the text ``"1"`` as the probability 1 (a bound of 1966.08 from ``c=True``)
    and raised a bare ``OverflowError`` for ``10**400``.
    """
    c, over = _real_entries(c, "c")
    if over is not None:
        raise _beyond_float("c", "in (0, 1]", c, over)
    bad = ~((c > 0) & (c <= 1))
    if np.any(bad):
        raise ValueError(
            f"c must be > 0 (the bound is vacuous otherwise) and <= 1 (a probability); {_where(c, bad, 'c')}"
        )
    return c


def _rounding_slack(x: Any) -> tuple[float, str]:
    """``2a`` with ``a = max(1e-8, 16 eps)``, the row-sum tolerance of the distributions a constant
    is computed from, and the name of the dtype whose ``eps`` is used: ``x``'s own (a numpy scalar
    or array) when coarser than float32, else float32's (``3.8e-6``). A Python float computed from
    float32 distributions carries their rounding (``1/float(np.float32(1/3)) = 2.99999991``), so
    float64 alone (``2e-8``) refused such values; a value this close to the floor changes no bound
    by more than that relative amount."""
    dt = np.asarray(x).dtype if isinstance(x, (np.floating, np.ndarray)) else np.dtype(np.float64)
    if not np.issubdtype(dt, np.floating) or np.finfo(dt).eps < np.finfo(np.float32).eps:
        dt = np.dtype(np.float32)
    return 2.0 * max(1e-8, 16.0 * float(np.finfo(dt).eps)), dt.name


def _at_least(x: Any, a: np.ndarray, name: str, floor: float, what: str) -> np.ndarray:
    """``a`` (``x`` read by :func:`_constant`) with entries ``>= floor``: values below ``floor`` by
    at most the rounding of :func:`_rounding_slack` (relative) are read as ``floor``, the
    conservative value (each bound grows with the constant); a located ``ValueError`` below that."""
    slack, dtype = _rounding_slack(x)
    bad = a < floor * (1.0 - slack)
    if np.any(bad):
        raise ValueError(
            f"{name} must be >= {floor:g} ({what}); {_where(a, bad, name)} (values down to "
            f"{floor * (1.0 - slack):.10g}, the rounding of {dtype} distributions, count as {floor:g})"
        )
    return np.maximum(a, floor)


def _mismatch(x: Any, name: str, *, strict: bool = False) -> np.ndarray:
    """A distribution mismatch ``‖d^{π*}_ρ/μ‖∞ ≥ 1`` as a float array (``inf`` kept).

    ``d^{π*}_ρ`` and ``μ`` are both distributions over states, so the largest ratio is at least
    ``Σ d/Σ μ = 1``: a value below 1 claims a smaller bound than any model allows (``mismatch=0``
    gave the bound 0 in :func:`softmax_pg_bound` and :func:`projected_pg_bound`, a claim that the
    gap is 0 at every iterate). NaN and negative values keep :func:`_constant`'s message.
    """
    a = _constant(x, name, strict=strict)
    return _at_least(
        x, a, name, 1.0, "a distribution mismatch: the largest ratio of two distributions"
    )


def _as_float_count(n: int) -> float:
    """A validated count as a float: ``inf`` beyond the float range (``16.0 * 10**400`` raised a
    bare ``OverflowError``, naming no argument; the bound there is ``inf``)."""
    try:
        return float(n)
    except OverflowError:
        return math.inf
