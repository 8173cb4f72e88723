r"""Offline equilibrium learning in finite-horizon general-sum Markov games, and MARLHF.

A dataset of episodes with joint actions ``a = (a_1, …, a_n)`` and one reward per
player (:func:`rltheory.mdp.offline_data.sample_game_episodes`) gives, at every step,
confidence intervals on each player's Bellman backup (Hoeffding radius
``(H−h)√(ln(2/δ')/(2n_h(s,a)))`` on split data, or the elliptical radius
``β‖φ‖_{Λ_h^{-1}}`` for linear features). For a joint Markov policy ``π`` they give

* a **lower bound** on each player's value ``V̲_i^π ≤ V_i^π`` (pessimistic evaluation),
* an **upper bound** on each player's best deviation value ``V̄_i^† ≥ max_{dev} V_i^{dev}``
  (optimistic best response): coarse deviations ``(π_i', π_{−i})`` for Nash / CCE, strategy
  modifications ``φ∘π`` for CE,

and so the **gap relaxation** (Zhang, Bai & Jiang 2023, §4, "Bellman-consistent pessimism")

    ``Ĝ(π)(s) = Σ_i [ V̄_{i,0}^†(s) − V̲_{i,0}^π(s) ]  ≥  Gap(π)(s)``

on the confidence event — NashConv for Nash/CCE, the CE gap for CE, one framework for
the three solution concepts. Two learners minimise it:

* :func:`pessimistic_equilibrium_vi` — stage-wise: backward over ``h``, at every state
  the stage policy minimising ``Σ_i max(0, dev_i(σ; Q̄_i^†) − σ·Q̲_i)`` (an LP for CE/CCE; for
  Nash, the best product policy among the pure profiles and the Lemke–Howson equilibria
  of the pessimistic and point-estimate stage games). The policy at step ``h`` depends
  only on data of steps ``≥ h``, so with split data the certificate needs no union bound
  over policies (cf. Cui & Du 2022, strategy-wise pessimism).
* :func:`gap_relaxation_equilibrium` — ``argmin_{π∈Π} Ĝ(π)`` over a finite candidate set
  (union bound over ``|Π|``); with ``π* ∈ Π`` it satisfies the unilateral-coverage bound
  :func:`rltheory.bounds.offline.offline_game_gap_rate`.

:func:`equilibrium_gap` computes the exact NashConv / CCE gap / CE gap of a joint policy
in the true game (the same recursions with the exact backup).

**MARLHF** (Zhang et al. 2024; implemented in :mod:`rltheory.algorithms.marlhf`, re-exported here):
rewards are unobserved; each player compares
trajectory pairs (Bradley–Terry). :func:`bradley_terry_mle` fits ``r_i`` (tabular,
``r_{i,h}(s, a)``) by ridge-regularised logistic MLE (Newton's method);
:func:`marlhf_equilibrium` picks, among candidate policies, the one minimising the upper
confidence bound on its Nash gap ``Σ_i max_{π_i'} [θ̂_iᵀΔ + β‖Δ‖_{Σ_i^{-1}}]`` with
``Δ = ψ(π_i', π_{−i}) − ψ(π)`` the occupancy difference (known dynamics).

Host-only (numpy, SciPy HiGHS for the stage LPs).

References
----------
Zhang, Y., Bai, Y., Jiang, N. (2023). Offline learning in Markov games with general
function approximation. ICML (interval estimation, gap relaxation; NE/CE/CCE).
Cui, Q., Du, S. S. (2022). When are offline two-player zero-sum Markov games solvable?
NeurIPS 35; and Provably efficient offline multi-agent RL via strategy-wise bonus. NeurIPS 35.
Zhang, N., Wang, X., Cui, Q., Zhou, R., Kakade, S., Du, S. (2024). Multi-agent RL from
human feedback: data coverage and algorithmic techniques (single-policy coverage is not
enough; unilateral coverage is).
Bradley, R. A., Terry, M. E. (1952). Rank analysis of incomplete block designs. Biometrika 39.
Liu, Q., Wang, T., Jin, C. (2021). A sharp analysis of model-based RL with self-play. ICML
(Markov CE via strategy modifications).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog

from .._numerics import unit_range
from .._validate import (
    as_distribution,
    check_finite,
    check_int,
    check_probability,
    check_real,
    real_scalar,
)
from ..errors import InvalidModelError, SolverError
from ..games.bimatrix import lemke_howson
from ..mdp.offline_data import EpisodeDataset
from ._offline_common import _features, _group, _policy_array, _ridge, _Step

# MARLHF lives in .marlhf; re-exported so every name stays importable here
from .marlhf import (  # noqa: F401
    BradleyTerryResult,
    MARLHFResult,
    bradley_terry_mle,
    marlhf_equilibrium,
    trajectory_features,
)

__all__ = [
    "GameOfflineResult",
    "BradleyTerryResult",
    "MARLHFResult",
    "equilibrium_gap",
    "interval_gap_bound",
    "pessimistic_equilibrium_vi",
    "gap_relaxation_equilibrium",
    "trajectory_features",
    "bradley_terry_mle",
    "marlhf_equilibrium",
]

CONCEPTS = ("nash", "cce", "ce")


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class GameOfflineResult:
    r"""Output of an offline equilibrium learner.

    Attributes
    ----------
    policy : array (H, S, A_1, …, A_n)
        Joint Markov policy (product for Nash).
    lower : array (n, H+1, S)
        ``V̲_{i,h}``: lower confidence bounds on each player's value of ``policy``.
    upper : array (n, H+1, S)
        ``V̄_{i,h}^†``: upper confidence bounds on each player's best deviation value.
    gap_bound : array (S,)
        ``Ĝ(s) = Σ_i max(0, V̄_{i,0}^†(s) − V̲_{i,0}(s))`` — certified upper bound on the gap of
        ``concept`` from ``s`` on the confidence event.
    concept : str
    delta : float
    counts : int array (H, S, J)
    candidate : int or None
        Index of the chosen candidate (:func:`gap_relaxation_equilibrium`).
    candidate_bounds : array or None
        ``μ·Ĝ`` of every candidate.
    """

    policy: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    gap_bound: np.ndarray
    concept: str
    delta: float
    counts: np.ndarray
    candidate: int | None = None
    candidate_bounds: np.ndarray | None = None


# --------------------------------------------------------------------------- checks and estimators
def _concept(concept: Any) -> str:
    if concept not in CONCEPTS:
        raise ValueError(f"concept must be one of {CONCEPTS}; got {concept!r}")
    return concept


def _prob(delta: Any, name: str = "delta") -> float:
    d = real_scalar(delta)  # Python or numpy real scalar (not bool); NaN otherwise, which fails below
    if not 0.0 < d < 1.0:
        raise ValueError(f"{name} must be a probability in (0, 1); got {delta!r}")
    return d


def _check_game_data(data: Any, what: str) -> EpisodeDataset:
    if not isinstance(data, EpisodeDataset):
        raise TypeError(f"{what} needs an EpisodeDataset of joint actions; got {type(data).__name__}")
    if data.rewards.ndim != 3:
        raise InvalidModelError(f"{what} needs joint actions and one reward per player (actions [K, H, n]); got a single-agent dataset")
    bad = (data.rewards < 0) | (data.rewards > 1)
    if bad.any():
        k, h, i = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidModelError(
            f"{what} assumes rewards in [0, 1]; EpisodeDataset.rewards[k={k}, h={h}, i={i}] = {data.rewards[k, h, i]:.6g}"
        )
    return data


def _joint_steps(data: EpisodeDataset, split: bool) -> list[_Step]:
    H = data.H
    ja = data.joint_actions()
    k = np.arange(data.K)
    out = []
    for h in range(H):
        idx = k[k % H == h] if split else k
        out.append(_Step(data.states[idx, h], ja[idx, h], data.rewards[idx, h], data.states[idx, h + 1]))
    return out


class _Estimator:
    """Per-step interval estimates ``[mean ∓ radius]`` of ``E[r_i + V(s') | s, a]``."""

    def __init__(self, data: EpisodeDataset, *, log_inv_delta: float, features: Any, beta: Any, ridge: float,
                 split: bool) -> None:
        self.H, self.S = data.H, data.S
        self.J = int(np.prod(data.action_shape))
        self.steps = _joint_steps(data, split)
        self.log_inv_delta = log_inv_delta  # ln(1/δ') of one interval (δ' itself may underflow)
        self.counts = np.stack([_group(st, self.S, self.J, np.zeros(st.s.shape[0]))[0] for st in self.steps]).astype(np.int64)
        self.phi = None
        if features is not None:
            self.phi = _features(features, self.H, self.S, self.J)
            d = self.phi.shape[-1]
            self.Z, self.W, self.beta = [], [], []
            for h, st in enumerate(self.steps):
                Lam, X = _ridge(st, self.phi[h], ridge, h)
                try:
                    Linv = np.linalg.inv(Lam)
                except np.linalg.LinAlgError:
                    raise ValueError(f"Λ_{h} is singular at step h={h}; use ridge > 0") from None
                F = self.phi[h].reshape(-1, d)
                self.W.append(F @ Linv @ X.T)  # maps sample targets to fitted values [S*J, m]
                self.Z.append(np.sqrt(np.maximum(np.sum((F @ Linv) * F, axis=-1), 0.0)).reshape(self.S, self.J))
                if isinstance(beta, str):
                    B = float(self.H - h)
                    logdet = np.linalg.slogdet(Lam)[1] - d * math.log(ridge)
                    self.beta.append(0.5 * B * math.sqrt(2.0 * log_inv_delta + logdet) + math.sqrt(ridge * d) * B)
                else:
                    self.beta.append(float(beta))

    def interval(self, h: int, i: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, radius, visited) for targets ``y = r_i + v(s')`` at step ``h``."""
        st = self.steps[h]
        y = st.r[:, i] + v[st.s2]
        B = float(self.H - h)
        if self.phi is None:
            n, mean, _ = _group(st, self.S, self.J, y)
            # hoeffding_radius(n, B, δ') = B √(ln(2/δ')/(2n)) (B for n = 0, capped at B), from ln(1/δ')
            r = B * np.sqrt((math.log(2.0) + self.log_inv_delta) / (2.0 * np.maximum(n, 1.0)))
            return mean, np.where(n > 0, np.minimum(r, B), B), n > 0
        mean = (self.W[h] @ y).reshape(self.S, self.J)
        return mean, self.beta[h] * self.Z[h], np.ones((self.S, self.J), dtype=bool)

    def q_bounds(self, h: int, i: int, v_lo: np.ndarray, v_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``Q̲ = clip(mean(v_lo) − Γ)`` (0 unvisited) and ``Q̄ = clip(mean(v_hi) + Γ)`` (H−h unvisited)."""
        B = float(self.H - h)
        m_lo, g, vis = self.interval(h, i, v_lo)
        m_hi, g2, _ = self.interval(h, i, v_hi)
        lo = np.where(vis, np.clip(m_lo - g, 0.0, B), 0.0)
        hi = np.where(vis, np.clip(m_hi + g2, 0.0, B), B)
        return lo, hi


# --------------------------------------------------------------------------- stage quantities
def _marginal_others(sig: np.ndarray, i: int) -> np.ndarray:
    """``σ_{−i}`` with a size-1 axis for player ``i`` (joint-shape array)."""
    return sig.sum(axis=i, keepdims=True)


def _deviation(concept: str, sig: np.ndarray, q: np.ndarray, i: int) -> float:
    """Best deviation value of player ``i`` against stage policy ``sig`` with payoffs ``q`` (joint shape)."""
    if concept == "ce":
        qi = np.moveaxis(q, i, 0)  # [A_i', rest]
        si = np.moveaxis(sig, i, 0)  # [A_i, rest]
        vals = np.tensordot(si.reshape(si.shape[0], -1), qi.reshape(qi.shape[0], -1), axes=([1], [1]))  # [a_i, a_i']
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
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(len(rows) + n_g), A_eq=A_eq, b_eq=[1.0], bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise SolverError(f"stage gap LP failed: {res.message}", status=res.status)
    sig = np.clip(res.x[:J], 0.0, None)
    return (sig / sig.sum()).reshape(shape)


def _surrogate(concept: str, sig: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    return sum(_deviation(concept, sig, hi[i], i) - float(np.sum(sig * lo[i])) for i in range(lo.shape[0]))


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
                pol[h, s] = _stage_nash(lo_s, hi_s) if concept == "nash" else _stage_lp(concept, lo_s, hi_s)
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
    Pf = np.asarray(P, dtype=np.float64)
    Rf = np.asarray(R, dtype=np.float64)
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


def _equilibrium_gap(P: np.ndarray, R: np.ndarray, pol: np.ndarray, concept: str, mu: np.ndarray) -> float:
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


def _estimator(data: EpisodeDataset, delta: float, n_candidates: int, features: Any, beta: Any, ridge: float,
               split: bool) -> _Estimator:
    n, H, S = data.n_players, data.H, data.S
    J = int(np.prod(data.action_shape))
    # union over players, steps, (s, a) pairs, the two value functions and the candidates:
    # δ' = δ / (2 n H |Π| S J), kept as ln(1/δ') = ln(2 n H |Π| S J) − ln δ because δ' itself
    # underflows (δ = 5e-324, or δ = 1e-320 with a few hundred events) and 1/δ' overflows
    # (δ' < 5.6e-309), which made the self-normalised β infinite and β·‖φ‖ = inf·0 = NaN
    log_inv_delta = math.log(2 * n * H * n_candidates * (S * J if features is None else 1)) - math.log(delta)
    if not isinstance(split, (bool, np.bool_)):  # split='False' is truthy: it split the data
        raise ValueError(f"split must be True or False; got {split!r}")
    if features is not None and beta is None:
        raise ValueError("linear intervals need beta (a number or 'self-normalized')")
    if isinstance(beta, str):
        if beta != "self-normalized":
            raise ValueError(f"beta must be a finite number >= 0 or 'self-normalized'; got {beta!r}")
        if not split or not ridge > 0:
            raise ValueError(f"beta='self-normalized' needs split=True and ridge > 0; got split={split!r}, ridge={ridge!r}")
    elif beta is not None:
        b = real_scalar(beta)  # Python or numpy real scalar (not bool); NaN otherwise
        if not (b >= 0 and math.isfinite(b)):  # a negative radius would swap the interval ends and void the certificate
            raise ValueError(f"beta must be a finite number >= 0 or 'self-normalized'; got {beta!r}")
        beta = b
    if features is not None:
        check_real(ridge, "ridge", low=0.0)
    return _Estimator(data, log_inv_delta=log_inv_delta, features=features, beta=beta, ridge=ridge, split=split)


def interval_gap_bound(
    data: EpisodeDataset, policy: Any, *, concept: str = "nash", delta: float = 0.1, n_candidates: int = 1,
    features: Any = None, beta: Any = None, ridge: float = 1.0, split: bool = True,
) -> GameOfflineResult:
    r"""Interval estimation for one joint policy: ``V̲_i^π``, ``V̄_i^†`` and ``Ĝ(π) = Σ_i (V̄_i^† − V̲_i^π)``.

    The Bellman-consistent pessimism intervals of Zhang, Bai & Jiang (2023), tabular
    (Hoeffding, ``features=None``) or linear (``β‖φ‖_{Λ^{-1}}``) form. On the confidence
    event (probability ``≥ 1 − δ`` with ``split=True``; the union bound covers
    ``n_candidates`` policies chosen before seeing the data) ``Ĝ(π)(s) ≥ Gap(π)(s)`` at
    every state.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import sample_game_episodes
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    >>> d = sample_game_episodes(P, R, np.full((1, 1, 2, 2), 0.25), 4000, rng=0)
    >>> res = interval_gap_bound(d, np.eye(4)[0].reshape(1, 1, 2, 2))  # coordinated (0, 0)
    >>> bool(0.0 < res.gap_bound[0] < 0.2)
    True
    """
    data = _check_game_data(data, "interval_gap_bound")
    c = _concept(concept)
    dl = _prob(delta)
    n_candidates = check_int(n_candidates, "n_candidates")
    shape = data.action_shape
    pol = _policy_array(policy, data.H, data.S, shape)
    est = _estimator(data, dl, n_candidates, features, beta, ridge, split)
    _, lo_V, hi_V = _backward(data.H, data.S, shape, est.q_bounds, c, pol)
    gap = np.sum(np.maximum(0.0, hi_V[:, 0] - lo_V[:, 0]), axis=0)
    return GameOfflineResult(pol, lo_V, hi_V, gap, c, dl, est.counts)


def pessimistic_equilibrium_vi(
    data: EpisodeDataset, *, concept: str = "nash", delta: float = 0.1, features: Any = None, beta: Any = None,
    ridge: float = 1.0, split: bool = True,
) -> GameOfflineResult:
    r"""Stage-wise pessimistic equilibrium value iteration (Nash, CE or CCE) from offline data.

    Backward over ``h``: with ``V̲_{h+1}`` (pessimistic values of the policy built so
    far) and ``V̄_{h+1}^†`` (optimistic deviation values) form ``Q̲_i`` and ``Q̄_i^†``
    (:func:`interval_gap_bound`) and choose at every ``s``

        ``π̂_h(s) = argmin_σ Σ_i max(0, dev_i(σ; Q̄_i^†(s)) − σ·Q̲_i(s))``

    (LP over joint distributions for CE/CCE; for Nash, product policies among the pure
    profiles and the Lemke–Howson equilibria of ``Q̲`` and of ``(Q̲ + Q̄)/2``).

    Returns
    -------
    GameOfflineResult
        ``gap_bound[s] ≥ Gap(π̂)(s)`` on the confidence event (probability ``≥ 1 − δ``
        with split data: ``π̂_h`` depends only on data of steps ``≥ h``, which is
        independent of the step-``h`` samples' noise given ``V̂_{h+1}``).

    Notes
    -----
    With exact intervals (infinite data) the recursion is Nash / CE / CCE value
    iteration (``Q̲ = Q̄``) and the gap is 0. The positive parts matter for CCE only: a
    player's CCE term can be negative (a correlated device may pay more than every fixed
    deviation), and minimising the plain sum traded one player's negative term against
    another's profitable deviation (for Nash and CE every term is ``≥ 0``). Under unilateral coverage every quantity
    the certificate needs is estimated at rate ``1/√n``; under single-policy coverage
    the deviation values stay uncertain and the certificate — and, by the lower
    bound of Cui & Du (2022), any learner's gap — does not vanish.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import sample_game_episodes
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    >>> d = sample_game_episodes(P, R, np.full((1, 1, 2, 2), 0.25), 4000, rng=0)
    >>> res = pessimistic_equilibrium_vi(d)
    >>> float(equilibrium_gap(P, R, res.policy)), bool(res.gap_bound[0] < 0.2)
    (0.0, True)
    """
    data = _check_game_data(data, "pessimistic_equilibrium_vi")
    c = _concept(concept)
    dl = _prob(delta)
    shape = data.action_shape
    if c == "nash" and len(shape) != 2:
        raise ValueError(f"concept='nash' handles two players; got {len(shape)} (use 'cce' or 'ce')")
    est = _estimator(data, dl, 1, features, beta, ridge, split)
    pol, lo_V, hi_V = _backward(data.H, data.S, shape, est.q_bounds, c, None)
    gap = np.sum(np.maximum(0.0, hi_V[:, 0] - lo_V[:, 0]), axis=0)
    return GameOfflineResult(pol, lo_V, hi_V, gap, c, dl, est.counts)


def gap_relaxation_equilibrium(
    data: EpisodeDataset, candidates: list[Any], *, concept: str = "nash", delta: float = 0.1, mu: Any = None,
    features: Any = None, beta: Any = None, ridge: float = 1.0, split: bool = True,
) -> GameOfflineResult:
    r"""``π̂ = argmin_{π ∈ Π} μ·Ĝ(π)`` over a finite candidate set (Zhang, Bai & Jiang 2023, Algorithm 1, tabular/linear).

    Every candidate's interval estimates use the failure probability ``δ/|Π|`` so the
    certificates hold simultaneously. With ``π* ∈ Π`` (a Nash equilibrium of the true
    game) and unilateral coverage, ``NashConv(π̂) ≤ Ĝ(π̂) ≤ Ĝ(π*)``, bounded by
    :func:`rltheory.bounds.offline.offline_game_gap_rate`.

    Returns
    -------
    GameOfflineResult
        With ``candidate`` (index of π̂) and ``candidate_bounds`` (``μ·Ĝ`` per candidate).

    Raises
    ------
    ValueError
        No candidates, a candidate that is not a joint policy of the dataset's shape (named
        ``candidates[j]``, its bad entry located), or a ``mu`` that is not a distribution over the
        ``S`` states (shape, non-finite or negative entry, sum), located.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import sample_game_episodes
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    >>> d = sample_game_episodes(P, R, np.full((1, 1, 2, 2), 0.25), 4000, rng=0)
    >>> cands = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]
    >>> gap_relaxation_equilibrium(d, cands).candidate in (0, 3)
    True
    """
    data = _check_game_data(data, "gap_relaxation_equilibrium")
    if len(candidates) < 1:
        raise ValueError("candidates must hold at least one joint policy")
    # checked like equilibrium_gap's mu: an unchecked one of the wrong length reached numpy's bare
    # matmul error, a NaN made every bound NaN (candidate 0 "chosen") and a negative one the argmax
    if mu is not None and np.shape(mu) != (data.S,):
        raise ValueError(f"mu must have shape (S,) = ({data.S},); got {np.shape(mu)}")
    m = np.full(data.S, 1.0 / data.S) if mu is None else as_distribution(mu, "mu", data.S, np, np.float64)
    # checked here under their own names: interval_gap_bound's message said 'policy' for any of them
    candidates = [_policy_array(p, data.H, data.S, data.action_shape, f"candidates[{j}]") for j, p in enumerate(candidates)]
    results = [
        interval_gap_bound(data, p, concept=concept, delta=delta, n_candidates=len(candidates), features=features,
                           beta=beta, ridge=ridge, split=split)
        for p in candidates
    ]
    vals = np.array([float(m @ r.gap_bound) for r in results])
    j = int(np.argmin(vals))
    r = results[j]
    return GameOfflineResult(r.policy, r.lower, r.upper, r.gap_bound, r.concept, r.delta, r.counts, j, vals)
