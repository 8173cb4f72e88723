"""JSON and ``.npz`` encoding of the arrays of a :class:`rltheory.trace.Trace`, with located errors.

:func:`_encode_array` writes an ``{"dtype", "shape", "data"}`` object (non-finite floats as the
strings ``"nan"``, ``"inf"``, ``"-inf"``); :func:`_decode_array` reads one back and names the
first entry that is not of the declared kind; :func:`_unique_keys` refuses a repeated JSON key;
:func:`_check_npz_name` refuses a name a zip directory cannot hold as written.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def _encode_array(a: np.ndarray, where: str) -> dict:
    a = np.asarray(a)
    if a.dtype.kind not in "biuf":
        raise TypeError(
            f"{where}: only boolean, integer and float arrays can be saved; got dtype {a.dtype}"
        )
    if a.dtype.kind == "f" and a.dtype.itemsize > 8:
        raise TypeError(
            f"{where}: dtype {a.dtype} has no JSON form without rounding; cast it to float64 or save as .npz"
        )
    flat = a.reshape(-1).tolist()
    if a.dtype.kind == "f":
        flat = [
            v if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
            for v in flat
        ]
    return {"dtype": a.dtype.str, "shape": list(a.shape), "data": flat}


def _decode_array(d: Any, where: str) -> np.ndarray:
    """The array of an ``{"dtype", "shape", "data"}`` object; a located ``ValueError`` otherwise.

    Every entry must be a value of the declared kind, as :func:`_encode_array` writes it:
    ``true``/``false`` for booleans, integers in the dtype's range for integer dtypes, and
    numbers or ``"nan"``/``"inf"``/``"-inf"`` within the dtype's range for floats. Nothing
    is cast silently (``null`` is not NaN, ``1.5`` is not the integer 1, ``true`` is not 1.0).
    """
    if not isinstance(d, dict) or set(d) != {"dtype", "shape", "data"}:
        raise ValueError(f"{where} must be an object with keys dtype, shape, data")
    if not isinstance(d["dtype"], str):
        raise ValueError(
            f"{where}: dtype must be a NumPy dtype string such as '<f8'; got {d['dtype']!r}"
        )
    try:
        dtype = np.dtype(d["dtype"])
    except TypeError:
        raise ValueError(f"{where}: dtype {d['dtype']!r} is not a NumPy dtype") from None
    if dtype.kind not in "biuf":
        raise ValueError(f"{where}: unsupported dtype {d['dtype']!r}")
    shape = d["shape"]
    if not isinstance(shape, list) or any(
        isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in shape
    ):
        raise ValueError(f"{where}: shape must be a list of non-negative integers; got {shape!r}")
    size = math.prod(shape)  # exact (np.prod wraps around past the int64 range)
    data = d["data"]
    if not isinstance(data, list) or len(data) != size:
        raise ValueError(
            f"{where}: data has {len(data) if isinstance(data, list) else '?'} entries, shape {tuple(shape)} needs {size}"
        )
    special = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
    if dtype.kind == "f":
        data = [special.get(v, v) if isinstance(v, str) else v for v in data]
    bad = next((i for i, v in enumerate(data) if _entry_problem(v, dtype) is not None), None)
    if bad is None and dtype.kind == "f":
        with np.errstate(over="ignore"):
            out = np.asarray(
                [
                    v
                    if isinstance(v, float) or abs(v) <= 2**1024
                    else (math.inf if v > 0 else -math.inf)
                    for v in data
                ],
                dtype=dtype,
            )
        finite_in = np.asarray([isinstance(v, int) or math.isfinite(v) for v in data], dtype=bool)
        over = finite_in & ~np.isfinite(out)  # a finite number past the dtype's range is not inf
        if not np.any(over):
            return _reshaped(out, shape, where)
        bad = int(np.flatnonzero(over)[0])
        raise ValueError(
            f"{where}: data[{bad}] = {d['data'][bad]!r:.60} is too large for {dtype.name}"
        )
    if bad is not None:
        v = d["data"][bad]
        if dtype.kind == "f":
            raise ValueError(
                f"{where}: non-numeric entry in data; data[{bad}] = {v!r:.60} "
                f"({_entry_problem(data[bad], dtype)})"
            )
        raise ValueError(f"{where}: data[{bad}] = {v!r:.60} is {_entry_problem(v, dtype)}")
    return _reshaped(np.asarray(data, dtype=dtype), shape, where)


def _reshaped(a: np.ndarray, shape: list, where: str) -> np.ndarray:
    """``a.reshape(shape)``, with a located ``ValueError`` for a shape NumPy cannot hold (an empty
    array whose other axes multiply past its index range, such as ``[0, 2**62, 2**62]``)."""
    try:
        return a.reshape(shape)
    except (ValueError, OverflowError) as exc:
        raise ValueError(
            f"{where}: shape {shape!r:.80} is not a NumPy array shape ({exc})"
        ) from None


def _entry_problem(v: Any, dtype: np.dtype) -> str | None:
    """Why ``v`` is not an entry of a ``dtype`` array as :func:`_encode_array` writes it; ``None`` if it is."""
    if dtype.kind == "b":
        return None if isinstance(v, bool) else "not a boolean (only true, false)"
    if dtype.kind == "f":
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return None
        return "only numbers, 'nan', 'inf', '-inf'"
    if isinstance(v, int) and not isinstance(v, bool):
        info = np.iinfo(dtype)
        if info.min <= v <= info.max:
            return None
        return f"{'too large for' if v > info.max else 'below the range of'} {dtype.name} ([{info.min}, {info.max}])"
    if isinstance(v, float) and not math.isfinite(v):
        return f"{'infinity' if v == v else 'nan'}, not an integer ({dtype.name})"
    return f"not an integer ({dtype.name})"


def _iteration_array(a: np.ndarray, where: str) -> np.ndarray:
    """``a`` as int64 iteration indices; a located ``ValueError`` for a value that is not one."""
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{where} must hold integers; got dtype {a.dtype}")
    if a.dtype.kind in "iu":
        bad = a > np.iinfo(np.int64).max if a.dtype.kind == "u" else np.zeros(a.shape, dtype=bool)
    else:
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(a) | (a != np.floor(a)) | (np.abs(a) >= 2.0**63)
    if np.any(bad):
        i = tuple(int(j) for j in np.unravel_index(int(np.flatnonzero(bad)[0]), a.shape))
        raise ValueError(f"{where}{list(i)} = {a[i].item()!r} is not an int64 iteration index")
    return a.astype(np.int64)


class _DuplicateKey(ValueError):
    """A JSON object names a key twice (``json.loads`` would keep the last silently)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """``object_pairs_hook`` for :func:`json.loads` that refuses a repeated key."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(f"the key {k!r:.60} appears twice in one JSON object")
        out[k] = v
    return out


def _check_npz_name(prefix: str, name: Any, where: str) -> None:
    """Refuse a name that the zip directory of an ``.npz`` cannot hold as written.

    A zip member name is UTF-8 bytes of at most 65535 (``prefix + name + ".npy"``) and is cut
    at a NUL character when read back, so such a name would be stored as another one.
    """
    if not isinstance(name, str):
        raise TypeError(f"{where}: names must be strings; got {type(name).__name__}")
    if "\x00" in name:
        raise ValueError(
            f"{where}: a name containing NUL cannot be stored in .npz (the zip name is cut there); "
            "rename it or save as .json"
        )
    try:
        size = len(f"{prefix}{name}.npy".encode())
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{where}: the name is not valid Unicode text ({exc.reason}); rename it or save as .json"
        ) from None
    if size > 65535:
        raise ValueError(
            f"{where}: the name is too long for .npz ({size} UTF-8 bytes with {prefix!r} and '.npy'; "
            "a zip name holds at most 65535); rename it or save as .json"
        )
