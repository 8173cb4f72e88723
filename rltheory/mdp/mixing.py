r"""Long-run quantities of a Markov chain: stationary distributions, the limiting
matrix, exact mixing times, spectral gaps and hitting times.

Notation for a chain ``P[s, s']``:

* stationary distribution ``μᵀP = μᵀ``, ``Σ μ = 1`` — unique iff ``P`` is unichain;
  then ``μᵀ = 1ᵀ(I − P + 11ᵀ)^{-1}``                                      (:func:`stationary_distribution`)
* limiting (Cesàro) matrix ``P* = lim_N (1/N) Σ_{t<N} P^t``: row ``s`` is
  ``Σ_k f_k(s) μ_k`` where ``μ_k`` is the stationary law of recurrent class
  ``k`` and ``f_k(s)`` the probability of being absorbed in it
  (Puterman 1994, App. A.4, Thm A.7)                                       (:func:`limiting_matrix`)
* ``d(t) = max_s ‖P^t(s, ·) − P*(s, ·)‖_TV``, non-increasing in ``t``, and the
  mixing time ``t_mix(ε) = min{t : d(t) ≤ ε}`` (Levin, Peres & Wilmer 2017,
  §4.5; ``P*(s, ·) = μ`` for unichain chains)                               (:func:`mixing_time`)
* spectral gap ``1 − λ₂`` and absolute spectral gap ``γ* = 1 − max_{λ≠1}|λ|``,
  relaxation time ``t_rel = 1/γ*`` (LPW §12.2)                             (:func:`spectral_gap`)
* expected hitting times ``E_s[τ_B]``, ``τ_B = min{t ≥ 0 : X_t ∈ B}``       (:func:`hitting_times`)

The stationary distribution and the limiting matrix are computed in
:mod:`rltheory.mdp.stationary`, the spectral gap in :mod:`rltheory.mdp.mixing_spectral`;
all are re-exported here.
The unichain kernels (:func:`stationary_distribution`, :func:`mixing_time`)
are array-API code and accept batches ``P[..., S, S]``; routines that need the
class structure read the support of ``P`` on the host (see
:mod:`rltheory.mdp.structure`).

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. Appendix A.
Levin, D. A., Peres, Y. & Wilmer, E. L. (2017). *Markov Chains and Mixing Times*, 2nd ed.
AMS. §1.5 (stationary distributions), §4.4–4.5 (TV distance, mixing), §12.2 (spectral gap),
Thms 12.4–12.5 (relaxation-time bounds).
Kelly, F. P. (1979). *Reversibility and Stochastic Networks*. Wiley. Ch. 1 (Kolmogorov's criterion).
Norris, J. R. (1997). *Markov Chains*. Cambridge. Thm 1.3.5 (hitting times), Thm 1.7.7
(Kac: ``E_s[τ_s⁺] = 1/μ(s)`` for irreducible chains).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._validate import real_scalar
from ..backend import as_float, to_numpy
from .mixing_spectral import SpectralGap, spectral_gap
from .stationary import (
    _check_chain,
    _eye,
    _first_violation,
    _ill_conditioned,
    _leave_rates,
    _relative_values,
    _structures,
    limiting_matrix,
    stationary_distribution,
)
from .structure import ChainStructure

__all__ = [
    "stationary_distribution",
    "limiting_matrix",
    "tv_distances",
    "mixing_time",
    "SpectralGap",
    "spectral_gap",
    "hitting_times",
]


def _tv_to_limit(xp: Any, M: Any, Pstar: Any) -> Any:
    """``max_s ½ Σ_j |M(s, j) − P*(s, j)|`` over the last two axes."""
    return xp.max(0.5 * xp.sum(xp.abs(M - Pstar), axis=-1), axis=-1)


def _stochastic_product(xp: Any, A: Any, B: Any) -> Any:
    """``A @ B`` for stochastic ``A``, ``B``, each row divided by its computed sum.

    The entries are sums of products of non-negative numbers, accurate to a few ``u`` relative, but
    a row sum ``1 + ε`` becomes ``(1 + ε)²`` on squaring: after ``k`` squarings the defect ``2^k u``
    sat in the large entries, and on a slowly mixing chain it swamped the small change of ``d(t)``
    per step. ``t_mix(1/4)`` of the two-state chain with laziness ``1 − 1e-12`` came out
    346581256853 instead of 346581257254, and of two blocks ``[[1/2, 1/2], [1/2, 1/2]]`` coupled by
    ``2^-40`` 190530845645 instead of 190530846197. Normalised, every power keeps a defect of a few
    ``S u``.
    """
    C = A @ B
    return C / xp.sum(C, axis=-1)[..., None]


def _require_aperiodic(P: Any, what: str) -> None:
    bad = _first_violation(P, lambda cs: cs.aperiodic)
    if bad is not None:
        raise ValueError(
            f"{what}: P{bad[0]} is periodic ({bad[1].describe()}), so d(t) does not tend to 0 and "
            "t_mix(ε) is infinite for small ε; use the lazy chain (I + P)/2"
        )


# Exact resolution of d(t) ≈ ε -------------------------------------------------------------------
# A float d(t) within round-off of ε decides t_mix by the sign of its rounding error: on the chain
# [[0, 1/4, 0, 3/4], [1/2, 1/2, 0, 0], [0, 0, 1/2, 1/2], [1/4, 0, 1/4, 1/2]], d(2) = 3/8 exactly but
# the float curve gives 0.37500000000000006, so t_mix(3/8) came out 3 instead of 2. Every float is
# a dyadic rational, so the given P and ε define d(t) exactly; near ε it is evaluated in rationals.

# S³ · t · (bits of P's common denominator): about a second of big-integer work
_EXACT_BUDGET = 10**7


def _exact_solve(M: list[list[Fraction]], b: list[Fraction]) -> list[Fraction]:
    """``M x = b`` in rationals by Gauss–Jordan elimination (``M`` nonsingular)."""
    n = len(b)
    A = [row[:] + [b[i]] for i, row in enumerate(M)]
    for c in range(n):
        p = next(r for r in range(c, n) if A[r][c] != 0)
        A[c], A[p] = A[p], A[c]
        piv = A[c][c]
        A[c] = [x / piv for x in A[c]]
        for r in range(n):
            if r != c and A[r][c] != 0:
                f = A[r][c]
                A[r] = [x - f * y for x, y in zip(A[r], A[c], strict=True)]
    return [A[i][n] for i in range(n)]


def _exact_limit(P: list[list[Fraction]], cs: ChainStructure) -> list[list[Fraction]]:
    """``P*`` in rationals: ``μ_k`` on each recurrent class, absorption ``(I − Q) F = B`` off them."""
    S = len(P)
    out = [[Fraction(0)] * S for _ in range(S)]
    T = list(cs.transient)
    for C in cs.recurrent_classes:
        n = len(C)
        # μᵀ(I − P_CC + 11ᵀ) = 1ᵀ, solved as the transposed system
        M = [[Fraction(int(i == j)) - P[C[j]][C[i]] + 1 for j in range(n)] for i in range(n)]
        mu = _exact_solve(M, [Fraction(1)] * n)
        for s in C:
            out[s] = [Fraction(0)] * S
            for k, c in enumerate(C):
                out[s][c] = mu[k]
        if T:
            A = [
                [Fraction(int(i == j)) - P[T[i]][T[j]] for j in range(len(T))]
                for i in range(len(T))
            ]
            f = _exact_solve(A, [sum((P[t][c] for c in C), Fraction(0)) for t in T])
            for i, t in enumerate(T):
                for k, c in enumerate(C):
                    out[t][c] = f[i] * mu[k]
    return out


def _exact_tmix(P: np.ndarray, cs: ChainStructure, eps: float, t_guess: int) -> int | None:
    """Exact ``t_mix(ε)`` of the float chain ``P`` near ``t_guess``; ``None`` when over the budget or
    when a row does not sum to exactly 1 (a float32 row within tolerance: ``d`` is then undefined)."""
    S = P.shape[0]
    if S**3 * max(t_guess, 1) > _EXACT_BUDGET:  # before building S² fractions for a large chain
        return None
    Pq = [[Fraction(float(x)) for x in row] for row in P]
    if any(sum(row, Fraction(0)) != 1 for row in Pq):
        return None
    den = max(x.denominator for row in Pq for x in row)  # a power of 2: a common denominator
    if S**3 * max(t_guess, 1) * max(den.bit_length(), 1) > _EXACT_BUDGET:
        return None
    N = np.array([[int(x * den) for x in row] for row in Pq], dtype=object)
    Pstar = _exact_limit(Pq, cs)
    e = Fraction(eps)

    def power(t: int) -> Any:
        R, B = np.identity(S, dtype=object) * 1, N
        while t:
            if t & 1:
                R = R.dot(B)
            B, t = B.dot(B), t >> 1
        return R

    def within(Nt: Any, t: int) -> bool:  # d(t) ≤ ε with P^t = N^t / den^t
        scale = den**t
        return all(
            sum(abs(Fraction(int(Nt[s, j]), scale) - Pstar[s][j]) for j in range(S)) <= 2 * e
            for s in range(S)
        )

    t = max(t_guess - 1, 0)
    Nt = power(t)
    if within(Nt, t):  # go down: d is non-increasing, so the first t with d(t) ≤ ε lies below
        while t > 0:
            prev = power(t - 1)
            if not within(prev, t - 1):
                return t
            Nt, t = prev, t - 1
        return 0
    # d(t) > ε: step up (d(t) → 0 for an aperiodic chain, and the float search was close)
    for _ in range(64):
        Nt, t = Nt.dot(N), t + 1
        if within(Nt, t):
            return t
    return (
        None  # far from the float answer: not a round-off tie (entries < 0 accepted as round-off)
    )


def tv_distances(P: Any, t_max: int) -> Any:
    r"""``d(t) = max_s ‖P^t(s, ·) − P*(s, ·)‖_TV`` for ``t = 0, …, t_max`` by repeated multiplication.

    The brute-force curve behind :func:`mixing_time` (``t_max`` matrix products).

    Returns
    -------
    array, shape (..., t_max + 1)
    """
    t = (
        t_max.item()
        if isinstance(t_max, np.ndarray) and t_max.ndim == 0 and t_max.dtype.kind in "iu"
        else t_max
    )
    # mixing_time gives 0-d arrays
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 0:
        raise ValueError(f"t_max must be a non-negative integer; got {t_max!r}")
    t_max = int(t)
    xp, P = _check_chain(P, "tv_distances")
    Pstar = limiting_matrix(P)
    M = xp.broadcast_to(_eye(xp, P.shape[-1], P), P.shape)
    out = [_tv_to_limit(xp, M, Pstar)]
    for _ in range(int(t_max)):
        M = _stochastic_product(xp, M, P)
        out.append(_tv_to_limit(xp, M, Pstar))
    return xp.stack(out, axis=-1)


def mixing_time(P: Any, eps: float = 0.25) -> Any:
    r"""Exact mixing time ``t_mix(ε) = min{t ≥ 0 : max_s ‖P^t(s, ·) − P*(s, ·)‖_TV ≤ ε}``.

    For a unichain chain ``P*(s, ·) = μ`` and this is the mixing time of Levin,
    Peres & Wilmer (2017, eq. (4.32)). ``d(t)`` is non-increasing (``P^{t+1} − P* =
    P(P^t − P*)`` and TV is convex; LPW Exercise 4.2), so ``t_mix`` is found exactly by
    repeated squaring ``P, P², P⁴, …`` until ``d(2^K) ≤ ε`` and a binary descent over
    the stored powers: ``O(S³ log t_mix)`` work instead of ``O(S³ t_mix)``.

    Parameters
    ----------
    P : array, shape (..., S, S)
        Aperiodic chain (every recurrent class of period 1).
    eps : float in (0, 1)

    Returns
    -------
    int array, shape (...)

    Raises
    ------
    ValueError
        ``eps`` outside (0, 1), or a periodic chain (``t_mix(ε)`` is infinite for small ε);
        the message names the classes and periods.

    Notes
    -----
    Exact ties: a float ``d(t)`` within round-off of ``ε`` would decide ``t_mix`` by the sign of its
    rounding error (``d(2) = 3/8`` exactly came out ``0.37500000000000006``, and ``t_mix(3/8)`` as 3
    instead of 2). Every float is a dyadic rational, so ``P`` and ``ε`` define ``d(t)`` exactly:
    when ``d(t_mix − 1)`` or ``d(t_mix)`` lies within ``16 S u (t_mix + 2)`` of ``ε`` (``u`` the unit
    round-off), the instance is re-decided in rational arithmetic on the host (``P*`` by exact
    elimination, ``P^t`` in big integers), provided its rows sum to exactly 1 and
    ``S³ · t_mix · log₂(denominator of P) ≤ 10⁷``; beyond that the float comparison stands.

    Slow chains: each product of powers has its rows divided by their computed sums. Unnormalised,
    a row-sum defect ``u`` doubled with each squaring and sat in the large entries, and ``t_mix``
    of a chain with laziness ``1 − 1e-12`` was off by 32221 steps; it now matches an 80-digit
    reference on lazy, cyclic and nearly decomposable chains with ``t_mix`` up to ``2·10¹²``.

    For reversible irreducible chains, ``(t_rel − 1) log(1/(2ε)) ≤ t_mix(ε) ≤
    t_rel log(1/(ε μ_min))`` (LPW Thms 12.4–12.5), see
    :func:`rltheory.bounds.average.mixing_time_spectral_bounds`.

    Examples
    --------
    The lazy walk on two points: ``d(t) = 2^{-t}/2`` (eigenvalue 1/2), so ``t_mix(1/4) = 1``
    and ``t_mix(0.01) = 6``:

    >>> import numpy as np
    >>> P = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> int(mixing_time(P)), int(mixing_time(P, 0.01))
    (1, 6)
    """
    if not 0.0 < real_scalar(eps) < 1.0:  # numpy scalars and 0-d arrays as numbers; not bools
        raise ValueError(f"eps must lie in (0, 1); got {eps!r}")
    eps = real_scalar(eps)
    xp, P = _check_chain(P, "mixing_time")
    _require_aperiodic(P, "mixing_time")
    Pstar = limiting_matrix(P)
    S = P.shape[-1]
    eye = xp.broadcast_to(_eye(xp, S, P), P.shape)
    done0 = _tv_to_limit(xp, eye, Pstar) <= eps
    powers = [P]
    while not bool(xp.all(_tv_to_limit(xp, powers[-1], Pstar) <= eps)):
        if len(powers) > 62:
            far = to_numpy(_tv_to_limit(xp, powers[-1], Pstar) > eps).reshape(-1)
            batch = tuple(P.shape[:-2])
            where = (
                f" (batch index {tuple(int(j) for j in np.unravel_index(int(np.argmax(far)), batch))})"
                if batch
                else ""
            )
            # no value of d is printed: an eigenvalue within round-off of 1 makes the computed d
            # meaningless; eps below the round-off in d(t) is named as such, even for fast chains
            floor = 16.0 * S * float(xp.finfo(P.dtype).eps)
            if eps < floor:
                raise ValueError(
                    f"mixing_time: eps = {eps} is below the round-off level 16·S·u = {floor:.3g} of d(t) in "
                    f"{P.dtype} arithmetic{where}: the computed d(t) settles at round-off and never reaches eps, "
                    "so t_mix(eps) cannot be decided in floating point; use eps >= that level"
                )
            raise ValueError(
                f"mixing_time: d(2^62) > eps = {eps}{where} in {P.dtype} arithmetic; the chain does not mix "
                "in representable time, or its slowest eigenvalues lie within round-off of 1, so "
                "t_mix(eps) cannot be computed"
            )
        powers.append(_stochastic_product(xp, powers[-1], powers[-1]))
    M = eye
    t = xp.zeros(tuple(P.shape[:-2]), dtype=xp.int64, device=P.device)
    for j in range(len(powers) - 2, -1, -1):
        cand = _stochastic_product(xp, M, powers[j])
        far = _tv_to_limit(xp, cand, Pstar) > eps
        M = xp.where(far[..., None, None], cand, M)
        t = t + xp.where(far, xp.asarray(2**j, dtype=xp.int64, device=P.device), xp.zeros_like(t))
    t_mix = xp.where(done0, xp.zeros_like(t), t + 1)
    return _resolve_ties(xp, P, eps, t_mix, M, Pstar)


def _resolve_ties(xp: Any, P: Any, eps: float, t_mix: Any, M: Any, Pstar: Any) -> Any:
    """Re-decide, in rationals, the instances whose ``d(t_mix − 1)`` or ``d(t_mix)`` lies within
    round-off of ``ε`` (``M = P^{t_mix − 1}``, or ``I`` where ``t_mix = 0``)."""
    S = P.shape[-1]
    # d̂ − d: P^t from ≲ 2 log₂ t products of stochastic matrices whose errors add up to ~t·S·u, P*
    # from a backward-stable solve; the band is generous, as a tie found in it only costs exact work
    u = float(xp.finfo(P.dtype).eps)
    tm = to_numpy(t_mix).reshape(-1)
    band = 16.0 * S * u * (tm.astype(np.float64) + 2.0)
    d_before = to_numpy(_tv_to_limit(xp, M, Pstar)).reshape(-1)
    d_at = to_numpy(_tv_to_limit(xp, _stochastic_product(xp, M, P), Pstar)).reshape(-1)
    zero = tm == 0  # M = I: d(0) itself is the value to check
    near = np.abs(np.where(zero, d_before, d_at) - eps) <= band
    near |= ~zero & (np.abs(d_before - eps) <= band)
    if not near.any():
        return t_mix
    Ph = to_numpy(P).reshape((-1, S, S))
    structs = _structures(P)
    out = tm.copy()
    for i in np.flatnonzero(near):
        exact = _exact_tmix(Ph[i], structs[i], eps, int(tm[i]))
        if exact is not None:
            out[i] = exact
    return xp.asarray(out.reshape(tuple(t_mix.shape)), dtype=xp.int64, device=P.device)


def hitting_times(P: Any, target: Any) -> Any:
    r"""Expected hitting times ``k_B(s) = E_s[τ_B]``, ``τ_B = min{t ≥ 0 : X_t ∈ B}``.

    ``k_B`` is the minimal non-negative solution of ``k = 0`` on ``B``,
    ``k(s) = 1 + Σ_s' P(s, s') k(s')`` off ``B`` (Norris 1997, Thm 1.3.5). States from
    which some path reaches a state that cannot reach ``B`` have ``k = ∞``; the
    others solve a nonsingular linear system restricted to them. Where that system is
    ill-conditioned (a conditioning probe flags parts of the chain coupled by ``δ ≲ 1e-4``; the
    solve kept only ``u/δ``, 8% relative at ``δ ~ 1e-14``), it is solved on the host by
    subtraction-free state reduction instead, accurate to a few ``u`` relative in every entry.

    Parameters
    ----------
    P : array, shape (S, S)
    target : int, sequence of int, or boolean array (S,)
        The set ``B`` (non-empty).

    Returns
    -------
    array, shape (S,) with ``inf`` where ``E_s[τ_B] = ∞``.

    Examples
    --------
    Fair ±1 walk on {0, 1, 2, 3} absorbed at both ends: ``E_1[τ] = E_2[τ] = 2``:

    >>> import numpy as np
    >>> P = np.array([[1, 0, 0, 0], [.5, 0, .5, 0], [0, .5, 0, .5], [0, 0, 0, 1.]])
    >>> hitting_times(P, [0, 3])
    array([0., 2., 2., 0.])
    """
    xp, P = _check_chain(P, "hitting_times")
    if P.ndim != 2:
        raise ValueError(f"hitting_times takes one chain (S, S); got shape {tuple(P.shape)}")
    S = P.shape[-1]
    B = np.zeros(S, dtype=bool)
    tgt = np.asarray(to_numpy(target))
    if tgt.dtype == bool:
        if tgt.shape != (S,):
            raise ValueError(f"a boolean target must have shape ({S},); got {tgt.shape}")
        B = tgt.copy()
    else:
        idx = np.atleast_1d(tgt)
        if (
            idx.size == 0
            or not np.issubdtype(idx.dtype, np.integer)
            or idx.min() < 0
            or idx.max() >= S
        ):
            raise ValueError(
                f"target must be non-empty state indices in [0, {S}); got {tgt.tolist()}"
            )
        B[idx] = True
    if not B.any():
        raise ValueError("target set B is empty")
    adj = to_numpy(P > 0)
    # states that can reach B (reverse reachability)
    reach = B.copy()
    while True:
        new = reach | np.any(adj & reach[None, :], axis=1)
        if np.array_equal(new, reach):
            break
        reach = new
    # finite iff no path avoiding B leads to a state that cannot reach B
    bad = ~reach
    adj_off = adj & ~B[:, None]
    while True:
        new = bad | (np.any(adj_off & bad[None, :], axis=1) & ~B)
        if np.array_equal(new, bad):
            break
        bad = new
    m_np = (~bad & ~B).astype(float)
    m = xp.asarray(as_float(m_np, xp, P.dtype), device=P.device)
    # I − mPm with the diagonal 1 − P(s, s) of the solved states formed as Σ_{j≠s} P(s, j): a state
    # held w.p. 1 − δ otherwise keeps only ε/δ relative accuracy in its hitting time
    off, leave = _leave_rates(xp, P)
    diag = m * leave + (1.0 - m)
    M = diag[:, None] * _eye(xp, S, P) - m[:, None] * off * m[None, :]
    k, ill = _ill_conditioned(xp, M, m)
    # parts coupled by δ: the solve keeps only u/δ; subtraction-free reduction instead
    if ill.any():
        keep = np.flatnonzero(~bad)  # the solved states move only within themselves and B
        Pk = to_numpy(P).astype(np.float64)[np.ix_(keep, keep)]
        kk = np.zeros(S)
        kk[keep] = _relative_values(Pk, np.ones(keep.size), np.flatnonzero(B[keep]))
        k = xp.asarray(kk, dtype=P.dtype, device=P.device)
    badx = xp.asarray(as_float(bad.astype(float), xp, P.dtype), device=P.device) > 0.5
    return xp.where(badx, xp.asarray(float("inf"), dtype=P.dtype, device=P.device), k)
