r"""General utilities: concave objectives and convex constraints of the occupancy measure.

The reinforcement-learning problem with *general utilities* is

    max_{d ∈ 𝒟} F(d)   subject to   G_i(d) ≤ b_i,  i = 1..m,

over the occupancy polytope 𝒟 of normalised state-action occupancies
``d(s,a) = (1−γ) Σ_t γ^t Pr(s_t = s, a_t = a)`` — the set of ``d ≥ 0`` with
``Σ_a d(j,a) = (1−γ) μ(j) + γ Σ_{s,a} P(j|s,a) d(s,a)`` — or, for average reward
(``gamma=None``), of stationary frequencies (``Σ_a x(j,a) = Σ P(j|s,a) x(s,a)``,
``Σ x = 1``). ``F`` concave and ``G_i`` convex make this a convex program, solved
here with cvxpy (Zhang, Koppel, Bedi, Szepesvári & Wang 2020; Ying et al. 2023 for the
primal-dual actor-critic setting with constraints). Linear ``F(d) = ⟨r, d⟩`` is
standard RL: ``max F = (1−γ) V*(μ)``.

The *shadow reward* ``r̃ = ∇F(d)`` turns the nonlinear problem into a sequence of
ordinary MDPs: by concavity ``d*`` is optimal iff it maximises the linear reward
``⟨∇F(d*) − Σ_i λ_i ∇G_i(d*), d⟩`` over 𝒟 (first-order optimality; Zhang et al. 2020,
§3). Primal-dual algorithms use exactly this reward.

Built-in utilities (each carries its cvxpy expression, value and gradient):
:func:`linear_utility`, :func:`entropy_utility` (exploration), :func:`neg_kl_utility`
(imitation, ``−KL(d‖d_E)``), :func:`kl_divergence` (a convex constraint),
:func:`quadratic_utility` (a quadratic risk / concentration penalty).

Host only (cvxpy); device arrays raise ``TypeError``.

Modules: :mod:`~rltheory.mdp.utility_functions` (the utilities and the shadow reward),
:mod:`~rltheory.mdp.utility_kkt` (the KKT certificate); the program, its scaling and Slater check
are here, and every public name is importable from here.

References
----------
Zhang, J., Koppel, A., Bedi, A. S., Szepesvári, C. & Wang, M. (2020). Variational policy
gradient method for reinforcement learning with general utilities. NeurIPS.
Hazan, E., Kakade, S., Singh, K. & Van Soest, A. (2019). Provably efficient maximum
entropy exploration. ICML.
Ying, D. et al. (2023). Scalable primal-dual actor-critic method for safe multi-agent RL
with general utilities. NeurIPS.
Boyd, S. & Vandenberghe, L. (2004). *Convex Optimization*. §5.5.3 (KKT conditions).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import real_scalar
from ..backend import to_numpy
from ..errors import InvalidModelError, SolverError
from ._occupancy_lp import occupancy_constraints
from .mixing import _structures
from .model import FiniteMDP
from .structure import require_weakly_communicating
from .utility_dual import _feasible_value
from .utility_functions import (
    OccupancyFunction,
    entropy_utility,
    kl_divergence,
    linear_utility,
    neg_kl_utility,
    quadratic_utility,
    shadow_reward,
)
from .utility_kkt import _certify, _polish

__all__ = [
    "OccupancyFunction",
    "GeneralUtilitySolution",
    "linear_utility",
    "entropy_utility",
    "neg_kl_utility",
    "kl_divergence",
    "quadratic_utility",
    "shadow_reward",
    "solve_general_utility",
]


@dataclass(frozen=True, eq=False)
class GeneralUtilitySolution:
    """Optimum of a general-utility program.

    Attributes
    ----------
    occupancy : numpy.ndarray (S, A)
        Optimal normalised occupancy ``d*`` (clipped at 0).
    policy : numpy.ndarray (S, A)
        ``d*(s,a)/Σ_b d*(s,b)``; uniform on states whose mass ``Σ_b d*(s,b)`` is at most 1e-9
        (counted as unvisited, as in the average-reward recurrence check).
    value : float
        ``F(d*)``.
    value_bound : float
        An upper bound on the optimum ``F*`` by weak duality (valid for any multipliers, with no
        constraint qualification; :func:`~rltheory.mdp.utility_dual._dual_bound`), up to an
        allowance for rounding that it includes; ``inf`` where it could not be evaluated.
    constraint_values : numpy.ndarray (m,)
        ``G_i(d*)``.
    duals : numpy.ndarray (m,)
        Multipliers ``λ_i ≥ 0`` of ``G_i ≤ b_i``.
    shadow_reward : numpy.ndarray (S, A)
        ``∇F(d*)``.
    lagrangian_reward : numpy.ndarray (S, A)
        ``∇F(d*) − Σ_i λ_i ∇G_i(d*)``: ``d*`` is an optimal occupancy of the ordinary MDP
        with this reward.
    kkt_residual : float
        Largest violation among stationarity, primal/dual feasibility and
        complementary slackness, and the weak-duality gap ``(value_bound − value)/ρ``, so that
        ``F* − value ≤ ρ·kkt_residual`` (see :func:`solve_general_utility`); ``inf`` where
        Slater's condition fails (``slater_slack <= SLATER_TOL``), since then it certifies nothing.
    status : str
        cvxpy's status.
    slater_slack : float
        ``ξ = max_{d ∈ 𝒟} min_i (b_i − G_i(d))/ρ_i`` over the non-affine constraints, in their unit
        scales (capped at 1; ``inf`` when every constraint is affine, where no strict feasibility is
        needed). Slater's condition holds iff ``ξ > 0``.
    value_lower_bound : float
        ``F`` at an occupancy that meets every constraint (the exact occupancy of ``policy``, mixed
        with the Slater program's point where ``policy`` overshoots a ``G_i``;
        :func:`~rltheory.mdp.utility_dual._feasible_value`), so ``value_lower_bound ≤ F* ≤ value_bound``
        up to rounding; ``−inf`` for average reward or where no such point was found.
    """

    occupancy: np.ndarray
    policy: np.ndarray
    value: float
    value_bound: float
    constraint_values: np.ndarray
    duals: np.ndarray
    shadow_reward: np.ndarray
    lagrangian_reward: np.ndarray
    kkt_residual: float
    status: str
    slater_slack: float = math.inf
    value_lower_bound: float = -math.inf


def _clarabel_tolerances(e: int) -> dict[str, float]:
    """CLARABEL gap/feasibility tolerances ``10^-e`` (its defaults are 1e-8)."""
    t = 10.0**-e
    return {"tol_gap_abs": t, "tol_gap_rel": t, "tol_feas": t, "tol_ktratio": 100 * t}


def _flow(mdp: FiniteMDP) -> tuple[np.ndarray, np.ndarray]:
    return occupancy_constraints(mdp, "solve_general_utility")


def solve_general_utility(
    mdp: FiniteMDP,
    objective: OccupancyFunction,
    constraints: Sequence[tuple[OccupancyFunction, float]] = (),
    *,
    solver: str | None = None,
    solver_options: dict[str, Any] | None = None,
) -> GeneralUtilitySolution:
    r"""``max_{d ∈ 𝒟} F(d)  s.t.  G_i(d) ≤ b_i`` over the occupancy polytope, with cvxpy.

    KKT certificate (Boyd & Vandenberghe 2004, §5.5.3). With the cvxpy multipliers
    ``ν`` of the flow equalities ``M d = c`` and ``λ ≥ 0`` of the ``G_i``, and the reduced
    gradient ``g = ∇F(d) − Σ_i λ_i ∇G_i(d) − Mᵀν``, optimality of a concave program is

        d ≥ 0,   g ≤ 0,   g ⊙ d = 0,   λ_i (G_i(d) − b_i) = 0,

    plus feasibility (``−g`` is the multiplier of ``d ≥ 0``). The program is solved for
    ``F/ρ`` and ``G_i/ρ_i ≤ b_i/ρ_i``, with ``ρ``, ``ρ_i`` the powers of two nearest to the sizes
    of ``F`` and ``(G_i, b_i)`` at the uniform occupancy, or of their curvature where that is
    1000 times larger (1 for unit-scale problems; the solvers'
    tolerances are absolute, and at payoff size 1e-12 the value was 33% off before). The
    multipliers are reported in the original units. ``kkt_residual`` is the
    largest violation, in those unit scales, of the flow equalities, of ``G_i ≤ b_i``, of
    complementary slackness in ``λ``, and of the sign conditions measured by the natural
    residual ``|min(d, −g)|`` (Facchinei & Pang 2003, *Finite-Dimensional Variational
    Inequalities*, §1.5.3), over coordinates where the gradients are finite, and at a pair with
    ``d = 0`` where ``g = +inf`` (a log gradient at 0) the mass ``t*`` at which ``g`` along that pair
    vanishes (:func:`~rltheory.mdp.utility_kkt._missing_mass`; such pairs were left out, and a −KL
    optimum with 1e-10 missing on one pair read 0.0); pairs a domain forbids are left out; a value near
    the solver tolerance certifies ``d*``. The natural residual (rather than ``|g + s|``
    with the solver's own ``s``) keeps the certificate meaningful where the optimum puts
    mass far below the solver's precision on some pair — a linear objective in a KL trust
    region, say, where ``d*(s,a) ≈ 1e-20`` is returned as ``1e-13`` and the log gradient
    there is off by ``O(1)`` while the answer is not.

    The residual is at least ``|⟨ν, M d − c⟩| + Σ_i |λ_i (G_i(d) − b_i)|/ρ_i`` (:func:`~rltheory.mdp.utility_kkt._certify`),
    the violations weighted by their multipliers: the first-order value error ``|F(d) − F*|/ρ``
    (the remainder, ``λ`` times a Bregman divergence, is second order: at most 0.3% of it in the
    trust regions below). ``ν ~ λ/(1 − γ)`` where ``∇G_i`` has a constant part (KL: ``log(d/d_E) + 1``),
    and ``λ ~ 1/√b`` in a KL trust region of radius ``b``: around an occupancy at ``b = 2.2e-8``
    (slack ``ξ = 1.1e-8``, just above the cut-off below) the unweighted residual read ``6.1e-10``
    while the value was ``2.3e-8`` above the exact optimum (a 60-digit solve of the dual), with
    ``Σ d = 1 − 4e-11`` and ``|ν| = 1.2e4``; it now reads ``4.7e-8`` (``ρ = 1/2``).

    What it certifies. The residual also contains the weak-duality gap ``(value_bound − F(d))/ρ``
    (:func:`~rltheory.mdp.utility_dual._dual_bound`: the Lagrangian with the solver's multipliers,
    bounded above over the simplex by concavity), and ``value_bound ≥ F*`` holds for any multipliers
    without a constraint qualification. So, up to rounding in evaluating ``F``, ``G_i`` and their
    gradients (the bound adds an allowance for the rest), ``d`` satisfies every constraint to
    ``kkt_residual`` (flow rows, and ``G_i ≤ b_i`` in unit scale) and ``F* − F(d) ≤ ρ·kkt_residual``.
    The other side, ``F(d) − F*`` for a ``d`` that violates a constraint, is bounded only to first order
    by the weighted violations above; for discounted models ``value_lower_bound`` (``F`` at an occupancy
    that meets every constraint, with rounding margins) brackets ``F*`` from below, so
    ``|F(d) − F*| ≤ max(value_bound − F(d), F(d) − value_lower_bound)``. The first-order parts alone were not a bound on the shortfall:
    a linear objective in a KL trust region of radius ``1e-6`` around an occupancy with an entry ``1e-12``
    left ``d = 0`` on that pair, ``8.3e-11`` below the optimum (a 40-digit solve of the dual), while the
    natural residual there is the missing mass ``3.8e-13`` (the value lost is ``λ`` times it,
    ``λ = 217``); it now reads ``9.1e-11``.

    The residual certifies ``d*`` only where KKT multipliers exist, which for non-affine constraints
    needs a strictly feasible point (Slater's condition; Boyd & Vandenberghe 2004, §5.2.3, §5.5.3).
    When a constraint is non-affine its slack ``ξ`` (``slater_slack``, unit scale) is computed by one
    more cvxpy solve, and where ``ξ ≤ SLATER_TOL = 1e-8`` (the accuracy ``ξ`` is known to) ``kkt_residual``
    is reported as ``inf``: the point is then the solver's best, uncertified. On a KL trust region of
    radius 0 around an occupancy ``d_E`` (feasible set ``{d_E}``), the solver's point violated
    ``KL ≤ 0`` by 1.9e-13, which lets ``d`` move by ``~√(2·1.9e-13) = 6e-7`` (Pinsker), and its value
    was 6.5e-7 above the exact ``⟨r, d_E⟩`` while the residual read 8.6e-9 (with a multiplier 2.2e4
    where none exists).

    Parameters
    ----------
    mdp : FiniteMDP
        Unbatched; discounted (normalised occupancies) or average reward (stationary
        frequencies; the model must be weakly communicating).
    objective : OccupancyFunction
        Concave or affine.
    constraints : sequence of (OccupancyFunction, float)
        ``(G_i, b_i)`` with ``G_i`` convex or affine.
    solver : str, optional
        cvxpy solver name. Default: CLARABEL with gap and feasibility tolerances 1e-12,
        then 1e-11, 1e-10 and its defaults (1e-8, which leave first-order errors ~1e-4 in
        ``d*`` for entropy objectives, whose value is flat at the optimum), stopping at the
        first ``optimal`` run with KKT residual <= 1e-7, which is returned; if none gets there,
        SCS with tolerances 1e-12 is tried last (without ``solver_options``): on a 2×2 entropy
        instance where the four CLARABEL rungs reached residuals 1.6e-6, 1.5e-6, 6.3e-6 and
        7.6e-5, SCS certified 3.5e-14. Otherwise the run with the smallest residual is kept.
        Each rung is a fresh solve (no warm start, which would keep the first rung's settings).
        A rung whose residual exceeds 1e-7 is first refined by Newton steps on the KKT
        system of its active set in log-occupancy coordinates (:func:`_polish`; kept only
        where its residual is smaller, and reported with the rung's status): a linear
        objective in a KL trust region whose optimum puts 3.1e-10 on a pair (multiplier
        0.043) read 1.8e-4, 2.6e-4, 1.6e-4 and 5.0e-5 on the CLARABEL rungs and 0.72 on SCS, since the
        reduced gradient's slope ``λ/d`` there is 1.4e8, and 2.2e-16 after refinement. With
        ``solver`` given, that solver's single run is reported as it is (no refinement).
    solver_options : dict, optional
        Keyword options passed to ``cvxpy.Problem.solve``.

    Raises
    ------
    ValueError
        Wrong curvature (a convex objective, a concave constraint), shapes that do not
        match the model, non-finite thresholds; the offending index is named.
    SolverError
        No run reports ``optimal`` or ``optimal_inaccurate`` (e.g. ``infeasible``); the
        statuses are listed and the last one attached. An ``optimal_inaccurate`` answer is
        returned with its status and KKT residual.
    InvalidModelError
        Average reward on a model that is not weakly communicating, or an optimum whose
        policy has several recurrent classes (as in :func:`solve_cmdp`).

    Examples
    --------
    Linear utility on one state with rewards (0, 1): the optimum puts all mass on action 1.

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> sol = solve_general_utility(mdp, linear_utility(mdp.R))
    >>> np.round(sol.policy, 6), round(sol.value, 6)
    (array([[0., 1.]]), 1.0)
    """
    import cvxpy as cp  # noqa: PLC0415

    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"solve_general_utility expects a FiniteMDP; got {type(mdp).__name__}")
    if mdp.batch_shape:
        raise ValueError(
            f"solve_general_utility takes a single model; got batch shape {mdp.batch_shape}"
        )
    S, A = mdp.S, mdp.A
    if not isinstance(objective, OccupancyFunction):
        raise TypeError(f"objective must be an OccupancyFunction; got {type(objective).__name__}")
    if objective.curvature not in ("affine", "concave"):
        raise ValueError(
            f"the objective must be concave or affine to maximise; {objective.name!r} is {objective.curvature}"
        )
    if objective.shape != (S, A):
        raise ValueError(
            f"objective {objective.name!r} has shape {objective.shape}; the model has (S, A) = {(S, A)}"
        )
    cons = list(constraints)
    for i, item in enumerate(cons):
        if not (
            isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], OccupancyFunction)
        ):
            raise TypeError(
                f"constraints[{i}] must be a pair (OccupancyFunction, threshold); got {item!r}"
            )
        G, b = item
        if G.curvature not in ("affine", "convex"):
            raise ValueError(
                f"constraints[{i}] ({G.name!r}) must be convex or affine for G <= b; it is {G.curvature}"
            )
        if G.shape != (S, A):
            raise ValueError(
                f"constraints[{i}] ({G.name!r}) has shape {G.shape}; the model has (S, A) = {(S, A)}"
            )
        # real_scalar: numpy integers and 0-d arrays are numbers too (np.int64(0) was refused, and an
        # int beyond the float range crashed in np.isfinite)
        if not math.isfinite(real_scalar(b)):
            raise ValueError(f"constraints[{i}] threshold must be a finite number; got {b!r}")
        cons[i] = (G, real_scalar(b))
    if mdp.gamma is None:
        require_weakly_communicating(mdp, "solve_general_utility (average reward)")
    M, c = _flow(mdp)
    d = cp.Variable(S * A)
    flow = M @ d == c
    nonneg = d >= 0
    # the solvers' tolerances are absolute: F and each G_i − b_i are divided by their power-of-two
    # scales (exact in floating point; 1 for unit-scale problems, which are solved as before)
    rho = _scale(objective, S, A)
    rhos = [_scale(G, S, A, float(b)) for G, b in cons]
    gcons = [
        _unit(G.expression(d), r) <= float(b) / r for (G, b), r in zip(cons, rhos, strict=True)
    ]
    extra = [
        k for f in [objective] + [G for G, _ in cons] if f.domain is not None for k in f.domain(d)
    ]
    prob = cp.Problem(
        cp.Maximize(_unit(objective.expression(d), rho)), [flow, nonneg, *gcons, *extra]
    )
    if solver is None:
        ladder = [
            ("CLARABEL", {**_clarabel_tolerances(e), **(solver_options or {})})
            for e in (12, 11, 10)
        ]
        ladder.append(("CLARABEL", dict(solver_options or {})))
        if solver_options is None:  # (options meant for CLARABEL would not fit SCS)
            ladder.append(("SCS", {"eps_abs": 1e-12, "eps_rel": 1e-12, "max_iters": 100_000}))
    else:
        ladder = [(solver, dict(solver_options or {}))]
    best: tuple[float, dict[str, Any]] | None = None
    statuses = []
    for name, opts in ladder:
        with (
            warnings.catch_warnings()
        ):  # the status is reported; the KKT residual is the certificate
            warnings.simplefilter("ignore", UserWarning)
            try:
                prob.solve(
                    solver=name, warm_start=False, **opts
                )  # a fresh solve: a warm start reused rung 1's settings
            except cp.error.SolverError as exc:
                statuses.append(f"{name}: {exc}")
                continue
        statuses.append(f"{name}: {prob.status}")
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            if prob.status in (cp.INFEASIBLE, cp.UNBOUNDED, cp.INFEASIBLE_INACCURATE):
                break
            continue
        point = (
            np.asarray(d.value, dtype=float),
            np.asarray(flow.dual_value, dtype=float).reshape(-1),
            np.array([max(float(k.dual_value), 0.0) for k in gcons]),
        )
        out = _certify(*point, cons, objective, M, c, S, A, rho, rhos)
        if solver is None and out["kkt_residual"] > 1e-7:
            polished = _polish(*point, cons, objective, M, c, S, A, rho, rhos)
            if polished is not None:
                refined = _certify(*polished, cons, objective, M, c, S, A, rho, rhos)
                if refined["kkt_residual"] < out["kkt_residual"]:
                    out = refined
        out["status"] = prob.status
        if prob.status == cp.OPTIMAL and out["kkt_residual"] <= 1e-7:
            best = (out["kkt_residual"], out)  # certified and reported optimal: returned as it is
            break
        if best is None or out["kkt_residual"] < best[0]:
            best = (out["kkt_residual"], out)
    if best is None:
        raise SolverError(
            f"cvxpy found no optimum of the general-utility program ({'; '.join(statuses)})",
            status=prob.status,
        )
    out = best[1]
    out["slater_slack"] = _slater_slack(d, flow, nonneg, cons, gcons, extra, rhos)
    # (d now holds the Slater program's point where it was solved: strictly feasible, for the mixing)
    slater_point = None if d.value is None else np.asarray(d.value, dtype=float)
    out["value_lower_bound"] = _feasible_value(
        mdp, [out["occupancy"], slater_point], cons, objective
    )
    if out["slater_slack"] <= SLATER_TOL:
        out["kkt_residual"] = math.inf
    if mdp.gamma is None:
        # the policy's support as the solution determines it: pairs with more than the 1e-9 of
        # occupancy that counts as a visit in _certify (and each row's largest entry); interior-point
        # round-off (d ~ 1e-13 on unused pairs) must not join recurrent classes, else the check
        # below would depend on the sign of that noise
        D, pol = out["occupancy"], out["policy"]
        used = (
            (D > 1e-9)
            | (pol == pol.max(axis=-1, keepdims=True))
            | ~(D.sum(-1, keepdims=True) > 1e-9)
        )
        Ppol = np.where(used, pol, 0.0)
        cs = _structures((Ppol[:, None, :] @ to_numpy(mdp.P))[:, 0, :])[0]
        if not cs.unichain:
            raise InvalidModelError(
                f"solve_general_utility (average reward): the optimal frequencies split over the policy's "
                f"{cs.describe()}; no stationary policy attains them from every start"
            )
    return GeneralUtilitySolution(**out)


SLATER_TOL = 1e-8
"""Slack ``ξ`` (unit scale) at or below which Slater's condition is taken to fail: the feasibility
tolerance (CLARABEL's default) of the program that computes ``ξ`` where its solve at 1e-12 fails, so
``ξ`` is known to about this at worst (to ~1e-12 where the tight solve succeeds)."""


def _slater_slack(
    d: Any, flow: Any, nonneg: Any, cons: list, gcons: list, extra: list, rhos: Sequence[float]
) -> float:
    """``ξ = max_{d ∈ 𝒟} min_i (b_i − G_i(d))/ρ_i`` over the non-affine ``G_i`` (capped at 1), by cvxpy.

    Affine constraints stay as they are (they need no strict feasibility: refined Slater condition,
    Boyd & Vandenberghe 2004, §5.2.3). ``inf`` with no non-affine constraint; ``nan`` if the solver
    fails (then nothing is flagged).
    """
    import cvxpy as cp  # noqa: PLC0415

    curved = [i for i, (G, _) in enumerate(cons) if G.curvature != "affine"]
    if not curved:
        return math.inf
    t = cp.Variable()
    strict = [
        _unit(cons[i][0].expression(d), rhos[i]) + t <= float(cons[i][1]) / rhos[i] for i in curved
    ]
    affine = [gcons[i] for i in range(len(cons)) if i not in curved]
    prob = cp.Problem(cp.Maximize(t), [flow, nonneg, *affine, *extra, *strict, t <= 1.0])
    # tolerances 1e-12 first (an "inaccurate" stop within 1e-10): at CLARABEL's default 1e-8 the slack was
    # off by up to 1.3e-8 (a KL ball of radius 5e-9 around an occupancy, ξ = 5e-9, read 1.8e-8: certified)
    near = {f"reduced_tol_{k}": 1e-10 for k in ("gap_abs", "gap_rel", "feas")}
    for opts in ({**_clarabel_tolerances(12), **near}, {}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                prob.solve(solver="CLARABEL", warm_start=False, **opts)
            except cp.error.SolverError:
                continue
        if prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and t.value is not None:
            return float(t.value)
    return math.nan


def _scale(f: OccupancyFunction, S: int, A: int, b: float = 0.0) -> float:
    """Power of two nearest to the size of ``f`` (and its threshold ``b``).

    First-order size ``max(|f(d₀)|, max|∇f(d₀)|, |b|)`` with ``d₀`` the uniform occupancy, finite
    parts only; replaced by the curvature size ``max|∇f(e₀) − ∇f(d₀)|`` (``e₀`` the point mass on
    pair ``(0, 0)``) where that is more than 1000 times larger; 1 when the size is 0 or not finite.

    The curvature term is ``β(1 − 1/SA)`` for the quadratic utility: at ``r`` of size 1e-12 and
    ``β = 1e9`` the first-order scale 1e-12 made the Hessian of the solved program 1e21, and every
    solver failed. Below the factor 1000 the scale is the first-order one (the entropy and KL
    functions have curvature size ``log SA``), so well-scaled programs are solved as before."""
    D0 = np.full((S, A), 1.0 / (S * A))
    E0 = np.zeros((S, A))
    E0[0, 0] = 1.0
    with np.errstate(all="ignore"):
        g0 = np.asarray(f.gradient(D0), dtype=float).ravel()
        parts = np.concatenate([[abs(float(f.value(D0))), abs(b)], np.abs(g0)])
        curv = np.abs(np.asarray(f.gradient(E0), dtype=float).ravel() - g0)
    size = float(np.max(parts[np.isfinite(parts)], initial=0.0))
    size = max(size, float(np.max(curv[np.isfinite(curv) & (curv > 1e3 * size)], initial=0.0)))
    # (at most 2^1023: sizes above 2^1023.5, e.g. rewards 1.7e308, rounded to 2^1024 = OverflowError)
    return 2.0 ** min(round(math.log2(size)), 1023) if size > 0 else 1.0


def _unit(expr: Any, rho: float) -> Any:
    """``expr / ρ`` for a power of two ``ρ = 2^k`` as ``expr · 2^h · 2^(−k−h)``, two finite factors.

    ``1/ρ`` itself overflows for a subnormal ``ρ < 2^-1023`` (rewards of size 1e-310), and cvxpy then
    refused the program ("Problem data contains NaN or Inf"); each factor is exact.
    """
    k = math.frexp(rho)[1] - 1
    h = -k // 2
    return expr * 2.0**h * 2.0 ** (-k - h)
