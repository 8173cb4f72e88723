r"""Steps on the probability simplex used by the learning dynamics.

Euclidean projection ``Π_Δ(v) = argmin_{z ∈ Δ} ‖z − v‖₂`` (sort-based; Held, Wolfe & Crowder
1974; Duchi, Shalev-Shwartz, Singer & Chandra 2008, Fig. 1), the projected step
``Π_Δ(a + c g)`` of OGDA, and the entropic step ``softmax(c U)`` of Hedge and OMWU, each
computed so that steps and utilities near or beyond the float range give the large-step
limit instead of ``inf − inf``.

References
----------
Held, M., Wolfe, P., Crowder, H. P. (1974). Validation of subgradient optimization. Math.
Prog. 6, 62–88.
Duchi, J., Shalev-Shwartz, S., Singer, Y., Chandra, T. (2008). Efficient projections onto
the ℓ1-ball for learning in high dimensions. ICML, Fig. 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_finite
from ..backend import array_namespace, as_float, one_hot

__all__ = ["project_simplex"]


def project_simplex(v: Any) -> Any:
    r"""Euclidean projection onto the simplex, ``argmin_{z ∈ Δ} ‖z − v‖₂``, along the last axis.

    Sort-based (Held, Wolfe & Crowder 1974; Duchi et al. 2008, Fig. 1): with ``u`` sorted
    decreasingly, ``ρ = max{j : u_j − (Σ_{r≤j} u_r − 1)/j > 0}``, ``θ = (Σ_{r≤ρ} u_r − 1)/ρ``
    and ``z = max(v − θ, 0)``.

    Notes
    -----
    Computed on ``w = max(v − max v, −2)``, the same projection: ``Π_Δ(v + t1) = Π_Δ(v)``,
    and since ``z_max = max v − θ ≤ 1`` every ``v_i ≤ max v − 1`` lies below ``θ`` and
    stays there when raised to ``max v − 2``. The sums ``Σ_{r≤j} u_r`` are then of size
    ``≤ 2j`` whatever the scale of ``v``; on ``v`` itself ``Σ u_r − 1`` cancels
    catastrophically once ``|v| ≳ 1/u`` (``v = (1e17, 1e17)`` gave ``(inf, inf)`` and
    ``(1e16 + 2, 1e16)`` gave ``(2, 0)``).

    Examples
    --------
    >>> import numpy as np
    >>> project_simplex(np.array([0.5, 0.5, 2.0])).tolist()
    [0.0, 0.0, 1.0]
    >>> project_simplex(np.array([1e17, 1e17])).tolist()
    [0.5, 0.5]

    ``v[..., k]`` (``k ≥ 1``; lists accepted) must be finite (``ValueError`` naming ``v``
    and the offending entry otherwise).
    """
    if isinstance(v, (list, tuple)):
        v = np.asarray(v, dtype=np.float64)
    xp = array_namespace(v)
    v = as_float(xp.asarray(v), xp)
    if v.ndim < 1 or v.shape[-1] == 0:
        raise ValueError(f"v must have shape (..., k) with k >= 1; got {tuple(v.shape)}")
    check_finite(v, "v", ("i",))
    return _project_simplex(v)


def _project_simplex(v: Any) -> Any:
    """:func:`project_simplex` without validation (the dynamics loops); ``−inf`` entries allowed."""
    xp = array_namespace(v)
    k = v.shape[-1]
    with np.errstate(over="ignore"):  # −inf where v spans more than the float range: clamped
        v = v - xp.max(v, axis=-1, keepdims=True)
    v = xp.where(v > -2.0, v, -2.0)  # out of the support either way (Notes of project_simplex)
    u = xp.sort(v, axis=-1, descending=True)
    css = xp.cumulative_sum(u, axis=-1)
    j = xp.arange(1, k + 1, dtype=v.dtype, device=v.device)
    cond = (u - (css - 1.0) / j) > 0.0
    r = xp.sum(xp.astype(cond, xp.int64), axis=-1)
    sel = one_hot(r - 1, k, xp, v.dtype)
    theta = (xp.sum(css * sel, axis=-1) - 1.0) / xp.astype(r, v.dtype)
    z = v - theta[..., None]
    return xp.where(z > 0.0, z, 0.0)


def _simplex_step(a: Any, c: Any, g: Any, xp: Any) -> Any:
    r"""``Π_Δ(a + c g)`` per row, ``c[...] > 0`` a step per game (``inf`` allowed).

    Where ``a + c g`` leaves the float range (a step beyond ~1.8e308 divided by the
    utilities) it is ``Π_Δ(a + c (g − max g))`` instead, the same point
    (``Π_Δ(z + t1) = Π_Δ(z)``), with ``c·0 = 0`` at the maximisers of ``g`` and ``−inf``
    elsewhere at worst, which :func:`_project_simplex` clamps.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # non-finite rows are replaced below
        v = a + c[..., None] * g
        D = g - xp.max(g, axis=-1, keepdims=True)
        alt = a + xp.where(D < 0.0, c[..., None] * D, 0.0)
    return _project_simplex(xp.where(xp.all(xp.isfinite(v), axis=-1, keepdims=True), v, alt))


def _softmax(c: Any, U: Any, xp: Any) -> Any:
    r"""``softmax(c U)`` along the last axis, ``c[...]`` a step ``≥ 0`` per game (``inf`` allowed).

    Computed as ``exp(cU − max cU)``. Where ``cU`` leaves the float range (a step ``η R``
    beyond ~1.8e308 divided by the cumulative utilities) that forms ``inf − inf``; those rows
    use ``exp(c (U − max U))`` instead, the same distribution, with ``c·0 = 0`` at the
    maximisers: for ``c = inf`` the uniform distribution on ``argmax U``, the limit of
    ``softmax(cU)`` as ``c → ∞``.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # NaN rows are replaced below
        z = c[..., None] * U
        d = z - xp.max(z, axis=-1, keepdims=True)
        D = U - xp.max(U, axis=-1, keepdims=True)
        alt = xp.where(D < 0.0, c[..., None] * D, 0.0)
    d = xp.where(xp.any(xp.isnan(d), axis=-1, keepdims=True), alt, d)
    e = xp.exp(d)
    return e / xp.sum(e, axis=-1, keepdims=True)
