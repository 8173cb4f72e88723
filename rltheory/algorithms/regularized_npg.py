r"""Exact entropy-regularised natural policy gradient (Cen et al. 2022), batched over MDP instances.

``log π_{t+1} = (1 − ητ/(1−γ)) log π_t + η Q_τ^{π_t}/(1−γ) − log Z_t``: the NPG step on the
entropy-regularised value ``V_τ`` (:mod:`rltheory.algorithms.soft`), one step
(:func:`entropy_npg_step`) and the certified driver (:func:`entropy_regularized_npg`). For
``0 < η ≤ (1−γ)/τ`` the iterates converge linearly, ``‖Q*_τ − Q_τ^{(t+1)}‖∞ ≤ C_1 γ (1−ητ)^t``
(Cen et al. 2022, Thm 1; :func:`rltheory.bounds.entropy_npg_bound`); ``η = (1−γ)/τ`` is soft
policy iteration. Plain NPG is :mod:`rltheory.algorithms.npg`, which re-exports both names.

References
----------
Cen, S., Cheng, C., Chen, Y., Wei, Y., Chi, Y. (2022). Fast global convergence of natural
policy gradient methods with entropy regularization. Operations Research 70(4). §3, Theorem 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._numerics import higham_gamma
from .._validate import _where
from ..backend import to_numpy
from ..mdp.bellman import expected_value
from ..mdp.discounted import _Roundoff
from ..mdp.model import FiniteMDP
from ._policy_opt import (
    Loop,
    PolicyOptimizationResult,
    check_iterations,
    check_positive,
    check_tol,
    discount,
    initial_distribution,
    initial_policy,
    soft_evaluation_error,
    sum_defect,
)
from .soft import (
    SoftSolution,
    check_soft_reference,
    log_softmax,
    regularized_values,
    soft_reference,
    softmax,
)
from .temperature import check_temperature, rounded_temperature, temperature_error

__all__ = ["entropy_npg_step", "entropy_regularized_npg"]


def _check_entropy_step(mdp: FiniteMDP, eta: float, tau: float, g: float) -> None:
    if eta * tau > (1.0 - g) * (1.0 + 1e-12):
        raise ValueError(
            f"entropy-regularised NPG needs 0 < eta <= (1 - gamma)/tau = {(1.0 - g) / tau:.6g}; got eta={eta!r}"
        )
    from .npg import _check_step  # noqa: PLC0415 - (npg imports this module: no import cycle at load)

    _check_step(mdp, eta, g)


def entropy_npg_step(mdp: FiniteMDP, pi: Any, *, eta: float, tau: float) -> Any:
    r"""Entropy-regularised NPG: ``π'(a|s) ∝ π(a|s)^{1−ητ/(1−γ)} exp(η Q_τ^π(s, a)/(1−γ))``.

    Parameters
    ----------
    pi : array, shape batch_shape + (S, A)
        Current policy with full support.
    eta : float, ``0 < η ≤ (1−γ)/τ``
    tau : float > 0

    Returns
    -------
    array
        The next policy (full support).

    Raises
    ------
    ValueError
        ``η`` outside ``(0, (1−γ)/τ]`` or ``η/(1−γ)`` beyond the dtype's largest number, ``τ ≤ 0`` or
        ``τ`` that rounds to 0 in the model's dtype, ``π`` without full support, logits that leave
        the dtype's range (naming the entry).

    Notes
    -----
    Cen et al. (2022), §3: the NPG step on the entropy-regularised value
    ``V_τ``. With ``η = (1−γ)/τ`` it is soft policy iteration,
    ``π' = softmax(Q_τ^π/τ)``. Theorem 1 of the paper gives the linear rate
    implemented by :func:`rltheory.bounds.entropy_npg_bound`.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> np.round(entropy_npg_step(mdp, np.full((1, 2), 0.5), eta=1.0, tau=1.0), 6).tolist()
    [[0.268941, 0.731059]]
    """
    g = discount(mdp, "entropy_npg_step")
    eta = check_positive(eta, "eta")
    tau = check_temperature(mdp, tau)
    _check_entropy_step(mdp, eta, tau, g)
    xp = mdp.xp
    pi = initial_policy(mdp, pi, positive=True, field="pi")
    _, Q = regularized_values(mdp, pi, tau=tau)
    with np.errstate(over="ignore", invalid="ignore"):  # (checked below)
        logits = (1.0 - eta * tau / (1.0 - g)) * xp.log(pi) + (eta / (1.0 - g)) * Q
    if not bool(xp.all(xp.isfinite(logits))):  # (a NaN policy was returned without a word)
        h = np.asarray(to_numpy(logits))
        i = tuple(int(j) for j in np.argwhere(~np.isfinite(h))[0])
        raise ValueError(
            f"eta={eta!r} is too large for this model and pi: the logits (1 - eta*tau/(1 - gamma)) log pi + "
            f"eta*Q_tau/(1 - gamma) leave the {mdp.dtype} range at {_where(i, ('s', 'a'))} (= {h[i]}); use a smaller eta "
            "or a float64 model"
        )
    return softmax(logits, xp)


def _check_logit_range(
    mdp: FiniteMDP, eta: float, tau: float, g: float, iterations: int, logits: Any
) -> None:
    r"""Refuse a run whose logits could leave the dtype's range (they would turn to NaN).

    With ``q̄ = (‖r‖∞ + τ log|A|)/(1−γ) ≥ ‖Q_τ^π‖∞`` and ``α = 1 − ητ/(1−γ) ∈ [0, 1]``, the spread
    ``s_t = max_a − min_a`` of the logits obeys ``s_{t+1} ≤ α s_t + 2ηq̄/(1−γ)``, so
    ``s_t ≤ s_0 + min(t·2ηq̄/(1−γ), 2q̄/τ)`` (``(1 − α)^{-1} η/(1−γ) = 1/τ``), and
    ``|logits_{t+1}| ≤ s_t + log|A| + ηq̄/(1−γ)`` (``|log π_t| ≤ s_t + log|A|``). That must stay below
    an eighth of the dtype's largest number: float32, ``τ = 1.4e-45``, ``η = 1e37``, ``γ = 0.9`` and unit
    rewards failed at the first step with "pi must be finite; pi(s=0, a=0) = nan" (an internal name).
    """
    xp = mdp.xp
    r_max = float(xp.max(xp.abs(mdp.R))) if math.prod(mdp.R.shape) else 0.0
    log_a = math.log(max(mdp.A, 1))
    q_bar = (r_max + tau * log_a) / (1.0 - g)
    step = eta / (1.0 - g) * q_bar
    s0 = float(xp.max(xp.max(logits, axis=-1) - xp.min(logits, axis=-1)))
    # a count beyond the float range is an unbounded run (t·2ηq̄/(1−γ) = ∞ there, so the spread's
    # bound is 2q̄/τ): float(10**400) failed with a bare "OverflowError: int too large to convert to float"
    t = float(max(iterations, 1)) if iterations < 2**1023 else math.inf
    reach = s0 + log_a + step + min(t * 2.0 * step if step > 0.0 else 0.0, 2.0 * q_bar / tau)
    limit = float(xp.finfo(mdp.dtype).max) / 8.0
    if not reach <= limit:
        raise ValueError(
            f"eta={eta!r} is too large for this model at tau={tau!r}: over {iterations} iterations the logits "
            f"(1 - eta*tau/(1 - gamma)) log pi + eta*Q_tau/(1 - gamma) can reach {reach:.3g}, beyond an eighth of "
            f"the largest {mdp.dtype} number ({limit:.3g}), and turn to NaN; use a smaller eta, fewer iterations "
            "or a float64 model"
        )


def entropy_regularized_npg(
    mdp: FiniteMDP,
    *,
    eta: float,
    tau: float,
    iterations: int,
    pi0: Any = None,
    rho: Any = None,
    tol: float | None = None,
    soft: SoftSolution | None = None,
) -> PolicyOptimizationResult:
    r"""Run exact entropy-regularised NPG (Cen et al. 2022) on all instances at once.

    ``log π_{t+1} = (1 − ητ/(1−γ)) log π_t + η Q_τ^{π_t}/(1−γ) − log Z_t``.

    Parameters
    ----------
    eta : float, ``0 < η ≤ (1−γ)/τ``
    tau : float > 0
        Entropy temperature.
    iterations : int ≥ 0
    pi0 : array, optional
        Initial policy with full support (uniform by default).
    rho : array, optional
        Distribution of the traced regularised gap ``V*_τ(ρ) − V_τ^{π_t}(ρ)``.
    tol : float, optional
        Stop once the certified ``max(‖Q*_τ − Q_τ^{π_t}‖∞, τ‖log π*_τ − log π_t‖∞) ≤ tol`` for
        every instance (the Q-error alone can vanish at a suboptimal policy when ``γ = 0``): the
        bounds ``q_error_bound`` and ``log_policy_error_bound`` count the reference's certified
        error (``soft.bound``), the error of the computed ``Q_τ^{π_t}`` and round-off. A run that
        reaches ``iterations`` with ``tol`` below their floor says so in its warning.
    soft : SoftSolution, optional
        ``Q*_τ`` etc. (default: :func:`~rltheory.algorithms.soft.soft_reference`, soft value
        iteration to its round-off floor). One passed in is checked against this model and ``τ``
        (:func:`~rltheory.algorithms.soft.check_soft_reference`: ``ValueError`` when its soft
        Bellman residual proves ``soft.bound`` false).

    Returns
    -------
    PolicyOptimizationResult
        Trace metrics ``q_error`` (``‖Q*_τ − Q_τ^{π_t}‖∞``), ``log_policy_error``
        (``‖log π*_τ − log π_t‖∞``; ``inf`` where a probability of the evaluated policy
        underflowed to 0, e.g. in float32), ``suboptimality`` (``V*_τ(ρ) − V_τ^{π_t}(ρ)``), each
        computed against the reference ``soft``, and the certified ``q_error_bound`` and
        ``log_policy_error_bound`` (``≥`` the errors against the exact ``Q*_τ``, ``π*_τ``).

    Raises
    ------
    ValueError
        ``η`` outside ``(0, (1−γ)/τ]`` or ``η/(1−γ)`` beyond the dtype's largest number, bad ``τ``
        (also one that rounds to 0 in the model's dtype), ``pi0`` without full support, a ``soft``
        that is not a reference for this model and ``τ``, an ``η`` whose logits could leave the dtype's
        range within ``iterations`` (:func:`_check_logit_range`).

    Notes
    -----
    Theorem (Cen et al. 2022, Thm 1), exact evaluation, ``0 < η ≤ (1−γ)/τ``:
    ``‖Q*_τ − Q_τ^{(t+1)}‖∞ ≤ C_1 γ (1−ητ)^t`` and
    ``‖log π*_τ − log π^{(t+1)}‖∞ ≤ 2 C_1 τ^{-1} (1−ητ)^t`` with
    ``C_1 = ‖Q*_τ − Q_τ^{(0)}‖∞ + 2τ(1 − ητ/(1−γ)) ‖log π*_τ − log π^{(0)}‖∞``
    (:func:`rltheory.bounds.entropy_npg_bound`). ``η = (1−γ)/τ`` is soft policy iteration.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = entropy_regularized_npg(mdp, eta=0.5, tau=1.0, iterations=60)
    >>> bool(res.trace["q_error"][-1] < 1e-10)
    True
    """
    g = discount(mdp, "entropy_regularized_npg")
    eta = check_positive(eta, "eta")
    tau = check_temperature(mdp, tau)
    _check_entropy_step(mdp, eta, tau, g)
    iterations = check_iterations(iterations)
    tol = check_tol(tol)
    xp = mdp.xp
    rho = initial_distribution(mdp, rho)
    # (the reference first: values beyond the float range are named as such, not as a too large eta)
    soft = soft_reference(mdp, tau=tau) if soft is None else check_soft_reference(mdp, soft, tau)
    logits = xp.log(initial_policy(mdp, pi0, positive=True))
    _check_logit_range(mdp, eta, tau, g, iterations, logits)
    alpha = 1.0 - eta * tau / (1.0 - g)
    loop = Loop("entropy_regularized_npg", iterations, tol, xp)
    ro = _Roundoff(mdp)
    u = ro.u
    red = (-2, -1)
    # The kernels compute with τ̂, τ rounded to the dtype (temperature.temperature_error). The reference's own
    # errors: ‖soft.Q − Q*_τ‖∞ ≤ soft.bound, and soft.log_policy = log-softmax(soft.Q/τ̂) against
    # log π*_τ = log-softmax(Q*_τ/τ), log-softmax 2-Lipschitz in ‖·‖∞ and
    # ‖soft.Q/τ̂ − Q*_τ/τ‖∞ ≤ soft.bound/τ̂ + ‖Q*_τ‖∞·|τ̂ − τ|/(τ̂τ), so ‖soft.log_policy − log π*_τ‖∞ is at most
    # twice that, plus the rounding of (Q − V)/τ̂ (a few roundings of |Q|/τ̂, |V|/τ̂ and of the log-sum-exp).
    # The computed Q is Q_τ̂^π's, within γ·temperature_error of Q_τ^π.
    # (τ̂ is exact in the dtype: every division by it is one rounding, covered by the final (1 + 4u)s.)
    tau_hat, d_tau = rounded_temperature(mdp, tau)
    ref_q = soft.bound + g * temperature_error(mdp, tau)
    q_ref_max = xp.max(xp.abs(soft.Q), axis=red) + soft.bound
    # Beyond the float range (values/τ̂ > the largest float: τ = 1e-10 with rewards 1e300, or τ = 5e-324) the
    # terms are inf, an honest certificate of a log-policy that cannot be certified; the drift term is 0 when
    # τ̂ = τ (it was (values/τ̂ = inf)·0 = NaN, a NaN log_policy_error_bound).
    with np.errstate(over="ignore"):
        drift = 0.0 if d_tau == 0.0 else (q_ref_max / tau_hat) * ((d_tau / tau) * (1.0 + 4.0 * u))
        ref_log = 2.0 * (soft.bound / tau_hat + drift) + higham_gamma(mdp.A + 8, u) * (
            (xp.max(xp.abs(soft.Q), axis=red) + xp.max(xp.abs(soft.V), axis=-1)) / tau_hat + 1.0
        )
    t = 0
    while True:
        logpi = log_softmax(logits, xp)
        pi = xp.exp(logpi)
        V, Q = regularized_values(mdp, pi, tau=tau)
        q_err = xp.max(xp.abs(soft.Q - Q), axis=red)
        # π_t is the evaluated (and returned) pi: where exp underflowed to 0 its log is −∞
        log_err = xp.max(xp.where(pi > 0, xp.abs(soft.log_policy - logpi), xp.inf), axis=red)
        nu = sum_defect(pi, xp)  # the evaluated policy's
        eval_err = soft_evaluation_error(mdp, pi, logpi, V, Q, max(tau, tau_hat), ro, nu)
        q_bound = (q_err + ref_q + g * eval_err + ro.sweep(V)) * (1.0 + 4.0 * u)
        # logpi against the exact log-softmax of the logits and against log of the stored, normalised pi
        log_round = (
            higham_gamma(mdp.A + 4, u) * (xp.max(xp.abs(logits), axis=red) + 1.0)
            + 4.0 * u
            + 2.0 * nu
        )
        log_bound = (log_err + ref_log + log_round) * (1.0 + 4.0 * u)
        m = {
            "q_error": q_err,
            "log_policy_error": log_err,
            "suboptimality": expected_value(soft.V - V, rho),
            "q_error_bound": q_bound,
            "log_policy_error_bound": log_bound,
        }
        floor = xp.maximum(ref_q + g * eval_err + ro.sweep(V), tau * (ref_log + log_round)) * (
            1.0 + 4.0 * u
        )
        if loop.record_certified(
            t, xp.maximum(q_bound, tau * log_bound), floor, quantity="error", **m
        ):
            break
        logits = alpha * logpi + (eta / (1.0 - g)) * Q
        t += 1
    return loop.result(pi, theta=logpi)
