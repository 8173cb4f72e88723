"""Argument checks shared by :mod:`rltheory.bounds.offline` and :mod:`rltheory.bounds.offline_rates` (private)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import _source_atol, real_scalar
from ..backend import as_float, to_numpy


def _prob(delta: Any, name: str = "delta") -> float:
    # Python or numpy real scalar or 0-d array (as the learners take); NaN otherwise
    d = real_scalar(delta)
    if not 0.0 < d < 1.0:
        raise ValueError(f"{name} must be a probability in (0, 1); got {delta!r}")
    return d


def _pos(x: Any, name: str) -> float:
    v = real_scalar(x)  # a 0-d array such as np.array(2.0) was refused
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a positive finite number; got {x!r}")
    return v


def _real(x: Any, field: str, *, allow_bool: bool = False, keep_dtype: bool = False) -> np.ndarray:
    """``x`` as a float64 host array; ``TypeError`` naming ``field`` for text, complex or boolean entries.

    ``np.asarray(x, dtype=float64)`` parsed the text "10" as the count 10 and dropped a complex
    entry's imaginary part with only a ComplexWarning.
    """
    a = np.asarray(to_numpy(x))
    if a.dtype == np.bool_ and not allow_bool:  # hoeffding_radius(True, 1.0, δ) read a count of 1
        raise TypeError(
            f"{field} must hold real numbers; got a boolean {'array' if a.ndim else 'value'}"
        )
    return np.asarray(as_float(a, np, None if keep_dtype else np.float64, field=field))


def _exp_log(x: float) -> float:
    """``exp(x)``, ``inf`` past the float range: the log-space fallback of the rates for Python ints beyond it."""
    return math.exp(x) if x < 709.78 else math.inf


def _at_least_one(x: Any, name: str) -> float:
    """A concentrability coefficient ``x ≥ 1`` as a float; values below 1 by its dtype's rounding count as 1.

    ``C ≥ 1`` by definition (the ratio of two distributions has maximum ``≥ Σ d_target/Σ d_data = 1``),
    but a coefficient computed in floating point from occupancies whose sums are 1 only to their
    dtype's tolerance ``a = max(1e-8, 16 eps)`` (the rule of ``check_occupancy``) can fall below 1 by up
    to ``(1 − a)/(1 + a) ≈ 1 − 2a``: ``0.99999988`` from float32 arrays was refused. The slack
    ``2a`` is that of ``x``'s own dtype (a numpy scalar or 0-d array; Python numbers are float64:
    ``2e-8``; float32: ``3.8e-6``), and such a value is returned as exactly 1 (the conservative
    reading: the rate grows with ``C``). NaN (text, bools, None, complex) and anything lower raise.
    """
    v = real_scalar(x)
    dt = (
        np.asarray(x).dtype
        if isinstance(x, (np.floating, np.ndarray)) and not math.isnan(v)
        else None
    )
    slack = 2.0 * _source_atol(np.asarray(0.0, dtype=dt if dt is not None else np.float64), np)
    if not v >= 1.0 - slack:
        where = np.dtype(dt if dt is not None else np.float64).name
        raise ValueError(
            f"{name} must be >= 1 (a concentrability coefficient); got {x!r} (values down to "
            f"1 - {slack:.2g}, the rounding of {where} occupancies, count as 1)"
        )
    return max(v, 1.0)
