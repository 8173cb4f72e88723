r"""Spectral gap, absolute spectral gap and relaxation time of a unichain Markov chain.

``1 − λ₂`` (largest real part below the Perron root), ``γ* = 1 − max_{λ≠1}|λ|`` and
``t_rel = 1/γ*`` (Levin, Peres & Wilmer 2017, §12.2). Reversible chains, recognised by
Kolmogorov's criterion on logarithms of the transition probabilities, use the symmetric matrix
``√(P(s, s') P(s', s))`` (LPW Lemma 12.2) and a symmetric eigen-solver in the array namespace;
other chains a general eigen-solver on the host. :func:`spectral_gap` and :class:`SpectralGap`
are re-exported by :mod:`rltheory.mdp.mixing`.

References
----------
Levin, D. A., Peres, Y. & Wilmer, E. L. (2017). *Markov Chains and Mixing Times*, 2nd ed. AMS.
§12.2, Lemma 12.2, Thms 12.4–12.5.
Kelly, F. P. (1979). *Reversibility and Stochastic Networks*. Wiley. Ch. 1 (Kolmogorov's criterion).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backend import require_host, to_numpy
from .stationary import _check_chain, _eye, _leave_rates, _require_unichain, _structures

__all__ = ["SpectralGap", "spectral_gap"]


@dataclass(frozen=True)
class SpectralGap:
    """Spectrum summary of a unichain ``P``.

    Attributes
    ----------
    eigenvalues : numpy.ndarray
        All eigenvalues, sorted by decreasing real part (real when ``reversible``).
    gap : float
        ``1 − max Re λ`` over eigenvalues other than the Perron root 1.
    absolute_gap : float
        ``γ* = 1 − max |λ|`` over eigenvalues other than 1.
    relaxation_time : float
        ``t_rel = 1/γ*`` (``inf`` when ``γ* = 0``).
    reversible : bool
        Whether ``P`` is irreducible and detailed balance ``μ(s)P(s,s') = μ(s')P(s',s)``
        holds (to relative accuracy 1e-10 in every pair; Kolmogorov's criterion).
    """

    eigenvalues: np.ndarray
    gap: float
    absolute_gap: float
    relaxation_time: float
    reversible: bool


def _kolmogorov_reversible(P: np.ndarray, rtol: float = 1e-10) -> bool:
    """Detailed balance of an irreducible ``P[S, S]`` to relative accuracy ``rtol`` in every pair.

    With ``φ = log μ`` fixed along a spanning tree by ``φ(v) − φ(u) = log P(u, v) − log P(v, u)``,
    the chain is reversible iff its support is symmetric and every edge satisfies that identity
    (Kolmogorov's criterion); logarithms keep the test relative for flows of any size. The
    tolerance also admits the round-off of summing ``φ`` along paths of up to ``S`` edges.
    """
    supp = P > 0
    if not np.array_equal(supp, supp.T):
        return False
    # only edges are used; off the support P may hold round-off ≤ 0
    L = np.log(np.where(supp, P, 1.0))
    S = P.shape[0]
    phi = np.full(S, np.nan)
    phi[0] = 0.0
    queue = [0]
    while queue:
        u = queue.pop()
        for v in np.flatnonzero(supp[u] & np.isnan(phi)):
            phi[v] = phi[u] + L[u, v] - L[v, u]
            queue.append(int(v))
    u, v = np.nonzero(supp & ~np.eye(S, dtype=bool))
    eps = (
        float(np.finfo(P.dtype).eps)
        if np.issubdtype(P.dtype, np.floating)
        else float(np.finfo(float).eps)
    )
    tol = rtol + 4.0 * S * eps * (1.0 + float(np.max(np.abs(L[supp]))))
    return bool(np.all(np.abs(phi[v] - phi[u] - (L[u, v] - L[v, u])) <= tol))


def _killed_green(P: np.ndarray, k: int, scale: float = 1.0) -> np.ndarray:
    r"""``scale·G`` for ``G = B^{-1}``, ``B = (I − P)`` without row and column ``k`` (host, float64).

    ``G(i, j)`` is the expected number of visits to ``j`` before hitting ``k`` from ``i`` (every state
    reaches ``k``, so ``B`` is a nonsingular M-matrix and ``G ≥ 0``). State reduction as in GTH
    (Grassmann, Taksar & Heyman 1985): each pivot is the censored chain's leave rate, the sum of its
    off-diagonal entries and of its leak into ``k``, never ``1 − P(m, m)``; the right-hand side
    ``scale·I`` is non-negative, so only sums, products and quotients of non-negative numbers occur
    and every entry keeps a few ``u`` relative accuracy however weakly the chain is coupled. The
    censored rates stay ≤ 1; only ``G`` grows (like ``1/ε`` for couplings ``ε``), hence ``scale``
    (a power of 2) for hitting times beyond float64's range.
    """
    S = P.shape[0]
    keep = np.flatnonzero(np.arange(S) != k)
    n = keep.size
    Q = np.where(P > 0, P, 0.0)  # accepted round-off < 0 off the support is 0
    W = Q[np.ix_(keep, keep)] * (1.0 - np.eye(n))
    leak = Q[keep, k].copy()
    R = scale * np.eye(n)
    piv = np.zeros(n)
    for m in range(n - 1, -1, -1):
        piv[m] = np.sum(W[m, :m]) + leak[m]  # > 0: the censored chain leaves m towards 0..m-1 or k
        if m:
            # W(i, m)·(W(m, j)/piv) ≤ W(i, m): W(i, m)/piv would overflow for piv ≲ 1e-308
            W[:m, :m] += W[:m, m][:, None] * (W[m, :m] / piv[m])[None, :]
            leak[:m] += W[:m, m] * (leak[m] / piv[m])
            R[:m] += W[:m, m][:, None] * (R[m] / piv[m])[None, :]
    G = np.zeros((n, n))
    for m in range(n):
        G[m] = (R[m] + W[m, :m] @ G[:m]) / piv[m]
    return G


def _small_generator_eigenvalues(
    P: np.ndarray, rec: tuple[int, ...], direct_err: float
) -> np.ndarray:
    r"""The eigenvalues ``ℓ ≠ 0`` of ``I − P`` of smallest modulus, to high relative accuracy.

    With ``k`` the recurrent state of largest stationary mass, ``G = (I − P)_{−k,−k}^{-1}``
    (:func:`_killed_green`) and ``μ`` the stationary law (GTH), ``C^{-1} = G − (G1)μ_{−k}ᵀ`` is the
    inverse of ``I − P`` deflated of its null vector ``1``: ``C(i, j) = (I − P)(i, j) − (I − P)(k, j)``
    (``i, j ≠ k``) is ``I − P`` on the quotient by ``1``, and Sherman–Morrison with
    ``μ_{−k}ᵀ = μ(k) P(k, ·)G`` and ``1 + P(k, ·)G1 = 1/μ(k)`` gives its inverse. Its eigenvalues are
    ``ν = 1/ℓ`` for the ``S − 1`` eigenvalues ``ℓ ≠ 0``. ``G`` is accurate entrywise, so ``C^{-1}``
    carries the entrywise error ``E ≈ 4(S + 1)u(G + (G1)μᵀ)``. Its columns are graded like ``μ``
    (1 down to 1e-170 in the tests), which makes Euclidean eigenvalue condition numbers meaningless
    (1e61 for an eigenvalue computed to ``u``), so the bound is taken after the diagonal balancing
    ``M = D^{-1}C^{-1}D`` the eigen-solver applies anyway: to first order ``|Δν| ≤ κ_ν e`` with
    ``e = ‖D^{-1}ED‖_F + 8u‖M‖_F`` and ``κ_ν = ‖x‖‖y‖/|yᴴx|`` (right and left eigenvectors of ``M``),
    and ``ℓ`` carries the relative error ``κ_ν e|ℓ|``, where a general eigen-solver on ``I − P`` in
    ``P``'s dtype (absolute error ``direct_err`` ≈ ``u‖I − P‖``) keeps ``κ·direct_err/|ℓ|`` (4.7e-5
    for a gap of 1e-12). The eigenvalues are taken by decreasing ``|ν|`` while that route is the more
    accurate one (``e|ℓ|² ≤ direct_err``) and its bound stays below 1/2; the prefix taken is returned
    (possibly empty). Slow modes at several scales resolve only down to ``e``: the top scale's.
    """
    from scipy.linalg import eig, matrix_balance  # left eigenvectors for the condition numbers

    from .stationary import _gth

    S = P.shape[0]
    idx = np.asarray(rec)
    mu = np.zeros(S)
    mu[idx] = _gth(P[np.ix_(idx, idx)])
    k = int(np.argmax(mu))
    keep = np.flatnonzero(np.arange(S) != k)
    ex = 0  # G is held as 2^ex·G (an exponent, not a factor: 2^-1075 rounds to 0)
    with np.errstate(over="ignore", invalid="ignore"):
        G = _killed_green(P, k)
    if not np.all(np.isfinite(G)):  # hitting times beyond 1.8e308: scaled by 2^-1000 (exact)
        ex = -1000
        G = _killed_green(P, k, 2.0**ex)
        if not np.all(np.isfinite(G)):
            return np.zeros(0, dtype=complex)
    # largest entry of G near 1 (a power of 2, exact): its norms and |ν|² cannot overflow; entries
    # that underflow lie far below u‖G‖
    p2 = int(np.frexp(np.max(G))[1])
    G, ex = np.ldexp(G, -p2), ex - p2
    flow = np.sum(G, axis=1)[:, None] * mu[keep][None, :]
    Cinv = G - flow  # 2^ex·C^{-1}
    u = np.finfo(np.float64).eps / 2.0
    with np.errstate(invalid="ignore"):  # scipy casts its unused permutation output (NaN) to int
        M, (d, _) = matrix_balance(Cinv, permute=False, separate=True)
    E = 4.0 * (S + 1) * u * (G + flow) * d[None, :] / d[:, None]  # entrywise error, balanced
    nu, yl, xr = eig(M, left=True, right=True)
    kappa = np.linalg.norm(yl, axis=0) * np.linalg.norm(xr, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = kappa / np.abs(np.sum(np.conj(yl) * xr, axis=0))
    e = float(np.linalg.norm(E)) + 8.0 * u * float(np.linalg.norm(M))  # absolute error of M
    out = []
    for i in np.argsort(-np.abs(nu), kind="stable"):
        a = abs(nu[i])  # 2^ex/|ℓ|
        # relative error κe/a of ℓ = 2^ex/ν below 1/2, and below the direct route's κu‖I − P‖/|ℓ|
        if not (
            np.isfinite(kappa[i])
            and 2.0 * kappa[i] * e < a
            and np.ldexp(e, ex) <= direct_err * a * a
        ):
            break
        w = 1.0 / nu[i]  # 2^ex·ℓ, rounded once into the subnormals by ldexp
        out.append(complex(np.ldexp(w.real, ex), np.ldexp(w.imag, ex)))
    return np.asarray(out, dtype=complex)


def _drop_unresolved(rest: np.ndarray, small: np.ndarray, noise: float, real: bool) -> np.ndarray:
    """The solvers' ``ℓ`` above their noise level ``noise`` (≈ 16·S·u‖I − P‖), warning about the rest.

    An eigenvalue far below the solvers' resolution whose scale the deflated inverse does not reach
    either (chains with slow modes at several scales: 1e-140 and 1e-110 and 1e-25) is read as
    round-off of either sign, which decided the gap (0.0 where it is 6.2e-140). With the smallest
    ``|ℓ|`` resolved (``small`` non-empty, first) the others have larger moduli; a real spectrum
    (reversible chains) then has its gap among the resolved ones, and a complex one is assumed to.
    """
    bad = np.abs(rest) <= noise
    if not bad.any() or (small.size and real):
        return rest[~bad] if small.size else rest
    warnings.warn(
        f"spectral_gap: {int(bad.sum())} eigenvalue(s) of I − P lie below the eigen-solver's "
        f"resolution ({noise:.2g}) at scales the deflated inverse does not resolve; "
        + (
            f"the gaps assume none has a real part below the smallest resolved ℓ = "
            f"{float(np.min(small.real)):.6g} (true for real eigenvalues)"
            if small.size
            else "they are taken as computed (round-off)"
        ),
        RuntimeWarning,
        stacklevel=3,
    )
    return rest[~bad] if small.size else rest


def spectral_gap(P: Any) -> SpectralGap:
    r"""Spectral gap ``1 − λ₂``, absolute gap ``γ* = 1 − max_{λ≠1}|λ|`` and ``t_rel = 1/γ*`` of a unichain ``P``.

    Reversible chains with ``μ > 0`` use the symmetric matrix ``D^{1/2} P D^{-1/2}``
    (``D = diag μ``), whose real eigenvalues are those of ``P`` (LPW 2017, Lemma 12.2),
    computed with ``eigvalsh`` in the array namespace. By detailed balance its entries are
    ``√(μ(s)/μ(s')) P(s, s') = √(P(s, s') P(s', s))``, which is how it is formed: no entry of
    ``μ`` is used, so stationary laws spanning many orders of magnitude (a birth–death
    chain with drift, ``μ_min`` from 1e-19 to 1e-177 in the tests) lose no accuracy. Other chains use a general
    eigen-solver on the host. The Perron root 1 is removed once; for ``S = 1`` both
    gaps are 1.

    Reversibility is decided on the host by Kolmogorov's criterion (Kelly 1979, ch. 1):
    the support is symmetric, and the potential ``φ`` built along a
    spanning tree by ``φ(s') − φ(s) = log P(s, s') − log P(s', s)`` (``φ = log μ`` + const)
    satisfies that identity on every edge to ``1e-10`` — detailed balance to relative accuracy
    ``1e-10`` in every pair, however small ``μ(s)P(s, s')`` is. (An absolute test on the
    flows ``μ(s)P(s, s')`` called a chain whose non-reversible part carries mass ``1e-13``
    reversible, and its symmetrised spectrum was wrong by 0.7.)

    Gaps below 1/2 are read from the eigenvalues ``ℓ = 1 − λ`` of the generator ``I − P`` (its
    symmetrised form for reversible chains), whose diagonal is formed as the leave rates
    ``Σ_{j≠s} P(s, j)`` (so a row's diagonal entry is never used: ``P(s, s)`` counts as
    ``1 − Σ_{j≠s} P(s, j)``): ``1 − λ₂`` from the spectrum of ``P`` cancels and kept only ``u/gap``
    relative accuracy (9e-4 for a cycle with laziness ``1 − 2⁻⁴⁰``); the absolute gap is
    ``min (2 Re ℓ − |ℓ|²)/(1 + |1 − ℓ|)``. Larger gaps come from the spectrum of ``P``.

    Accuracy: an eigen-solver on ``I − P`` (symmetric or general) is normwise backward stable, so a
    small ``ℓ`` carries an absolute error of about ``u`` — a relative ``u/gap`` (5e-5 at couplings
    1e-12 on 4–8 states, reversible or not; a gap of 8e-21 came out as 1.1e-16) — although the
    small eigenvalues are determined to a few ``u`` relative by the entries (2u relative
    perturbations of the off-diagonal entries moved a 3e-12 gap by 1e-16 relative). Whenever some
    ``|ℓ| < 1/2``, the smallest ones are recomputed as ``1/ν`` for the eigenvalues ``ν`` of the
    inverse of ``I − P`` deflated of its null vector, assembled from the hitting-time matrix
    ``G = (I − P)_{−k,−k}^{-1}`` of the heaviest state ``k`` by subtraction-free state reduction
    (GTH), on the host: ``ℓ`` then has relative error about ``κ u|ℓ|‖G‖`` (``κ`` its eigenvalue
    condition number), a few ``u`` for the slow modes of nearly decomposable chains however weak
    the coupling (1e-12 to 1e-300 in the tests). Each ``ℓ`` is taken from the route with the
    smaller first-order error bound (condition numbers after diagonal balancing). Slow modes at
    several scales (1e-140, 1e-110, 1e-25): only the smallest scale is resolved, and the solvers'
    estimates of the others are round-off; they are left out, since their moduli exceed the
    resolved ones — which settles the gaps for a real spectrum (reversible chains) and is an
    assumption, stated in a ``RuntimeWarning``, for a complex one.

    Nearly periodic chains are the exception: when the eigenvalue of largest modulus lies near
    another root of unity (``λ ≈ −1 + ε``), ``γ* = 1 − |λ|`` carries an absolute error of about
    ``u`` (relative ``u/γ*``: 1.6e-2 at ``γ* = 2.4e-14`` on a 6-state nearly bipartite chain). That
    is the conditioning of ``γ*`` in this convention, not the solver's: the diagonal
    ``1 − Σ_{j≠s} P(s, j)`` moves by ``u`` under relative perturbations ``u`` of the ``O(1)`` cyclic
    entries, and so does ``γ*`` (2u relative perturbations of the off-diagonal entries moved that
    ``γ*`` by 5e-3 relative, 50-digit arithmetic).

    The absolute gap governs geometric convergence: ``‖P^t(s,·) − μ‖`` decays like
    ``(1 − γ*)^t`` (LPW Thm 12.4 for reversible chains; the second-largest
    eigenvalue modulus in general).

    Warns
    -----
    RuntimeWarning
        A non-reversible chain has eigenvalues ``ℓ`` below the solvers' resolution at scales the
        deflated inverse does not resolve (see Accuracy above).

    Raises
    ------
    ValueError
        ``P`` is multichain (eigenvalue 1 is repeated).
    TypeError
        A non-reversible chain on a device array (the general eigen-solver is host only).

    Examples
    --------
    >>> import numpy as np
    >>> sg = spectral_gap(np.array([[0.75, 0.25], [0.25, 0.75]]))
    >>> float(sg.gap), float(sg.absolute_gap), sg.reversible
    (0.5, 0.5, True)
    """
    xp, P = _check_chain(P, "spectral_gap")
    if P.ndim != 2:
        raise ValueError(f"spectral_gap takes one chain (S, S); got shape {tuple(P.shape)}")
    _require_unichain(P, "spectral_gap")
    S = P.shape[-1]
    # detailed balance with μ > 0 (irreducible: transient states have μ = 0)
    reversible = _structures(P)[0].irreducible and _kolmogorov_reversible(to_numpy(P))
    # Both spectra: λ of P, and ℓ of the generator I − P with its diagonal 1 − P(s, s) formed as the
    # leave rate Σ_{j≠s} P(s, j) (GTH's rule). A gap below 1/2 is read from ℓ (its eigenvalue is near
    # λ = 1, where 1 − λ cancels: a lazy chain with laziness 1 − 2⁻⁴⁰ had its gap off by 1e-3
    # relative), a larger one from λ (eigenvalues of P near 0 keep P's exact zero structure)
    off, leave = _leave_rates(xp, P)
    if reversible:
        # off the support P may hold accepted round-off < 0 (entries ≥ −atol pass the checks): √ of it
        # was NaN and eigvalsh failed to converge
        r = xp.sqrt(xp.where(P > 0, P, xp.zeros_like(P)))
        # √(P(s,s')P(s',s)) = D^{1/2} P D^{-1/2} (detailed balance)
        sym = r * xp.matrix_transpose(r)
        lam = np.sort(to_numpy(xp.linalg.eigvalsh(sym)))[::-1]
        gen = leave[:, None] * _eye(xp, S, P) - sym * (1.0 - _eye(xp, S, P))
        ell = np.sort(to_numpy(xp.linalg.eigvalsh(gen)))
    else:
        lam = np.linalg.eigvals(require_host(P, "spectral_gap of a non-reversible chain"))
        lam = lam[np.argsort(-lam.real, kind="stable")]
        ell = np.linalg.eigvals(np.diag(to_numpy(leave)) - to_numpy(off))
    if S == 1:
        return SpectralGap(np.asarray(lam), 1.0, 1.0, 1.0, reversible)
    others = np.delete(lam, int(np.argmin(np.abs(lam - 1.0))))
    ell = np.delete(ell, int(np.argmin(np.abs(ell))))  # the Perron root λ = 1 is ℓ = 0
    if np.min(np.abs(ell)) < 0.5:
        # the smallest ℓ to high relative accuracy from the deflated inverse: the solvers above keep
        # an absolute u‖I − P‖ only (4.7e-5 relative at a gap of 1e-12, symmetric path included), in
        # P's dtype (float32 kept 1.6e-7 at a gap of 0.2); they replace as many of the smallest ℓ
        direct_err = float(np.finfo(to_numpy(P).dtype).eps) * float(np.max(to_numpy(leave)))
        small = _small_generator_eigenvalues(
            to_numpy(P).astype(np.float64), _structures(P)[0].recurrent_classes[0], direct_err
        )
        if reversible:
            # C^{-1} is similar to a symmetric matrix: the imaginary parts are rounding's
            small = small.real
        rest = ell[np.argsort(np.abs(ell), kind="stable")][small.size :]
        ell = np.concatenate(
            [small, _drop_unresolved(rest, small, 16.0 * S * direct_err, reversible)]
        )
    gap = float(np.min(ell.real))
    if gap > 0.5:
        gap = float(1.0 - np.max(others.real))
    # 1 − |1 − ℓ| = (2 Re ℓ − |ℓ|²) / (1 + |1 − ℓ|), without cancellation for small ℓ
    agap = float(np.min((2.0 * ell.real - np.abs(ell) ** 2) / (1.0 + np.abs(1.0 - ell))))
    if agap > 0.5:
        agap = float(1.0 - np.max(np.abs(others)))
    # |λ| ≤ 1 for a stochastic P, so 0 ≤ γ* ≤ gap ≤ 2: round-off outside moves back towards the truth
    # (the 3-cycle's |λ| = 1 gave γ* = −8.9e-16)
    gap, agap = min(max(gap, 0.0), 2.0), min(max(agap, 0.0), 1.0)
    return SpectralGap(
        np.asarray(lam), gap, agap, 1.0 / agap if agap > 0 else float("inf"), reversible
    )
