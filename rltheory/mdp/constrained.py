r"""Constrained MDPs solved exactly by the occupancy-measure linear program.

A :class:`ConstrainedMDP` ``(M, C, b)`` asks for

    max_π V_R^π(μ)   subject to   V_{C_i}^π(μ) ≤ b_i,  i = 1..m,

where for the discounted criterion ``V_f^π(μ) = E[Σ_t γ^t f(s_t, a_t) | s_0 ~ μ]``
(unnormalised) and for the average-reward criterion (``gamma=None``)
``V_f^π(μ) = μᵀ g_f^π`` is the gain; ``μ`` is the model's ``mu`` (uniform when
``None``).

With ``q(s, a) = Σ_t γ^t Pr(s_t = s, a_t = a)`` the problem is the LP

    max_{q ≥ 0} ⟨r, q⟩   s.t.   Σ_a q(j, a) − γ Σ_{s,a} P(j|s,a) q(s, a) = μ(j)  ∀j,
                                ⟨C_i, q⟩ ≤ b_i                                  ∀i,

(average reward: ``Σ_a x(j,a) = Σ_{s,a} P(j|s,a) x(s,a)``, ``Σ x = 1``). Every
feasible ``q`` is the occupancy of the stationary policy ``π(a|s) = q(s,a)/Σ_b q(s,b)``
(Altman 1999, Thm 3.2), so an optimal stationary — possibly randomised — policy
exists; a basic optimal solution randomises in at most ``m`` states (Altman 1999,
Thm 3.8; it has at most ``S + m`` positive entries and every state visited from a
fully supported ``μ`` needs one). The Lagrange multipliers ``λ ≥ 0`` of the cost
rows are the LP duals; the Lagrangian

    L(π, λ) = V_R^π(μ) + Σ_i λ_i (b_i − V_{C_i}^π(μ))

has dual function ``D(λ) = max_π L(π, λ) = V*_{R − λᵀC}(μ) + λᵀb`` and strong
duality ``min_{λ≥0} D(λ) = V*`` holds whenever the LP is feasible (LP duality; Altman
1999, Thm 3.6 and ch. 9; Paternain et al. 2019).

Everything here runs on the host (scipy HiGHS); device arrays raise ``TypeError``.

Modules: :mod:`~rltheory.mdp.cmdp_model` (:class:`ConstrainedMDP`),
:mod:`~rltheory.mdp.cmdp_lagrangian` (evaluation, Lagrangian, dual function); the LP solver is here,
and every public name is importable from here.

References
----------
Altman, E. (1999). *Constrained Markov Decision Processes*. Chapman & Hall/CRC.
Ch. 3 (discounted LP, Thms 3.2, 3.6, 3.8), ch. 4 (average cost, unichain case).
Paternain, S., Chamon, L., Calvo-Fullana, M. & Ribeiro, A. (2019). Constrained
reinforcement learning has zero duality gap. NeurIPS.
Puterman, M. L. (1994). *Markov Decision Processes*. §6.9, §8.8 (occupancy LPs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import highs_linprog
from ..backend import from_host, to_numpy
from ..errors import InvalidModelError, SolverError
from ._occupancy_lp import occupancy_constraints
from .bellman import _check_in_range, _discounted_scale
from .cmdp_lagrangian import _optimal_value, dual_function, evaluate_cmdp, lagrangian
from .cmdp_model import ConstrainedMDP, _check_cmdp
from .mixing import _structures
from .model import FiniteMDP
from .structure import require_weakly_communicating

__all__ = [
    "ConstrainedMDP",
    "CMDPSolution",
    "solve_cmdp",
    "evaluate_cmdp",
    "lagrangian",
    "dual_function",
]


@dataclass(frozen=True, eq=False)
class CMDPSolution:
    """Optimal solution of a CMDP with its dual certificate.

    Attributes
    ----------
    policy : array (S, A)
        Optimal stochastic policy, rows normalised over actions; states the optimal
        occupancy never visits get the uniform distribution (see :func:`solve_cmdp`).
    value : float
        ``V_R^π(μ)`` (LP primal value).
    costs : array (m,)
        ``V_{C_i}^π(μ)``.
    duals : array (m,)
        Lagrange multipliers ``λ_i ≥ 0`` (``∂V*/∂b_i``).
    occupancy : array (S, A)
        Normalised occupancy ``d = (1−γ) q`` (discounted) or stationary frequencies
        ``x`` (average reward); sums to 1.
    slack : array (m,)
        ``b − costs ≥ 0``; complementary slackness ``λ_i · slack_i = 0``.
    state_duals : array (S,) or (S + 1,)
        Duals of the flow constraints: discounted, the optimal value function
        ``V*_{R−λᵀC}`` of the Lagrangian MDP; average reward, ``(h, g)``.
    dual_value : float
        LP dual objective (``μᵀV_λ + λᵀb`` or ``g_λ + λᵀb``); equals ``value``.
    randomised_states : tuple of int
        States where ``policy`` puts probability > 1e-9 on two or more actions.
    """

    policy: Any
    value: float
    costs: Any
    duals: Any
    occupancy: Any
    slack: Any
    state_duals: Any
    dual_value: float
    randomised_states: tuple[int, ...]

    @property
    def duality_gap(self) -> float:
        return abs(self.value - self.dual_value)


def _lp_data(cmdp: ConstrainedMDP) -> tuple[np.ndarray, ...]:
    # host-only check first; CMDP values are unnormalised discounted sums (DESIGN.md). The LP is
    # about the row-normalised model P/σ in float64 (occupancy_constraints): built from P in its own
    # dtype, a float32 model got γP rounded to float32, i.e. the LP of γ = float32(0.999) =
    # 0.99900001: V* and the costs 1.3e-5 too large relative, a returned policy whose true cost
    # exceeded b by 2.6e-3 (b = 287.494, γ = 0.999), and at γ = 1 − 1e-7 values 13% off (float32
    # rounds γ to 1 − 1.19e-7; V = 1.089e7 for 1.25e7).
    A_eq, b_eq = occupancy_constraints(cmdp.mdp, "solve_cmdp", normalised=False)
    S, A = cmdp.S, cmdp.A
    if cmdp.gamma is None:
        # Average reward: the S flow rows sum to Σ_{s,a} x(s,a)(1 − Σ_j P(j|s,a)), zero for a stochastic
        # P, so one is redundant and is dropped (its dual, the bias at state S−1, is then 0: h is fixed
        # up to a constant). Kept, it made the implied row Σ x (1 − Σ_j P) = 0 a real constraint where
        # the rows of P sum to 1 only to rounding: a float32 model (row sums 1 ± 2e-8, HiGHS tolerance
        # 1e-10) got V* = 0.495 instead of 0.641.
        keep = np.r_[0 : S - 1, S]
        A_eq, b_eq = A_eq[keep], b_eq[keep]
    # (in float64: R/ρ of a float32 model was rounded to float32 in the objective)
    R = np.asarray(to_numpy(cmdp.mdp.R), dtype=np.float64).reshape(S * A)
    C = np.asarray(to_numpy(cmdp.C), dtype=np.float64).reshape(cmdp.m, S * A)
    b = np.asarray(to_numpy(cmdp.b), dtype=np.float64)
    mu = np.asarray(to_numpy(cmdp.mdp.initial_distribution()), dtype=np.float64)
    return R, C, b, A_eq, b_eq, mu


def _infeasibility_message(cmdp: ConstrainedMDP, res: Any) -> str:
    """Name the constraints whose own minimum exceeds the threshold.

    Each ``min_π V_{C_i}(μ)`` is computed for ``C_i/2^k`` (``2^k`` the power of two of ``max|C_i|``;
    exact) and compared with ``b_i/2^k``: computed for ``C_i`` itself, a minimum beyond the float
    range (costs 1e307 at ``γ = 0.999``) failed inside policy iteration with its "values of this
    model left the float64 range" error instead of this diagnosis.
    """
    parts, edge = [], []
    horizon = 1.0 if cmdp.gamma is None else 1.0 / (1.0 - cmdp.gamma)
    for i in range(cmdp.m):
        Ci = to_numpy(cmdp.C[i, ...])
        k = int(np.frexp(float(np.max(np.abs(Ci))))[1])
        with np.errstate(over="ignore"):
            bs = float(np.ldexp(float(cmdp.b[i]), -k))  # (may be inf: then no minimum exceeds it)
        # (0.0 − …: a zero minimum read −0 in the message, 'min_π V_C0(μ) = -0 > b[0] = -1e-300')
        low = 0.0 - _optimal_value(cmdp, from_host(np.ldexp(-Ci, -k), cmdp.mdp.P, cmdp.mdp.dtype))
        # relative to the constraint's own scale (an absolute 1e-9 hid min V_C = 2e-12 > b = 1e-12)
        size = max(abs(low), abs(bs), horizon * float(np.max(np.abs(np.ldexp(Ci, -k)))))
        if low > bs + 1e-9 * size:
            with np.errstate(over="ignore"):
                full = float(np.ldexp(low, k))
            shown = (
                f"{full:.6g}"
                if math.isfinite(full)
                else f"{low:.6g}·2^{k} (beyond the float range)"
            )
            parts.append(f"min_π V_C{i}(μ) = {shown} > b[{i}] = {float(cmdp.b[i]):.6g}")
        elif low > bs - 1e-9 * size:
            # (within round-off of b_i: with one constraint at b = min V_C − 1e-9 the message said
            # "each constraint is satisfiable alone, but not all at once")
            with np.errstate(over="ignore"):
                full = float(np.ldexp(low, k))
            edge.append(
                f"min_π V_C{i}(μ) = {full:.12g} equals b[{i}] = {float(cmdp.b[i]):.12g} "
                "to within round-off (1e-9 of its scale): that constraint alone is at the edge of feasibility"
            )
    why = (
        "; ".join(parts or edge)
        if parts or edge
        else "each constraint is satisfiable alone, but not all at once"
    )
    return f"the CMDP is infeasible (HiGHS status {res.status}: {res.message}): {why}"


#: Largest flow-row residual ``max_j |(A_eq q − μ)_j|`` accepted from a discounted q-LP without
#: re-solving it on the normalised occupancy (ten times HiGHS's feasibility tolerance).
_FLOW_TOL = 1e-9


def solve_cmdp(cmdp: ConstrainedMDP) -> CMDPSolution:
    r"""Solve a CMDP exactly by its occupancy-measure LP (scipy HiGHS dual simplex).

    The LP (module docstring) is solved by ``scipy.optimize.linprog(method="highs-ds")``
    with feasibility tolerances 1e-10 (if the simplex reports numerical trouble, status 4,
    as it can within ~1e-4 of the feasibility boundary, HiGHS's interior-point method with
    crossover is used instead: :func:`rltheory._numerics.highs_linprog`), which returns a basic
    (vertex) solution. An *infeasible* or *unbounded* verdict on a discounted LP, numerical trouble
    (status 4), or an optimal ``q`` whose flow rows miss ``μ`` by more than ``1e-9`` is re-examined
    on the normalised occupancy ``d = (1−γ)q`` with the implied row ``Σd = 1`` (near ``γ = 1`` the
    rows of ``q``, entries ``~1/(1−γ)``, cancel below HiGHS's absolute tolerances); only its answer
    is reported when it solves. The multipliers are
    ``λ = −res.ineqlin.marginals ≥ 0`` (HiGHS marginals are ``∂(min objective)/∂b_ub``
    and the objective is ``−⟨r, q⟩``) and the flow duals ``−res.eqlin.marginals``.

    Policy: ``π(a|s) = q(s,a)/Σ_b q(s,b)`` — normalised over *actions* — wherever
    ``Σ_b q(s,b) > 1e-12·Σq``. The remaining states are never visited by the optimal
    policy from ``μ`` and get the uniform distribution over actions: in the
    discounted case they stay unreachable whatever they do, so value and costs are
    unchanged; in the average-reward case (weakly communicating model) the uniform
    rows make them transient, since any set closed under all actions contains the
    model's closed communicating class.

    Parameters
    ----------
    cmdp : ConstrainedMDP

    Returns
    -------
    CMDPSolution

    Raises
    ------
    SolverError
        Infeasible thresholds (``status`` = HiGHS status 2; the message names each
        constraint whose own minimum exceeds its threshold) or any other HiGHS failure.
    InvalidModelError
        Average reward: the model is not weakly communicating, or the optimal
        frequencies split over several recurrent classes of the policy (then no
        stationary policy attains the LP value from every start; Altman 1999, ch. 4
        assumes unichain models). The classes are named.
    ValueError
        The value, a cost, a multiplier or the flow duals are beyond the float64 range (e.g.
        rewards 1e307 at ``γ = 0.999``, or ``λ* = 1e310`` for costs 1e-310 beside unit rewards);
        the message names the quantity and how to rescale ``R`` or ``(C_i, b_i)`` by a power of 2.
    TypeError
        Device arrays.

    Examples
    --------
    One state, action 1 earns 1 and costs 1, budget ``b = 1`` with ``γ = 1/2``: the
    unconstrained optimum would cost ``1/(1−γ) = 2``, so the optimal policy plays
    action 1 half the time, ``V_R = 1`` and ``λ = 1``:

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> sol = solve_cmdp(ConstrainedMDP(mdp, C=np.array([[[0.0, 1.0]]]), b=np.array([1.0])))
    >>> sol.policy, round(sol.value, 12), sol.duals, sol.randomised_states
    (array([[0.5, 0.5]]), 1.0, array([1.]), (0,))
    """
    _check_cmdp(cmdp, "solve_cmdp")
    if cmdp.gamma is None:
        require_weakly_communicating(cmdp.mdp, "solve_cmdp (average reward)")
    R, C, b, A_eq, b_eq, mu = _lp_data(cmdp)
    S, A, m = cmdp.S, cmdp.A, cmdp.m
    # HiGHS's tolerances are absolute: the LP is solved for r/ρ_r and each constraint divided by
    # ρ_i = max(max|c_i|, |b_i|) (same optimal q; the duals are scaled back below). Costs and
    # thresholds of size 1e-12 otherwise gave a policy with 2.5 times the allowed cost.
    # highs_linprog retries by interior point when the simplex is in numerical trouble (e.g.
    # thresholds at the edge of feasibility).
    rho_r = float(np.max(np.abs(R))) or 1.0
    rho_c = np.maximum(np.max(np.abs(C), axis=1, initial=0.0), np.abs(b)) if m else np.ones(0)
    rho_c = np.where(rho_c > 0, rho_c, 1.0)
    res = highs_linprog(
        -R / rho_r,
        A_ub=C / rho_c[:, None] if m else None,
        b_ub=b / rho_c if m else None,
        A_eq=A_eq,
        b_eq=b_eq,
        bounds=(0, None),
    )
    # scipy reports HiGHS's "Model error" (e.g. coefficients beyond its limits) as status 2 too;
    # only a real infeasibility verdict gets the infeasibility diagnosis
    infeasible = res.status == 2 and "model error" not in str(res.message).lower()
    q_scale, sum_row = 1.0, 0.0
    # An "optimal" q can miss its flow rows by far more than the tolerance it was solved at: at
    # γ = 1 − 1e-9 HiGHS returned q with |A_eq q − μ| = 2e-8, whose policy broke a tight constraint
    # by 1.5e-7 of b and was worth 1.1e-7 less than reported (value 0.754124691 per step, true
    # optimum 0.754124774); such an answer is re-solved in the normalised form below too.
    loose = res.status == 0 and float(np.max(np.abs(A_eq @ res.x - b_eq))) > _FLOW_TOL
    if (infeasible or res.status in (3, 4) or loose) and cmdp.gamma is not None:
        # Near γ = 1 the flow rows of q (entries ~1/(1−γ) cancelling to μ) are below HiGHS's absolute
        # tolerances: at γ = 1 − 1e-12 a CMDP with min V_C = 1.4e11 < b = 5e11 was declared infeasible,
        # and at γ = 1 − 1e-10 others unbounded (never true: Σq = 1/(1−γ) bounds the polytope).
        # Such a verdict is checked on the normalised occupancy d = (1−γ)q with the
        # (implied) row Σd = 1, whose entries are O(1); the same LP (objective times 1 − γ, so the
        # marginals are those of the q-LP; the Σd row's multiplier z is z/(1−γ) on every flow row).
        # (each cost row scaled by max(max|c_i|, (1−γ)|b_i|), its size in these units)
        bd = (1.0 - cmdp.gamma) * b
        rho_d = (
            np.where(
                np.maximum(np.max(np.abs(C), axis=1, initial=0.0), np.abs(bd)) > 0,
                np.maximum(np.max(np.abs(C), axis=1, initial=0.0), np.abs(bd)),
                1.0,
            )
            if m
            else np.ones(0)
        )
        res2 = highs_linprog(
            -R / rho_r,
            A_ub=C / rho_d[:, None] if m else None,
            b_ub=bd / rho_d if m else None,
            A_eq=np.vstack([A_eq, np.ones((1, S * A))]),
            b_eq=np.concatenate([(1.0 - cmdp.gamma) * b_eq, [1.0]]),
            bounds=(0, None),
        )
        if res2.status == 0:
            res, infeasible, q_scale, rho_c = res2, False, 1.0 / (1.0 - cmdp.gamma), rho_d
            sum_row = res.eqlin.marginals[S] / (1.0 - cmdp.gamma)
    if infeasible:
        raise SolverError(_infeasibility_message(cmdp, res), status=res.status)
    if res.status != 0:
        raise SolverError(
            f"HiGHS failed on the CMDP LP (status {res.status}): {res.message}", status=res.status
        )
    q = q_scale * np.clip(res.x, 0.0, None).reshape(S, A)
    mass = q.sum(-1)
    visited = mass > 1e-12 * q.sum()
    pi = np.where(visited[:, None], q / np.where(visited, mass, 1.0)[:, None], 1.0 / A)
    # λ ≥ 0 exactly: HiGHS's marginals of slack rows carry round-off of either sign (−2.4e-6 at λ's
    # scale 1e9, i.e. 1e-15 relative), which made dual_function(cmdp, sol.duals) reject the certificate
    # λ = marginal · ρ_r/ρ_c by mantissas and exponents (frexp/ldexp): marginal · ρ_r overflowed for
    # R = (0, 1e307, 0), C = (0, 1, 1e10), b = 0.5 (ρ_c = 1e10) although λ* = 1e307 is in range
    (mr, er), (mc, ec) = np.frexp(rho_r), np.frexp(rho_c)
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        lam = (
            np.maximum(np.ldexp(-res.ineqlin.marginals * (mr / mc), er - ec), 0.0)
            if m
            else np.zeros(0)
        )
        y = -rho_r * (res.eqlin.marginals[: A_eq.shape[0]] + sum_row)
    if cmdp.gamma is None:
        y = np.insert(y, S - 1, 0.0)  # (h, g) with h(S−1) = 0: the dual of the dropped flow row
    if cmdp.gamma is None:
        Ppi = (pi[:, None, :] @ to_numpy(cmdp.mdp.P))[:, 0, :]
        cs = _structures(Ppi)[0]
        if not cs.unichain:
            raise InvalidModelError(
                f"solve_cmdp (average reward): the optimal stationary frequencies split over the "
                f"policy's {cs.describe()}; a stationary policy attains the LP value from every start "
                "only in unichain models (Altman 1999, ch. 4)"
            )
        occ = q
    else:
        occ = (1.0 - cmdp.gamma) * q
    with np.errstate(over="ignore", invalid="ignore"):
        dual_value = float((y[S] if cmdp.gamma is None else mu @ y) + lam @ b)
        value = float(R @ q.reshape(-1))
        costs = C @ q.reshape(-1)
        slack = b - costs
    # the results go to the model's namespace, device and dtype (float64 arrays came back for a float32
    # model, unlike every other solver); the range check is made in that dtype
    out = _ModelArrays(cmdp.mdp)
    costs, slack, lam, y = out(costs), out(slack), out(lam), out(y)
    _check_range(cmdp, out(value), costs, slack, lam, y, out(dual_value))
    rand = tuple(int(s) for s in np.flatnonzero(np.sum(pi > 1e-9, axis=-1) >= 2))
    return CMDPSolution(
        policy=out(pi),
        value=value,
        costs=costs,
        duals=lam,
        occupancy=out(occ),
        slack=slack,
        state_duals=y,
        dual_value=dual_value,
        randomised_states=rand,
    )


class _ModelArrays:
    """A host result as an array of the model's namespace, device and dtype (beyond that dtype's range:
    ``inf``, without a warning; :func:`_check_range` refuses it, located)."""

    def __init__(self, mdp: FiniteMDP) -> None:
        self.like, self.dtype = mdp.P, mdp.dtype

    def __call__(self, x: Any) -> Any:
        with np.errstate(over="ignore"):
            return from_host(np.asarray(x, dtype=np.float64), self.like, self.dtype)


def _check_range(
    cmdp: ConstrainedMDP, value: Any, costs: Any, slack: Any, lam: Any, y: Any, dual_value: Any
) -> None:
    """Refuse (located ``ValueError``) a CMDP solution with a quantity beyond the model's float range.

    The arguments are the answer in the model's dtype. The LP itself is solved at unit scale, but the
    answer scaled back can leave the range: with rewards 1e307 at γ = 0.999 the value
    ``V* = 5e309`` came back as ``inf`` (duals ``inf``, duality gap NaN, overflow warnings), and with
    costs 1e-310 beside unit rewards the multiplier ``λ* = ∂V*/∂b = 1e310`` came back as ``inf``; a
    float32 model leaves its range at 3.4e38. The value, the flow duals and the dual value scale with
    ``R`` and are refused by :func:`rltheory.mdp.bellman._check_in_range`, as the discounted solvers
    refuse theirs; ``V_{C_i}`` and the slack scale with ``C_i`` and ``λ_i`` with ``R/C_i``, so those
    messages name that constraint and its remedy (``(C_i, b_i)`` divided or multiplied by a power of 2,
    which is exact).
    """
    if cmdp.gamma is None:

        def scale(M: float) -> str:
            return f"(average reward: |gain| <= max|R| = {M:.4g})"
    else:
        scale = _discounted_scale(float(cmdp.gamma))
    _check_in_range(cmdp.mdp, value, "solve_cmdp", "the optimal value V_R(μ)", (), scale)
    h_costs, h_slack, h_lam = (
        np.asarray(to_numpy(x), dtype=np.float64) for x in (costs, slack, lam)
    )
    dt = cmdp.mdp.dtype
    R = np.abs(np.asarray(to_numpy(cmdp.mdp.R), dtype=np.float64))
    sizes = f"max|R| = {R.max():.4g}" + (
        "" if cmdp.gamma is None else f" at gamma = {cmdp.gamma!r}"
    )
    for i in range(cmdp.m):
        ci = float(np.max(np.abs(to_numpy(cmdp.C[i, ...]))))
        bi = float(cmdp.b[i])
        if not (math.isfinite(h_costs[i]) and math.isfinite(h_slack[i])):
            where = f"the optimal policy's cost V_C{i}(μ) = {h_costs[i]} (slack {h_slack[i]})"
            remedy = (
                f"max|C{i}| = {ci:.4g}, b[{i}] = {bi:.4g}; costs scale with C{i}: solve with C[{i}] and b[{i}] "
                f"divided by a power of 2 (λ[{i}] is then multiplied by it)"
            )
        elif not math.isfinite(h_lam[i]):
            where = f"the multiplier λ[{i}] = ∂V*/∂b[{i}] = {h_lam[i]}"
            remedy = (
                f"{sizes}, max|C{i}| = {ci:.4g}, b[{i}] = {bi:.4g}; λ[{i}] scales with R/C{i}: solve with "
                f"C[{i}] and b[{i}] multiplied by a power of 2 (or R divided by one) and scale λ[{i}] back"
            )
        else:
            continue
        raise ValueError(
            f"solve_cmdp: {where} left the {dt} range (largest {float(cmdp.mdp.xp.finfo(dt).max):.4g}); {remedy}"
        )
    _check_in_range(
        cmdp.mdp, y, "solve_cmdp", "the flow duals (the Lagrangian MDP's values)", ("s",), scale
    )
    _check_in_range(cmdp.mdp, dual_value, "solve_cmdp", "the dual value", (), scale)
