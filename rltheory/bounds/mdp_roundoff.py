r"""Floating-point constants of value iteration: the rounding error of a sweep and the floor of its certificate.

* :func:`vi_sweep_error`: a bound ``ε`` on how far every computed sweep ``fl(T v)`` of
  :func:`rltheory.mdp.value_iteration` from ``v_0 = 0`` lies from the exact ``T v`` of the
  row-normalised model (Higham 2002, §3.1), the ``sweep_error`` of
  :func:`rltheory.bounds.span_stopping_iterations`;
* :func:`vi_certificate_floor`: the largest round-off allowance value iteration adds to its
  certificate, below which a requested ``tol`` cannot be certified.

Split out of :mod:`rltheory.bounds.mdp` (the exact-arithmetic bounds), which re-exports both.

References
----------
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms*, 2nd ed. SIAM. §2.1, §3.1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_discount
from ..backend import to_numpy
from ..mdp.model import FiniteMDP

__all__ = ["vi_sweep_error", "vi_certificate_floor"]


def vi_sweep_error(mdp: Any) -> float:
    r"""A bound ``ε`` on the rounding error of every sweep of :func:`rltheory.mdp.value_iteration` from ``v_0 = 0``.

    For :func:`span_stopping_iterations`' ``sweep_error``. A sweep computes
    ``Q = R + γ (P v)`` with sums of at most ``n = S`` terms, then ``T v = max_a Q``
    (exact). With unit roundoff ``u`` of the model's dtype and ``γ_m = m u/(1 − m u)``,
    ``|fl(Q) − Q| ≤ γ_{n+2}(|R| + γ P|v|)`` entrywise, for any order of summation
    (Higham 2002, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1, Lemma 3.1
    and eq. (3.4)). The stored ``P`` is stochastic only up to its row sums ``σ``:
    with ``δ ≥ max |σ − 1|`` (the computed row sums' distance from 1 plus ``γ_S``), ``P``
    differs from the stochastic ``P/σ`` by at most ``δ`` in the ``∞``-norm, so the sweep
    is the stochastic model's ``T`` plus an error at most
    ``ε₁ = a‖R‖∞ + γ(a + δ)‖v‖∞ + η`` with ``a = γ_{n+2}`` and ``η`` the underflow allowance
    ``2(S + 2)s`` (``s`` the dtype's subnormal spacing: products with subnormal results err
    absolutely, Higham 2002, eq. (2.8)). From ``v_0 = 0``,
    ``‖v_k‖∞ ≤ (‖R‖∞ + ε₁)/(1 − γ)``, hence ``ε₁ ≤ ((a + b)‖R‖∞ + η)/(1 − b)`` with
    ``b = γ(a + δ)/(1 − γ)``. The differences ``Δ = T v − v`` the rule reads are rounded too
    (at most ``u|Δ|``, ``‖Δ‖∞ ≤ 2(‖R‖∞ + ε₁)/(1 − γ)``): folded in, the bound returned is
    ``ε = ε₁ + u(‖R‖∞ + ε₁)``. ``inf`` when ``b ≥ 1``.

    Parameters
    ----------
    mdp : FiniteMDP
        A discounted model (any backend; the constants are read on the host).

    Returns
    -------
    float
        The bound ``ε`` (the largest over a batch of instances).
    """
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"vi_sweep_error takes a FiniteMDP; got {type(mdp).__name__}")
    from ..mdp.discounted import _Roundoff  # noqa: PLC0415 - the solvers' own a, δ and ‖R‖∞

    g = float(check_discount(mdp.gamma, allow_none=False))  # type: ignore[arg-type]
    ro = _Roundoff(mdp)
    u, a = ro.u, ro.a
    delta = float(np.max(np.asarray(to_numpy(ro.delta), dtype=float), initial=0.0))
    b = g * (a + delta) / (1.0 - g)
    if not b < 1.0:
        return math.inf
    r = float(np.max(np.asarray(to_numpy(ro.r_max), dtype=float), initial=0.0))
    e1 = ((a + b) * r + ro.under) / (1.0 - b)
    return e1 + u * (r + e1)


def vi_certificate_floor(mdp: Any) -> float:
    r"""The largest round-off allowance in the certificate of :func:`rltheory.mdp.value_iteration` from ``v_0 = 0``.

    The solvers' certificates count the rounding of the computed ``T v − v`` and ``Q``
    (:class:`rltheory.mdp.discounted._Roundoff`): value iteration certifies
    ``γ/(1−γ)·sp(Δ) + f_k`` with an allowance ``f_k`` that grows with ``‖v_k‖∞``,
    ``‖Δ_k‖∞`` and the midpoint's ``‖V‖∞``. From ``v_0 = 0`` every iterate has
    ``‖v_k‖∞ ≤ V̄ = (‖R‖∞ + ε)/(1 − γ)`` with ``ε`` = :func:`vi_sweep_error`, so
    ``‖Δ_k‖∞ ≤ 2V̄`` and ``‖V‖∞ ≤ (1 + 2γ/(1−γ))V̄``; the allowance at these norms bounds every
    ``f_k``. Its rule ``γ/(1−γ)·sp(Δ_k) + f_k < tol`` then fires once
    ``γ/(1−γ)·sp(Δ_k) < tol − floor``: pass ``tol − floor`` to
    :func:`span_stopping_iterations` for a count that covers value iteration, and expect
    ``converged=False`` for a ``tol`` near or below the floor (it grows like
    ``S·u·V̄/(1−γ)`` with ``u`` the unit roundoff: ``7e-13·V̄`` for a 4-state chain at
    ``γ = 0.99`` in float64, ``4e-4·V̄`` in float32).

    Parameters
    ----------
    mdp : FiniteMDP
        A discounted model (any backend; the constants are read on the host).

    Returns
    -------
    float
        The floor (the largest over a batch of instances); ``inf`` with :func:`vi_sweep_error`.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 1, 1)), np.ones((1, 1)), gamma=0.9)
    >>> 0 < vi_certificate_floor(mdp) < 1e-12
    True
    """
    from ..mdp.discounted import _Roundoff  # noqa: PLC0415 - the solvers' own allowance

    eps = vi_sweep_error(mdp)
    if not math.isfinite(eps):
        return math.inf
    g = float(mdp.gamma)
    ro = _Roundoff(mdp)
    vbar = (float(np.max(to_numpy(ro.r_max), initial=0.0)) + eps) / (1.0 - g)
    c = g / (1.0 - g)
    floor = ro.floor(vbar, 2.0 * vbar, (1.0 + 2.0 * c) * vbar * (1.0 + 4.0 * ro.u))
    return float(np.max(np.asarray(to_numpy(floor), dtype=float), initial=0.0))
