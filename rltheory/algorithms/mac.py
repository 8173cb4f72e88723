r"""MAC: multi-level Monte Carlo actor-critic (Suttle et al. 2023, Algorithm 1), tabular softmax actor.

Each update ``t`` draws ``J_t ~ Geom(1/2)``, rolls ``2^{J_t}`` consecutive transitions under
``π_{θ_t}`` (one if ``2^{J_t} > T_max``) and forms multi-level Monte Carlo estimates
(:mod:`rltheory.algorithms.mlmc`) of three per-transition quantities
(:func:`mac_sample_terms`), at the frozen ``(θ_t, ω_t, η_t)``:

* gain ``r − η``;
* critic ``δ φ(s)``, ``δ = r − η + φ(s')ᵀω − φ(s)ᵀω`` (differential TD);
* actor ``δ ∇_θ log π(a|s)``, whose stationary mean with the exact critic is ``∇J(θ)``.

Their conditional means given the state (:func:`mac_expected_terms`) feed the exact
expectations of :func:`rltheory.algorithms.mlmc.mlmc_expectation`. The actor takes an AdaGrad
step, so no step size depends on the mixing time: ``(1/T) Σ_t E‖∇J(θ_t)‖² = Õ(T^{-1/2})`` up
to the critic's approximation error (Suttle et al. 2023, Thm 1; ``O(√τ_mix)`` in the constant,
Patel et al. 2024; :func:`rltheory.bounds.average_reward.mac_rate`).

References
----------
Suttle, W. A., Bedi, A. S., Patel, B., Sadler, B. M., Koppel, A., Manocha, D. (2023).
Beyond exponentially fast mixing in average-reward RL via multi-level Monte Carlo
actor-critic. ICML. Algorithm 1, Theorem 1.
Patel, B., Suttle, W. A., Koppel, A., Aggarwal, V., Sadler, B. M., Bedi, A. S., Manocha, D.
(2024). Global optimality without mixing time oracles in average-reward RL via
multi-level actor-critic.
Dorfman, R., Levy, K. Y. (2022). Adapting to mixing time in stochastic optimization with
Markovian data. ICML. (The MLMC gradient estimator.)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_finite, check_probability, check_real, real_scalar
from ..mdp.model import FiniteMDP
from ..mdp.sample import _count
from ..trace import TraceRecorder
from ._average_reward_base import (
    _avg_model,
    _constant_step,
    _diverged,
    _draw,
    _expected_increment,
    _features,
    _host_softmax,
    _prob_atol,
    _real_array,
)
from .average_actor_critic import ActorCriticResult, _ac_record, _ac_setup
from .mlmc import _mlmc_combine, mlmc_level
from .step_schedules import StepSchedule, _check_schedules, _step

__all__ = ["mac_sample_terms", "mac_expected_terms", "multilevel_actor_critic"]


def mac_sample_terms(
    Phi: np.ndarray,
    pi_s: np.ndarray,
    s: int,
    a: int,
    r: float,
    s2: int,
    omega: np.ndarray,
    eta: float,
) -> tuple[float, np.ndarray, np.ndarray]:
    r"""Per-transition quantities of MAC: gain ``r − η``, critic ``δ φ(s)``, actor ``δ ∇_θ log π(a|s)``.

    ``δ = r − η + φ(s')ᵀω − φ(s)ᵀω``; the actor term is an ``(S, A)`` array that is
    zero outside row ``s``, where it equals ``δ (e_a − π(·|s))``.

    Raises
    ------
    ValueError
        ``Phi`` not of shape ``(S, d)`` with ``S ≥ 1``, ``pi_s`` not a distribution of shape
        ``(A,)``, ``omega`` not of shape ``(d,)``; a NaN or infinite entry of ``Phi``, ``pi_s``
        or ``omega`` (``InvalidModelError``, naming the index and the value); ``s``, ``s2`` not
        state indices in ``[0, S)``, ``a`` not an action index in ``[0, A)``, ``r`` or ``eta``
        not finite numbers.
    """
    # the arrays were not checked: an omega of the wrong length failed inside numpy's matmul, a
    # NaN in Phi, pi_s or omega returned NaN terms, and a (1, A) pi_s passed as a row
    pi_s_in = pi_s
    Phi, pi_s = _real_array(Phi, "Phi", bools=True), _real_array(pi_s, "pi_s")
    omega = _real_array(omega, "omega")
    if Phi.ndim != 2 or Phi.shape[0] == 0:
        raise ValueError(f"Phi must have shape (S, d) with S >= 1; got {Phi.shape}")
    check_finite(Phi, "Phi", ("s", "i"))
    if pi_s.ndim != 1 or pi_s.shape[0] == 0:
        raise ValueError(
            f"pi_s must have shape (A,) with A >= 1 (the policy at s); got {pi_s.shape}"
        )
    # at the tolerance of pi_s's own dtype (a float32 uniform row over 7 actions was refused)
    atol = _prob_atol(pi_s_in)
    check_probability(pi_s, "pi_s", ("a",), "pi_s", atol=atol)
    if atol > 1e-8:
        pi_s = pi_s / pi_s.sum()
    if omega.shape != (Phi.shape[1],):
        raise ValueError(
            f"omega must have shape (d,) = ({Phi.shape[1]},) (one weight per feature); got {omega.shape}"
        )
    check_finite(omega, "omega", ("i",))
    for name, v, n in (("s", s, Phi.shape[0]), ("a", a, pi_s.shape[-1]), ("s2", s2, Phi.shape[0])):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < n:
            raise ValueError(f"{name} must be an index in [0, {n}); got {v!r}")
    return _mac_terms(Phi, pi_s, s, a, check_real(r, "r"), s2, omega, check_real(eta, "eta"))


def _mac_terms(
    Phi: np.ndarray,
    pi_s: np.ndarray,
    s: int,
    a: int,
    r: float,
    s2: int,
    omega: np.ndarray,
    eta: float,
) -> tuple[float, np.ndarray, np.ndarray]:
    """:func:`mac_sample_terms` without the argument checks (the sampling loop's inner kernel)."""
    delta = r - eta + Phi[s2] @ omega - Phi[s] @ omega
    g = np.zeros((Phi.shape[0], pi_s.shape[-1]))
    g[s] = -delta * pi_s
    g[s, a] += delta
    return r - eta, delta * Phi[s], g


def mac_expected_terms(
    mdp: FiniteMDP, theta: Any, omega: Any, eta: float, features: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Conditional means given ``s_k = s`` of the three MAC per-sample quantities.

    Returns ``f̄[s]``, ``h̄[s, :]`` and ``ḡ[s, :, :]`` with, for ``a ~ π(·|s)``,
    ``s' ~ P(·|s, a)``: ``f̄(s) = r_π(s) − η``, ``h̄(s) = E[δ] φ(s)``,
    ``ḡ(s) = E[δ ∇ log π(a|s)]`` — the inputs of :func:`mlmc_expectation`.

    Parameters
    ----------
    mdp : FiniteMDP
    theta : array (S, A)
        Softmax logits.
    omega : array (d,)
        Critic weights.
    eta : float
        Gain estimate.
    features : array (S, d), optional
        ``Φ``; one-hot (``d = S``) when omitted.

    Raises
    ------
    ValueError
        ``theta`` not of shape ``(S, A)``, ``omega`` not of shape ``(d,)``, bad
        ``features``, ``eta`` not a finite number; a NaN or infinite entry of ``theta`` or
        ``omega`` (``InvalidModelError``, naming the index and the value).
    """
    P, R = _avg_model(mdp, "mac_expected_terms")
    eta = check_real(eta, "eta")
    S, A = R.shape
    Phi = _features(features, S)
    th = _real_array(theta, "theta")
    if th.shape != (S, A):
        raise ValueError(f"theta must have shape (S, A) = {(S, A)}; got {th.shape}")
    check_finite(th, "theta", ("s", "a"))
    om = _real_array(omega, "omega")
    d = Phi.shape[1]
    if om.shape != (d,):
        raise ValueError(
            f"omega must have shape (d,) = ({d},) (one weight per feature); got {om.shape}"
        )
    check_finite(om, "omega", ("i",))
    pi = _host_softmax(th)
    V = Phi @ om
    # E[δ | s, a] = r − η + Σ_{s'} P(s'|s,a)(V(s') − V(s)) (P @ V − V lost ε·|V| to cancellation)
    D = R - eta + _expected_increment(P, V)
    fbar = (pi * R).sum(-1) - eta
    hbar = (pi * D).sum(-1)[:, None] * Phi
    gbar = np.zeros((S, S, A))
    for s in range(S):
        gbar[s, s] = pi[s] * D[s] - pi[s] * (pi[s] * D[s]).sum()
    return fbar, hbar, gbar


def _mlmc_rollout(
    Phi: np.ndarray,
    R: np.ndarray,
    cP: np.ndarray,
    pi: np.ndarray,
    s: int,
    omega: np.ndarray,
    eta: float,
    J: int,
    N: int,
    gen: np.random.Generator,
) -> tuple[float, np.ndarray, np.ndarray, int]:
    """Roll ``N`` transitions from ``s`` under ``pi``; the MLMC estimates ``f_t, h_t, g_t`` and the last state.

    ``N = 2^J`` (then ``X = x_0 + 2^J (mean(x_{<2^J}) − mean(x_{<2^{J−1}}))``) or 1 (``X = x_0``),
    as :func:`~rltheory.algorithms.mlmc.mlmc_combine` forms it. The critic and actor terms are
    summed as they are drawn, the actor's in its one non-zero row ``s_k``: storing them took
    ``N·(d + S·A)`` floats, e.g. 8 GB for ``J = 20`` and ``S·A = 1000`` (probability ``2^{-19}``
    per update with ``T_max ≥ 2^20``). Sequential sums are what numpy's ``mean(axis=0)`` forms for
    trailing size ≥ 2, so the estimates are the same bits; with one feature or ``S·A = 1`` numpy
    sums pairwise and they differ by round-off. The gain terms (one float each) are kept and
    combined by :func:`_mlmc_combine`, as before.
    """
    S, A = R.shape
    cpi = np.cumsum(pi, axis=-1)
    fs = np.empty(N)
    h_sum, g_sum = np.zeros(Phi.shape[1]), np.zeros((S, A))
    h_half, g_half = h_sum, g_sum
    half = N // 2 if N > 1 else -1
    for k in range(N):
        if k == half:  # the first 2^{J−1} terms' sums
            h_half, g_half = h_sum.copy(), g_sum.copy()
        a = _draw(cpi[s], gen.random())
        s2 = _draw(cP[s, a], gen.random())
        r = R[s, a]
        delta = r - eta + Phi[s2] @ omega - Phi[s] @ omega  # (as _mac_terms)
        fs[k] = r - eta
        h_k = delta * Phi[s]
        g_row = -delta * pi[s]
        g_row[a] += delta
        if k == 0:
            h0, g0 = h_k, np.zeros((S, A))
            g0[s] = g_row
        h_sum += h_k
        g_sum[s] += g_row
        s = s2
    f_t = _mlmc_combine(fs, J, N) if N > 1 else fs[0]
    if N == 1:
        return f_t, h0, g0, s
    h_t = h0 + 2**J * (h_sum / N - h_half / half)
    g_t = g0 + 2**J * (g_sum / N - g_half / half)
    return f_t, h_t, g_t, s


def _adagrad_add(G2: float, c: float, g: np.ndarray) -> tuple[float, float]:
    """Add ``‖g‖²`` to the AdaGrad sum ``Σ_k ‖g_k‖² = c²·G2``; returns the new ``(G2, c)``.

    ``c`` is a power of two: 1 (the plain sum, the same bits as before) until a square or the sum
    would overflow, then the power of two of the largest entry or of the running norm, so that
    the rescaling is exact. The plain sum overflowed to ``inf`` once ``‖g_t‖`` passed ``1e154``
    (rewards ``~1e200``), and every later actor step ``actor_scale/√G2`` was 0: MAC, whose
    AdaGrad step is invariant to the reward scale, stopped learning.
    """
    with np.errstate(over="ignore"):
        sq = float(np.sum(g**2)) if c == 1.0 else float(np.sum((g / c) ** 2))
    total = G2 + sq
    if math.isfinite(total):
        return total, c
    log2_c = math.frexp(c)[1] - 1
    e = max(math.frexp(float(np.max(np.abs(g))))[1], log2_c + math.frexp(math.sqrt(G2))[1])
    e = min(e - 1, 1023)  # entries of g/c below 2 (and c a float)
    G2 = math.ldexp(G2, 2 * (log2_c - e))  # G2 (c / 2^e)²
    c = math.ldexp(1.0, e)
    return G2 + float(np.sum((g / c) ** 2)), c


def _project_ball(w: np.ndarray, radius: float) -> np.ndarray:
    """``Π_{‖w‖ ≤ radius}(w)``; a norm beyond the float range is formed from ``w / c``.

    ``np.linalg.norm`` overflowed to ``inf`` for entries beyond ``1e154`` (rewards ``~1e200``),
    and the projection ``w · radius/inf`` set the critic to 0 instead of onto the sphere. ``c`` is
    the power of two above ``max|w|``, so ``(radius/c)/‖w/c‖`` is ``radius/‖w‖`` to the bit.
    """
    with np.errstate(over="ignore"):
        nrm = float(np.linalg.norm(w))
    if math.isfinite(nrm):
        return w * (radius / nrm) if nrm > radius else w
    c = math.ldexp(1.0, math.frexp(float(np.max(np.abs(w))))[1] - 1)  # ‖w‖² > 1.8e308
    nrm_c, radius_c = float(np.linalg.norm(w / c)), radius / c
    return w * (radius_c / nrm_c) if nrm_c > radius_c else w


def multilevel_actor_critic(
    mdp: FiniteMDP,
    *,
    iterations: int,
    T_max: int,
    rng: np.random.Generator | int,
    features: Any = None,
    critic_step: StepSchedule = StepSchedule(0.05),  # noqa: B008 (a frozen dataclass)
    gain_step: StepSchedule | None = None,
    actor_scale: float = 0.5,
    omega_radius: float | None = None,
    theta0: Any = None,
    optimal_gain: float | None = None,
    record_every: int = 50,
    max_samples: int | None = None,
) -> ActorCriticResult:
    r"""MAC: multi-level Monte Carlo actor-critic (Suttle et al. 2023, Algorithm 1), tabular softmax actor.

    Iteration ``t``: draw ``J_t ~ Geom(1/2)``; roll ``N_t = 2^{J_t}`` transitions
    (1 if ``2^{J_t} > T_max``) from the current state under ``π_{θ_t}``; form the
    MLMC estimates (:func:`mlmc_combine`) of the gain, critic and actor updates
    (:func:`mac_sample_terms`) at the frozen ``(θ_t, ω_t, η_t)`` and set

    ``η_{t+1} = η_t + β_t f_t``, ``ω_{t+1} = Π_{‖ω‖ ≤ R_ω}(ω_t + α_t h_t)``,
    ``θ_{t+1} = θ_t + a_t g_t`` with the AdaGrad step ``a_t = actor_scale / sqrt(Σ_{k≤t} ‖g_k‖²)``.

    No step depends on the mixing time; ``T_max`` only caps the roll-out length.

    Parameters
    ----------
    mdp : FiniteMDP
    iterations : int
        Number of updates ``T``.
    T_max : int
        Largest MLMC level length.
    rng : Generator or int
    features : array (S, d), optional
    critic_step, gain_step : StepSchedule
    actor_scale : float
        AdaGrad numerator.
    omega_radius : float, optional
        Critic projection radius (none when omitted).
    theta0, optimal_gain, record_every
        As in :func:`average_reward_actor_critic`.
    max_samples : int, optional
        Stop early once this many transitions were consumed (for equal-budget
        comparisons); the trace then ends at that point.

    Raises
    ------
    ValueError
        A critic or gain estimate that overflows (steps too large for the features), naming the
        update ``t`` and the steps at ``t``.

    Notes
    -----
    Suttle et al. (2023, Thm 1): with AdaGrad actor steps,
    ``(1/T) Σ_t E‖∇J(θ_t)‖² ≤ Õ(T^{-1/2})`` up to the critic's approximation
    error, with no step size tuned to ``τ_mix`` (the mixing time enters only the
    constant; Patel et al. 2024 sharpen it to ``O(√τ_mix)``). Per update, the
    expected number of samples is at most ``1 + ⌊log₂ T_max⌋``.
    """
    T = _count(iterations, "iterations")
    Tm = _count(T_max, "T_max")
    every = _count(record_every, "record_every")
    if not real_scalar(actor_scale) > 0:
        raise ValueError(f"actor_scale must be > 0; got {actor_scale!r}")
    actor_scale = check_real(actor_scale, "actor_scale")  # finite
    omega_radius = check_real(omega_radius, "omega_radius", low=0.0, allow_none=True)
    cap = None if max_samples is None else _count(max_samples, "max_samples")
    _check_schedules(critic_step=critic_step, gain_step=gain_step)
    st = _ac_setup(mdp, "multilevel_actor_critic", rng, features, theta0, optimal_gain)
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
    S, A = R.shape
    beta = critic_step if gain_step is None else gain_step
    beta_name = "critic_step" if gain_step is None else "gain_step"
    G2, c = 0.0, 1.0  # the AdaGrad sum Σ‖g_k‖² is c²·G2 (_adagrad_add)
    n = 0
    rec = TraceRecorder()
    kb = _constant_step(beta, beta_name)
    kc = _constant_step(critic_step, "critic_step")
    for t in range(T):
        if t % every == 0:
            _ac_record(rec, mdp, t, theta, eta, g_star, n)
        J = mlmc_level(gen)
        N = 2**J if J < Tm.bit_length() else 1  # 2^J <= T_max, else one transition
        f_t, h_t, g_t, s = _mlmc_rollout(Phi, R, cP, _host_softmax(theta), s, omega, eta, J, N, gen)
        n += N
        if not (math.isfinite(f_t) and np.all(np.isfinite(h_t)) and np.all(np.isfinite(g_t))):
            raise _diverged(
                "multilevel_actor_critic", t, "an MLMC estimate (gain, critic or actor term)",
                eta, omega, **{"critic_step": critic_step, beta_name: beta},
            )  # fmt: skip
        eta += (kb if kb is not None else _step(beta, t, beta_name)) * f_t
        omega = omega + (kc if kc is not None else _step(critic_step, t, "critic_step")) * h_t
        if omega_radius is not None:
            omega = _project_ball(omega, omega_radius)
        G2, c = _adagrad_add(G2, c, g_t)
        if G2 > 0:
            if c == 1.0:
                theta += actor_scale / math.sqrt(G2) * g_t
            else:  # Σ‖g_k‖² = c²·G2: the same step, without forming the overflowing sum
                theta += actor_scale / math.sqrt(G2) * (g_t / c)
        if cap is not None and n >= cap:
            break
    if not (math.isfinite(eta) and np.all(np.isfinite(omega))):  # (the last update)
        raise _diverged(
            "multilevel_actor_critic", t, "the critic", eta, omega,
            **{"critic_step": critic_step, beta_name: beta},
        )  # fmt: skip
    _ac_record(rec, mdp, t + 1, theta, eta, g_star, n)
    return ActorCriticResult(theta, omega, float(eta), n, rec.finish(), g_star)
