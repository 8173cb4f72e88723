r"""Policy mirror descent: linear rate with geometrically increasing steps, ``O(1/k)`` with constant steps.

Figure, left (semilog): ``Δ_k = E_{s∼ν}[V*(s) − V^{π_k}(s)]`` for KL and Euclidean PMD with
``η_k = η_0 γ^{-k}`` on a garnet, where ``ν`` is the stationary distribution of
``P_{π*}``, with the bound ``γ^k(Δ_0 + D_0/(γη_0))`` and the fitted rate overlaid; right
(log–log): the constant-step KL run (``ρ`` uniform) against
``(D_0/((1−γ)η) + span(r)/(1−γ)^2)/k``.

Claims checked:

1. *kl-bound*, *euclid-bound* — ``Δ_k(ν) ≤ γ^k (Δ_0(ν) + D_0(ν)/(γη_0))`` at every ``k``,
   ``D_0`` the ``ν``-average Bregman divergence (KL or ``½‖·‖²``) from ``π*`` to ``π_0``
   (Lan 2022 linear rate, constant derived in :func:`rltheory.bounds.pmd_linear_bound`).
2. *kl-rate*, *euclid-rate* — the fitted geometric rate over the measurable range is
   ``≤ γ`` (+1e-6).
3. *constant-bound* — constant ``η``: ``V*(ρ) − V^{π_k}(ρ) ≤ (D_0/((1−γ)η) + span(r)/(1−γ)^2)/k``
   at every ``k ≥ 1`` (Xiao 2022, Thm 8, stated there for rewards in ``[0, 1]``; the
   reward span ``span(r) = max r − min r`` rescales it), with ``D_0`` the KL from ``π*``
   to ``π_0`` averaged over ``d^{π*}_ρ`` (:func:`rltheory.bounds.pmd_sublinear_bound`).

References
----------
Lan, G. (2022). Policy mirror descent for reinforcement learning. Math. Programming 198.
Xiao, L. (2022). On the convergence rates of policy gradient methods. JMLR 23(282), Thms 8, 10.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms import (
    geometric_step_sizes,
    pmd_euclidean_step,
    pmd_kl_step,
    policy_mirror_descent,
)
from ..bounds import (
    Claim,
    RateFit,
    check_bound,
    fit_linear_rate,
    kl_to_policy,
    pmd_linear_bound,
    pmd_sublinear_bound,
)
from ..mdp import policy_iteration, policy_transition_matrix, state_occupancy
from ..mdp.mixing import stationary_distribution
from ..mdp.zoo import garnet
from ..plot import figure
from ._policy_config import check_count, check_discount, check_garnet, check_positive
from ._policy_plots import series
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = ["Config", "run", "plot", "EXPERIMENT"]

FLOOR = 1e-9
RATE_TOL = 1e-6


@dataclass(frozen=True)
class Config:
    """Garnet, discount, first step ``η_0``, iterations; constant step and its iterations."""

    states: int = 50
    actions: int = 5
    branching: int = 5
    gamma: float = 0.9
    eta0: float = 1.0
    iterations: int = 60
    constant_eta: float = 1.0
    constant_iterations: int = 200

    def __post_init__(self) -> None:
        """Name a bad field before the run (``iterations=0`` failed in the rate fit afterwards)."""
        check_garnet(self.states, self.actions, self.branching)
        check_discount(self.gamma, "gamma", positive=True)  # the linear rate is q = γ in (0, 1)
        check_positive(self.eta0, "eta0")
        check_count(self.iterations, "iterations", 2)  # the rate fit needs 3 iterates
        check_positive(self.constant_eta, "constant_eta")
        check_count(
            self.constant_iterations, "constant_iterations"
        )  # (the O(1/k) bound from k = 1)

    @classmethod
    def quick(cls) -> Config:
        """S = 50: about a second."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """S = 200, γ = 0.95."""
        return cls(states=200, gamma=0.95, iterations=150, constant_iterations=2000)


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Run KL/Euclidean PMD with geometric steps and KL PMD with a constant step; check the claims."""
    seed = check_run_seed(seed)
    t0 = time.perf_counter()
    g = config.gamma
    mdp = garnet(config.states, config.actions, config.branching, gamma=g, rng=seed)
    sol = policy_iteration(mdp)
    V_star = np.asarray(sol.V)
    nu = np.asarray(stationary_distribution(policy_transition_matrix(mdp, sol.policy)))
    pi0 = np.full((mdp.S, mdp.A), 1.0 / mdp.A)
    star = np.eye(mdp.A)[np.asarray(sol.policy)]
    divergences = {
        "kl": (pmd_kl_step, lambda w: float(kl_to_policy(mdp, sol.policy, pi0, w))),
        "euclid": (pmd_euclidean_step, lambda w: float(w @ (0.5 * ((star - pi0) ** 2).sum(-1)))),
    }
    scale = float(np.abs(V_star).max())
    curves: dict[str, dict[str, list]] = {}
    checks = []
    fits = {}
    k = np.arange(config.iterations + 1)
    for name, (update, div) in divergences.items():
        res = policy_mirror_descent(
            mdp,
            step_sizes=geometric_step_sizes(config.eta0, 1.0 / g),
            iterations=config.iterations,
            update=update,
            rho=nu,
            V_star=V_star,
        )
        gap = res.trace["suboptimality"]
        bound = pmd_linear_bound(k, rate=g, eta0=config.eta0, gap0=gap[0], kl0=div(nu))
        curves[name] = {"k": k.tolist(), "gap": gap.tolist(), "bound": bound.tolist()}
        src = "Lan (2022), Math. Programming 198 (linear rate of PMD); constant derived in pmd_linear_bound"
        checks.append(
            Claim(
                f"{name}-bound",
                f"{name} PMD, η_k = η_0/γ^k: Δ_k(ν) ≤ γ^k (Δ_0 + D_0/(γη_0))",
                src,
                None,
                "bound",
            ).check(check_bound(gap, bound, atol=1e-12 * scale))
        )
        ok = np.flatnonzero(gap > FLOOR * scale)
        fit = fit_linear_rate(k, gap, window=(0, int(ok.max())), seed=seed)
        fits[name] = fit.to_dict()
        checks.append(
            Claim(
                f"{name}-rate",
                f"{name} PMD: fitted contraction of Δ_k(ν) ≤ γ = {g}",
                src,
                g,
                "rate_at_most",
                RATE_TOL,
            ).check(fit)
        )
    rho = np.asarray(mdp.initial_distribution())
    d_star = np.asarray(state_occupancy(mdp, sol.policy, rho))
    const = policy_mirror_descent(
        mdp, step_sizes=config.constant_eta, iterations=config.constant_iterations, V_star=V_star
    )
    kc = np.arange(1, config.constant_iterations + 1)
    bc = pmd_sublinear_bound(
        kc,
        eta=config.constant_eta,
        gamma=g,
        kl0=float(kl_to_policy(mdp, sol.policy, pi0, d_star)),
        reward_span=float(np.ptp(np.asarray(mdp.R))),
    )
    gc = const.trace["suboptimality"]
    curves["constant"] = {"k": kc.tolist(), "gap": gc[1:].tolist(), "bound": bc.tolist()}
    checks.append(
        Claim(
            "constant-bound",
            f"KL PMD, η = {config.constant_eta}: V*(ρ) − V^(k)(ρ) ≤ "
            "(D_0/((1−γ)η) + span(r)/(1−γ)²)/k for k ≥ 1",
            "Xiao (2022), JMLR 23(282), Theorem 8",
            None,
            "bound",
        ).check(check_bound(gc[1:], bc, atol=1e-12 * scale))
    )
    return ExperimentResult(
        name="pmd-linear",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta={"seed": seed, "fits": fits, "wall_time_s": time.perf_counter() - t0},
    )


def plot(result: ExperimentResult) -> Any:
    """Left: geometric steps (semilog) with the γ^k bound; right: constant step (log–log) with O(1/k)."""
    fig, axes = figure(1, 2, width=4.8, height=3.6)
    for i, name in enumerate(("kl", "euclid")):
        c = result.curves[name]
        series(
            axes[0, 0],
            i,
            c["k"],
            c["gap"],
            label=f"{name} PMD",
            bound=c["bound"],
            bound_label=f"{name}: γ^k(Δ_0 + D_0/(γη_0))",
            fit=RateFit.from_dict(result.meta["fits"][name]),
            logx=False,
        )
    axes[0, 0].set_title("η_k = η_0 γ^{-k}: linear rate")
    axes[0, 0].set_xlabel("iteration k")
    axes[0, 0].legend(fontsize=6)
    c = result.curves["constant"]
    series(
        axes[0, 1],
        0,
        c["k"],
        c["gap"],
        label="KL PMD, constant η",
        bound=c["bound"],
        bound_label="Xiao Thm 8: O(1/k)",
    )
    axes[0, 1].set_title("constant step: O(1/k) bound")
    axes[0, 1].set_xlabel("iteration k")
    fig.suptitle("Policy mirror descent on a garnet")
    return fig


EXPERIMENT = register(
    Experiment(
        name="pmd-linear",
        title="PMD with geometrically increasing steps: linear rate ≤ γ (Lan/Xiao); constant step O(1/k)",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
