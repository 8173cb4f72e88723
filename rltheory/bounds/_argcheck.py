"""Argument checks shared by the bound modules (policy optimisation, TD and Q-learning,
constrained, games): every error names the argument, and for arrays the first bad index and
its value."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_int as _count  # noqa: F401 - re-exported for the bound modules
from .._validate import check_real
from .._validate import real_scalar as _real_scalar


def _gamma(gamma: Any, *, positive: bool = False) -> float:
    g = _real_scalar(gamma)
    if not 0.0 <= g < 1.0:
        raise ValueError(f"gamma must be a number in [0, 1); got {gamma!r}")
    if positive and g == 0.0:
        raise ValueError(f"gamma must be > 0 for this bound (its step size is (1-gamma)^3/(2 gamma |A|)); got {gamma!r}")
    return g


def _pos(x: Any, name: str, *, allow_zero: bool = False) -> float:
    return check_real(x, name, low=0.0, low_open=not allow_zero)


def _where(arr: np.ndarray, bad: np.ndarray, name: str) -> str:
    """``"got v"`` for a scalar, ``"name[i, j] = v"`` at the first bad entry of an array."""
    if arr.ndim == 0:
        return f"got {arr.item()!r}"
    i = tuple(int(j) for j in np.argwhere(bad)[0])
    return f"{name}{list(i)} = {arr[i].item()!r}"


def _times(t: Any, name: str = "t", minimum: float = 1.0) -> np.ndarray:
    """Times / iteration counts as a float array of finite entries ``>= minimum`` (located error otherwise).

    A Python integer beyond the float range (``10**400``) is rejected like ``inf``, with a
    ``ValueError`` naming the argument (numpy's float cast raised a bare ``OverflowError``).
    """
    try:
        t = np.asarray(t, dtype=float)
    except OverflowError:
        obj = np.asarray(t, dtype=object)
        at = "got"
        for i in np.ndindex(obj.shape):
            try:
                float(obj[i])
            except OverflowError:
                at = f"{name}{list(i)} is" if obj.ndim else "got"
                break
        raise ValueError(
            f"{name} must be >= {minimum:g} and finite as a float; {at} an integer beyond the float "
            f"range (> {np.finfo(float).max:.6g})"
        ) from None
    bad = ~np.isfinite(t) | (t < minimum)
    if np.any(bad):
        raise ValueError(f"{name} must be >= {minimum:g}; {_where(t, bad, name)}")
    return t


def _nonneg(x: Any, name: str, maximum: float = math.inf) -> np.ndarray:
    """``x`` as a float array of finite entries in ``[0, maximum]`` (a located error otherwise)."""
    a = np.asarray(x, dtype=float)
    bad = ~np.isfinite(a) | (a < 0) | (a > maximum)
    if np.any(bad):
        rng = "finite and >= 0" if math.isinf(maximum) else f"in [0, {maximum:g}]"
        raise ValueError(f"{name} must be {rng}; {_where(a, bad, name)}")
    return a


def _constant(x: Any, name: str, *, minimum: float = 0.0, strict: bool = False, allow_inf: bool = True) -> np.ndarray:
    """A problem constant of a bound (mismatch, ``D_0``, ``C_1``, a gap) as a float array.

    Entries must be ``>= minimum`` (``> minimum`` when ``strict``) and not NaN; ``+inf`` is kept
    when ``allow_inf`` (an uncovered state or an unbounded divergence: the bound is then ``inf``,
    the theorem's vacuous value). A located ``ValueError`` otherwise, so that a bound is never a
    silent NaN or negative.
    """
    a = np.asarray(x, dtype=float)
    below = (a <= minimum) if strict else (a < minimum)
    bad = np.isnan(a) | below | (False if allow_inf else np.isinf(a))
    if np.any(bad):
        rel = ">" if strict else ">="
        what = f"a number {rel} {minimum:g}" + (" (inf allowed)" if allow_inf else ", finite")
        raise ValueError(f"{name} must be {what}; {_where(a, bad, name)}")
    return a
