r"""Stationary distributions and the limiting (Cesàro) matrix of a finite Markov chain.

* stationary distribution ``μᵀP = μᵀ``, ``Σ μ = 1``, unique iff ``P`` is unichain; then
  ``μᵀ = 1ᵀ(I − P + 11ᵀ)^{-1}`` (:func:`stationary_distribution`; GTH state reduction on
  request or when that system is numerically singular);
* limiting matrix ``P* = lim_N (1/N) Σ_{t<N} P^t``: row ``s`` is ``Σ_k f_k(s) μ_k`` with ``μ_k``
  the stationary law of recurrent class ``k`` and ``f_k(s)`` the probability of absorption in it
  (:func:`limiting_matrix`, absorption probabilities by subtraction-free state reduction).

Also the shared chain checks of the long-run layer (shape and simplex rows, the host class
structure of every instance of a batch). Both public functions are re-exported by
:mod:`rltheory.mdp.mixing`.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. Appendix A.4, Thm A.7.
Levin, D. A., Peres, Y. & Wilmer, E. L. (2017). *Markov Chains and Mixing Times*, 2nd ed. AMS.
§1.5, Cor. 1.17.
Grassmann, W. K., Taksar, M. I. & Heyman, D. P. (1985). Regenerative analysis and steady state
distributions for Markov chains. *Operations Research* 33(5), 1107–1116.
O'Cinneide, C. A. (1993). Entrywise perturbation theory and error analysis for Markov chains.
*Numerische Mathematik* 65, 109–120.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_probability
from ..backend import array_namespace, as_float, to_numpy
from ..errors import InvalidModelError
from .structure import ChainStructure, _structure_from_support

__all__ = ["stationary_distribution", "limiting_matrix"]


def _check_chain(P: Any, what: str) -> tuple[Any, Any]:
    xp = array_namespace(P)
    P = as_float(P, xp)
    if P.ndim < 2 or P.shape[-1] != P.shape[-2] or P.shape[-1] < 1:
        raise InvalidModelError(f"{what}: P must have shape (..., S, S); got {tuple(P.shape)}")
    check_probability(P, "P", ("s", "s'"), "P[s, :]")
    # entries in [−atol, 0) pass as round-off and the class structure reads them as 0 (P > 0): the
    # kernels must too. Kept, a −1e-9 on a transient row's edge to a class it cannot reach made
    # limiting_matrix put −0.001 and 1.001 on the two absorbing states (truth: 1 and 0)
    return xp, xp.where(P > 0, P, xp.zeros_like(P))


def _structures(P: Any) -> list[ChainStructure]:
    """Host structure of every instance of a batch ``P[..., S, S]`` (flattened order)."""
    supp = to_numpy(P > 0)
    S = supp.shape[-1]
    return [_structure_from_support(a) for a in supp.reshape((-1, S, S))]


def _first_violation(P: Any, ok: Any) -> tuple[str, ChainStructure, tuple[int, ...]] | None:
    """``(where, structure, batch index)`` of the first instance of ``P[..., S, S]`` failing ``ok``."""
    batch = tuple(P.shape[:-2])
    for i, cs in enumerate(_structures(P)):
        if not ok(cs):
            idx = tuple(int(j) for j in np.unravel_index(i, batch)) if batch else ()
            return (f" (batch index {idx})" if batch else ""), cs, idx
    return None


def _require_unichain(P: Any, what: str) -> None:
    bad = _first_violation(P, lambda cs: cs.unichain)
    if bad is not None:
        raise ValueError(
            f"{what} needs a unichain P (one recurrent class) but P{bad[0]} has {bad[1].describe()}; "
            "use limiting_matrix for one stationary law per recurrent class"
        )


def _flag(x: Any, name: str) -> bool:
    """A switch given as ``True``/``False`` (``numpy.bool_`` too): ``'no'`` is truthy and ``0`` would pass
    ``is False`` tests unnoticed, so anything else is refused."""
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {x!r}")
    return bool(x)


def _eye(xp: Any, n: int, like: Any) -> Any:
    return xp.eye(n, dtype=like.dtype, device=like.device)


def _gth(P: np.ndarray) -> np.ndarray:
    """Stationary law of an irreducible stochastic ``P[S, S]`` by GTH state reduction.

    Grassmann, Taksar & Heyman (1985): censor the chain to states ``0..n−1`` for
    ``n = S−1, …, 1`` and back-substitute. Only sums and products of non-negative numbers
    occur (the diagonal is never used), so every entry of ``μ`` has small relative error
    however weakly the chain's parts are coupled (O'Cinneide 1993).
    """
    P = np.array(P, dtype=np.float64, copy=True)
    P[~(P > 0)] = 0.0  # accepted round-off < 0 is no transition (as in the class structure)
    S = P.shape[-1]
    leave = np.zeros(S)
    for n in range(S - 1, 0, -1):
        leave[n] = np.sum(P[n, :n])  # > 0: from n the censored chain reaches 0..n-1 (irreducible)
        # P(i, n)·(P(n, j)/L(n)) ≤ P(i, n): the ratio P(i, n)/L(n) overflowed for a leave rate L(n)
        # below ~1e-308 (5e-324 gave μ = NaN)
        P[:n, :n] += np.outer(P[:n, n], P[n, :n] / leave[n])
    mu = np.zeros(S)
    mu[0] = 1.0
    for n in range(1, S):
        v = mu[:n] @ P[:n, n]  # ≤ Σ μ[:n]
        # μ(n) beyond 1e300·max μ[:n]: rescale to μ(n) = 1 (μ[:n] underflows)
        if v > leave[n] * 1e300:
            mu[:n] *= leave[n] / v
            mu[n] = 1.0
        else:
            mu[n] = v / leave[n]
    return mu / np.sum(mu)


def _gth_unichain(
    xp: Any, P: Any, what: str, only: np.ndarray | None = None, mu: Any = None
) -> Any:
    """GTH on each instance's recurrent class (``μ`` vanishes on transient states), on the host.

    With a boolean ``only`` over the flattened batch, only those instances are recomputed and the
    others keep their rows of ``mu``."""
    Ph = to_numpy(P).astype(np.float64)
    S = Ph.shape[-1]
    flat = Ph.reshape((-1, S, S))
    out = (
        np.zeros(flat.shape[:-1])
        if mu is None
        else to_numpy(mu).astype(np.float64).reshape(flat.shape[:-1])
    )
    for i, cs in enumerate(_structures(P)):
        if only is not None and not only[i]:
            continue
        if not cs.unichain:
            _require_unichain(P, what)  # raises, naming the instance
        rec = np.asarray(cs.recurrent_classes[0])
        out[i] = 0.0
        out[i, rec] = _gth(flat[i][np.ix_(rec, rec)])
    return xp.asarray(out.reshape(Ph.shape[:-1]), dtype=P.dtype, device=P.device)


# S·‖(I − P + 11ᵀ)^{-T} z‖∞ above which the solve may lose 4 digits: redo by GTH
_GTH_CONDITION = 1e4


def _sign_probe(xp: Any, A: Any, x: Any) -> Any:
    """``‖A^{-1} sign(x)‖∞`` per instance (``x`` a first probe ``A^{-1}z``): a second lower estimate of
    ``‖A^{-1}‖∞`` that a chain cannot defeat by the fixed ``z`` alone (one Hager–Higham step).

    The seeded ``z`` is a fixed vector, so a chain can be built with its ill-conditioned direction
    nearly orthogonal to ``z``: two blocks coupled by ``1e-5`` whose partition splits ``z`` into
    nearly equal sums (8 states) gave ``S·‖A^{-1}z‖∞ = 7.2e3`` (kept) while the solve erred by
    3.7e-11 relative, 33 times the ``10⁴u`` it allows. ``sign(x)`` follows the chain: its product
    with that direction (a ``±1`` pattern on the blocks) does not vanish with ``z``'s. Infinite
    when ``A`` is numerically singular."""
    xi = xp.sign(x)[..., None]
    try:
        w = xp.linalg.solve(A, xi)[..., 0]
    except np.linalg.LinAlgError:
        return xp.full(tuple(x.shape[:-1]), float("inf"), dtype=x.dtype, device=x.device)
    w = xp.where(xp.isfinite(w), w, xp.full_like(w, float("inf")))
    return xp.max(xp.abs(w), axis=-1)


def _unichain_stationary(
    xp: Any, P: Any, what: str = "stationary_distribution", guard: bool = False
) -> Any:
    """``μ`` of unichain chains ``P[..., S, S]`` by the batched solve of ``(I − P + 11ᵀ)ᵀ μ = 1``.

    The diagonal of ``I − P`` is the leave rate ``L(s) = Σ_{j≠s} P(s, j)`` (GTH's rule), not
    ``1 − P(s, s)``: a row of the stored ``P`` that sums to ``1 + δ_s`` then acts as the row-normalised
    row up to a relative ``δ_s`` in ``μ(s)``, where ``1 − P(s, s)`` made it a perturbation of size
    ``δ_s`` of a leave rate that may be tiny (errors ``δ·‖(I − P + 11ᵀ)^{-1}‖``: 4.8e-9 relative for
    ``δ = 2.2e-12`` on a chain coupled by 1e-4), and ``1 − (1 − ε)`` loses ``u/ε`` of a small ``ε``.

    ``guard=True`` also solves for a fixed pseudo-random ``z`` (seed 0, entries in [−1, 1]) and then
    for ``sign(x)`` (:func:`_sign_probe`): the larger ``‖x‖∞`` of ``(I − P + 11ᵀ)ᵀ x = z`` and
    ``= sign(x)`` is a lower estimate of ``‖(I − P + 11ᵀ)^{-T}‖∞``, so the solve's
    error is about ``u·S·‖x‖∞`` relative to ``‖μ‖∞`` (measured: at most 0.81·u·S·‖x‖∞ on two-block
    chains); instances with ``S·‖x‖∞ > 10⁴`` (parts of the chain coupled by ``δ ≲ 10⁻⁴``, where the
    solve's error grows like ``u/δ``) are recomputed by GTH on the host, accurate to a few ``u``
    relative in every entry (O'Cinneide 1993). It then returns ``(μ, ill)`` with ``ill`` the host
    mask of those instances over the flattened batch."""
    S = P.shape[-1]
    off, leave = _leave_rates(xp, P)
    M = _eye(xp, S, P) * leave[..., None] - off + 1.0
    rhs = xp.ones(tuple(P.shape[:-1]), dtype=P.dtype, device=P.device)[..., None]
    if guard:
        z = np.random.default_rng(0).uniform(-1.0, 1.0, size=(S, 1))
        z = xp.broadcast_to(
            xp.asarray(z, dtype=P.dtype, device=P.device), tuple(P.shape[:-1]) + (1,)
        )
        rhs = xp.concat([rhs, z], axis=-1)
    try:
        X = xp.linalg.solve(xp.matrix_transpose(M), rhs)
    except np.linalg.LinAlgError:  # numerically singular: parts coupled below round-off
        X = None
    # backends that return inf/nan instead of raising go to GTH as well
    if X is None or not bool(xp.all(xp.isfinite(X))):
        mu = _gth_unichain(xp, P, what)
        return (mu, np.ones(int(np.prod(P.shape[:-2])), dtype=bool)) if guard else mu
    mu = X[..., 0]
    # The exact μ is ≥ 0 (0 on transient states, where the solve leaves round-off of either
    # sign): clipping never moves an entry further from it; renormalise the clipped mass.
    mu = xp.where(mu > 0, mu, xp.zeros_like(mu))
    mu = mu / xp.sum(mu, axis=-1, keepdims=True)
    if not guard:
        return mu
    x = X[..., 1]
    norm = xp.maximum(xp.max(xp.abs(x), axis=-1), _sign_probe(xp, xp.matrix_transpose(M), x))
    ill = to_numpy(S * norm > _GTH_CONDITION).reshape(-1)
    return (_gth_unichain(xp, P, what, only=ill, mu=mu) if ill.any() else mu), ill


def _relative_values(P: np.ndarray, b: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    r"""``w`` with ``w = 0`` on ``fixed`` and ``w(s) = b(s) + Σ_j P(s, j) w(j)`` elsewhere (host, float64).

    Every other state reaches ``fixed`` (a recurrent state of its class, or the recurrent states seen
    from the transient ones), so ``I − Q`` (``Q = P`` off ``fixed``) is a nonsingular M-matrix. It is
    eliminated by state reduction without subtractions, as in GTH: the pivot of state ``m`` is the
    sum of its remaining off-diagonal entries and of its accumulated leak into ``fixed``, never
    ``1 − P(m, m)``, so the reduction keeps a few ``u`` relative accuracy however weakly the chain's
    parts are coupled (Grassmann, Taksar & Heyman 1985; the signed ``b`` is carried along as an
    extra column).
    """
    S = P.shape[0]
    # accepted round-off < 0 is no transition (as in the class structure)
    P = np.where(P > 0, P, 0.0)
    keep = np.flatnonzero(~np.isin(np.arange(S), fixed))
    n = keep.size
    W = np.zeros((n, n + 2))
    W[:, :n] = P[np.ix_(keep, keep)] * (1.0 - np.eye(n))
    W[:, n] = np.sum(P[np.ix_(keep, np.asarray(fixed))], axis=-1)  # leak into the fixed states
    W[:, n + 1] = b[keep]
    piv = np.zeros(n)
    for m in range(n - 1, -1, -1):
        # > 0: the censored chain leaves m towards 0..m-1 or the fixed states
        piv[m] = np.sum(W[m, :m]) + W[m, n]
        if m:
            c = W[:m, m] / piv[m]
            W[:m, :m] += c[:, None] * W[m, :m][None, :]
            W[:m, n:] += c[:, None] * W[m, n:][None, :]
    w = np.zeros(n)
    for m in range(n):
        w[m] = (W[m, n + 1] + W[m, :m] @ w[:m]) / piv[m]
    out = np.zeros(S)
    out[keep] = w
    return out


def _ill_conditioned(xp: Any, M: Any, rhs: Any) -> tuple[Any, np.ndarray]:
    """Solve ``M x = rhs`` with a second right-hand side, a fixed pseudo-random ``z`` (seed 1, entries
    in [−1, 1]), then ``M y = sign(M^{-1}z)`` (:func:`_sign_probe`): ``S·max(‖M^{-1}z‖∞, ‖y‖∞) > 10⁴``
    flags (host mask) the instances where the solve may lose four digits (both are lower estimates
    of ``‖M^{-1}‖∞``)."""
    S = M.shape[-1]
    z = np.random.default_rng(1).uniform(-1.0, 1.0, size=(S, 1))
    z = xp.broadcast_to(xp.asarray(z, dtype=M.dtype, device=M.device), tuple(M.shape[:-1]) + (1,))
    try:
        X = xp.linalg.solve(M, xp.concat([rhs[..., None], z], axis=-1))
    except np.linalg.LinAlgError:  # numerically singular: every instance goes to the reduction
        return xp.zeros_like(rhs), np.ones(int(np.prod(M.shape[:-2])), dtype=bool)
    x = X[..., 1]
    ill = S * xp.maximum(xp.max(xp.abs(x), axis=-1), _sign_probe(xp, M, x)) > _GTH_CONDITION
    return X[..., 0], to_numpy(ill | ~xp.all(xp.isfinite(X[..., 0]), axis=-1)).reshape(-1)


def stationary_distribution(P: Any, *, check: bool = True, method: str = "solve") -> Any:
    r"""The unique stationary distribution ``μᵀ = 1ᵀ(I − P + 11ᵀ)^{-1}`` of a unichain ``P``.

    ``μᵀ(I − P + 11ᵀ) = μᵀ11ᵀ = 1ᵀ`` for any stationary ``μ``, and ``I − P + 11ᵀ``
    is nonsingular exactly when the stationary law is unique, i.e. when ``P`` has
    one recurrent class (LPW 2017, Cor. 1.17; Paige, Styan & Wachter 1975).
    ``μ`` vanishes on transient states. The result is a probability vector: the solve's
    round-off of either sign on transient states (about 1e-17) is set to 0 and the
    vector renormalised.

    Accuracy, against the exact stationary law ``μ`` of the row-normalised stored ``P`` (rows
    summing to ``1 + δ_s``, ``|δ_s| ≤ δ``; ``u`` the unit round-off of ``P``'s dtype): the solve,
    with the leave rates ``Σ_{j≠s} P(s, j)`` on the diagonal of ``I − P``, errs by about
    ``u·S·‖(I − P + 11ᵀ)^{-1}‖∞`` relative to ``‖μ‖∞``, plus ``2δ`` from the row sums. That norm
    is ``≳ 1/ε`` for parts of the chain coupled by probabilities ``ε`` (the error grows like
    ``u/ε``: 6.6e-2 relative at ``ε = 1e-14`` in float64, O(1) at ``ε = 1e-8`` in float32), so
    ``method="solve"`` estimates it (a second right-hand side, a fixed ``z``, then one more solve for
    ``sign((I − P + 11ᵀ)^{-T} z)``: lower estimates of the norm) and redoes every instance whose
    estimate times ``S`` exceeds ``10⁴`` by GTH state
    reduction (Grassmann, Taksar & Heyman 1985) on the host, accurate to a few ``u`` relative in
    every entry for any ``ε`` (O'Cinneide 1993), plus ``2δ``. The result is within about
    ``10⁴·u + 2δ`` of ``μ`` relative to ``‖μ‖∞`` (float64: 1.1e-12; float32: 6e-4, the price of
    keeping well-coupled instances on the device). ``method="gth"`` always uses the reduction
    (host, 4–20× the cost of the solve): every entry, however small, to a few ``u`` relative.

    Parameters
    ----------
    P : array, shape (..., S, S)
    check : bool
        Verify on the host that every instance is unichain (default True).
    method : {"solve", "gth"}
        The batched linear solve (any backend) or GTH state reduction (on the host).

    Raises
    ------
    ValueError
        ``P`` is multichain; the message names its recurrent classes.

    Examples
    --------
    >>> import numpy as np
    >>> stationary_distribution(np.array([[0.5, 0.5], [0.25, 0.75]]))
    array([0.33333333, 0.66666667])
    """
    if method not in ("solve", "gth"):
        raise ValueError(
            f"stationary_distribution: method must be 'solve' or 'gth'; got {method!r}"
        )
    check = _flag(check, "check")
    xp, P = _check_chain(P, "stationary_distribution")
    if check:
        _require_unichain(P, "stationary_distribution")
    if method == "gth":
        return _gth_unichain(xp, P, "stationary_distribution")
    mu = _unichain_stationary(xp, P, guard=True)[0]
    if check:
        # the structure is known: put the exact 0 on transient states (the solve leaves ±1e-17)
        structs = _structures(P)
        transient = np.zeros((len(structs), P.shape[-1]), dtype=bool)
        for i, cs in enumerate(structs):
            transient[i, list(cs.transient)] = True
        keep = xp.asarray(~transient.reshape(tuple(mu.shape)), device=P.device)
        mu = xp.where(keep, mu, xp.zeros_like(mu))
        mu = mu / xp.sum(mu, axis=-1, keepdims=True)
    return mu


def _selection(xp: Any, idx: tuple[int, ...], S: int, like: Any) -> Any:
    E = np.zeros((S, len(idx)))
    E[list(idx), np.arange(len(idx))] = 1.0
    return xp.asarray(as_float(E, xp, like.dtype), device=like.device)


def _leave_rates(xp: Any, P: Any) -> tuple[Any, Any]:
    """``(P with a zero diagonal, Σ_{j≠s} P(s, j))``: the off-diagonal part and ``1 − P(s, s)`` summed
    without cancellation (``1 − (1 − δ)`` keeps only ``ε/δ`` relative accuracy; GTH's rule)."""
    S = P.shape[-1]
    off = P * (1.0 - _eye(xp, S, P))
    return off, xp.sum(off, axis=-1)


def _absorption(xp: Any, P: Any, cs: ChainStructure) -> Any:
    """Absorption probabilities ``F[t, k]`` from the transient states into the recurrent classes.

    ``F = (I − Q)^{-1} B`` (``Q = P_TT``, ``B[t, k] = P(t, C_k)``) by state reduction without
    subtractions (the absorbing-chain form of Grassmann, Taksar & Heyman 1985): censor the
    transient states one at a time, folding ``P(i, k) P(k, j) / L(k)`` into ``P(i, j)`` with the
    leave rate ``L(k) = Σ_{j≠k} P(k, j)`` of the censored chain, then back-substitute
    ``F(k) = (Σ_{j<k} P(k, j) F(j) + B(k)) / L(k)``. Only sums and products of non-negative numbers
    occur, so every ``F(t, k)`` has small relative error however rarely the transient states leave
    (a linear solve forms ``1 − (1 − δ)`` and keeps only ``ε/δ``: ``P*`` rows summed to
    ``1 + 2e-5`` at ``δ = 1e-12``, and gains exceeded ``max r``).
    """
    S = P.shape[-1]
    ET = _selection(xp, cs.transient, S, P)
    EK = xp.stack([xp.sum(_selection(xp, C, S, P), axis=-1) for C in cs.recurrent_classes], axis=-1)
    n, K = len(cs.transient), len(cs.recurrent_classes)
    Q = xp.matrix_transpose(ET) @ P @ ET
    # [n, n + K]
    W = xp.concat([Q * (1.0 - _eye(xp, n, P)), xp.matrix_transpose(ET) @ P @ EK], axis=-1)
    leave = []
    for k in range(n - 1, -1, -1):
        row = W[k, :]
        L = xp.sum(row[:k]) + xp.sum(row[n:])  # > 0: a transient state of the censored chain leaves
        leave.append(L)
        if k:
            # W(i, k)·(row/L) with row/L ≤ 1: W(i, k)/L overflowed for a leave rate L ≲ 1e-308 (a
            # transient state leaving with probability 5e-324 made every entry of P* NaN)
            W[:k, :k] = W[:k, :k] + W[:k, k][:, None] * (row[:k] / L)[None, :]
            W[:k, n:] = W[:k, n:] + W[:k, k][:, None] * (row[n:] / L)[None, :]
    leave = leave[::-1]
    F = []
    for k in range(n):
        acc = W[k, n:] / leave[k]  # each ratio ≤ 1, and F(k) sums to 1
        if k:
            acc = acc + (W[k, :k] / leave[k]) @ xp.stack(F)
        F.append(acc)
    return xp.stack(F) if n else xp.zeros((0, K), dtype=P.dtype, device=P.device)


def _limiting_single(xp: Any, P: Any, cs: ChainStructure) -> Any:
    S = P.shape[-1]
    Pstar = xp.zeros((S, S), dtype=P.dtype, device=P.device)
    ET = _selection(xp, cs.transient, S, P) if cs.transient else None
    F = _absorption(xp, P, cs) if cs.transient else None
    for k, C in enumerate(cs.recurrent_classes):
        EC = _selection(xp, C, S, P)
        PCC = xp.matrix_transpose(EC) @ P @ EC
        # stationary law on the class; GTH if ill-conditioned
        mu, _ = _unichain_stationary(xp, PCC, "limiting_matrix", guard=True)
        w = xp.sum(EC, axis=-1)  # indicator of the class
        if ET is not None:
            w = w + ET @ F[:, k]
        Pstar = Pstar + w[:, None] * (EC @ mu)[None, :]
    return Pstar


def limiting_matrix(P: Any) -> Any:
    r"""Cesàro limit ``P* = lim_N (1/N) Σ_{t<N} P^t`` of any finite chain.

    For recurrent class ``C_k`` with stationary law ``μ_k`` (on ``C_k``) and
    absorption probabilities ``f_k = (I − Q)^{-1} P_{T,C_k} 1`` from the transient
    set ``T`` (``Q = P_{TT}``), ``P*(s, ·) = Σ_k f_k(s) μ_k`` with ``f_k(s) = 1{s ∈ C_k}``
    on recurrent states (Puterman 1994, Thm A.7 and eq. (A.6)). ``P*`` satisfies
    ``P P* = P* P = P* P* = P*``.

    The absorption probabilities are computed by state reduction without subtractions (GTH's
    rule), accurate to a few ``ε`` relative however rarely the transient states leave; a linear
    solve of ``(I − Q) f = b`` keeps only ``ε/δ`` when they leave with probability ``δ``. Each
    class's ``μ_k`` comes from the solve, redone by GTH where that system is ill-conditioned (a class
    whose parts are coupled by ``δ ≲ 1e-4``: the solve was off by 0.042 at ``δ ~ 1e-14``).

    Parameters
    ----------
    P : array, shape (..., S, S)

    Returns
    -------
    array, shape (..., S, S)

    Examples
    --------
    A transient state split evenly between two absorbing states:

    >>> import numpy as np
    >>> limiting_matrix(np.array([[1., 0., 0.], [0., 1., 0.], [.25, .25, .5]]))
    array([[1. , 0. , 0. ],
           [0. , 1. , 0. ],
           [0.5, 0.5, 0. ]])
    """
    xp, P = _check_chain(P, "limiting_matrix")
    batch = tuple(P.shape[:-2])
    S = P.shape[-1]
    structs = _structures(P)
    if not batch:
        return _limiting_single(xp, P, structs[0])
    if not structs:  # an empty batch: nothing to stack
        return xp.zeros(P.shape, dtype=P.dtype, device=P.device)
    flat = xp.reshape(P, (-1, S, S))
    out = [_limiting_single(xp, flat[i, ...], cs) for i, cs in enumerate(structs)]
    return xp.reshape(xp.stack(out), batch + (S, S))
