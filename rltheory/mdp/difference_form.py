r"""Values and advantages in difference form: the kernels that keep policy evaluation and
advantages accurate as ``γ → 1``.

``I − γP_π`` is nearly singular when γ is close to 1, and the direct forms lose what the
values' size ``max|r|/(1−γ)`` makes them lose: a plain solve errs by ``ε‖V‖/(1−γ)``, and
``Q_V − V = r + γPV − V`` subtracts two numbers of size ``‖V‖`` (an absolute error
``ε·max|r|/(1−γ)`` on an advantage of the size of ``r``). Written with the leave rates
``(1−γ) + γΣ_{j≠s}P(s, j)`` and the differences ``V(j) − V(s)``, every term has the size of the
rewards or of the spread of ``V`` instead:

* :func:`_evaluation_matrix`: ``I − γP_π`` with the cancellation-free diagonal;
* :func:`_leave_rate_lu`, :func:`_leave_rate_solve`: its LU factors from the leave rates, each entry
  to a few ``ε`` relative at any γ < 1 (for γ within about ``64ε`` of 1);
* :func:`_policy_values`: ``(I − γP_π)^{-1} B``, refined with the residual in difference form;
* :func:`_flow_advantages`: ``Q_V(s, a) − V(s) = r(s, a) − (1−γ)V(s) + γΣ_j P(j|s, a)(V(j) − V(s))``.

Split out of :mod:`rltheory.mdp.bellman`, which uses them (``evaluate_policy``,
``state_occupancy``, ``advantage``, ``performance_difference``). Only array-API calls.

References
----------
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms*, 2nd ed. SIAM. §12.1.
Grassmann, W. K., Taksar, M. I., Heyman, D. P. (1985). Regenerative analysis and steady state
distributions for Markov chains. *Oper. Res.* 33(5) (the leave-rate diagonal).
Alfa, A. S., Xue, J., Ye, Q. (2002). Accurate computation of the smallest eigenvalue of a
diagonally dominant M-matrix. *Math. Comp.* 71(237), 217–236 (elimination on the off-diagonal
entries and row-sum excesses).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import as_float
from .model import FiniteMDP


def _eye(xp: Any, n: int, like: Any) -> Any:
    return xp.eye(n, dtype=like.dtype, device=like.device)


def _evaluation_matrix(xp: Any, g: float, Ppi: Any) -> tuple[Any, Any]:
    """``(I − γP_π, P_π with a zero diagonal)``, the diagonal formed as ``(1−γ) + γ Σ_{j≠s} P_π(s, j)``.

    ``1 − γP_π(s, s)`` rounds ``γP_π(s, s)`` first, an error of ``ε`` against a difference that
    may be as small as ``1 − γ``; the leave-rate form has only sums of non-negative terms (GTH's
    rule, as :func:`rltheory.mdp.stationary_distribution` uses for ``I − P``). A stored row that
    sums to ``1 ± ε`` is read with the self-loop ``1 − Σ_{j≠s} P_π(s, j)``.
    """
    eye = _eye(xp, Ppi.shape[-1], Ppi)
    off = Ppi * (1.0 - eye)
    return eye * ((1.0 - g) + g * xp.sum(off, axis=-1))[..., None] - g * off, off


def _leave_rate_lu(xp: Any, g: float, off: Any) -> tuple[list[Any], list[Any], Any]:
    r"""LU factors of ``I − γP_π`` by elimination on the leave rates, each entry to a few ``ε``
    relative: ``(L columns, U rows, pivots)`` for :func:`_leave_rate_solve`; ``off`` is ``P_π`` with
    a zero diagonal, ``(..., S, S)``.

    ``I − γP_π`` is the diagonally dominant M-matrix with off-diagonal entries ``−a_ij``,
    ``a_ij = γP_π(i, j)``, and row-sum excesses ``v_i = 1 − γ``. Gaussian elimination without
    pivoting keeps that form, and it is carried in those parameters (the GTH rule of
    :func:`_evaluation_matrix` at every step; Alfa, Xue & Ye 2002, §3): eliminating ``k`` gives
    ``l_i = a_ik/m_kk``, ``a_ij ← a_ij + l_i a_kj``, ``v_i ← v_i + l_i v_k`` and the pivot
    ``m_kk = v_k + Σ_{j>k} a_kj`` — sums and products of non-negative numbers only, so every factor
    entry is within a few ``ε`` relative of the exact factor of the stored model, however close γ is
    to 1. (LAPACK's pivoted LU errs by ``ε`` in absolute terms, which moves the smallest
    eigenvalue ``1 − γ`` of a closed class by its own size once ``ε/(1−γ)`` nears 1.) The diagonal
    slots of the working block are never read. ``S`` steps of ``O(S²)`` array work per instance
    (0.3 s at ``S = 1000`` in numpy, about ten LAPACK solves).
    """
    S = off.shape[-1]
    a = g * off
    v = xp.full(tuple(off.shape[:-1]), 1.0 - g, dtype=off.dtype, device=off.device)
    lcols, urows, pivots = [], [], []
    for k in range(S):
        row, col = a[..., 0, 1:], a[..., 1:, 0]  # a_kj (j > k), a_ik (i > k)
        m = v[..., 0] + xp.sum(row, axis=-1)  # ≥ 1 − γ > 0
        lk = col / m[..., None]
        lcols.append(lk)
        urows.append(row)
        pivots.append(m)
        if k < S - 1:
            a = a[..., 1:, 1:] + lk[..., :, None] * row[..., None, :]
            v = v[..., 1:] + lk * v[..., :1]
    return lcols, urows, xp.stack(pivots, axis=-1)


def _leave_rate_solve(xp: Any, factors: tuple[list[Any], list[Any], Any], B: Any) -> Any:
    r"""``(I − γP_π)^{-1} B`` for ``B[..., S, K]`` from :func:`_leave_rate_lu`'s factors (``L`` unit
    lower with entries ``−l``, ``U`` with pivots ``m_kk`` and entries ``−a_kj``): one forward and
    one backward substitution, ``O(S²K)`` per instance. Both inverses are non-negative, so with the
    factors accurate to a few ``ε`` relative each entry of the result is within a few ``S·ε`` of
    ``((I − γP_π)^{-1}|B|)(s, k) ≤ max|B|/(1−γ)``; ``B``'s batch may be broader than the factors'."""
    lcols, urows, pivots = factors
    S = pivots.shape[-1]
    ys = []
    rest = B
    for k in range(S):
        y = rest[..., 0, :]
        ys.append(y)
        if k < S - 1:
            rest = rest[..., 1:, :] + lcols[k][..., :, None] * y[..., None, :]
    xs: list[Any] = [None] * S
    for k in range(S - 1, -1, -1):
        acc = ys[k]
        if k < S - 1:
            later = xp.stack(xs[k + 1 :], axis=-2)
            acc = acc + xp.sum(urows[k][..., :, None] * later, axis=-2)
        xs[k] = acc / pivots[..., k, None]
    return xp.stack(xs, axis=-2)


def _policy_values(xp: Any, g: float, Ppi: Any, B: Any, *, max_refine: int = 30) -> Any:
    r"""``X = (I − γP_π)^{-1} B`` for ``B[..., S, K]`` (``K`` reward columns), accurate to a few
    ``ε·max|B|/(1−γ)`` however close γ is to 1; ``B``'s batch may be broader than ``P_π``'s.

    Where ``(1+γ)/(1−γ) ≤ 64`` this is one plain solve of ``I − γP_π`` (error ``≤ 64ε‖X‖``, as
    before). Else ``I − γP_π`` comes from :func:`_evaluation_matrix` (no cancellation on the
    diagonal), and a plain solve would err by ``ε·‖(I − γP_π)^{-1}‖·‖X‖ ~ ε‖X‖/(1−γ)`` (``V^π``:
    7e-5 relative at γ = 1 − 10⁻¹² in float64, 2 % at γ = 1 − 2⁻²⁰ in float32), mostly along the
    slow directions of ``P_π``, where the residual ``B − (I − γP_π)X`` formed directly loses the
    same ``ε‖X‖``. So the solve is refined with the residual in difference form
    ``B(s, k) − (1−γ)X(s, k) − γ Σ_{j≠s} P_π(s, j)(X(s, k) − X(j, k))``, whose terms have the size
    of the rewards and of the spread of a column, not of ``X``: per instance until the correction
    is at the rounding of ``X`` (``2ε max|X|``), stops shrinking by half, or after ``max_refine``
    steps (Higham 2002, §12.1, fixed-precision refinement). A correction larger than the previous
    one is not applied. The residual takes ``O(S²K)`` per instance,
    formed for blocks of columns of about 2²² entries.

    Refinement contracts only while the solver's error ``ε·(1+γ)/(1−γ)`` is well below 1: at
    γ = 1 − 2⁻⁵³ (float64) the pivoted LU's solve was off by 1.85 times the correction, the
    corrections shrank by 0.85 a step, and ``V`` came out 70 % off (exact ``−5.01e15``, returned
    ``−8.10e15``; likewise at 1 − 2⁻⁵², and in float32 at 1 − 2⁻²³). Where
    ``u·(1+γ)/(1−γ) > 2⁻⁶`` (``u = ε/2``; γ above ``1 − 1.4e-14`` in float64, ``1 − 7.6e-6`` in
    float32) the solves use the leave-rate elimination instead (:func:`_leave_rate_lu`, entrywise
    accurate at any γ < 1), whose unrefined result is already within a few ``ε·max|B|/(1−γ)``;
    the same refinement then takes it to the rounding of ``X``.
    """
    S, K = B.shape[-2], B.shape[-1]
    batch = tuple(np.broadcast_shapes(tuple(Ppi.shape[:-2]), tuple(B.shape[:-2])))
    B = xp.broadcast_to(B, batch + (S, K))
    if (1.0 + g) <= 64.0 * (1.0 - g):  # well conditioned (γ ≤ 63/65): one plain solve
        return xp.linalg.solve(xp.broadcast_to(_eye(xp, S, Ppi) - g * Ppi, batch + (S, S)), B)
    u = float(xp.finfo(Ppi.dtype).eps) / 2.0
    M, off = _evaluation_matrix(xp, g, Ppi)
    if u * (1.0 + g) > 2.0**-6 * (1.0 - g):  # the LU's error near the size of 1 − γ
        factors = _leave_rate_lu(xp, g, off)

        def solve(R: Any) -> Any:
            return _leave_rate_solve(xp, factors, R)

    else:
        M = xp.broadcast_to(M, batch + (S, S))

        def solve(R: Any) -> Any:
            return xp.linalg.solve(M, R)

    X = solve(B)
    if not bool(xp.all(xp.isfinite(X))):
        return X  # (beyond the float range, which the caller refuses)
    off = off[..., None]  # (..., S, S, 1)
    width = max(1, (1 << 22) // (S * S))

    def flow(X: Any) -> Any:
        blocks = []
        for k in range(0, K, width):
            Xk = X[..., k : min(k + width, K)]
            blocks.append(xp.sum(off * (Xk[..., :, None, :] - Xk[..., None, :, :]), axis=-2))
        return blocks[0] if len(blocks) == 1 else xp.concat(blocks, axis=-1)

    done = xp.zeros(batch, dtype=xp.bool, device=X.device)
    prev = xp.full(batch, float("inf"), dtype=X.dtype, device=X.device)
    for _ in range(max_refine):
        dX = solve(B - (1.0 - g) * X - g * flow(X))
        step = xp.max(xp.abs(dX), axis=(-2, -1))
        take = ~done & (step < prev)
        X = xp.where(take[..., None, None], X + dX, X)
        big = xp.max(xp.abs(X), axis=(-2, -1))
        done = done | ~take | (step <= 2.0 * u * big) | (step > 0.5 * prev)
        prev = xp.where(take, step, prev)
        if bool(xp.all(done)):
            break
    return X


def _flow_advantages(mdp: FiniteMDP, V: Any, *, rewards: bool = True) -> Any:
    r"""``Q_V(s, a) − V(s)`` formed as ``r(s, a) − (1−γ)V(s) + γ Σ_j P(j|s, a)(V(j) − V(s))``
    (without the ``r(s, a)`` term when ``rewards`` is False: the linear part, for a correction).

    ``V[..., S]``'s batch broadcasts against the model's. The terms have the size of the
    rewards, of ``(1−γ)V`` (at most ``max|r|`` for a value) and of the differences of ``V`` along
    the transitions, so every entry is within a few ``ε`` times those of the exact advantage
    of ``V`` for the model with rows ``P/σ`` (``σ`` the stored row sums; ``Σ_j P(j)/σ = 1``
    exactly makes ``(P/σ)V − V`` the normalised flow sum); the direct ``r + γPV − V`` rounds
    ``γPV`` to ``ε‖V‖∞``, up to ``ε·max|r|/(1−γ)``. Dense ``P``: ``O(S²A)`` elementwise work
    per instance, in blocks of states of about 2²² entries; sparse (:attr:`FiniteMDP.successors`):
    ``O(SAK)`` gathers. An entry whose differences leave the float range (``V`` spanning more than
    the largest float) is not finite here; the caller falls back to the direct form there.
    """
    g = float(mdp.gamma)
    V = as_float(V, mdp.xp, mdp.dtype)
    out = g * _flow_sums(mdp, V)[0] - (1.0 - g) * V[..., None]
    return mdp.R + out if rewards else out


def _flow_sums(mdp: FiniteMDP, V: Any, *, absolute: bool = False) -> tuple[Any, Any]:
    r"""``(Σ_j P(j|s, a)(V(j) − V(s)), Σ_j P(j|s, a)|V(j) − V(s)|)``, shapes ``[..., S, A]`` (the
    second ``None`` unless ``absolute``); ``V[..., S]``'s batch broadcasts against the model's.

    Dense ``P``: blocks of states of about 2²² entries (the whole ``(S, A, S)`` product at once
    took four temporaries of ``P``'s size: 1.3 GB beside ``P`` for S = 2000, A = 10); sparse
    (:attr:`FiniteMDP.successors`): ``O(SAK)`` gathers, the padding's zero probabilities adding
    exact zeros.
    """
    xp = mdp.xp
    S, A = mdp.S, mdp.A
    batch = tuple(np.broadcast_shapes(tuple(V.shape[:-1]), mdp.batch_shape))
    V = xp.broadcast_to(V, batch + (S,))
    succ = mdp.successors
    if succ is None:
        width = max(1, (1 << 22) // max(1, math.prod(batch) * A * S))
        flows, absolutes = [], []
        for i in range(0, S, width):
            Vi = V[..., i : min(i + width, S)]
            pw = mdp.P[..., i : min(i + width, S), :, :] * (
                V[..., None, None, :] - Vi[..., :, None, None]
            )
            flows.append(xp.sum(pw, axis=-1))
            if absolute:
                absolutes.append(xp.sum(xp.abs(pw), axis=-1))
    else:
        idx, prob = succ
        K = idx.shape[-1]
        ib = xp.broadcast_to(xp.reshape(idx, mdp.batch_shape + (S * A * K,)), batch + (S * A * K,))
        Vg = xp.reshape(xp.take_along_axis(V, ib, axis=-1), batch + (S, A, K))
        pw = prob * (Vg - V[..., :, None, None])
        flows = [xp.sum(pw, axis=-1)]
        absolutes = [xp.sum(xp.abs(pw), axis=-1)] if absolute else []

    def joined(parts: list[Any]) -> Any:
        return parts[0] if len(parts) == 1 else xp.concat(parts, axis=-2)

    return joined(flows), joined(absolutes) if absolute else None
