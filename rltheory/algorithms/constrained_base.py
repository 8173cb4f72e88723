r"""Shared pieces of the CMDP primal-dual methods: host copies of the model, the result, Slater's condition.

* :class:`PrimalDualResult` — what every primal-dual driver returns (last and averaged
  policy, multipliers, trace against the exact optimum).
* :func:`slater_slack` — the largest uniform Slater slack ``ξ = max_π min_i (b_i − V_{c_i}^π(μ))``
  (policy iteration for ``m = 1``, the occupancy LP otherwise), and the dual radius
  ``Λ = 2 span(r)/((1−γ)ξ)`` it gives (Paternain et al. 2019; Ding et al. 2020, Lemma 3;
  :func:`rltheory.bounds.constrained.slater_dual_radius`).
* helpers: the model as numpy (these routines run on the host), validated step sizes, dual
  regularisation and initial logits, exact values of a stack of rewards, the LP reference
  :func:`rltheory.mdp.solve_cmdp`.

References
----------
Ding, D., Zhang, K., Başar, T., Jovanović, M. R. (2020). Natural policy gradient primal-dual
method for constrained Markov decision processes. NeurIPS. Lemma 3.
Paternain, S., Chamon, L., Calvo-Fullana, M. & Ribeiro, A. (2019). Constrained
reinforcement learning has zero duality gap. NeurIPS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import highs_linprog
from .._validate import check_finite, check_real
from ..backend import array_namespace, as_float, is_numpy, require_host, to_numpy
from ..errors import InvalidModelError
from ..mdp._occupancy_lp import occupancy_constraints
from ..mdp.bellman import evaluate_policy
from ..mdp.constrained import ConstrainedMDP, solve_cmdp
from ..mdp.discounted import policy_iteration
from ..mdp.model import FiniteMDP
from ..trace import Trace

__all__ = ["PrimalDualResult", "slater_slack"]


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


def _reference(cmdp: ConstrainedMDP, reference: float | None) -> float:
    if reference is not None:
        return check_real(reference, "reference")
    return float(solve_cmdp(cmdp).value)
