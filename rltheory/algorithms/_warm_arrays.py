"""Per-instance array helpers of the batched exact drivers: action-major copies and compaction.

Re-exported by :mod:`rltheory.algorithms._warm_eval`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["action_major", "compact", "compact_plan"]


def compact_plan(done: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """``(holes, movers, n)`` that keep the instances ``~done`` as the first ``n`` rows."""
    n = int(done.shape[0] - np.count_nonzero(done))
    holes = np.flatnonzero(done[:n])
    movers = n + np.flatnonzero(~done[n:])
    return holes, movers, n


def compact(x: np.ndarray, holes: np.ndarray, movers: np.ndarray, n: int) -> np.ndarray:
    """``x`` with rows ``movers`` copied into rows ``holes``, cut to its first ``n`` rows (in place, a view)."""
    if holes.shape[0]:
        x[holes] = x[movers]
    return x[:n]


def action_major(xp: Any, x: Any) -> Any:
    """A C-contiguous copy of ``x[b, s, a, ...]`` laid out as ``[b, a, s, ...]``.

    Reductions over actions then run over a leading axis of contiguous ``S``-blocks;
    the flat reshape forces the copy (``permute_dims`` alone may return a view) except
    where a singleton axis keeps it a view, which numpy arrays then copy (the evaluator
    and the NPG driver update these arrays in place).
    """
    axes = (0, 2, 1) + tuple(range(3, x.ndim))
    shape = (x.shape[0], x.shape[2], x.shape[1]) + tuple(x.shape[3:])
    y = xp.reshape(xp.reshape(xp.permute_dims(x, axes), (-1,)), shape)
    if isinstance(y, np.ndarray) and np.shares_memory(x, y):  # a singleton axis: views
        y = y.copy()
    return y
