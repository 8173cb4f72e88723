"""Argument checks and model construction shared by the zoo generators.

The random and classic models of :mod:`rltheory.mdp.zoo`, the grids of
:mod:`rltheory.mdp.gridworlds` and the mixing families of :mod:`rltheory.mdp.mixing_zoo`
are all built the same way: arrays on the host with numpy, validated once as a
:class:`~rltheory.mdp.FiniteMDP`, then moved with one ``xp.asarray`` when another array
namespace is requested (:func:`_build`). Random models take an explicit
``numpy.random.Generator`` or seed (:func:`_generator`), never the global RNG.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import is_numpy
from .model import FiniteMDP


def _generator(rng: Any) -> np.random.Generator:
    """An explicit ``numpy.random.Generator`` from a Generator or an integer seed."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:  # numpy's SeedSequence said only 'expected non-negative integer'
            raise ValueError(
                f"rng must be a numpy.random.Generator or an int seed >= 0; got {rng!r}"
            )
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be a numpy.random.Generator or an int seed (the global RNG is never used); "
        f"got {type(rng).__name__}"
    )


def _scalar(value: Any) -> Any:
    """A 0-d real numpy array as its Python number (the library's scalar arguments accept them,
    ``check_real``'s rule); anything else unchanged, for the caller's type check."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return value.item()
    return value


def _probability(value: Any, field: str) -> float:
    value = _scalar(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValueError(f"{field} must be a number in [0, 1]; got {value!r}")
    v = float(value)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{field} must lie in [0, 1]; got {v}")
    return v


def _batch_shape(batch_shape: Any) -> tuple[int, ...]:
    try:
        shape = tuple(batch_shape)
    except TypeError:
        raise ValueError(
            f"batch_shape must be a tuple of non-negative ints; got {batch_shape!r}"
        ) from None
    for i, n in enumerate(shape):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"batch_shape[{i}] must be a non-negative int; got {n!r}")
    return tuple(int(n) for n in shape)


def _dtype(dtype: Any, xp: Any) -> Any:
    """``dtype`` as a float32/float64 dtype of ``xp`` (numpy's for ``xp=None``), or ``None``.

    Accepted: the namespace's own ``float32``/``float64`` objects, and every numpy spelling of
    them (``np.float32``, ``"float32"``, ``np.dtype("f8")``), which is mapped to the namespace's
    dtype of that name. ``TypeError`` otherwise. (``xp=numpy`` with ``dtype="float32"`` was
    refused as "got 'float32'", and ``np.float32`` with array_api_strict warned on the
    comparison of a numpy type with the namespace's dtype.)
    """
    if dtype is None:
        return None
    if xp is not None and any(dtype is d for d in (xp.float32, xp.float64)):
        return dtype
    try:
        nd = np.dtype(dtype)
    except TypeError:
        nd = None
    if nd is None or nd not in (np.float32, np.float64):
        raise TypeError(f"dtype must be float32 or float64; got {dtype!r}")
    return nd if xp is None or is_numpy(xp) else getattr(xp, nd.name)


def _build(P: np.ndarray, R: np.ndarray, gamma: float, mu: Any, xp: Any, dtype: Any) -> FiniteMDP:
    """Validate on the host, then move to ``xp`` once (in ``dtype``, default float64).

    ``dtype`` must be float32 or float64 (``TypeError`` otherwise): ``dtype=np.int64`` cast the
    probabilities to 0 and was reported as 'each P[s, a, :] must sum to 1 ... sums to 0', float16
    as a row summing to 0.99976."""
    dtype = _dtype(dtype, xp)
    # R stays float64 here: the model casts it to P's dtype and names a reward the cast sends to
    # inf (gridworld(3, rewards=1e39, dtype=np.float32) read 'R must be finite; R(s=5, a=2) = inf'
    # after numpy's 'overflow encountered in cast', a value nobody passed)
    if xp is None:
        if dtype is not None:
            P = P.astype(dtype)
            mu = None if mu is None else np.asarray(mu, dtype=dtype)
        return FiniteMDP(P, R, gamma, mu)
    dt = xp.float64 if dtype is None else dtype
    P, R = xp.asarray(P, dtype=dt), xp.asarray(R, dtype=xp.float64)
    mu = None if mu is None else xp.asarray(np.asarray(mu), dtype=dt)
    return FiniteMDP(P, R, gamma, mu)
