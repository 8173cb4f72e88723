r"""Primal-dual policy optimisation for constrained MDPs and general utilities; two-stage constrained AC.

Problem (:class:`rltheory.mdp.constrained.ConstrainedMDP`): maximise ``V_r^π(μ)``
subject to ``V_{c_i}^π(μ) ≤ b_i`` (unnormalised discounted values), with
Lagrangian ``L(π, λ) = V_r^π(μ) − Σ_i λ_i (V_{c_i}^π(μ) − b_i)``.

* :func:`npg_primal_dual` — NPG-PD (Ding et al. 2020, Algorithm 1): natural
  policy gradient ascent on the Lagrangian reward ``r − λ_t·c`` (one
  :func:`~rltheory.algorithms.policy_gradient.npg_step`) and projected dual descent
  ``λ_{t+1} = Π_{[0,Λ]^m}(λ_t + η_2 (V_c^{π_t}(μ) − b))``, ``Λ`` from Slater's
  condition (:func:`slater_slack`, :func:`rltheory.bounds.constrained.slater_dual_radius`).
  The averaged optimality gap and constraint violation are ``O(1/√T)``
  (:func:`rltheory.bounds.constrained.npg_pd_bounds`), traced against the exact
  CMDP optimum of :func:`rltheory.mdp.solve_cmdp`. :func:`sample_npg_primal_dual`
  replaces ``A_L`` and ``V_c`` by unbiased Monte Carlo estimates (Ding et al. 2020, §5).
* :func:`lagrangian_policy_gradient` — the same with a softmax policy-gradient
  primal step (the "standard CMDP case" of the general-utility method).
* :func:`general_utility_primal_dual` — maximise a concave ``F(d^π)`` subject to
  convex ``G_i(d^π) ≤ b_i`` of the normalised occupancy ``d^π``: the primal step
  follows ``∇_θ[F − μ·G](d^{π_θ}) = (1−γ) ∇_θ V^{π_θ}_{r̃}`` with the shadow reward
  ``r̃ = ∇F(d) − Σ_i μ_i ∇G_i(d)`` (:func:`rltheory.mdp.utility.shadow_reward`), the dual a
  regularised projected step ``μ ← Π_{[0,Λ]}(μ + η_μ (G(d) − b − δμ))`` (Ying et al. 2023).
  Sample-based: ``d`` and ``Q_{r̃}`` estimated from roll-outs.
* :func:`two_stage_constrained_ac` — the two-stage constrained actor-critic
  (Cai et al. 2023) in tabular form: stage 1 learns a soft-optimal policy
  ``π_i`` for each cost, stage 2 maximises ``V_r`` minus KL-proximity to them.

Every routine here runs on the host (HiGHS LPs, numpy loops): a model from another host
namespace (``array_api_strict``) is copied to numpy once; device arrays raise ``TypeError``.

References
----------
Ding, D., Zhang, K., Başar, T., Jovanović, M. R. (2020). Natural policy gradient primal-dual
method for constrained Markov decision processes. NeurIPS. Algorithm 1, Theorem 1, §5.
Ying, D., Zhang, Y., Ding, Y., Koppel, A., Lavaei, J. (2023). Scalable primal-dual
actor-critic method for safe multi-agent RL with general utilities. NeurIPS.
Zhang, J., Koppel, A., Bedi, A. S., Szepesvári, C., Wang, M. (2020). Variational policy
gradient method for RL with general utilities. NeurIPS. (Shadow reward / chain rule.)
Cai, Q., Xue, Z., Zhang, C., et al. (2023). Two-stage constrained actor-critic for short
video recommendation. WWW. §3 (stage 1: auxiliary policies; stage 2: KL-regularised main policy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import highs_linprog
from .._validate import check_finite, check_real
from ..backend import array_namespace, as_float, is_numpy, require_host, to_numpy
from ..errors import InvalidModelError
from ..mdp._occupancy_lp import occupancy_constraints
from ..mdp.bellman import _check_in_range, as_stochastic_policy, evaluate_policy, occupancy_measure
from ..mdp.constrained import ConstrainedMDP, evaluate_cmdp, solve_cmdp
from ..mdp.discounted import policy_iteration
from ..mdp.model import FiniteMDP
from ..mdp.sample import _count, _rng
from ..mdp.utility import OccupancyFunction, shadow_reward, solve_general_utility
from ..trace import Trace, TraceRecorder
from .policy_gradient import _softmax_policy, npg_step, softmax_gradient
from .soft import _reachable_tol, soft_value_iteration

__all__ = [
    "PrimalDualResult",
    "slater_slack",
    "npg_pd_step",
    "npg_primal_dual",
    "sample_npg_primal_dual",
    "lagrangian_policy_gradient",
    "general_utility_primal_dual",
    "fosp_residual",
    "TwoStageResult",
    "two_stage_constrained_ac",
    "two_stage_calibrated",
]


# ------------------------------------------------------------------------- helpers
def _cmdp(
    cmdp: Any, what: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    if not isinstance(cmdp, ConstrainedMDP):
        raise TypeError(f"{what} expects a ConstrainedMDP; got {type(cmdp).__name__}")
    if cmdp.gamma is None:
        raise ValueError(f"{what} is a discounted method; the CMDP has gamma=None (average reward)")
    P = require_host(cmdp.mdp.P, what).astype(float)
    R = require_host(cmdp.mdp.R, what).astype(float)
    C = require_host(cmdp.C, what).astype(float)
    b = require_host(cmdp.b, what).astype(float)
    mu = np.asarray(to_numpy(cmdp.mdp.initial_distribution()), dtype=float)
    return P, R, C, b, mu, float(cmdp.gamma)


def _host_mdp(mdp: FiniteMDP, what: str) -> FiniteMDP:
    """``mdp`` with numpy arrays (itself when it has them): these routines mix the model with numpy
    arrays (``mdp.replace(R=...)``), which an ``array_api_strict`` model refused with "inputs come from
    different array libraries"; device arrays raise ``TypeError`` (host only)."""
    if is_numpy(array_namespace(mdp.P)):
        return mdp
    mu = None if mdp.mu is None else require_host(mdp.mu, what)
    return FiniteMDP(require_host(mdp.P, what), require_host(mdp.R, what), mdp.gamma, mu=mu)


def _host_cmdp(cmdp: Any, what: str) -> ConstrainedMDP:
    """:func:`_host_mdp` for a :class:`ConstrainedMDP` (``TypeError`` for anything else)."""
    if not isinstance(cmdp, ConstrainedMDP):
        raise TypeError(f"{what} expects a ConstrainedMDP; got {type(cmdp).__name__}")
    if is_numpy(array_namespace(cmdp.mdp.P)):
        return cmdp
    return ConstrainedMDP(
        _host_mdp(cmdp.mdp, what), require_host(cmdp.C, what), require_host(cmdp.b, what)
    )


def _theta0(theta0: Any, S: int, A: int) -> np.ndarray:
    """Initial logits: zeros, or ``theta0`` as a finite float array of shape ``(S, A)`` (a copy).

    Complex and text are refused by name (``np.array(theta0, dtype=float)`` dropped an imaginary part
    with only a ComplexWarning, and parsed text with numpy's unlocated "could not convert string")."""
    if theta0 is None:
        return np.zeros((S, A))
    theta = np.array(as_float(theta0, np, np.float64, field="theta0"), dtype=float)
    if theta.shape != (S, A):
        raise ValueError(f"theta0 must have shape (S, A) = {(S, A)}; got {theta.shape}")
    check_finite(theta, "theta0", ("s", "a"))
    return theta


def _check_delta(delta: Any) -> float:
    """The dual regularisation ``δ`` must be a finite number ``≥ 0``."""
    return check_real(delta, "delta", low=0.0)


def _positive(x: Any, name: str) -> float:
    return check_real(x, name, low=0.0, low_open=True)


def _values(
    mdp: FiniteMDP,
    rewards: np.ndarray,
    pi: np.ndarray,
    mu: np.ndarray,
    what: str,
    roles: str = "batch index 0 is the reward r, i + 1 the cost c_i",
) -> np.ndarray:
    """``V_{f_k}^π(μ)`` for a stack of rewards ``f[k, S, A]`` (one batched solve).

    Values beyond the float range are refused by :func:`rltheory.mdp.bellman._check_in_range` (inside
    :func:`evaluate_policy`), with the caller ``what`` named and the batch index read by ``roles``.
    """
    k = rewards.shape[0]
    batch = FiniteMDP(
        np.broadcast_to(np.asarray(mdp.P), (k,) + tuple(mdp.P.shape)), rewards, mdp.gamma
    )
    try:
        V = np.asarray(evaluate_policy(batch, np.broadcast_to(pi, (k,) + pi.shape)))
    except ValueError as exc:  # (pi is the routine's own policy: only the range check can refuse)
        raise ValueError(f"{what}: {exc} ({roles})") from None
    return V @ mu


@dataclass(frozen=True, eq=False)
class PrimalDualResult:
    """Result of a primal-dual driver.

    Attributes
    ----------
    policy : ndarray (S, A)
        Last primal iterate ``π_T``.
    average_policy : ndarray (S, A)
        Policy of the averaged occupancy ``(1/T) Σ_{t<T} d^{π_t}``; its values are the
        averaged values (the quantities the theorems bound).
    duals : ndarray (m,)
        Last dual iterate.
    iterations : int
    converged : None
        Fixed-budget runs (no stopping rule).
    trace : Trace
        Per-iterate metrics (see each driver).
    theta : ndarray or None
        Final logits (policy-gradient and NPG-PD drivers; ``policy = softmax(theta)``).
    reference : float
        Optimal value the gap is measured against.
    Lambda : float
        Dual projection radius used.
    """

    policy: np.ndarray
    average_policy: np.ndarray
    duals: np.ndarray
    iterations: int
    converged: None
    trace: Trace
    theta: np.ndarray | None
    reference: float
    Lambda: float


def _average_policy(d_sum: np.ndarray) -> np.ndarray:
    tot = d_sum.sum(axis=-1, keepdims=True)
    A = d_sum.shape[-1]
    return np.where(tot > 0, d_sum / np.where(tot > 0, tot, 1.0), 1.0 / A)


# ------------------------------------------------------------------------- Slater
def slater_slack(cmdp: ConstrainedMDP) -> tuple[float, np.ndarray]:
    r"""Largest uniform Slater slack ``ξ = max_π min_i (b_i − V_{c_i}^π(μ))`` and a maximiser.

    ``m = 0``: ``ξ = +∞`` (a minimum over no constraints) with the uniform policy.
    ``m = 1``: ``ξ = b − min_π V_c^π(μ)`` by policy iteration on ``−c``. ``m > 1``:
    the occupancy LP ``max t`` s.t. the flow constraints and ``⟨c_i, q⟩ ≤ b_i − t``
    (HiGHS, host only). Slater's condition holds iff ``ξ > 0``.

    Notes
    -----
    HiGHS's tolerances are absolute and it drops matrix entries below ``1e-12``, so the LP
    is solved with row ``i`` divided by ``ρ_i = max(max|c_i|, |b_i|)`` and ``t = ρ_min s``
    (``ρ_min = min_i ρ_i``; the column of ``s`` is ``ρ_min/ρ_i ≤ 1``): the same feasible set,
    solved at unit scale (as :func:`rltheory.mdp.solve_cmdp` does); ``ξ = ρ_min s*``. If HiGHS
    fails there (a negative ``ξ`` set by a row ``≥ 1e12`` times larger makes ``|s*|`` huge),
    ``t = ρ_max s`` is solved instead.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP, ConstrainedMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> xi, pi = slater_slack(ConstrainedMDP(mdp, np.array([[[0.0, 1.0]]]), np.array([1.0])))
    >>> xi, pi.tolist()
    (1.0, [[1.0, 0.0]])
    """
    cmdp = _host_cmdp(cmdp, "slater_slack")
    _, R, C, b, mu, _ = _cmdp(cmdp, "slater_slack")
    S, A = R.shape
    if (
        cmdp.m == 0
    ):  # the LP's ρ_min raised numpy's "zero-size array to reduction operation minimum"
        return math.inf, np.full((S, A), 1.0 / A)
    if cmdp.m == 1:
        sol = policy_iteration(cmdp.mdp.replace(R=-C[0]))
        pi = np.eye(A)[np.asarray(sol.policy)]
        return float(b[0] + np.asarray(sol.V) @ mu), pi
    n = S * A
    flow, mass = occupancy_constraints(cmdp.mdp, "slater_slack", normalised=False)
    A_eq = np.hstack([flow, np.zeros((S, 1))])
    # unit-scale rows (HiGHS tolerances are absolute): costs of size 1e-12 gave ξ off by a factor
    # up to 5, and a positive ξ (Slater "holds") for a CMDP whose exact ξ is negative
    rho = np.maximum(np.max(np.abs(C.reshape(cmdp.m, n)), axis=1), np.abs(b))
    rho = np.where(rho > 0, rho, 1.0)
    c = np.zeros(n + 1)
    c[-1] = -1.0
    # t = unit·s: unit = ρ_min resolves a small positive ξ set by the smallest row; when ξ < 0 is
    # set by a row ≥ 1e12 times larger, s = ξ/ρ_min leaves HiGHS's range and unit = ρ_max is tried
    for unit in dict.fromkeys((float(rho.min()), float(rho.max()))):
        A_ub = np.hstack([C.reshape(cmdp.m, n) / rho[:, None], (unit / rho)[:, None]])
        res = highs_linprog(
            c,
            A_ub=A_ub,
            b_ub=b / rho,
            A_eq=A_eq,
            b_eq=mass,
            bounds=[(0, None)] * n + [(None, None)],
            method="highs",
        )
        if res.status == 0:
            break
    if res.status != 0:
        from ..errors import SolverError  # noqa: PLC0415

        raise SolverError(f"slater_slack LP failed: {res.message}", res.status)
    q = np.maximum(res.x[:n].reshape(S, A), 0.0)
    return unit * float(res.x[-1]), _average_policy(q)


def _slater_culprits(cmdp: ConstrainedMDP) -> str:
    """Where Slater's condition fails: each constraint that no policy satisfies strictly on its own
    (``min_π V_{c_i}^π(μ) ≥ b_i``: infeasible if ``>``, tight if ``=``), or the constraints jointly."""
    mu = np.asarray(to_numpy(cmdp.mdp.initial_distribution()), dtype=float)
    parts = []
    for i in range(cmdp.m):
        low = 0.0 - float(
            np.asarray(policy_iteration(cmdp.mdp.replace(R=-cmdp.C[i])).V) @ mu
        )  # no "-0"
        b_i = float(np.asarray(to_numpy(cmdp.b))[i])
        if not low < b_i:
            kind = "infeasible" if low > b_i else "tight"
            parts.append(
                f"constraint {i} is {kind}: min_pi V_c{i}(mu) = {low:.6g} >= b[{i}] = {b_i:.6g}"
            )
    return (
        "; ".join(parts)
        if parts
        else "each constraint holds strictly alone, but no policy satisfies all strictly"
    )


def _lambda_radius(cmdp: ConstrainedMDP, R: np.ndarray, g: float, Lambda: float | None) -> float:
    if Lambda is not None:
        return _positive(Lambda, "Lambda")
    if cmdp.m == 0:  # no multiplier: the box [0, Λ]^0 is the same for every Λ
        return 1.0
    xi, _ = slater_slack(cmdp)
    if not xi > 0:
        raise InvalidModelError(
            f"Slater's condition fails (max_pi min_i b_i - V_ci = {xi + 0.0:.6g} <= 0): {_slater_culprits(cmdp)}; "
            "give Lambda explicitly"
        )
    span = float(R.max() - R.min())
    return 2.0 * max(span, 1e-12) / ((1.0 - g) * xi)


# ------------------------------------------------------------------------- NPG-PD
def npg_pd_step(
    cmdp: ConstrainedMDP, pi: Any, lam: Any, *, eta1: float, eta2: float, Lambda: float
) -> tuple[Any, np.ndarray]:
    r"""One NPG-PD step: ``π' ∝ π exp(η_1 A_L^π/(1−γ))``, ``λ' = Π_{[0,Λ]^m}(λ + η_2 (V_c^π(μ) − b))``.

    ``A_L`` is the advantage of the Lagrangian reward ``r − λ·c`` under ``π``;
    both updates use the current ``(π, λ)`` (simultaneous, as in Ding et al. 2020, eq. (9)).
    An entry of ``π`` that is 0 stays 0 (:func:`~rltheory.algorithms.npg_step`); the drivers
    iterate the same map on logits, where an underflowed probability is not absorbing.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP, ConstrainedMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> cmdp = ConstrainedMDP(mdp, np.array([[[0.0, 1.0]]]), np.array([0.25]))
    >>> pi, lam = npg_pd_step(cmdp, np.full((1, 2), 0.5), np.array([0.0]), eta1=1.0, eta2=1.0, Lambda=10.0)
    >>> lam.tolist()   # V_c = 1/2 > 1/4: the multiplier rises by 1/4
    [0.25]
    """
    cmdp = _host_cmdp(cmdp, "npg_pd_step")
    P, R, C, b, mu, g = _cmdp(cmdp, "npg_pd_step")
    e1, e2, Lam = _positive(eta1, "eta1"), _positive(eta2, "eta2"), _positive(Lambda, "Lambda")
    lam = _duals(lam, cmdp.m)
    # validated here (a complex pi lost its imaginary part with only a warning, and npg_step's own
    # errors came out under the Lagrangian-reward note below)
    if not isinstance(pi, (list, tuple)) and np.asarray(to_numpy(pi)).dtype.kind in "cUS":
        as_float(pi, np, field="pi")  # refused by name (as_stochastic_policy says "input")
    pi = np.asarray(to_numpy(as_stochastic_policy(cmdp.mdp, pi)), dtype=float)
    RL = R - np.tensordot(lam, C, axes=(0, 0))
    try:
        pi_next = npg_step(cmdp.mdp.replace(R=RL), pi, eta=e1)
    except (
        ValueError
    ) as exc:  # (validated inputs: only the range check of the Lagrangian values can refuse)
        raise ValueError(f"npg_pd_step: {exc} (the Lagrangian reward r − λ·c)") from None
    Vc = _values(cmdp.mdp, C, pi, mu, "npg_pd_step", "batch index i is the cost c_i")
    return pi_next, np.clip(lam + e2 * (Vc - b), 0.0, Lam)


def _duals(lam: Any, m: int) -> np.ndarray:
    """``λ`` as a float vector of shape ``(m,)`` with finite entries ``≥ 0``; a located ``ValueError``
    otherwise (bools are not multipliers: ``[True]`` was read as ``λ = 1``)."""
    rule = f"lam must be a finite non-negative vector of shape (m,) = ({m},)"
    raw = np.asarray(to_numpy(lam))
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{rule}; got an array of dtype {raw.dtype.name}")
    x = raw.astype(float)
    if x.shape != (m,):
        raise ValueError(f"{rule}; got shape {x.shape}")
    bad = ~np.isfinite(x) | (x < 0)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{rule}; lam[{i}] = {float(x[i])!r}")
    return x


def _lagrangian_advantage(
    cmdp: ConstrainedMDP,
    P: np.ndarray,
    R: np.ndarray,
    C: np.ndarray,
    pi: np.ndarray,
    lam: np.ndarray,
    g: float,
    what: str,
) -> np.ndarray:
    """``A_L^π = Q_L^π − V_L^π`` of the Lagrangian reward ``r_L = r − λ·c`` (every action, in or out of
    the support of ``π``)."""
    RL = R - np.tensordot(lam, C, axes=(0, 0))
    V = _values(cmdp.mdp, RL[None], pi, np.eye(P.shape[0]), what, "the Lagrangian reward r − λ·c")[
        0
    ]
    return RL + g * (P @ V) - V[:, None]


def _reference(cmdp: ConstrainedMDP, reference: float | None) -> float:
    if reference is not None:
        return check_real(reference, "reference")
    return float(solve_cmdp(cmdp).value)


def _npg_pd_setup(
    cmdp: ConstrainedMDP,
    T: int,
    eta1: float | None,
    eta2: float | None,
    Lambda: float | None,
    reference: float | None,
) -> tuple[float, float, float, float]:
    """Default steps (Ding et al. 2020, Thm 1), Slater radius and the LP reference of an NPG-PD run."""
    from ..bounds.constrained import npg_pd_step_sizes  # noqa: PLC0415

    R = require_host(cmdp.mdp.R, "npg_primal_dual")
    d1, d2 = npg_pd_step_sizes(T, gamma=float(cmdp.gamma), n_actions=cmdp.A)
    e1 = _positive(d1 if eta1 is None else eta1, "eta1")
    e2 = _positive(d2 if eta2 is None else eta2, "eta2")
    return e1, e2, _lambda_radius(cmdp, R, float(cmdp.gamma), Lambda), _reference(cmdp, reference)


def _record_pd(
    rec: TraceRecorder,
    t: int,
    vals: np.ndarray,
    avgs: list,
    b: np.ndarray,
    Vstar: float,
    lam: np.ndarray,
) -> None:
    """Record iterate ``t`` (1-based) of an NPG-PD run: values ``vals = [V_r, V_c...]`` of ``π_{t−1}``,
    running averages ``avgs = [avg V_r, avg V_c]`` updated in place.

    The averages are updated as ``a += (v − a)/t``: running sums overflowed where the values did not
    (costs 2e307 at γ = 0.9: ``V_c ≈ 1.4e308`` twice made ``avg_violation`` inf, with overflow warnings).
    """
    avgs[0] += (vals[0] - avgs[0]) / t
    avgs[1] = avgs[1] + (vals[1:] - avgs[1]) / t
    rec.record(
        t,
        gap=Vstar - vals[0],
        violation=float(
            np.max(np.maximum(vals[1:] - b, 0.0), initial=0.0)
        ),  # 0 with no constraint (m = 0)
        avg_gap=Vstar - avgs[0],
        avg_violation=float(np.max(np.maximum(avgs[1] - b, 0.0), initial=0.0)),
        lam_norm=float(lam.sum()),
    )


def _logit_step(
    cmdp: ConstrainedMDP, theta: np.ndarray, AL: np.ndarray, eta1: float, what: str
) -> np.ndarray:
    """``θ + η_1 A_L/(1−γ)``, shifted so that each row's maximum is 0 and floored at ``−max/2``.

    A step beyond the float range is refused by :func:`rltheory.mdp.bellman._check_in_range` (rewards
    1e307 at γ = 0.9 made it ``inf``, the shifted logits NaN, and the driver failed with "pi must be
    finite; pi(s=2, a=0) = nan"). The floor changes no probability (``exp(−max/2)`` is 0, as is that of
    anything below it) and keeps ``θ + step`` from overflowing to ``−inf``, which would be absorbing.
    """
    g = float(cmdp.gamma)
    with np.errstate(over="ignore", invalid="ignore"):
        step = eta1 * AL / (1.0 - g)
    _check_in_range(
        cmdp.mdp,
        step,
        what,
        "the logit step eta1 A_L/(1-gamma)",
        ("s", "a"),
        lambda M: f"at gamma = {g:g}, eta1 = {eta1:g} (|A_L| <= 2 max|r - lam·c|/(1-gamma))",
    )
    floor = -0.5 * float(np.finfo(np.float64).max)
    with np.errstate(over="ignore"):
        theta = np.maximum(theta + step, floor)
    return np.maximum(theta - theta.max(axis=-1, keepdims=True), floor)


def npg_primal_dual(
    cmdp: ConstrainedMDP,
    *,
    iterations: int,
    eta1: float | None = None,
    eta2: float | None = None,
    Lambda: float | None = None,
    reference: float | None = None,
) -> PrimalDualResult:
    r"""Exact NPG primal-dual (Ding et al. 2020, Algorithm 1) from the uniform policy and ``λ_0 = 0``.

    Parameters
    ----------
    cmdp : ConstrainedMDP
        Discounted CMDP satisfying Slater's condition (unless ``Lambda`` is given).
    iterations : int
        ``T``.
    eta1, eta2 : float, optional
        Steps; default :func:`rltheory.bounds.constrained.npg_pd_step_sizes`
        (``η_1 = 2 log|A|``, ``η_2 = 2(1−γ)/√T``).
    Lambda : float, optional
        Dual radius; default ``2 span(r)/((1−γ)ξ)`` with ``ξ`` from :func:`slater_slack`
        (``1`` for ``m = 0``, where there is no multiplier, any ``Λ`` is inert and the method is
        NPG on ``r``).
    reference : float, optional
        ``V_r*(μ)``; default :func:`rltheory.mdp.solve_cmdp`.

    Returns
    -------
    PrimalDualResult
        Trace (``t = 1..T``, averages over ``π_0..π_{t−1}``): ``gap`` (``V* − V_r^{π_{t−1}}``),
        ``violation`` (``max_i [V_{c_i}^{π_{t−1}} − b_i]_+``), ``avg_gap``,
        ``avg_violation`` (``max_i [avg V_{c_i} − b_i]_+``), ``lam_norm`` (``‖λ_{t−1}‖₁``).

    Notes
    -----
    Theorem (Ding et al. 2020, Thm 1; constants re-derived in
    :func:`rltheory.bounds.constrained.npg_pd_bounds`): with ``η_2 ∝ 1/√T`` the
    averaged gap and violation are ``O(1/((1−γ)^2 √T))`` and ``O(1/((1−γ)^2 ξ √T))``,
    independent of ``S`` and ``A`` (apart from ``log|A|``). The last iterate need not converge.

    The iterate is carried as logits, as in Ding et al.'s Algorithm 1:
    ``θ_{t+1} = θ_t + η_1 A_L^{π_t}/(1−γ)``, ``π_t = softmax(θ_t)`` — the recursion of
    :func:`npg_pd_step` (``π' ∝ π exp(η_1 A_L/(1−γ))``), but a probability that underflows to 0
    (reward or cost gaps of ``~10³/(η_1)`` per step) is not absorbing: ``θ`` keeps it and a later
    ``λ`` can move the policy back. ``theta`` of the result holds the final logits.
    """
    cmdp = _host_cmdp(cmdp, "npg_primal_dual")
    P, R, C, b, mu, g = _cmdp(cmdp, "npg_primal_dual")
    T = _count(iterations, "iterations")
    S, A = R.shape
    eta1, eta2, Lam, Vstar = _npg_pd_setup(cmdp, T, eta1, eta2, Lambda, reference)
    theta = np.zeros((S, A))
    pi = np.full((S, A), 1.0 / A)
    lam = np.zeros(cmdp.m)
    rec = TraceRecorder()
    d_sum = np.zeros((S, A))
    avgs = [0.0, np.zeros(cmdp.m)]
    for t in range(T):
        d_sum += np.asarray(occupancy_measure(cmdp.mdp, pi))
        vals = _values(cmdp.mdp, np.concatenate([R[None], C]), pi, mu, "npg_primal_dual")
        _record_pd(rec, t + 1, vals, avgs, b, Vstar, lam)
        # npg_pd_step's recursion on the logits (Ding et al. 2020, Algorithm 1: θ += η_1 A_L/(1−γ),
        # π = softmax θ): the multiplicative π' ∝ π exp(·) keeps an entry that underflowed to 0 at 0
        # for ever, so once λ grew no step could move back to a cheap action
        theta = _logit_step(
            cmdp,
            theta,
            _lagrangian_advantage(cmdp, P, R, C, pi, lam, g, "npg_primal_dual"),
            eta1,
            "npg_primal_dual",
        )
        lam = np.clip(lam + eta2 * (vals[1:] - b), 0.0, Lam)
        pi = np.asarray(_softmax_policy(theta))
    return PrimalDualResult(
        pi, _average_policy(d_sum), lam, T, None, rec.finish(), theta, Vstar, Lam
    )


# ---------------------------------------------------------- Monte Carlo estimates
def _mc_q(
    P: np.ndarray, F: np.ndarray, pi: np.ndarray, g: float, n: int, gen: np.random.Generator
) -> np.ndarray:
    r"""Unbiased ``Q̂_f(s, a)`` for each reward ``f[k, S, A]``: ``n`` roll-outs per ``(s, a)`` of
    geometric length ``H ~ Geom(1−γ)`` (``P(H ≥ t) = γ^t``), summing undiscounted rewards
    ``Σ_{t≤H} f(s_t, a_t)``, whose mean is ``Q_f(s, a)``."""
    k, S, A = F.shape
    # summed in units of 2^e ≥ max|f| (exact): a roll-out's sum of rewards 1e307 overflowed after ~18
    # steps although Q_f = 1e308 is in range
    e = np.frexp(np.max(np.abs(F), axis=(1, 2), initial=0.0))[1][:, None]
    F = np.ldexp(F, -e[:, :, None])
    s = np.repeat(np.arange(S), A * n)
    a = np.tile(np.repeat(np.arange(A), n), S)
    tot = np.zeros((k, S * A * n))
    alive = np.ones(S * A * n, dtype=bool)
    cP = np.cumsum(P, axis=-1)
    cpi = np.cumsum(pi, axis=-1)
    while alive.any():
        idx = np.flatnonzero(alive)
        tot[:, idx] += F[:, s[idx], a[idx]]
        stop = gen.random(idx.size) >= g
        alive[idx[stop]] = False
        idx = idx[~stop]
        if idx.size == 0:
            break
        u = gen.random(idx.size)
        s[idx] = np.minimum((cP[s[idx], a[idx]] < u[:, None]).sum(-1), S - 1)
        u = gen.random(idx.size)
        a[idx] = np.minimum((cpi[s[idx]] < u[:, None]).sum(-1), A - 1)
    with np.errstate(
        over="ignore"
    ):  # (a mean beyond the range is inf: the caller's range check refuses it)
        return np.ldexp(tot.reshape(k, S, A, n).mean(axis=-1), e[:, :, None])


def _draw_rows(cdf: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """One draw per row of a row-wise CDF (inverse-CDF sampling)."""
    u = gen.random(cdf.shape[0])
    return np.minimum((cdf < u[:, None]).sum(-1), cdf.shape[-1] - 1)


def _mc_occupancy(
    P: np.ndarray, pi: np.ndarray, mu: np.ndarray, g: float, n: int, gen: np.random.Generator
) -> np.ndarray:
    r"""Unbiased normalised occupancy ``d̂(s, a) = (1−γ)/n Σ_e Σ_{t≤H_e} 1[(s_t, a_t) = (s, a)]``
    from ``n`` roll-outs ``s_0 ~ μ`` of geometric length (``P(H ≥ t) = γ^t``)."""
    S, A = pi.shape
    cP, cpi = np.cumsum(P, axis=-1), np.cumsum(pi, axis=-1)
    s = _draw_rows(np.broadcast_to(np.cumsum(mu), (n, S)), gen)
    a = _draw_rows(cpi[s], gen)
    counts = np.zeros(S * A)
    alive = np.arange(n)
    while alive.size:
        np.add.at(counts, s[alive] * A + a[alive], 1.0)
        alive = alive[gen.random(alive.size) < g]
        if alive.size:
            s[alive] = _draw_rows(cP[s[alive], a[alive]], gen)
            a[alive] = _draw_rows(cpi[s[alive]], gen)
    return (1.0 - g) * counts.reshape(S, A) / n


def sample_npg_primal_dual(
    cmdp: ConstrainedMDP,
    *,
    iterations: int,
    rollouts: int,
    rng: np.random.Generator | int,
    eta1: float | None = None,
    eta2: float | None = None,
    Lambda: float | None = None,
    reference: float | None = None,
) -> PrimalDualResult:
    r"""Sample-based NPG-PD (Ding et al. 2020, §5): ``A_L`` and ``V_c`` from unbiased roll-outs.

    Each iteration draws ``rollouts`` geometric-horizon roll-outs per ``(s, a)``
    (:func:`_mc_q`) for the reward and every cost, forms ``Q̂_L = Q̂_r − λ·Q̂_c``,
    ``Â_L = Q̂_L − Σ_a π Q̂_L`` and ``V̂_c(μ) = Σ_s μ(s) Σ_a π(a|s) Q̂_c(s, a)``, then
    takes the NPG-PD step with these estimates (on the logits, as :func:`npg_primal_dual`).
    The trace is the exact one of :func:`npg_primal_dual` (values of the iterates, not of the estimates).

    Notes
    -----
    With ``K`` unbiased roll-outs per pair the estimates have variance
    ``O(1/(K(1−γ)^2))``; Ding et al. (2020, Thm 3) show the averaged gap and
    violation then stay ``O(1/√T)`` up to an additive ``O(1/√K)`` statistical term.
    """
    cmdp = _host_cmdp(cmdp, "sample_npg_primal_dual")
    P, R, C, b, mu, g = _cmdp(cmdp, "sample_npg_primal_dual")
    T = _count(iterations, "iterations")
    K = _count(rollouts, "rollouts")
    gen = _rng(rng)
    S, A = R.shape
    e1, e2, Lam, Vstar = _npg_pd_setup(cmdp, T, eta1, eta2, Lambda, reference)
    theta = np.zeros((S, A))
    pi = np.full((S, A), 1.0 / A)
    lam = np.zeros(cmdp.m)
    rec = TraceRecorder()
    d_sum = np.zeros((S, A))
    avgs = [0.0, np.zeros(cmdp.m)]
    F = np.concatenate([R[None], C])
    for t in range(T):
        d_sum += np.asarray(occupancy_measure(cmdp.mdp, pi))
        _record_pd(
            rec, t + 1, _values(cmdp.mdp, F, pi, mu, "sample_npg_primal_dual"), avgs, b, Vstar, lam
        )
        Qh = _mc_q(P, F, pi, g, K, gen)
        QL = Qh[0] - np.tensordot(lam, Qh[1:], axes=(0, 0))
        AL = QL - (pi * QL).sum(-1, keepdims=True)
        Vc = ((pi[None] * Qh[1:]).sum(-1)) @ mu
        theta = _logit_step(
            cmdp, theta, AL, e1, "sample_npg_primal_dual"
        )  # as npg_primal_dual (no absorbing zeros)
        pi = np.asarray(_softmax_policy(theta))
        lam = np.clip(lam + e2 * (Vc - b), 0.0, Lam)
    return PrimalDualResult(
        pi, _average_policy(d_sum), lam, T, None, rec.finish(), theta, Vstar, Lam
    )


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
        Sample-based mode.

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


# ------------------------------------------------------------------- two-stage AC
@dataclass(frozen=True, eq=False)
class TwoStageResult:
    """Result of :func:`two_stage_constrained_ac`.

    Attributes
    ----------
    policy : ndarray (S, A)
        Stage-2 policy.
    auxiliary : ndarray (m, S, A)
        Stage-1 policies ``π_i``.
    value : float
        ``V_r^π(μ)``.
    costs : ndarray (m,)
        ``V_{c_i}^π(μ)``.
    weights : ndarray (m,)
        KL weights used.
    """

    policy: np.ndarray
    auxiliary: np.ndarray
    value: float
    costs: np.ndarray
    weights: np.ndarray


def two_stage_constrained_ac(
    cmdp: ConstrainedMDP, *, weights: Any, tau: float = 0.1, tol: float | None = None
) -> TwoStageResult:
    r"""Two-stage constrained actor-critic (Cai et al. 2023) in tabular form.

    Stage 1: for each cost ``c_i``, the soft-optimal policy ``π_i`` of the reward
    ``−c_i`` at temperature ``τ`` (:func:`rltheory.algorithms.soft.soft_value_iteration`)
    — the auxiliary policy that keeps that cost low. Stage 2: maximise

    ``E[Σ_t γ^t (r(s_t, a_t) − Σ_i w_i KL(π(·|s_t) ‖ π_i(·|s_t)))]``,

    i.e. the soft MDP with reward ``r + Σ_i w_i log π_i`` and temperature
    ``W = Σ_i w_i``, solved exactly by soft value iteration; its optimum is
    ``π(a|s) ∝ Π_i π_i(a|s)^{w_i/W} exp(Q(s,a)/W)``, the closed form of the
    paper's stage-2 actor with its critic at the fixed point.

    Notes
    -----
    A heuristic: the weights trade the main return against proximity to the
    auxiliary policies, never against the thresholds ``b`` themselves, so the
    result is feasible only for large enough weights and is in general dominated
    by the LP optimum at the same cost (checked by the ``two-stage-vs-pd`` experiment).

    ``tol`` is the certified accuracy of each soft value iteration; by default ``1e-10``, or the
    smallest target above soft VI's round-off floor where that is larger (large weights make the
    stage-2 reward large).
    """
    cmdp = _host_cmdp(cmdp, "two_stage_constrained_ac")
    P, R, C, b, mu, g = _cmdp(cmdp, "two_stage_constrained_ac")
    # as_float refuses complex and text by name (numpy's unlocated "float() argument must be ... not
    # 'complex'"); the shape is (m,) exactly (a reshape accepted [[1.0]] for m = 1)
    rule = f"weights must be {cmdp.m} finite non-negative numbers with a positive sum (shape ({cmdp.m},))"
    if np.asarray(weights).dtype == bool:
        raise ValueError(f"{rule}; got booleans {weights!r}")
    w = np.asarray(as_float(weights, np, np.float64, field="weights"), dtype=float)
    if w.shape != (cmdp.m,):
        raise ValueError(f"{rule}; got shape {w.shape}")
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        raise ValueError(f"{rule}; weights[{bad[0]}] = {w[bad[0]]}")
    if not w.sum() > 0:
        raise ValueError(f"{rule}; got {weights!r}")
    t = _positive(tau, "tau")
    tol = check_real(tol, "tol", low=0.0, low_open=True, allow_none=True)

    def solve(mdp: Any, temp: float, stage: str) -> Any:
        # soft values satisfy |Q| <= (max|r| + τ log A)/(1 − γ); beyond the float range soft VI can certify
        # nothing (its round-off floor is inf), and the default tol was refused as "tol must be a positive
        # finite number; got inf", naming an argument the caller did not pass
        with np.errstate(over="ignore"):
            bound = (float(np.max(np.abs(np.asarray(mdp.R)))) + temp * math.log(cmdp.A)) / (1.0 - g)
        _check_in_range(
            mdp,
            np.asarray(bound),
            "two_stage_constrained_ac",
            f"the soft-value bound of {stage}",
            (),
            lambda M: (
                f"at gamma = {g:g}, temperature {temp:g} (|Q| <= (max|R| + tau log A)/(1-gamma));"
                " soft values scale with R, tau and the weights together"
            ),
        )
        # default: 1e-10, or the smallest target above soft VI's round-off floor where that is larger
        # (stage 2's reward r + Σ w_i log π_i reaches |log π_i| ~ 1e2 and more: a fixed 1e-10 sat
        # below the floor at γ ≥ 0.99 and every solve ended with a ConvergenceWarning)
        return soft_value_iteration(
            mdp, tau=temp, tol=_reachable_tol(mdp, temp, 1e-10) if tol is None else tol
        )

    stage1 = [
        solve(cmdp.mdp.replace(R=-C[i]), t, f"stage 1 (reward -c_{i})") for i in range(cmdp.m)
    ]
    aux = np.stack([np.asarray(s1.policy) for s1 in stage1])
    W = float(w.sum())
    # log π_i = (Q_i − V_i)/τ exactly: np.log(π_i) was −inf where π_i underflowed (costs of span
    # ~1e3 at τ = 0.1), and stage 2 failed with "R must be finite; R(s=0, a=1) = -inf"
    logp = np.tensordot(w, np.stack([np.asarray(s1.log_policy) for s1 in stage1]), axes=(0, 0))
    sol = solve(cmdp.mdp.replace(R=R + logp), W, "stage 2 (reward r + Σ_i w_i log π_i)")
    pi = np.asarray(sol.policy)
    value, costs = evaluate_cmdp(cmdp, pi)
    return TwoStageResult(pi, aux, float(value), np.asarray(to_numpy(costs), dtype=float), w)


def two_stage_calibrated(
    cmdp: ConstrainedMDP, *, tau: float = 0.1, w_max: float = 1e3, bisections: int = 40
) -> TwoStageResult:
    r"""Two-stage AC with the smallest common weight ``w·1`` that makes every constraint hold (bisection).

    Raises
    ------
    ValueError
        ``tau`` or ``w_max`` not a finite number ``> 0``, ``bisections`` not an integer
        ``≥ 1`` (all checked before the first solve); even ``w_max`` leaves a constraint
        violated.
    """
    cmdp = _host_cmdp(cmdp, "two_stage_calibrated")
    _cmdp(cmdp, "two_stage_calibrated")
    tau = _positive(tau, "tau")
    w_max = _positive(w_max, "w_max")
    bisections = _count(bisections, "bisections")
    b = np.asarray(to_numpy(cmdp.b), dtype=float)
    hi = two_stage_constrained_ac(cmdp, weights=np.full(cmdp.m, w_max), tau=tau)
    if np.any(hi.costs > b):
        raise ValueError(
            f"two-stage AC with weight {w_max} still violates the constraints (costs {hi.costs}, b {b})"
        )
    lo_w, hi_w = 0.0, w_max
    best = hi
    for _ in range(bisections):
        mid = 0.5 * (lo_w + hi_w)
        res = two_stage_constrained_ac(cmdp, weights=np.full(cmdp.m, mid), tau=tau)
        if np.all(res.costs <= b):
            hi_w, best = mid, res
        else:
            lo_w = mid
    return best
