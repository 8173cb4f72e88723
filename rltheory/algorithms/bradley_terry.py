r"""Bradley–Terry reward MLE from trajectory comparisons (the reward fit of MARLHF).

Each player compares trajectory pairs by its own return: ``Pr(τ ≻_i τ') = σ(R_i(τ) − R_i(τ'))``
with tabular rewards ``R_i(τ) = ⟨ψ(τ), θ_i⟩`` (:func:`trajectory_features`).
:func:`bradley_terry_mle` fits ``θ_i`` by ridge-regularised logistic MLE (Newton's method, with
the Newton-decrement stopping rule); ``_inverse_gram_norm`` gives the ``Σ^{-1}``-norms of the
confidence set that :func:`rltheory.algorithms.marlhf.marlhf_equilibrium` uses. Both work on the
distinct compared pairs with their counts (:func:`_compared_pairs`).

References
----------
Bradley, R. A., Terry, M. E. (1952). Rank analysis of incomplete block designs. Biometrika 39.
Zhu, B., Jordan, M., Jiao, J. (2023). Principled RLHF from pairwise or K-wise comparisons. ICML.
Boyd, S., Vandenberghe, L. (2004). Convex Optimization, §9.5 (Newton's method).
Albert, A., Anderson, J. A. (1984). On the existence of maximum likelihood estimates in logistic
regression models. Biometrika 71 (separation).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import highs_console_silenced
from .._validate import check_positive_int, check_real
from ..errors import ConvergenceWarning, SolverError
from ..mdp.offline_data import EpisodeDataset, PreferenceDataset
from ..trace import Trace, TraceRecorder

__all__ = ["BradleyTerryResult", "trajectory_features", "bradley_terry_mle"]


@dataclass(frozen=True, eq=False)
class BradleyTerryResult:
    r"""Ridge-regularised Bradley–Terry MLE of per-player rewards.

    Attributes
    ----------
    theta : array (n, H, S, A_1, …, A_n)
        ``r̂_{i,h}(s, a)``; returns are identified only up to the null space of the
        compared feature differences (the ridge picks the minimum-norm solution there).
    gram : array (D, D)
        ``Σ = Σ_k x_k x_kᵀ + λI`` with ``x_k = ψ(τ_k) − ψ(τ'_k)`` (``D = H S J``).
    converged : bool
    iterations : int
    trace : Trace
        ``loss`` (penalised negative log-likelihood summed over players) and ``decrement``
        (largest Newton decrement ``λ²/2``) per iteration.
    separable : tuple of bool
        Per player: the labels are (quasi-)separated by the returns, so the unpenalised MLE does
        not exist: some ``θ`` has ``x_kᵀθ ≥ 0`` for every comparison the first trajectory won,
        ``≤ 0`` for every one it lost, not all 0 (Albert & Anderson 1984). ``θ̂`` is then
        finite only through the ridge and grows like ``log(1/λ)`` along that direction, and
        the stopping rule, not ``λ``, fixes how far (:func:`bradley_terry_mle`). Empty for a
        result built by hand.
    """

    theta: np.ndarray
    gram: np.ndarray
    converged: bool
    iterations: int
    trace: Trace
    separable: tuple[bool, ...] = ()


def trajectory_features(data: EpisodeDataset) -> np.ndarray:
    r"""``ψ(τ)[h, s, a] = 1{(s_h, a_h) = (s, a)}`` flattened: shape ``(K, H·S·J)``; ``R(τ) = ⟨ψ(τ), r⟩``.

    Examples
    --------
    >>> import numpy as np
    >>> d = EpisodeDataset(np.zeros((1, 2), int), np.array([[1]]), np.zeros((1, 1)), S=1, A=2)
    >>> trajectory_features(d).tolist()
    [[0.0, 1.0]]
    """
    H, S = data.H, data.S
    J = int(np.prod(data.action_shape))
    idx = (np.arange(H)[None, :] * S + data.states[:, :-1]) * J + data.joint_actions()
    out = np.zeros((data.K, H * S * J))
    np.add.at(out, (np.repeat(np.arange(data.K), H), idx.ravel()), 1.0)
    return out


def _compared_pairs(prefs: PreferenceDataset) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    r"""The distinct rows ``u_g`` of ``X`` (``x_k = ψ(τ_k) − ψ(τ'_k)``), their counts ``c_g``, the
    labels summed over each group ``Σ_{k ∈ g} y_{k,i}`` (shape ``(m, n)``), and ``K``.

    ``x_k`` is fixed by its per-step pairs of indices ``(s_h, a_h), (s'_h, a'_h)``, a pair
    with equal members giving 0 on block ``h``; those index pairs are grouped (a lexicographic
    sort), so ``XᵀX = Σ_g c_g u_g u_gᵀ`` and the likelihood, its gradient and its Hessian are
    sums over the ``m ≤ K`` groups (``m ≤ (S·J)²`` for one step).
    """
    a, b = prefs.first, prefs.second
    J = int(np.prod(a.action_shape))
    ia = a.states[:, :-1] * J + a.joint_actions()  # (K, H): index within step h's block
    ib = b.states[:, :-1] * J + b.joint_actions()
    same = ia == ib
    keys = np.concatenate([np.where(same, -1, ia), np.where(same, -1, ib)], axis=1)
    order = np.lexsort(keys.T[::-1])
    ks = keys[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = np.any(ks[1:] != ks[:-1], axis=1)
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, len(order))).astype(np.float64)
    Ysum = np.add.reduceat(prefs.labels[order].astype(np.float64), starts, axis=0)
    rep = order[starts]
    H, m, L = a.H, len(starts), a.S * J
    U = np.zeros((m, H * L))
    rows = np.repeat(np.arange(m), H)
    cols = (np.arange(H)[None, :] * L + np.stack([ia[rep], ib[rep]])).reshape(2, -1)
    np.add.at(U, (rows, cols[0]), 1.0)  # ψ(τ) − ψ(τ'): 0 on the blocks where the pair agrees
    np.add.at(U, (rows, cols[1]), -1.0)
    return U, counts, Ysum, len(order)


def _row_space(U: np.ndarray, counts: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Singular values, the ``(D, r)`` right singular vectors spanning the row space, and the
    numerical rank ``r`` of ``X`` (rows ``u_g`` repeated ``c_g`` times), from ``W = diag(√c) U``.

    ``WᵀW = XᵀX``, so ``W`` has ``X``'s singular values and right singular vectors; and an SVD
    of ``W`` is as accurate as one of ``X``: the rounding of ``√c_g`` is a row scaling
    ``diag(1 + δ)``, ``|δ| ≤ eps``, which moves every singular value by a relative ``eps``
    (multiplicative perturbation), and the SVD itself is backward stable in both. Forming
    ``XᵀX`` instead would square the condition number of the rank decision. The rank rule is
    ``X``'s: ``s_j > s_0·max(K, D)·eps``.
    """
    W = U * np.sqrt(counts)[:, None]
    _, sv, Vt = np.linalg.svd(W, full_matrices=False)
    tol = (sv[0] if sv.size else 0.0) * max(K, U.shape[1]) * np.finfo(np.float64).eps
    rank = int(np.sum(sv > tol))
    return sv, Vt[:rank].T, rank


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """``σ(x) = 1/(1 + e^{−x})`` with full relative accuracy in both tails (``σ(−40) ≈ 4.2e-18``).

    The form ``(1 + tanh(x/2))/2`` used before is accurate only to ``1e-16`` absolutely, so it
    rounded ``σ(−x)`` to 0 for ``x ≳ 37`` and lost its relative accuracy well before.
    """
    from scipy.special import expit  # noqa: PLC0415

    return expit(x)


def bradley_terry_mle(
    prefs: PreferenceDataset, *, ridge: float = 1e-3, max_iter: int = 100, tol: float = 1e-12
) -> BradleyTerryResult:
    r"""``θ̂_i = argmin_θ −Σ_k [y_{k,i} log σ(x_kᵀθ) + (1 − y_{k,i}) log σ(−x_kᵀθ)] + (λ/2)‖θ‖²`` by Newton's method.

    ``x_k = ψ(τ_k) − ψ(τ'_k)`` (:func:`trajectory_features`): the Bradley–Terry model
    ``Pr(τ ≻_i τ') = σ(R_i(τ) − R_i(τ'))`` with tabular rewards ``R_i(τ) = ⟨ψ(τ), θ_i⟩``.

    Parameters
    ----------
    prefs : PreferenceDataset
    ridge : float > 0
        ``λ`` (strict convexity; picks the minimum-norm solution on unidentified directions).
    max_iter : int
    tol : float
        Stop when the Newton decrement ``λ²/2 = gᵀH^{-1}g/2`` of the iterate before the last
        Newton step (the largest over players) is ``≤ tol`` — the standard Newton stopping
        rule (Boyd & Vandenberghe 2004, §9.5.1): it estimates the remaining objective gap
        and, unlike a step-size rule, is unaffected by the near-flat unidentified directions.
        The returned iterate is that step further on; its gap ``f(θ̂) − min f`` was below
        ``0.75·tol`` on every data set checked against a long-double Newton optimum
        (separable labels included, where ``f ≈ N e^{−z}`` and one step leaves ``2/e`` of the
        decrement; tested). This is measured, not proven: the logistic loss is not
        self-concordant there; the ridge's strong convexity gives the rigorous
        ``f(θ) − min f ≤ ‖∇f(θ)‖²/(2λ)``.

    Notes
    -----
    Separable labels (every comparison of some pair won by the same side, and no mixed pair to
    pin the direction down) have no unpenalised MLE: the fit is finite through the ridge alone,
    ``result.separable[i]`` says so per player (an LP, :func:`_separated`), and ``θ̂`` then
    stops where the objective gap falls below ``tol`` (it grows like ``log(1/λ)`` only as far).
    The objective is ``λ``-strongly convex and self-concordant-like, so Newton's method
    converges quadratically near the optimum; the iteration count is reported and
    hitting ``max_iter`` emits :class:`~rltheory.errors.ConvergenceWarning`. The Newton steps
    are taken in the row space of the stacked ``x_k`` (where the minimiser lies), so any
    ``λ > 0`` works, including one below round-off of ``‖XᵀX‖``. Estimation
    error: ``‖θ̂ − θ*‖_Σ = O(√(D + log(1/δ))/κ)`` with ``κ`` the smallest logistic
    curvature on the data (Zhu, Jordan & Jiao 2023, Lemma 3.1), so returns on covered
    directions converge at ``1/√N``.

    Examples
    --------
    All comparisons between the same two one-step trajectories, ``k`` of ``N`` won by the
    first: the return difference is ``log(k/(N − k))`` (up to the ridge).

    >>> import numpy as np
    >>> a = EpisodeDataset(np.zeros((4, 2), int), np.ones((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    >>> b = EpisodeDataset(np.zeros((4, 2), int), np.zeros((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    >>> fit = bradley_terry_mle(PreferenceDataset(a, b, np.array([[1], [1], [1], [0]])), ridge=1e-9)
    >>> abs(float(fit.theta[0, 0, 0, 1] - fit.theta[0, 0, 0, 0]) - float(np.log(3.0))) < 1e-6
    True
    """
    if not isinstance(prefs, PreferenceDataset):
        raise TypeError(f"bradley_terry_mle needs a PreferenceDataset; got {type(prefs).__name__}")
    ridge = check_real(ridge, "ridge", low=0.0, low_open=True)
    max_iter = check_positive_int(max_iter, "max_iter")  # numpy integers too (not bools)
    tol = check_real(tol, "tol", low=0.0)
    U, counts, Ysum, K = _compared_pairs(prefs)
    n, D = Ysum.shape[1], U.shape[1]
    # XᵀX = Uᵀ diag(c) U holds integers (differences of 0/1 counts), exact in float64
    gram = (U * counts[:, None]).T @ U + ridge * np.eye(D)
    # Newton in the row space of X, θ = V β (V orthonormal): the minimiser and every iterate from
    # θ = 0 lie there (the data gradient is Xᵀ(·) and the ridge pulls towards 0), and on it the
    # Hessian ZᵀWZ + λI is positive definite in floating point too. In all of R^D it is
    # XᵀWX + λI, which rounds to the singular XᵀWX once λ < eps·‖XᵀWX‖ (λ = 1e-16 with four
    # comparisons, λ = 1e-12 with 10⁶: numpy's bare "Singular matrix").
    sv, V, rank = _row_space(U, counts, K)
    Z = U @ V  # (m, r): one row per distinct comparison, weighted by its count
    beta = np.zeros((n, rank))
    rec = TraceRecorder()
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        worst = 0.0
        loss = 0.0
        for i in range(n):
            s1 = Ysum[:, i]  # comparisons of each distinct pair won by the first trajectory
            s0 = counts - s1
            z = Z @ beta[i]
            p, q = _sigmoid(z), _sigmoid(-z)  # σ(z) and 1 − σ(z), each to full relative accuracy
            # Σ_k (σ(z) − y_k) written as s0·σ(z) − s1·σ(−z): no cancellation when σ(z) ≈ y
            # (well-fitted labels), where the form p − y lost every digit of a residual below 1e-16
            g = Z.T @ (s0 * p - s1 * q) + ridge * beta[i]
            Hm = (Z * (counts * p * q)[:, None]).T @ Z + ridge * np.eye(rank)
            step = np.linalg.solve(Hm, g)
            beta[i] -= step
            worst = max(worst, 0.5 * float(g @ step))  # Newton decrement λ²/2 before the step
            z = Z @ beta[i]
            loss += float(np.sum(np.logaddexp(0.0, -z) * s1 + np.logaddexp(0.0, z) * s0))
            loss += 0.5 * ridge * float(beta[i] @ beta[i])
        rec.record(it, loss=loss, decrement=worst)
        if worst <= tol:
            converged = True
            break
    if not converged:
        warnings.warn(
            f"bradley_terry_mle: Newton's method reached max_iter={max_iter} with decrement {worst:.3g} > tol={tol:g}",
            ConvergenceWarning,
            stacklevel=2,
        )
    shape = (n, prefs.first.H, prefs.first.S) + prefs.first.action_shape
    theta = beta @ V.T  # (n, D)
    separable = tuple(_separated(Z, counts, Ysum[:, i]) for i in range(n))
    return BradleyTerryResult(theta.reshape(shape), gram, converged, it, rec.finish(), separable)


def _separated(Z: np.ndarray, counts: np.ndarray, wins: np.ndarray) -> bool:
    r"""Whether some ``β`` separates the labels: ``z_g = Z_gβ`` is ``≥ 0`` on every group the first
    trajectory always won, ``≤ 0`` on every group it always lost, 0 on the mixed groups, and not 0
    everywhere (then ``Σ_g log σ(±z_g)`` has no minimiser: the MLE diverges along ``β``).

    An LP: maximise ``Σ_pure s_g z_g`` with ``s_g z_g ∈ [0, 1]`` (``s_g = ±1``, the group's sign)
    and ``z_g = 0`` on mixed groups. ``Z`` has full column rank (it is ``X`` in a basis of its row
    space), so the feasible set is bounded; the optimum is 0 without separation and at least 1
    with it (scale a separating ``β`` to ``max s_g z_g = 1``), so it is judged against 1/2, far
    from HiGHS's 1e-7 feasibility tolerance. No LP when the mixed groups' rows have full rank
    (nothing separates).
    """
    pure = (wins == 0) | (wins == counts)
    if not np.any(pure) or Z.shape[1] == 0:
        return False
    mixed = Z[~pure]
    if mixed.shape[0] >= Z.shape[1] and np.linalg.matrix_rank(mixed) == Z.shape[1]:
        return False  # z = 0 on the mixed groups forces β = 0 (no LP: most large data sets)
    from scipy.optimize import linprog  # noqa: PLC0415

    A = Z[pure] * np.where(wins[pure] > 0, 1.0, -1.0)[:, None]  # rows s_g Z_g
    k = A.shape[0]
    with highs_console_silenced():  # (HiGHS prints some statuses with a bare printf)
        res = linprog(
            -A.sum(axis=0),
            A_ub=np.vstack([-A, A]),
            b_ub=np.concatenate([np.zeros(k), np.ones(k)]),
            A_eq=mixed if mixed.shape[0] else None,
            b_eq=np.zeros(mixed.shape[0]) if mixed.shape[0] else None,
            bounds=[(None, None)] * Z.shape[1],
            method="highs",
        )
    if res.status != 0:
        raise SolverError(
            f"bradley_terry_mle's separation LP failed (HiGHS status {res.status}: {res.message})",
            res.status,
        )
    return bool(-res.fun > 0.5)


def _inverse_gram_norm(prefs: PreferenceDataset, ridge: float) -> Any:
    """``d ↦ dᵀ(XᵀX + λI)^{-1}d`` from the thin SVD ``X = U diag(s) Vᵀ`` (rank ``r``):
    ``Σ_j (v_jᵀd)²/(s_j² + λ) + ‖d − V_r V_rᵀd‖²/λ``.

    Inverting the formed gram instead fails once ``λ`` is below round-off of ``XᵀX``
    (numpy's bare "Singular matrix" for ``λ = 1e-17``), and loses accuracy well before.
    """
    U, counts, _, K = _compared_pairs(prefs)
    sv, V, rank = _row_space(U, counts, K)
    Vr, w = V.T, 1.0 / (sv[:rank] ** 2 + ridge)

    def quad(d: np.ndarray) -> np.ndarray:
        c = d @ Vr.T  # rows of d: one quadratic form each
        rest = d - c @ Vr
        return np.sum(w * c * c, axis=-1) + np.sum(rest * rest, axis=-1) / ridge

    return quad
