"""Rounding and divergence checks of the exact TD(λ) solvers (:mod:`rltheory.algorithms.td_fixed_point`).

:func:`_check_td_matrix` refuses a TD matrix singular to rounding (an off-policy weighting can make
it singular); :func:`_check_td_finite` names the first non-finite iterate of the mean TD path.

References
----------
Tsitsiklis, J. N., Van Roy, B. (1997). An analysis of temporal-difference learning with function
approximation. IEEE TAC 42(5). Lemmas 4–6, §IX.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import to_numpy
from ..trace import Trace

__all__: list[str] = []


def _check_td_matrix(At: Any, level: Any, S: int, xp: Any) -> None:
    r"""Raise when the TD matrix ``Ã = ΨᵀD M^{-1}(I − γP_π)Ψ`` is singular to rounding.

    ``level = |ΨᵀD M^{-1}|·|I − γP_π|·|Ψ|`` holds the magnitudes of the products summed into each
    entry, so ``Ã`` is known to ``max(S, k)·ε·‖level‖_F``; a smallest singular value at or below
    that is indistinguishable from 0. On-policy, ``Ã = I − ΨᵀD·γ(1−λ)M^{-1}P_π·Ψ`` with
    ``‖γ(1−λ)M^{-1}P_π‖_D ≤ κ = γ(1−λ)/(1−γλ)``, so ``σ_min(Ã) ≥ 1 − κ = (1−γ)/(1−γλ)``
    (Tsitsiklis & Van Roy 1997, Lemmas 4–6) and only ``γ`` within a few ``ε`` of 1 reaches the
    cut; an off-policy ``d`` can make ``Ã`` singular (their θ → 2θ example, §IX), and a solve then
    returned noise of either sign (``θ = 4e16`` where the exact fixed point of the stored model is
    ``−2.8e16``).
    """
    k = At.shape[-1]
    sv = xp.linalg.svdvals(At)
    cut = max(S, k) * float(xp.finfo(At.dtype).eps) * float(xp.sqrt(xp.sum(level * level)))
    smin = float(sv[-1])
    if not smin > cut:
        raise np.linalg.LinAlgError(
            f"the TD matrix A = Phi^T D (I - gamma lam P_pi)^(-1) (I - gamma P_pi) Phi is singular to rounding "
            f"for this weighting d: smallest singular value {smin:.3g} of its D-orthonormal form <= its "
            f"rounding level {cut:.3g} (an off-policy d can make A singular; on-policy it is positive definite)"
        )


def _check_td_finite(trace: Trace, A: Any, alpha: float, step_size: float, e: int) -> None:
    """Raise ``ValueError`` where the recorded ``θ_k`` of :func:`expected_td` are not finite.

    ``θ_k − θ* = (I − αA)^k (θ_0 − θ*)`` grows without bound when the spectral radius
    ``ρ(I − αA) > 1`` (a step beyond the stability limit, or an off-policy ``A`` with an eigenvalue
    in the left half-plane). The message names the first such iteration and ``ρ(I − αA) =
    ρ(I − α_s A_s)`` (``α_s = 4^e α``, ``A_s = A/4^e``: in range); a convergent run whose
    ``θ = 2^{−e}θ_s`` leaves the float range (tiny features) says that instead.
    """
    theta = np.asarray(to_numpy(trace["theta"]))
    bad = ~np.all(np.isfinite(theta), axis=-1)
    if not bad.any():
        return
    k = int(trace.iteration[int(np.argmax(bad))])
    Ah = np.asarray(to_numpy(A), dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        M = np.eye(Ah.shape[0]) - alpha * Ah
    rho = float(np.max(np.abs(np.linalg.eigvals(M)))) if np.all(np.isfinite(M)) else math.inf
    if rho < 1.0:
        raise ValueError(
            f"expected_td: theta_k is beyond the float range from iteration k = {k} on (the "
            f"iteration converges, rho(I - alpha A) = {rho:.6g}, but theta scales as 1/|Phi| and "
            f"max|Phi| < 2^{e + 1}): scale the features up"
        )
    raise ValueError(
        f"expected_td diverged: theta_k is not finite from iteration k = {k} on; the iteration "
        f"theta <- theta + alpha (b - A theta) has spectral radius rho(I - alpha A) = {rho:.6g} > 1 at "
        f"step_size = {step_size!r} (it converges iff rho < 1: take a smaller step_size)"
    )
