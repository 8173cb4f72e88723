r"""Offline RL from a fixed dataset: certainty equivalence, LCB-VI, PEVI, CQL; hybrid NPG / actor-critic.

Finite-horizon, undiscounted, rewards in ``[0, 1]``; values ``V_h ∈ [0, H − h]``.
All value-based methods are one backward recursion over an estimated Bellman backup
``B̂_h V = r̂_h + P̂_h V`` with a bonus ``Γ_h`` subtracted:

    ``Q̂_h(s, a) = clip( B̂_h V̂_{h+1}(s, a) − Γ_h(s, a), 0, H − h )``,
    ``π̂_h(s) = argmax_a Q̂_h(s, a)``, ``V̂_h(s) = max_a Q̂_h(s, a)``, ``V̂_H = 0``.

* :func:`certainty_equivalence` — ``Γ = 0``, no clipping: value iteration in the
  empirical model (tabular) or fitted-Q iteration / LSVI (linear features). The
  non-pessimistic baseline; it can be fooled by rarely seen pairs.
* :func:`lcb_vi` — tabular ``Γ`` = Hoeffding radius ``(H−h)√(ι/(2n))`` or the
  empirical-Bernstein radius (:mod:`rltheory.bounds.offline`), ``ι = ln(2HSA/δ)``,
  with per-step sample splitting so the confidence event holds with probability
  ``≥ 1 − δ`` exactly (Rashidinejad et al. 2021; Xie et al. 2021).
* :func:`pevi` — linear features, ridge regression ``ŵ_h = Λ_h^{-1} Σ_τ φ_τ y_τ``,
  ``Γ = β‖φ‖_{Λ_h^{-1}}`` (Jin, Yang & Wang 2021, Algorithm 2).
* :func:`cql` — tabular conservative Q-learning fixed point (Kumar et al. 2020):
  ``Q̂_h = B̂_h V̂_{h+1} − α(π_h/π̂_b − 1)``; :func:`conservative_evaluation` checks the
  underestimation property ``V̂^π ≤ V^π``.

On the confidence event each pessimistic ``V̂_0`` is a pointwise lower bound on
``V^{π̂}_0`` and ``V*_0 − V^{π̂}_0 ≤ 2 Σ_h E_{π*}[Γ_h]``
(:func:`rltheory.bounds.offline.pessimism_suboptimality_bound`).

The hybrid methods (:func:`hybrid_npg`, :func:`hybrid_actor_critic`) add on-policy
roll-outs in the true model to the offline data.

Data-driven routines run on the host (numpy): datasets are host arrays and the
statistics are counts (``bincount``) and small ridge solves.

References
----------
Jin, Y., Yang, Z., Wang, Z. (2021). Is pessimism provably efficient for offline RL?
ICML. Algorithm 1 (meta PEVI), Algorithm 2 (linear PEVI), Thm 4.2, Thm 4.4.
Rashidinejad, P., Zhu, B., Ma, C., Jiao, J., Russell, S. (2021). Bridging offline RL and
imitation learning: a tale of pessimism. NeurIPS 34 (VI-LCB).
Xie, T., Jiang, N., Wang, H., Xiong, C., Bai, Y. (2021). Policy finetuning: bridging
sample-efficient offline and online RL. NeurIPS 34 (episodic VI-LCB, Bernstein bonus).
Abbasi-Yadkori, Y., Pál, D., Szepesvári, C. (2011). Improved algorithms for linear stochastic
bandits. NeurIPS 24, Thm 2 (self-normalised confidence ellipsoid).
Kumar, A., Zhou, A., Tucker, G., Levine, S. (2020). Conservative Q-learning for offline
RL. NeurIPS 33, eq. (2), Thm 3.2.
Zhou, Y., Sekhari, A., Song, Y., Sun, W. (2024). Offline data enhanced on-policy policy
gradient with provable guarantees. ICLR (HNPG).
Tan, K., Fan, W., Wei, Y. (2024). Actor-critics can achieve optimal sample efficiency. ICML
(hybrid actor-critic with offline critic initialisation).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bounds.offline import empirical_bernstein_radius, hoeffding_radius, pevi_beta
from ..errors import ConvergenceWarning, InvalidModelError
from ..mdp.horizon import backward_induction, evaluate_finite_horizon
from ..mdp.model import FiniteHorizonMDP
from ..mdp.offline_data import (
    EmpiricalModel,
    EpisodeDataset,
    TransitionDataset,
    empirical_model,
    sample_episodes,
)
from ..mdp.sample import _rng
from ..trace import Trace, TraceRecorder
from ._policy_opt import multiplicative_update

__all__ = [
    "OfflineResult",
    "certainty_equivalence",
    "lcb_vi",
    "pevi",
    "DiscountedOfflineResult",
    "lcb_vi_discounted",
    "cql",
    "conservative_evaluation",
    "HybridResult",
    "hybrid_npg",
    "hybrid_actor_critic",
]


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class OfflineResult:
    r"""Output of an offline value-based method.

    Attributes
    ----------
    policy : int array, shape (H, S)
        Greedy policy ``π̂_h(s) = argmax_a Q̂_h(s, a)`` (lowest index on ties).
    Q : array, shape (H, S, A)
        ``Q̂_h`` (pessimistic for LCB-VI/PEVI/CQL).
    V : array, shape (H+1, S)
        ``V̂_h(s) = max_a Q̂_h(s, a)``, ``V̂_H = 0``.
    bonus : array, shape (H, S, A)
        ``Γ_h(s, a)`` subtracted (``H − h`` on unvisited pairs for LCB-VI; zero for
        certainty equivalence; ``α(1/π̂_b − 1)`` for CQL's chosen action).
    counts : int array, shape (H, S, A)
        ``n_h(s, a)`` in the samples each step used.
    method : str
    delta : float or None
        Failure probability of the confidence event (pessimistic methods).
    Lambda : array (H, d, d) or None
        PEVI's ``Λ_h = Σ_τ φ_τ φ_τᵀ + λI``.
    """

    policy: np.ndarray
    Q: np.ndarray
    V: np.ndarray
    bonus: np.ndarray
    counts: np.ndarray
    method: str
    delta: float | None = None
    Lambda: np.ndarray | None = None


# --------------------------------------------------------------------------- step data
@dataclass(frozen=True)
class _Step:
    """Transitions used at step ``h``: state, action, reward, next state."""

    s: np.ndarray
    a: np.ndarray
    r: np.ndarray
    s2: np.ndarray


def _steps(data: EpisodeDataset, split: bool) -> list[_Step]:
    """Per-step samples; with ``split`` episode ``k`` feeds only step ``k mod H``."""
    H = data.H
    out = []
    k = np.arange(data.K)
    for h in range(H):
        idx = k[k % H == h] if split else k
        out.append(_Step(data.states[idx, h], data.actions[idx, h], data.rewards[idx, h], data.states[idx, h + 1]))
    return out


def _check_data(data: Any, what: str, unit_rewards: bool) -> EpisodeDataset:
    if not isinstance(data, EpisodeDataset):
        raise TypeError(f"{what} needs an EpisodeDataset; got {type(data).__name__}")
    if data.n_players != 1:
        raise InvalidModelError(f"{what} is single-agent; the dataset has {data.n_players} players' joint actions")
    if unit_rewards:
        bad = (data.rewards < 0) | (data.rewards > 1)
        if bad.any():
            k, h = (int(i) for i in np.argwhere(bad)[0])
            raise InvalidModelError(
                f"{what} assumes rewards in [0, 1] (its bonus and clipping use the range H − h); "
                f"EpisodeDataset.rewards[k={k}, h={h}] = {data.rewards[k, h]:.6g}"
            )
    return data


def _prob(delta: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 < float(delta) < 1.0:
        raise ValueError(f"delta must be a probability in (0, 1); got {delta!r}")
    return float(delta)


def _group(step: _Step, S: int, A: int, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-pair count, mean and unbiased sample variance of targets ``y``."""
    sa = step.s * A + step.a
    n = np.bincount(sa, minlength=S * A).astype(np.float64)
    s1 = np.bincount(sa, weights=y, minlength=S * A)
    s2 = np.bincount(sa, weights=y * y, minlength=S * A)
    mean = np.where(n > 0, s1 / np.maximum(n, 1), 0.0)
    var = np.where(n > 1, (s2 - n * mean**2) / np.maximum(n - 1, 1), 0.0)
    return n.reshape(S, A), mean.reshape(S, A), np.maximum(var, 0.0).reshape(S, A)


def _features(features: Any, H: int, S: int, A: int) -> np.ndarray:
    phi = np.asarray(features, dtype=np.float64)
    if phi.ndim == 3 and phi.shape[:2] == (S, A):
        phi = np.broadcast_to(phi, (H,) + phi.shape)
    if phi.ndim != 4 or phi.shape[:3] != (H, S, A):
        raise ValueError(f"features must have shape (S, A, d) = ({S}, {A}, d) or (H, S, A, d); got {phi.shape}")
    if not np.all(np.isfinite(phi)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(phi))[0])
        raise ValueError(f"features must be finite; features{list(idx)} = {phi[idx]}")
    return phi


def _ridge(step: _Step, phi: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray]:
    """``Λ = Σ φ φᵀ + λI`` and the sample feature matrix ``Φ_τ``."""
    X = phi[step.s, step.a]  # [m, d]
    Lam = X.T @ X + ridge * np.eye(phi.shape[-1])
    return Lam, X


def _recursion(H: int, S: int, A: int, backup: Any, clip: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``Q̂_h = clip(B̂_h V̂_{h+1} − Γ_h)`` backwards; ``backup(h, V_next) -> (est, bonus, visited)``."""
    Q = np.zeros((H, S, A))
    V = np.zeros((H + 1, S))
    G = np.zeros((H, S, A))
    pol = np.zeros((H, S), dtype=np.int64)
    for h in range(H - 1, -1, -1):
        est, bonus, visited = backup(h, V[h + 1])
        q = est - bonus
        if clip:
            q = np.clip(q, 0.0, float(H - h))
        Q[h] = np.where(visited, q, 0.0)
        G[h] = bonus
        pol[h] = np.argmax(Q[h], axis=-1)
        V[h] = np.max(Q[h], axis=-1)
    return pol, Q, V, G


# --------------------------------------------------------------------------- methods
def certainty_equivalence(data: EpisodeDataset, *, features: Any = None, ridge: float = 1.0) -> OfflineResult:
    r"""Greedy (non-pessimistic) offline planning: VI in the empirical model, or linear FQI.

    Tabular (``features=None``): ``Q̂_h = r̂_h + P̂_h V̂_{h+1}`` on visited pairs and
    ``0`` on unvisited ones, i.e. backward induction in the empirical model
    (:func:`rltheory.mdp.offline_data.empirical_model`). Linear: least-squares value
    iteration ``Q̂_h = φᵀ Λ_h^{-1} Σ_τ φ_τ (r_τ + V̂_{h+1}(s'_τ))`` without bonus — PEVI
    with ``β = 0``. All episodes feed every step; no clipping.

    Parameters
    ----------
    data : EpisodeDataset
    features : array (S, A, d) or (H, S, A, d), optional
    ridge : float ≥ 0
        ``λ`` in ``Λ_h`` (linear only).

    Notes
    -----
    With full coverage (every reachable pair has ``ρ_h(s,a) > 0``) ``P̂ → P``
    almost surely and the greedy policy converges to an optimal one. Under partial
    coverage it can prefer a rarely seen pair whose empirical reward is high by
    chance: the failure pessimism removes (Rashidinejad et al. 2021, §4).

    Examples
    --------
    >>> import numpy as np
    >>> d = EpisodeDataset(np.zeros((2, 2), int), np.array([[0], [1]]), np.array([[0.2], [0.9]]), S=1, A=2)
    >>> certainty_equivalence(d).policy.tolist()
    [[1]]
    """
    data = _check_data(data, "certainty_equivalence", unit_rewards=False)
    H, S, A = data.H, data.S, data.A
    steps = _steps(data, split=False)
    counts = np.stack([_group(st, S, A, st.r)[0] for st in steps]).astype(np.int64)
    if features is None:

        def backup(h: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            st = steps[h]
            n, mean, _ = _group(st, S, A, st.r + v[st.s2])
            return mean, np.zeros((S, A)), n > 0

        pol, Q, V, G = _recursion(H, S, A, backup, clip=False)
        return OfflineResult(pol, Q, V, G, counts, "certainty_equivalence")
    res = _linear_vi(data, features, ridge=ridge, beta=0.0, clip=False)
    return OfflineResult(res.policy, res.Q, res.V, res.bonus, counts, "fitted_q_iteration", None, res.Lambda)


def lcb_vi(
    data: EpisodeDataset, *, bonus: Any = "hoeffding", delta: float = 0.1, split: bool = True
) -> OfflineResult:
    r"""Tabular value iteration with lower confidence bounds (LCB-VI).

    ``Q̂_h(s, a) = clip( ȳ_h(s, a) − Γ_h(s, a), 0, H − h )`` where ``ȳ_h(s, a)`` is the
    mean of ``y = r_h + V̂_{h+1}(s_{h+1})`` over the step-``h`` samples at ``(s, a)`` and

    * ``bonus="hoeffding"``: ``Γ = (H − h) √(ln(2/δ')/(2n))``,
    * ``bonus="bernstein"``: ``Γ = √(2 V_n ln(4/δ')/n) + 7 (H − h) ln(4/δ')/(3(n − 1))``
      (empirical variance ``V_n`` of ``y``; Maurer & Pontil 2009, Thm 4),
    * an array ``[H, S, A]``: a given bonus (e.g. to match PEVI with one-hot features),

    with ``δ' = δ/(HSA)``; unvisited pairs get ``Q̂ = 0`` (recorded bonus ``H − h``).

    Parameters
    ----------
    data : EpisodeDataset
        Rewards must lie in ``[0, 1]``.
    bonus : {"hoeffding", "bernstein"} or array (H, S, A)
    delta : float in (0, 1)
    split : bool
        Sample splitting: episode ``k`` feeds step ``k mod H`` only, which makes
        ``V̂_{h+1}`` independent of the step-``h`` samples.

    Returns
    -------
    OfflineResult

    Notes
    -----
    With ``split=True`` and a Hoeffding or Bernstein bonus, with probability
    ``≥ 1 − δ`` (i) ``V̂_h(s) ≤ V^{π̂}_h(s)`` for all ``h, s`` and (ii)
    ``V*_0(μ) − V^{π̂}_0(μ) ≤ 2 Σ_h E_{π*}[Γ_h]`` (Jin, Yang & Wang 2021, Thm 4.2),
    which in the single-policy concentrability ``C*`` is ``≤ H(H+1)√(S C* ln(2HSA/δ)/⌊K/H⌋)``
    for the Hoeffding bonus (:func:`rltheory.bounds.offline.lcb_vi_rate`),
    ``Õ(√(C* S H^5/K))`` — the episodic form of Rashidinejad et al. (2021)'s VI-LCB
    rate; Xie et al. (2021) sharpen the horizon with the Bernstein bonus. Only the
    comparator's coverage matters. Cost ``O(KH + HSA)``.

    Examples
    --------
    One state, action 0 seen 100 times with reward 0.5, action 1 once with reward 1:
    the LCB prefers the well-covered action.

    >>> import numpy as np
    >>> a = np.array([[0]] * 100 + [[1]]); r = np.array([[0.5]] * 100 + [[1.0]])
    >>> d = EpisodeDataset(np.zeros((101, 2), int), a, r, S=1, A=2)
    >>> lcb_vi(d, delta=0.1).policy.tolist(), certainty_equivalence(d).policy.tolist()
    ([[0]], [[1]])
    """
    data = _check_data(data, "lcb_vi", unit_rewards=True)
    dlt = _prob(delta)
    H, S, A = data.H, data.S, data.A
    steps = _steps(data, split=bool(split))
    counts = np.stack([_group(st, S, A, st.r)[0] for st in steps]).astype(np.int64)
    dstep = dlt / (H * S * A)
    given = None
    if isinstance(bonus, str):
        if bonus not in ("hoeffding", "bernstein"):
            raise ValueError(f"bonus must be 'hoeffding', 'bernstein' or an (H, S, A) array; got {bonus!r}")
    else:
        given = np.asarray(bonus, dtype=np.float64)
        if given.shape != (H, S, A) or not np.all(np.isfinite(given)) or np.any(given < 0):
            raise ValueError(f"a given bonus must be a finite non-negative (H, S, A) = {(H, S, A)} array; got shape {given.shape}")

    def backup(h: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        st = steps[h]
        n, mean, var = _group(st, S, A, st.r + v[st.s2])
        B = float(H - h)
        if given is not None:
            b = np.where(n > 0, given[h], B)
        elif bonus == "hoeffding":
            b = hoeffding_radius(n, B, dstep)
        else:
            b = empirical_bernstein_radius(n, var, B, dstep)
        return mean, b, n > 0

    pol, Q, V, G = _recursion(H, S, A, backup, clip=True)
    name = "lcb_vi_" + (bonus if isinstance(bonus, str) else "given")
    return OfflineResult(pol, Q, V, G, counts, name, dlt)


def _linear_vi(
    data: EpisodeDataset, features: Any, *, ridge: float, beta: Any, clip: bool, split: bool = False,
    delta: float | None = None,
) -> OfflineResult:
    """Least-squares VI; ``beta`` a number or ``"self-normalized"`` (per-step β_h from Λ_h)."""
    H, S, A = data.H, data.S, data.A
    phi = _features(features, H, S, A)
    if isinstance(ridge, bool) or not isinstance(ridge, (int, float)) or not ridge >= 0 or not math.isfinite(ridge):
        raise ValueError(f"ridge must be a finite number >= 0; got {ridge!r}")
    steps = _steps(data, split=split)
    d = phi.shape[-1]
    Lams = np.zeros((H, d, d))
    betas = np.zeros(H)

    def backup(h: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        st = steps[h]
        Lam, X = _ridge(st, phi[h], float(ridge))
        Lams[h] = Lam
        y = st.r + v[st.s2]
        try:
            w = np.linalg.solve(Lam, X.T @ y)
            Z = np.linalg.solve(Lam, phi[h].reshape(-1, d).T).T
        except np.linalg.LinAlgError:
            raise ValueError(
                f"Λ_{h} = Σ φφᵀ + {ridge}·I is singular at step h={h}; use ridge > 0 or features spanned by the data"
            ) from None
        est = phi[h] @ w
        q = np.sum(Z * phi[h].reshape(-1, d), axis=-1).reshape(S, A)
        if isinstance(beta, str):
            B = float(H - h)
            logdet = np.linalg.slogdet(Lam)[1] - d * math.log(ridge)
            betas[h] = 0.5 * B * math.sqrt(2.0 * math.log(H / delta) + logdet) + math.sqrt(ridge * d) * B
        else:
            betas[h] = beta
        g = betas[h] * np.sqrt(np.maximum(q, 0.0))
        return est, g, np.ones((S, A), dtype=bool)

    pol, Q, V, G = _recursion(H, S, A, backup, clip=clip)
    counts = np.stack([_group(st, S, A, st.r)[0] for st in steps]).astype(np.int64)
    name = "fitted_q_iteration" if not isinstance(beta, str) and beta == 0 else "pevi"
    return OfflineResult(pol, Q, V, G, counts, name, delta, Lams)


def pevi(
    data: EpisodeDataset,
    features: Any,
    *,
    beta: float | str | None = None,
    ridge: float = 1.0,
    delta: float = 0.1,
    c: float = 1.0,
    split: bool = False,
) -> OfflineResult:
    r"""Pessimistic value iteration for linear MDPs (PEVI; Jin, Yang & Wang 2021, Algorithm 2).

    For ``h = H−1, …, 0``: ``Λ_h = Σ_τ φ(s_h^τ, a_h^τ) φ(s_h^τ, a_h^τ)ᵀ + λI``,
    ``ŵ_h = Λ_h^{-1} Σ_τ φ(s_h^τ, a_h^τ)(r_h^τ + V̂_{h+1}(s_{h+1}^τ))``,
    ``Γ_h(s, a) = β_h (φ(s,a)ᵀ Λ_h^{-1} φ(s,a))^{1/2}``,
    ``Q̂_h = clip(φᵀŵ_h − Γ_h, 0, H − h)``, ``π̂_h`` greedy.

    Parameters
    ----------
    data : EpisodeDataset
        Rewards in ``[0, 1]``.
    features : array (S, A, d) or (H, S, A, d)
        ``φ(s, a)``; a linear MDP has ``P_h(·|s,a) = ⟨φ(s,a), μ_h(·)⟩``, ``r_h = ⟨φ, θ_h⟩``.
    beta : float, "self-normalized", or None
        ``None``: the paper's ``β = c·d·H·√ln(2dHK/δ)``
        (:func:`rltheory.bounds.offline.pevi_beta`). ``"self-normalized"`` (needs
        ``split=True``, ``λ > 0``): the explicit per-step radius
        ``β_h = (H−h)/2 · √(2 ln(H/δ) + ln det(Λ_h/λ)) + √(λd)·(H−h)`` (see Notes).
    ridge : float ≥ 0
        ``λ`` (the paper uses 1); ``λ = 0`` requires every ``Λ_h`` invertible.
    delta : float
        ``ξ`` of the paper.
    c : float
        The paper's absolute constant in the default ``β`` (not given numerically; default 1).
    split : bool
        Sample splitting as in :func:`lcb_vi` (the paper uses all episodes at every step).

    Returns
    -------
    OfflineResult
        With ``Lambda`` ``[H, d, d]``; the data-dependent bound is
        ``pessimism_suboptimality_bound(d*, res.bonus)`` (``= pevi_bound`` for a constant β).

    Notes
    -----
    Thm 4.4: in a linear MDP with ``‖φ‖ ≤ 1``, ``‖θ_h‖, ‖μ_h(S)‖ ≤ √d`` and the paper's
    ``β``, with probability ``≥ 1 − ξ``,
    ``SubOpt(π̂; x) ≤ 2 Σ_h E_{π*}[Γ_h(s_h, a_h) | s_0 = x]``; under well-explored data
    (Cor. 4.6) this is ``O(d^{3/2} H² √(ζ/K))``. The ``"self-normalized"`` radius
    replaces the paper's covering argument by sample splitting: ``V̂_{h+1}`` is then
    independent of the step-``h`` targets ``y ∈ [0, H−h]``, whose noise is
    ``(H−h)/2``-sub-Gaussian, so the self-normalised bound of Abbasi-Yadkori, Pál &
    Szepesvári (2011, Thm 2) gives ``|φᵀ(ŵ_h − w_h)| ≤ β_h ‖φ‖_{Λ_h^{-1}}`` with
    probability ``≥ 1 − δ/H`` per step, using ``‖w_h‖ ≤ (H−h)√d``. With one-hot
    features and ``λ = 0``, PEVI is LCB-VI (same splitting) with bonus ``β/√n_h(s, a)``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[0]] * 100 + [[1]]); r = np.array([[0.5]] * 100 + [[1.0]])
    >>> d = EpisodeDataset(np.zeros((101, 2), int), a, r, S=1, A=2)
    >>> pevi(d, np.eye(2).reshape(1, 2, 2), beta=1.0).policy.tolist()
    [[0]]
    """
    data = _check_data(data, "pevi", unit_rewards=True)
    dlt = _prob(delta)
    phi = _features(features, data.H, data.S, data.A)
    if beta is None:
        beta = pevi_beta(phi.shape[-1], data.H, data.K, dlt, c=c)
    if isinstance(beta, str):
        if beta != "self-normalized":
            raise ValueError(f"beta must be a number, None or 'self-normalized'; got {beta!r}")
        if not split or not (isinstance(ridge, (int, float)) and ridge > 0):
            raise ValueError("beta='self-normalized' needs split=True and ridge > 0 (its proof uses both)")
    elif isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta >= 0 or not math.isfinite(beta):
        raise ValueError(f"beta must be a finite number >= 0; got {beta!r}")
    else:
        beta = float(beta)
    res = _linear_vi(data, phi, ridge=ridge, beta=beta, clip=True, split=bool(split), delta=dlt)
    return OfflineResult(res.policy, res.Q, res.V, res.bonus, res.counts, "pevi", dlt, res.Lambda)


# --------------------------------------------------------------------------- discounted VI-LCB
@dataclass(frozen=True, eq=False)
class DiscountedOfflineResult:
    r"""Output of :func:`lcb_vi_discounted`.

    Attributes
    ----------
    policy : int array (S,)
    V : array (S,)
        ``V_T``, a lower bound on ``V^{π_T}`` on the confidence event.
    Q : array (S, A)
        The last fold's pessimistic ``Q_T``.
    bonus : array (S, A)
        The last fold's bonus.
    counts : int array (T, S, A)
        Per-fold counts.
    iterations : int
        ``T`` (number of folds).
    delta : float
    trace : Trace
        ``mean_value`` (``Σ_s V_t(s)/S``) and ``updated`` (states improved) per iteration.
    """

    policy: np.ndarray
    V: np.ndarray
    Q: np.ndarray
    bonus: np.ndarray
    counts: np.ndarray
    iterations: int
    delta: float
    trace: Trace


def lcb_vi_discounted(
    data: TransitionDataset, gamma: float, *, delta: float = 0.1, iterations: int | None = None
) -> DiscountedOfflineResult:
    r"""Discounted VI-LCB with data splitting and monotone updates (Rashidinejad et al. 2021, Algorithm 3).

    The ``N`` tuples are split into ``T`` folds (default ``T = ⌈ln N/(1 − γ)⌉``). With
    fold ``t``: ``Q_t = r̂ + γ P̂_t V_{t−1} − b_t`` (``0`` on unvisited pairs),
    ``b_t(s, a) = V_max √(ln(2SAT/δ)/(2 n_t(s, a)))``, ``V_max = 1/(1 − γ)``; then at every
    state ``V_t(s) = max_a Q_t(s, a)`` and ``π_t(s) = argmax_a Q_t(s, a)`` *only if* this improves on
    ``V_{t−1}(s)`` (otherwise both are kept).

    Parameters
    ----------
    data : TransitionDataset
        Rewards in ``[0, 1]``.
    gamma : float in [0, 1)
    delta : float in (0, 1)
    iterations : int, optional
        ``T``; at most ``N``.

    Returns
    -------
    DiscountedOfflineResult

    Notes
    -----
    Each fold is independent of ``V_{t−1}`` (built from earlier folds), so Hoeffding with a
    union bound over ``(t, s, a)`` makes ``|(P̂_t − P)V_{t−1}| + |r̂ − r| ≤ b_t`` hold for all
    folds with probability ``≥ 1 − δ``; then, by induction, ``V_t ≤ T^{π_t} V_t`` and hence
    ``V_T ≤ V^{π_T}`` pointwise (the monotone update keeps the inequality where the
    policy is not changed). Rashidinejad et al. (2021) show
    ``E[V*(ρ) − V^{π_T}(ρ)] ≲ √(S C* ln N/((1 − γ)^5 N))``; with ``T`` folds each sees
    ``N/T`` samples, the source of the extra ``(1 − γ)^{-1}`` (Li et al. 2022 remove it
    without splitting).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import TransitionDataset
    >>> a = np.array([0] * 600 + [1] * 2); r = np.array([0.5] * 600 + [1.0] * 2)
    >>> d = TransitionDataset(np.zeros(602, int), a, r, np.zeros(602, int), S=1, A=2)
    >>> lcb_vi_discounted(d, 0.5).policy.tolist()
    [0]
    """
    if not isinstance(data, TransitionDataset):
        raise TypeError(f"lcb_vi_discounted needs a TransitionDataset; got {type(data).__name__}")
    bad = (data.rewards < 0) | (data.rewards > 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise InvalidModelError(f"lcb_vi_discounted assumes rewards in [0, 1]; TransitionDataset.rewards[i={i}] = {data.rewards[i]:.6g}")
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0.0 <= gamma < 1.0:
        raise ValueError(f"gamma must be a number in [0, 1); got {gamma!r}")
    dl = _prob(delta)
    N, S, A = data.N, data.S, data.A
    T = int(math.ceil(math.log(max(N, 2)) / (1.0 - gamma))) if iterations is None else iterations
    if isinstance(T, bool) or not isinstance(T, int) or not 1 <= T <= N:
        raise ValueError(f"iterations must be an integer in [1, N = {N}]; got {iterations!r}")
    vmax = 1.0 / (1.0 - gamma)
    dstep = dl / (T * S * A)
    V = np.zeros(S)
    pol = np.zeros(S, dtype=np.int64)
    counts = np.zeros((T, S, A), dtype=np.int64)
    rec = TraceRecorder()
    Q = b = np.zeros((S, A))
    folds = np.array_split(np.arange(N), T)
    for t, idx in enumerate(folds):
        st = _Step(data.states[idx], data.actions[idx], data.rewards[idx], data.next_states[idx])
        n, mean, _ = _group(st, S, A, st.r + gamma * V[st.s2])
        counts[t] = n.astype(np.int64)
        b = hoeffding_radius(n, vmax, dstep)
        Q = np.where(n > 0, np.clip(mean - b, 0.0, vmax), 0.0)
        better = np.max(Q, axis=-1) > V
        pol = np.where(better, np.argmax(Q, axis=-1), pol)
        V = np.where(better, np.max(Q, axis=-1), V)
        rec.record(t + 1, mean_value=float(V.mean()), updated=int(better.sum()))
    return DiscountedOfflineResult(pol, V, Q, b, counts, T, dl, rec.finish())


# --------------------------------------------------------------------------- CQL
def _check_alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha >= 0 or not math.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number >= 0; got {alpha!r}")
    return float(alpha)


def _model(data_or_model: Any, what: str) -> EmpiricalModel:
    if isinstance(data_or_model, EpisodeDataset):
        _check_data(data_or_model, what, unit_rewards=False)
        return empirical_model(data_or_model)
    if isinstance(data_or_model, EmpiricalModel):
        if len(data_or_model.action_shape) != 1:
            raise InvalidModelError(f"{what} is single-agent; the model has joint actions {data_or_model.action_shape}")
        return data_or_model
    raise TypeError(f"{what} needs an EpisodeDataset or EmpiricalModel; got {type(data_or_model).__name__}")


def cql(data: EpisodeDataset | EmpiricalModel, *, alpha: float) -> OfflineResult:
    r"""Tabular conservative Q-learning (CQL) with greedy policy improvement.

    The CQL(ℛ) objective of Kumar et al. (2020, eq. (2)) at step ``h`` and state ``s``,
    ``α (E_{a~π}Q − E_{a~π̂_b}Q) + ½ E_{a~π̂_b}(Q − B̂_h V̂_{h+1})²``, has the tabular
    fixed point ``Q̂_h(s, a) = B̂_h V̂_{h+1}(s, a) − α(π_h(a|s)/π̂_b(a|s) − 1)``. For a
    deterministic ``π_h(s) = a`` the value is ``B̂(s, a) − α(1/π̂_b(a|s) − 1)``, so the
    greedy improvement step chooses

        ``π̂_h(s) = argmax_{a : π̂_b(a|s) > 0} [ B̂_h V̂_{h+1}(s, a) − α/π̂_b(a|s) ]``

    and ``V̂_h(s)`` is that maximum plus ``α``. Actions never taken in ``s`` get
    ``Q̂ = −∞`` (reported as the smallest float); unvisited states get ``V̂ = 0``.

    Parameters
    ----------
    data : EpisodeDataset or EmpiricalModel
        (An :class:`EmpiricalModel` lets one pass the population model.)
    alpha : float ≥ 0
        Conservatism; ``α = 0`` is certainty equivalence.

    Returns
    -------
    OfflineResult
        ``Q`` holds ``B̂ − α(1/π̂_b − 1)`` on taken actions; ``bonus`` the penalty.

    Notes
    -----
    The penalty ``α/π̂_b(a|s)`` is pessimism measured by the behaviour's action
    probability instead of counts (Kumar et al. 2020, Thm 3.2: the CQL value of the
    learned policy underestimates its true value for large enough ``α``; see
    :func:`conservative_evaluation`).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[0]] * 100 + [[1]]); r = np.array([[0.5]] * 100 + [[1.0]])
    >>> d = EpisodeDataset(np.zeros((101, 2), int), a, r, S=1, A=2)
    >>> cql(d, alpha=0.01).policy.tolist(), cql(d, alpha=0.0).policy.tolist()
    ([[0]], [[1]])
    """
    al = _check_alpha(alpha)
    m = _model(data, "cql")
    H, S, A = m.counts.shape
    tiny = np.finfo(np.float64).min
    Q = np.full((H, S, A), tiny)
    V = np.zeros((H + 1, S))
    G = np.zeros((H, S, A))
    pol = np.zeros((H, S), dtype=np.int64)
    for h in range(H - 1, -1, -1):
        B = m.R[0, h] + m.P[h] @ V[h + 1]
        taken = m.behaviour[h] > 0
        pen = np.where(taken, al * (1.0 / np.where(taken, m.behaviour[h], 1.0) - 1.0), 0.0)
        q = np.where(taken, B - pen, tiny)
        seen = taken.any(-1)
        Q[h] = q
        G[h] = pen
        pol[h] = np.argmax(q, axis=-1)
        V[h] = np.where(seen, np.max(q, axis=-1), 0.0)
    return OfflineResult(pol, Q, V, G, m.counts, "cql")


def conservative_evaluation(model: EmpiricalModel, policy: Any, *, alpha: float) -> np.ndarray:
    r"""CQL policy evaluation fixed point ``V̂^π_h = Σ_a π_h(a|s)[B̂_h V̂^π_{h+1} − α(π_h(a|s)/π̂_b(a|s) − 1)]``.

    Returns ``V̂^π`` of shape ``(H+1, S)``. With the exact model (``P̂ = P``, ``r̂ = r``)
    ``V̂^π = V^π − α Σ_{h'≥h} E_π[D_CQL]`` where
    ``D_CQL(s) = Σ_a π(a|s)²/π_b(a|s) − 1 ≥ 0`` (Cauchy–Schwarz), so ``V̂^π ≤ V^π``
    pointwise for every ``α ≥ 0`` — the underestimation property of Kumar et al.
    (2020, Thm 3.2) without sampling error.

    Raises
    ------
    ValueError
        ``π`` puts mass on an action the behaviour never takes in a visited state
        (the CQL penalty is then infinite); the first such ``(h, s, a)`` is named.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import EmpiricalModel
    >>> m = EmpiricalModel(np.ones((1, 1, 2)), np.ones((1, 1, 2, 1)), np.ones((1, 1, 1, 2)),
    ...                    np.full((1, 1, 2), 0.5), (2,))
    >>> conservative_evaluation(m, np.array([[[1.0, 0.0]]]), alpha=1.0).tolist()   # 1 − α(2 − 1)
    [[0.0], [0.0]]
    """
    al = _check_alpha(alpha)
    m = _model(model, "conservative_evaluation")
    H, S, A = m.counts.shape
    pi = np.asarray(policy, dtype=np.float64)
    if pi.shape == (S, A):
        pi = np.broadcast_to(pi, (H, S, A))
    if pi.shape != (H, S, A) or np.any(pi < 0) or np.any(np.abs(pi.sum(-1) - 1) > 1e-8):
        raise ValueError(f"policy must be a stochastic (H, S, A) = {(H, S, A)} array; got shape {pi.shape}")
    seen = m.behaviour.sum(-1) > 0
    bad = (pi > 0) & (m.behaviour <= 0) & seen[..., None]
    if bad.any():
        h, s, a = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"policy[h={h}, s={s}, a={a}] = {pi[h, s, a]:.3g} > 0 but the behaviour never takes that action there")
    V = np.zeros((H + 1, S))
    for h in range(H - 1, -1, -1):
        B = m.R[0, h] + m.P[h] @ V[h + 1]
        ratio = np.where(m.behaviour[h] > 0, pi[h] / np.where(m.behaviour[h] > 0, m.behaviour[h], 1.0), 0.0)
        V[h] = np.where(seen[h], np.sum(pi[h] * (B - al * (ratio - 1.0)), axis=-1), 0.0)
    return V


# --------------------------------------------------------------------------- hybrid (offline + on-policy)
@dataclass(frozen=True, eq=False)
class HybridResult:
    r"""Output of :func:`hybrid_npg` / :func:`hybrid_actor_critic`.

    Attributes
    ----------
    policy : array (H, S, A)
        Last iterate ``π_T``.
    Q : array (H, S, A)
        Last critic ``Q̂``.
    iterations : int
    converged : bool or None
        ``None`` for a fixed budget (``tol=None``); otherwise whether the suboptimality
        fell below ``tol`` (a :class:`~rltheory.errors.ConvergenceWarning` is emitted if not).
    trace : Trace
        ``suboptimality`` ``V*_0(μ) − V^{π_t}_0(μ)`` (exact) and ``online_samples``
        (cumulative on-policy transitions) for ``t = 0..T``.
    """

    policy: np.ndarray
    Q: np.ndarray
    iterations: int
    converged: bool | None
    trace: Trace


def _hybrid_args(fh: Any, features: Any, offline: Any, iterations: Any, n_online: Any, eta: Any, ridge: Any) -> np.ndarray:
    if not isinstance(fh, FiniteHorizonMDP) or fh.batch_shape:
        raise TypeError("the hybrid methods need a single (unbatched) FiniteHorizonMDP to roll out in")
    if offline is not None:
        _check_data(offline, "hybrid offline data", unit_rewards=False)
        offline.check_compatible(S=fh.S, A=fh.A, H=fh.H)
    for v, nm in ((iterations, "iterations"), (n_online, "n_online")):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{nm} must be an integer >= 0; got {v!r}")
    for v, nm in ((eta, "eta"), (ridge, "ridge")):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or not math.isfinite(v):
            raise ValueError(f"{nm} must be a finite number > 0; got {v!r}")
    return _features(features, fh.H, fh.S, fh.A)


def _restart_episodes(fh: Any, pi: np.ndarray, n: int, restart: Any, gen: np.random.Generator) -> list[_Step]:
    """``n`` on-policy episodes; with ``restart`` each starts at a uniform step ``h0`` in ``s ~ ν_{h0}``."""
    H = fh.H
    per_h: list[list[_Step]] = [[] for _ in range(H)]
    if restart is None:
        d = sample_episodes(fh, pi, n, rng=gen)
        for h in range(H):
            per_h[h].append(_Step(d.states[:, h], d.actions[:, h], d.rewards[:, h], d.states[:, h + 1]))
    else:
        nu = np.asarray(restart, dtype=np.float64)
        starts = np.bincount(gen.integers(0, H, size=n), minlength=H)
        P, R = np.asarray(fh.P), np.asarray(fh.R)
        for h0 in range(H):
            if starts[h0] == 0:
                continue
            sub = FiniteHorizonMDP(P[h0:], R[h0:], nu[h0])
            d = sample_episodes(sub, pi[h0:], int(starts[h0]), rng=gen)
            for j in range(H - h0):
                per_h[h0 + j].append(_Step(d.states[:, j], d.actions[:, j], d.rewards[:, j], d.states[:, j + 1]))
    out = []
    for h in range(H):
        if per_h[h]:
            out.append(_Step(*(np.concatenate([getattr(st, f) for st in per_h[h]]) for f in ("s", "a", "r", "s2"))))
        else:
            out.append(_Step(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)))
    return out


def _weighted_fit(phi_h: np.ndarray, parts: list[tuple[_Step, float]], y_of: Any, ridge: float) -> np.ndarray:
    """``argmin_w Σ_parts weight Σ (φᵀw − y)² + λ‖w‖²``; returns ``Q̂_h = φ w`` on all pairs."""
    d = phi_h.shape[-1]
    Lam = ridge * np.eye(d)
    b = np.zeros(d)
    for st, wgt in parts:
        if st.s.shape[0] == 0 or wgt == 0:
            continue
        X = phi_h[st.s, st.a]
        Lam += wgt * X.T @ X
        b += wgt * X.T @ y_of(st)
    return phi_h @ np.linalg.solve(Lam, b)


def _hybrid_loop(fh: Any, phi: np.ndarray, offline: Any, *, iterations: int, n_online: int, eta: float,
                 ridge: float, restart: Any, rng: Any, tol: float | None, critic: str, offline_weight: float,
                 what: str) -> HybridResult:
    gen = _rng(rng)
    H, S, A = fh.H, fh.S, fh.A
    mu = np.asarray(fh.initial_distribution())
    v_star = float(np.asarray(backward_induction(fh).V)[0] @ mu)
    off = _steps(offline, split=False) if offline is not None else None
    pi = np.full((H, S, A), 1.0 / A)
    Q = np.zeros((H, S, A))
    history: list[list[_Step]] = []
    rec = TraceRecorder()
    samples = 0

    def subopt(p: np.ndarray) -> float:
        return v_star - float(np.asarray(evaluate_finite_horizon(fh, p))[0] @ mu)

    rec.record(0, suboptimality=subopt(pi), online_samples=0)
    converged = None if tol is None else False
    t = 0
    for t in range(1, iterations + 1):  # noqa: B007 - the count is reported
        online = _restart_episodes(fh, pi, n_online, restart, gen) if n_online > 0 else None
        if online is not None:
            samples += sum(int(st.s.shape[0]) for st in online)
            history.append(online)
        V_next = np.zeros(S)
        for h in range(H - 1, -1, -1):
            parts: list[tuple[_Step, float]] = []
            if off is not None:
                parts.append((off[h], offline_weight))
            if critic == "policy":  # HNPG: fit Q^{π_t} on offline + fresh on-policy data
                if online is not None:
                    parts.append((online[h], 1.0))
            else:  # hybrid actor-critic: fit Q* on offline + every online sample so far
                parts += [(past[h], 1.0) for past in history]
            v = V_next
            Q[h] = _weighted_fit(phi[h], parts, lambda st, v=v: st.r + v[st.s2], ridge)
            Q[h] = np.clip(Q[h], 0.0, float(H - h))
            V_next = np.sum(pi[h] * Q[h], axis=-1) if critic == "policy" else np.max(Q[h], axis=-1)
        pi = np.stack([multiplicative_update(pi[h], eta * Q[h], np) for h in range(H)])
        gap = subopt(pi)
        rec.record(t, suboptimality=gap, online_samples=samples)
        if tol is not None and gap <= tol:
            converged = True
            break
    if converged is False:
        warnings.warn(f"{what}: suboptimality above tol={tol:g} after {iterations} iterations", ConvergenceWarning,
                      stacklevel=3)
    return HybridResult(pi, Q.copy(), t, converged, rec.finish())


def hybrid_npg(
    fh: Any, features: Any, offline: EpisodeDataset | None, *, iterations: int, n_online: int, eta: float,
    rng: np.random.Generator | int, ridge: float = 1.0, restart: Any = None, offline_weight: float = 1.0,
    tol: float | None = None,
) -> HybridResult:
    r"""Hybrid natural policy gradient (HNPG): on-policy NPG whose critic is also fitted on offline data.

    Iteration ``t``: roll out ``n_online`` episodes of ``π_t`` (from ``μ``, or with
    ``restart`` from a uniform step ``h0`` and ``s ~ ν_{h0}``); fit the linear critic
    backwards by least squares on the *union* of the offline transitions (weight
    ``offline_weight``) and the fresh on-policy ones,

        ``ŵ_h = argmin_w Σ_{(s,a,r,s')} (φ(s,a)ᵀw − r − V̂_{h+1}(s'))² + λ‖w‖²``,
        ``V̂_{h+1}(s') = Σ_a π_{t,h+1}(a|s') Q̂_{h+1}(s', a)``, ``Q̂_h = clip(φᵀŵ_h, 0, H − h)``,

    then take the NPG (exponential-weights) step ``π_{t+1,h}(a|s) ∝ π_{t,h}(a|s) exp(η Q̂_h(s, a))``.
    With ``offline=None`` this is on-policy NPG with a fitted critic (Q-NPG).

    Parameters
    ----------
    fh : FiniteHorizonMDP
        The environment (roll-outs and the exact suboptimality in the trace).
    features : array (S, A, d) or (H, S, A, d)
    offline : EpisodeDataset or None
    iterations, n_online : int
    eta : float > 0
    rng : numpy.random.Generator or int
    ridge : float > 0
    restart : array (H, S), optional
        Restart distributions ``ν_h`` for the on-policy roll-outs.
    offline_weight : float ≥ 0
    tol : float, optional
        Stop once the exact suboptimality is ``≤ tol``.

    Returns
    -------
    HybridResult

    Notes
    -----
    Zhou, Sekhari, Song & Sun (2024), Thm 1: best of both worlds — when the offline
    data cover a comparator and the features are Bellman complete, the offline term
    gives the offline-RL rate; regardless, the on-policy term keeps the NPG guarantee
    ``O(H²/√T + H·√(κ ε_stat))`` (κ: relative condition number of the roll-out
    distribution). Deviations from the paper: plain (not variance-weighted) least
    squares, a fixed offline weight, and the critic clipped to ``[0, H − h]``.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteHorizonMDP
    >>> fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=2)
    >>> res = hybrid_npg(fh, np.eye(2).reshape(1, 2, 2), None, iterations=5, n_online=20, eta=2.0, rng=0)
    >>> bool(res.trace["suboptimality"][-1] < res.trace["suboptimality"][0])
    True
    """
    phi = _hybrid_args(fh, features, offline, iterations, n_online, eta, ridge)
    if isinstance(offline_weight, bool) or not isinstance(offline_weight, (int, float)) or not offline_weight >= 0:
        raise ValueError(f"offline_weight must be a number >= 0; got {offline_weight!r}")
    return _hybrid_loop(fh, phi, offline, iterations=iterations, n_online=n_online, eta=float(eta), ridge=float(ridge),
                        restart=restart, rng=rng, tol=tol, critic="policy", offline_weight=float(offline_weight),
                        what="hybrid_npg")


def hybrid_actor_critic(
    fh: Any, features: Any, offline: EpisodeDataset | None, *, iterations: int, n_online: int, eta: float,
    rng: np.random.Generator | int, ridge: float = 1.0, restart: Any = None, tol: float | None = None,
) -> HybridResult:
    r"""Non-optimistic hybrid actor-critic: an off-policy critic for ``Q*`` initialised from offline data.

    Iteration ``t``: roll out ``π_t``; refit the critic by least-squares value iteration
    (targets ``r + max_{a'} Q̂_{h+1}(s', a')``) on the offline data plus *every* online
    transition collected so far; NPG step ``π_{t+1} ∝ π_t exp(η Q̂)``.

    Notes
    -----
    Tan, Fan & Wei (2024): with offline data of single-policy concentrability ``c*_off``
    the non-optimistic hybrid actor-critic needs only ``N_off ≳ c*_off d H⁴/ε²`` offline
    trajectories (plus online ones) to reach ``ε`` — the critic targeting ``Q*`` is
    what lets offline data help. Deviations: no rare-switching schedule (the policy
    changes every iteration) and no bonus.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteHorizonMDP
    >>> fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=2)
    >>> res = hybrid_actor_critic(fh, np.eye(2).reshape(1, 2, 2), None, iterations=5, n_online=20, eta=2.0, rng=0)
    >>> bool(res.trace["suboptimality"][-1] < res.trace["suboptimality"][0])
    True
    """
    phi = _hybrid_args(fh, features, offline, iterations, n_online, eta, ridge)
    return _hybrid_loop(fh, phi, offline, iterations=iterations, n_online=n_online, eta=float(eta), ridge=float(ridge),
                        restart=restart, rng=rng, tol=tol, critic="optimal", offline_weight=1.0,
                        what="hybrid_actor_critic")
