r"""Coverage of linear features: the feature covariance and the relative condition number.

With features ``φ(s, a) ∈ R^k`` a distribution ``ν`` over state-action pairs has the
covariance ``Σ_ν = E_{(s,a)~ν}[φφᵀ]`` (:func:`feature_covariance`), and data ``ρ`` cover a
target ``π`` when the **relative condition number**
``κ = sup_x xᵀΣ_{d^π}x / xᵀΣ_ρ x`` is finite, the largest generalised eigenvalue
(:func:`relative_condition_number`). With one-hot features ``κ`` is the single-policy
concentrability of :mod:`rltheory.bounds.coverage`, which re-exports both functions.

References
----------
Agarwal, A., Kakade, S., Lee, J., Mahajan, G. (2021). On the theory of policy gradient
methods. JMLR 22(98), Assumption 6.2 and Thm 6.2 (relative condition number, Q-NPG).
Uehara, M., Sun, W. (2022). Pessimistic model-based offline RL under partial coverage. ICLR.
Jin, Y., Yang, Z., Wang, Z. (2021). Is pessimism provably efficient for offline RL? ICML,
Cor. 4.6 (well-explored data).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_finite, check_occupancy, check_real
from ..backend import array_namespace, as_float

__all__ = ["feature_covariance", "relative_condition_number"]


def feature_covariance(features: Any, d: Any) -> Any:
    r"""``Σ_d = Σ_{s,a} d(s, a) φ(s, a) φ(s, a)ᵀ`` for ``φ[..., S, A, k]`` and weights ``d[..., S, A]``.

    Leading axes broadcast (e.g. a step axis ``h``), giving ``[..., k, k]``, in the features'
    dtype. Each ``d[..., :, :]`` must be a law, summing to 1 to the tolerance of the coarser of
    its own dtype and the features' (``check_occupancy``'s rule).

    Examples
    --------
    >>> import numpy as np
    >>> feature_covariance(np.eye(2).reshape(1, 2, 2), np.array([[0.25, 0.75]])).tolist()
    [[0.25, 0.0], [0.0, 0.75]]
    """
    xp = array_namespace(features, d)
    phi = as_float(features, xp)
    # the weights are checked in the coarser of their own dtype and the features', then cast to the
    # features': a float32 law (sum 1 − 6.9e-8) with float64 features was refused at float64's
    # tolerance 1e-8 after the cast (a float64 d with float32 features is still judged in float32)
    w = as_float(d, xp)
    if float(xp.finfo(w.dtype).eps) < float(xp.finfo(phi.dtype).eps):
        w = xp.astype(w, phi.dtype)
    if phi.ndim < 3 or tuple(w.shape[-2:]) != tuple(phi.shape[-3:-1]):
        raise ValueError(
            f"features must be (..., S, A, k) and d (..., S, A) with matching S, A; got {tuple(phi.shape)}, {tuple(w.shape)}"
        )
    check_finite(phi, "features", ("s", "a", "j"))
    if w.ndim <= 3:
        check_occupancy(w, "d")
    else:  # check_occupancy reads one step axis: (H, B, S, A) was summed over (B, S, A) and refused
        for idx in np.ndindex(*tuple(w.shape[:-2])):
            check_occupancy(w[idx + (...,)], f"d[{', '.join(map(str, idx))}]")
    if w.dtype != phi.dtype:
        w = xp.astype(w, phi.dtype)
    k = phi.shape[-1]
    try:  # the longer lead alone was taken before: (H, S, A, k) with (1, S, A) failed in broadcast_to
        lead = tuple(np.broadcast_shapes(tuple(phi.shape[:-3]), tuple(w.shape[:-2])))
    except ValueError:
        raise ValueError(
            f"the leading axes of features {tuple(phi.shape[:-3])} and d {tuple(w.shape[:-2])} do not broadcast "
            f"(features (..., S, A, k) = {tuple(phi.shape)}, d (..., S, A) = {tuple(w.shape)})"
        ) from None
    SA = phi.shape[-3] * phi.shape[-2]
    phi_b = xp.reshape(xp.broadcast_to(phi, lead + tuple(phi.shape[-3:])), lead + (SA, k))
    w_b = xp.reshape(xp.broadcast_to(w, lead + tuple(w.shape[-2:])), lead + (SA, 1))
    return xp.matrix_transpose(phi_b * w_b) @ phi_b


def relative_condition_number(sigma_target: Any, sigma_data: Any, *, rtol: float = 1e-10) -> float:
    r"""``κ = sup_{x ≠ 0} xᵀ Σ_target x / xᵀ Σ_data x`` (``∞`` if ``Σ_target`` has mass outside ``range(Σ_data)``).

    Computed from the eigendecomposition ``Σ_data = U diag(w) Uᵀ``: on the range
    ``w > rtol·max w``, ``κ = λ_max(W^{-1/2} U_rᵀ Σ_target U_r W^{-1/2})``; if the
    null-space block ``U_0ᵀ Σ_target U_0`` is non-zero the ratio is unbounded. Leading
    batch axes (e.g. steps ``h``) are maximised over.

    ``rtol`` is a relative rank cut on both sides: eigenvalues of ``Σ_data`` up to
    ``rtol·max w`` count as 0, and a null-space block of ``Σ_target`` up to
    ``rtol·k·max|Σ_target|`` counts as 0. So ``Σ_target = diag(1, 1e-11)`` against
    ``Σ_data = diag(1, 0)`` gives ``1`` (exactly: ``∞``), and ``diag(1, 1e-9)`` against
    ``diag(1, 1e-11)`` gives ``∞`` (exactly: ``100``); pass a smaller ``rtol`` to resolve such
    scales. The cut is never below ``k·eps`` of the dtype: the computed eigenvalues of an
    exactly singular ``Σ_data`` are rounding noise of that size (in float32, ``~1e-9·max w``,
    above the default ``rtol``, gave ``κ ≈ 8e8`` for ``∞`` and ``6.4`` for ``2``). Each matrix
    is judged at its own dtype's ``eps`` (``Σ_data``'s rank and sign, ``Σ_target``'s sign; the
    null-space block at the coarser of the two) and the algebra runs in the promoted dtype.

    ``κ(cΣ_target, c'Σ_data) = (c/c')·κ(Σ_target, Σ_data)``: each matrix is scaled by a power of
    two to ``max|entry| ∈ [1/2, 1)`` first (exact) and the ratio scaled back, ``∞`` beyond the
    float range, so entries near the float limits (``1e300`` against ``1e-300``, or ``1e-320``
    against ``1e-320``) neither overflow nor fall under the rank cut's floor.

    Notes
    -----
    This is the coverage coefficient of linear-feature policy optimisation
    (Agarwal et al. 2021, Assumption 6.2 and Thm 6.2: Q-NPG's error scales with
    ``√κ``) and of linear offline RL (PEVI's well-explored condition, Jin et al. 2021,
    Cor. 4.6, gives ``κ ≤ 1/(c λ_min(Σ_data))`` for bounded features). With one-hot
    features ``κ = C^{π}`` (the covariances are diagonal occupancies).

    Raises
    ------
    ValueError
        Shapes that are not square ``(..., k, k)`` of equal shape, a non-finite entry (located),
        a matrix that is not positive semidefinite (an eigenvalue of its symmetric part below
        ``−k·cut`` times its largest, ``cut = max(rtol, k·eps)``; the batch index and the
        eigenvalue), or an ``rtol`` that is not a finite number ``≥ 0``.

    Examples
    --------
    >>> import numpy as np
    >>> relative_condition_number(np.diag([0.5, 0.5]), np.diag([0.25, 0.75]))
    2.0
    """
    rtol = check_real(rtol, "rtol", low=0.0)  # NaN or < 0 kept no eigenvalue (or a zero one): 0.0
    xp = array_namespace(sigma_target, sigma_data)
    T = as_float(sigma_target, xp)
    D = as_float(sigma_data, xp)
    # each matrix's rounding is judged in its own dtype and the algebra runs in the promoted one:
    # D was cast to T's dtype and judged at T's eps, so a float32 rank-3 covariance against a
    # float64 target was 'not positive semidefinite' (eigenvalue -1.1e-8, below float64's cut)
    eps_T, eps_D = float(xp.finfo(T.dtype).eps), float(xp.finfo(D.dtype).eps)
    dt = xp.result_type(T.dtype, D.dtype)
    T, D = xp.astype(T, dt, copy=False), xp.astype(D, dt, copy=False)
    if tuple(T.shape) != tuple(D.shape) or T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError(
            f"sigma_target and sigma_data must be square (..., k, k) of equal shape; got {tuple(T.shape)}, {tuple(D.shape)}"
        )
    check_finite(T, "sigma_target", ("i", "j"))
    check_finite(D, "sigma_data", ("i", "j"))
    k = T.shape[-1]
    if k == 0 or T.size == 0:
        raise ValueError(
            f"sigma_target and sigma_data must hold at least one (k, k) matrix with k >= 1; got shape {tuple(T.shape)}"
        )
    Tb = xp.reshape(T, (-1, k, k))
    Db = xp.reshape(D, (-1, k, k))
    cut_T, cut_D = max(rtol, k * eps_T), max(rtol, k * eps_D)
    cut = max(cut_T, cut_D)  # T's block in D's null space carries both matrices' rounding
    worst = 0.0
    for b in range(Tb.shape[0]):
        tmax, dmax = float(xp.max(xp.abs(Tb[b, ...]))), float(xp.max(xp.abs(Db[b, ...])))
        if tmax == 0.0:  # xᵀ0x = 0 for every x: this step adds nothing
            continue
        if dmax == 0.0:
            return float("inf")
        et, ed = math.frexp(tmax)[1], math.frexp(dmax)[1]
        Tn, Dn = _pow2_scale(Tb[b, ...], -et), _pow2_scale(Db[b, ...], -ed)
        w, U = xp.linalg.eigh((Dn + xp.matrix_transpose(Dn)) / 2)
        scale = float(xp.max(xp.abs(w)))
        keep = w > cut_D * max(scale, 1e-300)
        Tsym = (Tn + xp.matrix_transpose(Tn)) / 2
        M = xp.matrix_transpose(U) @ Tsym @ U
        tscale = float(xp.max(xp.abs(Tsym)))
        _check_psd(w, scale, cut_D * k, "sigma_data", b, tuple(T.shape[:-2]), ed)
        wt = xp.linalg.eigvalsh(Tsym)
        _check_psd(
            wt, float(xp.max(xp.abs(wt))), cut_T * k, "sigma_target", b, tuple(T.shape[:-2]), et
        )
        null = ~keep
        if bool(xp.any(null)):
            nn = xp.where(null[:, None] & null[None, :], M, xp.zeros_like(M))
            if float(xp.max(xp.abs(nn))) > cut * max(tscale, 1e-300) * k:
                return float("inf")
        if not bool(xp.any(keep)):
            continue
        inv_sqrt = xp.where(
            keep, 1.0 / xp.sqrt(xp.where(keep, w, xp.ones_like(w))), xp.zeros_like(w)
        )
        Mr = inv_sqrt[:, None] * M * inv_sqrt[None, :]
        kappa = float(xp.max(xp.linalg.eigvalsh((Mr + xp.matrix_transpose(Mr)) / 2)))
        try:
            worst = max(worst, math.ldexp(kappa, et - ed))
        except OverflowError:  # the ratio of the scales is beyond the float range
            return float("inf")
    return worst


def _check_psd(
    w: Any, scale: float, tol: float, name: str, b: int, lead: tuple[int, ...], e: int
) -> None:
    """``ValueError`` when the eigenvalues ``w`` of a covariance (scaled by ``2^-e``) reach below
    ``−tol·scale``: a covariance ``E[φφᵀ]`` is positive semidefinite, and for an indefinite one the
    ratio is no coverage coefficient (``Σ_target = −I`` gave ``κ = 0``, ``Σ_data = −I`` gave ``∞``).
    Eigenvalues within the rank cut of 0 are rounding and pass."""
    low = float(w[0])  # eigh/eigvalsh: ascending
    if low < -tol * scale:
        at = f" at batch index {tuple(int(i) for i in np.unravel_index(b, lead))}" if lead else ""
        raise ValueError(
            f"{name} must be positive semidefinite (a covariance E[phi phi^T]); its symmetric part{at} "
            f"has the eigenvalue {math.ldexp(low, e):.6g} (largest |eigenvalue| "
            f"{math.ldexp(scale, e):.6g})"
        )


def _pow2_scale(x: Any, e: int) -> Any:
    """``x·2^e`` exactly, in factors of at most ``2^±60`` (a single ``2^e`` overflows the dtype for |e| > 127 or 1023)."""
    while e:
        step = max(-60, min(60, e))
        x = x * (2.0**step)
        e -= step
    return x
