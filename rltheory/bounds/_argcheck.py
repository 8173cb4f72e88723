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
        raise ValueError(
            f"gamma must be > 0 for this bound (its step size is (1-gamma)^3/(2 gamma |A|)); got {gamma!r}"
        )
    return g


def _pos(x: Any, name: str, *, allow_zero: bool = False) -> float:
    return check_real(x, name, low=0.0, low_open=not allow_zero)


def _where(arr: np.ndarray, bad: np.ndarray, name: str) -> str:
    """``"got v"`` for a scalar, ``"name[i, j] = v"`` at the first bad entry of an array."""
    if arr.ndim == 0:
        return f"got {arr.item()!r}"
    i = tuple(int(j) for j in np.argwhere(bad)[0])
    return f"{name}{list(i)} = {arr[i].item()!r}"


def _entry(v: Any) -> str:
    """``'4' (str)``: an entry's value and its type, for the messages."""
    v = v.item() if isinstance(v, np.generic) else v
    return f"{v!r:.40} ({type(v).__name__})"


def _real_entries(x: Any, name: str) -> tuple[np.ndarray, tuple[int, ...] | None]:
    """``x`` as a float64 array of real numbers, and the index of its first integer beyond the
    float range (``None`` when there is none; that entry reads as ``±inf``).

    Only integers (Python, numpy, unsigned) and floats are numbers here: bools, strings,
    complex numbers (even with a zero imaginary part), ``None`` and other objects are a
    ``TypeError`` naming ``name`` and the first such entry. ``np.asarray(x, dtype=float)``
    parsed ``["4"]`` as 4, read ``True`` as 1 (also inside ``[True, 4]``, which numpy stores
    as integers) and dropped imaginary parts with only a ``ComplexWarning``. Every accepted
    input gives the same floats as that cast.
    """
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must hold real numbers; got {_entry(x)}")
    try:
        a = np.asarray(x)
    except ValueError:  # numpy's "inhomogeneous shape" named neither the argument nor the rule
        raise ValueError(
            f"{name} must be a rectangular array of numbers; got a ragged sequence {x!r:.80}"
        ) from None
    kind = a.dtype.kind
    if isinstance(x, (list, tuple)) or kind == "O":
        # Python sequences are read entry by entry: numpy stores [True, 4] as integers and
        # [1, "4"] as strings, so the dtype alone neither shows nor locates the bad entry
        obj = np.asarray(x, dtype=object)
        if obj.shape == a.shape:
            out = np.empty(a.shape, dtype=float)
            first_overflow = None
            for i in np.ndindex(obj.shape):
                v = obj[i]
                if isinstance(v, np.ndarray) and v.ndim == 0:  # [np.array(1.0), 2]
                    v = v[()]
                if isinstance(v, (bool, np.bool_)) or not isinstance(
                    v, (int, float, np.integer, np.floating)
                ):
                    at = f"{name}{list(i)} = " if obj.ndim else "got "
                    raise TypeError(f"{name} must hold real numbers; {at}{_entry(v)}")
                try:
                    out[i] = float(v)
                except OverflowError:  # a Python integer beyond the float range
                    out[i] = math.inf if v > 0 else -math.inf
                    if first_overflow is None:
                        first_overflow = i
            return out, first_overflow
    if kind not in "iuf":
        if a.size == 0:
            raise TypeError(f"{name} must hold real numbers; got an empty array of dtype {a.dtype}")
        if a.ndim == 0:
            raise TypeError(f"{name} must hold real numbers; got {_entry(a[()])}")
        i = (0,) * a.ndim
        raise TypeError(
            f"{name} must hold real numbers; got an array of dtype {a.dtype}, "
            f"{name}{list(i)} = {_entry(a[i])}"
        )
    return a.astype(float), None


def _beyond_float(name: str, rule: str, a: np.ndarray, i: tuple[int, ...]) -> ValueError:
    at = f"{name}{list(i)} is" if a.ndim else "got"
    return ValueError(
        f"{name} must be {rule} and finite as a float; {at} an integer beyond the float "
        f"range (> {np.finfo(float).max:.6g})"
    )


def _times(t: Any, name: str = "t", minimum: float = 1.0) -> np.ndarray:
    """Times / iteration counts as a float array of finite entries ``>= minimum`` (located error otherwise).

    A Python integer beyond the float range (``10**400``) is rejected like ``inf``, with a
    ``ValueError`` naming the argument (numpy's float cast raised a bare ``OverflowError``);
    bools, strings and complex numbers are a located ``TypeError`` (:func:`_real_entries`).
    """
    t, over = _real_entries(t, name)
    if over is not None:
        raise _beyond_float(name, f">= {minimum:g}", t, over)
    bad = ~np.isfinite(t) | (t < minimum)
    if np.any(bad):
        raise ValueError(f"{name} must be >= {minimum:g}; {_where(t, bad, name)}")
    return t


def _nonneg(x: Any, name: str, maximum: float = math.inf) -> np.ndarray:
    """``x`` as a float array of finite entries in ``[0, maximum]`` (a located error otherwise;
    bools, strings and complex numbers are a located ``TypeError``)."""
    a, over = _real_entries(x, name)
    rng = "finite and >= 0" if math.isinf(maximum) else f"in [0, {maximum:g}]"
    if over is not None:
        raise _beyond_float(name, rng.removeprefix("finite and "), a, over)
    bad = ~np.isfinite(a) | (a < 0) | (a > maximum)
    if np.any(bad):
        raise ValueError(f"{name} must be {rng}; {_where(a, bad, name)}")
    return a


def _constant(
    x: Any, name: str, *, minimum: float = 0.0, strict: bool = False, allow_inf: bool = True
) -> np.ndarray:
    """A problem constant of a bound (mismatch, ``D_0``, ``C_1``, a gap) as a float array.

    Entries must be ``>= minimum`` (``> minimum`` when ``strict``) and not NaN; ``+inf`` is kept
    when ``allow_inf`` (an uncovered state or an unbounded divergence: the bound is then ``inf``,
    the theorem's vacuous value). A located ``ValueError`` otherwise, so that a bound is never a
    silent NaN or negative.
    """
    a, _ = _real_entries(x, name)  # an integer beyond the float range reads as +-inf
    below = (a <= minimum) if strict else (a < minimum)
    bad = np.isnan(a) | below | (False if allow_inf else np.isinf(a))
    if np.any(bad):
        rel = ">" if strict else ">="
        what = f"a number {rel} {minimum:g}" + (" (inf allowed)" if allow_inf else ", finite")
        raise ValueError(f"{name} must be {what}; {_where(a, bad, name)}")
    return a
