r"""Hybrid offline + on-policy RL: hybrid NPG (HNPG) and the non-optimistic hybrid actor-critic.

Both alternate on-policy roll-outs of the current policy in the true finite-horizon
model with a linear critic fitted by least squares on the offline data *and* the
roll-outs, followed by the NPG (exponential-weights) step
``π_{t+1,h}(a|s) ∝ π_{t,h}(a|s) exp(η Q̂_h(s, a))``. :func:`hybrid_npg` fits ``Q^{π_t}``
(Zhou et al. 2024); :func:`hybrid_actor_critic` fits ``Q*`` on all data so far (Tan et al. 2024).

References
----------
Zhou, Y., Sekhari, A., Song, Y., Sun, W. (2024). Offline data enhanced on-policy policy
gradient with provable guarantees. ICLR (HNPG), Thm 1.
Tan, K., Fan, W., Wei, Y. (2024). Actor-critics can achieve optimal sample efficiency. ICML
(hybrid actor-critic with offline critic initialisation).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_probability, real_scalar
from ..backend import as_float
from ..errors import ConvergenceWarning, InvalidModelError
from ..mdp.horizon import backward_induction
from ..mdp.model import FiniteHorizonMDP
from ..mdp.offline_data import EpisodeDataset, sample_episodes
from ..mdp.sample import _rng
from ..trace import Trace, TraceRecorder
from ._offline_common import _check_data, _features, _Step, _steps
from ._policy_opt import check_tol, multiplicative_update

__all__ = ["HybridResult", "hybrid_npg", "hybrid_actor_critic"]


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
        ``suboptimality`` ``V*_0(μ) − V^{π_t}_0(μ)`` (exact, in float64 also for a float32
        model, so ``tol`` certifies the model's own gap), ``online_samples``
        (cumulative on-policy transitions) and ``critic_term`` (the exact critic-error
        term ``E_{t−1}`` of the step ``π_{t−1} → π_t`` in
        :func:`rltheory.bounds.offline.hybrid_npg_bound`; 0 at ``t = 0``) for ``t = 0..T``.
    """

    policy: np.ndarray
    Q: np.ndarray
    iterations: int
    converged: bool | None
    trace: Trace


def _hybrid_args(
    fh: Any,
    features: Any,
    offline: Any,
    iterations: Any,
    n_online: Any,
    eta: Any,
    ridge: Any,
    what: str,
) -> tuple[np.ndarray, Any]:
    """``(features, offline)`` checked; ``offline`` as the single-agent dataset it is read as."""
    if not isinstance(fh, FiniteHorizonMDP) or fh.batch_shape:
        got = (
            f"batch_shape={fh.batch_shape}"
            if isinstance(fh, FiniteHorizonMDP)
            else type(fh).__name__
        )
        raise TypeError(
            f"the hybrid methods need a single (unbatched) FiniteHorizonMDP to roll out in; got {got}"
        )
    # the critic is clipped to [0, H − h] and hybrid_npg_bound's value term is H(H+1)/2: both need
    # rewards in [0, 1]. Outside it the clip silently froze the policy (R = (−1, −0.5): every Q̂ = 0;
    # R = (2, 3) at H = 2: every Q̂_h = H − h), and R = 1e307 overflowed the fit into a NaN policy.
    R = np.asarray(fh.R, dtype=np.float64)
    bad = (R < 0) | (R > 1)
    if bad.any():
        h, s, a = (int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(
            f"{what} assumes rewards in [0, 1] (its critic is clipped to [0, H − h]); "
            f"fh.R[h={h}, s={s}, a={a}] = {R[h, s, a]:.6g}"
        )
    if offline is not None:
        # (the checked dataset: a one-player game dataset, actions [K, H, 1], is read as a
        # single-agent one; the unchecked one failed in the fit with numpy's broadcast error)
        offline = _check_data(offline, f"{what} offline data", unit_rewards=True)
        offline.check_compatible(S=fh.S, A=fh.A, H=fh.H)
    for v, nm in ((iterations, "iterations"), (n_online, "n_online")):
        # numpy integers too
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{nm} must be an integer >= 0; got {v!r}")
    for v, nm in ((eta, "eta"), (ridge, "ridge")):
        # numpy scalars and 0-d arrays (np.array(2.0) was refused); NaN for bools and text
        x = real_scalar(v)
        if not (x > 0 and math.isfinite(x)):
            raise ValueError(f"{nm} must be a finite number > 0; got {v!r}")
    # the exponent η·Q̂ with Q̂ ∈ [0, H]: inf − inf = NaN policy before
    if not math.isfinite(float(eta) * fh.H):
        raise ValueError(
            f"{what}: eta·H must be finite (the NPG exponent η·Q̂_h reaches η·(H − h)); "
            f"got eta = {eta!r}, H = {fh.H}"
        )
    # complex or text features: numpy's cast dropped the imaginary part (a ComplexWarning only) or
    # failed with "could not convert string to float"
    return _features(as_float(features, np, None, field="features"), fh.H, fh.S, fh.A), offline


def _restart_episodes(
    fh: Any, pi: np.ndarray, n: int, restart: Any, gen: np.random.Generator
) -> list[_Step]:
    """``n`` on-policy episodes; with ``restart`` each starts at a uniform step ``h0`` in ``s ~ ν_{h0}``."""
    H = fh.H
    per_h: list[list[_Step]] = [[] for _ in range(H)]
    if restart is None:
        d = sample_episodes(fh, pi, n, rng=gen)
        for h in range(H):
            per_h[h].append(
                _Step(d.states[:, h], d.actions[:, h], d.rewards[:, h], d.states[:, h + 1])
            )
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
                per_h[h0 + j].append(
                    _Step(d.states[:, j], d.actions[:, j], d.rewards[:, j], d.states[:, j + 1])
                )
    out = []
    for h in range(H):
        if per_h[h]:
            out.append(
                _Step(
                    *(
                        np.concatenate([getattr(st, f) for st in per_h[h]])
                        for f in ("s", "a", "r", "s2")
                    )
                )
            )
        else:
            out.append(
                _Step(
                    np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)
                )
            )
    return out


def _weighted_fit(
    phi_h: np.ndarray, parts: list[tuple[_Step, float]], y_of: Any, ridge: float, h: int
) -> np.ndarray:
    """``argmin_w Σ_parts weight Σ (φᵀw − y)² + λ‖w‖²``; returns ``Q̂_h = φ w`` on all pairs."""
    d = phi_h.shape[-1]
    Lam = ridge * np.eye(d)
    b = np.zeros(d)
    with np.errstate(over="ignore", invalid="ignore"):
        for st, wgt in parts:
            if st.s.shape[0] == 0 or wgt == 0:
                continue
            X = phi_h[st.s, st.a]
            Lam += wgt * X.T @ X
            b += wgt * X.T @ y_of(st)
    if not (np.all(np.isfinite(Lam)) and np.all(np.isfinite(b))):
        # features of size 1e200 overflowed Λ to inf: the solve gave Q̂ = 0 and the policy never moved
        raise ValueError(
            f"Λ_{h} = Σ weight·φφᵀ + ridge·I overflows at step h={h}; rescale the features "
            f"(max |features| = {float(np.max(np.abs(phi_h))):.3g})"
        )
    return phi_h @ np.linalg.solve(Lam, b)


def _critic_term(
    P: np.ndarray,
    R: np.ndarray,
    pi: np.ndarray,
    new: np.ndarray,
    Qhat: np.ndarray,
    pi_star: np.ndarray,
    d_star: np.ndarray,
) -> float:
    """``E_t = Σ_h E_{d*_h}[⟨π_{t+1} − π*, δ_t⟩_h + Σ_{h'>h} E^{π_{t+1}}[g_{h'}]]`` with ``δ_t = Q̂_t − Q^{π_t}``,
    ``g = ⟨π_{t+1} − π_t, δ_t⟩`` (:func:`rltheory.bounds.offline.hybrid_npg_bound`); exact, from the true model."""
    H, S, _ = pi.shape
    V = np.zeros((H + 1, S))
    Qt = np.zeros_like(Qhat)
    for h in range(H - 1, -1, -1):  # Q^{π_t}
        Qt[h] = R[h] + P[h] @ V[h + 1]
        V[h] = np.sum(pi[h] * Qt[h], axis=-1)
    delta = Qhat - Qt
    g = np.sum((new - pi) * delta, axis=-1)  # [H, S]
    U = np.zeros((H + 1, S))
    for h in range(H - 1, -1, -1):  # U_h = g_h + P^{π_{t+1}}_h U_{h+1}
        U[h] = g[h] + np.sum(new[h] * (P[h] @ U[h + 1]), axis=-1)
    direct = np.sum((new - pi_star) * delta, axis=-1)
    return float(np.sum(d_star * (direct + U[:H] - g)))


def _hybrid_loop(
    fh: Any,
    phi: np.ndarray,
    offline: Any,
    *,
    iterations: int,
    n_online: int,
    eta: float,
    ridge: float,
    restart: Any,
    rng: Any,
    tol: float | None,
    critic: str,
    offline_weight: float,
    what: str,
) -> HybridResult:
    gen = _rng(rng)
    H, S, A = fh.H, fh.S, fh.A
    if restart is not None:
        # not complex or text; checked in its own dtype (a float32 row summing to 1 + 3e-8 was refused
        # once cast to float64, whose tolerance is 1e-8), then renormalised in float64 for the roll-outs
        # (any float dtype as given: as_float casts float16 to float64, and a float16 uniform row over
        # 7 states, sum 0.99976, failed float64's tolerance)
        raw = np.asarray(restart) if isinstance(restart, np.ndarray) else None
        restart = np.asarray(as_float(restart, np, None, field=f"{what}: restart"))
        if raw is not None and raw.dtype.kind == "f":
            restart = raw
        if restart.shape != (H, S):
            raise ValueError(
                f"{what}: restart must have shape (H, S) = ({H}, {S}); got {restart.shape}"
            )
        check_probability(restart, "restart", ("h", "s"), "restart[h, :]")
        restart = restart.astype(np.float64)
        restart = restart / restart.sum(-1, keepdims=True)
    # the trace's suboptimality (the stopping rule's certificate) and critic term are computed in
    # float64 on the host: in a float32 model's own arithmetic a gap of 2.4e-8 rounded to 0 and
    # tol=1e-12 reported converged=True
    mu = np.asarray(fh.initial_distribution(), dtype=np.float64)
    Pm, Rm = np.asarray(fh.P, dtype=np.float64), np.asarray(fh.R, dtype=np.float64)
    V_opt = np.zeros(S)
    for h in range(H - 1, -1, -1):
        V_opt = np.max(Rm[h] + Pm[h] @ V_opt, axis=-1)
    v_star = float(V_opt @ mu)
    pi_star = np.eye(A)[np.asarray(backward_induction(fh).policy)]
    d_star = np.zeros((H, S))  # state occupancy of π*
    d_star[0] = mu
    for h in range(H - 1):
        d_star[h + 1] = np.reshape(d_star[h][:, None] * pi_star[h], (S * A,)) @ np.reshape(
            Pm[h], (S * A, S)
        )
    off = _steps(offline, split=False) if offline is not None else None
    pi = np.full((H, S, A), 1.0 / A)
    Q = np.zeros((H, S, A))
    history: list[list[_Step]] = []
    rec = TraceRecorder()
    samples = 0

    def subopt(p: np.ndarray) -> float:
        V = np.zeros(S)
        for h in range(H - 1, -1, -1):
            V = np.sum(p[h] * (Rm[h] + Pm[h] @ V), axis=-1)
        return v_star - float(V @ mu)

    gap = subopt(pi)
    rec.record(0, suboptimality=gap, online_samples=0, critic_term=0.0)
    # the stopping rule is tested on every iterate, π_0 included (a uniform π_0 already within
    # tol is converged after 0 updates, not a ConvergenceWarning)
    converged = None if tol is None else gap <= tol
    t = 0
    for t in range(1, (0 if converged else iterations) + 1):  # noqa: B007 - the count is reported
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
            Q[h] = _weighted_fit(phi[h], parts, lambda st, v=v: st.r + v[st.s2], ridge, h)
            Q[h] = np.clip(Q[h], 0.0, float(H - h))
            V_next = np.sum(pi[h] * Q[h], axis=-1) if critic == "policy" else np.max(Q[h], axis=-1)
        new = np.stack([multiplicative_update(pi[h], eta * Q[h], np) for h in range(H)])
        term = _critic_term(Pm, Rm, pi, new, Q, pi_star, d_star)
        pi = new
        gap = subopt(pi)
        rec.record(t, suboptimality=gap, online_samples=samples, critic_term=term)
        if tol is not None and gap <= tol:
            converged = True
            break
    if converged is False:
        warnings.warn(
            f"{what}: suboptimality above tol={tol:g} after {iterations} iterations",
            ConvergenceWarning,
            stacklevel=3,
        )
    return HybridResult(pi, Q.copy(), t, converged, rec.finish())


def hybrid_npg(
    fh: Any,
    features: Any,
    offline: EpisodeDataset | None,
    *,
    iterations: int,
    n_online: int,
    eta: float,
    rng: np.random.Generator | int,
    ridge: float = 1.0,
    restart: Any = None,
    offline_weight: float = 1.0,
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
        The environment (roll-outs and the exact suboptimality in the trace), rewards in ``[0, 1]``.
    features : array (S, A, d) or (H, S, A, d)
    offline : EpisodeDataset or None
        Rewards in ``[0, 1]``.
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

    Raises
    ------
    InvalidModelError
        A reward of ``fh`` or of ``offline`` outside ``[0, 1]`` (named by its index): the
        critic's clip to ``[0, H − h]`` and :func:`rltheory.bounds.offline.hybrid_npg_bound`
        assume that range.
    ValueError
        Bad settings; ``η·H`` beyond the float range (the exponent ``η Q̂`` would overflow);
        a Gram matrix ``Λ_h`` that overflows (features too large), naming ``h``.
    TypeError
        Complex or text ``features`` or ``restart``.

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
    phi, offline = _hybrid_args(
        fh, features, offline, iterations, n_online, eta, ridge, "hybrid_npg"
    )
    # numpy scalars and 0-d arrays; NaN (refused) for bools and text
    w = real_scalar(offline_weight)
    if not w >= 0:
        raise ValueError(f"offline_weight must be a number >= 0; got {offline_weight!r}")
    if not math.isfinite(w):
        raise ValueError(f"offline_weight must be finite; got {offline_weight!r}")
    tol = check_tol(tol)
    return _hybrid_loop(
        fh,
        phi,
        offline,
        iterations=iterations,
        n_online=n_online,
        eta=float(eta),
        ridge=float(ridge),
        restart=restart,
        rng=rng,
        tol=tol,
        critic="policy",
        offline_weight=w,
        what="hybrid_npg",
    )


def hybrid_actor_critic(
    fh: Any,
    features: Any,
    offline: EpisodeDataset | None,
    *,
    iterations: int,
    n_online: int,
    eta: float,
    rng: np.random.Generator | int,
    ridge: float = 1.0,
    restart: Any = None,
    tol: float | None = None,
) -> HybridResult:
    r"""Non-optimistic hybrid actor-critic: an off-policy critic for ``Q*`` initialised from offline data.

    Iteration ``t``: roll out ``π_t``; refit the critic by least-squares value iteration
    (targets ``r + max_{a'} Q̂_{h+1}(s', a')``) on the offline data plus *every* online
    transition collected so far; NPG step ``π_{t+1} ∝ π_t exp(η Q̂)``. Parameters, result and
    errors as :func:`hybrid_npg` (rewards in ``[0, 1]``; no ``offline_weight``).

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
    phi, offline = _hybrid_args(
        fh, features, offline, iterations, n_online, eta, ridge, "hybrid_actor_critic"
    )
    tol = check_tol(tol)
    return _hybrid_loop(
        fh,
        phi,
        offline,
        iterations=iterations,
        n_online=n_online,
        eta=float(eta),
        ridge=float(ridge),
        restart=restart,
        rng=rng,
        tol=tol,
        critic="optimal",
        offline_weight=1.0,
        what="hybrid_actor_critic",
    )
