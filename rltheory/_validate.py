"""Located validation helpers shared by every model (MDPs, games), and argument checks.

Checks run in the array namespace of the input; only on failure is the
offending entry located on the host, so a valid model costs no transfer
beyond one boolean per check. :func:`check_positive_int`,
:func:`check_tolerance` and :func:`check_real` validate solver settings (plain Python
numbers) and raise ``ValueError``.
"""

from __future__ import annotations

import decimal
import fractions
import math
import numbers
from typing import Any

import numpy as np

from .backend import _rectangular, array_namespace, as_float, one_hot, to_numpy
from .errors import InvalidModelError

#: absolute tolerance on probability row sums and negativity.
PROB_ATOL = 1e-8


def _where(idx: tuple[int, ...], names: tuple[str, ...]) -> str:
    """Format an index as ``(batch=(0,), s=3, a=1)`` given trailing axis names."""
    nb = len(idx) - len(names)
    parts = []
    if nb > 0:
        parts.append(f"batch={tuple(int(i) for i in idx[:nb])}")
    parts += [f"{n}={int(i)}" for n, i in zip(names, idx[nb:] if nb >= 0 else idx, strict=False)]
    return "(" + ", ".join(parts) + ")"


def check_ndim(x: Any, field: str, min_ndim: int, layout: str) -> None:
    """``x`` must have at least ``min_ndim`` axes (layout given for the message)."""
    if not hasattr(x, "ndim") or x.ndim < min_ndim:
        shape = getattr(x, "shape", None)
        raise InvalidModelError(f"{field} must have shape {layout}; got shape {shape}")


def check_finite(x: Any, field: str, names: tuple[str, ...]) -> None:
    """Every entry of ``x`` must be finite; report the first offending index."""
    xp = array_namespace(x)
    if bool(xp.all(xp.isfinite(x))):
        return
    h = to_numpy(x)
    idx = tuple(int(i) for i in np.argwhere(~np.isfinite(h))[0])
    raise InvalidModelError(f"{field} must be finite; {field}{_where(idx, names)} = {h[idx]}")


def check_probability(
    x: Any, field: str, names: tuple[str, ...], row: str, atol: float = PROB_ATOL
) -> None:
    """``x`` must be a probability vector along its last axis.

    ``row`` is how a row reads in messages, e.g. ``"P[s, a, :]"``. Entries must be
    ``≥ −atol`` and rows must sum to 1 within ``atol·(1 + √n)`` for rows of length
    ``n``, where ``atol`` is at least ``16·eps`` of the dtype (float32 rows round).
    """
    xp = array_namespace(x)
    # never demand more than the dtype can hold (float32: eps ≈ 1.2e-7); integer and boolean
    # rows are exact, and are compared as float64 (xp.finfo of an integer dtype raised an
    # unlocated AttributeError, and array_api_strict refuses int-array-with-float comparisons)
    atol = max(atol, _source_atol(x))
    x = _as_real_floating(x, xp)
    check_finite(x, field, names)
    if not bool(xp.all(x >= -atol)):
        h = to_numpy(x)
        idx = tuple(int(i) for i in np.unravel_index(np.argmin(h), h.shape))
        raise InvalidModelError(
            f"{field} must be non-negative; most negative entry {field}{_where(idx, names)} = {h[idx]:.6g}"
        )
    dev = xp.abs(xp.sum(x, axis=-1) - 1.0)
    if not bool(xp.all(dev <= atol * max(1, x.shape[-1]) ** 0.5 + atol)):
        sums = to_numpy(xp.sum(x, axis=-1))
        idx = tuple(int(i) for i in np.unravel_index(np.argmax(np.abs(sums - 1.0)), sums.shape))
        if not idx:  # one row (an unbatched distribution): there is no worst row to locate
            raise InvalidModelError(
                f"each {row} must sum to 1 (atol={atol:g}); it sums to {sums[idx]:.12g}"
            )
        raise InvalidModelError(
            f"each {row} must sum to 1 (atol={atol:g}); worst row {_where(idx, names[:-1])} "
            f"sums to {sums[idx]:.12g}"
        )


def check_discount(gamma: Any, field: str = "gamma", allow_none: bool = True) -> float | None:
    """gamma must be a real number in [0, 1) (or ``None`` for average reward).

    Any real scalar :func:`real_scalar` reads is accepted (Python, numpy, ``Fraction``,
    ``Decimal``, a 0-d real array of any array library); bools, text, complex numbers and
    arrays with an axis raise :class:`InvalidModelError` naming ``field``. The value is
    judged after its rounding to the nearest double, which the message shows.
    """
    if gamma is None:
        if allow_none:
            return None
        raise InvalidModelError(f"{field} must be a number in [0, 1); got None")
    # (np.array(0.9) passed but array_api_strict's 0-d array and Fraction(9, 10) were refused as
    # 'not a number', and a Python int beyond the float range raised an unlocated OverflowError)
    g = _real_value(gamma)
    if g is None:
        raise InvalidModelError(f"{field} must be a number in [0, 1); got {gamma!r}")
    if not (0.0 <= g < 1.0):
        raise InvalidModelError(f"{field} must lie in [0, 1); got {g}{_rounded_from(gamma, g)}")
    return g


def _rounded_from(x: Any, g: float) -> str:
    """``" (Fraction(…) rounds to 1.0 in floating point)"`` when the exact ``x`` (an int, Fraction or
    Decimal) is not the double ``g``, ``" (… is beyond the float range)"`` when it overflows, else ``""``."""
    if not isinstance(x, (int, fractions.Fraction, decimal.Decimal)) or isinstance(x, bool):
        return ""
    if isinstance(x, decimal.Decimal) and not x.is_finite():
        return ""
    if math.isinf(g):
        return f" ({x!r:.60} is beyond the float range)"
    if x != fractions.Fraction(g):
        return f" ({x!r} rounds to {g!r} in floating point)"
    return ""


def check_int(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` must be an integer ``≥ minimum`` (:func:`_int_value`: Python or numpy, or a 0-d
    integer array of any array library; not a bool); returned as ``int``."""
    v = _int_value(value)
    if v is None or v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return v


def check_positive_int(value: Any, name: str, allow_none: bool = False) -> int | None:
    """``value`` must be an integer ``≥ 1`` (:func:`_int_value`; ``None`` passes through when
    ``allow_none``)."""
    if value is None and allow_none:
        return None
    v = _int_value(value)
    if v is None or v < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return v


def _int_value(x: Any) -> int | None:
    """``int(x)`` for an integer (Python or numpy scalar, or a 0-d integer array of numpy or any
    array-API library, as :func:`real_scalar` reads a 0-d real array), ``None`` otherwise (bools,
    floats, even integral ones: a count 3.7 is not truncated)."""
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    # (np.array(3) was refused as a count while np.array(0.5) was accepted as a real setting)
    if getattr(x, "shape", None) == () and hasattr(x, "dtype"):
        try:
            if array_namespace(x).isdtype(x.dtype, "integral"):
                return int(x)
        except (TypeError, ValueError):
            return None
    return None


def check_tolerance(tol: Any, name: str = "tol") -> float:
    """``tol`` must be a positive finite real number (:func:`real_scalar`: Python or numpy
    scalars and 0-d real arrays; not a bool); returned as ``float``."""
    x = real_scalar(tol)
    if not (x > 0) or not math.isfinite(x):
        raise ValueError(f"{name} must be a positive finite number; got {tol!r}")
    return x


def real_scalar(x: Any) -> float:
    """``float(x)`` for a real number (:func:`_real_value`: Python, numpy, ``Fraction`` or
    ``Decimal`` scalars and 0-d real arrays of any array library; not a bool), ``±inf`` for
    one beyond the float range, and NaN for anything else."""
    v = _real_value(x)
    return math.nan if v is None else v


def _real_value(x: Any) -> float | None:
    """``x`` as the nearest double when it is a real scalar, else ``None``.

    Real scalars: Python ``int``/``float``, ``fractions.Fraction``, ``decimal.Decimal``, numpy
    integer and floating scalars (any ``numbers.Real``), and 0-d arrays of integer or real
    floating dtype from numpy or any array-API library (a device array is read with one host
    sync). Bools (Python, numpy, 0-d bool arrays), text, complex numbers and arrays with an
    axis are not. A value beyond the float range becomes ``±inf``; a signalling NaN ``Decimal``
    is NaN.
    """
    if isinstance(x, (bool, np.bool_)):
        return None
    if not isinstance(x, (numbers.Real, decimal.Decimal)):
        if getattr(x, "shape", None) != () or not hasattr(x, "dtype"):
            return None
        if isinstance(x, np.ndarray):
            if x.dtype.kind not in "iuf":
                return None
            x = x.item()
        else:  # a 0-d array of another library (array_api_strict, cupy): its namespace says the kind
            try:
                xp = array_namespace(x)
                if xp.isdtype(x.dtype, "integral"):
                    x = int(x)
                elif xp.isdtype(x.dtype, "real floating"):
                    x = float(x)
                else:
                    return None
            except (TypeError, ValueError):
                return None
    try:
        return float(x)
    except OverflowError:  # an int or Fraction beyond the float range
        return math.inf if x > 0 else -math.inf
    except (TypeError, ValueError):  # Decimal('sNaN'), or a Real subclass that cannot convert
        return math.nan


def check_real(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_none: bool = False,
) -> float | None:
    """``value`` must be a finite real number (:func:`real_scalar`) in the given range.

    ``low``/``high`` bound it (open when ``low_open``/``high_open``); ``None`` passes
    through when ``allow_none``. Returned as ``float``. NaN, ±inf, bools and strings raise
    ``ValueError`` naming ``name``, the rule and the value.
    """
    if value is None and allow_none:
        return None
    rule = "a finite number"
    if low is not None and high is not None:
        rule += f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    elif low is not None:
        rule += f" {'>' if low_open else '>='} {low:g}"
    elif high is not None:
        rule += f" {'<' if high_open else '<='} {high:g}"
    v = real_scalar(value)
    ok = math.isfinite(v)
    if ok and low is not None:
        ok = v > low if low_open else v >= low
    if ok and high is not None:
        ok = v < high if high_open else v <= high
    if not ok:
        raise ValueError(f"{name} must be {rule}; got {value!r}")
    return v


def check_action_indices(pi: Any, S: int, n: int, field: str = "pi") -> None:
    """A deterministic policy ``pi[..., S]`` must hold action indices in ``[0, n)``.

    The message names the first offending index, e.g. ``pi(1,) = 2 is not an action index in [0, 2)``.
    """
    xp = array_namespace(pi)
    if pi.ndim < 1 or pi.shape[-1] != S:
        raise ValueError(
            f"deterministic policy {field} must have shape (..., S) = (..., {S}); got {tuple(pi.shape)}"
        )
    if bool(xp.any((pi < 0) | (pi >= n))):
        h = to_numpy(pi)
        idx = tuple(int(i) for i in np.argwhere((h < 0) | (h >= n))[0])
        raise ValueError(f"{field}{idx} = {int(h[idx])} is not an action index in [0, {n})")


def as_policy_array(
    pi: Any, S: int, n: int, xp: Any, dtype: Any, field: str = "pi", action_axis: str = "A"
) -> Any:
    """A validated stochastic policy ``pi[..., S, n]`` in namespace ``xp``.

    Integer arrays ``pi[..., S]`` (deterministic policies) are checked with
    :func:`check_action_indices` and one-hot encoded; floating arrays must have shape
    ``(..., S, n)`` with rows on the simplex (:func:`check_probability`).
    ``action_axis`` names the action axis in messages (``"A"``, or ``"B"`` for a column player).
    """
    if isinstance(pi, (list, tuple)):
        pi = _rectangular(pi, field)  # a ragged list is named, not numpy's unlocated error
    pi = _carried(pi, xp)
    if array_namespace(pi).isdtype(pi.dtype, "integral"):
        pi = xp.asarray(pi)
        check_action_indices(pi, S, n, field)
        return one_hot(pi, n, xp, dtype)
    atol = _source_atol(pi)
    pi = as_float(pi, xp, dtype, field)
    if pi.ndim < 2 or tuple(pi.shape[-2:]) != (S, n):
        raise ValueError(
            f"stochastic policy {field} must have shape (..., S, {action_axis}) = (..., {S}, {n}); "
            f"got {tuple(pi.shape)}"
        )
    check_probability(pi, field, ("s", "a"), f"{field}[s, :]", atol=atol)
    return _renormalised(pi, atol, xp)


def _as_real_floating(x: Any, xp: Any) -> Any:
    """An integer or boolean ``x`` as float64 (exact laws, compared as floats); any other ``x``
    (floating, or a complex one the caller refuses) unchanged."""
    if xp.isdtype(x.dtype, ("integral", "bool")):
        return xp.astype(x, xp.float64)
    return x


def _renormalised(x: Any, atol: float, xp: Any) -> Any:
    """Rows of ``x`` divided by their sums when they came in at a coarser precision than
    ``x`` now has (a float32 row summing to 1 + 3e-8 is valid, and stays valid downstream)."""
    if atol > 16.0 * float(xp.finfo(x.dtype).eps) and atol > PROB_ATOL:
        return x / xp.sum(x, axis=-1, keepdims=True)
    return x


def _source_atol(x: Any, xp: Any = None) -> float:
    """The row-sum tolerance for ``x`` before any up-cast: a float32 row given to a float64
    model was rounded in float32, so it is judged at float32's ``16·eps`` (float16's: 0.0156).

    The dtype is read in ``x``'s own namespace (``xp`` is not needed and is ignored): a numpy
    float16 array bound for array_api_strict, which has no float16, is judged as float16.
    """
    own = array_namespace(x)
    if own.isdtype(x.dtype, "real floating"):
        return max(PROB_ATOL, 16.0 * float(own.finfo(x.dtype).eps))
    return PROB_ATOL


def _carried(x: Any, xp: Any) -> Any:
    """``x`` ready for :func:`as_float` into ``xp``: a numpy array or scalar stays as it is
    (``as_float`` carries it across under the dtype rule, float16 and long double becoming
    float64), anything else is ``xp.asarray(x)``.

    ``xp.asarray`` first sent a numpy float16 policy, ``μ`` or table to array_api_strict as it
    was, and it was refused without a name: "The array_api_strict namespace does not support
    the dtype 'float16'" (a float32 one was accepted).
    """
    if isinstance(x, (np.ndarray, np.generic)):
        return x
    return xp.asarray(x)


def as_real_array(
    x: Any, field: str, tail: tuple[int, ...], names: tuple[str, ...], xp: Any, dtype: Any = None
) -> Any:
    """``x`` as a finite floating array of shape ``(..., *tail)`` in namespace ``xp``.

    Lists are accepted like arrays. A wrong shape raises ``ValueError`` naming ``field``
    and the expected trailing shape; a NaN or infinite entry raises ``InvalidModelError``
    (a ``ValueError``) naming the first offending index and its value (``names`` name the
    trailing axes).
    """
    if isinstance(x, (list, tuple)):
        x = _rectangular(x, field)  # own dtype: as_float names text, complex and non-numbers
    x = as_float(_carried(x, xp), xp, dtype, field=field)
    k = len(tail)
    if x.ndim < k or tuple(x.shape[x.ndim - k :]) != tuple(tail):
        axes = ", ".join(["..."] + [n.upper() for n in names])
        sizes = ", ".join(["..."] + [str(t) for t in tail])
        raise ValueError(f"{field} must have shape ({axes}) = ({sizes}); got {tuple(x.shape)}")
    check_finite(x, field, names)
    return x


def as_distribution(x: Any, field: str, n: int, xp: Any, dtype: Any = None, name: str = "s") -> Any:
    """``x`` as a probability vector ``x[..., n]`` (non-negative, summing to 1) in ``xp``.

    Shape and finiteness are checked by :func:`as_real_array`, then the simplex by
    :func:`check_probability` at a tolerance set by the dtype ``x`` came in.
    """
    if isinstance(x, (list, tuple)):
        x = _rectangular(x, field)  # own dtype: as_float names text, complex and non-numbers
    x = _carried(x, xp)
    atol = _source_atol(x)
    x = as_real_array(x, field, (n,), (name,), xp, dtype)
    check_probability(x, field, (name,), f"{field}[:]", atol=atol)
    return _renormalised(x, atol, xp)


def as_action_table(x: Any, field: str, xp: Any = None) -> Any:
    """``x`` as a finite floating table ``x[..., S, A]`` with ``S, A ≥ 1`` (a ``Q`` or logits).

    Lists are accepted like arrays. Fewer than two axes or an empty state/action axis raise
    ``InvalidModelError`` (a ``ValueError``) naming ``field`` and the shape; a NaN or
    infinite entry raises one naming the first offending index ``(s=.., a=..)`` and its value.
    """
    if isinstance(x, (list, tuple)):
        x = _rectangular(x, field)  # own dtype: as_float names text, complex and non-numbers
    if xp is None:
        xp = array_namespace(x)
    x = as_float(_carried(x, xp), xp, field=field)
    check_ndim(x, field, 2, "(..., S, A)")
    if x.shape[-2] == 0 or x.shape[-1] == 0:
        raise InvalidModelError(
            f"{field} must have shape (..., S, A) with S, A >= 1; got shape {tuple(x.shape)}"
        )
    check_finite(x, field, ("s", "a"))
    return x


def _occupancy_names(ndim: int) -> tuple[str, ...]:
    if ndim <= 1:
        return ("x",)[:ndim]
    if ndim == 2:
        return ("s", "a")
    if ndim == 3:
        return ("h", "s", "a")
    return ("h", "s") + tuple(f"a{i + 1}" for i in range(ndim - 2))


def check_occupancy(x: Any, field: str, *, sums: bool = True) -> None:
    """``x`` must be an occupancy: finite, non-negative, and (``sums=True``) a distribution.

    ``x[x]`` or ``x[s, a]`` (one or two axes) must sum to 1 over all entries; ``x[h, ...]``
    (three or more axes, a step axis first) must sum to 1 over each step ``h``. A bad entry
    is located as ``field(h=.., s=.., a=..) = value``; a bad sum names the step.
    """
    xp = array_namespace(x)
    x = _as_real_floating(x, xp)  # (an integer or boolean occupancy: xp.finfo failed on it)
    names = _occupancy_names(x.ndim)
    bad = ~xp.isfinite(x) | (x < 0)
    if bool(xp.any(bad)):
        h = to_numpy(x)
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(h) | (h < 0))[0])
        raise InvalidModelError(
            f"{field} must be finite and non-negative; {field}{_where(idx, names)} = {float(h[idx])!r}"
        )
    if x.ndim == 0:
        raise InvalidModelError(
            f"{field} must be an occupancy array with at least one axis; got shape ()"
        )
    if not sums:
        return
    rows = xp.reshape(x, (1, -1)) if x.ndim <= 2 else xp.reshape(x, (x.shape[0], -1))
    n = rows.shape[-1]
    atol = _source_atol(x)
    sums = xp.sum(rows, axis=-1)
    if not bool(xp.all(xp.abs(sums - 1.0) <= atol * (1.0 + max(1, n) ** 0.5))):
        s = to_numpy(sums)
        i = int(np.argmax(np.abs(s - 1.0)))
        if x.ndim <= 2:
            raise InvalidModelError(
                f"{field} must sum to 1 over all its entries; it sums to {s[i]:.12g}"
            )
        raise InvalidModelError(
            f"each {field}[h] must sum to 1 (an occupancy per step); worst step h={i} sums to {s[i]:.12g}"
        )


def _input_atol(x: Any) -> float:
    """:func:`_source_atol` of an input before :func:`as_float` touches it (``PROB_ATOL`` for
    lists and non-float arrays): ``as_float`` promotes float16 to float64, after which a float16
    row summing to 1.00024 was judged at 1e-8 and refused."""
    if not (hasattr(x, "dtype") and hasattr(x, "shape")):
        return _source_atol(np.zeros(0))  # (plain Python numbers and lists: float64's rule)
    try:
        return _source_atol(x)
    except (TypeError, ValueError):  # a dtype no namespace knows: as_float names it
        return _source_atol(np.zeros(0))
