r"""Stage recursions for equilibrium gaps of finite-horizon general-sum Markov games.

For a joint stage policy ``σ`` over the joint actions ``(a_1, …, a_n)`` and per-player
stage payoffs ``q_i``: the best deviation value ``dev_i(σ; q_i)`` — coarse deviations
``(π_i', σ_{−i})`` for Nash and CCE, strategy modifications ``φ: A_i → A_i`` for CE (Liu,
Wang & Jin 2021) — and, given lower and upper payoffs ``Q̲_i ≤ Q̄_i``, the stage policy
minimising the surrogate gap ``Σ_i max(0, dev_i(σ; Q̄_i) − σ·Q̲_i)`` (an LP for CE/CCE; for
Nash the best product policy among the pure profiles and the Lemke–Howson equilibria of the
pessimistic and point-estimate stage games). :func:`_backward` runs them backward over
``h``: with exact backups it gives :func:`equilibrium_gap` (NashConv, CCE gap or CE gap of
a joint Markov policy), with confidence intervals the offline learners of
:mod:`rltheory.algorithms.offline_games` (the gap relaxation of Zhang, Bai & Jiang 2023,
§4).

Host-only (numpy, SciPy HiGHS for the stage LPs).

References
----------
Zhang, Y., Bai, Y., Jiang, N. (2023). Offline learning in Markov games with general
function approximation. ICML (gap relaxation; NE/CE/CCE).
Liu, Q., Wang, T., Jin, C. (2021). A sharp analysis of model-based RL with self-play. ICML
(Markov CE via strategy modifications).
Lemke, C. E., Howson, J. T. (1964). Equilibrium points of bimatrix games. SIAM J. 12(2).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import linprog

from .._numerics import highs_console_silenced, unit_range
from .._validate import as_distribution, check_finite, check_probability
from ..errors import SolverError
from ..games.bimatrix import lemke_howson
from ..mdp._dataset_checks import _real_host
from ._offline_common import _policy_array

__all__ = ["CONCEPTS", "equilibrium_gap"]

CONCEPTS = ("nash", "cce", "ce")


def _concept(concept: Any) -> str:
    if concept not in CONCEPTS:
        raise ValueError(f"concept must be one of {CONCEPTS}; got {concept!r}")
    return concept


# --------------------------------------------------------------------------- stage quantities
def _marginal_others(sig: np.ndarray, i: int) -> np.ndarray:
    """``σ_{−i}`` with a size-1 axis for player ``i`` (joint-shape array)."""
    return sig.sum(axis=i, keepdims=True)


def _deviation(concept: str, sig: np.ndarray, q: np.ndarray, i: int) -> float:
    """Best deviation value of player ``i`` against stage policy ``sig`` with payoffs ``q`` (joint shape)."""
    if concept == "ce":
        qi = np.moveaxis(q, i, 0)  # [A_i', rest]
        si = np.moveaxis(sig, i, 0)  # [A_i, rest]
        vals = np.tensordot(
            si.reshape(si.shape[0], -1), qi.reshape(qi.shape[0], -1), axes=([1], [1])
        )  # [a_i, a_i']
        return float(np.sum(np.max(vals, axis=1)))
    others = _marginal_others(sig, i)
    return float(np.max(np.sum(q * others, axis=tuple(k for k in range(q.ndim) if k != i))))


def _stage_lp(concept: str, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``min_σ Σ_i max(0, dev_i(σ; hi_i) − σ·lo_i)`` over joint distributions σ (CE / CCE), by HiGHS.

    One positive affine map sends ``lo`` and ``hi`` together into ``[0, 1]`` first: the shift cancels
    between the two terms and the scale multiplies the objective, so the minimisers are the same,
    and HiGHS (which treats |entries| < 1e-9 as zero) sees entries of size one.
    """
    lo, hi = unit_range(lo, hi)
    n = lo.shape[0]
    shape = lo.shape[1:]
    J = int(np.prod(shape))
    rows, t_index = [], []
    n_t = 0
    for i in range(n):
        Ai = shape[i]
        hi_i = np.moveaxis(hi[i], i, 0)  # [A_i', rest]
        if concept == "cce":
            for ap in range(Ai):
                coef = np.broadcast_to(np.expand_dims(hi_i[ap], 0), (Ai,) + hi_i.shape[1:])
                rows.append((np.moveaxis(coef, 0, i).reshape(J), n_t))
            t_index.append([n_t])
            n_t += 1
        else:
            ts = []
            for ai in range(Ai):
                for ap in range(Ai):
                    coef = np.zeros((Ai,) + hi_i.shape[1:])
                    coef[ai] = hi_i[ap]
                    rows.append((np.moveaxis(coef, 0, i).reshape(J), n_t))
                ts.append(n_t)
                n_t += 1
            t_index.append(ts)
    # CCE: a player's term dev_i − σ·lo_i can be negative (a correlated device may pay more than every
    # fixed deviation), so the objective is Σ_i g_i with g_i ≥ 0, g_i ≥ t_i − σ·lo_i; minimising the
    # plain sum let one player's negative term pay for another's profitable deviation. CE terms are
    # ≥ 0 (dev_i(σ; hi) ≥ σ·hi_i ≥ σ·lo_i: a_i' = a_i), so CE keeps the plain sum.
    n_g = n if concept == "cce" else 0
    A_ub = np.zeros((len(rows) + n_g, J + n_t + n_g))
    for r, (coef, t) in enumerate(rows):
        A_ub[r, :J] = coef
        A_ub[r, J + t] = -1.0
    for i in range(n_g):  # t_i − σ·lo_i − g_i ≤ 0
        r = len(rows) + i
        A_ub[r, :J] = -lo[i].reshape(J)
        A_ub[r, J + t_index[i][0]] = 1.0
        A_ub[r, J + n_t + i] = -1.0
    if n_g:
        c = np.concatenate([np.zeros(J + n_t), np.ones(n_g)])
    else:
        c = np.concatenate([-lo.reshape(n, J).sum(0), np.ones(n_t)])
    A_eq = np.concatenate([np.ones(J), np.zeros(n_t + n_g)])[None]
    bounds = [(0, None)] * J + [(None, None)] * n_t + [(0, None)] * n_g
    with highs_console_silenced():  # (HiGHS prints some statuses with a bare printf)
        res = linprog(
            c,
            A_ub=A_ub,
            b_ub=np.zeros(len(rows) + n_g),
            A_eq=A_eq,
            b_eq=[1.0],
            bounds=bounds,
            method="highs",
        )
    if res.status != 0:
        raise SolverError(f"stage gap LP failed: {res.message}", status=res.status)
    sig = np.clip(res.x[:J], 0.0, None)
    return (sig / sig.sum()).reshape(shape)


def _surrogate(concept: str, sig: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    return sum(
        _deviation(concept, sig, hi[i], i) - float(np.sum(sig * lo[i])) for i in range(lo.shape[0])
    )


def _stage_nash(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Best product policy (smallest surrogate) among pure profiles and Lemke–Howson equilibria."""
    A1, A2 = lo.shape[1:]
    cands = []
    for a in range(A1):
        for b in range(A2):
            cands.append((np.eye(A1)[a], np.eye(A2)[b]))
    for M in (lo, 0.5 * (lo + hi)):
        cands.append(lemke_howson(M[0], M[1]))
    best, best_val = None, math.inf
    for x, y in cands:
        sig = np.outer(x, y)
        val = _surrogate("nash", sig, lo, hi)
        if val < best_val - 1e-12:
            best, best_val = sig, val
    return best


# --------------------------------------------------------------------------- recursions
def _backward(
    H: int, S: int, shape: tuple[int, ...], q_bounds: Any, concept: str, policy: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stage-wise recursion. ``q_bounds(h, i, v_lo, v_hi) -> (Q̲_i[S,J], Q̄_i[S,J])``.

    With ``policy`` given it is evaluated; otherwise the stage policy minimising the
    surrogate gap is chosen at every ``(h, s)``.
    """
    n = len(shape)
    J = int(np.prod(shape))
    lo_V = np.zeros((n, H + 1, S))
    hi_V = np.zeros((n, H + 1, S))
    pol = np.zeros((H, S) + shape) if policy is None else policy
    for h in range(H - 1, -1, -1):
        lo = np.zeros((n, S, J))
        hi = np.zeros((n, S, J))
        for i in range(n):
            lo[i], hi[i] = q_bounds(h, i, lo_V[i, h + 1], hi_V[i, h + 1])
        for s in range(S):
            lo_s = lo[:, s].reshape((n,) + shape)
            hi_s = hi[:, s].reshape((n,) + shape)
            if policy is None:
                pol[h, s] = (
                    _stage_nash(lo_s, hi_s) if concept == "nash" else _stage_lp(concept, lo_s, hi_s)
                )
            sig = pol[h, s]
            for i in range(n):
                lo_V[i, h, s] = float(np.sum(sig * lo_s[i]))
                hi_V[i, h, s] = _deviation(concept, sig, hi_s[i], i)
    return pol, lo_V, hi_V


def equilibrium_gap(P: Any, R: Any, policy: Any, *, concept: str = "nash", mu: Any = None) -> float:
    r"""Exact gap ``Σ_i max(0, E_μ[max_{dev} V_{i,0}^{dev} − V_{i,0}^π])`` of a joint Markov policy.

    Deviations are coarse ``(π_i', π_{−i})`` for ``"nash"``/``"cce"`` (NashConv of a
    product policy, CCE gap of a correlated one) and strategy modifications
    ``φ_{h,s}: A_i → A_i`` for ``"ce"``; computed by the same stage recursion as the
    offline learners with the exact backup ``r_{i,h} + P_h V``.

    Parameters
    ----------
    P : array (H, S, A_1, …, A_n, S)
    R : array (n, H, S, A_1, …, A_n)
    policy : array (H, S, A_1, …, A_n)
    concept : {"nash", "cce", "ce"}
    mu : array (S,), optional (uniform)

    Raises
    ------
    TypeError
        ``P``, ``R`` or ``policy`` holding text or complex numbers.
    ValueError
        A ``P`` of the wrong shape or with a row off the simplex (or a NaN/inf entry,
        located), an ``R`` of the wrong shape or with a non-finite entry, a ``policy`` row off
        the simplex, a ``mu`` off the simplex over the ``S`` states.

    Examples
    --------
    Matching pennies as a one-shot game (rewards in [0, 1]): uniform play has gap 0,
    the pure profile (0, 0) leaves player 2 a gain of 1.

    >>> import numpy as np
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2), 1 - np.eye(2)])[:, None, None]
    >>> equilibrium_gap(P, R, np.full((1, 1, 2, 2), 0.25)), equilibrium_gap(P, R, np.eye(4)[0].reshape(1, 1, 2, 2))
    (0.0, 1.0)
    """
    c = _concept(concept)
    Pf = _real_host(P, "P")  # a float cast parsed text and dropped imaginary parts
    Rf = _real_host(R, "R")
    if Pf.ndim < 4 or 0 in Pf.shape or Pf.shape[-1] != Pf.shape[1]:
        raise ValueError(
            f"P must have shape (H, S, A_1, ..., A_n, S) with every axis non-empty; got {Pf.shape}"
        )
    H, S = Pf.shape[0], Pf.shape[1]
    shape = tuple(int(a) for a in Pf.shape[2:-1])
    n = len(shape)
    acts = tuple(f"a{i + 1}" for i in range(n))
    check_probability(Pf, "P", ("h", "s") + acts + ("s'",), "P[h, s, a_1, ..., a_n, :]")
    if Rf.shape != (n, H, S) + shape:
        raise ValueError(
            f"R must have shape (n, H, S, A_1, ..., A_n) = {(n, H, S) + shape}; got {Rf.shape} "
            f"(the sizes are read from P of shape {Pf.shape})"
        )
    check_finite(Rf, "R", ("i", "h", "s") + acts)
    pol = _policy_array(policy, H, S, shape)
    m = np.full(S, 1.0 / S) if mu is None else as_distribution(mu, "mu", S, np, np.float64)
    return _equilibrium_gap(Pf, Rf, pol, c, m)


def _equilibrium_gap(
    P: np.ndarray, R: np.ndarray, pol: np.ndarray, concept: str, mu: np.ndarray
) -> float:
    """:func:`equilibrium_gap` on validated float64 arrays (no checks).

    The gap is positively homogeneous in ``R`` (every value and best-deviation value scales
    with it), so the recursion runs on ``R·2^{−e}`` with ``2^e`` the binade of ``max|R|`` and the
    result is scaled back: exact (a power of two) and the same bits at ordinary scales, but
    ``H`` steps of rewards near the float maximum no longer overflow to ``inf − inf = NaN``.
    """
    H, S = P.shape[0], P.shape[1]
    shape = tuple(int(a) for a in P.shape[2:-1])
    n, J = len(shape), int(np.prod(shape))
    Pj = P.reshape(H, S, J, S)
    top = float(np.max(np.abs(R)))
    e = math.frexp(top)[1] if top > 0.0 else 0
    Rj = np.ldexp(R, -e).reshape(n, H, S, J)

    def exact(h: int, i: int, v_lo: np.ndarray, v_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return Rj[i, h] + Pj[h] @ v_lo, Rj[i, h] + Pj[h] @ v_hi

    _, lo_V, hi_V = _backward(H, S, shape, exact, concept, pol)
    gap = float(np.sum(np.maximum(0.0, (hi_V[:, 0] - lo_V[:, 0]) @ mu)))
    with np.errstate(over="ignore"):  # a gap beyond the float range is inf
        return float(np.ldexp(gap, e))
