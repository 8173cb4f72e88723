r"""The CMDP frontier: optimal value against the threshold, multipliers and randomisation.

``cmdp-frontier`` — for a random discounted CMDP with one constraint (panel 1) and a
random average-reward CMDP (panel 2), sweep the threshold ``b`` from the smallest
achievable cost to the cost of the unconstrained optimum and solve each CMDP exactly
(:func:`rltheory.mdp.solve_cmdp`). With two constraints (panel 3) the thresholds move
together along ``b = b_min + s (b_free − b_min)``.

Claims, for every panel and every ``b`` on the grid:

1. *concave and non-decreasing* — ``V*(b)`` is the value of a parametric LP in its
   right-hand side, hence concave and non-decreasing (Altman 1999, ch. 3; LP
   sensitivity): second differences ``≤ 0`` and first differences ``≥ 0`` up to
   ``1e-9·(1 + |V*|)`` (HiGHS tolerance 1e-10 on values of size ``|V*|``).
2. *multiplier = slope* — ``λ*(b)`` lies between the right and left difference quotients
   of ``V*`` at step ``h = 1e-6·scale`` (it is a supergradient), up to ``1e-4`` (the
   ``1e-10`` LP accuracy divided by ``h``).
3. *strong duality* — ``|V*(b) − D(λ*(b))| ≤ 1e-8·(1 + |V*|)(1 + ‖λ*‖₁)`` with ``D`` the
   dual function computed independently by policy iteration on the Lagrangian reward
   (the LP's 1e-10 feasibility errors enter ``D`` weighted by ``λ*``, which grows without
   bound as ``b`` approaches the edge of feasibility).
4. *randomisation* — the optimal (basic) policy randomises in at most ``m`` states
   (Altman 1999, Thm 3.8).

References
----------
Altman, E. (1999). *Constrained Markov Decision Processes*. Chapman & Hall/CRC. Ch. 3–4.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bounds.rates import Claim, check_bound
from ..errors import SolverError
from ..mdp import ConstrainedMDP, FiniteMDP, dual_function, evaluate_cmdp, solve_cmdp
from ..plot import figure
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = ["Config", "run", "plot", "frontier", "EXPERIMENT"]

SOURCE = "Altman (1999), Constrained MDPs, ch. 3 (LP, Thms 3.6 and 3.8)"


@dataclass(frozen=True)
class Config:
    """Sizes and grid of the frontier.

    Attributes
    ----------
    states, actions : int
    gamma : float
        Discount of panels 1 and 3 (panel 2 is average reward).
    n_thresholds : int
        Points on the threshold grid.
    """

    states: int = 6
    actions: int = 3
    gamma: float = 0.9
    n_thresholds: int = 25

    @classmethod
    def quick(cls) -> Config:
        """S = 6, A = 3, 25 thresholds per panel: a couple of seconds."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """S = 30, A = 5, 80 thresholds per panel."""
        return cls(states=30, actions=5, n_thresholds=80)


def _model(config: Config, gamma: float | None, m: int, seed: int) -> tuple[FiniteMDP, np.ndarray]:
    rng = np.random.default_rng(seed)
    S, A = config.states, config.actions
    P = rng.random((S, A, S)) ** 3
    P /= P.sum(-1, keepdims=True)
    if gamma is None:
        P = 0.95 * P + 0.05 / S  # unichain
    R = rng.random((S, A))
    C = rng.random((m, S, A)) + 0.5 * R[None]  # costs correlated with rewards: a real trade-off
    return FiniteMDP(P, R, gamma), C


def _endpoints(mdp: FiniteMDP, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per constraint: the smallest achievable cost, and the cost of the unconstrained optimum."""
    m = C.shape[0]
    low = np.array(
        [
            -dual_function(ConstrainedMDP(mdp.replace(R=-C[i]), C[:0], np.zeros(0)), np.zeros(0))[0]
            for i in range(m)
        ]
    )
    free = solve_cmdp(ConstrainedMDP(mdp, C[:0], np.zeros(0)))
    _, c_free = evaluate_cmdp(ConstrainedMDP(mdp, C, np.zeros(m)), free.policy)
    return low, np.asarray(c_free)


def _first_feasible(mdp: FiniteMDP, C: np.ndarray, low: np.ndarray, high: np.ndarray) -> float:
    """Smallest ``s ∈ [0, 1]`` (to 1e-6, from above) with ``b_min + s (b_free − b_min)`` feasible (``s = 1`` is)."""

    def feasible(s: float) -> bool:
        try:
            solve_cmdp(ConstrainedMDP(mdp, C, low + s * (high - low)))
        except SolverError as exc:
            if exc.status != 2:
                raise
            return False
        return True

    if feasible(0.0):
        return 0.0
    a, b = 0.0, 1.0
    while b - a > 1e-6:
        mid = 0.5 * (a + b)
        a, b = (a, mid) if feasible(mid) else (mid, b)
    return b


def frontier(mdp: FiniteMDP, C: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Solve the CMDP along ``b(s) = b_min + s (b_free − b_min)``, ``s ∈ [s_min, 1.1]``; with derivatives.

    ``b_min`` holds each constraint's own minimum; with several constraints ``s = 0`` may be
    jointly infeasible, so the grid starts at the smallest feasible ``s_min`` (bisection).

    Returns ``s``, ``b`` (n, m), ``value``, ``duals`` (n, m), ``dual_gap``
    (``|V − D(λ*)| / ((1 + |V|)(1 + ‖λ*‖₁))``),
    ``randomised`` (counts), ``slope_violation`` (how far λ·db/ds leaves the
    [right, left] difference-quotient interval along the path) and the endpoints.
    """
    low, high = _endpoints(mdp, C)
    s_lo = _first_feasible(mdp, C, low, high)
    s = np.linspace(s_lo, 1.1, n)
    scale = float(np.max(np.abs(high - low))) + 1e-300
    h = 1e-6
    vals, duals, gaps, rand, viol, bs = [], [], [], [], [], []
    for i, si in enumerate(s):
        b = low + si * (high - low)
        sol = solve_cmdp(ConstrainedMDP(mdp, C, b))
        lam = np.asarray(sol.duals)
        D, _ = dual_function(ConstrainedMDP(mdp, C, b), lam)
        vals.append(sol.value)
        duals.append(lam)
        gaps.append(abs(sol.value - D) / ((1 + abs(sol.value)) * (1 + float(np.sum(lam)))))
        rand.append(len(sol.randomised_states))
        bs.append(b)
        # directional derivative along db = (high − low) ds: λ·db lies in [right, left] quotients
        up = solve_cmdp(ConstrainedMDP(mdp, C, b + h * (high - low))).value
        d = float(lam @ (high - low))
        right, left = (
            (up - sol.value) / h,
            np.inf,
        )  # at the first (possibly boundary) point: right only
        if i > 0:
            left = (sol.value - solve_cmdp(ConstrainedMDP(mdp, C, b - h * (high - low))).value) / h
        viol.append(max(0.0, right - d, d - left) / scale)
    return {
        "s": s,
        "b": np.array(bs),
        "value": np.array(vals),
        "duals": np.array(duals),
        "dual_gap": np.array(gaps),
        "randomised": np.array(rand),
        "slope_violation": np.array(viol),
        "low": low,
        "high": high,
    }


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Trace the three frontiers and check concavity, λ = slope, strong duality and ≤ m randomised states."""
    seed = check_run_seed(seed)
    t0 = time.perf_counter()
    panels = {
        "discounted, m=1": (config.gamma, 1),
        "average reward, m=1": (None, 1),
        "discounted, m=2": (config.gamma, 2),
    }
    curves: dict[str, dict[str, list]] = {}
    checks = []
    meta: dict[str, Any] = {"seed": seed, "endpoints": {}}
    for k, (name, (gamma, m)) in enumerate(panels.items()):
        mdp, C = _model(config, gamma, m, seed + k)
        fr = frontier(mdp, C, config.n_thresholds)
        v = fr["value"]
        tol = 1e-9 * (1 + np.abs(v).max())
        curves[name] = {
            "s": fr["s"].tolist(),
            "value": v.tolist(),
            "duals": fr["duals"].tolist(),
            "randomised": fr["randomised"].tolist(),
            "b": fr["b"].tolist(),
        }
        n = v.size
        checks.append(
            Claim(
                f"{name}-concave",
                f"{name}: V*(b) concave (second differences ≤ {tol:.1g})",
                SOURCE,
                None,
                "bound",
            ).check(check_bound(np.diff(v, 2), np.full(n - 2, tol)))
        )
        checks.append(
            Claim(
                f"{name}-monotone",
                f"{name}: V*(b) non-decreasing (−first differences ≤ {tol:.1g})",
                SOURCE,
                None,
                "bound",
            ).check(check_bound(-np.diff(v), np.full(n - 1, tol)))
        )
        checks.append(
            Claim(
                f"{name}-slope",
                f"{name}: λ*·db lies between the right and left difference quotients of V* "
                "(relative violation ≤ 1e-4: LP accuracy 1e-10 over step 1e-6)",
                SOURCE,
                None,
                "bound",
            ).check(check_bound(fr["slope_violation"], np.full(n, 1e-4)))
        )
        checks.append(
            Claim(
                f"{name}-duality",
                f"{name}: |V*(b) − D(λ*(b))| ≤ 1e-8 (1+|V*|)(1+‖λ*‖₁) (dual function by policy "
                "iteration)",
                SOURCE,
                None,
                "bound",
            ).check(check_bound(fr["dual_gap"], np.full(n, 1e-8)))
        )
        checks.append(
            Claim(
                f"{name}-randomised",
                f"{name}: the optimal basic policy randomises in ≤ m = {m} states",
                "Altman (1999), Thm 3.8",
                None,
                "bound",
            ).check(check_bound(fr["randomised"].astype(float), np.full(n, float(m))))
        )
        meta["endpoints"][name] = {
            "b_min": fr["low"].tolist(),
            "b_free": fr["high"].tolist(),
            "m": m,
            "gamma": gamma,
        }
        if progress:
            print(f"{name}: done")
    meta["wall_time_s"] = time.perf_counter() - t0
    return ExperimentResult(
        name="cmdp-frontier", config=config_to_dict(config), curves=curves, checks=checks, meta=meta
    )


def plot(result: ExperimentResult) -> Any:
    """Per panel: V*(b) with λ* on a twin axis (top) and the number of randomised states (bottom)."""
    names = list(result.curves)
    fig, axes = figure(2, len(names), width=4.3, height=3.0)
    for j, name in enumerate(names):
        c = result.curves[name]
        s = np.asarray(c["s"])
        m = result.meta["endpoints"][name]["m"]
        ax = axes[0, j]
        ax.plot(s, c["value"], "o-", ms=3, color="tab:blue", label="V*(b)")
        ax.axvline(1.0, color="gray", lw=0.8, ls=":")
        ax.set_title(name)
        ax.set_xlabel("s: b = b_min + s (b_free − b_min)")
        tw = ax.twinx()
        d = np.asarray(c["duals"])
        for i in range(d.shape[1]):
            tw.step(s, d[:, i], where="mid", color="tab:red", lw=1, ls="--", label=f"λ*_{i}")
        tw.set_ylabel("multiplier λ*", color="tab:red")
        ax.legend(loc="lower right", fontsize="small")
        ax = axes[1, j]
        ax.step(s, c["randomised"], where="mid", color="tab:purple", label="randomised states")
        ax.axhline(m, color="black", ls="--", lw=1, label=f"m = {m}")
        ax.set_ylim(-0.2, m + 1)
        ax.set_xlabel("s")
        ax.legend(fontsize="small")
    fig.suptitle("CMDP frontier: concave value, multipliers = slopes, ≤ m randomised states")
    return fig


EXPERIMENT = register(
    Experiment(
        name="cmdp-frontier",
        title="CMDP value vs threshold b: concave, λ* = slope, zero duality gap, ≤ m randomised states (Altman 1999)",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
