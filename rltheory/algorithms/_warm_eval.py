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
``‖V − V^π‖∞ ≤ (‖r_π − M_π V‖∞ + e) / (1 − γ)`` (``‖M_π^{-1}‖∞ ≤ 1/(1−γ)``), returned as
``bound``, where ``e`` is the round-off of the computed residual itself (Higham's
``γ_{S+3}`` for the product with ``P``, ``γ_A`` for the sum over actions, and the stored
``P``'s and ``π``'s row-sum defects; :meth:`WarmEvaluator._allowance`). Without ``e`` the
certificate was false whenever the computed residual underestimated the exact one — e.g. 0
for most one-state models, whose computed ``V`` is still an ulp off. An instance is solved exactly by LU instead when its step contracts the
residual by less than a factor 10, or when, at the contraction its last step showed,
it would need more than four steps in all. Its ``W`` is then renewed: by one
Newton–Schulz step ``W ← W(2I − M_π W)`` (``I − M_π W' = (I − M_π W)²``; two ``S×S``
products, ~5× cheaper than an inverse) when the last step contracted by at least a
factor 2, by a fresh inverse otherwise. A Newton–Schulz step also refreshes ``W`` for
the next call when the first step contracted by less than a factor 500. Decisions are
per instance and masked (steps on the whole batch while most instances still step,
on gathered copies once few do), so an instance's values do not depend on which other
instances share its batch.

Costs (numpy): the first ``cold`` calls (default ``COLD = 10``) solve by LU and form no
``W`` — the policy moves so fast there that a stored inverse would be stale at once (on the
NPG benchmark this halves the first twenty iterations' time); ``M_π`` is formed by a BLAS
product per state; for float64 models ``W`` is kept, refreshed and applied in float32, to the
residual scaled by ``‖V‖∞ + ‖r‖∞`` (mixed-precision iterative refinement: ``W``'s own error,
~1e-6, is far below the ~1e-3 contraction a stored ``W`` gives, and the certificate is still
the float64 residual; ``W`` goes back to float64 where a float32 matrix is singular, e.g.
``γ > 1 − 3e-8``, which float32 rounds to 1 — :mod:`rltheory.algorithms._warm_precondition`).

Settled instances (numpy, :meth:`WarmEvaluator.settled`): for a fixed advantage ``A``
the residual ``Σ_a π_k(a|s) A(s, a)`` along the NPG policies ``π_k ∝ exp(θ + k·c·A)`` is
non-decreasing in ``k``, so once ``max(‖residual‖∞, max_s |max_a A(s, a)|)`` is at the
stopping level the last value is certified for every later iterate and the instance can
leave the batch (:meth:`WarmEvaluator.retire` compacts the per-instance arrays, copying
only the instances that move).

The warm steps run on numpy, in place on the arrays the evaluator owns. With fewer than
``WARM_MIN_BATCH`` instances at the start (a batch that shrinks as instances settle stays
warm), on GPUs (where the batched LU solve is one library call and every masked decision
of the steps is a device synchronisation) and on other array namespaces, every call is an
LU solve; the certificate is reported the same way.

References: iterative refinement with a fixed approximate inverse is classical
(Golub & Van Loan, *Matrix Computations*, 4th ed., §3.5.3), as is the Newton–Schulz
iteration for an inverse (Schulz 1933; Higham, *Functions of Matrices*, 2008, §7.3 on the
analogous Newton iterations); the residual bound is
``V − V^π = M_π^{-1}(M_π V − r_π)`` with ``‖M_π^{-1}‖∞ = ‖Σ_k γ^k P_π^k‖∞ ≤ 1/(1−γ)``
(Puterman 1994, §6.1–6.2, the Neumann series of ``(I − γP_π)^{-1}``).

Arrays are action-major: policies and advantages are ``(..., A, S)`` so that the
reductions over actions run over a leading axis (contiguous inner loops).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._numerics import higham_gamma, subnormal_spacing
from ..backend import is_numpy
from ._warm_arrays import action_major, compact, compact_plan
from ._warm_precondition import Preconditioner

__all__ = ["WarmEvaluator", "action_major", "compact", "compact_plan"]

# c in the stopping rule: an LU solution's own residual is a few eps (‖V‖ + ‖r‖)
_RESIDUAL_FACTOR = 16.0
_SLOW = 0.1  # a step contracting the residual by less than this factor -> exact LU solve
_REFRESH = 0.002  # first-step contraction worse than this -> refresh W for the next call
_MAX_STEPS = 4
_GATHER_BELOW = 4  # fewer than 1/4 of the instances stepping: gather them
MIXED = True
# the first calls solve by LU without forming W: the policy moves too fast for W to pay off
COLD = 10
# below this many instances the per-step overhead exceeds an LU solve: solve every call
WARM_MIN_BATCH = 8


class WarmEvaluator(Preconditioner):
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
    class does no validation: drivers check their inputs once. The warm steps run on
    numpy (in-place updates of the arrays this class owns); other namespaces solve by LU
    at every call.
    """

    def __init__(
        self, P: Any, R: Any, gamma: float, xp: Any, *, cold: int = COLD, mixed: bool = MIXED
    ) -> None:
        B, S, A = P.shape[0], P.shape[1], P.shape[2]
        self.xp, self.B, self.S, self.A, self.gamma = xp, B, S, A, float(gamma)
        # action-major copies: K4[b, a, s, s'] = (I − γP)[b, s, a, s'] (flat view Kf[b, a·S + s, s']) and R[b, a, s]
        if is_numpy(
            xp
        ):  # one pass: −γP written transposed, then 1 added on the diagonal (the same roundings)
            self.K4 = np.empty((B, A, S, S), dtype=P.dtype)
            np.multiply(np.moveaxis(P, 2, 1), -gamma, out=self.K4)
            np.reshape(self.K4, (B, A, S * S))[:, :, :: S + 1] += 1.0
        else:
            eye = xp.eye(S, dtype=P.dtype, device=P.device)
            self.K4 = action_major(
                xp, eye[:, None, :] - gamma * P
            )  # [b, s, a, s'] -> [b, a, s, s']
        self.Kf = xp.reshape(self.K4, (B, A * S, S))
        self.rows_shape: tuple[int, ...] = (
            A,
            S,
        )  # the per-instance shape of advantages and policies
        self.R = action_major(xp, R)
        self.r_max = xp.max(xp.abs(xp.reshape(self.R, (B, -1))), axis=-1)
        self.c_eps = _RESIDUAL_FACTOR * float(xp.finfo(P.dtype).eps)
        # round-off of the computed residual (see _allowance): unit roundoff, γ_{S+3}, γ_A and
        # the stored P's row-sum defect δ (computed sums' distance from 1 plus γ_S)
        self.u = float(xp.finfo(P.dtype).eps) / 2.0
        self.a_S = higham_gamma(S + 3, self.u)
        self.a_A = higham_gamma(A, self.u)
        sums = xp.reshape(xp.sum(P, axis=-1), (B, -1))
        self.delta = xp.max(xp.abs(sums - 1.0), axis=-1) + higham_gamma(S, self.u)
        # underflow (products with subnormal results): absolute, in the residual and, through the
        # stored K = I − γP, proportional to ‖V‖∞ (see _allowance)
        s_sub = subnormal_spacing(P.dtype, xp)
        self.under = (2.0 * (2 * S + A + 8) * s_sub, 2.0 * S * s_sub)
        self.W: Any = None
        # float64 models on numpy (`mixed`): W is kept, refreshed and applied in float32, to the
        # residual scaled by ‖V‖∞ + ‖r‖∞ (mixed-precision iterative refinement: W is only a
        # preconditioner, the certificate is the float64 residual; W's own error, ~1e-6, is far
        # below the ~1e-3 contraction a stored W gives)
        self.mixed = bool(mixed) and is_numpy(xp) and P.dtype == np.float64
        self.scale: Any = None  # (B, 1): ‖V‖∞ + ‖r‖∞ of the last evaluation
        self.history: list[tuple[Any, Any]] = []
        self.residual: Any = None  # ‖r_π − M_π V‖∞ per instance, of the last evaluation
        self.nu: Any = (
            None  # the last evaluated policy's action-sum defect (scalar, or per instance)
        )
        self._coef: Any = None  # (ν, c₁, c₂) of _allowance for the last scalar ν
        self._fold: Any = None  # (ν, k, k₁, k₂) of _certificate
        self.exact_solves = 0  # instances solved by LU so far (for diagnostics)
        self.calls, self.cold = (
            0,
            int(cold),
        )  # calls so far; the first `cold` solve by LU and form no W
        # warm steps pay off on a CPU with enough instances; on a GPU the batched LU solve is
        # one library call while every masked decision of the warm steps is a device sync
        self._np = is_numpy(xp)
        self.warm = self._np and B >= WARM_MIN_BATCH

    # -- kernels ---------------------------------------------------------------------
    def _advantage(self, V: Any, Kf: Any = None, R: Any = None) -> Any:
        """``A_V[b, a, s] = r(s, a) + γ (P V)(s, a) − V(s)``: one product with ``P``."""
        Kf = self.Kf if Kf is None else Kf
        R = self.R if R is None else R
        KV = self.xp.reshape(Kf @ V[..., None], (V.shape[0],) + self.rows_shape)
        if self._np:  # subtract into the product's own (fresh) buffer
            return np.subtract(R, KV, out=KV)
        return R - KV

    def _residual(self, pi: Any, Adv: Any, idx: Any = None) -> Any:
        """``r_π − M_π V = Σ_a π(a|s) A_V(s, a)`` (action-major arrays of the instances ``idx``)."""
        if self._np:
            return np.einsum("bas,bas->bs", pi, Adv)
        return self.xp.sum(pi * Adv, axis=1)

    def _sum_defect(self, pi: Any) -> Any:
        """``ν ≥ |Σ_a π(a|s) − 1|`` per instance: the computed sums' distance from 1, plus ``γ_A``."""
        xp = np if self._np else self.xp
        d = xp.max(xp.abs(xp.sum(pi, axis=1) - 1.0), axis=-1)
        return d + self.a_A * (1.0 + d)

    def _allowance(self, v_norm: Any, nu: Any) -> Any:
        r"""``e ≥ |computed − exact residual|`` per instance: the round-off of ``Σ_a π(a|s) A_V(s, a)``.

        The certificate is about the stochastic model ``P̃ = P/σ`` (``σ`` the stored rows'
        sums, ``|σ − 1| ≤ δ``) and the normalised policy ``π̃ = π/Σ_a π`` (``|Σ_a π − 1| ≤ ν``).
        With ``s_V = ‖R‖∞ + (1 + γ(1 + δ))‖V‖∞`` bounding ``|R| + |K||V|`` row by row
        (``K = I − γP``), the computed residual differs from the exact one by at most

        * ``γ_{S+3}·s_V``: the stored ``K`` (two roundings per diagonal entry, one elsewhere),
          the product ``KV`` (``S`` terms) and the subtraction from ``R`` (Higham 2002,
          Lemma 3.1 and eq. (3.4));
        * ``(γ_A(1 + ν) + 2ν)(1 + γ_{S+3})·s_V``: the sum over ``A`` actions and the
          normalisation of ``π`` (``|1 − 1/Σπ|·Σπ ≤ 2ν`` for ``ν ≤ 1/3``);
        * ``γδ‖V‖∞``: ``P`` against ``P̃`` (``‖γ(P − P̃)_π V‖∞ ≤ γδ‖V‖∞``);
        * underflow, which the relative bounds above leave out (Higham 2002, eq. (2.8)): a product
          with a subnormal result errs by up to half the subnormal spacing ``s``, so the ``S``
          products of ``KV``, the ``A`` over actions and a few of the allowance add
          ``2(2S + A + 8)s``, and the stored entries ``γP(s, s')`` that underflowed add
          ``2Ss‖V‖∞`` (see :func:`~rltheory.algorithms._policy_opt.underflow_error`). Without it
          a one-state float32 model with rewards ~5e-41 was certified 0 with ``V`` an ulp off.

        So ``e = c₁ + c₂‖V‖∞`` with per-instance ``(c₁, c₂)`` that depend on ``ν`` only through
        the first factor (cached for a scalar ``ν``; an array ``ν`` is measured by
        :meth:`_sum_defect`).
        """
        if isinstance(nu, float) and self._coef is not None and self._coef[0] == nu:
            c1, c2 = self._coef[1:]
        else:
            k = self.a_S + (self.a_A * (1.0 + nu) + 2.0 * nu) * (1.0 + self.a_S)
            c1 = k * self.r_max + self.under[0]
            c2 = (
                k * (1.0 + self.gamma * (1.0 + self.delta))
                + self.gamma * self.delta
                + self.under[1]
            )
            if isinstance(nu, float):
                self._coef = (nu, c1, c2)
        return c1 + c2 * v_norm

    def _bound(self, r: Any, e: Any) -> Any:
        """``(r + e)/(1 − γ)``, rounded upwards (``8u``: the sum, the division and ``1 − γ``)."""
        return (r + e) * (1.0 + 8.0 * self.u) / (1.0 - self.gamma)

    def _certificate(self, r: Any, v_norm: Any, nu: Any) -> Any:
        """``_bound(r, _allowance(v_norm, nu))`` with the per-instance coefficients folded in once
        per scalar ``ν`` (``k·r + k₁ + k₂‖V‖∞``, ``k = (1 + 8u)/(1 − γ)``): four array operations per
        call, which matters for single instances, where each costs about as much as a product."""
        if not (isinstance(nu, float) and self._np):
            return self._bound(r, self._allowance(v_norm, nu))
        if self._fold is None or self._fold[0] != nu:
            k = (1.0 + 8.0 * self.u) / (1.0 - self.gamma)
            self._allowance(v_norm, nu)  # (caches c₁, c₂ for this ν)
            self._fold = (nu, k, self._coef[1] * k, self._coef[2] * k)
        _, k, k1, k2 = self._fold
        b = np.multiply(k2, v_norm)
        b += k1
        b += k * r
        return b

    def _tolerance(self, v_norm: Any, r_max: Any) -> Any:
        """The stopping level ``c·ε·(‖V‖∞ + ‖r‖∞)`` of the residual, per instance (``v_norm = ‖V‖∞``)."""
        return self.c_eps * (v_norm + r_max)

    def _matrix(self, pi: Any, idx: Any = None) -> Any:
        """``M_π = Σ_a π(a|s) K(s, a, ·) = I − γ P_π`` for the instances ``idx`` (all by default)."""
        K4 = self.K4 if idx is None else self.K4[idx]
        if self._np:  # a (1 × A)·(A × S') product per state: BLAS, twice as fast as the einsum
            return (np.swapaxes(pi, 1, 2)[:, :, None, :] @ np.swapaxes(K4, 1, 2))[:, :, 0, :]
        return self.xp.sum(pi[..., None] * K4, axis=1)

    def _solve(self, pi: Any, idx: Any = None) -> tuple[Any, Any]:
        """LU solve of ``M_π V = r_π`` for the instances ``idx`` (all by default): ``(V, M)``."""
        xp = self.xp
        M = self._matrix(pi, idx)
        R = self.R if idx is None else self.R[idx]
        r = np.einsum("bas,bas->bs", pi, R) if self._np else xp.sum(pi * R, axis=1)
        self.exact_solves += int(M.shape[0])
        solve = (
            np.linalg.solve if self._np else xp.linalg.solve
        )  # (numpy's own: no wrapper overhead)
        return solve(M, r[..., None])[..., 0], M

    def _predict(self) -> tuple[Any, Any]:
        """Extrapolated ``(V, A)`` (fresh arrays): quadratic / linear / constant in the history.

        The weights ``(3, −3, 1)`` and ``(2, −1)`` sum to 1, so the extrapolated advantage is
        the advantage of the extrapolated value. Higher degrees predict better while the
        policy moves fast, but they amplify the round-off of the stored advantages (weights
        ``(5, −10, 10, −5, 1)`` for degree 4), which then caps what the first step can reach:
        measured on the NPG benchmark, it costs a second step in the steady state.
        """
        h = self.history
        out = []
        for i in (0, 1):  # V, then A: one fresh array each, updated in place
            if len(h) >= 3:
                x = np.subtract(h[-1][i], h[-2][i])
                x *= 3.0
                x += h[-3][i]
            elif len(h) == 2:
                x = np.multiply(h[-1][i], 2.0)
                x -= h[-2][i]
            else:
                x = h[-1][i].copy()
            out.append(x)
        return out[0], out[1]

    # -- public ----------------------------------------------------------------------
    def evaluate(self, pi: Any, nu: float | None = None) -> tuple[Any, Any, Any]:
        """``(V^π, A^π, bound)`` for the action-major policy ``pi`` of shape ``(B, A, S)``.

        ``bound[b] ≥ ‖V[b] − V^{π_b}‖∞``, from the final residual and its round-off (module
        docstring). ``nu``: a known bound on ``|Σ_a π(a|s) − 1|`` (e.g.
        :func:`~rltheory.algorithms._policy_opt.softmax_sum_defect` for ``logit_step``'s
        policies); measured on ``pi`` when ``None``.
        The returned arrays must not be modified (they are the history of the prediction).
        """
        xp = self.xp
        self.calls += 1
        if self.warm and self.history and self.W is not None:
            V, Adv, r, v = self._steps(pi)
        else:
            V, M = self._solve(pi)
            if self.warm and self.calls > self.cold:
                self.W = self._inverse(M)
            Adv = self._advantage(V)
            if self._np:  # (ndarray methods: no dispatch overhead, which single instances feel)
                r, v = np.abs(self._residual(pi, Adv)).max(axis=-1), np.abs(V).max(axis=-1)
            else:
                r, v = xp.max(xp.abs(self._residual(pi, Adv)), axis=-1), xp.max(xp.abs(V), axis=-1)
        r = self._with_unlisted(r, v)
        if self.mixed:
            self.scale = np.reshape(v + self.r_max, (-1, 1))
            self.scale[self.scale == 0.0] = 1.0
        self.history = (self.history + [(V, Adv)])[-3:]
        self.residual = r
        self.nu = self._sum_defect(pi) if nu is None else float(nu)
        return V, Adv, self._certificate(r, v, self.nu)

    def _with_unlisted(self, r: Any, v: Any) -> Any:
        """The residual norm ``r`` plus a bound on what entries left out of the arrays add (none here)."""
        return r

    # -- settled instances (numpy) -----------------------------------------------------
    def settled(self, open_actions: Any = None) -> tuple[Any, Any]:
        r"""Instances whose last value stays certified for every later policy of an NPG run.

        Let ``V, A`` be the last value and advantage and ``π_k ∝ exp(θ + k·c·A)`` (``c > 0``,
        ``k ≥ 0``) the policies NPG reaches while it keeps using ``A``. The residual of ``V``
        for ``π_k`` at a state, ``ρ_s(k) = Σ_a π_k(a|s) A(s, a)``, has derivative
        ``c·Var_{π_k}(A(s, ·)) ≥ 0`` (it is the derivative of the convex
        ``log Σ_a exp(θ + k c A)``, divided by ``c``), so for every ``k ≥ 0`` it lies between
        ``ρ_s(0)`` and ``max_a A(s, a)`` (over the actions with finite ``θ``; the others keep
        probability 0). Hence
        ``‖r_{π_k} − M_{π_k} V‖∞ ≤ F = max(‖ρ(0)‖∞, max_s |max_a A(s, a)|)`` for all ``k``:
        once ``F`` is at the stopping level ``c·ε·(‖V‖∞ + ‖r‖∞)``, ``V`` and ``A`` are the
        certified evaluation of every later iterate, which the driver then advances in
        closed form. The policies are computed with relative error a few ``ε`` per entry
        (``Σ_a π_a |A_a| ≤ 3F``) and weights below ``e^{-700}`` set to 0 (``≤ |A|·1e-304``
        absolute), so the recorded bound is ``(F·(1 + 16ε) + e)/(1 − γ)`` with ``e`` the
        round-off allowance of :meth:`_allowance` at ``V`` (``A`` is the computed advantage;
        the later policies' action-sum defect is taken as at least ``16ε``).

        Parameters
        ----------
        open_actions : bool array (B, A, S), optional
            The actions with finite logits (all when ``None``).

        Returns
        -------
        (mask, bound): bool array (B,) and the bound on ``‖V − V^{π_k}‖∞`` valid for every ``k``.
        """
        V, Adv = self.history[-1]
        if open_actions is not None:
            Adv = np.where(open_actions, Adv, -np.inf)
        top = Adv[:, 0].copy()
        for a in range(1, self.A):
            np.maximum(top, Adv[:, a], out=top)
        F = np.max(np.abs(top, out=top), axis=-1)
        np.maximum(F, self.residual, out=F)
        nu = (
            max(self.nu, self.c_eps)
            if isinstance(self.nu, float)
            else np.maximum(self.nu, self.c_eps)
        )
        v = np.max(np.abs(V), axis=-1)
        return F <= self._tolerance(v, self.r_max), self._bound(
            F * (1.0 + self.c_eps), self._allowance(v, nu)
        )

    def retire(self, done: Any) -> tuple[Any, Any, int]:
        """Drop the instances ``done`` (bool, (B,)) from the evaluator: ``(holes, movers, n)``.

        The kept instances that sit behind the new end ``n`` move into the slots of dropped
        ones in front of it (only they are copied), and every per-instance array becomes
        its first ``n`` rows (views). Apply the same ``x[holes] = x[movers]; x = x[:n]`` to
        the caller's per-instance arrays (:func:`compact`).
        """
        holes, movers, n = compact_plan(done)
        self._retire_rows(holes, movers, n)
        self.r_max = compact(self.r_max, holes, movers, n)
        self.residual = compact(self.residual, holes, movers, n)
        if not isinstance(self.nu, float):
            self.nu = compact(self.nu, holes, movers, n)
        self._coef = self._fold = (
            None  # per-instance coefficients of _allowance: recomputed for the kept rows
        )
        self.delta = compact(self.delta, holes, movers, n)
        if self.W is not None:
            self.W = compact(self.W, holes, movers, n)
        if self.scale is not None:
            self.scale = compact(self.scale, holes, movers, n)
        self.history = [
            (compact(V, holes, movers, n), compact(A, holes, movers, n)) for V, A in self.history
        ]
        self.B = n  # (a warm evaluator stays warm: its inverses and history are in place, one step is cheap)
        return holes, movers, n

    def _retire_rows(self, holes: Any, movers: Any, n: int) -> None:
        """Compact the per-row arrays (``P``'s rows and the rewards) of :meth:`retire`."""
        self.K4 = compact(self.K4, holes, movers, n)
        self.Kf = np.reshape(self.K4, (n, self.A * self.S, self.S))
        self.R = compact(self.R, holes, movers, n)

    def _steps(self, pi: Any) -> tuple[Any, Any, Any, Any]:
        """Extrapolated start, then masked Richardson steps / LU solves until every instance is certified.

        Returns ``(V, A, ‖r_π − M_π V‖∞, ‖V‖∞)``.

        numpy only: ``V``, ``Adv``, ``res`` and ``W`` are arrays this class owns and updates in place.
        """
        B = self.B
        V, Adv = self._predict()
        res = self._residual(pi, Adv)
        res0, r0 = (
            res,
            None,
        )  # the prediction's residual (its size is needed only if a step falls short)
        idx = None  # the instances still stepping (None: all)
        refresh = None
        steps = 0
        while True:
            if idx is None:
                V += self._precondition(res)
                Adv = self._advantage(V)
                res = self._residual(pi, Adv)
            else:
                if idx.shape[0] * _GATHER_BELOW > B:  # most instances step: products over the batch
                    V[idx] += self._precondition(res)[idx]
                    Adv = self._advantage(V)  # (unchanged V elsewhere: the same advantage there)
                    res = self._residual(pi, Adv)
                else:  # few: products with their (gathered) W and P only
                    V[idx] += self._precondition(res[idx], idx)
                    Adv[idx] = self._advantage(V[idx], self.Kf[idx], self.R[idx])
                    res[idx] = self._residual(pi[idx], Adv[idx], idx)
            r1 = np.max(np.abs(res), axis=-1)
            steps += 1
            v = np.max(np.abs(V), axis=-1)
            tol = self._tolerance(v, self.r_max)
            pending = r1 > tol
            if idx is not None:  # only the instances that stepped can still be pending
                stepped = np.zeros(B, dtype=bool)
                stepped[idx] = True
                pending &= stepped
            if not pending.any():
                break
            if r0 is None:
                r0 = np.max(np.abs(res0), axis=-1)
            ratio = r1 / np.where(r0 > 0, r0, 1.0)
            if refresh is None:  # W of a policy too far from π: improve it for the next call
                refresh = pending & (ratio > _REFRESH) & (ratio <= _SLOW)
            # steps still needed at this contraction: log(tol / r1) / log(ratio)
            with np.errstate(divide="ignore", invalid="ignore"):
                needed = np.log(tol / r1) / np.log(ratio)
            slow = pending & ((ratio > _SLOW) | ~(steps + needed <= _MAX_STEPS))
            if slow.any():
                j = np.flatnonzero(slow)
                V[j], M = self._solve(pi[j], j)
                self.W[j] = self._new_inverse(j, M, ratio[j])
                Adv[j] = self._advantage(V[j], self.Kf[j], self.R[j])
                res[j] = self._residual(pi[j], Adv[j], j)
                r1[j] = np.max(np.abs(res[j]), axis=-1)
                v[j] = np.max(np.abs(V[j]), axis=-1)
                refresh &= ~slow
            idx = np.flatnonzero(pending & ~slow)
            if idx.shape[0] == 0:
                break
            r0 = r1
        if refresh is not None and refresh.any():
            j = np.flatnonzero(refresh)
            self.W[j] = self._new_inverse(j, self._matrix(pi[j], j))
        return V, Adv, r1, v
