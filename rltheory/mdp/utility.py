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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import PROB_ATOL, _source_atol, check_int, check_real, real_scalar
from ..backend import as_float, to_numpy
from ..errors import InvalidModelError, SolverError
from ._occupancy_lp import occupancy_constraints
from .mixing import _structures
from .model import FiniteMDP
from .structure import require_weakly_communicating

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


@dataclass(frozen=True)
class OccupancyFunction:
    """A function ``F(d)`` of the occupancy ``d[S, A]`` usable by :func:`solve_general_utility`.

    Attributes
    ----------
    name : str
    curvature : {"affine", "concave", "convex"}
    expression : callable
        ``cvxpy.Expression`` of the flattened variable ``d[S*A]``.
    value : callable
        ``F(d)`` for a numpy ``d[S, A]``.
    gradient : callable
        ``∇F(d)`` as ``[S, A]`` (``+inf``/``-inf`` where undefined, e.g. ``log 0``).
    domain : callable, optional
        Extra cvxpy constraints on ``d[S*A]`` (e.g. support restrictions).
    shape : tuple (S, A)
    """

    name: str
    curvature: str
    expression: Callable[[Any], Any]
    value: Callable[[np.ndarray], float]
    gradient: Callable[[np.ndarray], np.ndarray]
    shape: tuple[int, int]
    domain: Callable[[Any], list] | None = None


def _as_table(x: Any, field: str, shape: tuple[int, int] | None = None) -> np.ndarray:
    # as_float refuses complex and text by name (a float cast dropped imaginary parts with a warning)
    a = np.asarray(as_float(to_numpy(x), np, np.float64, field=field), dtype=float)
    if a.ndim != 2 or (shape is not None and a.shape != shape):
        want = f"(S, A) = {shape}" if shape else "(S, A)"
        raise ValueError(f"{field} must have shape {want}; got {a.shape}")
    if not np.all(np.isfinite(a)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(f"{field} must be finite; {field}[s={idx[0]}, a={idx[1]}] = {a[idx]}")
    return a


def linear_utility(r: Any) -> OccupancyFunction:
    r"""``F(d) = ⟨r, d⟩ = Σ_{s,a} r(s,a) d(s,a)`` (affine; ``∇F = r``).

    With the normalised occupancy, ``max_d F = (1−γ) V*_r(μ)`` (Puterman 1994, §6.9).

    Examples
    --------
    >>> import numpy as np
    >>> f = linear_utility(np.array([[1.0, 2.0]]))
    >>> f.value(np.array([[0.25, 0.75]]))
    1.75
    """
    r = _as_table(r, "r")
    flat = r.reshape(-1)
    return OccupancyFunction(
        "linear",
        "affine",
        lambda d: flat @ d,
        lambda d: float(np.sum(r * d)),
        lambda d: r.copy(),
        r.shape,
    )


def _xlogx_grad(d: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(d > 0, -np.log(np.where(d > 0, d, 1.0)) - 1.0, np.inf)


def entropy_utility(S: int, A: int, *, kind: str = "state_action") -> OccupancyFunction:
    r"""Entropy of the occupancy: ``H(d) = −Σ_{s,a} d log d`` or of its state marginal ``−Σ_s d_S log d_S``.

    Concave (Boyd & Vandenberghe 2004, §3.1.5). ``∇H(d)(s,a) = −log d(s,a) − 1``
    (``kind="state_action"``) or ``−log d_S(s) − 1`` (``kind="state"``, maximum-entropy
    exploration of Hazan et al. 2019), ``+inf`` where the argument is 0.

    Examples
    --------
    >>> import numpy as np
    >>> round(entropy_utility(2, 2).value(np.full((2, 2), 0.25)), 12)  # log 4
    1.386294361120
    """
    import cvxpy as cp  # noqa: PLC0415

    if kind not in ("state_action", "state"):
        raise ValueError(f"kind must be 'state_action' or 'state'; got {kind!r}")
    S, A = check_int(S, "S"), check_int(A, "A")
    if kind == "state_action":

        def value(d: np.ndarray) -> float:
            p = d[d > 0]
            return float(-np.sum(p * np.log(p)))

        return OccupancyFunction(
            "entropy", "concave", lambda d: cp.sum(cp.entr(d)), value, _xlogx_grad, (S, A)
        )
    E = np.kron(np.eye(S), np.ones((1, A)))

    def value_s(d: np.ndarray) -> float:
        p = d.sum(-1)
        p = p[p > 0]
        return float(-np.sum(p * np.log(p)))

    def grad_s(d: np.ndarray) -> np.ndarray:
        return np.repeat(_xlogx_grad(d.sum(-1))[:, None], d.shape[1], axis=1)

    return OccupancyFunction(
        "state_entropy", "concave", lambda d: cp.sum(cp.entr(E @ d)), value_s, grad_s, (S, A)
    )


def _check_expert(d_expert: Any) -> np.ndarray:
    # the sum is judged at the precision d_expert came in (a float32 table normalised in float32 sums
    # to 1 ± 1e-7 and was refused at 1e-8: 96 of 200 random 5×6 tables), and such a table is divided by
    # its sum (as _validate does for policies)
    src = np.asarray(to_numpy(d_expert)) if not isinstance(d_expert, (list, tuple)) else None
    atol = _source_atol(src, np) if src is not None and src.dtype.kind in "fiub" else PROB_ATOL
    dE = _as_table(d_expert, "d_expert")
    if np.any(dE < 0) or abs(dE.sum() - 1.0) > atol:
        raise ValueError(
            f"d_expert must be a non-negative table summing to 1 (atol={atol:.3g}); sums to {dE.sum():.12g}, "
            f"min {dE.min():.3g}"
        )
    return dE / dE.sum() if atol > PROB_ATOL else dE


def _kl_parts(dE: np.ndarray) -> tuple[Callable, Callable, Callable, Callable]:
    import cvxpy as cp  # noqa: PLC0415

    sup = (dE > 0).reshape(-1)
    idx = np.flatnonzero(sup)
    off = np.flatnonzero(~sup)
    q = dE.reshape(-1)[idx]

    def expr(d: Any) -> Any:
        return cp.sum(cp.rel_entr(d[idx], q))

    def value(d: np.ndarray) -> float:
        x = d.reshape(-1)
        if np.any(x[off] > 1e-9):  # outside supp(d_E), beyond solver round-off
            return float("inf")
        xs = x[idx]
        pos = xs > 0
        return float(np.sum(xs[pos] * np.log(xs[pos] / q[pos])))

    def grad(d: np.ndarray) -> np.ndarray:
        out = np.full(d.size, np.inf)
        xs = d.reshape(-1)[idx]
        with np.errstate(divide="ignore"):
            out[idx] = np.where(xs > 0, np.log(np.where(xs > 0, xs, 1.0) / q) + 1.0, -np.inf)
        return out.reshape(d.shape)

    def domain(d: Any) -> list:
        return [d[off] == 0] if off.size else []

    return expr, value, grad, domain


def neg_kl_utility(d_expert: Any) -> OccupancyFunction:
    r"""``F(d) = −KL(d ‖ d_E) = −Σ d log(d/d_E)`` (imitation; concave).

    Entries with ``d_E(s,a) = 0`` force ``d(s,a) = 0`` (added to the program's domain).
    ``∇F(d) = −log(d/d_E) − 1`` on the support of ``d_E``.

    Examples
    --------
    >>> import numpy as np
    >>> dE = np.array([[0.5, 0.5]])
    >>> neg_kl_utility(dE).value(dE), round(neg_kl_utility(dE).value(np.array([[1.0, 0.0]])), 12)
    (0.0, -0.69314718056)
    """
    dE = _check_expert(d_expert)
    expr, value, grad, domain = _kl_parts(dE)
    return OccupancyFunction(
        "neg_kl",
        "concave",
        lambda d: -expr(d),
        lambda d: -value(d),
        lambda d: -grad(d),
        dE.shape,
        domain,
    )


def kl_divergence(d_expert: Any) -> OccupancyFunction:
    r"""``G(d) = KL(d ‖ d_E)`` (convex): a trust-region / imitation *constraint* ``KL ≤ b``.

    Examples
    --------
    >>> import numpy as np
    >>> kl_divergence(np.array([[0.5, 0.5]])).value(np.array([[0.5, 0.5]]))
    0.0
    """
    dE = _check_expert(d_expert)
    expr, value, grad, domain = _kl_parts(dE)
    return OccupancyFunction("kl", "convex", expr, value, grad, dE.shape, domain)


def quadratic_utility(r: Any, beta: float, target: Any = None) -> OccupancyFunction:
    r"""``F(d) = ⟨r, d⟩ − (β/2) ‖d − d_0‖²`` (concave for ``β ≥ 0``; ``∇F = r − β(d − d_0)``).

    A variance-type penalty: with the uniform target ``d_0 = 1/(SA)`` (default),
    ``‖d − d_0‖² = SA · Var(entries of d)`` penalises concentrated occupancies (a
    quadratic risk term that keeps the problem concave, unlike a penalty on the
    reward variance ``Var_d(r)``, which is concave in ``d`` and so cannot be
    subtracted).

    Examples
    --------
    >>> import numpy as np
    >>> quadratic_utility(np.zeros((1, 2)), beta=2.0).value(np.array([[1.0, 0.0]]))  # -(2/2)(0.25+0.25)
    -0.5
    """
    import cvxpy as cp  # noqa: PLC0415

    r = _as_table(r, "r")
    check_real(beta, "beta", low=0.0)
    d0 = np.full(r.shape, 1.0 / r.size) if target is None else _as_table(target, "target", r.shape)
    rf, d0f, b = r.reshape(-1), d0.reshape(-1), float(beta)
    return OccupancyFunction(
        "quadratic",
        "concave",
        lambda d: rf @ d - 0.5 * b * cp.sum_squares(d - d0f),
        lambda d: float(np.sum(r * d) - 0.5 * b * np.sum((d - d0) ** 2)),
        lambda d: r - b * (d - d0),
        r.shape,
    )


def shadow_reward(F: OccupancyFunction, d: Any) -> np.ndarray:
    r"""Shadow reward ``r̃ = ∇F(d)`` [S, A]: the reward whose ordinary MDP gives the ascent direction at ``d``.

    For ``d = d^π``, the policy gradient of ``F(d^π)`` equals the ordinary policy
    gradient with reward ``r̃`` held fixed (chain rule; Zhang et al. 2020, §3).

    Examples
    --------
    >>> import numpy as np
    >>> shadow_reward(linear_utility(np.array([[1.0, 2.0]])), np.array([[0.5, 0.5]]))
    array([[1., 2.]])
    """
    if not isinstance(F, OccupancyFunction):
        raise TypeError(f"F must be an OccupancyFunction; got {type(F).__name__}")
    return F.gradient(_as_table(d, "d", F.shape))


@dataclass(frozen=True, eq=False)
class GeneralUtilitySolution:
    """Optimum of a general-utility program.

    Attributes
    ----------
    occupancy : numpy.ndarray (S, A)
        Optimal normalised occupancy ``d*`` (clipped at 0).
    policy : numpy.ndarray (S, A)
        ``d*(s,a)/Σ_b d*(s,b)``; uniform on states with zero mass.
    value : float
        ``F(d*)``.
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
        complementary slackness (see :func:`solve_general_utility`); ``inf`` where
        Slater's condition fails (``slater_slack <= SLATER_TOL``), since then it certifies nothing.
    status : str
        cvxpy's status.
    slater_slack : float
        ``ξ = max_{d ∈ 𝒟} min_i (b_i − G_i(d))/ρ_i`` over the non-affine constraints, in their unit
        scales (capped at 1; ``inf`` when every constraint is affine, where no strict feasibility is
        needed). Slater's condition holds iff ``ξ > 0``.
    """

    occupancy: np.ndarray
    policy: np.ndarray
    value: float
    constraint_values: np.ndarray
    duals: np.ndarray
    shadow_reward: np.ndarray
    lagrangian_reward: np.ndarray
    kkt_residual: float
    status: str
    slater_slack: float = math.inf


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
    Inequalities*, §1.5.3), over coordinates where the gradients are finite; a value near
    the solver tolerance certifies ``d*``. The natural residual (rather than ``|g + s|``
    with the solver's own ``s``) keeps the certificate meaningful where the optimum puts
    mass far below the solver's precision on some pair — a linear objective in a KL trust
    region, say, where ``d*(s,a) ≈ 1e-20`` is returned as ``1e-13`` and the log gradient
    there is off by ``O(1)`` while the answer is not.

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
tolerance (CLARABEL's default) of the program that computes ``ξ``, so ``ξ`` is known only to about this."""


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            prob.solve(solver="CLARABEL", warm_start=False)
        except cp.error.SolverError:
            return math.nan
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or t.value is None:
        return math.nan
    return float(t.value)


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


def _certify(
    x: np.ndarray,
    nu: np.ndarray,
    lam: np.ndarray,
    cons: list,
    objective: OccupancyFunction,
    M: np.ndarray,
    c: np.ndarray,
    S: int,
    A: int,
    rho: float,
    rhos: Sequence[float],
) -> dict[str, Any]:
    """Policy, values and the KKT residual of a primal-dual point of the solved program.

    The program was solved for ``F/ρ`` and ``G_i/ρ_i ≤ b_i/ρ_i``: ``x`` is ``d[S*A]``, ``nu`` and ``lam``
    are that program's multipliers of the flow equalities and of the ``G_i`` (``lam`` clipped at 0);
    the multipliers are scaled back to the original units, and the residual is measured in the
    solved (unit) scale."""
    x = np.clip(np.asarray(x, dtype=float), 0.0, None)
    D = x.reshape(S, A)
    mass = D.sum(-1)
    visited = mass > 1e-9
    pi = np.where(visited[:, None], D / np.where(visited, mass, 1.0)[:, None], 1.0 / A)
    rhos = np.asarray(rhos, dtype=float)  # one per constraint
    lam_u = np.maximum(np.asarray(lam, dtype=float), 0.0)  # the solved program's multipliers
    with np.errstate(
        over="ignore", invalid="ignore"
    ):  # (reported as computed; the certificate is below)
        lam = np.ldexp(
            lam_u, math.frexp(rho)[1] - np.frexp(rhos)[1]
        )  # λ ρ/ρ_i, no intermediate overflow
        gvals = np.array([G.value(D) for G, _ in cons])
        grad = objective.gradient(D)
        gradG = [np.asarray(G.gradient(D), dtype=float) for G, _ in cons]
        lgrad = grad - sum((lam[i] * gradG[i] for i in range(len(cons))), np.zeros((S, A)))
        # reduced gradient in the solved (unit) scale, optimal iff g <= 0 and g ⊙ d = 0 (g = −s/ρ). Formed
        # in the original units (ρν with ρ = 2^1023 for rewards 1.7e308) it overflowed to NaN in every
        # coordinate, so no sign condition was checked, and for subnormal rewards it lost bits
        g = (
            np.asarray(grad, dtype=float).reshape(-1) / rho
            - sum(
                (lam_u[i] * gradG[i].reshape(-1) / rhos[i] for i in range(len(cons))),
                np.zeros(S * A),
            )
            - M.T @ np.asarray(nu, dtype=float).reshape(-1)
        )
    fin = np.isfinite(g)
    bs = np.array([float(b) for _, b in cons])
    viol = (gvals - bs) / rhos
    parts = [
        # natural (min-map) residual of the sign conditions d >= 0, g <= 0, g ⊙ d = 0: it stays
        # small where a solver leaves d(s,a) at its own noise level (1e-13, say) while a log
        # gradient there (entropy, KL) is off by a large amount that moves nothing
        np.max(np.abs(np.minimum(x[fin], -g[fin])), initial=0.0),
        np.max(np.abs(M @ x - c), initial=0.0),
        np.max(viol, initial=0.0),
        np.max(np.abs(lam_u * viol), initial=0.0),
    ]
    return dict(
        occupancy=D,
        policy=pi,
        value=float(objective.value(D)),
        constraint_values=gvals,
        duals=lam,
        shadow_reward=grad,
        lagrangian_reward=lgrad,
        kkt_residual=float(max(parts)),
    )


def _polish(
    x: np.ndarray,
    nu: np.ndarray,
    lam: np.ndarray,
    cons: list,
    objective: OccupancyFunction,
    M: np.ndarray,
    c: np.ndarray,
    S: int,
    A: int,
    rho: float,
    rhos: Sequence[float],
    *,
    steps: int = 12,
    delta: float = 1e-4,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Newton refinement of a solver's point on its active set, in log-occupancy coordinates.

    The active set is read off the natural residual: a pair is *positive* where ``d ≥ −g`` (``g``
    the reduced gradient of :func:`solve_general_utility`, solved scale) and ``d > 0``, else it is
    fixed at 0 (as are pairs where ``g`` is not finite); a constraint is *active* where
    ``λ ≥ −(G − b)`` and ``λ > 0``, else its multiplier is fixed at 0. On that set the KKT
    conditions are the square system

        g_P(d) = 0,   M d = c,   G_i(d) = b_i (i active)

    in ``(u_P, ν, λ_active)`` with ``d_P = exp(u_P)``. Log coordinates make a log-gradient term
    ``λ log d`` (KL, entropy) contribute ``λ`` to the Jacobian however small ``d`` is, where its
    derivative in ``d`` is ``λ/d`` (1.4e8 at ``d = 3e-10``, ``λ = 0.04``: an absolute error of 1e-12
    in ``d``, the interior-point solver's precision, is 1.8e-4 in ``g``). The Jacobian of ``g_P`` is
    by central differences in ``u`` (exact for those terms; error ``O(δ²)`` else), the rest analytic;
    steps are least-squares solutions (``M`` has a redundant row for average reward), halved until
    the largest equation residual decreases; at most ``steps`` of them, stopping once it is 1e-14
    (the equations are in the solved, unit scale). Returns the refined ``(x, ν, λ)`` in the solved scale,
    or ``None`` when no step decreases it; the caller keeps the refined point only where its KKT
    residual (which also checks the signs ``g ≤ 0`` on the zero pairs, ``λ ≥ 0``, ``G ≤ b``) is smaller.
    Cost per step: ``2|P|`` gradient evaluations and a least-squares solve of size ``|P| + rows(M)``."""
    rhos = np.asarray(rhos, dtype=float)
    bs = np.array([float(b) for _, b in cons])
    x = np.asarray(x, dtype=float)
    n, m = x.size, len(cons)

    def grads(z: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        D = z.reshape(S, A)
        with np.errstate(all="ignore"):
            return (
                np.asarray(objective.gradient(D), dtype=float).reshape(-1) / rho,
                [
                    np.asarray(G.gradient(D), dtype=float).reshape(-1) / r
                    for (G, _), r in zip(cons, rhos, strict=True)
                ],
            )

    gF, gG = grads(np.clip(x, 0.0, None))
    with np.errstate(all="ignore"):
        g = gF - sum((lam[i] * gG[i] for i in range(m)), np.zeros(n)) - M.T @ nu
        viol = np.array(
            [
                (G.value(np.clip(x, 0.0, None).reshape(S, A)) - b) / r
                for (G, b), r in zip(cons, rhos, strict=True)
            ]
        )
    pos = np.isfinite(g) & (x > 0) & (x >= -g)
    act = [i for i in range(m) if lam[i] > 0 and lam[i] >= -viol[i]]
    if not pos.any():
        return None
    P = np.flatnonzero(pos)
    k, p = len(act), P.size

    def residual(
        u: np.ndarray, nu: np.ndarray, la: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        z = np.zeros(n)
        z[P] = np.exp(u)
        gF, gG = grads(z)
        h = gF - sum((la[j] * gG[i] for j, i in enumerate(act)), np.zeros(n))
        with np.errstate(all="ignore"):
            Gv = [(cons[i][0].value(z.reshape(S, A)) - bs[i]) / rhos[i] for i in act]
        e = np.concatenate([h[P] - M.T[P] @ nu, M @ z - c, Gv])
        return (z, e) if np.all(np.isfinite(e)) else None

    u, la = np.log(x[P]), lam[act].astype(float)
    nu = np.asarray(nu, dtype=float).copy()
    cur = residual(u, nu, la)
    if cur is None:
        return None
    improved = False
    for _ in range(steps):
        z, e = cur
        err = float(np.max(np.abs(e)))
        if err <= 1e-14:  # the unit-scale equations are at round-off level
            break
        J = np.zeros((e.size, p + nu.size + k))
        for col, j in enumerate(P):  # ∂h_P/∂u_j by central differences in log d_j
            zp, zm = z.copy(), z.copy()
            zp[j] *= math.exp(delta)
            zm[j] *= math.exp(-delta)
            (fp, Gp), (fm, Gm) = grads(zp), grads(zm)
            hp = fp - sum((la[a] * Gp[i] for a, i in enumerate(act)), np.zeros(n))
            hm = fm - sum((la[a] * Gm[i] for a, i in enumerate(act)), np.zeros(n))
            J[:p, col] = (hp[P] - hm[P]) / (2 * delta)
        gF, gG = grads(z)
        J[:p, p : p + nu.size] = -M.T[P]
        for a, i in enumerate(act):
            J[:p, p + nu.size + a] = -gG[i][P]
            J[p + M.shape[0] + a, :p] = gG[i][P] * z[P]
        J[p : p + M.shape[0], :p] = M[:, P] * z[P]
        if not np.all(np.isfinite(J)):
            return None
        step = np.linalg.lstsq(J, -e, rcond=None)[0]
        t = 1.0
        while t > 1e-6:
            du = t * step[:p]
            if np.max(np.abs(du), initial=0.0) <= 30.0:  # keep exp(u) representable
                new = residual(u + du, nu + t * step[p : p + nu.size], la + t * step[p + nu.size :])
                if new is not None and float(np.max(np.abs(new[1]))) < err:
                    break
            t /= 2
        else:
            break
        u, nu, la = u + t * step[:p], nu + t * step[p : p + nu.size], la + t * step[p + nu.size :]
        cur, improved = new, True
    if not improved:
        return None
    lam_out = np.zeros(m)
    lam_out[act] = la
    return cur[0], nu, lam_out
