r"""Primal-dual policy gradient with general utilities: FOSP residual vs T against O(T^{-2/3}).

Problem: maximise the concave utility ``F(d) = ⟨r, d⟩ + β H(d)`` (reward plus
occupancy entropy, the utility of the networked experiments of Ying et al.
2023) subject to a linear cost constraint ``⟨c, d⟩ ≤ b`` chosen halfway between
the unconstrained optimum's cost and the smallest achievable cost, on a random
MDP. For each horizon ``T`` the exact primal-dual method
(:func:`rltheory.algorithms.constrained.general_utility_primal_dual`, primal
step through the shadow reward ``∇F − μ∇G``) runs with the schedule of
:func:`rltheory.bounds.constrained.fosp_schedule`: dual regularisation
``δ = δ_0 T^{-1/3}``. The figure plots the FOSP residual
(:func:`~rltheory.algorithms.constrained.fosp_residual`, the squared gradient
mapping of the *unregularised* Lagrangian) at the output iterate ``θ_T`` against
``T`` with the ``T^{-2/3}`` curve, and the trace of the longest run.

Claims checked:

1. *rate* — the log–log slope of the FOSP residual at ``θ_T`` against ``T`` is
   ``−2/3`` within its bootstrap CI widened by 0.1 (SEEDS P01: "slope −2/3 ± 0.1").
   At ``θ_T`` the primal gradient has vanished and the residual is the
   regularisation bias ``(δ μ_δ)²``; the slope tends to ``−2/3`` once ``δ`` is small
   against the constraint's sensitivity to the multiplier (``μ_δ → μ*``), which
   the default ``δ_0 = 0.05`` ensures;
2. *reduction* — with a linear utility ``F = ⟨r, d⟩`` and ``G = ⟨c, d⟩`` the
   iterates coincide with the CMDP Lagrangian policy gradient
   (:func:`~rltheory.algorithms.constrained.lagrangian_policy_gradient`) to 1e-9;
3. *feasibility* — the last iterate of the longest run violates the constraint by
   at most ``δ μ_δ`` (the dual stationarity of the regularised problem,
   ``G − b = δμ``) plus 1e-9.

References
----------
Ying, D., Zhang, Y., Ding, Y., Koppel, A., Lavaei, J. (2023). Scalable primal-dual
actor-critic method for safe multi-agent RL with general utilities. NeurIPS (exact
setting: FOSP at rate O(T^{-2/3})).
Zhang, J. et al. (2020). Variational policy gradient method for RL with general utilities.
NeurIPS (shadow reward).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_real
from ..algorithms.constrained import general_utility_primal_dual, lagrangian_policy_gradient
from ..bounds import Claim, RateFit, check_bound, fit_rate
from ..bounds.constrained import FOSP_EXPONENT, fosp_rate, fosp_schedule
from ..mdp import FiniteMDP
from ..mdp.constrained import ConstrainedMDP
from ..mdp.utility import OccupancyFunction, entropy_utility, linear_utility, solve_general_utility
from ..plot import convergence_plot, figure
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = ["Config", "run", "plot", "entropy_regularized_problem", "EXPERIMENT"]

RATE_TOL = 0.1


@dataclass(frozen=True)
class Config:
    """Model and schedule.

    Attributes
    ----------
    S, A, gamma : model size and discount.
    beta : float
        Entropy weight of the utility.
    horizons : tuple of int
    eta_theta, eta_mu, delta_scale : float
        Schedule of :func:`fosp_schedule`.
    model_seed : int
    """

    S: int = 4
    A: int = 3
    gamma: float = 0.8
    beta: float = 0.1
    horizons: tuple[int, ...] = (200, 400, 800, 1600)
    eta_theta: float = 10.0
    eta_mu: float = 1.0
    delta_scale: float = 0.05
    model_seed: int = 0

    @classmethod
    def quick(cls) -> Config:
        """T up to 1600 on a 4×3 model: a few seconds."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """T up to 25600."""
        return cls(horizons=(200, 400, 800, 1600, 3200, 6400, 12800, 25600))


def entropy_regularized_problem(S: int, A: int, gamma: float, beta: float, seed: int) -> tuple:
    """``(mdp, F, G, b)``: ``F = ⟨r, d⟩ + β H(d)``, ``G = ⟨c, d⟩``, ``b`` halfway between the unconstrained
    optimum's cost and the smallest achievable cost.

    Raises
    ------
    ValueError
        ``beta`` negative or not finite (``F`` must stay concave), or a bad ``S``/``A``/``gamma``
        (from :class:`rltheory.mdp.FiniteMDP`).
    """
    beta = check_real(beta, "beta", low=0.0)
    rng = np.random.default_rng(seed)
    mdp = FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), gamma)
    R = np.asarray(mdp.R)
    H = entropy_utility(S, A)
    lin = linear_utility(R)
    F = OccupancyFunction(
        "reward+entropy",
        "concave",
        lambda d: lin.expression(d) + beta * H.expression(d),
        lambda d: lin.value(d) + beta * H.value(d),
        lambda d: R + beta * H.gradient(d),
        (S, A),
    )
    C = rng.random((S, A))
    G = linear_utility(C)
    free = solve_general_utility(mdp, F)
    cmin = -solve_general_utility(mdp, linear_utility(-C)).value
    return mdp, F, G, 0.5 * (G.value(free.occupancy) + cmin)


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """FOSP residual at θ_T for each T; reduction and feasibility checks (module docstring)."""
    seed = check_run_seed(seed)
    t0 = time.perf_counter()
    mdp, F, G, b = entropy_regularized_problem(
        config.S, config.A, config.gamma, config.beta, config.model_seed
    )
    sol = solve_general_utility(mdp, F, [(G, b)])
    Ts = np.asarray(config.horizons)
    fosp, deltas, duals = [], [], []
    last = None
    iterator = Ts
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        iterator = tqdm(Ts, desc="general-utility-pd")
    for T in iterator:
        et, em, de = fosp_schedule(
            int(T), eta_theta=config.eta_theta, eta_mu=config.eta_mu, delta_scale=config.delta_scale
        )
        res = general_utility_primal_dual(
            mdp,
            F,
            [(G, b)],
            iterations=int(T),
            eta_theta=et,
            eta_mu=em,
            Lambda=10.0,
            delta=de,
            reference=sol.value,
        )
        fosp.append(float(res.trace["fosp"][-1]))
        deltas.append(de)
        duals.append(float(res.duals[0]))
        last = res
    fosp = np.asarray(fosp)
    src = "Ying et al. (2023), exact-setting FOSP rate O(T^{-2/3}); SEEDS P01 (slope −2/3 ± 0.1)"
    fit = fit_rate(Ts, fosp, seed=seed)
    checks = [
        Claim(
            "fosp-rate",
            f"FOSP residual at θ_T vs T: log-log slope −2/3 (CI ± {RATE_TOL})",
            src,
            FOSP_EXPONENT,
            "rate",
            RATE_TOL,
        ).check(fit)
    ]
    # reduction to the CMDP Lagrangian policy gradient for linear utilities
    g = config.gamma
    C = np.asarray(G.gradient(np.zeros((config.S, config.A))))
    cmdp = ConstrainedMDP(mdp, C[None], np.array([b / (1 - g)]))
    gu = general_utility_primal_dual(
        mdp,
        linear_utility(np.asarray(mdp.R)),
        [(G, b)],
        iterations=200,
        eta_theta=10.0,
        eta_mu=1.0,
        Lambda=10.0,
        reference=0.0,
    )
    lp = lagrangian_policy_gradient(
        cmdp,
        iterations=200,
        eta_theta=10.0 * (1 - g),
        eta_lambda=1.0 * (1 - g),
        Lambda=10.0,
        reference=0.0,
    )
    diff = np.array(
        [float(np.max(np.abs(gu.theta - lp.theta))), float(np.max(np.abs(gu.duals - lp.duals)))]
    )
    checks.append(
        Claim(
            "linear-reduction",
            "linear F and G: general-utility PD iterates = CMDP Lagrangian PG "
            "iterates (steps in value units) to 1e-9",
            "Zhang et al. (2020), chain rule; rltheory.algorithms.constrained",
            None,
            "bound",
        ).check(check_bound(diff, [1e-9, 1e-9]))
    )
    viol = float(last.trace["violation"][-1])
    checks.append(
        Claim(
            "feasibility",
            "last iterate of the longest run: [G − b]_+ ≤ δ μ_T + 1e-9 "
            "(regularised dual stationarity)",
            src,
            None,
            "bound",
        ).check(check_bound([viol], [deltas[-1] * duals[-1] + 1e-9]))
    )
    C0 = fosp[0] * Ts[0] ** (-FOSP_EXPONENT)
    curves = {
        "vs-T": {
            "T": Ts.tolist(),
            "fosp": fosp.tolist(),
            "rate": fosp_rate(Ts, C=C0).tolist(),
            "delta": deltas,
            "dual": duals,
        },
        "trace": {
            "t": (last.trace.iteration + 1).tolist(),
            "fosp": last.trace["fosp"].tolist(),
            "violation": last.trace["violation"].tolist(),
            "gap": last.trace["gap"].tolist(),
            "lam": last.trace["lam_norm"].tolist(),
        },
    }
    return ExperimentResult(
        name="general-utility-pd",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta={
            "seed": seed,
            "fit": fit.to_dict(),
            "F_star": sol.value,
            "dual_star": float(sol.duals[0]),
            "b": float(b),
            "wall_time_s": time.perf_counter() - t0,
        },
    )


def plot(result: ExperimentResult) -> Any:
    """FOSP residual vs T with the T^{-2/3} curve; the longest run's trace."""
    fig, axes = figure(1, 2, width=4.8, height=3.6)
    c = result.curves["vs-T"]
    convergence_plot(
        axes[0, 0],
        c["T"],
        c["fosp"],
        label="FOSP residual at θ_T",
        bound=c["rate"],
        bound_label="C·T^(-2/3) (through the first point)",
        fit=RateFit.from_dict(result.meta["fit"]),
    )
    axes[0, 0].set_xlabel("T")
    axes[0, 0].set_title("general-utility primal-dual: stationarity")
    tr = result.curves["trace"]
    ax = axes[0, 1]
    t = np.asarray(tr["t"], dtype=float)
    for key, col in (("fosp", "C0"), ("violation", "C1")):
        y = np.asarray(tr[key], dtype=float)
        ax.plot(t, np.where(y > 0, y, np.nan), color=col, lw=1.3, label=key)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("t")
    ax.set_title(
        f"trace, T = {int(t[-1])} (dual → {result.curves['vs-T']['dual'][-1]:.3f}, "
        f"μ* = {result.meta['dual_star']:.3f})"
    )
    ax.legend(fontsize=8)
    fig.suptitle(
        "Ying et al. (2023): FOSP of the primal-dual method with general utilities, O(T^-2/3)"
    )
    return fig


EXPERIMENT = register(
    Experiment(
        name="general-utility-pd",
        title="General-utility primal-dual PG: FOSP residual vs T against O(T^-2/3) (Ying et al. 2023)",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
