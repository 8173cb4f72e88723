r"""The LSTD(λ) sample system in a basis with the sample's constant direction as one column.

:func:`rltheory.algorithms.least_squares_td.lstd_estimate` solves ``Ã w = b̃`` with
``Ã = (1/n) Σ_t z̃_t (ψ_t − γψ'_t)ᵀ``, ``b̃ = (1/n) Σ_t z̃_t r_t`` in a basis ``ψ = φT`` of the
features that is orthonormal for the sample (``(1/n) Σ_t ψ_tψ_tᵀ = I``; ``z̃_t`` the traces of ``ψ``).
As γ → 1 the constant function ``1`` is the slow direction: ``ψ_t − γψ'_t = (1−γ)ψ_t + γ(ψ_t − ψ'_t)``
and its differences along a transition vanish, so where ``span φ`` holds ``1`` the smallest singular
value of ``Ã`` is of the size ``1 − γ`` (the sample version of Tsitsiklis & Van Roy 1997, Lemmas 4–6).
In the basis of the SVD every column of ``ψ`` mixes ``1`` with the other features, and
``ψ_t − γψ'_t`` formed directly carries rounding errors of ``ε·|ψ|`` in every column — of the size
of ``σ_min`` once ``1 − γ`` is a few ``ε``; the singularity test, with one rounding level
``16·max(k, √n)·ε·‖(1/n)|Z̃|ᵀ(|Ψ| + γ|Ψ'|)‖_F`` for the whole matrix, refused every sample of a
3-cycle from ``γ = 1 − 2⁻⁴⁴`` on.

So, as for the exact fixed point (:mod:`rltheory.algorithms._td_slow_basis`), the basis is reflected
(:func:`._td_slow_basis._slow_first`) so that one column ``m`` is the sample projection of ``1``;
each column ``j`` of ``Ã`` is formed in difference form from the features,
``(1−γ)(φ_t u_j) + γ((φ_t − φ'_t) u_j)`` with ``u_j = (TH)e_j``, the slow column's differences in
twice the working precision from the exact ``φ_t − φ'_t = d_t + e_t`` (TwoSum, then Dot2), so that
they keep their own tiny size; and each column is judged against its own rounding level ``L_j``
(:func:`_lstd_system`, :func:`_check_lstd_matrix`).

References
----------
Tsitsiklis, J. N., Van Roy, B. (1997). An analysis of temporal-difference learning with function
approximation. IEEE TAC 42(5). Lemmas 4–6, §IX.
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms*, 2nd ed. SIAM. §3.1 (sums),
§7.2 (column scaling).
Ogita, T., Rump, S. M., Oishi, S. (2005). Accurate sum and dot product. SIAM J. Sci. Comput. 26(6).
Algorithm 5.3 (Dot2), Proposition 5.5.
"""

from __future__ import annotations

import math

import numpy as np

from ._td_checks import singular_direction
from ._td_slow_basis import _slow_first

__all__: list[str] = []


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth's TwoSum; no overflow)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p, e)`` with ``p = fl(ab)`` and ``ab = p + e`` exactly (Dekker's split; ``|a|, |b| < 1e290``,
    exact unless ``ab`` underflows, where ``|e| ≤ 2⁻¹⁰⁷⁴``)."""
    p = a * b
    ca, cb = 134217729.0 * a, 134217729.0 * b  # 2^27 + 1
    ah, bh = ca - (ca - a), cb - (cb - b)
    al, bl = a - ah, b - bh
    return p, al * bl - (((p - ah * bh) - al * bh) - ah * bl)


def _dot2(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    r"""``X @ Y`` in twice the working precision (Ogita, Rump & Oishi 2005, Algorithm 5.3, Dot2).

    Each entry is within ``u·|XY| + γ_m²·|X||Y|`` of the exact product (``u = ε/2``,
    ``γ_m = mu/(1 − mu)``, ``m`` the inner size; their Proposition 5.5): accurate to its own size
    where the terms cancel, as the differences of a nearly constant column along the transitions do.
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        p, c = _two_product(X[:, :1], Y[:1, :])
        for i in range(1, X.shape[1]):
            h, e = _two_product(X[:, i : i + 1], Y[i : i + 1, :])
            p, q = _two_sum(p, h)
            c = c + (q + e)
        return p + c


def _transition_differences(g0: np.ndarray, g1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X, cols)`` with ``(g₀ − g₁)V = X V[cols]`` exactly in the products: ``X = [d, e]``,
    ``g₀ − g₁ = d + e`` (TwoSum, entrywise), keeping only the columns of ``e`` that are not all 0
    (none for one-hot or constant features, whose differences are exact)."""
    d, e = _two_sum(g0, -g1)
    nz = np.flatnonzero(np.any(e != 0, axis=0))
    return np.concatenate([d, e[:, nz]], axis=1), np.concatenate([np.arange(g0.shape[1]), nz])


def _lstd_system(
    g0: np.ndarray, g1: np.ndarray, Z: np.ndarray, T: np.ndarray, gamma: float
) -> tuple[np.ndarray, ...]:
    r"""``(U, Z̃, X, cols, Ã, L)``: the reflected basis ``U = TH``, the traces ``Z̃ = ZU``, the exact
    differences ``(X, cols)`` (:func:`_transition_differences`), the LSTD matrix ``Ã = (1/n) Z̃ᵀ((1−γ)Ψ + γΔ)``
    (``Ψ = g₀U`` the basis on the sample, ``Δ = (g₀ − g₁)U`` its differences along the transitions)
    and its rounding level ``L`` (entrywise).

    ``g0``, ``g1`` (n, k) are the features of ``s_t`` and ``s_{t+1}``, ``Z`` their traces, ``T`` the
    sample-orthonormal basis (``(1/n) (g₀T)ᵀ(g₀T) = I``). The reflection ``H``
    (:func:`._td_slow_basis._slow_first`, with ``c = Σ_t ψ_t`` the coefficients of the sample
    projection of ``1``) keeps ``Ψ`` orthonormal for the sample and makes one column ``m`` (the one
    with ``|Σ_t Ψ_tm|`` largest) that projection. Its differences are formed in twice the working
    precision, ``Δ_m = [d, e][U_m; U_m]`` with ``g₀ − g₁ = d + e`` exactly (:func:`_dot2`): a
    column constant on the sample up to the rounding of ``U`` gets its own tiny differences to a
    relative ``u``, where the plain product erred by ``ε·|g₀ − g₁||U_m|`` (for one-hot features at
    ``γ = 1 − 2⁻⁴⁴`` that alone reached the cut). Treating the formed ``U`` and ``Ψ`` as exact (a
    basis of ``span φ``), each formed entry of ``Ã`` is within about ``(n + 2k + 4)·u`` of

        ``L = (1/n) |Z̃|ᵀ ((1−γ)|Ψ| + γ|Δ| + γ|g₀ − g₁||U|)``   (columns ``j ≠ m``),

    and with ``γ(8k²u·(|d| + |e|)|U_m| + 4k·2⁻¹⁰⁷⁴/u)`` for ``|g₀ − g₁||U_m|`` in the column ``m``
    (Dot2 is within ``u|Δ_m| + γ_{2k}²(|d| + |e|)|U_m|``, Ogita, Rump & Oishi 2005, Prop. 5.5, plus
    underflow; the sums over the transitions add ``n·u``; Higham 2002, §3.1). For a column constant
    on the sample ``L_m`` is about ``1 − γ`` times its size.
    """
    n, k = g0.shape
    c = np.sum(g0 @ T, axis=0)[None, :]  # Σ_t ψ_t: the direction of the sample projection of 1
    _, _, U = _slow_first(np, c, c, T)
    Zt, P0 = Z @ U, g0 @ U
    m = int(np.argmax(np.abs(np.sum(P0, axis=0))))  # the column H made ±Π1/‖Π1‖
    diff = g0 - g1
    size = np.abs(diff) @ np.abs(U)  # the plain product's rounding is k·u times this
    Dd = diff @ U
    X, cols = _transition_differences(g0, g1)
    Um = U[cols, m : m + 1]
    Dd[:, m : m + 1] = _dot2(X, Um)
    u = float(np.finfo(g0.dtype).eps) / 2.0
    tiny = float(np.finfo(g0.dtype).smallest_subnormal)
    size[:, m] = 8.0 * k * k * u * (np.abs(X) @ np.abs(Um))[:, 0] + 4.0 * k * tiny / u
    At = Zt.T @ ((1.0 - gamma) * P0 + gamma * Dd) / n
    level = np.abs(Zt).T @ ((1.0 - gamma) * np.abs(P0) + gamma * (np.abs(Dd) + size)) / n
    return U, Zt, X, cols, At, level


def _check_lstd_matrix(At: np.ndarray, level: np.ndarray, n: int, U: np.ndarray) -> None:
    r"""``LinAlgError`` when the sample LSTD matrix ``Ã`` (:func:`_lstd_system`) is singular to rounding.

    With ``C = diag(‖L[:, j]‖)`` the columns' rounding levels, ``ÃC^{-1}`` is formed within
    ``‖EC^{-1}‖₂ ≤ c·ε·√k`` where a sum of ``n`` terms carries about ``√n·ε`` times their sizes (``n·ε``
    at worst), ``c = 16·max(k, √n)`` (the margin of the earlier single-level test). A smallest
    singular value of ``ÃC^{-1}`` at or below that cut is indistinguishable from 0; above it the
    refinement with the formed ``Ã`` contracts. Scaling each column by its own level matters as
    γ → 1: the constant column's level is about ``1 − γ``, like its entries, the others' about 1;
    one level for the whole matrix refused every sample of a 3-cycle from ``γ = 1 − 2⁻⁴⁴`` on.
    Off-policy transitions can make ``Â`` singular (Tsitsiklis & Van Roy's θ → 2θ example, §IX):
    for ``φ = 1 → 2``, ``2 → 2`` at ``γ = 5/6`` the stored inputs' exact ``Â = −1.1e-16``, and the
    solve returned noise (``θ̂ = −1.08e16`` for an exact ``−1.35e16``). Near γ = 1 a sample with
    several closed classes has one slow direction per class, and only the constant one is isolated
    in a column; those samples are refused once ``1 − γ`` reaches the rounding of the others. The
    message names the nearly singular direction of ``θ`` in the columns of ``φ`` at unit scale.
    """
    k = At.shape[1]
    eps = float(np.finfo(At.dtype).eps)
    cn = np.sqrt(np.sum(level * level, axis=0))
    cs = np.where(cn > 0, cn, 1.0)
    As = At / cs[None, :]
    sv = np.linalg.svd(As, compute_uv=False)
    cut = 16.0 * max(k, math.sqrt(n)) * eps * float(np.sqrt(np.sum((cn / cs) ** 2)))
    smin = float(sv[-1])
    if not smin > cut:
        where = ""
        if np.all(np.isfinite(As)):
            where = singular_direction(As, cs, U, "phi")
        raise np.linalg.LinAlgError(
            f"the LSTD matrix A_hat = (1/n) sum_t z_t (phi_t - gamma phi'_t)^T is singular to rounding: "
            f"smallest singular value {smin:.3g} of its sample-orthonormal form (columns scaled by their "
            f"rounding levels) <= its rounding level {cut:.3g} (n={n} transitions){where}; off-policy "
            f"transitions can make A_hat singular, and near gamma = 1 so can a sample with several "
            f"closed classes of states; pass ridge > 0 for a regularised estimate"
        )
