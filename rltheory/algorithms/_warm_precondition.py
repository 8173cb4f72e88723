r"""The stored preconditioner ``W ≈ M_ref^{-1}`` of :class:`~rltheory.algorithms._warm_eval.WarmEvaluator`.

Richardson steps ``V ← V + W (r_π − M_π V)`` use ``W``, the inverse of an earlier policy's
``M = I − γP_π``; it is renewed by a Newton–Schulz step ``W ← W(2I − M W)``
(``I − M W' = (I − M W)²``) or a fresh inverse. For float64 models on numpy (``mixed``) ``W`` is
kept, refreshed and applied in float32, to the residual scaled by ``‖V‖∞ + ‖r‖∞``: it is only a
preconditioner (the certificate is the float64 residual). Where a float32 matrix is singular —
``float32(γ) = 1`` for ``γ > 1 − 3e-8`` — the evaluator keeps ``W`` in float64 from then on.
(Newton–Schulz: Schulz 1933; Higham, *Functions of Matrices*, 2008, §7.3.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Preconditioner"]

_NEWTON = (
    0.5  # last step contracted by at most this: Newton–Schulz update of W, else a fresh inverse
)


class Preconditioner:
    """The ``W`` methods of :class:`~rltheory.algorithms._warm_eval.WarmEvaluator` (a mixin).

    Uses the evaluator's ``W`` (``(B, S, S)`` or ``None``), ``mixed`` and ``scale`` (``(B, 1)``).
    """

    W: Any
    mixed: bool
    scale: Any

    def _precondition(self, res: Any, idx: Any = None) -> Any:
        """``W·res`` for the instances ``idx`` (all by default); in float32 for ``mixed`` evaluators."""
        if not self.mixed:
            W = self.W if idx is None else self.W[idx]
            return (W @ res[..., None])[..., 0]
        W, s = (self.W, self.scale) if idx is None else (self.W[idx], self.scale[idx])
        r = np.empty(res.shape, dtype=np.float32)
        np.divide(res, s, out=r, casting="same_kind")
        return np.multiply((W @ r[..., None])[..., 0], s)

    def _new_inverse(self, idx: Any, M: Any, ratio: Any = None) -> Any:
        """Preconditioners for the instances ``idx`` whose matrices ``M`` were just formed.

        A Newton–Schulz step ``W ← W (2I − M W)`` where the last step contracted by at most
        ``_NEWTON`` (``I − M W' = (I − M W)²``, two ``S×S`` products), an inverse elsewhere;
        ``ratio=None``: a Newton–Schulz step for all (refreshes: their ratio is ``≤ _SLOW``).
        """
        W = self.W[idx]
        ns = np.ones(idx.shape[0], dtype=bool) if ratio is None else ratio <= _NEWTON
        if ns.any():
            Wn, Mn = W[ns], M[ns].astype(W.dtype, copy=False)  # (float32 for mixed evaluators)
            W[ns] = 2.0 * Wn - Wn @ (Mn @ Wn)
        if not ns.all():
            inv = self._inverse(M[~ns])
            W = W.astype(inv.dtype, copy=False)  # (float64 once a float32 matrix was singular)
            W[~ns] = inv
        return W

    def _inverse(self, M: Any) -> Any:
        """``M^{-1}`` for ``W``: in float32 for ``mixed`` evaluators, unless a float32 matrix is singular.

        ``float32(γ)`` is 1 for ``γ > 1 − 3e-8``, so ``M`` rounded to float32 can be singular (a
        deterministic 2-cycle: rows ``e_s − e_s'`` and ``e_s' − e_s``) while ``M`` is not: the batch's
        inverse raised ``LinAlgError`` (a single instance, solved by LU, ran). The evaluator then
        keeps ``W`` in float64 from there on.
        """
        if self.mixed:
            W = _float32_inverse(M)
            if W is not None:
                return W
            self.mixed = False
            if self.W is not None:
                self.W = self.W.astype(np.float64)
        return np.linalg.inv(M)


def _float32_inverse(M: Any) -> Any:
    """``M^{-1}`` computed in float32, or ``None`` where the float32 matrix is singular or the inverse not finite."""
    with np.errstate(all="ignore"):
        try:
            W = np.linalg.inv(M.astype(np.float32))
        except np.linalg.LinAlgError:
            return None
    return W if np.isfinite(W).all() else None
