"""Small numerical helpers shared by the iterative solvers."""

from __future__ import annotations

import math

__all__ = ["contraction_steps"]


def contraction_steps(g: float, start: float, tol: float, *, strict: bool = False) -> int:
    r"""Smallest ``k ≥ 0`` with ``g^k · start ≤ tol`` (``< tol`` when ``strict``): the a-priori
    step count of a ``g``-contraction whose certificate starts at ``start``
    (``0 ≤ g < 1``, ``tol > 0``).

    With ``x = (log start − log tol) / (−log g)`` this is ``⌈x⌉`` (``⌊x⌋ + 1`` when
    ``strict``), after the cases ``start`` already below ``tol`` (``k = 0``, which also covers
    a ``start`` that underflowed to 0) and ``g = 0`` (one step). Logarithms of the factors are
    taken separately: the form ``log(tol(1 − g)/(g·d₀)) / log g`` used before divided by an
    underflowed 0 for a subnormal discount such as ``5e-324``, and ``start / tol`` can overflow.
    Used by the solvers' iteration caps and by the iteration bounds of
    :mod:`rltheory.bounds.mdp` (the strict form of Puterman's stopping rules).
    """
    if (start < tol) if strict else (start <= tol):
        return 0
    if g <= 0.0:
        return 1
    x = (math.log(start) - math.log(tol)) / -math.log(g)
    return int(math.floor(x)) + 1 if strict else max(1, math.ceil(x))
