"""Feature matrices of the linear critics read in the model's dtype, with located errors.

Used by :mod:`rltheory.algorithms.td_fixed_point` (and through it by TD(λ) and LSTD(λ) in
:mod:`rltheory.algorithms.critics` and :mod:`rltheory.algorithms.least_squares_td`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_finite
from ..backend import as_float, to_numpy
from ..mdp.model import FiniteMDP

__all__: list[str] = []


def _features(mdp: FiniteMDP, Phi: Any) -> Any:
    """``Phi`` validated in its own dtype, then read in the model's (float32 → float64 is exact).

    A float64 ``Phi`` on a float32 model is rounded to float32: an entry beyond float32's range
    (``1e50``) or a column that rounds to 0 there (``1e-50``) is a ``ValueError`` naming the entry
    or column, its value and the model's dtype (before: "Phi must be finite; Phi(s=0, j=0) = inf"
    for the finite ``1e50``, and "column j=1 of Phi vanishes" for a column of ``1e-50``).
    """
    xp = mdp.xp
    G = as_float(Phi, xp, field="Phi")
    if G.ndim != 2 or G.shape[0] != mdp.S or G.shape[1] < 1:
        # d = 0 failed with IndexError ("index -1 is out of bounds") inside the rank test
        raise ValueError(
            f"Phi must have shape (S, d) = ({mdp.S}, d) with d >= 1 features; got {tuple(G.shape)}"
        )
    check_finite(G, "Phi", ("s", "j"))
    if G.dtype == mdp.dtype:
        return G
    with np.errstate(over="ignore", under="ignore"):
        F = as_float(G, xp, mdp.dtype, field="Phi")
    vanished = xp.all(F == 0, axis=0) & xp.any(G != 0, axis=0)  # (d,)
    if not bool(xp.all(xp.isfinite(F))) or bool(xp.any(vanished)):
        g, f = np.asarray(to_numpy(G)), np.asarray(to_numpy(F))
        info = np.finfo(f.dtype)
        if not np.all(np.isfinite(f)):
            s, j = (int(v) for v in np.argwhere(~np.isfinite(f))[0])
            what = (
                f"Phi(s={s}, j={j}) = {float(g[s, j])!r} is beyond the range of the model's dtype "
                f"{f.dtype} (max {float(info.max):.3g})"
            )
        else:
            j = int(np.argmax(np.all(f == 0, axis=0) & np.any(g != 0, axis=0)))
            what = (
                f"column j={j} of Phi (max|Phi[:, {j}]| = {float(np.max(np.abs(g[:, j])))!r}) rounds "
                f"to 0 in the model's dtype {f.dtype} (smallest positive {float(info.smallest_subnormal):.3g})"
            )
        raise ValueError(
            f"{what}: Phi ({g.dtype}) is read in the model's dtype; scale the features by a power "
            f"of 2 (the values Phi theta* do not change) or give the model in {g.dtype}"
        )
    return F
