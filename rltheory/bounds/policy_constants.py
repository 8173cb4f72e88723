r"""Problem constants of the policy-optimisation bounds, computed exactly from a model.

The rates of :mod:`rltheory.bounds.policy_optimization` depend on constants of the problem,
not of the algorithm; these functions evaluate them from a :class:`~rltheory.mdp.FiniteMDP`:

* :func:`mismatch_coefficient`: the distribution mismatch ``‖d^{π*}_ρ/μ‖∞`` (Agarwal et al.
  2021, Thm 5; Mei et al. 2020, Thms 4 and 6);
* :func:`kl_to_policy`: ``D_0 = Σ_s ν(s) KL(π*(·|s) ‖ π_0(·|s))``, the initial divergence of
  the NPG / PMD rates (Agarwal et al. 2021, Thm 16; Xiao 2022, Thm 8);
* :func:`entropy_npg_constant`: Cen et al.'s ``C_1`` of entropy-regularised NPG (Cen et al.
  2022, Thm 1).

All three are re-exported by :mod:`rltheory.bounds.policy_optimization` and
:mod:`rltheory.bounds`.

References
----------
Agarwal, A., Kakade, S. M., Lee, J. D., Mahajan, G. (2021). On the theory of policy
gradient methods. JMLR 22(98).
Mei, J., Xiao, C., Szepesvári, C., Schuurmans, D. (2020). On the global convergence rates
of softmax policy gradient methods. ICML.
Cen, S., Cheng, C., Chen, Y., Wei, Y., Chi, Y. (2022). Fast global convergence of natural
policy gradient methods with entropy regularization. Operations Research 70(4).
Xiao, L. (2022). On the convergence rates of policy gradient methods. JMLR 23(282).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import _where as _where_named
from .._validate import as_distribution, as_real_array
from ..backend import to_numpy
from ..mdp.bellman import as_stochastic_policy, state_occupancy
from ..mdp.model import FiniteMDP
from ._argcheck import _pos

__all__ = ["mismatch_coefficient", "kl_to_policy", "entropy_npg_constant"]


def mismatch_coefficient(
    mdp: FiniteMDP, pi_star: Any, rho: Any = None, mu: Any = None
) -> np.ndarray:
    r"""Distribution mismatch ``‖d^{π*}_ρ/μ‖∞`` (``μ = ρ`` by default), exactly.

    Returns ``inf`` where ``μ(s) = 0 < d^{π*}_ρ(s)``. Shape: the model's batch shape. The value
    is at least 1 (``d^{π*}_ρ`` and ``μ`` are distributions, so the largest ratio is at least
    ``Σ d/Σ μ = 1``); one computed below 1 by rounding is returned as 1 (a float32 model with
    ``ρ`` stationary under ``π*``, where ``d^{π*}_ρ = ρ``, gave ``0.99999992``, which the bounds
    taking a mismatch then refused).
    ``rho`` and ``mu`` must be probability vectors over states and ``pi_star`` a policy
    (``ValueError`` naming the argument otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.array([[[0.0, 1.0]], [[0.0, 1.0]]]), np.zeros((2, 1)), gamma=0.5)
    >>> float(mismatch_coefficient(mdp, np.array([0, 0]), rho=np.array([0.5, 0.5])))
    1.5
    """
    if rho is not None:
        rho = as_distribution(rho, "rho", mdp.S, mdp.xp, mdp.dtype)
    if mu is not None:
        mu = as_distribution(mu, "mu", mdp.S, mdp.xp, mdp.dtype)
    p = as_stochastic_policy(mdp, pi_star, field="pi_star")
    d = to_numpy(state_occupancy(mdp, p, rho))
    ref = to_numpy(
        mdp.initial_distribution() if (mu is None and rho is None) else (rho if mu is None else mu)
    )
    ref = np.broadcast_to(np.asarray(ref, float), d.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(d > 0, d / ref, 0.0)
    return np.maximum(np.max(ratio, axis=-1), 1.0)


def kl_to_policy(mdp: FiniteMDP, pi_star: Any, pi0: Any, weights: Any) -> np.ndarray:
    r"""``D_0 = Σ_s ν(s) KL(π*(·|s) ‖ π_0(·|s))`` (``inf`` if ``π_0`` misses the support of ``π*``).

    ``weights`` ``ν[..., S]`` must be finite and non-negative (``ValueError`` naming the
    offending entry otherwise). A state of weight 0 contributes 0, even where its KL is
    ``inf`` (the expectation over ``ν`` does not see it). Each state's KL is at least 0 (Gibbs'
    inequality); one computed below 0 by rounding counts as 0: policies equal up to rounding
    (one action, ``π* = π_0 = 1 − 1e-16``) gave ``D_0 = −4.7e-17``, which
    :func:`~rltheory.bounds.npg_bound` and :func:`~rltheory.bounds.pmd_sublinear_bound` refuse.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), gamma=0.5)
    >>> round(float(kl_to_policy(mdp, np.array([0]), np.full((1, 2), 0.5), np.ones(1))), 6)
    0.693147
    """
    p = to_numpy(as_stochastic_policy(mdp, pi_star, field="pi_star"))
    q = to_numpy(as_stochastic_policy(mdp, pi0, field="pi0"))
    w = as_real_array(
        np.asarray(to_numpy(weights), dtype=np.float64), "weights", (mdp.S,), ("s",), np
    )
    if np.any(w < 0):
        i = tuple(int(j) for j in np.argwhere(w < 0)[0])
        raise ValueError(
            f"weights must be non-negative; weights{_where_named(i, ('s',))} = {float(w[i])!r}"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - np.log(q)), 0.0)
        # a state of weight 0 contributes 0 even where its KL is inf (0·inf would be NaN)
        kl = np.maximum(terms.sum(-1), 0.0)  # Gibbs: KL >= 0; a rounding below 0 is 0
        return np.sum(np.where(w > 0, w * kl, 0.0), axis=-1)


def entropy_npg_constant(
    mdp: FiniteMDP, *, eta: float, tau: float, pi0: Any = None, soft: Any = None
) -> np.ndarray:
    r"""Cen et al.'s ``C_1 = ‖Q*_τ − Q_τ^{(0)}‖∞ + 2τ(1 − ητ/(1−γ))‖log π*_τ − log π^{(0)}‖∞``.

    ``Q*_τ`` comes from :func:`rltheory.algorithms.soft.soft_reference` (or ``soft``, checked against
    the model and ``τ`` by :func:`rltheory.algorithms.soft.check_soft_reference`),
    ``π^{(0)}`` is uniform unless given. Shape: the model's batch shape. ``inf`` when
    ``π^{(0)}`` has a zero (``log 0``) and ``η < (1−γ)/τ``; at ``η = (1−γ)/τ`` (soft policy
    iteration) the log-policy term has weight 0 and ``C_1 = ‖Q*_τ − Q_τ^{(0)}‖∞``.

    Raises
    ------
    ValueError
        ``gamma=None`` (average reward), or ``η > (1−γ)/τ``: outside Cen et al.'s Theorem 1
        the factor ``1 − ητ/(1−γ)`` is negative and ``C_1`` can be negative (no bound).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), gamma=0.5)
    >>> float(entropy_npg_constant(mdp, eta=0.5, tau=1.0)) < 1e-9   # uniform is soft-optimal
    True
    """
    from ..algorithms.soft import check_soft_reference, regularized_values, soft_reference  # noqa: PLC0415
    from ..algorithms.temperature import rounded_temperature  # noqa: PLC0415

    if mdp.gamma is None:
        raise ValueError(
            "entropy_npg_constant needs a discounted model; got gamma=None (average reward)"
        )
    g = float(mdp.gamma)
    eta, tau = _pos(eta, "eta"), _pos(tau, "tau")
    factor = 1.0 - eta * tau / (1.0 - g)
    if factor < -1e-12:  # Theorem 1's range; outside it C_1 can be negative (no bound)
        raise ValueError(
            f"Theorem 1 needs eta <= (1 - gamma)/tau = {(1.0 - g) / tau:.6g}; got eta={eta!r}"
        )
    factor = max(factor, 0.0)
    xp = mdp.xp
    soft = soft_reference(mdp, tau=tau) if soft is None else check_soft_reference(mdp, soft, tau)
    if pi0 is None:
        pi0 = xp.full(
            mdp.batch_shape + (mdp.S, mdp.A), 1.0 / mdp.A, dtype=mdp.dtype, device=mdp.P.device
        )
    else:  # named pi0 in the error (regularized_values calls it pi)
        pi0 = as_stochastic_policy(mdp, pi0, field="pi0")
    _, Q0 = regularized_values(mdp, pi0, tau=tau)
    qe = to_numpy(xp.max(xp.abs(soft.Q - Q0), axis=(-2, -1)))
    if (
        factor == 0.0
    ):  # soft policy iteration (eta = (1 - gamma)/tau): pi^(1) does not depend on pi^(0)
        return qe
    # τ‖log π*_τ − log π^(0)‖∞ as ‖(soft.Q − soft.V)·τ/τ̂ − τ log π^(0)‖∞ (soft.log_policy = (Q − V)/τ̂, τ̂ the
    # temperature rounded to the dtype): through the log-policy it overflowed where |Q*_τ|/τ passes the
    # float range, and C_1 came out inf for a finite one (float64 rewards ~1e300 with τ = 1e-20: 2.1e300)
    tau_hat = rounded_temperature(mdp, tau)[0]
    with np.errstate(divide="ignore"):  # a zero of pi^(0): log 0 = -inf, C_1 = inf
        d = (soft.Q - soft.V[..., None]) * (tau / tau_hat) - tau * xp.log(pi0)
        tle = to_numpy(xp.max(xp.abs(d), axis=(-2, -1)))
    return qe + 2.0 * factor * tle
