"""Located validation helpers shared by the offline dataset classes (private)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_probability
from ..backend import _rectangular, as_float, require_host, to_numpy
from ..errors import InvalidModelError


def _nested(x: Any, at: tuple[int, ...]) -> Any:
    for i in at:
        x = x[i]
    return x


def _first_bool(x: Any, at: tuple[int, ...] = ()) -> tuple[int, ...] | None:
    """Index of the first ``bool`` in nested lists/tuples ``x`` (None if there is none)."""
    if isinstance(x, (bool, np.bool_)):
        return at
    if isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            hit = _first_bool(v, at + (i,))
            if hit is not None:
                return hit
    return None


def _int_array(x: Any, field: str, cls: str) -> np.ndarray:
    if isinstance(x, (list, tuple)):  # a ragged list failed in numpy's asarray, naming nothing
        # a bool among ints made an int array (True read as index 1); a list of bools alone made a
        # bool array, refused below
        hit = _first_bool(x)
        if hit is not None:
            raise InvalidModelError(
                f"{cls}.{field} must hold integer indices; {cls}.{field}"
                f"[{', '.join(map(str, hit))}] is the bool {bool(_nested(x, hit))}"
            )
        x = _rectangular(x, f"{cls}.{field}")
    a = np.asarray(to_numpy(x))
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
        raise InvalidModelError(f"{cls}.{field} must hold integer indices; got dtype {a.dtype}")
    top = np.iinfo(np.int64).max
    if a.dtype.kind == "u" and a.size and a.max() > top:
        # the int64 cast would wrap 2**64 - 1 to -1: a wrong value in the range message, or
        # a valid negative index where one is allowed
        idx = tuple(int(i) for i in np.argwhere(a > top)[0])
        raise InvalidModelError(
            f"{cls}.{field}[{', '.join(map(str, idx))}] = {int(a[idx])} is not an index "
            f"(above the int64 maximum {top})"
        )
    return a.astype(np.int64, copy=False)


def _reward_host(x: Any, field: str) -> np.ndarray:
    """:func:`_real_host` for observed rewards, which are numbers: a bool array is a
    ``TypeError`` (``[[True]]`` was stored as the reward 1.0; pass ``.astype(float)`` for
    indicator rewards)."""
    if isinstance(x, (list, tuple)):
        x = _rectangular(x, field)  # (a ragged list is named, not numpy's error)
    arr = np.asarray(x) if isinstance(x, (bool, np.bool_)) else x
    if getattr(getattr(arr, "dtype", None), "kind", None) == "b":
        raise TypeError(
            f"{field} must hold real numbers; got booleans (pass rewards.astype(float) for 0/1 rewards)"
        )
    return _real_host(x, field)


def _real_host(x: Any, field: str) -> np.ndarray:
    """``x`` as a float64 host array; ``TypeError`` naming ``field`` unless it holds real numbers.

    as_float refuses text and complex arrays; dates, durations and structured records
    are refused here (a float cast read 2020-01-01 as the reward 18262.0).
    """
    if isinstance(x, (list, tuple)):  # a ragged list failed in numpy's asarray, naming nothing
        x = _rectangular(x, field)
    a = np.asarray(to_numpy(x))
    # (an object array of text went through the float cast: ['1.5'] was read as the reward 1.5)
    if a.dtype.kind in "mMV" or (a.dtype.kind == "O" and _text_or_complex(a)):
        raise TypeError(f"{field} must hold real numbers; got dtype {a.dtype}")
    return as_float(a, np, np.float64, field=field)


def _text_or_complex(a: np.ndarray) -> bool:
    """True when ``a`` holds text, complex numbers, dates or records, also inside an object array
    (whose float cast parses the string '0.5' as well)."""
    if a.dtype.kind in "USmMVc":
        return True
    return a.dtype.kind == "O" and any(
        isinstance(x, (str, bytes, complex, np.str_, np.bytes_, np.complexfloating)) for x in a.flat
    )


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only copy of a validated array, so the caller's buffer cannot change the dataset.

    Without it the dataset shared memory with its input: writing 7 into the caller's
    ``states`` after construction made a validated ``S = 2`` dataset hold state 7.
    """
    b = np.array(a, copy=True)
    b.setflags(write=False)
    return b


def _locate(names: tuple[str, ...], idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(f"{n}={int(i)}" for n, i in zip(names, idx, strict=True)) + "]"


def _check_range(
    a: np.ndarray, n: int, field: str, cls: str, names: tuple[str, ...], what: str
) -> None:
    bad = (a < 0) | (a >= n)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(
            f"{cls}.{field}{_locate(names, idx)} = {int(a[idx])} is not {what} index in [0, {n})"
        )


def _check_finite_host(a: np.ndarray, field: str, cls: str, names: tuple[str, ...]) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(f"{cls}.{field}{_locate(names, idx)} = {a[idx]} must be finite")


def _positive(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidModelError(f"{field} must be an integer >= 1; got {value!r}")
    return int(value)


def _action_sizes(A: Any, cls: str) -> tuple[int, ...]:
    if isinstance(A, (tuple, list)):
        if len(A) < 1:
            raise InvalidModelError(
                f"{cls}.A must be a positive int or a non-empty tuple of them; got {A!r}"
            )
        return tuple(_positive(a, f"{cls}.A[{i}]") for i, a in enumerate(A))
    return (_positive(A, f"{cls}.A"),)


def _policy_host(pi: Any, A: int | None, field: str) -> np.ndarray:
    p = require_host(pi, field) if not isinstance(pi, (list, tuple)) else np.asarray(pi)
    p = np.asarray(p)
    if _text_or_complex(p):
        # a float cast parsed the text '0.5' as a probability, dropped an imaginary part with only
        # numpy's ComplexWarning, or read a date as a number
        raise TypeError(
            f"{field} must hold real probabilities or integer actions; got dtype {p.dtype}"
        )
    if np.issubdtype(p.dtype, np.integer) and p.dtype != bool:
        if p.ndim < 1 or p.shape[-1] == 0:  # (an empty batch of policies is valid)
            raise ValueError(
                f"deterministic policy {field} must have shape (..., S) with S >= 1; got {p.shape}"
            )
        if A is None:
            raise ValueError(f"{field} is deterministic (integer); give A to one-hot encode it")
        _check_range(  # on p itself: an int64 cast wrapped uint64 2**64 - 1 to the value -1
            p,
            A,
            field,
            "policy",
            tuple(f"ax{j}" for j in range(p.ndim)),
            "an action",
        )
        return np.eye(A)[p]
    # checked in its own float dtype, whose eps sets check_probability's tolerance: a float32
    # policy normalised in float32 (rows 1 ± 1.3e-7) failed the float64 atol 1e-8 after a cast, and
    # a float16 one (uniform over 7 actions: rows 0.99976) likewise
    if p.dtype.kind != "f":
        p = p.astype(np.float64)
    if p.ndim < 2 or 0 in p.shape[-2:]:  # (an empty batch of policies is valid)
        raise ValueError(
            f"stochastic policy {field} must have shape (..., S, A) with S, A >= 1; got {p.shape}"
        )
    check_probability(
        p, field, tuple(f"ax{j}" for j in range(p.ndim - 1)) + ("a",), f"{field}[..., :]"
    )
    return p.astype(np.float64)


def _distribution_host(x: np.ndarray, field: str, names: tuple[str, ...], row: str) -> np.ndarray:
    """``x`` checked as distributions along its last axis in its own float dtype, returned as float64.

    check_probability's tolerance follows the dtype's eps; a float64 cast first made a
    float32 distribution (an occupancy measure of a float32 model, rows 1 ± 4.5e-7) fail
    the float64 tolerance 1e-8.
    """
    a = np.asarray(x)
    if _text_or_complex(a):  # (a float cast parsed text, dropped imaginary parts, read dates)
        raise TypeError(f"{field} must hold real probabilities; got dtype {a.dtype}")
    if a.dtype.kind != "f":  # (float16 too: a float16 row normalised in float16 sums to 1 ± 2.4e-4)
        a = a.astype(np.float64)
    check_probability(a, field, names, row)
    return a.astype(np.float64)


def _reward_mode(rewards: str, R: np.ndarray) -> bool:
    if rewards not in ("mean", "bernoulli"):
        raise ValueError(f"rewards must be 'mean' or 'bernoulli'; got {rewards!r}")
    if rewards == "bernoulli" and (R.min() < 0 or R.max() > 1):
        idx = tuple(int(i) for i in np.unravel_index(np.argmax((R < 0) | (R > 1)), R.shape))
        raise ValueError(
            f"Bernoulli rewards need mean rewards in [0, 1]; R{list(idx)} = {R[idx]:.6g}"
        )
    return rewards == "bernoulli"
