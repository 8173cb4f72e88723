r"""Exact (oracle) policy gradient methods on finite discounted MDPs, batched over instances.

Notation: ``V^π(ρ) = Σ_s ρ(s) V^π(s)``; ``d^π_ρ`` is the normalised discounted
state occupancy; ``A^π = Q^π − V^π``. Every method here uses exact values from
:mod:`rltheory.mdp.bellman` (one linear solve per iteration per instance, all
instances in one batched call) and returns a
:class:`~rltheory.algorithms.PolicyOptimizationResult` whose trace holds the
exact suboptimality ``V*(ρ) − V^{π_t}(ρ)`` at every iterate.

* Softmax policy gradient, ``π_θ(·|s) = softmax(θ(s, ·))``:
  ``∂V^{π_θ}(ρ)/∂θ(s, a) = d^{π_θ}_ρ(s) π_θ(a|s) A^{π_θ}(s, a)/(1−γ)``
  (Agarwal et al. 2021, §4.2); with ``η = (1−γ)^3/8`` the gap is
  ``≤ 16 S ‖d^{π*}_ρ/ρ‖∞² ‖1/ρ‖∞ / (c² (1−γ)^6 t)`` (Mei et al. 2020, Thm 4).
* Natural policy gradient (NPG), tabular softmax closed form
  ``π_{t+1}(a|s) ∝ π_t(a|s) exp(η A^{π_t}(s, a)/(1−γ))``; from uniform ``π_0``
  ``V*(ρ) − V^{π_T}(ρ) ≤ log|A|/(ηT) + 1/((1−γ)^2 T)`` for every ``ρ``
  (Agarwal et al. 2021, Thm 16).
* Entropy-regularised NPG ``π_{t+1} ∝ π_t^{1−ητ/(1−γ)} exp(η Q_τ^{π_t}/(1−γ))``,
  linear rate ``(1−ητ)`` for ``0 < η ≤ (1−γ)/τ`` (Cen et al. 2022, Thm 1).
* Projected gradient ascent with the direct parameterisation
  ``π ← Proj_Δ(π + η ∇_π V^π(ρ))``, ``∇_π V^π(ρ)(s, a) = d^π_ρ(s) Q^π(s, a)/(1−γ)``
  (Agarwal et al. 2021, Thm 5).

NPG and entropy-regularised NPG live in :mod:`rltheory.algorithms.npg` and are
re-exported here. The bounds are functions in :mod:`rltheory.bounds.policy_optimization`.

References
----------
Agarwal, A., Kakade, S. M., Lee, J. D., Mahajan, G. (2021). On the theory of policy
gradient methods: optimality, approximation, and distribution shift. JMLR 22(98).
Mei, J., Xiao, C., Szepesvári, C., Schuurmans, D. (2020). On the global convergence
rates of softmax policy gradient methods. ICML.
Cen, S., Cheng, C., Chen, Y., Wei, Y., Chi, Y. (2022). Fast global convergence of natural
policy gradient methods with entropy regularization. Operations Research 70(4).
Kakade, S. (2001). A natural policy gradient. NeurIPS.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._numerics import higham_gamma
from .._validate import _where, as_action_table, check_real
from ..backend import array_namespace, as_float, to_numpy
from ..mdp.bellman import (
    _q_values,
    _state_occupancy,
    advantage,
    as_stochastic_policy,
    evaluate_policy,
    expected_value,
    greedy,
)
from ..mdp.discounted import _Roundoff
from ..mdp.model import FiniteMDP
from ._pg_guards import _check_leading_axes, _check_logits, _euclidean_norm
from ._policy_opt import (
    GapCertificate,
    Loop,
    PolicyOptimizationResult,
    check_iterations,
    check_positive,
    check_tol,
    discount,
    gap_metrics,
    initial_distribution,
    prepare_certified,
    project_step,
    soft_evaluation_error,
    sum_defect,
    weighting_error,
)
from .npg import (
    entropy_npg_step,
    entropy_regularized_npg,
    natural_policy_gradient,
    npg_step,
)
from .policy_mirror_descent import check_euclidean_step
from .soft import (
    SoftSolution,
    check_soft_reference,
    log_softmax,
    regularized_values,
    soft_reference,
    softmax,
)
from .temperature import check_temperature, rounded_temperature, temperature_error

__all__ = [
    "softmax_policy",
    "softmax_gradient",
    "npg_step",
    "entropy_npg_step",
    "projected_gradient_step",
    "softmax_policy_gradient",
    "natural_policy_gradient",
    "entropy_regularized_npg",
    "projected_policy_gradient",
]


def _theta(mdp: FiniteMDP, theta: Any, name: str = "theta") -> Any:
    theta = as_float(theta, mdp.xp, mdp.dtype)
    if theta.ndim < 2 or tuple(theta.shape[-2:]) != (mdp.S, mdp.A):
        raise ValueError(
            f"{name} must have shape (..., S, A) = (..., {mdp.S}, {mdp.A}); got {tuple(theta.shape)}"
        )
    if not bool(mdp.xp.all(mdp.xp.isfinite(theta))):
        h = to_numpy(theta)
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(h))[0])
        raise ValueError(f"{name} must be finite; {name}{_where(idx, ('s', 'a'))} = {h[idx]}")
    return theta


def softmax_policy(theta: Any) -> Any:
    r"""Tabular softmax policy ``π_θ(a|s) = exp θ(s, a) / Σ_b exp θ(s, b)`` (last axis).

    Examples
    --------
    >>> import numpy as np
    >>> softmax_policy(np.log(np.array([[1.0, 3.0]]))).tolist()
    [[0.25, 0.75]]

    ``theta`` must have shape ``(..., S, A)`` and finite entries (``ValueError`` naming
    ``theta`` and the offending entry otherwise).
    """
    th = as_action_table(theta, "theta")
    return softmax(th, array_namespace(th))


def _softmax_policy(theta: Any) -> Any:
    """:func:`softmax_policy` without validation (library loops)."""
    xp = array_namespace(theta)
    return softmax(as_float(theta, xp), xp)


def _check_tau(tau: Any) -> float:
    """``τ ≥ 0`` as a finite real number (numpy scalars and 0-d arrays too, as every other argument):
    ``np.float32(0.1)`` was refused as "tau must be a number >= 0" and ``inf`` passed this check."""
    return check_real(tau, "tau", low=0.0)


def softmax_gradient(mdp: FiniteMDP, theta: Any, *, rho: Any = None, tau: float = 0.0) -> Any:
    r"""Exact gradient of ``V_τ^{π_θ}(ρ)`` for the tabular softmax parameterisation.

    ``∂V_τ^{π_θ}(ρ)/∂θ(s, a) = d^{π_θ}_ρ(s) π_θ(a|s) Ã(s, a)/(1−γ)`` with
    ``Ã = Q_τ^{π_θ} − τ log π_θ − V_τ^{π_θ}`` (``Ã = A^{π_θ}`` for ``τ = 0``).

    Parameters
    ----------
    mdp : FiniteMDP
        Discounted model, possibly batched.
    theta : array, shape batch_shape + (S, A)
        Logits.
    rho : array (S,) or batch + (S,), optional
        Start distribution (the model's ``μ`` by default).
    tau : float ≥ 0
        Entropy temperature (0: unregularised).

    Returns
    -------
    array, shape batch_shape + (S, A)

    Raises
    ------
    ValueError
        Wrong ``theta`` shape or non-finite entries, bad ``rho`` or ``tau``.

    Notes
    -----
    Policy gradient theorem (Sutton et al. 2000) specialised to softmax:
    Agarwal et al. (2021), §4.2 (``τ = 0``); Mei et al. (2020), §5
    (entropy-regularised). Cost: two linear solves per instance. The test-suite
    checks it against central finite differences of ``V^{π_θ}(ρ)``.

    Examples
    --------
    One state, two actions, ``γ = 0``: ``V = Σ_a π(a) r(a)`` and the gradient is
    ``π(a)(r(a) − V)``; at uniform ``π`` with ``r = (0, 1)`` that is ``(−1/4, 1/4)``.

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> softmax_gradient(mdp, np.zeros((1, 2))).tolist()
    [[-0.25, 0.25]]
    """
    g = discount(mdp, "softmax_gradient")
    tau = _check_tau(tau)
    xp = mdp.xp
    theta = _theta(mdp, theta)
    rho = initial_distribution(mdp, rho)
    pi = softmax(theta, xp)
    if tau == 0.0:  # (A^π without subtracting Q^π − V^π, both of size max|r|/(1−γ): see advantage)
        adv = advantage(mdp, pi)
    else:
        # (regularized_values refused a batch of logits on an unbatched model naming "pi")
        _check_leading_axes(theta, mdp.batch_shape, "theta (with tau > 0)")
        V, Q = regularized_values(mdp, pi, tau=tau)
        adv = Q - tau * log_softmax(theta, xp) - V[..., None]
    d = _state_occupancy(mdp, pi, rho)
    return d[..., None] * pi * adv / (1.0 - g)


def projected_gradient_step(mdp: FiniteMDP, pi: Any, *, eta: float, rho: Any = None) -> Any:
    r"""Projected gradient ascent, direct parameterisation: ``π' = Proj_Δ(π + η d^π_ρ Q^π/(1−γ))``.

    ``∂V^π(ρ)/∂π(a|s) = d^π_ρ(s) Q^π(s, a)/(1−γ)`` (Agarwal et al. 2021, §4.1);
    the projection is Euclidean onto each simplex ``Δ(A)``, state by state.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> projected_gradient_step(mdp, np.full((1, 2), 0.5), eta=0.5).tolist()
    [[0.25, 0.75]]
    """
    g = discount(mdp, "projected_gradient_step")
    eta = check_euclidean_step(mdp, eta)
    xp = mdp.xp
    pi = as_stochastic_policy(mdp, pi)
    rho = initial_distribution(mdp, rho)
    V = evaluate_policy(mdp, pi)
    grad = _state_occupancy(mdp, pi, rho)[..., None] * _q_values(mdp, V) / (1.0 - g)
    return project_step(pi, grad, eta, xp)


# -- drivers ------------------------------------------------------------------------


def softmax_policy_gradient(
    mdp: FiniteMDP,
    *,
    eta: float,
    iterations: int,
    tau: float = 0.0,
    theta0: Any = None,
    rho: Any = None,
    tol: float | None = None,
    V_star: Any = None,
    soft: SoftSolution | None = None,
) -> PolicyOptimizationResult:
    r"""Run exact softmax policy gradient ascent ``θ_{t+1} = θ_t + η ∇_θ V_τ^{π_θ}(ρ)``.

    Parameters
    ----------
    eta : float > 0
        Step size; Mei et al.'s theorem uses ``η = (1−γ)^3/8`` (``τ = 0``) and
        ``η = (1−γ)^3/(8 + τ(4 + 8 log|A|))`` (``τ > 0``).
    iterations : int ≥ 0
    tau : float ≥ 0
        Entropy temperature (0: unregularised).
    theta0 : array (..., S, A), optional
        Initial logits (zeros: the uniform policy).
    rho : array, optional
        The start distribution ``ρ`` of the objective ``V(ρ)`` (the model's ``μ``).
    tol : float, optional
        Stop once the certified ``suboptimality_bound ≤ tol`` for every instance (a run that
        reaches ``iterations`` with ``tol`` below the certificate's round-off floor says so).
    V_star : array, optional
        ``V*`` for ``τ = 0`` (default :func:`rltheory.mdp.policy_iteration`).
    soft : SoftSolution, optional
        For ``τ > 0`` (default :func:`~rltheory.algorithms.soft.soft_reference`; one passed in is
        checked against this model and ``τ``: :func:`~rltheory.algorithms.soft.check_soft_reference`).

    Returns
    -------
    PolicyOptimizationResult
        ``theta`` holds the final logits. Trace: ``suboptimality``
        (``V*(ρ) − V^{π_t}(ρ)``, or ``V*_τ(ρ) − V_τ^{π_t}(ρ)`` when ``τ > 0``),
        ``suboptimality_inf`` (``τ = 0``), ``optimal_action_prob``
        (``min_s π_t(a*(s)|s)`` with ``a* = greedy(Q*)``, ``τ = 0``; Mei's ``c`` is its
        running minimum), ``min_prob`` (``min_{s,a} π_t(a|s)``, the ``c`` of Mei et al.'s
        Thm 6 for ``τ > 0``), ``grad_norm`` (Euclidean, per instance) and
        ``suboptimality_bound`` (certified ``≥`` the traced suboptimality's exact value: the
        computed gap plus the errors of the computed ``V^{π_t}`` (or ``V_τ^{π_t}``), of ``V*``
        (or the reference's ``soft.bound``) and of the ``ρ``-weighting, round-off included;
        :class:`~rltheory.algorithms._policy_opt.GapCertificate`).

    Raises
    ------
    ValueError
        Bad step, ``tau``, ``theta0`` (also a shape that does not broadcast to the model's),
        ``rho``, ``tol``; ``soft`` given with ``tau = 0`` or ``V_star`` with ``tau > 0`` (each
        is the other objective's reference); an ``η`` whose update sends the logits out of the
        dtype's range (NaN, ``+∞``, or a state with every logit ``−∞``), at the iteration it happens.

    Notes
    -----
    Theorem (Mei et al. 2020, Thm 4): rewards in ``[0, 1]``, ``ρ(s) > 0``,
    ``η = (1−γ)^3/8``: for all ``t ≥ 1``,
    ``V*(ρ) − V^{π_θt}(ρ) ≤ 16 S ‖d^{π*}_ρ/ρ‖∞² ‖1/ρ‖∞ / (c² (1−γ)^6 t)``,
    ``c = inf_{t≥1} min_s π_θt(a*(s)|s) > 0``
    (:func:`rltheory.bounds.softmax_pg_bound`). With entropy ``τ > 0`` and
    ``η = (1−γ)^3/(8 + τ(4 + 8 log|A|))`` the regularised gap decays linearly,
    ``≤ ‖1/ρ‖∞ (1 + τ log|A|)/(1−γ)^2 exp(−C(t−1))`` (Mei et al. 2020, Thm 6;
    :func:`rltheory.bounds.entropy_pg_bound`). For ``τ = 0`` the rate ``1/t`` is also a lower
    bound up to constants (Mei et al. 2020, Thm 10), and the constant can be
    exponential in ``S`` on chains (Li et al. 2021).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> res = softmax_policy_gradient(mdp, eta=1.0, iterations=200)
    >>> bool(res.trace["suboptimality"][-1] < 0.01)
    True
    """
    g = discount(mdp, "softmax_policy_gradient")
    eta = check_euclidean_step(mdp, eta)  # (η multiplies the gradient in the model's dtype)
    tau = _check_tau(tau)
    iterations = check_iterations(iterations)
    tol = check_tol(tol)
    xp = mdp.xp
    rho = initial_distribution(mdp, rho)
    shape = mdp.batch_shape + (mdp.S, mdp.A)
    if theta0 is None:
        theta = xp.zeros(shape, dtype=mdp.dtype, device=mdp.P.device)
    else:
        theta = _theta(mdp, theta0, "theta0")
        _check_leading_axes(theta, mdp.batch_shape, "theta0")
        theta = xp.broadcast_to(theta, shape)
    if (
        tau == 0.0 and soft is not None
    ):  # (it was ignored: the gap was measured against V*, not soft.V)
        raise ValueError(
            "soft is the reference of the entropy-regularised objective (tau > 0); got tau=0 "
            "(pass V_star, or nothing, for the unregularised gap)"
        )
    if tau > 0.0 and V_star is not None:  # (it was ignored: the gap was measured against V*_tau)
        raise ValueError(
            f"V_star is the unregularised optimum (tau = 0); got tau={tau!r}, whose gap is measured "
            "against V*_tau (pass soft, or nothing)"
        )
    if tau == 0.0:
        cert = GapCertificate(mdp, V_star)
        V_star = cert.V_star
        a_star = greedy(_q_values(mdp, V_star))
        star_mask = xp.astype(a_star[..., None] == xp.arange(mdp.A, device=mdp.P.device), mdp.dtype)
    else:
        tau = check_temperature(mdp, tau)
        soft = (
            soft_reference(mdp, tau=tau) if soft is None else check_soft_reference(mdp, soft, tau)
        )
        ro = _Roundoff(mdp)
        # The kernels compute with τ̂, τ rounded to the dtype (temperature.temperature_error). soft.V is
        # τ̂·logsumexp(soft.Q/τ̂): within soft.bound of τ̂·logsumexp(Q*_τ/τ̂) (1-Lipschitz in ‖Q‖∞),
        # that within |τ̂ − τ|·log|A| of V*_τ = τ·logsumexp(Q*_τ/τ) (d/dτ of τ·logsumexp(q/τ) is the
        # softmax's entropy, in [0, log|A|]), plus its rounding. The computed V is V_τ̂^π's, within
        # temperature_error of V_τ^π.
        tau_hat, d_tau = rounded_temperature(mdp, tau)
        ref_v = (
            soft.bound
            + d_tau * math.log(mdp.A)
            + temperature_error(mdp, tau)
            + higham_gamma(mdp.A + 4, ro.u) * (xp.max(xp.abs(soft.V), axis=-1) + max(tau, tau_hat))
        )
    loop = Loop("softmax_policy_gradient", iterations, tol, xp)
    t = 0
    while True:
        pi = softmax(theta, xp)
        if tau == 0.0:
            V = evaluate_policy(mdp, pi)
            Q = _q_values(mdp, V)
            adv = Q - V[..., None]
            m = gap_metrics(xp, V_star, V, rho)
            floor, m["suboptimality_bound"] = cert(mdp, pi, V, rho, m["suboptimality"], Q)
            m["optimal_action_prob"] = xp.min(xp.sum(pi * star_mask, axis=-1), axis=-1)
        else:
            V, Q = regularized_values(mdp, pi, tau=tau)
            logpi = log_softmax(theta, xp)
            adv = Q - tau * logpi - V[..., None]
            m = {"suboptimality": expected_value(soft.V - V, rho)}
            floor = (
                ref_v
                + soft_evaluation_error(
                    mdp, pi, logpi, V, Q, max(tau, tau_hat), ro, sum_defect(pi, xp)
                )
                + weighting_error(soft.V - V, rho, ro.u)
            )
            m["suboptimality_bound"] = (m["suboptimality"] + floor) * (1.0 + 4.0 * ro.u)
        grad = _state_occupancy(mdp, pi, rho)[..., None] * pi * adv / (1.0 - g)
        m["min_prob"] = xp.min(pi, axis=(-2, -1))
        m["grad_norm"] = _euclidean_norm(grad, xp)
        if loop.record_certified(t, m["suboptimality_bound"], floor, **m):
            break
        with np.errstate(over="ignore", invalid="ignore"):  # (checked below)
            theta = theta + eta * grad
        t += 1
        _check_logits(theta, eta, t, mdp)
    return loop.result(pi, theta=theta)


def projected_policy_gradient(
    mdp: FiniteMDP,
    *,
    eta: float,
    iterations: int,
    pi0: Any = None,
    rho: Any = None,
    tol: float | None = None,
    V_star: Any = None,
) -> PolicyOptimizationResult:
    r"""Run projected gradient ascent on ``V^π(ρ)`` with the direct parameterisation.

    ``π_{t+1} = Proj_{Δ(A)^S}(π_t + η ∇_π V^{π_t}(ρ))`` (:func:`projected_gradient_step`).

    Parameters
    ----------
    eta : float > 0
        Step; the theorem uses ``η = (1−γ)^3/(2γ|A|)``.
    iterations, pi0, rho, tol, V_star
        As in :func:`natural_policy_gradient`; ``ρ`` is also the objective's start
        distribution (``μ`` in the paper).

    Returns
    -------
    PolicyOptimizationResult
        Trace metrics ``suboptimality``, ``suboptimality_inf`` and ``suboptimality_bound``
        (certified, as in :func:`softmax_policy_gradient`; ``tol`` stops on it).

    Notes
    -----
    Theorem (Agarwal et al. 2021, Thm 5): rewards in ``[0, 1]``, ``γ > 0``,
    ``η = (1−γ)^3/(2γ|A|)``: ``min_{t<T} V*(ρ') − V^{(t)}(ρ') ≤ ε`` whenever
    ``T > 64 γ |S||A| ‖d^{π*}_{ρ'}/ρ‖∞² / ((1−γ)^6 ε²)``, for every ``ρ'``
    (:func:`rltheory.bounds.projected_pg_bound`).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> projected_policy_gradient(mdp, eta=1.0, iterations=1).trace["suboptimality"].tolist()
    [0.5, 0.0]
    """
    eta = check_positive(eta, "eta")
    g, iterations, tol, rho, cert, pi, loop = prepare_certified(
        mdp,
        "projected_policy_gradient",
        iterations=iterations,
        tol=tol,
        rho=rho,
        V_star=V_star,
        pi0=pi0,
    )
    check_euclidean_step(mdp, eta)
    xp = mdp.xp
    t = 0
    while True:
        V = evaluate_policy(mdp, pi)
        Q = _q_values(mdp, V)
        m = gap_metrics(xp, cert.V_star, V, rho)
        floor, m["suboptimality_bound"] = cert(mdp, pi, V, rho, m["suboptimality"], Q)
        if loop.record_certified(t, m["suboptimality_bound"], floor, **m):
            break
        grad = _state_occupancy(mdp, pi, rho)[..., None] * Q / (1.0 - g)
        pi = project_step(pi, grad, eta, xp)
        t += 1
    return loop.result(pi)
