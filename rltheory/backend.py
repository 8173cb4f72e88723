"""Array backend: namespace from inputs, dtype policy, host transfers.

Every kernel in rltheory starts with ``xp = array_namespace(*inputs)`` and then
uses only the Python array API standard, so the same code runs on numpy,
cupy and any array-API library (the test-suite runs the kernels under
``array_api_strict``). This is the only module that may know about cupy.

dtype policy: float32 and float64 are the working dtypes, and real floating arrays
of those keep their dtype; every other real input to a float computation (integers,
booleans, and the floating dtypes rltheory does not compute in: float16, long double)
becomes ``float64``, in every namespace and for arrays and numpy scalars alike
(:func:`as_float`). Probability rows given in float16 are judged at float16's rounding
before that cast (:func:`rltheory._validate._source_atol`).
"""

from __future__ import annotations

import decimal
import fractions
import numbers
from typing import Any

import numpy as np
from array_api_compat import array_namespace as _compat_namespace
from array_api_compat import device as _device
from array_api_compat import is_cupy_array, is_cupy_namespace, is_numpy_namespace

__all__ = [
    "array_namespace",
    "device_of",
    "float_dtype",
    "as_float",
    "to_numpy",
    "from_host",
    "is_numpy",
    "is_host",
    "require_host",
    "one_hot",
    "cupy_available",
    "DeviceClock",
    "on_device",
    "device_clock",
]


def array_namespace(*arrays: Any, names: tuple[str, ...] | None = None) -> Any:
    """Return the array-API namespace shared by ``arrays``.

    Python scalars (``Fraction`` and ``Decimal`` too) and ``None`` are ignored; plain
    lists/tuples (and text, which the reader of the argument refuses by name,
    :func:`as_float`) are treated as numpy input.
    ``names`` (one per argument) name the arguments in messages.

    Raises
    ------
    TypeError
        If the arrays come from different libraries, or one is no array at all (a dict, a
        scipy sparse matrix: named, with its type).
    """
    # a list is numpy input; a ragged one is left for the reader that names it (as_float)
    kept = [
        (k, _list_array(a) if isinstance(a, (list, tuple, str, bytes)) else a)
        for k, a in enumerate(arrays)
        if a is not None
        and not isinstance(a, (int, float, bool, fractions.Fraction, decimal.Decimal))
    ]
    if not kept:
        return _compat_namespace(np.empty(0))
    try:
        return _compat_namespace(*(a for _, a in kept))
    except TypeError as exc:
        labels = names if names is not None else [f"argument {k}" for k in range(len(arrays))]
        kept = [(labels[k], a) for k, a in kept]
        # 'inputs come from different array libraries: str is not a supported array type' was
        # said of a single library's inputs with one non-array among them
        for lab, a in kept:
            try:
                _compat_namespace(a)
            except TypeError:
                raise TypeError(
                    f"{lab} must be an array (numpy, cupy or an array-API library) or a list of "
                    f"numbers; got {type(a).__name__}"
                ) from None
        libs = ", ".join(f"{lab} from {_compat_namespace(a).__name__}" for lab, a in kept)
        raise TypeError(f"inputs come from different array libraries: {libs}") from exc


def _list_array(x: Any) -> Any:
    """``np.asarray(x)`` of a list, or an empty numpy array when ``x`` is ragged (numpy input all
    the same: the reader that knows the argument's name refuses it, :func:`_rectangular`)."""
    try:
        return np.asarray(x)
    except ValueError:
        return np.empty(0)


def _rectangular(x: Any, field: str) -> np.ndarray:
    """``np.asarray(x)`` of a Python list/tuple; a ragged one is a ``ValueError`` naming ``field``.

    numpy's own error ("setting an array element with a sequence. The requested array has an
    inhomogeneous shape ...") named neither the argument nor the rule.
    """
    try:
        return np.asarray(x)
    except ValueError:
        raise ValueError(
            f"{field} must be a rectangular array of numbers; got a ragged sequence {x!r:.80}"
        ) from None


def device_of(x: Any) -> Any:
    """The device an array lives on (``"cpu"`` for numpy)."""
    return _device(x)


def float_dtype(xp: Any, x: Any = None, dtype: Any = None) -> Any:
    """The floating dtype a computation on ``x`` runs in.

    ``dtype`` wins when given; otherwise a real floating ``x`` keeps its dtype and
    anything else maps to ``xp.float64``.
    """
    if dtype is not None:
        if dtype not in (xp.float32, xp.float64):
            raise TypeError(f"dtype must be float32 or float64, got {dtype!r}")
        return dtype
    if x is not None and getattr(x, "dtype", None) in (xp.float32, xp.float64):
        return x.dtype
    return xp.float64


def as_float(x: Any, xp: Any = None, dtype: Any = None, field: str = "input") -> Any:
    """``x`` as a floating array of the namespace ``xp`` (numpy for lists).

    The dtype is :func:`float_dtype`'s: ``dtype`` when given, float32 and float64 kept, and
    anything else (integers, booleans, float16, long double) promoted to float64: the
    same for an array, a numpy scalar or a list, and in every namespace.

    Complex, string, date/duration and record arrays raise ``TypeError`` naming ``field``: a cast
    would drop the imaginary part (numpy only warns), parse text as numbers, read a date as a
    count of days or drop a record's field names. A ragged list
    (``[[1.0], [0.5, 0.5]]``) raises ``ValueError`` naming ``field`` (:func:`_rectangular`).
    """
    if x is None:  # (it became the 0-d array nan: 'R must be finite; R() = nan')
        raise TypeError(f"{field} must be an array of real numbers; got None")
    if isinstance(x, (fractions.Fraction, decimal.Decimal)):
        # a number like 0.5 (array_namespace took Fraction(1, 3) for a non-array, and
        # array_api_strict refused the object array numpy made of it)
        x = _object_reals(x, field)
    if xp is None:
        xp = array_namespace(x, names=(field,))
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    if kind is None and isinstance(x, (list, tuple, complex, str, int)):
        kind = _rectangular(x, field).dtype.kind  # (an int beyond int64 is an object: 'O')
    # a dtype object without numpy's .kind (array_api_strict)
    if kind is None and hasattr(x, "dtype"):
        kind = "c" if _compat_namespace(x).isdtype(x.dtype, "complex floating") else None
    if kind in ("c", "U", "S", "m", "M", "V"):
        # (dates, durations and records were cast: a datetime64 R read 2020-01-01 as 18262.0 and a
        # record array lost its field names)
        what = {"c": "complex", "m": "timedelta64", "M": "datetime64", "V": "record (void)"}
        raise TypeError(f"{field} must hold real numbers; got a {what.get(kind, 'string')} array")
    if kind == "O":  # an object array of text was parsed ('4' read as 4.0) and complex entries cast
        x = _object_reals(x, field)
    if (
        isinstance(x, (list, tuple, int, float))
        or isinstance(x, (np.ndarray, np.generic))
        and not is_numpy_namespace(xp)
    ):
        # a numpy float32 array keeps float32 in the other namespace, as float_dtype's rule says
        # (it was cast to float64 on the way); a numpy scalar takes the same road as an array (a
        # float16 or long-double scalar went to the other namespace as it was, and
        # array_api_strict refused it: "does not support the dtype 'float16'")
        keep = isinstance(x, (np.ndarray, np.generic)) and x.dtype in (np.float32, np.float64)
        x = xp.asarray(np.asarray(x, dtype=x.dtype if keep else np.float64))
    else:
        x = xp.asarray(x)
    return xp.astype(x, float_dtype(xp, x, dtype), copy=False)


def _object_reals(x: Any, field: str) -> np.ndarray:
    """An object array (or list) of real numbers as float64, entry by entry.

    Real numbers are ``numbers.Real`` (Python and numpy numbers, ``Fraction``), ``Decimal`` and
    booleans, also inside 0-d arrays; anything else (text: numpy's cast read '4' as 4.0;
    complex numbers, ``None``) is a ``TypeError`` naming ``field`` and the index. An integer
    beyond the float range is a ``ValueError`` naming them (the cast raised an unlocated
    ``OverflowError: int too large to convert to float``); a signalling-NaN ``Decimal`` is NaN.
    """
    obj = np.asarray(x, dtype=object)
    out = np.empty(obj.shape, dtype=np.float64)
    for i in np.ndindex(obj.shape):
        v = obj[i]
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v[()]
        at = f"{field}[{', '.join(map(str, i))}]" if i else field
        # (Fraction and Decimal count: they are real numbers)
        if not isinstance(v, (numbers.Real, decimal.Decimal, np.bool_)):
            raise TypeError(f"{field} must hold real numbers; {at} = {v!r}")
        try:
            out[i] = float(v)
        except OverflowError:
            raise ValueError(
                f"{field} must hold numbers within the float range; {at} = {v!r:.40} "
                f"is beyond it (|x| > {np.finfo(np.float64).max:.4g})"
            ) from None
        except ValueError:  # Decimal('sNaN'): float() refuses a signalling NaN
            out[i] = np.nan
    return out


def to_numpy(x: Any) -> np.ndarray:
    """Copy ``x`` to a host numpy array (explicit device-to-host transfer)."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (int, float, bool, list, tuple, np.generic)):
        return np.asarray(x)
    if hasattr(x, "get") and type(x).__module__.startswith("cupy"):
        return x.get()
    try:
        return np.asarray(x)
    except (TypeError, ValueError, RuntimeError):
        return np.from_dlpack(x)


def from_host(x: Any, like: Any, dtype: Any = None) -> Any:
    """A host (numpy) result ``x`` as an array of ``like``'s namespace on ``like``'s device.

    For host-only routines (HiGHS, cvxpy) that return their answer in the caller's namespace:
    ``xp.asarray(x)`` alone puts it on the namespace's default device, which need not be the
    input's (another GPU; array_api_strict's ``Device("device1")``), and the next kernel that
    combines it with the input fails.
    """
    xp = array_namespace(like)
    return xp.asarray(x, dtype=dtype, device=_device(like))


def is_numpy(xp: Any) -> bool:
    """Whether ``xp`` is (a wrapper of) numpy."""
    return bool(is_numpy_namespace(xp))


def is_host(xp: Any) -> bool:
    """Whether ``xp`` keeps arrays in host memory (everything but cupy)."""
    return not is_cupy_namespace(xp)


def require_host(x: Any, what: str) -> np.ndarray:
    """Return ``x`` as numpy for a host-only routine; ``TypeError`` on a device array.

    Host-only routines (LP via HiGHS, cvxpy, Lemke-Howson) call this at their
    boundary instead of moving data silently.
    """
    xp = array_namespace(x)
    if not is_host(xp):
        raise TypeError(
            f"{what} runs on the host (CPU) only; got a device array from {xp.__name__}. "
            "Move it explicitly with rltheory.backend.to_numpy first."
        )
    return to_numpy(x)


def one_hot(idx: Any, n: int, xp: Any, dtype: Any) -> Any:
    """One-hot encoding ``out[..., i, k] = (idx[..., i] == k)`` in array-API code."""
    ar = xp.arange(n, device=_device(idx))
    return xp.astype(idx[..., None] == ar, dtype)


class DeviceClock:
    """Timestamps of work queued on a CUDA device, without a synchronisation per mark.

    A device run that copied a metric to the host at every iteration would wait for the
    GPU each time and lose the overlap of kernel launches with execution; instead each
    :meth:`mark` records a CUDA event on the current stream (a few microseconds, no wait),
    and :meth:`times` synchronises once and returns, for every mark, the seconds on the
    device's clock between the clock's creation and the completion of the work queued
    before that mark. Creating the clock waits once for the work already queued, so
    ``perf_counter`` read just after it and the clock's zero are the same moment. Made by
    :func:`device_clock`.
    """

    def __init__(self, cupy: Any) -> None:
        self._cuda = cupy.cuda
        self._start = cupy.cuda.Event()
        self._start.record()
        self._start.synchronize()  # one wait, so that the host's clock and this one share an origin
        self._marks: list[Any] = []

    def mark(self) -> None:
        """Record the point after the work queued so far."""
        event = self._cuda.Event()
        event.record()
        self._marks.append(event)

    def times(self) -> np.ndarray:
        """Seconds from the clock's start to each mark (one synchronisation)."""
        if not self._marks:
            return np.zeros(0)
        self._marks[-1].synchronize()
        return np.array([self._cuda.get_elapsed_time(self._start, e) for e in self._marks]) / 1e3


def device_clock(xp: Any) -> DeviceClock | None:
    """A :class:`DeviceClock` for a cupy namespace; ``None`` on the host (time with ``perf_counter``)."""
    if is_host(xp):
        return None
    import cupy  # noqa: PLC0415 - only reached with cupy arrays

    return DeviceClock(cupy)


def on_device(x: Any) -> bool:
    """Whether ``x`` is a device (cupy) array."""
    return bool(is_cupy_array(x))


def cupy_available() -> bool:
    """True when cupy imports and sees at least one CUDA device."""
    try:
        import cupy  # noqa: PLC0415

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - any failure means no usable GPU
        return False
