r"""DoMo-VI: exact doubly multi-step value iteration (n-step improvement, m-step Retrace evaluation).

``W_k = T^{n−1} Q_k``, ``π_{k+1} = greedy(W_k)``, ``Q_{k+1} = (R_{π_{k+1}})^m W_k`` with the
exact Retrace(λ) operator of a behaviour ``μ`` (:func:`domo_vi`); its measured
convergence is compared with value iteration (``n = m = 1``, ``λ = 0``).

References
----------
Tang, Y., Kozuno, T., Rowland, M., et al. (2023). DoMo-AC: doubly multi-step off-policy
actor-critic algorithm. ICML.
Munos, R., Stepleton, T., Harutyunyan, A., Bellemare, M. (2016). Safe and efficient
off-policy reinforcement learning (Retrace). NeurIPS.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import higham_gamma
from .._validate import check_tolerance, real_scalar
from ..errors import ConvergenceWarning
from ..mdp.bellman import _check_in_range, _discounted_scale, _greedy, _q_values
from ..mdp.discounted import _Roundoff
from ..mdp.model import FiniteMDP
from ..trace import Trace, TraceRecorder
from ._q_common import _behaviour, _int, _model, _q0, _q_star, _scale

__all__ = ["DoMoResult", "domo_vi"]


# -- DoMo-VI (exact) -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DoMoResult:
    """Result of :func:`domo_vi`.

    Attributes
    ----------
    Q : numpy.ndarray (..., S, A)
    policy : numpy.ndarray of int (..., S)
        Last greedy (improvement) policy.
    iterations : int
    converged : bool
    trace : Trace
        ``error`` = ``‖Q_ref − Q_k‖∞`` against the reference ``Q_ref`` (``Q_star``) and ``bound``, a
        certified upper bound on both ``‖Q* − Q_k‖∞`` and ``error``: ``γ^{nk} ‖Q* − Q_0‖∞`` plus the
        round-off of the computed iterates and of ``Q_ref`` (see :func:`domo_vi`), where
        ``T Q_0 ≥ Q_0`` (the default start) or ``λ = 0, m = 1`` (value iteration with ``n``-step
        lookahead, a ``γ^n``-contraction from any start), else ``+inf`` for ``k ≥ 1``.
    """

    Q: np.ndarray
    policy: np.ndarray
    iterations: int
    converged: bool
    trace: Trace


def _retrace(
    P: np.ndarray,
    R: np.ndarray,
    g: float,
    mu: np.ndarray,
    pi_det: np.ndarray,
    lam: float,
    Q: np.ndarray,
    e_Q: np.ndarray,
    u: float,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact Retrace(λ) operator ``R Q = Q + (I − γ P C)^{-1}(T^π Q − Q)`` for a deterministic ``π``,
    and a certified bound ``ξ`` (per instance) on the computed result's distance from the exact one.

    ``R Q`` is the ``Z`` with ``ρ(Z) = Z − γPC(Z − Q) − T^π Q = 0``, and ``‖(I − γPC)^{-1}‖∞ ≤ 1/(1 − γλ)``
    (the rows of ``PC`` sum to ``Σ_t P(t|s,a) μ(π(t)|t) λ ≤ λ``), so the computed ``Z`` is within
    ``‖ρ(Z)‖∞/(1 − γλ)`` of ``R Q`` whatever the linear solve did. The computed residual is within
    ``e_Q`` (the error of the computed ``T^π Q``) plus ``γ_k(‖Z‖∞ + ‖T^π Q‖∞ + 2γλ‖Z − Q‖∞)`` of the
    exact one, ``k = SA + 2S + 8`` (Higham's ``γ_k``: the product ``PC(Z − Q)`` of ``SA`` terms, the
    entries of ``PC``, ``P``'s normalisation ``γ_{2S+2}`` and the subtractions).
    """
    S, A = R.shape[-2:]
    batch = P.shape[:-3]
    onehot = np.eye(A)[pi_det]  # (..., S, A)
    c = lam * onehot  # c = λ min(1, π/μ) vanishes off π and equals λ on it (μ ≤ 1)
    TpiQ = R + g * (P * (onehot * Q).sum(-1)[..., None, None, :]).sum(-1)
    # (P C)((s,a),(t,b)) = P(t|s,a) μ(b|t) c(t,b)
    PC = (P[..., :, :, :, None] * (mu * c)[..., None, None, :, :]).reshape(batch + (S * A, S * A))
    M = np.eye(S * A) - g * PC
    delta = (TpiQ - Q).reshape(batch + (S * A, 1))
    Z = Q + np.linalg.solve(M, delta).reshape(Q.shape)
    D = (Z - Q).reshape(batch + (S * A, 1))
    rho = Z - g * (PC @ D).reshape(Q.shape) - TpiQ

    def norm(x: np.ndarray) -> np.ndarray:
        return np.abs(x).max(axis=(-2, -1))

    err = e_Q + higham_gamma(S * A + 2 * S + 8, u) * (
        norm(Z) + norm(TpiQ) + 2.0 * g * lam * norm(D)
    )
    return Z, (norm(rho) + err) / (1.0 - g * lam)


def _in_range(mdp: FiniteMDP, x: np.ndarray, c: float, g: float, what: str) -> np.ndarray:
    """``x/c`` (a table of the run on inputs times ``c``), or the located ``ValueError`` of
    :func:`rltheory.mdp.bellman._check_in_range` where it leaves the float64 range."""
    with np.errstate(over="ignore", invalid="ignore"):
        x = x / c
    return _check_in_range(mdp, x, "domo_vi", what, ("s", "a"), _discounted_scale(g))


def domo_vi(
    mdp: FiniteMDP,
    *,
    behavior: Any = None,
    n_improve: int = 1,
    m_eval: int = 1,
    lam: float = 1.0,
    iterations: int = 100,
    tol: float = 1e-10,
    Q0: Any = None,
    Q_star: Any = None,
) -> DoMoResult:
    r"""DoMo-VI: ``n``-step policy improvement and ``m``-step off-policy (Retrace) evaluation, exactly.

    ``W_k = T^{n−1} Q_k``, ``π_{k+1} = greedy(W_k)``, ``Q_{k+1} = (R_{π_{k+1}})^m W_k`` with the
    Retrace(λ) operator for behaviour ``μ``,
    ``R_π Q = Q + (I − γ P C_π)^{-1}(T^π Q − Q)``, ``c(s, a) = λ min(1, π(a|s)/μ(a|s))``.

    Parameters
    ----------
    mdp : FiniteMDP
        Host model, possibly batched.
    behavior : array (S, A), optional
        Behaviour policy ``μ`` of the off-policy evaluation (uniform by default).
    n_improve : int ≥ 1
        Lookahead depth ``n`` of the improvement (1: greedy on ``Q_k``).
    m_eval : int ≥ 1
        Retrace applications per iteration.
    lam : float in [0, 1]
        Trace parameter (0: ``R_π = T^π``, one-step evaluation).
    iterations : int ≥ 0
        Cap.
    tol : float > 0
        Stops when ``‖Q_{k+1} − Q_k‖∞ ≤ tol``.
    Q0 : array, optional
        Start; default ``min(r)/(1−γ)``, which satisfies ``T Q_0 ≥ Q_0``. For a start that does
        not (checked to ``16ε`` of its size) the trace's ``bound`` is ``+inf`` after step 0
        (the ``γ^n`` rate does not apply; the error can grow), except for ``λ = 0, m = 1``, where
        ``Q_{k+1} = T^n Q_k`` contracts from any start.
    Q_star : array, optional
        Reference ``Q_ref`` for the trace's ``error`` (default: policy iteration on the float64
        row-normalised model). Its own distance from ``Q*`` is certified by its Bellman residual,
        ``η = ‖T Q_ref − Q_ref‖∞/(1 − γ)`` plus round-off, and counted in ``bound``.

    Returns
    -------
    DoMoResult
        ``Q`` in float64. The iterates are computed on the row-normalised model ``P/σ`` in float64
        (the model every certificate of the library is about).

    Raises
    ------
    ValueError
        For bad arguments (named), and where ``Q*`` or an iterate leaves the float64 range
        (naming the batch index, ``max|R|``, ``γ`` and the entry; see *Float range*).

    Notes
    -----
    Guarantee (derived here): if ``T Q_0 ≥ Q_0`` then for all ``k``
    ``T^n Q_k ≤ Q_{k+1} ≤ Q*`` and ``T Q_{k+1} ≥ Q_{k+1}``, hence
    ``‖Q* − Q_k‖∞ ≤ γ^{nk} ‖Q* − Q_0‖∞`` — a ``γ^n`` speed-up over value iteration.
    Proof: with ``π`` greedy for ``W = T^{n−1}Q_k ≥ Q_k``, ``T^π W = T W ≥ W``. ``R_π`` is
    monotone (``R_π Q = (I − γPC)^{-1}(r + γP(π − μc)Q)``, ``π − μc ≥ 0``) with fixed
    point ``Q^π ≥ W``, and ``R_π Q − Q = (I−γPC)^{-1}(T^πQ − Q) ≥ T^πQ − Q ≥ 0``, so
    ``T^n Q_k = T^π W ≤ R_π^m W ≤ Q^π ≤ Q*``; finally
    ``T^π(R_πQ) − R_πQ = γP(π − μc)(R_πQ − Q) ≥ 0`` keeps ``T Q_{k+1} ≥ Q_{k+1}``.
    Retrace is a γ-contraction towards ``Q^π`` for any ``μ`` (Munos et al. 2016, Thm 1).
    With ``n = m = 1`` and ``λ = 0`` this is value iteration on ``Q``. The
    algorithm's multi-step structure follows Tang et al. (2023); the bound is the one
    proved above (the paper's own constant was not available to transcribe).

    *Round-off.* The computed iterates are not the exact ones: the rate alone fell below what
    float64 computes (``‖Q* − Q_k‖∞ = 6.4e-15`` with the rate at ``2.1e-15``, and ``7.5e-9`` against
    ``2.7e-9`` with rewards of size 1e6, γ = 0.9, ``n = m = 1``), and on float32 models, whose rows
    of ``P`` miss 1 by ~1e-7, the iterates converged to another fixed point (error 1.13 against a
    rate of 2.5e-9, rewards 1e6). The trace's ``bound`` is therefore ``b_k + η`` with

        b_0 = ‖Q_ref − Q_0‖∞ + η,     b_{k+1} = γ^n b_k + γ(w_k + ε_k/(1 − γ)) + ξ_k,

    (each rounded up by ``1 + 8u``), which bounds ``‖Q* − Q_k‖∞`` for the computed ``Q_k`` from any start; unrolled,
    ``b_k = γ^{nk} b_0 + Σ_{j<k} γ^{n(k−1−j)} a_j``, the geometric sum of the per-step allowances
    ``a_j``, at most ``max_j a_j/(1 − γ^n)`` (the round-off floor of the rate). Here ``w_k`` bounds
    the error of the computed ``W = T^{n−1}Q_k`` (each computed ``T x`` is within
    ``e(x) = γ_{S+2}‖r‖∞ + γ(γ_{S+2} + δ)‖x‖∞`` of the exact one, :class:`~rltheory.mdp.discounted._Roundoff`,
    with ``δ`` also counting the normalisation; errors propagate by ``γ``), ``ε_k`` is the
    certified defect of the invariant, ``T W ≥ W − ε_k`` (from the computed ``T W − W`` and
    ``e(W)``), and ``ξ_k`` bounds the error of the ``m`` computed Retrace applications a posteriori
    (their residuals, :func:`_retrace`). Proof of the step: with ``c = ε/(1 − γ)``, ``W' = W − c``
    has ``T W' ≥ W'`` and the same greedy ``π``, so ``T W' ≤ R_π^m W' ≤ Q*`` as above; ``R_π`` is
    monotone with ``R_π(Y + d) ≤ R_π Y + γd`` for constants ``d ≥ 0`` (``(I − γPC)^{-1}1 ≥ 1``), so
    ``R_π^m W' ≤ R_π^m W ≤ R_π^m W' + γ^m c`` and
    ``‖Q* − R_π^m W‖∞ ≤ max(‖Q* − T W‖∞ + γc, γ^m c) ≤ γ(‖Q* − W‖∞ + c)``, with
    ``‖Q* − W‖∞ ≤ γ^{n−1} b_k + w_k``. For ``λ = 0`` and ``m = 1`` the step is ``T^π W = T W``, within
    ``γ‖Q* − W‖∞`` of ``Q*`` from any ``W``, and ``ε`` is not counted. In exact arithmetic from
    ``T Q_0 ≥ Q_0``, ``w = ε = ξ = 0`` and this is the rate ``γ^{nk}``.

    *Float range.* Everything above is positively homogeneous in ``(r, Q_0, Q_ref)``; where
    ``max(|r|, |Q_0|)/(1 − γ) > 2^1000`` the iteration runs on these times a power of two ``c`` and
    divides ``Q``, ``error`` and ``bound`` by ``c`` (exact; the stopping test compares
    ``‖Q_{k+1} − Q_k‖∞/c`` with ``tol``), so that ``T Q_0 − Q_0`` beyond the float range does not
    turn the iterates into NaN (``r = ±2^1023``, ``γ = 0.05``). Elsewhere ``c = 1``. Where ``Q*`` itself
    (the default reference) or an iterate ``Q_k`` divided by ``c`` is beyond the float range
    (``r = 1e308``, ``γ = 0.9``: ``Q* ≈ 1e309``), ``domo_vi`` raises the located ``ValueError`` of the
    exact discounted solvers (:func:`rltheory.mdp.bellman._check_in_range`) instead of returning ``inf``.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = domo_vi(mdp, n_improve=2, m_eval=1, lam=1.0)
    >>> np.round(res.Q, 9).tolist(), res.converged
    ([[1.0, 2.0]], True)
    """
    P, R, g = _model(mdp, "domo_vi", single=False)
    n_improve = _int(n_improve, "n_improve")
    m_eval = _int(m_eval, "m_eval")
    iterations = _int(iterations, "iterations", 0)
    lam_ = real_scalar(lam)  # Python or numpy real; NaN (failing the range) for anything else
    if not 0 <= lam_ <= 1:
        raise ValueError(f"lam must lie in [0, 1]; got {lam!r}")
    if not real_scalar(tol) > 0:
        raise ValueError(f"tol must be > 0; got {tol!r}")
    tol = check_tolerance(real_scalar(tol))  # finite
    lam = lam_
    # the row-normalised model P/σ (the one the bound is about) in float64: float32 rows miss 1 by
    # ~1e-7, and iterating with them converged to the stored P's fixed point, off by ~1e-7‖Q‖/(1−γ)
    P = np.asarray(P, dtype=np.float64)
    P = P / P.sum(-1, keepdims=True)
    R = np.asarray(R, dtype=np.float64)
    shape = mdp.batch_shape + (mdp.S, mdp.A)
    Q0 = None if Q0 is None else _q0(mdp, Q0, shape)
    # DoMo-VI is positively homogeneous in (r, Q_0, Q_ref): near the float range run on the inputs
    # times a power of two c (exact; c = 1 elsewhere) and divide the results by c
    c = _scale(g, R, *(() if Q0 is None else (Q0,)))
    R = R * c
    model = FiniteMDP(P, R, g)
    ro = _Roundoff(model)
    u = ro.u
    # ‖P̂ − P/σ‖∞ of the normalised copy: each entry is P/σ to a relative γ_{2S+2}
    defect = higham_gamma(2 * mdp.S + 2, u) * (1.0 + ro.a)

    def norm(x: np.ndarray) -> np.ndarray:
        return np.abs(x).max(axis=(-2, -1))

    def sweep(x: np.ndarray) -> np.ndarray:
        """Error of a computed ``T x`` or ``T^π x`` (any ``π``) against the exact operator of ``P/σ``."""
        return ro._sweep(norm(x)) + g * defect * norm(x)

    up = 1.0 + 8.0 * u  # the rounding of the bound's own few operations
    mu = _behaviour(mdp, behavior)
    Qs = _q_star(model, Q_star) if Q_star is None else _q_star(model, Q_star) * c
    # Q* beyond the float range (r = 1e308 at γ = 0.9): the iterates of the scaled run are finite, but
    # Q/c is not (Q = inf, NaN where two overflows met); refused as the discounted solvers do
    _in_range(mdp, Qs, c, g, "Q*")
    if Q0 is None:
        Q = np.broadcast_to(R.min(axis=(-2, -1))[..., None, None] / (1.0 - g), shape).copy()
    else:
        Q = Q0 * c
    # ‖Q_ref − Q*‖∞ ≤ ‖T Q_ref − Q_ref‖∞/(1 − γ), T Q_ref computed to sweep(Q_ref)
    eta = (
        up
        * (norm(np.asarray(_q_values(model, Qs.max(-1))) - Qs) * (1.0 + 2.0 * u) + sweep(Qs))
        / (1.0 - g)
    )
    err0 = norm(Qs - Q)
    b = up * (err0 * (1.0 + u) + eta)  # ≥ ‖Q* − Q_0‖∞
    # the γ^{nk} guarantee needs T Q_0 ≥ Q_0 (true for the default start up to rounding); for any
    # other start the trace's bound is +inf (vacuous): the error can grow (5.52 after 1.8 was claimed)
    TQ0 = np.asarray(_q_values(model, Q.max(-1)))
    slack = 16.0 * np.finfo(float).eps * np.maximum(np.abs(Q), np.abs(TQ0)).max(axis=(-2, -1))
    certified = np.all(TQ0 - Q >= -slack[..., None, None], axis=(-2, -1))
    rec = TraceRecorder()

    def record(k: int, error: np.ndarray, bound: np.ndarray) -> None:
        with np.errstate(over="ignore"):  # a value beyond the float range is inf
            rec.record(k, error=error / c, bound=bound / c)

    record(0, err0, up * (b + eta))
    pi = np.argmax(Q, axis=-1)
    converged = False
    k = 0
    gn = g**n_improve
    vi = lam == 0 and m_eval == 1  # R_π = T^π, one application
    for k in range(1, iterations + 1):
        W, w = Q, 0.0
        for _ in range(n_improve - 1):  # W = T^{n-1} Q_k, within w of the exact one
            w = g * w + sweep(W)
            W = np.asarray(_q_values(model, W.max(-1)))
        if vi:  # T^π W = T W, a γ-contraction towards Q* from any W: no invariant needed
            eps = 0.0
        else:  # T W ≥ W − ε (exact T): the rounding breaks the invariant T W ≥ W by up to ε
            gap = W - np.asarray(_q_values(model, W.max(-1)))
            eps = np.maximum(gap.max(axis=(-2, -1)), 0.0) + 2.0 * u * norm(gap) + sweep(W)
        pi = np.asarray(_greedy(W))
        new, xi = W, 0.0
        for _ in range(m_eval):
            new, x = _retrace(P, R, g, mu, pi, float(lam), new, sweep(new), u)
            xi = g * xi + x
        step = float(np.abs(new - Q).max())
        Q = new
        with np.errstate(over="ignore"):
            if not np.isfinite(float(np.abs(Q).max()) / c):  # not a silent inf table after the cap
                _in_range(mdp, Q, c, g, f"Q_{k}")
        b = up * (gn * b + g * (w + eps / (1.0 - g)) + xi)
        record(k, norm(Qs - Q), np.where(certified | vi, up * (b + eta), np.inf))
        if step / c <= tol:
            converged = True
            break
    if not converged and iterations > 0:
        warnings.warn(
            f"domo_vi reached iterations={iterations} before ‖Q_k+1 − Q_k‖∞ <= {tol:g}",
            ConvergenceWarning,
            stacklevel=2,
        )
    Q = _in_range(mdp, Q, c, g, "Q_k")
    return DoMoResult(Q=Q, policy=pi, iterations=k, converged=converged, trace=rec.finish())
