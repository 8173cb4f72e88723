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


def _check_td_matrix(At: Any, level: Any, S: int, xp: Any, *, T: Any = None) -> None:
    r"""Raise when the TD matrix ``Ã = ΨᵀD M^{-1}(I − γP_π)Ψ`` is singular to rounding.

    ``level`` bounds the rounding of ``Ã`` as it is formed entrywise (``|Ã_formed − Ã| ≤
    max(S, k)·ε·level``; :func:`._td_slow_basis._td_system`). With ``C = diag(‖level[:, j]‖)``,
    ``ÃC^{-1} = Ã_formed C^{-1} − EC^{-1}`` and ``‖EC^{-1}‖₂ ≤ ‖EC^{-1}‖_F ≤ max(S, k)·ε·√k``: ``Ã`` is
    certified nonsingular iff ``σ_min(Ã_formed C^{-1})`` exceeds that cut, and that is also the
    condition for the refinement with ``Ã_formed`` to contract (``‖Ã_formed^{-1}E‖ < 1``). Scaling the
    columns by their own levels matters as γ → 1: the slow column's level is about ``1 − γ``, the
    others' about 1, and a single level ``‖level‖_F`` for the whole matrix refused the on-policy
    ``σ_min(Ã) ≥ (1−γ)/(1−γλ)`` from ``γ ≈ 1 − 2⁻⁵⁰`` on. On-policy ``Ã = I − ΨᵀD·γ(1−λ)M^{-1}P_π·Ψ``
    with ``‖γ(1−λ)M^{-1}P_π‖_D ≤ κ = γ(1−λ)/(1−γλ)``, so ``σ_min(Ã) ≥ 1 − κ = (1−γ)/(1−γλ)``
    (Tsitsiklis & Van Roy 1997, Lemmas 4–6); an off-policy ``d`` can make ``Ã`` singular (their θ → 2θ
    example, §IX), and a solve then returned noise of either sign (``θ = 4e16`` where the exact fixed
    point of the stored model is ``−2.8e16``). The message gives both numbers and the nearly singular
    direction of ``θ`` (``T`` maps ``Ψ``'s coordinates to those of the unit-scaled columns of ``Φ``).
    """
    k = At.shape[-1]
    eps = float(xp.finfo(At.dtype).eps)
    cn = xp.sqrt(xp.sum(level * level, axis=0))  # (k,): each column's rounding level
    cs = xp.where(cn > 0, cn, xp.ones_like(cn))
    sv = xp.linalg.svdvals(At / cs[None, :])
    cut = max(S, k) * eps * float(xp.sqrt(xp.sum((cn / cs) ** 2)))
    smin = float(sv[-1])
    if not smin > cut:
        where = ""
        if T is not None:
            where = singular_direction(
                *(np.asarray(to_numpy(a), dtype=np.float64) for a in (At / cs[None, :], cs, T)),
                "Phi",
            )
        raise np.linalg.LinAlgError(
            f"the TD matrix A = Phi^T D (I - gamma lam P_pi)^(-1) (I - gamma P_pi) Phi is singular to rounding "
            f"for this weighting d: smallest singular value {smin:.3g} of its D-orthonormal form (columns "
            f"scaled by their rounding levels) <= its rounding level {cut:.3g}{where} (an off-policy d "
            f"can make A singular, and near gamma = 1 so can a P_pi with several recurrent classes, "
            f"each a slow direction; on-policy it is positive definite)"
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


def _td_divergence_reason(A_s: Any, e: int, alpha: float, scale: str) -> str:
    r"""Why a TD(λ) run with step ``alpha`` overflowed, from the stability limit of its mean path.

    The mean path ``θ ← θ + α(b − Aθ)`` converges iff every eigenvalue ``μ`` of ``αA`` lies in the
    disc ``|1 − μ| < 1``, i.e. ``α < α_max = min_i 2 Re λ_i/|λ_i|²`` over the eigenvalues ``λ_i`` of
    ``A`` (none with ``Re λ ≤ 0``). ``A = 4^e A_s`` for the features ``Φ/2^e`` (``A_s`` in range), so
    ``log2 α_max = log2 α_max(A_s) − 2e`` is computed even where ``A`` itself (``|φ|² ≳ 1e308``) or
    ``α_max`` (``|φ|² ≳ 1e324``) leaves the float range. ``scale`` locates ``max|Φ|``. At features
    ``1e200`` the run was told to "use smaller steps", where the limit ``≈ 1e-400`` lies below the
    smallest positive float and no step size is stable.
    """
    Ah = np.asarray(to_numpy(A_s), dtype=np.float64)
    lam = np.linalg.eigvals(Ah) if np.all(np.isfinite(Ah)) else np.array([np.nan])
    if not np.all(np.isfinite(lam)) or np.any(lam.real <= 0):
        return (
            "the mean path theta <- theta + alpha (b - A theta) is unstable for every step size: "
            "A has an eigenvalue with real part <= 0 for this weighting d (on-policy it is positive "
            "definite)"
        )
    lg = math.log2(float(np.min(2.0 * lam.real / np.abs(lam) ** 2))) - 2 * e
    tenths = lg * math.log10(2.0)
    ex = math.floor(tenths)
    limit = f"{2.0**lg:.3g}" if -1000 < lg < 1000 else f"{10.0 ** (tenths - ex):.3g}e{ex:+d}"
    la = math.log10(float(np.max(np.abs(Ah)))) + 2 * e * math.log10(2.0)
    size = f"max|A| = {10.0 ** (la - math.floor(la)):.3g}e{math.floor(la):+d}"
    tiny = math.ulp(0.0)  # the smallest positive float (4.9e-324)
    if lg < math.log2(tiny):
        return (
            f"no step size is stable at this feature scale: {scale} makes the TD matrix A = Phi^T D "
            f"(I - gamma lam P_pi)^(-1) (I - gamma P_pi) Phi of size {size} (beyond the float "
            f"range when over 1.8e+308), and its mean path "
            f"theta <- theta + alpha (b - A theta) is stable only for step_size < "
            f"min 2 Re(eig A)/|eig A|^2 = {limit}, below the smallest positive float {tiny!r}; "
            f"divide Phi by a power of 2 (theta* scales inversely, Phi theta* is unchanged)"
        )
    if alpha >= 2.0**lg:
        return (
            f"the step {alpha!r} is beyond the stability limit of the mean path theta <- theta + "
            f"alpha (b - A theta), step_size < min 2 Re(eig A)/|eig A|^2 = {limit} ({scale}); use "
            f"smaller steps"
        )
    return (
        f"the step {alpha!r} is below the mean path's stability limit {limit} ({scale}), but the "
        f"sampled updates alpha z_t (phi_t - gamma phi_(t+1))^T overflowed; use smaller steps"
    )


def singular_direction(A_scaled: np.ndarray, cs: np.ndarray, T: np.ndarray, name: str) -> str:
    """The clause naming the nearly singular direction of ``θ`` for a refusal message.

    ``A_scaled`` is the matrix with its columns divided by ``cs``; its last right singular vector,
    unscaled and mapped to the coordinates of the features by the basis ``T``, normalised so that
    its largest entry (column ``j``) is 1.
    """
    th = T @ (np.linalg.svd(A_scaled)[2][-1] / cs)
    j = int(np.argmax(np.abs(th)))
    th = th / th[j]
    return (
        f"; the nearly singular direction is theta ~ {np.array2string(th, precision=3)} "
        f"(columns of {name} at unit scale; column j={j} carries most of it)"
    )
