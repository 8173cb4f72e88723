r"""Single-trajectory average-reward actor-critic, and the exact policy gradient it follows.

For a tabular softmax policy ``π_θ`` on a unichain model with gain ``g^π = μ_πᵀ r_π`` and bias
``h^π`` (``g + h = r_π + P_π h``), the average-reward policy-gradient theorem (Sutton et al.
2000, Thm 1) gives ``∂J/∂θ[s, a] = μ_π(s) π(a|s) (Q^π(s, a) − h^π(s))`` with
``Q^π(s, a) = r(s, a) − g^π + Σ_{s'} P(s'|s, a) h^π(s')`` (:func:`average_reward_gradient`).

:func:`average_reward_actor_critic` follows it from one Markovian trajectory: a linear
differential-TD critic with a gain estimate (Tsitsiklis & Van Roy 1999) and the actor step
``θ[s_t] += ζ_t δ_t (e_{a_t} − π(·|s_t))``; with constant steps ``∝ 1/τ_mix``
(:func:`rltheory.algorithms.step_schedules.mixing_step_sizes`) the two-timescale analysis of
Wu et al. (2020, Thm 4.5) applies. Its result type :class:`ActorCriticResult` and trace (exact
``g^{π_t}``, ``g* − g^{π_t}``, ``‖∇J(θ_t)‖²``) are shared with multi-level Monte Carlo
actor-critic (:mod:`rltheory.algorithms.mac`); ``g*`` comes from multichain average-reward
policy iteration (Puterman 1994, §9.2) unless given.

References
----------
Sutton, R. S., McAllester, D., Singh, S., Mansour, Y. (2000). Policy gradient methods for
RL with function approximation. NIPS. Theorem 1 (average-reward form).
Tsitsiklis, J. N., Van Roy, B. (1999). Average cost temporal-difference learning.
Automatica 35(11). Theorem 1.
Wu, Y., Zhang, W., Xu, P., Gu, Q. (2020). A finite-time analysis of two time-scale actor-critic
methods. NeurIPS. Theorem 4.5.
Puterman, M. L. (1994). *Markov Decision Processes*. §9.2 (multichain policy iteration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_finite, check_real
from ..mdp.average import average_policy_iteration
from ..mdp.model import FiniteMDP
from ..mdp.sample import _count, _rng
from ..trace import Trace, TraceRecorder
from ._average_reward_base import (
    _avg_model,
    _cdf,
    _constant_step,
    _diverged,
    _draw,
    _expected_increment,
    _features,
    _gain_bias,
    _host_softmax,
    _real_array,
    _stationary,
)
from .step_schedules import StepSchedule, _check_schedules, _step

__all__ = ["average_reward_gradient", "average_reward_actor_critic", "ActorCriticResult"]


def average_reward_gradient(mdp: FiniteMDP, theta: Any) -> tuple[np.ndarray, float]:
    r"""Exact ``∇J(θ)`` and ``J(θ) = g^{π_θ}`` for a tabular softmax policy on a unichain model.

    ``∂J/∂θ[s, a] = μ_π(s) π(a|s) (Q^π(s, a) − h^π(s))`` with
    ``Q^π(s, a) = r(s, a) − g^π + Σ_{s'} P(s'|s, a) h^π(s')`` (Sutton et al. 2000,
    Thm 1, average-reward case).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.full((2, 2, 2), 0.5), np.array([[0.0, 1.0], [0.0, 1.0]]), None)
    >>> grad, J = average_reward_gradient(mdp, np.zeros((2, 2)))
    >>> round(J, 12), np.round(grad, 12).tolist()
    (0.5, [[-0.125, 0.125], [-0.125, 0.125]])
    """
    _, R = _avg_model(mdp, "average_reward_gradient")
    th = _real_array(theta, "theta")
    if th.shape != R.shape:
        raise ValueError(f"theta must have shape (S, A) = {R.shape}; got {th.shape}")
    check_finite(th, "theta", ("s", "a"))
    return _average_reward_gradient(mdp, th)


def _average_reward_gradient(mdp: FiniteMDP, theta: np.ndarray) -> tuple[np.ndarray, float]:
    """:func:`average_reward_gradient` on a validated host ``theta`` (the actor-critic loops)."""
    P, R = _avg_model(mdp, "average_reward_gradient")
    pi = _host_softmax(theta)
    g, h = _gain_bias(mdp, pi)
    mu = _stationary(mdp, pi)
    # Q − h = r − g + Σ_{s'} P(s'|s,a)(h(s') − h(s)), centred so that Σ_a π(a|s)(Q − h) = 0 (the
    # Poisson equation) holds to round-off: R − g + P @ h − h lost ε·|h| ≈ ε/p on chains with
    # switching probabilities p (relative error 2e-7 at p = 1e-9, 1.8e-4 at p = 1e-12)
    adv = R - g + _expected_increment(P, h)
    adv = adv - (pi * adv).sum(axis=-1, keepdims=True)
    return mu[:, None] * pi * adv, g


@dataclass(frozen=True, eq=False)
class ActorCriticResult:
    """Result of an average-reward actor-critic run.

    Attributes
    ----------
    theta : ndarray (S, A)
        Final softmax parameters.
    omega : ndarray (d,)
        Final critic weights.
    eta : float
        Final gain estimate.
    samples : int
        Transitions consumed.
    trace : Trace
        Every record: ``gain`` (exact ``g^{π_t}``), ``gain_gap = g* − g^{π_t}``,
        ``grad_norm_sq = ‖∇J(θ_t)‖²`` (exact), ``gain_estimate_error = |η_t − g^{π_t}|``,
        ``samples`` (transitions used so far).
    optimal_gain : float
        ``g*`` of the model.
    """

    theta: np.ndarray
    omega: np.ndarray
    eta: float
    samples: int
    trace: Trace
    optimal_gain: float


def _optimal_gain(mdp: FiniteMDP, g_star: float | None) -> float:
    if g_star is not None:
        return check_real(g_star, "optimal_gain")
    if mdp.gamma is not None:
        mdp = mdp.replace(gamma=None)
    # multichain policy iteration: unichain PI raised InvalidModelError on communicating models in
    # which some deterministic policy has two recurrent classes (e.g. "stay" actions), although
    # every softmax policy of such a model is irreducible and g* is one number
    g = np.asarray(average_policy_iteration(mdp, multichain=True).gain, dtype=float)
    lo, hi = float(np.min(g)), float(np.max(g))
    if hi - lo > 1e-9 * (1.0 + max(abs(lo), abs(hi))):
        s_lo, s_hi = int(np.argmin(g)), int(np.argmax(g))
        raise ValueError(
            f"the optimal gain depends on the state (g*(s={s_lo}) = {lo!r}, g*(s={s_hi}) = {hi!r}) by "
            "multichain policy iteration: the model is not weakly communicating, or its parts are "
            "coupled by probabilities below the solver's tie tolerance; pass optimal_gain"
        )
    return hi


def _ac_record(
    rec: TraceRecorder, mdp: FiniteMDP, k: int, theta: np.ndarray, eta: float, g_star: float, n: int
) -> None:
    grad, J = _average_reward_gradient(mdp, theta)
    rec.record(
        k,
        gain=J,
        gain_gap=g_star - J,
        grad_norm_sq=float(np.sum(grad**2)),
        gain_estimate_error=abs(eta - J),
        samples=n,
    )


@dataclass
class _ACState:
    """Mutable state shared by the single-trajectory actor-critics."""

    P: np.ndarray
    R: np.ndarray
    Phi: np.ndarray
    theta: np.ndarray
    omega: np.ndarray
    g_star: float
    cP: np.ndarray
    s: int
    gen: np.random.Generator
    eta: float = 0.0


def _ac_setup(
    mdp: FiniteMDP, what: str, rng: Any, features: Any, theta0: Any, optimal_gain: float | None
) -> _ACState:
    P, R = _avg_model(mdp, what)
    S, A = R.shape
    gen = _rng(rng)
    Phi = _features(features, S)
    theta = np.zeros((S, A)) if theta0 is None else _real_array(theta0, "theta0")
    if theta.shape != (S, A):
        raise ValueError(f"theta0 must have shape (S, A) = {(S, A)}; got {theta.shape}")
    check_finite(theta, "theta0", ("s", "a"))
    s0 = _draw(_cdf(np.asarray(mdp.initial_distribution(), dtype=float)), gen.random())
    return _ACState(
        P, R, Phi, theta, np.zeros(Phi.shape[1]), _optimal_gain(mdp, optimal_gain), _cdf(P), s0, gen
    )


def average_reward_actor_critic(
    mdp: FiniteMDP,
    *,
    steps: int,
    rng: np.random.Generator | int,
    features: Any = None,
    critic_step: StepSchedule = StepSchedule(0.1),  # noqa: B008 (a frozen dataclass)
    actor_step: StepSchedule = StepSchedule(0.01),  # noqa: B008 (a frozen dataclass)
    gain_step: StepSchedule | None = None,
    theta0: Any = None,
    optimal_gain: float | None = None,
    record_every: int = 1000,
) -> ActorCriticResult:
    r"""Single-trajectory average-reward actor-critic with a linear differential-TD critic.

    At each transition ``(s_t, a_t, r_t, s_{t+1})`` with ``a_t ~ π_θ(·|s_t)``:
    ``δ_t = r_t − η_t + φ(s_{t+1})ᵀω_t − φ(s_t)ᵀω_t``; ``η ← η + β_t (r_t − η)``;
    ``ω ← ω + α_t δ_t φ(s_t)``; ``θ[s_t] ← θ[s_t] + ζ_t δ_t (e_{a_t} − π_θ(·|s_t))``.

    Parameters
    ----------
    mdp : FiniteMDP
        Unichain model (``gamma`` is ignored: average reward).
    steps : int
        Number of transitions (= updates).
    rng : Generator or int
    features : array (S, d), optional
        Critic features (one-hot when omitted).
    critic_step, actor_step, gain_step : StepSchedule
        ``α_t``, ``ζ_t``, ``β_t`` (``gain_step`` defaults to ``critic_step``); use
        :func:`mixing_step_sizes` for the mixing-time-aware choice.
    theta0 : array (S, A), optional
        Initial logits (uniform policy when omitted).
    optimal_gain : float, optional
        ``g*`` (computed by average-reward policy iteration when omitted).
    record_every : int

    Raises
    ------
    ValueError
        A critic or gain estimate that overflows (steps too large for the features), naming the
        update ``t``, the TD error and the steps at ``t``; actor logits that overflow.

    Notes
    -----
    The TD error is an (asymptotically) unbiased estimate of the advantage
    ``Q^π(s, a) − h^π(s)`` when the critic is exact, so the actor step follows
    the average-reward policy gradient (Sutton et al. 2000). With constant steps
    ``∝ 1/τ_mix`` the two-timescale analysis of Wu et al. (2020, Thm 4.5) gives
    ``min_t E‖∇J(θ_t)‖² = Õ(T^{-2/5})``; without mixing-time knowledge the steps
    may be too large (bias) or too small (slow) — the comparison MAC addresses.
    """
    T = _count(steps, "steps")
    every = _count(record_every, "record_every")
    _check_schedules(critic_step=critic_step, actor_step=actor_step, gain_step=gain_step)
    st = _ac_setup(mdp, "average_reward_actor_critic", rng, features, theta0, optimal_gain)
    R, Phi, theta, omega, g_star, cP, s, gen, eta = (
        st.R,
        st.Phi,
        st.theta,
        st.omega,
        st.g_star,
        st.cP,
        st.s,
        st.gen,
        0.0,
    )
    beta = critic_step if gain_step is None else gain_step
    beta_name = "critic_step" if gain_step is None else "gain_step"
    rec = TraceRecorder()
    u = gen.random((T, 2))
    kb = _constant_step(beta, beta_name)
    kc = _constant_step(critic_step, "critic_step")
    ka = _constant_step(actor_step, "actor_step")
    for t in range(T):
        if t % every == 0:
            _ac_record(rec, mdp, t, theta, eta, g_star, t)
        ps = _host_softmax(theta[s])
        cps = np.cumsum(ps)
        # a logit that overflowed gives a NaN policy (and _draw took the last action)
        if not math.isfinite(cps[-1]):
            raise ValueError(
                f"average_reward_actor_critic: the actor's logits overflow at update t={t}: "
                f"theta[{s}] = {theta[s].tolist()} (actor_step({t}) = "
                f"{_step(actor_step, t, 'actor_step')!r}); use a smaller actor_step"
            )
        a = _draw(cps, u[t, 0])
        s2 = _draw(cP[s, a], u[t, 1])
        r = R[s, a]
        delta = r - eta + Phi[s2] @ omega - Phi[s] @ omega
        if not math.isfinite(delta):
            raise _diverged(
                "average_reward_actor_critic", t, f"the TD error δ = {float(delta)!r}", eta, omega,
                **{"critic_step": critic_step, beta_name: beta},
            )  # fmt: skip
        eta += (kb if kb is not None else _step(beta, t, beta_name)) * (r - eta)
        alpha = kc if kc is not None else _step(critic_step, t, "critic_step")
        omega = omega + alpha * delta * Phi[s]
        score = -ps
        score[a] += 1.0
        theta[s] += (ka if ka is not None else _step(actor_step, t, "actor_step")) * delta * score
        s = s2
    if not (math.isfinite(eta) and np.all(np.isfinite(omega))):  # (the last update)
        raise _diverged(
            "average_reward_actor_critic", T - 1, "the critic", eta, omega,
            **{"critic_step": critic_step, beta_name: beta},
        )  # fmt: skip
    _ac_record(rec, mdp, T, theta, eta, g_star, T)
    return ActorCriticResult(theta, omega, float(eta), T, rec.finish(), g_star)
