r"""Euclidean projections onto the probability simplex, row by row, for projected policy steps.

Used by projected policy gradient and Euclidean policy mirror descent (through
:func:`project_step`); re-exported by :mod:`rltheory.algorithms._policy_opt`, where they were
defined before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["project_simplex", "project_step"]


def project_simplex(y: Any, xp: Any) -> Any:
    r"""Euclidean projection of each row ``y[..., :]`` onto the probability simplex.

    ``Π(y) = max(y − θ, 0)`` with ``θ = max_k (Σ_{i≤k} u_i − 1)/k`` over the
    decreasingly sorted ``u`` (Held, Wolfe & Crowder 1974; Duchi et al. 2008,
    Fig. 1): the sequence ``(Σ_{i≤k} u_i − 1)/k`` increases exactly while
    ``u_k`` exceeds it, so its maximum is the threshold at the support size.

    References
    ----------
    Duchi, J., Shalev-Shwartz, S., Singer, Y., Chandra, T. (2008). Efficient projections
    onto the ℓ1-ball for learning in high dimensions. ICML. Figure 1.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> project_simplex(xp.asarray([[0.5, 0.5], [2.0, 0.0]]), xp).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    """
    return _project_to_sum(y, 1.0, xp)


def _project_to_sum(y: Any, total: float, xp: Any) -> Any:
    """Euclidean projection of each row onto ``{x ≥ 0 : Σ x = total}`` (``total > 0``): the same
    threshold with ``total`` in place of 1."""
    n = y.shape[-1]
    # Π(y + c·1) = Π(y): shift each row to maximum 0 first. Without it, rows of size ≳ 1e16
    # (PMD with geometrically increasing steps reaches η ~ 1e16 in ~55 steps) lost the "− 1"
    # of the threshold to rounding and projected to all zeros.
    y = y - xp.max(y, axis=-1, keepdims=True)
    u = xp.sort(y, axis=-1, descending=True)
    css = xp.cumulative_sum(u, axis=-1)
    k = xp.arange(1, n + 1, dtype=y.dtype, device=y.device)
    theta = xp.max((css - total) / k, axis=-1, keepdims=True)
    return xp.maximum(y - theta, xp.zeros_like(y))


def project_step(pi: Any, d: Any, eta: float, xp: Any) -> Any:
    r"""``Π(π + η d)`` row by row, computed as ``Π(π + η(d − max_a d))``.

    ``Π(y + c·1) = Π(y)`` for a per-row constant ``c``, so the two are the same point in exact
    arithmetic; the shifted form keeps ``π`` where ``η d`` would swamp it. Formed directly, ``π + η d``
    rounds ``π`` away once ``η|d| ≫ 1/ε``, and actions tied in ``d`` then split the row evenly
    whatever ``π`` gave them: Euclidean PMD on one state with ``Q = (2, 2)``, ``π = (0.9, 0.1)`` and
    ``η = 1e20`` returned ``(0.5, 0.5)`` for the exact ``π`` (float32: already at ``η = 1e10``
    with ``Q ≈ −0.66``, and ``0.028`` off without ties at ``η = 1e5``, ``Q ≈ 12.7``). Shifted, every
    entry is ``≤ π ≤ 1``, and tied actions keep ``π`` exactly. The threshold is ``≥ max y − 1`` and
    ``max y ≥ 0``, so an entry below ``−2`` is outside the support and is clamped to ``−2`` (still
    outside, and the threshold is unchanged): an ``η(d − max d)`` that overflows to ``−∞``, or a
    sum of such entries, cannot reach the projection (``π + η d`` formed directly gave ``inf − inf``:
    projected PG and Euclidean PMD with ``η = 1e308`` once raised "pi must be finite"). The entries
    that stay in the support are ``> −1``, so each is rounded by a few ``u`` and, ``Π`` being
    1-Lipschitz, so is the result. ``η`` must be finite in the dtype of ``d`` (the public entries
    check it: :func:`~rltheory.algorithms.policy_mirror_descent.check_euclidean_step`).
    """
    if not bool(xp.all(xp.isfinite(d))):
        return project_simplex(pi + eta * d, xp)
    with np.errstate(over="ignore"):  # (numpy's overflow warning: the −∞ is clamped to −2 here)
        y = pi + eta * (d - xp.max(d, axis=-1, keepdims=True))
    return project_simplex(xp.maximum(y, xp.full_like(y, -2.0)), xp)
