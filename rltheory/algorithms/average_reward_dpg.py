r"""Off-policy average-reward deterministic policy gradient on a finite-state, real-action test-bed.

* :class:`SmoothActionMDP` — finite states, one real action ``u`` per step entering through
  ``P(s'|s, u) = softmax_{s'}(L[s, s'] + u K[s, s'])`` and ``r(s, u) = r0[s] + r1[s] u − c u²``;
  a deterministic policy is ``u = θ[s]``, and its gain, bias and stationary law are exact.
* :func:`dpg_gradient` — the exact average-reward deterministic policy gradient
  ``∂J/∂θ_s = μ_θ(s) ∂_u Q(s, u)|_{u=θ_s}`` (Saxena et al. 2023, Thm 1).
* :func:`off_policy_dpg` — the finite-state adaptation of ARO-DDPG: Gaussian behaviour
  noise, a compatible linear critic (Silver et al. 2014, Thm 3) trained by off-policy
  differential TD with the TD-error gain update (Wan, Naik & Sutton 2021); deviations from
  the paper are listed in its docstring.

References
----------
Saxena, N., Khastagir, S., Kolathaya, S., Bhatnagar, S. (2023). Off-policy average reward
actor-critic with deterministic policy search. ICML. Theorem 1.
Silver, D., Lever, G., Heess, N., Degris, T., Wierstra, D., Riedmiller, M. (2014).
Deterministic policy gradient algorithms. ICML. Theorem 3, §4.2.
Wan, Y., Naik, A., Sutton, R. S. (2021). Learning and planning in average-reward Markov
decision processes. ICML.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_finite, check_real, real_scalar
from ..errors import InvalidModelError
from ..mdp.average_evaluation import gain_bias as _chain_gain_bias
from ..mdp.model import FiniteMDP
from ..mdp.sample import _count, _rng
from ..mdp.stationary import stationary_distribution
from ..trace import Trace, TraceRecorder
from ._average_reward_base import _draw, _real_array
from .step_schedules import StepSchedule, _check_schedules, _step

__all__ = ["SmoothActionMDP", "dpg_gradient", "off_policy_dpg"]


@dataclass(frozen=True, eq=False)
class SmoothActionMDP:
    r"""Finite states, one real action per step entering the model through a smooth map.

    ``P(s'|s, u) = softmax_{s'}(L[s, s'] + u K[s, s'])`` and
    ``r(s, u) = r0[s] + r1[s] u − c u²``. A deterministic policy is ``u = θ[s]``.
    This is the finite-state test-bed for deterministic policy gradients
    (SEEDS P05, item 4): exact ``J(θ)`` and ``∇J(θ)`` follow from the finite chain
    ``P_θ(s, s') = P(s'|s, θ_s)``.

    Raises
    ------
    InvalidModelError
        Shapes disagree or ``S = 0``, non-finite entries, or ``c < 0``.
    """

    L: Any
    K: Any
    r0: Any
    r1: Any
    c: float = 0.5

    def __post_init__(self) -> None:
        L, K = _real_array(self.L, "SmoothActionMDP.L"), _real_array(self.K, "SmoothActionMDP.K")
        r0, r1 = (
            _real_array(self.r0, "SmoothActionMDP.r0"),
            _real_array(self.r1, "SmoothActionMDP.r1"),
        )
        S = L.shape[0] if L.ndim == 2 else -1
        if S < 1 or L.shape != (S, S) or K.shape != (S, S) or r0.shape != (S,) or r1.shape != (S,):
            raise InvalidModelError(
                f"SmoothActionMDP needs L, K of shape (S, S) and r0, r1 of shape (S,) with S >= 1; got "
                f"{L.shape}, {K.shape}, {r0.shape}, {r1.shape}"
            )
        for name, arr, axes in (
            ("L", L, ("s", "s'")),
            ("K", K, ("s", "s'")),
            ("r0", r0, ("s",)),
            ("r1", r1, ("s",)),
        ):
            check_finite(arr, f"SmoothActionMDP.{name}", axes)
        # real_scalar: numpy scalars and 0-d real arrays (c=np.array(0.5) was refused as "must be
        # >= 0"), NaN for bools and strings; stored as a Python float
        c = real_scalar(self.c)
        if not c >= 0:
            raise InvalidModelError(f"SmoothActionMDP.c must be >= 0; got {self.c!r}")
        if not math.isfinite(c):
            raise InvalidModelError(f"SmoothActionMDP.c must be finite; got {self.c!r}")
        object.__setattr__(self, "c", c)
        for name, arr in (("L", L), ("K", K), ("r0", r0), ("r1", r1)):
            object.__setattr__(self, name, arr)

    @property
    def S(self) -> int:
        return int(self.L.shape[0])

    def _actions(self, u: Any, name: str) -> np.ndarray:
        """``u`` as a float ``(S,)`` array of finite actions (one per state); located errors."""
        a = _real_array(u, name)
        if a.shape != (self.S,):
            raise ValueError(
                f"{name} must have shape (S,) = ({self.S},) (one action per state); got {a.shape}"
            )
        check_finite(a, name, ("s",))
        return a

    def kernel(self, u: Any) -> np.ndarray:
        """``P(·|s, u_s)`` for every ``s``: rows of an ``(S, S)`` matrix.

        Raises ``ValueError`` for ``u`` not of shape ``(S,)`` (a scalar failed with numpy's
        ``IndexError``, a ``(1, S)`` array returned an ``(1, S, S)`` array) or with logits
        ``L[s] + u_s K[s]`` beyond the float range (they gave NaN rows); a NaN or infinite
        entry is an ``InvalidModelError``.
        """
        u = self._actions(u, "u")
        _check_in_float_range(self, u, "u", reward=False)
        return self._kernel(u)

    def _kernel(self, u: np.ndarray) -> np.ndarray:
        z = self.L + u[:, None] * self.K
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)

    def reward(self, u: Any) -> np.ndarray:
        """``r(s, u_s) = r0[s] + r1[s] u_s − c u_s²`` for every ``s`` (``−inf`` where that is
        below the float range); ``u`` of shape ``(S,)`` and finite, as for :meth:`kernel`."""
        return self._reward(self._actions(u, "u"))

    def _reward(self, u: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            q = self.c * u**2
            # u**2 overflows before c shrinks it (u = 1e300 with c = 0 gave 0 * inf = NaN)
            q = np.where(np.isfinite(q), q, (self.c * u) * u)
        return self.r0 + self.r1 * u - q

    def gain_bias(self, theta: Any) -> tuple[float, np.ndarray, np.ndarray]:
        """``(g, h, μ)`` of the deterministic policy ``u = θ``; ``h`` normalised by ``μᵀh = 0``.

        Raises ``ValueError`` for ``theta`` not of shape ``(S,)``, or whose logits, reward, gain or
        bias leave the float range (``θ = (1e300, 0)`` gave ``g = −inf`` and a NaN bias).
        """
        th = self._actions(theta, "theta")
        _check_in_float_range(self, th, "theta")
        with np.errstate(over="ignore", invalid="ignore"):
            g, h, mu = self._gain_bias(th)
        if not (math.isfinite(g) and np.all(np.isfinite(h))):
            s = int(np.argmax(np.abs(th)))
            raise ValueError(
                f"the gain or the bias at theta is beyond the float range (largest |theta[s]|: "
                f"theta[{s}] = {th[s].item()!r}); the exact values are not representable"
            )
        return g, h, mu

    def _gain_bias(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        # The chain's own solvers: μ by the solve of (I − P + 11ᵀ)ᵀμ = 1, redone by GTH state
        # reduction when ill-conditioned, and h with μᵀh = 0. The solve of (I − P + 11ᵀ/S)ᵀμ = 1/S
        # used here raised LinAlgError 'Singular matrix' for states coupled by e^-40 (1 − P(s|s)
        # rounds to 0) although the chain is irreducible, and for a chain that falls apart into two
        # recurrent classes (e^-1000 = 0), where no single gain exists: that is now named.
        P = self._kernel(theta)
        r = self._reward(theta)
        chain = FiniteMDP(P[:, None, :], r[:, None], None)
        try:
            g, h = _chain_gain_bias(chain, np.zeros(self.S, dtype=int), per_state=False)
        except ValueError as e:  # "... but P_π has recurrent classes {0}, {1}; ..."
            raise ValueError(
                f"the chain P_theta(s, s') = P(s'|s, theta[s]) must be unichain (one gain for every "
                f"start); it has {str(e).split(' has ', 1)[-1]}"
            ) from None
        mu = stationary_distribution(P)
        return float(g), np.asarray(h, dtype=float), np.asarray(mu, dtype=float)


def dpg_gradient(model: SmoothActionMDP, theta: Any) -> tuple[np.ndarray, float]:
    r"""Exact average-reward deterministic policy gradient (Saxena et al. 2023, Thm 1):

    ``∂J/∂θ_s = μ_θ(s) ∂_u Q(s, u)|_{u=θ_s}`` with
    ``∂_u Q(s, u) = ∂_u r(s, u) + Σ_{s'} ∂_u P(s'|s, u) h(s')`` and
    ``∂_u P(s'|s, u) = P(s'|s, u)(K[s, s'] − Σ_{s''} P(s''|s, u) K[s, s''])``.

    Returns ``(∇J, J)``. The sum ``Σ_{s'} ∂_u P(s'|s, u) h(s')`` is evaluated as a covariance about
    the most likely next state, so it stays accurate where ``P(·|s, u)`` is nearly deterministic.

    Raises
    ------
    ValueError
        ``theta`` not of shape ``(S,)``; a NaN or infinite entry (``InvalidModelError``, naming it);
        an entry whose logits ``L[s] + θ_s K[s]`` or reward ``r0[s] + r1[s] θ_s − c θ_s²`` leave
        the float range (``θ_s = 1e300``: ``θ_s²`` overflows), or a gain or gradient beyond it
        (the first such ``s`` named).
    """
    th = _real_array(theta, "theta")
    if th.shape != (model.S,):
        raise ValueError(f"theta must have shape (S,) = ({model.S},); got {th.shape}")
    check_finite(th, "theta", ("s",))  # a NaN entry returned a NaN gradient and gain
    _check_in_float_range(model, th, "theta")
    with np.errstate(over="ignore", invalid="ignore"):
        g, h, mu = model._gain_bias(th)
        dQ = model.r1 - 2 * model.c * th + _kernel_derivative_times(model._kernel(th), model.K, h)
        grad = mu * dQ
    if not (math.isfinite(g) and np.all(np.isfinite(grad))):
        s = int(np.argmax(np.abs(th)))
        raise ValueError(
            f"dpg_gradient: the gain or the gradient at theta is beyond the float range (largest "
            f"|theta[s]|: theta[{s}] = {th[s].item()!r}); the exact values are not representable"
        )
    return grad, g


def _kernel_derivative_times(P: np.ndarray, K: np.ndarray, h: np.ndarray) -> np.ndarray:
    r"""``Σ_{s'} ∂_u P(s'|s, u) h(s')`` for every ``s``: the covariance of ``K[s, ·]`` and ``h`` under
    ``P(·|s, u)``, taken about the most likely next state ``m_s``.

    ``Σ_{s'} P(s')(K(s') − K̄)(h(s') − h(m))`` with ``K(s') − K̄ = (K(s') − K(m)) − Σ_{s''} P(s'')(K(s'') −
    K(m))``: equal to ``Σ_{s'} P(s')(K(s') − K̄) h(s')`` because ``Σ_{s'} P(s')(K(s') − K̄) = 0``, and no
    longer the difference of two nearly equal numbers. The direct form ``K − Σ P K`` lost the
    derivative where ``P(·|s)`` is nearly deterministic: with ``P(1|1) = 1 − 5e-18`` it read
    ``1 − 1.0 = 0`` for ``∂_u P(1|1) = 5e-18``, which the bias ``|h| ≈ 4e16`` of such a slowly mixing
    chain turned into an error of 0.23 in ``∂_u Q`` (``∂J/∂θ_1 = −0.2917`` for the exact ``−0.4131``).
    """
    S = P.shape[0]
    m = np.argmax(P, axis=1)
    dK = K - K[np.arange(S), m][:, None]
    dh = h[None, :] - h[m][:, None]
    kbar = (P * dK).sum(axis=1, keepdims=True)  # K̄ − K(m): small where P is concentrated on m
    return (P * (dK - kbar) * dh).sum(axis=1)


def _check_in_float_range(
    model: SmoothActionMDP, th: np.ndarray, name: str, *, reward: bool = True
) -> None:
    """``ValueError`` naming the first ``θ_s`` whose logits ``L[s] + θ_s K[s]`` or reward
    ``r0[s] + r1[s] θ_s − c θ_s²`` leave the float range.

    ``dpg_gradient(model, [1e300, 0])`` returned a NaN gradient and gain without a word: ``θ²``
    overflowed to ``inf`` in the reward, and ``inf − inf`` in the softmax and the bias solve.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        logits = np.abs(model.L) + np.abs(th)[:, None] * np.abs(model.K)
        rew = np.abs(model.r0) + np.abs(model.r1 * th) + (model.c * th) * th
    checks = [(f"logits L[s] + {name}[s] K[s]", ~np.all(np.isfinite(logits), axis=1))]
    if reward:
        checks.append((f"reward r0[s] + r1[s] {name}[s] - c {name}[s]^2", ~np.isfinite(rew)))
    for what, bad in checks:
        if np.any(bad):
            s = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name} must keep the model's {what} within the float range; {name}[{s}] = "
                f"{th[s].item()!r} does not"
            )


def off_policy_dpg(
    model: SmoothActionMDP,
    *,
    steps: int,
    rng: np.random.Generator | int,
    noise: float = 0.5,
    critic_step: StepSchedule = StepSchedule(0.05, t0=1000.0, power=0.6),  # noqa: B008 (a frozen dataclass)
    actor_step: StepSchedule = StepSchedule(0.005, t0=1000.0, power=0.9),  # noqa: B008 (a frozen dataclass)
    theta0: Any = None,
    record_every: int = 1000,
) -> tuple[np.ndarray, Trace]:
    r"""Off-policy average-reward deterministic actor-critic (ARO-DDPG, finite-state adaptation).

    Behaviour: ``u_t = θ[s_t] + σ ε_t``, ``ε_t ~ N(0, 1)``. Critic: linear
    ``Q_w(s, u) = v[s] + w[s] (u − θ[s])`` (the compatible features of the
    deterministic policy ``θ``, Silver et al. 2014, Thm 3), trained by off-policy
    differential TD with the *target* action at the next state,

    ``δ_t = r_t − η_t + Q_w(s_{t+1}, θ[s_{t+1}]) − Q_w(s_t, u_t)``,
    ``(v, w) ← (v, w) + α_t δ_t ∇_{(v,w)} Q_w(s_t, u_t)``, ``η ← η + α_t δ_t``

    (the TD-error gain update of Wan, Naik & Sutton 2021, which tracks the target
    policy's gain off-policy). Actor: ``θ[s_t] ← θ[s_t] + ζ_t ∂_u Q_w(s_t, u)|_{u=θ[s_t]} = θ[s_t] + ζ_t w[s_t]``.

    Adaptation (documented deviation from ARO-DDPG): the paper's actions are
    continuous with neural/linear critics and a target network; here the state
    space is finite, the action is one real number per state entering the model
    through :class:`SmoothActionMDP`, the critic is tabular-linear with
    compatible features, there is no replay buffer or target network, and the
    actor samples states from the behaviour chain (the off-policy DPG
    approximation of Silver et al. 2014, §4.2); the trace measures the result
    against the exact on-policy gradient :func:`dpg_gradient`.

    Returns
    -------
    theta : ndarray (S,)
    trace : Trace
        ``gain`` (exact ``J(θ_t)``), ``grad_norm_sq`` (exact ``‖∇J(θ_t)‖²``), ``gain_estimate``.

    Raises
    ------
    ValueError
        ``noise`` not a finite number ``≥ 0`` (numpy scalars accepted, bools not); ``steps`` or
        ``record_every`` not an integer ``≥ 1``; ``theta0`` not of shape ``(S,)`` or with a NaN or
        infinite entry (``InvalidModelError``, naming it).
        A step size ``critic_step(t)`` or ``actor_step(t)`` not a finite number ``> 0`` (``t`` named).
        The run diverges: a behaviour action whose reward or logits leave the float range, or a
        critic or actor update that overflows (the step ``t`` and state named).
    TypeError
        ``critic_step`` or ``actor_step`` not callable, or returning a non-number.
    """
    if not isinstance(model, SmoothActionMDP):
        raise TypeError(f"off_policy_dpg needs a SmoothActionMDP; got {type(model).__name__}")
    T = _count(steps, "steps")
    every = _count(record_every, "record_every")
    noise = check_real(noise, "noise", low=0.0)  # numpy scalars too (np.float32(0.5) was refused)
    _check_schedules(critic_step=critic_step, actor_step=actor_step)
    gen = _rng(rng)
    S = model.S
    theta = np.zeros(S) if theta0 is None else _real_array(theta0, "theta0")
    if theta.shape != (S,):
        raise ValueError(f"theta0 must have shape (S,) = ({S},); got {theta.shape}")
    check_finite(theta, "theta0", ("s",))  # a NaN entry ran silently to a NaN policy
    v = np.zeros(S)
    w = np.zeros(S)
    eta = 0.0
    s = int(gen.integers(S))
    rec = TraceRecorder()
    eps = gen.standard_normal(T)
    uu = gen.random(T)
    # (a non-finite sample or iterate is named below, without numpy's overflow warnings)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            if t % every == 0:
                grad, J = dpg_gradient(model, theta)
                rec.record(t, gain=J, grad_norm_sq=float(grad @ grad), gain_estimate=eta)
            u = theta[s] + noise * eps[t]
            z = model.L[s] + u * model.K[s]
            r = model.r0[s] + model.r1[s] * u - (model.c * u) * u
            zmax = z.max()  # NaN if any logit is (a logit of -inf is a probability 0, as it should)
            if not (math.isfinite(r) and math.isfinite(zmax)):
                # NaN logits drew s' = 0 whatever the exact (deterministic) transition, and the
                # run went on until a NaN theta was blamed on the argument: "theta must be finite"
                raise ValueError(
                    f"off_policy_dpg diverged: at step t = {t} the behaviour action u = {float(u)!r} at "
                    f"state s = {s} (theta[{s}] = {float(theta[s])!r}, noise = {noise!r}) puts the "
                    f"reward or the logits L[s] + u K[s] beyond the float range; use smaller "
                    f"steps or noise"
                )
            p = np.exp(z - zmax)
            s2 = _draw(np.cumsum(p / p.sum()), uu[t])
            x = u - theta[s]
            delta = r - eta + v[s2] - (v[s] + w[s] * x)
            a = _step(critic_step, t, "critic_step")
            v[s] += a * delta
            w[s] += a * delta * x
            eta += a * delta
            b = _step(actor_step, t, "actor_step")
            theta[s] += b * w[s]
            if not (math.isfinite(eta) and math.isfinite(v[s]) and math.isfinite(theta[s])):
                # (w[s] is finite when theta[s] is); overflow warnings and a NaN theta blamed on
                # the argument ("theta must be finite; theta(s=0) = nan") at the next record before
                raise ValueError(
                    f"off_policy_dpg diverged: the critic or the actor overflowed at step t = {t}, "
                    f"state s = {s} (critic_step({t}) = {a!r}, actor_step({t}) = {b!r}); "
                    f"use smaller steps"
                )
            s = s2
    grad, J = dpg_gradient(model, theta)
    rec.record(T, gain=J, grad_norm_sq=float(grad @ grad), gain_estimate=eta)
    return theta, rec.finish()
