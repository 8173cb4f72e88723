"""Small numerical helpers shared by the iterative solvers."""

from __future__ import annotations

import math

__all__ = ["contraction_steps"]


def contraction_steps(g: float, start: float, tol: float) -> int:
    r"""Smallest ``k ≥ 0`` with ``g^k · start ≤ tol``: the a-priori step count of a
    ``g``-contraction whose certificate starts at ``start`` (``0 ≤ g < 1``, ``tol > 0``).

    Computed as ``k = ⌈(log start − log tol) / (−log g)⌉`` after the case ``start ≤ tol``
    (``k = 0``, which also covers a ``start`` that underflowed to 0) and ``g = 0`` (one step).
    The form ``log(tol(1 − g)/(g·d₀)) / log g`` used before divided by an underflowed 0 for a
    subnormal discount such as ``5e-324``.
    """
    if not (start > tol):
        return 0
    if g <= 0.0:
        return 1
    return max(1, math.ceil((math.log(start) - math.log(tol)) / -math.log(g)))
