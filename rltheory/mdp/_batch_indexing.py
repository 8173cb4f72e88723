"""Indexing the batch axes of the array models (private to :mod:`rltheory.mdp.model`).

``model[idx]`` selects instances along the leading batch axes of every array of a model while
its trailing model axes (``(S, A, S')``, ``(H, S, A, S')``, ...) stay whole. numpy's basic and
advanced rules apply to the batch axes in every namespace: array_api_strict (the standard's
reference) refuses an integer array next to slices, so there the selected batch positions are
computed on the host and gathered with ``xp.take``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import array_namespace, device_of, is_host, is_numpy, to_numpy


def describe_index(idx: tuple[Any, ...]) -> str:
    """``idx`` for a message: scalars and slices as written, arrays by dtype and shape."""

    def one(i: Any) -> str:
        if hasattr(i, "shape") and getattr(i, "ndim", 0) > 0:
            return f"<{str(i.dtype).split('.')[-1]} array of shape {tuple(i.shape)}>"
        return "..." if i is Ellipsis else repr(i)

    return f"({', '.join(one(i) for i in idx)}{',' if len(idx) == 1 else ''})"


def axes_addressed(i: Any) -> int:
    """How many axes one entry of an index addresses (numpy's basic and advanced indexing rules)."""
    if i is None or i is Ellipsis or isinstance(i, (bool, np.bool_)):
        return 0
    if isinstance(i, (int, np.integer, slice)):
        return 1
    dtype = getattr(i, "dtype", None)
    ndim = getattr(i, "ndim", None)
    if dtype is None or ndim is None:  # a list or another sequence: read as numpy would
        a = np.asarray(i)
        dtype, ndim = a.dtype, a.ndim
    # (cupy, array_api_strict: "….bool")
    return int(ndim) if str(dtype).split(".")[-1] == "bool" else 1


def _basic(i: Any) -> bool:
    """Whether every namespace reads an index entry as numpy does: an int, a slice, ``None`` or
    ``...`` (a bool scalar, which adds an axis in numpy, is not in the standard)."""
    if isinstance(i, (bool, np.bool_)):
        return False
    return i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice))


def select_batch(x: Any, idx: tuple[Any, ...], n_model: int) -> Any:
    """``x[idx + (:,) * n_model]``: ``idx`` (checked by the model) indexes the batch axes of ``x``.

    numpy and device libraries index natively. In another host namespace an index holding arrays
    or lists (advanced indexing) is applied, with numpy's rules, to the flat batch positions on
    the host, and the rows are gathered with one ``xp.take`` on ``x``'s device.
    """
    xp = array_namespace(x)
    if is_numpy(xp) or not is_host(xp) or all(_basic(i) for i in idx):
        # the model axes as full slices after an Ellipsis of idx (which then spans batch axes
        # only), else one trailing Ellipsis: the standard wants every axis addressed (strict
        # refused m[1] of a (2, 4)-batch, 'the multi-axes index only specifies 4 dimensions')
        pin = (slice(None),) * n_model if any(i is Ellipsis for i in idx) else (Ellipsis,)
        return x[idx + pin]
    model = tuple(x.shape[x.ndim - n_model :])
    batch = tuple(x.shape[: x.ndim - n_model])
    host = tuple(i if _basic(i) else np.asarray(to_numpy(i)) for i in idx)
    pos = np.arange(math.prod(batch), dtype=np.int64).reshape(batch)[host]
    flat = xp.reshape(x, (-1,) + model)
    rows = xp.take(flat, xp.asarray(pos.reshape(-1), device=device_of(x)), axis=0)
    return xp.reshape(rows, tuple(pos.shape) + model)
