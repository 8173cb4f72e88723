r"""The entropy temperature in floating point: ``τ`` as the kernels use it, and the soft maximum.

The soft values of :mod:`rltheory.algorithms.soft` and the entropy-regularised drivers multiply and
divide arrays of the model's dtype by ``τ``, a Python float, which NumPy's promotion rules round to
that dtype: ``τ̂`` (:func:`rounded_temperature`). :func:`check_temperature` refuses a ``τ`` whose
``τ̂`` is 0 or ``inf``; :func:`temperature_error` bounds what the rounding moves the values,
``|τ̂ − τ| log|A|/(1−γ) ≥ ‖V_τ − V_τ̂‖∞`` (the regularised values are affine in ``τ`` with slope
``(I − γP_π)^{-1}H_π ∈ [0, log|A|/(1−γ)]``; Cen et al. 2022, §2.2, eq. (9)). The soft maximum
``τ log Σ_a exp(Q(·, a)/τ)`` (:func:`_soft_max`) is computed shift-first, so it cannot overflow, and
:func:`_soft_sweep_error` bounds the round-off of one computed soft Bellman sweep.

References
----------
Cen, S., Cheng, C., Chen, Y., Wei, Y., Chi, Y. (2022). Fast global convergence of natural
policy gradient methods with entropy regularization. Operations Research 70(4). §2.2.
Higham, N. J. (2002). Accuracy and Stability of Numerical Algorithms, 2nd ed. SIAM. §2.1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._numerics import subnormal_spacing
from ..backend import array_namespace, to_numpy
from ..mdp.discounted import _Roundoff
from ..mdp.model import FiniteMDP
from ._policy_opt import check_positive, discount

__all__ = ["check_temperature", "rounded_temperature", "temperature_error"]


def _soft_max(Q: Any, tau: float, xp: Any) -> Any:
    r"""``τ log Σ_a exp(Q(·, a)/τ)`` over the last axis as ``m + τ log Σ_a exp((Q − m)/τ)``, ``m = max_a Q``.

    Every exponent is ``≤ 0`` and the largest term is ``exp(0) = 1``, so nothing overflows:
    the form ``τ·logsumexp(Q/τ)`` divided first, and ``Q/τ`` overflowed once ``|Q|/τ`` passed the
    largest float (float32 ``Q = 1``, ``τ = 1e-40``; float64 ``τ = 1e-310``), giving ``inf − inf``
    = NaN values and a soft value iteration that failed with "cannot convert float NaN to integer".
    ``Q − m`` is clipped at ``−τ·10⁴`` (:func:`_clip_ratio`) before the division: ``exp(−10⁴)`` is 0
    in every float dtype, so the sum is unchanged and ``(Q − m)/τ`` cannot overflow either.
    """
    m = xp.max(Q, axis=-1, keepdims=True)
    return (
        m + tau * xp.log(xp.sum(xp.exp(_clip_ratio(Q - m, tau, 1e4, xp)), axis=-1, keepdims=True))
    )[..., 0]


def _clip_ratio(d: Any, tau: float, limit: float, xp: Any) -> Any:
    """``max(d, −τ·limit)/τ`` for ``d ≤ 0``: ``d/τ`` where it is ``≥ −limit``, about ``−limit`` below (no
    overflow; ``τ·limit`` capped at the dtype's largest number, where no ratio can overflow)."""
    return xp.clip(d, min=-min(tau * limit, float(xp.finfo(d.dtype).max))) / tau


def check_temperature(mdp: FiniteMDP, tau: Any) -> float:
    """``τ`` checked (a finite number > 0) and as the kernels use it: rounded to the model's dtype.

    A Python ``τ`` meeting a float32 array is rounded to float32 (NumPy's promotion rules), so a
    ``τ`` below float32's smallest subnormal (``1e-46``) became 0 and the soft values NaN: that is a
    ``ValueError`` naming ``tau`` and the dtype. Any other rounding is a certified error
    (:func:`temperature_error`).
    """
    tau = check_positive(tau, "tau")
    xp = mdp.xp
    tau_hat = rounded_temperature(mdp, tau)[0]
    if not tau_hat > 0.0:
        raise ValueError(
            f"tau={tau!r} rounds to 0 in the model's dtype {mdp.dtype} (its smallest positive number is "
            f"{subnormal_spacing(mdp.dtype, xp):.3g}); use a larger tau or a float64 model"
        )
    big = float(xp.finfo(mdp.dtype).max)
    if not math.isfinite(tau_hat):
        raise ValueError(
            f"tau={tau!r} exceeds the largest number of the model's dtype {mdp.dtype} "
            f"({big:.3g}); use a smaller tau or a float64 model"
        )
    # the entropy part of the values, τ̂ log|A|/(1−γ) (the uniform policy's bonus), must be a number
    # of the dtype: beyond it soft value iteration failed with "OverflowError: cannot convert float
    # infinity to integer", regularized_values with "R must be finite; R(s=0, a=0) = inf" (the
    # shifted reward) and the drivers with "tol must be a positive finite number; got inf"
    horizon = 1.0 if mdp.gamma is None else 1.0 / (1.0 - float(mdp.gamma))
    bonus = tau_hat * math.log(max(mdp.A, 1)) * horizon
    if not bonus <= big:
        raise ValueError(
            f"tau={tau!r} makes the entropy bonus of the values, tau*log|A|/(1 - gamma) = {bonus:.3g} "
            f"(|A| = {mdp.A}, gamma = {mdp.gamma}), exceed the largest number of the model's dtype "
            f"{mdp.dtype} ({big:.3g}); use a smaller tau"
        )
    return tau


def temperature_error(mdp: FiniteMDP, tau: float) -> float:
    r"""``Δτ·log|A|/(1−γ)`` with ``Δτ = |τ̂ − τ|``, ``τ̂`` the temperature rounded to the model's dtype.

    The kernels compute with ``τ̂`` (:func:`check_temperature`); the certificates are about ``τ``.
    ``V_τ^π = (I − γP_π)^{-1}(r_π + τH_π)`` is affine in ``τ`` with slope in
    ``[0, log|A|/(1−γ)]`` (``0 ≤ H_π ≤ log|A|``), and ``V*_τ = max_π V_τ^π`` is a maximum of such,
    so ``‖V_τ^π − V_τ̂^π‖∞`` and ``‖V*_τ − V*_τ̂‖∞`` are ``≤`` this, and the ``Q``'s (``γ`` times
    it) too. 0 in float64 (a Python float is a float64); in float32 ``Δτ ≤ u·τ`` for a normal
    ``τ`` but up to half the subnormal spacing for a subnormal one: at ``τ = 1e-42``
    (``τ̂ = 1.0005e-42``) the reference's ``log π*_τ`` was off by 0.053 and entropy-regularised
    NPG certified its log-policy error below the true one.
    """
    g = discount(mdp, "temperature_error")  # (gamma=None failed in float(None) with a TypeError)
    return rounded_temperature(mdp, tau)[1] * math.log(max(mdp.A, 1)) / (1.0 - g)


def rounded_temperature(mdp: FiniteMDP, tau: float) -> tuple[float, float]:
    """``(τ̂, |τ̂ − τ|)``: the temperature as the kernels use it, rounded to the model's dtype.

    Rounded on the host (a numpy float of the dtype's width): no device round trip per call.
    """
    tau = check_positive(
        tau, "tau"
    )  # (a negative or NaN tau gave an error of 0 or NaN without a word)
    host = np.float32 if mdp.xp.finfo(mdp.dtype).bits == 32 else np.float64
    with np.errstate(
        over="ignore"
    ):  # (a τ beyond the dtype's range: inf, refused by check_temperature)
        tau_hat = float(host(tau))
    return tau_hat, abs(tau_hat - tau)


def _soft_sweep_error(ro: _Roundoff, q_norm: Any, v_norm: Any, tau: float, mdp: FiniteMDP) -> Any:
    r"""Error of one computed ``T_τ Q`` against the exact operator at the computed ``Q``.

    ``V = m + τ log Σ_a exp((Q − m)/τ)`` (``m = max_a Q``, :func:`~rltheory.algorithms.temperature._soft_max`): ``Q − m`` and the
    division move the exponents by ``(2u + u²)|Q − m|/τ ≤ 4(1 + u)u‖Q‖∞/τ`` and log-sum-exp is
    1-Lipschitz; the exponentials, their sum of ``A`` positive terms and the ``log`` of a number
    in ``[1, A]`` cost ``(A + 4)u`` relative, the product ``τ·L`` (``L ≤ log A``) ``uτ log A`` and
    the final ``m + τL`` ``u‖V‖∞``; doubled for ``exp``/``log`` accurate to one ulp rather than
    half. Then ``R + γPV`` errs by ``_Roundoff.sweep`` at ``‖V‖∞``.

    Those are relative errors (Higham's model without underflow). A result in the subnormal
    range errs by up to half the subnormal spacing ``s`` instead (one ulp, ``s``, for
    ``exp``/``log``; sums are exact there): the ``S`` products of ``PV`` and the ``γ·``
    (``(S + 1)s/2``, and the sum passes them on times ``1 + γ_S ≤ 2``), and in ``V`` the
    division ``(Q − m)/τ`` (``τs/2``), the ``A`` exponentials (``s`` each in a sum ``≥ 1``, so ``As``
    in its ``log``, times ``τ``), the ``log`` and the ``τ·`` (``τs + s``), carried by ``γP``:
    ``e_u = (S + 1)s + γ(τ(A + 2) + 1)s``, doubled. Negligible unless the values are within
    a factor ``~1/ε`` of the underflow threshold, but positive: the round-off floor of a
    scale-free problem (``r = 0``, ``A = 1``) is not 0.
    """
    u, S, A = ro.u, mdp.S, mdp.A
    s = subnormal_spacing(mdp.dtype, mdp.xp)
    # u multiplies each term first: (2u)(4q + 2v + τ(...)) overflowed its inner sum at values near the
    # dtype's range (τ = 1e307, |A| = 10: certificate inf for values 4.6e307). One action: exact (Q − m = 0,
    # exp(0) = 1, log 1 = 0, τ·0 = 0, V = m).
    e_lse = (
        (4.0 * u * (1.0 + u)) * q_norm
        + (4.0 * u) * v_norm
        + (2.0 * u * tau) * (math.log(A) + A + 4.0)
        if A > 1
        else 0.0 * q_norm
    )
    # (products ordered small-first: τ(A + 2) overflowed at τ = 1e308; one action divides and exponentiates
    # only zeros, exactly)
    e_under = 2.0 * s * ((S + 1.0) + ro.gamma) + (
        (2.0 * s * ro.gamma * (A + 2.0)) * tau if A > 1 else 0.0
    )
    return ro._sweep(v_norm) + ro.gamma * e_lse + e_under


def _soft_policy(Q: Any, tau: float, mdp: FiniteMDP) -> tuple[Any, Any]:
    """``(V, log π) = (τ log Σ_a exp(Q/τ), (Q − V)/τ)`` of a computed ``Q``.

    ``log π ≤ 0`` is ``−∞`` where it is below a quarter of the dtype's most negative number (not
    representable: a finite stand-in would understate the distance of any finite log π from it),
    without overflowing (a quarter: the τ̂ that divides is within a factor 1.5 of τ, also when subnormal).
    """
    xp = mdp.xp
    V = _soft_max(Q, tau, xp)
    d = Q - V[..., None]
    limit = float(xp.finfo(mdp.dtype).max) / 4.0
    return V, xp.where(
        d < -min(tau * limit, 4.0 * limit), -math.inf, _clip_ratio(d, tau, limit, xp)
    )


def _check_soft_range(mdp: FiniteMDP, Q: Any, name: str, tau: float, Q_in: Any = None) -> None:
    r"""``ValueError`` where a computed soft Bellman sweep ``r + γP·τ log Σ_a exp(Q/τ)`` left the float range.

    ``Q`` (trailing axes ``(S, A)``, leading axes the model's batch or one broadcast with it) comes
    from finite data, so a non-finite entry means the exact sweep is not representable in the
    model's dtype: soft value iteration on ``r = (−1e308, 1e308)``, ``γ = 0.5``, ``τ = 1`` (``Q*_τ``
    about ``2e308``) ran 1066 sweeps to its cap and returned ``Q = V = NaN`` with the certificate NaN,
    and :func:`~rltheory.algorithms.soft.soft_bellman_operator` returned ``inf`` entries without a word
    (``bellman_optimality_operator`` refuses such a sweep). The message quotes the a-priori scale:
    ``(max|r| + τ log|A|)/(1−γ) ≥ ‖Q*_τ‖∞``, or for one sweep of a given ``Q_in``,
    ``max|r| + γ(‖Q_in‖∞ + τ log|A|)``. Host syncs only when an entry is not finite.
    Soft values scale with ``r`` and ``τ`` together, which is the remedy named.
    """
    xp = array_namespace(Q)
    if bool(xp.all(xp.isfinite(Q))):
        return
    h = np.asarray(to_numpy(Q))
    idx = tuple(int(i) for i in np.argwhere(~np.isfinite(h))[0])
    nb = len(idx) - 2
    where = f" (batch index {idx[:nb]})" if nb else ""
    dt = mdp.dtype
    r_max = (
        float(np.max(np.abs(np.asarray(to_numpy(mdp.R), dtype=np.float64)))) if mdp.R.size else 0.0
    )
    g, ent = float(mdp.gamma), tau * math.log(max(mdp.A, 1))
    with np.errstate(over="ignore"):
        q_norm = (
            (r_max + ent) / (1.0 - g)
            if Q_in is None
            else r_max
            + g * (float(np.max(np.abs(np.asarray(to_numpy(Q_in), dtype=np.float64)))) + ent)
        )
    raise ValueError(
        f"{name}: the soft values r + gamma P tau log sum_a exp(Q/tau) left the {dt} range{where}: max|r| = "
        f"{r_max:.4g}, tau={tau!r}, gamma = {g!r} (|Q| up to {q_norm:.4g}); largest {dt} "
        f"number {float(xp.finfo(dt).max):.4g}; first non-finite entry (s={idx[nb]}, a={idx[nb + 1]}) = "
        f"{h[idx]}. Soft values scale with r and tau together: divide both (and Q) by a power of 2 and "
        "scale the result back (the soft-optimal policy is unchanged)"
    )


def _reachable_tol(mdp: FiniteMDP, tau: float, at_least: float) -> float:
    """``max(at_least·min(1, r̄), 16ε·γ/(1−γ)·q̄ + 2f)``, ``r̄ = ‖r‖∞ + τ log|A| = (1−γ)q̄``: the
    target ``at_least`` (meant for rewards of unit size), relative to the problem's scale below
    it, and never below what :func:`~rltheory.algorithms.soft.soft_value_iteration` can certify on ``mdp`` without meeting
    its round-off floor (see :func:`~rltheory.algorithms.soft.soft_reference`)."""
    tau = check_temperature(
        mdp, tau
    )  # (a τ whose entropy bonus overflows: named as such, before the target)
    g = float(mdp.gamma)
    xp = mdp.xp
    r_max = float(xp.max(xp.abs(mdp.R))) if mdp.R.size else 0.0
    r_bar = r_max + tau * math.log(mdp.A)
    q_max = r_bar / (1.0 - g)
    floor = 16.0 * float(xp.finfo(mdp.dtype).eps) * g / (1.0 - g) * q_max
    ro = _Roundoff(mdp)
    f = _soft_sweep_error(ro, q_max, q_max, float(tau), mdp) / (1.0 - g) + g * temperature_error(
        mdp, tau
    )
    f_max = float(xp.max(f)) if getattr(f, "ndim", 0) else float(f)
    target = max(at_least * min(1.0, r_bar), floor + 2.0 * f_max)
    if not math.isfinite(target):
        # (the drivers then failed with "tol must be a positive finite number; got inf", about no argument
        # of theirs: rewards 1e307 or tau = 1e307 with |A| = 10 and gamma = 0.5)
        raise ValueError(
            f"the soft values' scale (max|r| + tau*log|A|)/(1 - gamma) = {q_max:.3g} (max|r| = {r_max:.3g}, "
            f"tau={tau!r}) leaves no room for their round-off certificate, which overflows: scale the rewards "
            "and tau down together (the soft-optimal policy is unchanged and the values scale with them)"
        )
    return target
