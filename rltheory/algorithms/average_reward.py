r"""Average-reward actor-critic: differential TD, vanilla AC, multi-level Monte Carlo AC, off-policy DPG.

Average-reward criterion for a unichain policy ``π`` with stationary law ``μ_π``:
gain ``g^π = μ_πᵀ r_π`` and bias (differential value) ``h^π`` solving
``g + h = r_π + P_π h`` (unique up to a constant; :func:`rltheory.mdp.gain_bias`).
The differential action value is ``Q^π(s, a) = r(s, a) − g^π + Σ_{s'} P(s'|s,a) h^π(s')``
and the average-reward policy-gradient theorem reads (Sutton et al. 2000, Thm 1)

    ∇J(θ) = Σ_s μ_π(s) Σ_a π(a|s) ∇_θ log π(a|s) Q^π(s, a);

for the tabular softmax ``∂J/∂θ[s, a] = μ_π(s) π(a|s) (Q^π(s, a) − h^π(s))``
(:func:`average_reward_gradient`).

* :func:`differential_td` — linear differential TD(0) with a gain estimate
  (Tsitsiklis & Van Roy 1999): ``δ_t = r_t − η_t + φ(s_{t+1})ᵀw_t − φ(s_t)ᵀw_t``,
  ``w_{t+1} = w_t + α_t δ_t φ(s_t)``, ``η_{t+1} = η_t + β_t (r_t − η_t)``. With
  one-hot features every ``h^π + c·1`` is a fixed point; the iterate converges
  to the exact bias up to a constant and ``η_t → g^π``.
* :func:`average_reward_actor_critic` — the same critic with a softmax actor
  ``θ[s_t] += ζ_t δ_t (e_{a_t} − π(·|s_t))`` on one Markovian trajectory; its
  step sizes are the mixing-time-aware ones of Wu et al. (2020) / Chen & Zhao
  (2023) when built by :func:`mixing_step_sizes`.
* :func:`multilevel_actor_critic` — MAC (Suttle et al. 2023, Algorithm 1): each
  update draws ``J ~ Geom(1/2)`` and uses ``2^J`` consecutive transitions through
  the multi-level Monte Carlo estimator (:func:`mlmc_combine`)

      X^{MLMC} = X^{(0)} + 2^J (X^{(J)} − X^{(J−1)})   if 2^J ≤ T_max,   else X^{(0)},

  where ``X^{(j)}`` is the mean of the first ``2^j`` per-sample quantities. Its
  expectation equals that of the ``2^{⌊log₂ T_max⌋}``-sample average (the
  "truncated" quantity; :func:`mlmc_expectation` computes both exactly), so the
  gain, critic and actor updates need no mixing-time oracle; the actor takes an
  AdaGrad step. Claimed rate: ``E‖∇J‖²`` of order ``T^{-1/2}`` up to logs
  (see :func:`rltheory.bounds.average_reward.mac_rate`).
* :func:`off_policy_dpg` — the finite-state adaptation of ARO-DDPG (Saxena et
  al. 2023): see its docstring.

This module implements :func:`differential_td` and re-exports the rest from one module
per concept: :mod:`~rltheory.algorithms.step_schedules` (:class:`StepSchedule`,
:func:`mixing_step_sizes`), :mod:`~rltheory.algorithms.average_actor_critic` (the exact
gradient and vanilla AC), :mod:`~rltheory.algorithms.mlmc` (the MLMC estimator),
:mod:`~rltheory.algorithms.mac` (MAC) and :mod:`~rltheory.algorithms.average_reward_dpg`
(deterministic policy gradients).

References
----------
Tsitsiklis, J. N., Van Roy, B. (1999). Average cost temporal-difference learning.
Automatica 35(11). Theorem 1.
Sutton, R. S., McAllester, D., Singh, S., Mansour, Y. (2000). Policy gradient methods for
RL with function approximation. NIPS. Theorem 1 (average-reward form).
Suttle, W. A., Bedi, A. S., Patel, B., Sadler, B. M., Koppel, A., Manocha, D. (2023).
Beyond exponentially fast mixing in average-reward RL via multi-level Monte Carlo
actor-critic. ICML. Algorithm 1 (MAC).
Dorfman, R., Levy, K. Y. (2022). Adapting to mixing time in stochastic optimization with
Markovian data. ICML. (The MLMC gradient estimator.)
Saxena, N., Khastagir, S., Kolathaya, S., Bhatnagar, S. (2023). Off-policy average reward
actor-critic with deterministic policy search. ICML.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..mdp.model import FiniteMDP
from ..mdp.sample import _count, _rng
from ..trace import Trace, TraceRecorder
from ._average_reward_base import (
    _avg_model,
    _cdf,
    _diverged,
    _draw,
    _features,
    _gain_bias,
    _policy,
)
from .average_actor_critic import (
    ActorCriticResult,
    average_reward_actor_critic,
    average_reward_gradient,
)
from .average_reward_dpg import SmoothActionMDP, dpg_gradient, off_policy_dpg
from .mac import mac_expected_terms, mac_sample_terms, multilevel_actor_critic
from .mlmc import mlmc_combine, mlmc_expectation, mlmc_level
from .step_schedules import StepSchedule, _check_schedules, _step, mixing_step_sizes

__all__ = [
    "StepSchedule",
    "mixing_step_sizes",
    "average_reward_gradient",
    "differential_td",
    "DifferentialTDResult",
    "average_reward_actor_critic",
    "ActorCriticResult",
    "mlmc_level",
    "mlmc_combine",
    "mlmc_expectation",
    "mac_sample_terms",
    "mac_expected_terms",
    "multilevel_actor_critic",
    "SmoothActionMDP",
    "dpg_gradient",
    "off_policy_dpg",
]


# ------------------------------------------------------------------ differential TD
@dataclass(frozen=True, eq=False)
class DifferentialTDResult:
    """Result of :func:`differential_td`: critic weights ``w``, gain estimate ``eta``, trace.

    The trace records, every ``record_every`` steps, ``gain_error = |η_t − g^π|``
    and ``bias_span_error = sp(Φw_t − h^π)`` (span seminorm ``max − min``: the
    error up to an additive constant).
    """

    w: np.ndarray
    eta: float
    gain: float
    bias: np.ndarray
    steps: int
    trace: Trace


def differential_td(
    mdp: FiniteMDP,
    pi: Any,
    *,
    steps: int,
    rng: np.random.Generator | int,
    features: Any = None,
    alpha: StepSchedule = StepSchedule(0.5, t0=100.0, power=0.75),  # noqa: B008 (a frozen dataclass)
    beta: StepSchedule = StepSchedule(0.5, t0=100.0, power=0.75),  # noqa: B008 (a frozen dataclass)
    s0: int | None = None,
    record_every: int = 100,
) -> DifferentialTDResult:
    r"""Linear differential TD(0) with a gain estimate on one trajectory of ``π``.

    ``δ_t = r_t − η_t + φ(s_{t+1})ᵀw_t − φ(s_t)ᵀw_t``,
    ``w_{t+1} = w_t + α_t δ_t φ(s_t)``, ``η_{t+1} = η_t + β_t (r_t − η_t)``.

    Parameters
    ----------
    mdp : FiniteMDP
        Average-reward (or any) model; ``π`` must induce a unichain aperiodic chain.
    pi : array (S, A)
    steps : int
    rng : Generator or int
    features : array (S, d), optional
        ``Φ``; one-hot (tabular) when omitted.
    alpha, beta : StepSchedule
        Critic and gain step sizes.
    s0 : int, optional
        Initial state (drawn from the model's ``μ`` when omitted).
    record_every : int

    Raises
    ------
    ValueError
        A bad policy (located row), or weights / gain estimate that overflow (steps too large for
        the features), naming the update ``t``, the TD error and ``alpha(t)``, ``beta(t)``.

    Notes
    -----
    Tsitsiklis & Van Roy (1999, Thm 1): under Robbins–Monro steps, an irreducible
    aperiodic chain and linearly independent features, ``η_t → g^π`` a.s. and
    ``w_t`` converges to the solution of the projected Bellman equation; when
    ``1 ∈ span Φ`` (e.g. one-hot features) it converges to a point of the affine
    set ``{w : Φw = h^π + c1}``, i.e. the exact differential values up to a constant.
    """
    P, R = _avg_model(mdp, "differential_td")
    S, A = R.shape
    pol = _policy(pi, S, A)
    T = _count(steps, "steps")
    every = _count(record_every, "record_every")
    _check_schedules(alpha=alpha, beta=beta)
    gen = _rng(rng)
    Phi = _features(features, S)
    g, h = _gain_bias(mdp, pol)
    cP, cpi = _cdf(P), _cdf(pol)
    if s0 is not None and (
        isinstance(s0, bool) or not isinstance(s0, (int, np.integer)) or not 0 <= s0 < S
    ):
        raise ValueError(f"s0 must be a state index in [0, {S}); got {s0!r}")
    s = (
        _draw(_cdf(np.asarray(mdp.initial_distribution(), dtype=float)), gen.random())
        if s0 is None
        else int(s0)
    )
    w = np.zeros(Phi.shape[1])
    eta = 0.0
    rec = TraceRecorder()
    u = gen.random((T, 2))
    for t in range(T):
        if t % every == 0:
            rec.record(t, gain_error=abs(eta - g), bias_span_error=float(np.ptp(Phi @ w - h)))
        a = _draw(cpi[s], u[t, 0])
        s2 = _draw(cP[s, a], u[t, 1])
        r = R[s, a]
        delta = r - eta + Phi[s2] @ w - Phi[s] @ w
        if not math.isfinite(delta):
            raise _diverged(
                "differential_td",
                t,
                f"the TD error δ = {float(delta)!r}",
                eta,
                w,
                alpha=alpha,
                beta=beta,
            )
        w = w + _step(alpha, t, "alpha") * delta * Phi[s]
        eta = eta + _step(beta, t, "beta") * (r - eta)
        s = s2
    if not (math.isfinite(eta) and np.all(np.isfinite(w))):  # (the last update)
        raise _diverged("differential_td", T - 1, "the critic", eta, w, alpha=alpha, beta=beta)
    rec.record(T, gain_error=abs(eta - g), bias_span_error=float(np.ptp(Phi @ w - h)))
    return DifferentialTDResult(w, float(eta), g, h, T, rec.finish())
