"""Exact power-of-2 scalings of feature matrices, globally and per column (linear critics' numerics).

A linear critic's fixed point is covariant under ``Φ → Φ·diag(2^{c_j})``: ``θ* → diag(2^{−c_j})θ*``,
``A → diag(2^{c})·A·diag(2^{c})``, ``b → diag(2^{c})·b``, and the values ``Φθ*`` do not change.
Solving with every column's largest entry in ``[1, 2)`` and scaling back keeps features whose
columns differ in size by more than the float range allows in one scale (``1e-160`` next to
``1e160``: divided by the global power of 2 at ``max|Φ|``, the small column became subnormal, and
its basis transform overflowed). Used by :mod:`rltheory.algorithms.td_fixed_point` and
:mod:`rltheory.algorithms.least_squares_td`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import to_numpy

__all__: list[str] = []


def _exponent(x: Any, xp: Any) -> int:
    """``e`` with ``2^e ≤ max|x| < 2^{e+1}`` (0 for an all-zero ``x``). Host sync."""
    m = float(xp.max(xp.abs(x))) if math.prod(x.shape) else 0.0
    return math.frexp(m)[1] - 1 if m > 0 else 0


def _pow2(x: Any, e: int) -> Any:
    """``x·2^e`` by factors of at most ``2^±60`` (within float32's range; exact unless the result
    leaves the float range)."""
    while e:
        k = max(-60, min(60, e))
        x = x * math.ldexp(1.0, k)
        e -= k
    return x


def _column_exponents(*xs: Any, default: int = 0) -> list[int]:
    """``E_j`` with ``2^{E_j} ≤ max|x[..., j]| < 2^{E_j+1}`` over all the ``(..., k)`` arrays ``xs``
    together (``default`` for a column that is 0 in all of them). Host sync."""
    flat = [np.abs(np.asarray(to_numpy(x))).reshape(-1, x.shape[-1]) for x in xs]
    m = np.max(np.stack([np.max(f, axis=0) for f in flat]), axis=0)
    return [int(np.frexp(v)[1]) - 1 if v > 0 else default for v in np.asarray(m, dtype=np.float64)]


def _pow2_cols(x: Any, exps: list[int], xp: Any) -> Any:
    """``x[..., j]·2^{exps[j]}`` by factors of at most ``2^±60`` (exact unless the result leaves
    the float range)."""
    ex = list(exps)
    while any(ex):
        step = [max(-60, min(60, v)) for v in ex]
        f = xp.asarray([math.ldexp(1.0, s) for s in step], dtype=x.dtype, device=x.device)
        x = x * f
        ex = [v - s for v, s in zip(ex, step, strict=True)]
    return x


def _pow2_both(A: Any, exps: list[int], xp: Any) -> Any:
    """``diag(2^{exps})·A·diag(2^{exps})`` for a square ``A`` (exact unless it leaves the range)."""
    return xp.matrix_transpose(_pow2_cols(xp.matrix_transpose(_pow2_cols(A, exps, xp)), exps, xp))


def _batch_column_exponents(x: Any) -> np.ndarray:
    """``E[..., j]`` with ``2^E ≤ max_s |x[..., s, j]| < 2^{E+1}`` for each batch entry and column
    of an ``(..., S, k)`` array (0 for a zero column). Host sync."""
    m = np.max(np.abs(np.asarray(to_numpy(x), dtype=np.float64)), axis=-2)
    return np.where(m > 0, np.frexp(m)[1] - 1, 0)


def _pow2_arr(x: Any, ex: Any, xp: Any) -> Any:
    """``x·2^{ex}`` for an integer array ``ex`` broadcasting against ``x``, by factors of at most
    ``2^±60`` (exact unless the result leaves the float range)."""
    ex = np.asarray(ex, dtype=np.int64)
    while np.any(ex):
        step = np.clip(ex, -60, 60)
        x = x * xp.asarray(np.ldexp(1.0, step), dtype=x.dtype, device=x.device)
        ex = ex - step
    return x
