r"""The TD(λ) system for ``λ < 1`` in a basis with the slow direction of ``P_π`` as one column.

:func:`rltheory.algorithms.td_fixed_point.projected_fixed_point` solves ``Ã w = b̃`` with
``Ã = ΨᵀD M^{-1}(I − γP_π)Ψ``, ``b̃ = ΨᵀD M^{-1} r_π`` (``M = I − γλP_π``) in a ``D``-orthonormal
basis ``Ψ`` of ``span Φ``. As γ → 1 the only small eigenvalue of ``I − γP_π`` (unichain) is ``1 − γ``,
on the constant vector ``1``, and on-policy ``σ_min(Ã) ≥ (1−γ)/(1−γλ)`` is reached where ``span Φ``
holds ``1`` (Tsitsiklis & Van Roy 1997, Lemmas 4–6). In the basis of the SVD every column of ``Ψ``
mixes ``1`` with the other features, so the difference form ``(I − γP_π)Ψ`` of every column carries
rounding errors of ``ε`` times the spread of that column — of the size of ``σ_min`` itself once
``1 − γ`` is a few ``ε``: at ``γ = 1 − 2⁻⁵³`` the solve refined with that ``Ã`` returned values off
by 2e5 (``2.9e5·cond(√DΦ)·ε·max|V^π|/(1−γλ)``) for ``λ = 0``.

So the basis is first rotated (:func:`_slow_first`, one Householder reflection in the ``k``
coefficients, ``Ψ ← ΨH``, still ``D``-orthonormal) so that one of its columns is
``Π_D 1/‖Π_D 1‖_D``: where ``span Φ`` holds ``1`` that column is constant up to rounding, its
differences are at rounding level, and its image ``(1−γ)Ψ_0 + γ(I − P_π)Ψ_0`` — the small column of
``Ã`` — is formed to a few ``ε`` of its own size. Each column ``j`` of ``Ã`` then carries its own
rounding level ``L_j`` (:func:`_td_system`), and the singularity test of
:func:`rltheory.algorithms._td_checks._check_td_matrix` scales the columns by it.

References
----------
Tsitsiklis, J. N., Van Roy, B. (1997). An analysis of temporal-difference learning with function
approximation. IEEE TAC 42(5). Lemmas 4–6.
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms*, 2nd ed. SIAM. §7.2 (column
scaling), §9.3 (LU backward error).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import to_numpy
from ..mdp.difference_form import _evaluation_matrix
from ._td_refine import _bellman_difference

__all__: list[str] = []


def _slow_first(xp: Any, Psi: Any, sdU: Any, T: Any) -> tuple[Any, Any, Any]:
    r"""``(ΨH, √D U H, T H)``: the ``D``-orthonormal basis reflected so that one column is ``±Π_D 1/‖Π_D 1‖_D``.

    ``c = ΨᵀD 1 = Uᵀ√d`` holds the coefficients of ``Π_D 1``; with ``q = c/‖c‖`` and ``m`` the index of
    its largest entry, ``H = I − 2uuᵀ/(uᵀu)``, ``u = q + sign(q_m) e_m``, maps ``e_m`` to ``−sign(q_m) q``
    (orthogonal and symmetric: ``(ΨH)ᵀD(ΨH) = I``, ``span ΨH = span Ψ``). Column ``j ≠ m`` is mixed
    with the others only in proportion to ``q_j``: a column that lives on rarely visited states (rows
    of ``Ψ`` of size ``1/√d(s)``) has a small ``q_j`` and keeps its coefficient to itself (reflecting
    onto ``e_0`` spread a row of ``1e20`` for ``d(s) = 1e-40`` over every coefficient, and one-hot
    features returned the value 0 for an exact 2 there). ``k = 1`` or ``c = 0``: unchanged.
    """
    k = Psi.shape[-1]
    ones = xp.ones((Psi.shape[0], 1), dtype=Psi.dtype, device=Psi.device)
    c = (xp.matrix_transpose(sdU) @ ones)[:, 0]  # ΨᵀD 1 = Uᵀ √D 1
    nc = float(xp.sqrt(xp.sum(c * c)))
    if k == 1 or not nc > 0:
        return Psi, sdU, T
    q = c / nc
    m = int(xp.argmax(xp.abs(q)))
    sign = 1.0 if float(q[m]) >= 0 else -1.0
    em = xp.asarray([float(j == m) for j in range(k)], dtype=Psi.dtype, device=Psi.device)
    u = q + sign * em
    H = xp.eye(k, dtype=Psi.dtype, device=Psi.device) - (2.0 / float(xp.sum(u * u))) * (
        u[:, None] * u[None, :]
    )
    return Psi @ H, sdU @ H, T @ H


def _td_system(
    xp: Any, g: float, lam: float, Ppi: Any, r: Any, F: Any, DF: Any, Psi: Any, sdU: Any
) -> tuple[Any, Any, Any, Any, Any, Any]:
    r"""``(A, b, Ã, b̃, L, Lᵗ)`` for ``λ < 1``: the TD system in the coordinates of ``F`` and of ``Ψ``,
    the rounding level ``L`` of ``Ã`` as it is formed, and ``Lᵗ = M^{-T}√D U`` (``ΨᵀD M^{-1} = Lᵗᵀ``).

    ``Ã = Lᵗᵀ·B̃`` with ``Lᵗ = M^{-T}√D U`` (one LU solve) and ``B̃ = (I − γP_π)Ψ`` in difference form
    (:func:`._td_refine._bellman_difference`). The formed ``Ã`` is within ``max(S, k)·ε`` times

        ``L = |Lᵗ|ᵀ · ((1−γ)|Ψ| + γ Σ_{j≠s} P_π(s, j)|Ψ(s) − Ψ(j)| + |M|·|M^{-1}B̃|)``

    entrywise: the first terms sum the sizes of the difference-form terms (``B̃`` is within
    ``(S + 2)ε`` of them), the product adds ``S·ε·|Lᵗ|ᵀ|B̃|``, and the LU solve of the diagonally
    dominant ``Mᵀ`` solves ``(M + E)ᵀ Lᵗ = √D U`` with ``|E| ≲ ε|M|`` (growth ≤ 2), which moves ``Ã`` by
    ``Lᵗᵀ E M^{-1}B̃`` (one more solve). Bounding that by ``M^{-T}|M|ᵀ|Lᵗ|·|B̃|`` instead ignored that
    ``M^{-1}B̃`` is small on the slow column, and refused every model at ``γ = 1 − 1e-9`` with
    ``λ = 1 − 1e-9``. The level of ``(I − γP_π)Ψ`` formed directly, ``|I − γP_π||Ψ|``, has the size
    of ``Ψ`` in every column; in difference form a constant column's level is ``(1−γ)|Ψ|`` plus its
    rounding-level differences.
    """
    S, k = F.shape
    eye = xp.eye(S, dtype=F.dtype, device=F.device)
    M = eye - (g * lam) * Ppi
    Mt = xp.matrix_transpose(M)
    left = xp.linalg.solve(Mt, xp.concat([DF, sdU], axis=1))  # M^-T [DΦ, √DU]
    # (I − γP)Φ in difference form: formed directly, A was off by ε/(1−γ) relative (7e-5 at
    # γ = 1 − 1e-12 with a constant feature, whose exact image is (1−γ)·1)
    A = xp.matrix_transpose(left[:, :k]) @ _bellman_difference(xp, g, Ppi, F)
    b = xp.matrix_transpose(left[:, :k]) @ r
    Lt = left[:, k:]
    BP = _bellman_difference(xp, g, Ppi, Psi)
    At = xp.matrix_transpose(Lt) @ BP
    bt = xp.matrix_transpose(Lt) @ r
    # the solve's share |Lᵗ|ᵀ|M||M^{-1}B̃|: on the slow column M^{-1}B̃ = (1−γ)/(1−γλ)·Ψ_m is small
    Z = xp.abs(xp.linalg.solve(M, BP))
    level = xp.matrix_transpose(xp.abs(Lt)) @ (
        _bellman_difference(xp, g, Ppi, Psi, magnitude=True) + xp.abs(M) @ Z
    )
    return A, b, At, bt, level, Lt


def _check_rounding_sensitivity(
    xp: Any, g: float, Ppi: Any, Psi: Any, Lt: Any, At: Any, w: Any, lam: float
) -> None:
    r"""Raise where the values ``Ψw`` are decided by their own rounding (an off-policy ``d`` near γ = 1).

    Any float answer ``v = Ψw`` carries ``|δv| ≤ ε|v|``, and the fixed point moves with the residual
    ``ΨᵀD M^{-1}(I − γP_π)δv`` by ``δw = X δv``, ``X = Ã^{-1}·Lᵗᵀ(I − γP_π)``: so the values are
    known at best to ``β = ε·|Ψ|·|X|·|v|`` per state (the refinement stalls there, its corrections
    oscillating at that size). With ``d`` stationary, ``dᵀ(I − γP_π) = (1−γ)dᵀ`` makes the slow row of
    ``Lᵗᵀ(I − γP_π)`` of the size ``1 − γ`` and ``β`` is a few ``ε·max|v|`` however close γ is to 1
    (measured ≤ 4.5ε·max|v| on the dyadic test models up to ``1 − 2⁻⁵³``). An off-policy ``d`` leaves it
    of size 1, and ``β ~ ε·max|v|/(1−γ)``: with a uniform ``d`` the values were 0.2 off relative at
    ``γ = 1 − 2⁻⁵³`` (``β`` 0.78), ``1e-2`` at ``1 − 2⁻⁵⁰``, ``8e-7`` at ``1 − 1e-12`` (``β`` within
    3–12 times the error throughout). Refused where ``max β > 2⁻¹⁰·max|v|`` (fewer than three
    significant digits), naming the state, ``β`` and γ. ``(I − γP_π)`` with the leave-rate diagonal.
    """
    IgP, _ = _evaluation_matrix(xp, g, Ppi)
    X = xp.linalg.solve(At, xp.matrix_transpose(Lt) @ IgP)  # (k, S)
    v = xp.abs((Psi @ w)[:, 0])
    eps = float(xp.finfo(w.dtype).eps)
    beta = eps * (xp.abs(Psi) @ (xp.abs(X) @ v))
    vmax = float(xp.max(v))
    if not float(xp.max(beta)) <= 2.0**-10 * vmax:
        hb = np.asarray(to_numpy(beta), dtype=np.float64)
        s = int(np.argmax(hb)) if np.all(np.isfinite(hb)) else int(np.argmax(~np.isfinite(hb)))
        raise np.linalg.LinAlgError(
            f"the TD(lam) fixed point is decided by rounding for this weighting d at gamma={g!r}, "
            f"lam={lam!r}: rounding its values (max|Phi theta*| = {vmax:.3g}) by eps moves the fixed point "
            f"by up to {float(hb[s]):.3g} at state s={s} ({float(hb[s]) / vmax:.2g} relative, over 2^-10): "
            f"d does not cancel the slow directions of P_pi (an off-policy d), so the rounding is "
            f"amplified by about 1/(1 - gamma); use the stationary d or a smaller gamma"
        )
