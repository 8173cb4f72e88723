"""Real-number array arguments of the rate fits and bound checks, read without guessing.

``np.asarray(x, dtype=float)`` parses text (``["0.5"]``), reads bools as 0/1, fails on
integers beyond the float range with an unlocated ``OverflowError`` and on ragged lists
with numpy's "inhomogeneous shape"; :func:`_real_array` refuses each, naming the argument
and the entry. Used by :mod:`rltheory.bounds.rates` and :mod:`rltheory.bounds.claims`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import real_scalar


def _real_array(x: Any, name: str) -> np.ndarray:
    """``x`` as a float64 array of real numbers: text, bools and complex numbers are a
    ``TypeError`` (``np.asarray(["0.5"], float)`` would parse text), an integer beyond the
    float range a located ``ValueError``; ``None`` becomes NaN (refused later, with its index)."""
    try:
        a = np.asarray(x)
    except ValueError:  # numpy's "inhomogeneous shape" named neither the argument nor the rule
        raise ValueError(
            f"{name} must be a rectangular array of numbers; got a ragged sequence {x!r:.80}"
        ) from None
    if a.dtype.kind == "O":
        for i in np.ndindex(a.shape):
            v = a[i]
            if v is None:
                continue
            if isinstance(
                v, (bool, np.bool_, str, bytes, complex, np.complexfloating)
            ) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TypeError(
                    f"{name} must hold real numbers; {name}{list(i)} = {v!r:.40} ({type(v).__name__})"
                )
            if real_scalar(v) in (math.inf, -math.inf) and isinstance(v, (int, np.integer)):
                raise ValueError(
                    f"{name} must be finite; {name}{list(i)} = {v!r:.40} is beyond the float range"
                )
        return np.asarray(
            [math.nan if v is None else float(v) for v in a.reshape(-1)], dtype=float
        ).reshape(a.shape)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers; got an array of dtype {a.dtype}")
    return a.astype(float)
