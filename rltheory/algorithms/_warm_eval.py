r"""Exact policy evaluation along a slowly changing sequence of policies, certified by residuals.

Exact policy-optimisation drivers evaluate ``V^{π_t} = M_t^{-1} r_{π_t}`` with
``M_t = I − γP_{π_t}`` at every iteration. An LU solve per iteration and instance is
``O(S^3)`` and, on a CPU, is one LAPACK call per matrix even inside a stacked
``solve`` — batching cannot amortise it. Consecutive policies of a convergent method
are close, so :class:`WarmEvaluator` replaces most solves by

* a **prediction** ``V_pred`` — the quadratic extrapolation of the last three
  values (linear / constant while fewer are known), with the advantage
  ``A_pred = r − K V_pred`` extrapolated the same way (``A`` is affine in ``V``, so
  this costs no product with ``P``);
* **preconditioned Richardson steps** ``V ← V + W (r_π − M_π V)``, where ``W`` is the
  stored inverse ``M_ref^{-1}`` of an earlier policy's matrix. The residual is read
  off the advantage, ``r_π − M_π V = Σ_a π(a|s) A_V(s, a)`` with
  ``A_V = r + γPV − V``, so each step costs one product with ``P`` (the same product
  that yields the advantage the driver needs anyway). The error contracts by
  ``‖I − W M_π‖∞ ≤ γ/(1−γ) · max_s ‖π(·|s) − π_ref(·|s)‖₁`` per step.

Certificate (for every instance, at every call): the steps stop once
``‖r_π − M_π V‖∞ ≤ c·ε·(‖V‖∞ + ‖r‖∞)`` (``ε`` the dtype's machine epsilon,
``c = 16``: the size of the residual an LU solution itself leaves), and then
``‖V − V^π‖∞ ≤ ‖r_π − M_π V‖∞ / (1 − γ)`` (``‖M_π^{-1}‖∞ ≤ 1/(1−γ)``), returned as
``bound``. Instances whose step contracts the residual by less than a factor 10, or
that are not certified after four steps, are solved exactly by LU and get a fresh
``W`` (also refreshed, for the next call, when the first step contracted by less than
a factor 500). Decisions are per instance and masked, so an instance's values do not
depend on which other instances share its batch.

With fewer than ``WARM_MIN_BATCH`` instances, and on GPUs (where the batched LU solve is
one library call and every masked decision of the steps is a device synchronisation),
every call is an LU solve; the certificate is reported the same way.

References: iterative refinement with a fixed approximate inverse is classical
(Golub & Van Loan, *Matrix Computations*, 4th ed., §3.5.3); the residual bound is
``V − V^π = M_π^{-1}(M_π V − r_π)`` with ``‖M_π^{-1}‖∞ = ‖Σ_k γ^k P_π^k‖∞ ≤ 1/(1−γ)``
(Puterman 1994, §6.1–6.2, the Neumann series of ``(I − γP_π)^{-1}``).

Arrays are action-major: policies and advantages are ``(..., A, S)`` so that the
reductions over actions run over a leading axis (contiguous inner loops).
"""

from __future__ import annotations

from typing import Any

from ..backend import is_host, is_numpy

__all__ = ["WarmEvaluator", "action_major"]

_RESIDUAL_FACTOR = 16.0  # c in the stopping rule: an LU solution's own residual is a few eps (‖V‖ + ‖r‖)
_SLOW = 0.1  # a step contracting the residual by less than this factor -> exact LU solve
_REFRESH = 0.002  # first-step contraction worse than this -> refresh W for the next call
_MAX_STEPS = 4
WARM_MIN_BATCH = 8  # below this many instances the per-step overhead exceeds an LU solve: solve every call


class WarmEvaluator:
    r"""Certified exact evaluation of a sequence of policies of one (batched) model.

    Parameters
    ----------
    P : array, shape (B, S, A, S)
        Transition kernels of ``B`` instances (one flat batch axis).
    R : array, shape (B, S, A)
        Expected rewards.
    gamma : float in [0, 1)
    xp : array namespace

    Notes
    -----
    :meth:`evaluate` must be called with the policies of one run, in order (it keeps
    the last three values for the prediction and the stored inverses ``W``). The
    class does no validation: drivers check their inputs once.
    """

    def __init__(self, P: Any, R: Any, gamma: float, xp: Any) -> None:
        B, S, A = P.shape[0], P.shape[1], P.shape[2]
        self.xp, self.B, self.S, self.A, self.gamma = xp, B, S, A, float(gamma)
        eye = xp.eye(S, dtype=P.dtype, device=P.device)
        K = eye[:, None, :] - gamma * P  # [b, s, a, s']
        # action-major copies: K4[b, a, s, s'] (flat view Kf[b, a·S + s, s']) and R[b, a, s]
        self.K4 = action_major(xp, K)
        self.Kf = xp.reshape(self.K4, (B, A * S, S))
        self.R = action_major(xp, R)
        self.r_max = xp.max(xp.abs(xp.reshape(self.R, (B, -1))), axis=-1)
        self.c_eps = _RESIDUAL_FACTOR * float(xp.finfo(P.dtype).eps)
        self.W: Any = None
        self.history: list[tuple[Any, Any]] = []
        self.exact_solves = 0  # instances solved by LU so far (for diagnostics)
        self._inplace = is_numpy(xp) or not is_host(xp)
        # warm steps pay off on a host with enough instances; on a GPU the batched LU solve is
        # one library call while every masked decision of the warm steps is a device sync
        self.warm = is_host(xp) and B >= WARM_MIN_BATCH

    # -- kernels ---------------------------------------------------------------------
    def _advantage(self, V: Any) -> Any:
        """``A_V[b, a, s] = r(s, a) + γ (P V)(s, a) − V(s)``: one product with ``P``."""
        return self.R - self.xp.reshape(self.Kf @ V[..., None], (V.shape[0], self.A, self.S))

    def _tolerance(self, V: Any, r_max: Any) -> Any:
        """The stopping level ``c·ε·(‖V‖∞ + ‖r‖∞)`` of the residual, per instance."""
        return self.c_eps * (self.xp.max(self.xp.abs(V), axis=-1) + r_max)

    def _solve(self, K4: Any, R: Any, pi: Any) -> tuple[Any, Any]:
        """LU solve and fresh inverse for the given instances: ``(V, W)``."""
        xp = self.xp
        M = xp.sum(pi[..., None] * K4, axis=1)  # Σ_a π(a|s) K(s, a, ·) = I − γ P_π
        r = xp.sum(pi * R, axis=1)
        self.exact_solves += int(M.shape[0])
        return xp.linalg.solve(M, r[..., None])[..., 0], xp.linalg.inv(M)

    def _scatter(self, mask: Any, idx: Any, sub: Any, full: Any) -> Any:
        """``full`` with its rows where ``mask`` holds (in the order ``idx``) replaced by ``sub``.

        ``full`` is always an array this class created, so numpy and cupy write in place;
        other namespaces (no integer-array assignment in the standard) gather and select.
        """
        xp = self.xp
        if idx.shape[0] == 0:
            return full
        if self._inplace:
            full[idx] = sub
            return full
        pos = xp.clip(xp.cumulative_sum(xp.astype(mask, xp.int64)) - 1, 0, None)
        m = xp.reshape(mask, mask.shape + (1,) * (full.ndim - 1))
        return xp.where(m, xp.take(sub, pos, axis=0), full)

    def _predict(self) -> tuple[Any, Any]:
        h = self.history
        if len(h) >= 3:
            (V2, A2), (V1, A1), (V0, A0) = h[-3:]
            return 3.0 * (V0 - V1) + V2, 3.0 * (A0 - A1) + A2
        if len(h) == 2:
            (V1, A1), (V0, A0) = h
            return 2.0 * V0 - V1, 2.0 * A0 - A1
        return h[-1]

    # -- public ----------------------------------------------------------------------
    def evaluate(self, pi: Any) -> tuple[Any, Any, Any]:
        """``(V^π, A^π, bound)`` for the action-major policy ``pi`` of shape ``(B, A, S)``.

        ``bound[b] ≥ ‖V[b] − V^{π_b}‖∞``, from the final residual (module docstring).
        """
        xp = self.xp
        if not self.warm:
            M = xp.sum(pi[..., None] * self.K4, axis=1)
            V = xp.linalg.solve(M, xp.sum(pi * self.R, axis=1)[..., None])[..., 0]
            self.exact_solves += self.B
            Adv = self._advantage(V)
            res = xp.sum(pi * Adv, axis=1)
        elif self.W is None:
            V, self.W = self._solve(self.K4, self.R, pi)
            Adv = self._advantage(V)
            res = xp.sum(pi * Adv, axis=1)
        else:
            V, Ap = self._predict()
            res = xp.sum(pi * Ap, axis=1)
            r0 = xp.max(xp.abs(res), axis=-1)
            V = V + (self.W @ res[..., None])[..., 0]
            Adv = self._advantage(V)
            res = xp.sum(pi * Adv, axis=1)
            r1 = xp.max(xp.abs(res), axis=-1)
            ratio = r1 / xp.where(r0 > 0, r0, xp.ones_like(r0))
            bad = r1 > self._tolerance(V, self.r_max)
            refresh = bad & (ratio > _REFRESH) & (ratio <= _SLOW)  # (> _SLOW: solved exactly below)
            if bool(xp.any(bad)):
                idx = xp.nonzero(bad)[0]
                sub = self._finish(idx, pi, V, res, ratio)
                V, Adv, res, self.W = (self._scatter(bad, idx, a, b) for a, b in zip(sub, (V, Adv, res, self.W), strict=True))
            if bool(xp.any(refresh)):  # W of a policy far from π: refresh it for the next call
                idx = xp.nonzero(refresh)[0]
                M = xp.sum(xp.take(pi, idx, axis=0)[..., None] * xp.take(self.K4, idx, axis=0), axis=1)
                self.W = self._scatter(refresh, idx, xp.linalg.inv(M), self.W)
        self.history = (self.history + [(V, Adv)])[-3:]
        bound = xp.max(xp.abs(res), axis=-1) / (1.0 - self.gamma)
        return V, Adv, bound

    def _finish(self, idx: Any, pi: Any, V: Any, res: Any, ratio: Any) -> tuple[Any, Any, Any, Any]:
        """More steps (or an LU solve) for the uncertified instances ``idx``, on gathered copies.

        Returns ``(V, A, residual, W)`` of those instances.
        """
        xp = self.xp
        K4, R, pi, W = (xp.take(x, idx, axis=0) for x in (self.K4, self.R, pi, self.W))
        Kf = xp.reshape(K4, (K4.shape[0], self.A * self.S, self.S))
        V, res, ratio = xp.take(V, idx, axis=0), xp.take(res, idx, axis=0), xp.take(ratio, idx, axis=0)
        r1 = xp.max(xp.abs(res), axis=-1)
        active = xp.ones(ratio.shape, dtype=xp.bool, device=V.device)
        steps = 1
        while True:
            slow = active & ((ratio > _SLOW) | (steps >= _MAX_STEPS))
            fast = active & ~slow
            if bool(xp.any(slow)):
                j = xp.nonzero(slow)[0]
                Vs, Ws = self._solve(xp.take(K4, j, axis=0), xp.take(R, j, axis=0), xp.take(pi, j, axis=0))
                V, W = self._scatter(slow, j, Vs, V), self._scatter(slow, j, Ws, W)
            if bool(xp.any(fast)):
                d = (W @ res[..., None])[..., 0]
                V = V + xp.where(fast[:, None], d, xp.zeros_like(d))
            Adv = R - xp.reshape(Kf @ V[..., None], (V.shape[0], self.A, self.S))
            res = xp.sum(pi * Adv, axis=1)
            r_new = xp.max(xp.abs(res), axis=-1)
            ratio = xp.where(fast, r_new / xp.where(r1 > 0, r1, xp.ones_like(r1)), ratio)
            r1 = r_new
            active = fast & (r1 > self._tolerance(V, xp.take(self.r_max, idx, axis=0)))
            if not bool(xp.any(active)):
                return V, Adv, res, W
            steps += 1


def action_major(xp: Any, x: Any) -> Any:
    """A C-contiguous copy of ``x[b, s, a, ...]`` laid out as ``[b, a, s, ...]``.

    Reductions over actions then run over a leading axis of contiguous ``S``-blocks;
    the flat reshape forces the copy (``permute_dims`` alone may return a view).
    """
    axes = (0, 2, 1) + tuple(range(3, x.ndim))
    shape = (x.shape[0], x.shape[2], x.shape[1]) + tuple(x.shape[3:])
    return xp.reshape(xp.reshape(xp.permute_dims(x, axes), (-1,)), shape)
