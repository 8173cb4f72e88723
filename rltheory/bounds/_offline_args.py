"""Argument checks shared by :mod:`rltheory.bounds.offline` and :mod:`rltheory.bounds.offline_rates` (private)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import real_scalar
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
