"""Payoff checks and the positive rescaling shared by the bimatrix solvers (private).

:mod:`.bimatrix` (support enumeration, NashConv) and :mod:`.lemke_howson` take their payoffs
through these helpers: host float64 arrays, validated as matrix games, and rescaled to ``[1, 2]``
(a positive affine map, under which Nash equilibria are invariant).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import _rectangular, as_float, require_host
from ..errors import InvalidModelError
from .matrix import as_matrix_games

_FMAX = float(np.finfo(np.float64).max)


def _host_payoffs(M: Any, name: str) -> np.ndarray:
    """``M`` as a float64 host array; text and complex payoffs are a ``TypeError`` naming ``name``."""
    if isinstance(M, (list, tuple)):  # a ragged list failed in numpy's asarray, naming nothing
        M = _rectangular(M, name)
    M = as_float(require_host(M, "bimatrix solvers"), np, field=name)
    return np.asarray(M, dtype=np.float64)


def _payoffs(A: Any, B: Any) -> tuple[np.ndarray, np.ndarray]:
    Ah, Bh = _host_payoffs(A, "A"), _host_payoffs(B, "B")
    as_matrix_games(Ah, "A")
    as_matrix_games(Bh, "B")
    if Ah.ndim != 2 or Bh.ndim != 2:
        raise InvalidModelError(
            f"A and B must be single (m, n) matrices; got shapes {Ah.shape} and {Bh.shape}"
        )
    if Ah.shape != Bh.shape:
        raise InvalidModelError(
            f"A and B must have the same shape (m, n); got A {Ah.shape} and B {Bh.shape}"
        )
    return Ah, Bh


def _positive(M: np.ndarray) -> np.ndarray:
    """Positive affine rescaling to [1, 2] (equilibria are invariant under it)."""
    lo, hi = M.min(), M.max()
    if hi / 2 - lo / 2 > _FMAX / 2:  # hi − lo would overflow: halve first (exact)
        M, lo, hi = M / 2, lo / 2, hi / 2
    return (M - lo) / (hi - lo if hi > lo else 1.0) + 1.0
