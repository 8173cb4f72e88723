r"""Primal-dual policy gradient for general utilities and the Lagrangian policy gradient for CMDPs.

:func:`general_utility_primal_dual` maximises a concave ``F(d^π)`` subject to convex
``G_i(d^π) ≤ b_i`` of the normalised occupancy ``d^π`` (Ying et al. 2023): the primal step
follows ``∇_θ[F − μ·G](d^{π_θ}) = (1−γ) ∇_θ V^{π_θ}_{r̃}`` with the shadow reward
``r̃ = ∇F(d) − Σ_i μ_i ∇G_i(d)`` (Zhang et al. 2020, §3; :func:`rltheory.mdp.utility.shadow_reward`),
the dual a regularised projected step ``μ ← Π_{[0,Λ]}(μ + η_μ (G(d) − b − δμ))``; exact or from
roll-outs. Its stationarity measure is :func:`fosp_residual` (rate ``O(T^{-2/3})``,
:func:`rltheory.bounds.constrained.fosp_rate`). :func:`lagrangian_policy_gradient` is the linear
(standard CMDP) case with a softmax policy-gradient primal step in value units.

Host only (numpy loops, cvxpy reference); device arrays raise ``TypeError``.

References
----------
Ying, D., Zhang, Y., Ding, Y., Koppel, A., Lavaei, J. (2023). Scalable primal-dual
actor-critic method for safe multi-agent RL with general utilities. NeurIPS.
Zhang, J., Koppel, A., Bedi, A. S., Szepesvári, C., Wang, M. (2020). Variational policy
gradient method for RL with general utilities. NeurIPS. §3 (shadow reward / chain rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import check_real
from ..backend import as_float, require_host, to_numpy
from ..mdp.bellman import occupancy_measure
from ..mdp.constrained import ConstrainedMDP
from ..mdp.model import FiniteMDP
from ..mdp.sample import _check_rollout_length, _count, _rng
from ..mdp.utility import OccupancyFunction, shadow_reward, solve_general_utility
from ..trace import TraceRecorder
from .constrained_base import (
    PrimalDualResult,
    _average_policy,
    _check_delta,
    _cmdp,
    _host_cmdp,
    _host_mdp,
    _positive,
    _reference,
    _theta0,
    _values,
)
from .constrained_npg import _mc_occupancy, _mc_q
from .policy_gradient import _softmax_policy, softmax_gradient

__all__ = ["fosp_residual", "general_utility_primal_dual", "lagrangian_policy_gradient"]


# ------------------------------------------------ policy-gradient primal-dual (GU)
def fosp_residual(
    grad_theta: Any, mu: Any, G_minus_b: Any, *, eta_mu: float, Lambda: float
) -> float:
    r"""First-order stationarity residual of ``min_{μ∈[0,Λ]^m} max_θ L(θ, μ)``:

    ``‖∇_θ L‖² + ‖(μ − Π_{[0,Λ]}(μ + η_μ (G − b)))/η_μ‖²`` — the squared norm of the
    gradient mapping (the stationarity measure of projected primal-dual methods;
    an ε-FOSP has residual ≤ ε).

    Examples
    --------
    >>> fosp_residual([0.0, 0.0], [1.0], [-0.5], eta_mu=1.0, Lambda=10.0)
    0.25

    Raises
    ------
    ValueError
        Non-finite entries; ``mu`` and ``G_minus_b`` not vectors of one length ``m``;
        ``eta_mu`` or ``Lambda`` not a finite number ``> 0``.
    """
    e = _positive(eta_mu, "eta_mu")
    Lam = _positive(Lambda, "Lambda")
    # as_float: complex and text refused by name (numpy's unlocated cast errors before)
    m = np.asarray(as_float(mu, np, np.float64, field="mu"), dtype=float)
    gb = np.asarray(as_float(G_minus_b, np, np.float64, field="G_minus_b"), dtype=float)
    grad = np.asarray(as_float(grad_theta, np, np.float64, field="grad_theta"), dtype=float)
    if m.ndim != 1 or gb.shape != m.shape:
        raise ValueError(
            f"mu and G_minus_b must be vectors of one length m; got shapes {m.shape} and {gb.shape}"
        )
    for name, x in (("grad_theta", grad), ("mu", m), ("G_minus_b", gb)):
        bad = np.flatnonzero(~np.isfinite(x.reshape(-1)))
        if bad.size:
            raise ValueError(
                f"{name} must be finite; {name}.flat[{bad[0]}] = {x.reshape(-1)[bad[0]]}"
            )
    proj = np.clip(m + e * gb, 0.0, Lam)
    return float(np.sum(grad**2) + np.sum(((m - proj) / e) ** 2))


def _pd_settings(
    iterations: Any,
    eta_theta: Any,
    eta_mu: Any,
    Lambda: Any,
    delta: Any,
    samples: Any,
    rng: Any,
    what: str,
    samples_name: str,
) -> tuple[int, float, float, float, float, int, np.random.Generator | None]:
    """Validated ``(T, η_θ, η_μ, Λ, δ, K, generator)`` of a primal-dual driver (``K = 0``, no generator: exact)."""
    T = _count(iterations, "iterations")
    et, em, Lam = (
        _positive(eta_theta, "eta_theta"),
        _positive(eta_mu, "eta_mu"),
        _positive(Lambda, "Lambda"),
    )
    _check_delta(delta)
    if samples is None:
        if rng is not None:  # unused without samples, but checked as in sample mode: rng='abc'
            _rng(rng)  # or -1 ran the exact mode without a word (no draw; a Generator is unchanged)
        return T, et, em, Lam, float(delta), 0, None
    K = _count(samples, samples_name)
    if rng is None:
        raise ValueError(f"sample-based {what} needs rng")
    return T, et, em, Lam, float(delta), K, _rng(rng)


def _check_utilities(
    mdp: FiniteMDP, objective: Any, constraints: Sequence[tuple[Any, float]]
) -> tuple[list, np.ndarray]:
    if not isinstance(objective, OccupancyFunction):
        raise TypeError(f"objective must be an OccupancyFunction; got {type(objective).__name__}")
    if objective.shape != (mdp.S, mdp.A):
        raise ValueError(
            f"objective has shape {objective.shape}; the model has (S, A) = {(mdp.S, mdp.A)}"
        )
    # curvature as solve_general_utility requires it (with ``reference`` given that check never ran,
    # and a convex objective or a concave constraint was run as if the method's guarantee applied)
    if objective.curvature not in ("affine", "concave"):
        raise ValueError(
            f"the objective must be concave or affine to maximise; {objective.name!r} is {objective.curvature}"
        )
    Gs, bs = [], []
    for i, item in enumerate(constraints):
        if not (
            isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], OccupancyFunction)
        ):
            raise TypeError(
                f"constraints[{i}] must be a pair (OccupancyFunction, threshold); got {item!r}"
            )
        if item[0].shape != (mdp.S, mdp.A):
            raise ValueError(
                f"constraints[{i}] has shape {item[0].shape}; the model has (S, A) = {(mdp.S, mdp.A)}"
            )
        if item[0].curvature not in ("affine", "convex"):
            raise ValueError(
                f"constraints[{i}] ({item[0].name!r}) must be convex or affine for G <= b; "
                f"it is {item[0].curvature}"
            )
        Gs.append(item[0])
        bs.append(check_real(item[1], f"constraints[{i}] threshold"))
    return Gs, np.asarray(bs, dtype=float)


def general_utility_primal_dual(
    mdp: FiniteMDP,
    objective: OccupancyFunction,
    constraints: Sequence[tuple[OccupancyFunction, float]] = (),
    *,
    iterations: int,
    eta_theta: float,
    eta_mu: float,
    Lambda: float,
    delta: float = 0.0,
    theta0: Any = None,
    reference: float | None = None,
    rollouts: int | None = None,
    rng: np.random.Generator | int | None = None,
    max_length: float | None = None,
) -> PrimalDualResult:
    r"""Primal-dual policy gradient for general utilities via the shadow reward (Ying et al. 2023, exact/sampled).

    ``L(θ, μ) = F(d^{π_θ}) − Σ_i μ_i (G_i(d^{π_θ}) − b_i)`` with tabular softmax ``π_θ``:

    ``θ_{t+1} = θ_t + η_θ (1−γ) ∇_θ V^{π_θ}_{r̃_t}(μ_0)``,  ``r̃_t = ∇F(d_t) − Σ_i μ_{t,i} ∇G_i(d_t)``,
    ``μ_{t+1} = Π_{[0,Λ]^m}(μ_t + η_μ (G(d_t) − b − δ μ_t))``.

    The first equation is the exact gradient ``∇_θ L`` by the chain rule
    (``d = (1−γ)×`` unnormalised occupancy; Zhang et al. 2020, §3); ``δ > 0`` adds
    the dual regularisation ``−(δ/2)‖μ‖²`` of the exact-setting analysis
    (:func:`rltheory.bounds.constrained.fosp_schedule`). Sample-based
    (``rollouts=K``): ``d_t`` is estimated from ``n = K·S·A`` geometric-horizon
    roll-outs from ``μ_0`` with one pseudo-visit per pair,
    ``d̂ = (n d̂_MC + 1)/(n + SA)`` (so utilities with ``∇F = ∞`` at 0, such as the
    entropy, get a finite shadow reward; bias ``O(SA/n)``), and the gradient from
    Monte Carlo ``Q̂_{r̃}`` with the estimated ``d`` (the estimate
    ``Σ_s d̂(s) π(a|s) Â(s,a)`` of ``(1−γ)∇_θ V_{r̃}``).

    Parameters
    ----------
    mdp : FiniteMDP
        Discounted, unbatched, host.
    objective : OccupancyFunction
        Concave (or affine) ``F``.
    constraints : sequence of (OccupancyFunction, float)
        Convex (or affine) ``G_i`` and thresholds ``b_i``.
    iterations, eta_theta, eta_mu, Lambda, delta
        ``T``, steps, dual radius, dual regularisation.
    theta0 : array (S, A), optional
        Initial logits (uniform policy by default).
    reference : float, optional
        Optimal ``F*`` (default :func:`rltheory.mdp.utility.solve_general_utility`).
    rollouts, rng
        Sample-based mode. Without ``rollouts`` the run draws nothing: ``rng`` is checked as in
        sample mode (a Generator or an int seed ``>= 0``) and otherwise unused.
    max_length : float, optional
        Sample-based mode: cap on the expected roll-out length ``1/(1−γ)``; a discount above
        ``1 − 1/max_length`` (default 10⁴, i.e. ``γ ≤ 0.9999``) is a ``ValueError`` before any
        draw (:func:`rltheory.mdp.sample._check_rollout_length`; ``γ = 1 − 1e-12`` did not finish).

    Returns
    -------
    PrimalDualResult
        Trace: ``objective`` (``F(d_t)``), ``gap`` (``F* − F(d_t)``), ``violation``
        (``max_i [G_i(d_t) − b_i]_+``), ``fosp`` (:func:`fosp_residual` of the
        unregularised Lagrangian, exact), ``lam_norm``. ``t = 0..T−1``.

    Notes
    -----
    Ying et al. (2023): in the exact setting the iterates reach an ε-FOSP at the
    rate ``O(T^{-2/3})`` (:func:`rltheory.bounds.constrained.fosp_rate`). With
    linear ``F = ⟨r, d⟩`` and ``G_i = ⟨c_i, d⟩`` the shadow reward is
    ``r − μ·c`` and the method is :func:`lagrangian_policy_gradient` (the
    standard CMDP primal-dual policy gradient) with steps scaled by ``1−γ``.
    """
    if not isinstance(mdp, FiniteMDP) or mdp.gamma is None or mdp.batch_shape:
        got = (
            type(mdp).__name__
            if not isinstance(mdp, FiniteMDP)
            else f"gamma={mdp.gamma}, batch_shape={mdp.batch_shape}"
        )
        raise ValueError(
            f"general_utility_primal_dual needs a single discounted FiniteMDP; got {got}"
        )
    mdp = _host_mdp(mdp, "general_utility_primal_dual")
    T, et, em, Lam, delta, K, gen = _pd_settings(
        iterations,
        eta_theta,
        eta_mu,
        Lambda,
        delta,
        rollouts,
        rng,
        "general_utility_primal_dual",
        "rollouts",
    )
    Gs, b = _check_utilities(mdp, objective, constraints)
    g = float(mdp.gamma)
    S, A = mdp.S, mdp.A
    if gen is not None:
        _check_rollout_length(g, max_length, 2 * K * S * A, segments=1)
    elif max_length is not None:  # unused without roll-outs, but not accepted silently
        check_real(max_length, "max_length", low=1.0)
    P = require_host(mdp.P, "general_utility_primal_dual").astype(float)
    mu0 = np.asarray(to_numpy(mdp.initial_distribution()), dtype=float)
    if reference is None:
        reference = float(
            solve_general_utility(mdp, objective, list(zip(Gs, b, strict=True))).value
        )
    else:
        reference = check_real(reference, "reference")
    theta = _theta0(theta0, S, A)
    lam = np.zeros(len(Gs))
    rec = TraceRecorder()
    d_sum = np.zeros((S, A))
    for t in range(T):
        pi = np.asarray(_softmax_policy(theta))
        d = np.asarray(occupancy_measure(mdp, pi))
        d_sum += d
        Gv = np.array([G.value(d) for G in Gs])
        rt = shadow_reward(objective, d) - sum(
            (lam[i] * shadow_reward(G, d) for i, G in enumerate(Gs)), np.zeros((S, A))
        )
        grad = (1.0 - g) * np.asarray(softmax_gradient(mdp.replace(R=rt), theta))
        Fv = objective.value(d)
        rec.record(
            t,
            objective=Fv,
            gap=reference - Fv,
            violation=float(np.max(np.maximum(Gv - b, 0.0))) if Gs else 0.0,
            fosp=fosp_residual(grad, lam, Gv - b, eta_mu=em, Lambda=Lam),
            lam_norm=float(lam.sum()),
        )
        if gen is not None:
            n_ep = K * S * A
            dh = (n_ep * _mc_occupancy(P, pi, mu0, g, n_ep, gen) + 1.0) / (n_ep + S * A)
            Gh = np.array([G.value(dh) for G in Gs])
            rh = shadow_reward(objective, dh) - sum(
                (lam[i] * shadow_reward(G, dh) for i, G in enumerate(Gs)), np.zeros((S, A))
            )
            Qh = _mc_q(P, rh[None], pi, g, K, gen)[0]
            Ah = Qh - (pi * Qh).sum(-1, keepdims=True)
            ds = dh.sum(-1, keepdims=True)
            theta = theta + et * ds * pi * Ah
            Gv = Gh
        else:
            theta = theta + et * grad
        lam = np.clip(lam + em * (Gv - b - delta * lam), 0.0, Lam)
    pi = np.asarray(_softmax_policy(theta))
    return PrimalDualResult(
        pi, _average_policy(d_sum), lam, T, None, rec.finish(), theta, float(reference), Lam
    )


def lagrangian_policy_gradient(
    cmdp: ConstrainedMDP,
    *,
    iterations: int,
    eta_theta: float,
    eta_lambda: float,
    Lambda: float,
    delta: float = 0.0,
    theta0: Any = None,
    reference: float | None = None,
) -> PrimalDualResult:
    r"""Primal-dual softmax policy gradient on a CMDP (the standard Lagrangian method).

    ``θ_{t+1} = θ_t + η_θ ∇_θ V^{π_θ}_{r − λ_t·c}(μ)``,
    ``λ_{t+1} = Π_{[0,Λ]^m}(λ_t + η_λ (V_c^{π_t}(μ) − b − δλ_t))``.

    Trace: ``value``, ``gap`` (``V* − V_r^{π_t}``), ``violation``, ``lam_norm``, ``t = 0..T−1``.
    This is :func:`general_utility_primal_dual` for linear utilities written in
    value units (test-suite: identical iterates).
    """
    cmdp = _host_cmdp(cmdp, "lagrangian_policy_gradient")
    P, R, C, b, mu, g = _cmdp(cmdp, "lagrangian_policy_gradient")
    T = _count(iterations, "iterations")
    et, el, Lam = (
        _positive(eta_theta, "eta_theta"),
        _positive(eta_lambda, "eta_lambda"),
        _positive(Lambda, "Lambda"),
    )
    delta = _check_delta(delta)
    S, A = R.shape
    Vstar = _reference(cmdp, reference)
    theta = _theta0(theta0, S, A)
    lam = np.zeros(cmdp.m)
    rec = TraceRecorder()
    d_sum = np.zeros((S, A))
    for t in range(T):
        pi = np.asarray(_softmax_policy(theta))
        d_sum += np.asarray(occupancy_measure(cmdp.mdp, pi))
        vals = _values(cmdp.mdp, np.concatenate([R[None], C]), pi, mu, "lagrangian_policy_gradient")
        rec.record(
            t,
            value=vals[0],
            gap=Vstar - vals[0],
            violation=float(np.max(np.maximum(vals[1:] - b, 0.0), initial=0.0)),
            lam_norm=float(lam.sum()),
        )
        RL = R - np.tensordot(lam, C, axes=(0, 0))
        theta = theta + et * np.asarray(softmax_gradient(cmdp.mdp.replace(R=RL), theta))
        lam = np.clip(lam + el * (vals[1:] - b - delta * lam), 0.0, Lam)
    pi = np.asarray(_softmax_policy(theta))
    return PrimalDualResult(
        pi, _average_policy(d_sum), lam, T, None, rec.finish(), theta, Vstar, Lam
    )
