"""Argument checks shared by the policy-optimisation, TD and Q-learning bound modules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def _gamma(gamma: Any, *, positive: bool = False) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not (0.0 <= gamma < 1.0):
        raise ValueError(f"gamma must be a number in [0, 1); got {gamma!r}")
    if positive and gamma == 0.0:
        raise ValueError("gamma must be > 0 for this bound (its step size is (1-gamma)^3/(2 gamma |A|))")
    return float(gamma)


def _pos(x: Any, name: str, *, allow_zero: bool = False) -> float:
    ok = isinstance(x, (int, float, np.floating)) and not isinstance(x, bool) and math.isfinite(x)
    if not ok or (x < 0 if allow_zero else x <= 0):
        raise ValueError(f"{name} must be a finite number {'>= 0' if allow_zero else '> 0'}; got {x!r}")
    return float(x)


def _times(t: Any, name: str = "t", minimum: float = 1.0) -> np.ndarray:
    t = np.asarray(t, dtype=float)
    bad = ~np.isfinite(t) | (t < minimum)
    if np.any(bad):
        i = tuple(int(j) for j in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be >= {minimum:g}; {name}{list(i)} = {t[i]!r}")
    return t
