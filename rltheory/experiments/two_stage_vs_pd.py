r"""Two-stage constrained actor-critic vs primal-dual on a constrained gridworld.

Model: a slippery gridworld (:func:`rltheory.mdp.gridworld`) whose rewarding goal
(top-right) lies behind a hazard column open only in the bottom row; the cost is
1 per step spent in a hazard cell, and the constraint caps the discounted hazard time, ``V_c^π(μ) ≤ b``, with
``b`` a fraction of the way between the smallest achievable hazard time and that
of the unconstrained optimum.

Figure (SEEDS P02): the exact Pareto front ``b ↦ V*(b)`` of the CMDP
(:func:`rltheory.mdp.solve_cmdp` over a grid of thresholds), the points
``(V_c, V_r)`` of the two-stage heuristic (:func:`rltheory.algorithms.constrained.two_stage_constrained_ac`)
as its KL weight sweeps a geometric grid, the calibrated two-stage point (the
smallest weight meeting ``b``), and the averaged NPG-PD policy at ``b``.

Claims checked:

1. *dominance* — every two-stage point lies on or below the LP front: its value is
   at most ``V*(b')`` at its own cost ``b'`` (allowance 1e-7 for the LP tolerance);
   the heuristic trades the main return against KL proximity to the auxiliary
   policies, not against the constraint;
2. *primal-dual reaches the front* — the averaged NPG-PD policy's value and cost are
   within the gap and violation bounds of :func:`rltheory.bounds.constrained.npg_pd_bounds`
   of the LP solution at ``b`` (Ding et al. 2020, Thm 1);
3. *calibrated two-stage is feasible and suboptimal* — its cost is ``≤ b`` and its
   value ``≤ V*(b)``; the gap ``V*(b) − V_2s`` is reported in ``meta``.

References
----------
Cai, Q. et al. (2023). Two-stage constrained actor-critic for short video recommendation. WWW.
Ding, D., Zhang, K., Başar, T., Jovanović, M. R. (2020). NPG primal-dual method for CMDPs. NeurIPS.
Altman, E. (1999). Constrained Markov Decision Processes. Thm 3.2 (occupancy LP).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_int, check_real
from ..algorithms.constrained import (
    npg_primal_dual,
    slater_slack,
    two_stage_calibrated,
    two_stage_constrained_ac,
)
from ..bounds import Claim, check_bound
from ..bounds.constrained import npg_pd_bounds, npg_pd_step_sizes, slater_dual_radius
from ..mdp import gridworld, policy_iteration
from ..mdp.constrained import ConstrainedMDP, evaluate_cmdp, solve_cmdp
from ..plot import figure
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = ["Config", "run", "plot", "hazard_gridworld", "EXPERIMENT"]


@dataclass(frozen=True)
class Config:
    """Grid, constraint, sweeps.

    Attributes
    ----------
    size : int
        Grid side.
    slip, gamma : float
    threshold : float
        ``b`` at this fraction between the smallest hazard time and the unconstrained optimum's.
    tau : float
        Stage-1 temperature of the two-stage method.
    weights : tuple of float
        KL weights swept.
    front_points : int
        Thresholds of the LP front.
    iterations : int
        NPG-PD horizon.
    eta1 : float
        NPG-PD primal step (any ``η_1 > 0`` is covered by the bound; see the ``npg-primal-dual`` experiment).
    """

    size: int = 5
    slip: float = 0.2
    gamma: float = 0.9
    threshold: float = 0.4
    tau: float = 0.1
    weights: tuple[float, ...] = tuple(float(w) for w in np.geomspace(0.01, 10.0, 10))
    front_points: int = 15
    iterations: int = 3000
    eta1: float = 1.0

    @classmethod
    def quick(cls) -> Config:
        """5×5 grid, 10 weights, NPG-PD T = 3000."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """7×7 grid, 20 weights, 30 front points, T = 10000."""
        return cls(
            size=7,
            weights=tuple(float(w) for w in np.geomspace(0.005, 20.0, 20)),
            front_points=30,
            iterations=10000,
        )


def hazard_gridworld(size: int, slip: float, gamma: float, threshold: float) -> ConstrainedMDP:
    """Start top-left, goal top-right, a hazard column in the middle open only in the bottom row:
    the direct route crosses the hazard, the safe one detours by ``2(size−1)`` steps. Cost 1 for every
    step taken from a hazard cell. ``b`` lies the fraction ``threshold`` of the way from the smallest
    achievable discounted hazard time to the unconstrained optimum's.

    Raises
    ------
    ValueError
        ``size < 3`` (the hazard column would reach the goal), ``threshold`` outside ``[0, 1]``, or a
        bad ``slip``/``gamma`` (from :func:`rltheory.mdp.gridworld`).
    """
    size = check_int(size, "size", 3)
    threshold = check_real(threshold, "threshold", low=0.0, high=1.0)
    gw = gridworld(size, slip=slip, gamma=gamma, goals=[(0, size - 1)])
    mdp = gw.mdp
    hazards = [(r, size // 2) for r in range(size - 1)]
    C = np.zeros((1, mdp.S, mdp.A))
    for cell in hazards:
        C[0, gw.state_of(*cell), :] = 1.0
    mu = np.asarray(mdp.initial_distribution())
    lo = -float(np.asarray(policy_iteration(mdp.replace(R=-C[0])).V) @ mu)
    pi_star = policy_iteration(mdp).policy
    hi = float(evaluate_cmdp(ConstrainedMDP(mdp, C, np.zeros(1)), pi_star)[1][0])
    return ConstrainedMDP(mdp, C, np.array([lo + threshold * (hi - lo)]))


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """LP front, two-stage sweep, calibrated two-stage and NPG-PD; the three claims."""
    seed = check_run_seed(seed)
    t0 = time.perf_counter()
    cmdp = hazard_gridworld(config.size, config.slip, config.gamma, config.threshold)
    b = float(np.asarray(cmdp.b)[0])
    sol = solve_cmdp(cmdp)
    mu = np.asarray(cmdp.mdp.initial_distribution())
    lo = -float(np.asarray(policy_iteration(cmdp.mdp.replace(R=-np.asarray(cmdp.C)[0])).V) @ mu)
    hi = float(evaluate_cmdp(cmdp, policy_iteration(cmdp.mdp).policy)[1][0])
    bs = np.linspace(lo + 1e-9, hi, config.front_points)
    front = [solve_cmdp(ConstrainedMDP(cmdp.mdp, cmdp.C, np.array([bb]))).value for bb in bs]
    pts_v, pts_c, lp_at = [], [], []
    for w in config.weights:
        r = two_stage_constrained_ac(cmdp, weights=[w], tau=config.tau)
        pts_v.append(r.value)
        pts_c.append(float(r.costs[0]))
        lp_at.append(solve_cmdp(ConstrainedMDP(cmdp.mdp, cmdp.C, r.costs + 1e-9)).value)
    cal = two_stage_calibrated(cmdp, tau=config.tau)
    xi, _ = slater_slack(cmdp)
    g = config.gamma
    R, C = np.asarray(cmdp.mdp.R), np.asarray(cmdp.C)
    Lam, lam_star = slater_dual_radius(gamma=g, slack=xi, reward_span=float(np.ptp(R)))
    e2 = npg_pd_step_sizes(config.iterations, gamma=g, n_actions=cmdp.A)[1]
    e1 = config.eta1
    pd = npg_primal_dual(
        cmdp, iterations=config.iterations, eta1=e1, eta2=e2, Lambda=Lam, reference=sol.value
    )
    v_pd, c_pd = evaluate_cmdp(cmdp, pd.average_policy)
    Gd = max(b - C.min() / (1 - g), C.max() / (1 - g) - b)
    bd = npg_pd_bounds(
        [config.iterations],
        gamma=g,
        eta1=e1,
        eta2=e2,
        Lambda=Lam,
        cost_deviation=Gd,
        n_actions=cmdp.A,
        reward_span=float(np.ptp(R)),
        cost_span=float(np.ptp(C)),
        lam_star_l1=lam_star,
    )
    src2 = "Cai et al. (2023) two-stage CAC (tabular form); LP front: Altman (1999), Thm 3.2"
    checks = [
        Claim(
            "two-stage-dominated",
            "every two-stage point: V_r ≤ V*(b' = its own cost) (LP front), allowance 1e-7",
            src2,
            None,
            "bound",
        ).check(check_bound(pts_v, lp_at, atol=1e-7)),
        Claim(
            "pd-reaches-front",
            f"averaged NPG-PD policy (T={config.iterations}): |V_r − V*(b)| and "
            "[V_c − b]_+ within the Thm 1 bounds",
            "Ding et al. (2020), Theorem 1",
            None,
            "bound",
        ).check(
            check_bound(
                [abs(v_pd - sol.value), max(float(np.asarray(c_pd)[0]) - b, 0.0)],
                [float(bd.gap[0]), float(bd.violation[0])],
                atol=1e-9,
            )
        ),
        Claim(
            "calibrated-two-stage",
            "calibrated two-stage: cost ≤ b and value ≤ V*(b)",
            src2,
            None,
            "bound",
        ).check(check_bound([float(cal.costs[0]), cal.value], [b, sol.value], atol=1e-9)),
    ]
    curves = {
        "front": {"b": bs.tolist(), "value": front},
        "two_stage": {
            "weight": list(config.weights),
            "cost": pts_c,
            "value": pts_v,
            "lp_at_cost": lp_at,
        },
        "points": {
            "b": [b],
            "lp_value": [sol.value],
            "pd_cost": [float(np.asarray(c_pd)[0])],
            "pd_value": [v_pd],
            "cal_cost": [float(cal.costs[0])],
            "cal_value": [cal.value],
            "cal_weight": [float(cal.weights[0])],
        },
        "pd_trace": {
            "t": pd.trace.iteration.tolist(),
            "avg_gap": pd.trace["avg_gap"].tolist(),
            "avg_violation": pd.trace["avg_violation"].tolist(),
        },
    }
    return ExperimentResult(
        name="two-stage-vs-pd",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta={
            "seed": seed,
            "b": b,
            "V_star": sol.value,
            "two_stage_gap": sol.value - cal.value,
            "pd_value": v_pd,
            "wall_time_s": time.perf_counter() - t0,
        },
    )


def plot(result: ExperimentResult) -> Any:
    """Pareto plane (hazard time, return): LP front, two-stage sweep, calibrated point, NPG-PD; PD trace."""
    fig, axes = figure(1, 2, width=4.8, height=3.7)
    ax = axes[0, 0]
    f, ts, p = result.curves["front"], result.curves["two_stage"], result.curves["points"]
    ax.plot(f["b"], f["value"], "k-", lw=1.6, label="LP front V*(b) (exact)")
    sc = ax.scatter(
        ts["cost"],
        ts["value"],
        c=np.log10(ts["weight"]),
        cmap="viridis",
        s=22,
        zorder=3,
        label="two-stage, KL weight swept",
    )
    fig.colorbar(sc, ax=ax, label="log10 KL weight")
    ax.plot(
        p["cal_cost"], p["cal_value"], "D", color="C3", ms=7, label="two-stage, calibrated to b"
    )
    ax.plot(p["pd_cost"], p["pd_value"], "*", color="C1", ms=11, label="NPG-PD (averaged)")
    ax.axvline(p["b"][0], color="gray", ls=":", lw=1, label="threshold b")
    ax.set_xlabel("discounted hazard time V_c")
    ax.set_ylabel("return V_r")
    ax.set_title("constrained gridworld: Pareto plane")
    ax.legend(fontsize=7, loc="lower right")
    tr = result.curves["pd_trace"]
    ax = axes[0, 1]
    t = np.asarray(tr["t"], dtype=float)
    for key, col in (("avg_gap", "C0"), ("avg_violation", "C1")):
        y = np.abs(np.asarray(tr[key], dtype=float))
        ax.plot(t, np.where(y > 0, y, np.nan), color=col, label=key.replace("_", " "))
    ax.plot(t, np.abs(tr["avg_gap"])[0] / np.sqrt(t), "k--", lw=1, label="∝ 1/√t")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("t")
    ax.set_title("NPG-PD running averages")
    ax.legend(fontsize=7)
    fig.suptitle(
        "Two-stage constrained AC traces a sub-front; averaged primal-dual approaches the LP front"
    )
    return fig


EXPERIMENT = register(
    Experiment(
        name="two-stage-vs-pd",
        title="Two-stage constrained AC vs NPG primal-dual on a hazard gridworld against the exact LP Pareto front",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
