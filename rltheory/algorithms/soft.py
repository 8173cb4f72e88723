r"""Entropy-regularised (soft) values, the soft Bellman operator and soft value iteration.

With temperature ``τ > 0`` the regularised value of a stochastic policy ``π`` is

    V_τ^π(s) = E[ Σ_t γ^t ( r(s_t, a_t) − τ log π(a_t|s_t) ) | s_0 = s ],
    Q_τ^π(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) V_τ^π(s'),

so ``V_τ^π = (I − γP_π)^{-1}(r_π + τ H_π)`` with the per-state entropy
``H_π(s) = −Σ_a π(a|s) log π(a|s)`` (``0 log 0 = 0``). The soft Bellman
optimality operator

    (T_τ Q)(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) τ log Σ_a' exp(Q(s', a')/τ)

is a γ-contraction in ``‖·‖∞`` (log-sum-exp is 1-Lipschitz in ``‖·‖∞``); its
fixed point ``Q*_τ`` gives the soft-optimal policy ``π*_τ(·|s) = softmax(Q*_τ(s, ·)/τ)``
and ``V*_τ(s) = τ log Σ_a exp(Q*_τ(s, a)/τ) = V_τ^{π*_τ}(s)`` (Haarnoja et al. 2017, Thm 1;
Cen et al. 2022, §2.2). The regularisation bias is ``0 ≤ V*_τ − V* ≤ τ log|A|/(1−γ)``.

All kernels use the array API only and accept batched models. The temperature's floating-point
side (``τ`` rounded to the model's dtype, the overflow-free soft maximum) is
:mod:`rltheory.algorithms.temperature`.

References
----------
Haarnoja, T., Tang, H., Abbeel, P., Levine, S. (2017). Reinforcement learning with deep
energy-based policies. ICML. Theorem 1 (soft Bellman optimality, soft Q-iteration).
Cen, S., Cheng, C., Chen, Y., Wei, Y., Chi, Y. (2022). Fast global convergence of natural
policy gradient methods with entropy regularization. Operations Research 70(4). §2.2.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import contraction_steps
from .._validate import check_finite, check_positive_int, check_tolerance, real_scalar
from ..backend import as_float, to_numpy
from ..errors import ConvergenceWarning
from ..mdp.bellman import _q_values, as_stochastic_policy, evaluate_policy
from ..mdp.discounted import _Roundoff
from ..mdp.model import FiniteMDP
from ..trace import Trace, TraceRecorder
from ._policy_opt import discount
from .temperature import (  # (_reachable_tol: imported from here by two_stage)
    _check_soft_range,
    _reachable_tol,
    _soft_max,
    _soft_policy,
    _soft_sweep_error,
    check_temperature,
    temperature_error,
)

__all__ = [
    "softmax",
    "log_softmax",
    "policy_entropy",
    "regularized_values",
    "soft_bellman_operator",
    "soft_value_iteration",
    "SoftSolution",
]


def log_softmax(x: Any, xp: Any) -> Any:
    """``x − log Σ_a exp(x_a)`` along the last axis, computed stably (max shift)."""
    m = xp.max(x, axis=-1, keepdims=True)
    z = x - m
    return z - xp.log(xp.sum(xp.exp(z), axis=-1, keepdims=True))


def softmax(x: Any, xp: Any) -> Any:
    """``exp(x_a) / Σ_b exp(x_b)`` along the last axis, computed stably (max shift).

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> softmax(xp.asarray([0.0, 0.0]), xp)
    array([0.5, 0.5])
    """
    z = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return z / xp.sum(z, axis=-1, keepdims=True)


def policy_entropy(pi: Any, xp: Any) -> Any:
    r"""``H_π(s) = −Σ_a π(a|s) log π(a|s)`` with ``0 log 0 = 0`` (last axis reduced)."""
    pos = pi > 0
    safe = xp.where(pos, pi, xp.ones_like(pi))
    return -xp.sum(xp.where(pos, pi * xp.log(safe), xp.zeros_like(pi)), axis=-1)


def regularized_values(mdp: FiniteMDP, pi: Any, *, tau: float) -> tuple[Any, Any]:
    r"""Entropy-regularised values ``V_τ^π = (I − γP_π)^{-1}(r_π + τH_π)`` and ``Q_τ^π = r + γPV_τ^π``.

    Parameters
    ----------
    mdp : FiniteMDP
        Discounted model, possibly batched.
    pi : array, shape batch_shape + (S, A)
        Stochastic policy (zeros allowed; ``0 log 0 = 0``).
    tau : float > 0
        Temperature.

    Returns
    -------
    V : array (..., S)
    Q : array (..., S, A)
        Note ``V(s) = Σ_a π(a|s) (Q(s, a) − τ log π(a|s))``.

    Raises
    ------
    ValueError
        ``tau ≤ 0``, an average-reward model, or a policy that is not a distribution.

    Notes
    -----
    One exact policy evaluation (:func:`rltheory.mdp.evaluate_policy`) of the
    model whose reward is shifted by the state bonus ``τH_π(s)``: cost ``O(S^3)``
    per instance.

    References
    ----------
    Cen et al. (2022), eq. (9)–(10) (regularised value and Q-functions).

    Examples
    --------
    One state, two actions with rewards 0, uniform π: ``V_τ = τ log 2/(1−γ)``.

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), gamma=0.5)
    >>> V, Q = regularized_values(mdp, np.full((1, 2), 0.5), tau=1.0)
    >>> bool(np.isclose(V[0], 2 * np.log(2)))
    True
    """
    discount(mdp, "regularized_values")
    tau = check_temperature(mdp, tau)
    xp = mdp.xp
    pi = as_stochastic_policy(mdp, pi)
    bonus = tau * policy_entropy(pi, xp)
    shape = tuple(xp.broadcast_arrays(mdp.R, bonus[..., None])[0].shape)
    if shape[:-2] != mdp.batch_shape:
        raise ValueError(
            f"pi must have shape batch_shape + (S, A) = {mdp.batch_shape + (mdp.S, mdp.A)} "
            f"for regularised evaluation; got {tuple(pi.shape)}"
        )
    shifted = mdp.replace(R=xp.broadcast_to(mdp.R + bonus[..., None], shape))
    V = evaluate_policy(shifted, pi)
    return V, _q_values(mdp, V)


def soft_bellman_operator(mdp: FiniteMDP, Q: Any, *, tau: float) -> Any:
    r"""``(T_τ Q)(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) τ log Σ_a' exp(Q(s', a')/τ)``.

    A γ-contraction in ``‖·‖∞`` whose fixed point is ``Q*_τ`` (Haarnoja et al. 2017, Thm 1).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), gamma=0.5)
    >>> bool(np.allclose(soft_bellman_operator(mdp, np.zeros((1, 2)), tau=1.0), 0.5 * np.log(2)))
    True
    """
    discount(mdp, "soft_bellman_operator")
    tau = check_temperature(mdp, tau)
    xp = mdp.xp
    Q = as_float(Q, xp, mdp.dtype)
    if tuple(Q.shape[-2:]) != (mdp.S, mdp.A):
        raise ValueError(
            f"Q must have shape (..., S, A) = (..., {mdp.S}, {mdp.A}); got {tuple(Q.shape)}"
        )
    try:  # (numpy's "operands could not be broadcast together with remapped shapes" before)
        np.broadcast_shapes(tuple(Q.shape[:-2]), mdp.batch_shape)
    except ValueError:
        raise ValueError(
            f"Q's leading axes {tuple(Q.shape[:-2])} must broadcast against the model's batch shape "
            f"{mdp.batch_shape}; got Q of shape {tuple(Q.shape)}"
        ) from None
    # (NaN / inf gave a NaN result without a word; T v refuses them too)
    check_finite(Q, "Q", ("s", "a"))
    with np.errstate(over="ignore", invalid="ignore"):  # (named below)
        out = _q_values(mdp, _soft_max(Q, tau, xp))
    _check_soft_range(mdp, out, "soft_bellman_operator", tau, Q)
    return out


@dataclass(frozen=True, eq=False)
class SoftSolution:
    """Result of :func:`soft_value_iteration`.

    Attributes
    ----------
    Q : array (..., S, A)
        ``Q*_τ`` to within ``bound`` in ``‖·‖∞``.
    V : array (..., S)
        ``τ log Σ_a exp(Q/τ)``.
    policy : array (..., S, A)
        ``softmax(Q/τ)``, the soft-optimal policy.
    log_policy : array (..., S, A)
        ``log π*_τ = (Q − V)/τ`` (never ``log 0``; ``−∞`` only where ``(Q − V)/τ`` is below a
        quarter of the dtype's most negative number).
    iterations : int
    converged : bool
    bound : array (...)
        Certified ``‖Q − Q*_τ‖∞ ≤ bound`` per instance.
    trace : Trace
        Metrics ``residual`` (``‖Q_k − Q_{k−1}‖∞``) and ``bound`` per instance.
    """

    Q: Any
    V: Any
    policy: Any
    log_policy: Any
    iterations: int
    converged: bool
    bound: Any
    trace: Trace


def check_soft_reference(mdp: FiniteMDP, soft: Any, tau: float) -> SoftSolution:
    r"""``soft`` checked as a reference for ``mdp`` at temperature ``τ`` (a caller's ``soft=`` argument).

    The drivers certify their errors against ``Q*_τ`` through ``soft.Q`` and ``soft.bound``
    (``‖soft.Q − Q*_τ‖∞ ≤ soft.bound``), which they cannot take on trust: a solution for another
    ``τ`` or model made entropy-regularised NPG certify a log-policy error of 1.2e-11 at a policy
    8.69 away from ``log π*_τ`` (one state, ``r = (0, 1)``, ``γ = 0.5``, ``τ = 0.1``, ``soft`` at
    ``τ = 1``). Any ``Q`` within ``b`` of ``Q*_τ`` has ``‖T_τ Q − Q‖∞ ≤ (1 + γ)b``, so a computed
    residual beyond that (plus the round-off of the computed ``T_τ Q`` and of the difference, and
    the rounding of ``τ``) proves ``soft.bound`` false for this model: ``ValueError`` naming the
    instance. Also ``TypeError`` for a non-:class:`SoftSolution` and ``ValueError`` for a shape
    other than the model's. One soft Bellman sweep.

    Passing the check does not make ``soft.bound`` true: ``Q*_τ − c`` (a constant shift ``c``) has
    residual ``(1 − γ)c``, within ``(1 + γ)b`` for ``c`` up to ``(1 + γ)b/(1 − γ)``, and with ``soft`` from
    40 sweeps (``b = 0.175``) shifted by ``15b`` softmax PG certified suboptimality −1.42 where the gap was
    1.20 (one state, ``r = (0, 1)``, ``γ = 0.9``, ``τ = 1``). So the returned reference is rebuilt from
    ``soft.Q`` alone: its ``bound`` is the larger of ``soft.bound`` and the residual bound
    ``‖Q − Q*_τ‖∞ ≤ ‖T_τ Q − Q‖∞/(1 − γ)`` (computed residual plus its round-off), and ``V``,
    ``log_policy`` and ``policy`` are recomputed from ``Q`` (the drivers' error terms assume them).
    """
    if not isinstance(soft, SoftSolution):
        raise TypeError(
            f"soft must be a SoftSolution (soft_value_iteration / soft_reference); got {type(soft).__name__}"
        )
    discount(mdp, "check_soft_reference")
    xp = mdp.xp
    shape = mdp.batch_shape + (mdp.S, mdp.A)
    if tuple(soft.Q.shape) != shape:
        raise ValueError(f"soft.Q must have the model's shape {shape}; got {tuple(soft.Q.shape)}")
    g = float(mdp.gamma)
    red = (-2, -1)
    V = _soft_max(soft.Q, tau, xp)
    res = res_x = xp.max(xp.abs(_q_values(mdp, V) - soft.Q), axis=red)
    ro = _Roundoff(mdp)
    q_norm = xp.max(xp.abs(soft.Q), axis=red)
    e = _soft_sweep_error(ro, q_norm, xp.max(xp.abs(V), axis=-1), tau, mdp)
    allowed = (
        (1.0 + g) * soft.bound + 2.0 * (e + 2.0 * ro.u * q_norm) + g * temperature_error(mdp, tau)
    ) * (1.0 + 4.0 * ro.u)
    res, allowed = (
        np.broadcast_to(np.asarray(to_numpy(x), dtype=float), mdp.batch_shape)
        for x in (res, allowed)
    )
    bad = ~(res <= allowed)
    if bad.any():
        i = tuple(int(j) for j in np.argwhere(bad)[0])
        where = f" at instance {i}" if mdp.batch_shape else ""
        r_i, a_i = float(res[i]), float(allowed[i])
        raise ValueError(
            f"soft is not a reference for this model at tau={tau!r}{where}: its soft Bellman residual "
            f"||T_tau Q - Q|| = {r_i:.3g} exceeds (1 + gamma)*soft.bound + round-off = {a_i:.3g} (was it computed "
            "for another tau or model?)"
        )
    # ‖Q − Q*_τ‖∞ ≤ ‖T_τ Q − Q‖∞/(1−γ): the computed residual, its round-off (the sweep's e, the
    # difference's 2u‖Q‖∞) and the rounding of τ (‖T_τ Q − T_τ̂ Q‖∞ ≤ γ·temperature_error)
    res_bound = (
        (res_x + e + 2.0 * ro.u * q_norm) * (1.0 + 4.0 * ro.u) + g * temperature_error(mdp, tau)
    ) / (1.0 - g)
    # (soft.bound in its own dtype: cast to a narrower one it could round down)
    bound = xp.maximum(xp.asarray(soft.bound), res_bound * (1.0 + 4.0 * ro.u))
    V2, logpi = _soft_policy(soft.Q, tau, mdp)
    return dataclasses.replace(soft, V=V2, log_policy=logpi, policy=xp.exp(logpi), bound=bound)


def soft_reference(mdp: FiniteMDP, *, tau: float) -> SoftSolution:
    r"""``Q*_τ`` by :func:`soft_value_iteration` to the accuracy round-off allows, as a reference.

    The target is ``max(1e-12·min(1, r̄), 16ε·γ/(1−γ)·q̄ + 2f)`` with
    ``r̄ = ‖r‖∞ + τ log|A|`` and ``q̄ = r̄/(1−γ)`` (``‖Q*_τ‖∞ ≤ q̄``): ``16ε·γ/(1−γ)·q̄`` leaves
    room for the rounding of ``Q_{k+1} − Q_k`` (``ε‖Q‖∞`` per entry, times ``γ/(1−γ)``) and
    ``f`` is the round-off allowance that :func:`soft_value_iteration` adds to its certificate,
    at ``‖Q‖∞ = q̄``. A fixed absolute target (1e-12) lies below that floor once ``γ ≥ 0.99`` or
    the rewards are large, and the iteration then ran to its cap with a
    :class:`~rltheory.errors.ConvergenceWarning` although its answer was as good as the
    arithmetic allows; and it is far too coarse for small rewards: at rewards and ``τ`` scaled
    by ``2^-30`` (``q̄ ≈ 1e-8``) the reference was accurate to only 1e-3 of the unscaled units,
    and the entropy-regularised softmax PG traced a suboptimality off by 9.7e-4 (its final
    value is 0.0174) with policies bit-identical to the unscaled run's (``S = 5``, ``A = 3``,
    ``γ = 0.9``, ``τ = 0.1``). ``1e-12·min(1, r̄)`` is the stricter of
    1e-12 absolute and 1e-12 relative to the per-step scale ``r̄``, so the reference's accuracy
    scales with the problem's below unit rewards (and is as before at and above them). The
    drivers that trace errors against ``Q*_τ`` (entropy-regularised NPG and PG, and their
    bound constants) use this when no reference is passed.
    """
    discount(
        mdp, "soft_reference"
    )  # (an average-reward model failed in float(None) with a TypeError)
    return soft_value_iteration(mdp, tau=tau, tol=_reachable_tol(mdp, tau, 1e-12))


def soft_value_iteration(
    mdp: FiniteMDP, *, tau: float, tol: float = 1e-10, max_iter: int | None = None, Q0: Any = None
) -> SoftSolution:
    r"""Soft value iteration ``Q_{k+1} = T_τ Q_k`` with a certified stopping rule.

    Parameters
    ----------
    mdp : FiniteMDP
        Discounted model, possibly batched (all instances iterate together).
    tau : float > 0
        Entropy temperature.
    tol : float > 0
        Target accuracy: stops when ``γ/(1−γ)·‖Q_{k+1} − Q_k‖∞ ≤ tol`` for every instance.
    max_iter : int, optional
        Cap (default: the a-priori count ``⌈log(tol(1−γ)/(γ‖Q_1 − Q_0‖∞))/log γ⌉ + 10``).
    Q0 : array (..., S, A), optional
        Start (default ``r``).

    Returns
    -------
    SoftSolution

    Raises
    ------
    ValueError
        Bad ``tau`` (also one that rounds to 0 in the model's dtype), ``tol``, ``max_iter`` or
        ``Q0`` shape; average-reward model.

    Notes
    -----
    ``T_τ`` is a γ-contraction, so ``‖Q_{k+1} − Q*_τ‖∞ ≤ γ/(1−γ) ‖Q_{k+1} − Q_k‖∞``
    (the standard a-posteriori bound for contractions, Puterman 1994, Thm 6.3.1
    argument) in exact arithmetic. The computed ``Q_{k+1}`` is ``T_τ Q_k`` only up to a
    round-off ``e_k`` (``R + γPV`` by Higham's ``γ_{S+2}`` and the row sums of the stored
    ``P``, as in :class:`rltheory.mdp.discounted._Roundoff`, plus the log-sum-exp), so the
    returned ``bound`` is ``(γ(1 + 2u)‖Q_{k+1} − Q_k‖∞ + e_k)/(1−γ)``: without ``e_k`` a
    float32 model reached a rounding fixed point (``Q_{k+1} = Q_k`` exactly) and was certified
    with bound 0 while ``‖Q − Q*_τ‖∞`` was 0.047 (rewards ~100, ``γ = 0.99``), and a float64
    one with rewards 1e6 had bound 0 at error 2.4e-6. The kernels use ``τ`` rounded to the
    model's dtype, ``τ̂``; the bound adds ``γ|τ̂ − τ| log|A|/(1−γ) ≥ ‖Q*_τ − Q*_τ̂‖∞``
    (:func:`~rltheory.algorithms.temperature.temperature_error`; 0 in float64). A ``tol`` below the floor
    ``e_k/(1−γ)`` (plus that term) stops once the contraction part is down to it, with ``converged=False`` and
    a warning naming the floor. Reaching ``max_iter`` first gives ``converged=False`` and a
    :class:`~rltheory.errors.ConvergenceWarning`.

    References
    ----------
    Haarnoja et al. (2017), Theorem 1 (soft Q-iteration converges to ``Q*_τ``).

    Examples
    --------
    One state, rewards ``(0, 0)``: ``V*_τ = τ log 2/(1−γ)`` and ``π*_τ`` uniform.

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> sol = soft_value_iteration(FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), gamma=0.5), tau=1.0)
    >>> bool(np.isclose(sol.V[0], 2 * np.log(2))), sol.policy.tolist()
    (True, [[0.5, 0.5]])
    """
    g = discount(mdp, "soft_value_iteration")
    tau = check_temperature(mdp, tau)
    # numpy scalars and 0-d arrays too (a float32 model's own bound is an np.float32; a count np.int64)
    if not real_scalar(tol) > 0:
        raise ValueError(f"tol must be > 0; got {tol!r}")
    tol = check_tolerance(real_scalar(tol))  # finite
    max_iter = check_positive_int(max_iter, "max_iter", allow_none=True)
    xp = mdp.xp
    Q = (
        xp.broadcast_to(mdp.R, mdp.batch_shape + (mdp.S, mdp.A))
        if Q0 is None
        else as_float(Q0, xp, mdp.dtype)
    )
    if tuple(Q.shape) != mdp.batch_shape + (mdp.S, mdp.A):
        raise ValueError(
            f"Q0 must have shape {mdp.batch_shape + (mdp.S, mdp.A)}; got {tuple(Q.shape)}"
        )
    if Q0 is not None:
        check_finite(Q, "Q0", ("s", "a"))
    rec = TraceRecorder()
    red = (-2, -1)
    ro = _Roundoff(mdp)
    d_tau = temperature_error(mdp, tau)  # Q*_τ against the Q*_τ̂ of the rounded τ, over γ
    k, converged = 0, False
    bound = xp.full(mdp.batch_shape, math.inf, dtype=mdp.dtype, device=mdp.P.device)
    # values near the float range: an overflow of the sweep is named (_check_soft_range), one of the
    # certificate or of the a-priori cap is an honest inf (numpy's RuntimeWarnings leaked from them)
    with np.errstate(over="ignore", invalid="ignore"):
        while True:
            V = _soft_max(Q, tau, xp)
            Qn = _q_values(mdp, V)  # = soft_bellman_operator(mdp, Q, tau=tau)
            res = xp.max(xp.abs(Qn - Q), axis=red)
            k += 1
            # ‖Q_{k+1} − Q*‖ ≤ (γ‖Q_{k+1} − Q_k‖ + e_k)/(1−γ) with e_k the round-off of the computed
            # T_τ Q_k; the computed difference is within 2u of the exact one
            floor = (
                _soft_sweep_error(
                    ro, xp.max(xp.abs(Q), axis=red), xp.max(xp.abs(V), axis=-1), tau, mdp
                )
                / (1.0 - g)
                + g * d_tau
            )
            bound = (g * (1.0 + 2.0 * ro.u) / (1.0 - g)) * res + floor
            rec.record(k, residual=res, bound=bound)
            Q = Qn
            worst = float(xp.max(bound))
            if not math.isfinite(worst):  # (a NaN certificate and Q after max_iter sweeps, before)
                _check_soft_range(mdp, Q, "soft_value_iteration", tau)
            if worst <= tol:
                converged = True
                break
            if max_iter is None:
                r0 = float(xp.max(res))
                # γ^k·γ/(1−γ)·‖Q_1 − Q_0‖∞ below what the round-off allowance leaves of tol; the
                # allowance grows with ‖Q_k‖∞ ≤ ‖Q_1‖∞ + 2γ/(1−γ)‖Q_1 − Q_0‖∞ (for the cap only)
                q_hat = xp.max(xp.abs(Qn), axis=red) + (2.0 * g / (1.0 - g)) * res
                f_hat = (
                    _soft_sweep_error(ro, q_hat, q_hat + tau * math.log(max(mdp.A, 1)), tau, mdp)
                    / (1.0 - g)
                    + g * d_tau
                )
                room = tol - float(xp.max(f_hat))
                need = contraction_steps(
                    g, g * (1.0 + 2.0 * ro.u) / (1.0 - g) * r0, room if room > 0 else tol
                )
                max_iter = int(min(10**6, max(need, 1) + 10))
            # an instance whose round-off allowance alone reaches tol cannot be certified by more
            # sweeps once its contraction part is down to that level: stop, unconverged
            stuck = bool(xp.all((bound <= tol) | ((floor >= tol) & (bound <= 2.0 * floor))))
            if k >= max_iter or stuck:
                floor_max = float(xp.max(floor))
                where = (
                    f"stopped at max_iter={max_iter}"
                    if k >= max_iter
                    else f"stopped after {k} sweeps"
                )
                hint = (
                    f"; tol is at or below the certificate's round-off floor (about {floor_max:.2g}, the "
                    f"rounding of the computed T_τ Q over 1−γ) in this dtype: ask for a larger tol"
                    if floor_max >= tol
                    else ""
                )
                warnings.warn(
                    f"soft_value_iteration {where} with certificate {worst:.3g} > tol={tol:g}"
                    + hint,
                    ConvergenceWarning,
                    stacklevel=2,
                )
                break
    V, logpi = _soft_policy(Q, tau, mdp)
    return SoftSolution(
        Q=Q,
        V=V,
        policy=xp.exp(logpi),
        log_policy=logpi,
        iterations=k,
        converged=converged,
        bound=bound,
        trace=rec.finish(),
    )
