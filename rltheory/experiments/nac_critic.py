r"""Natural actor-critic with an LSTD compatible critic approaches exact NPG as the critic error shrinks.

Figure, left: ``|gap_NAC(t) − gap_NPG(t)|``, the distance between the exact suboptimality
``V*(ρ) − V^{π_t}(ρ)`` of NAC with an LSTD-Q critic fitted on ``N`` samples per step
(several ``N``, mean over seeds; and the exact critic) and that of exact NPG (same step);
right: the critic error ``‖ψᵀ(w_t − w*_t)‖_{d⊗π}`` against ``N`` (log–log) with its
fitted slope.

Claims checked:

1. *exact-critic* — NAC with the exact compatible critic and tabular features is NPG:
   ``|gap_NAC(t) − gap_NPG(t)| ≤ 1e-9`` at every ``t`` (compatible function approximation,
   Kakade 2001; Agarwal et al. 2021, §5.3).
2. *critic-rate* — the LSTD critic error (mean over actor steps and seeds) decays like
   ``N^{-1/2}``: the CI of the fitted log–log slope contains ``−1/2`` (LSTD is a smooth
   function of empirical means; Lazaric, Ghavamzadeh & Munos 2012, Thm 1 for the rate).
3. *tracking* — the worst gap difference ``max_t |gap_NAC − gap_NPG|`` for the largest
   ``N`` is at most that for the smallest ``N`` (the critic's error enters NPG's bound
   additively, Agarwal et al. 2021, Thm 20).

References
----------
Kakade, S. (2001). A natural policy gradient. NeurIPS.
Agarwal, A., Kakade, S. M., Lee, J. D., Mahajan, G. (2021). JMLR 22(98), §5.3, §6, Thm 20.
Lazaric, A., Ghavamzadeh, M., Munos, R. (2012). Finite-sample analysis of least-squares
policy iteration. JMLR 13, Theorem 1.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms import ExactCritic, LSTDCritic, natural_actor_critic, natural_policy_gradient
from ..bounds import Claim, RateFit, check_bound, fit_rate
from ..mdp.zoo import random_mdp
from ..plot import figure
from ._policy_plots import series
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = ["Config", "run", "plot", "EXPERIMENT"]


@dataclass(frozen=True)
class Config:
    """Random MDP, actor step and iterations, critic sample sizes and seeds."""

    states: int = 5
    actions: int = 3
    gamma: float = 0.8
    eta: float = 0.2
    iterations: int = 6
    samples: tuple[int, ...] = (1000, 3000, 10_000, 30_000)
    seeds: int = 3

    @classmethod
    def quick(cls) -> Config:
        """About 15 s."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """More actor steps, sample sizes up to 10⁵, ten seeds."""
        return cls(iterations=20, samples=(1000, 3000, 10_000, 30_000, 100_000), seeds=10)


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """NAC (exact and LSTD critics) against exact NPG; check the three claims."""
    t0 = time.perf_counter()
    mdp = random_mdp(config.states, config.actions, gamma=config.gamma, rng=seed)
    S, A = mdp.S, mdp.A
    feats = np.eye(S * A).reshape(S, A, S * A)
    npg = natural_policy_gradient(mdp, eta=config.eta, iterations=config.iterations)
    ref = npg.trace["suboptimality"]
    exact = natural_actor_critic(mdp, feats, eta=config.eta, iterations=config.iterations, critic=ExactCritic())
    t = np.arange(config.iterations + 1)
    diff = np.abs(exact.trace["suboptimality"] - ref)
    curves: dict[str, dict[str, list]] = {"gaps": {"t": t.tolist(), "npg": ref.tolist()},
                                          "difference": {"t": t.tolist(), "exact": diff.tolist()}}
    errs, worst = [], []
    for n in config.samples:
        runs = [natural_actor_critic(mdp, feats, eta=config.eta, iterations=config.iterations,
                                     critic=LSTDCritic(samples=n), rng=seed * 1000 + s) for s in range(config.seeds)]
        errs.append(float(np.mean([r.trace["critic_error"].mean() for r in runs])))
        gaps = np.stack([r.trace["suboptimality"] for r in runs])
        worst.append(float(np.abs(gaps - ref).max()))
        curves["gaps"][f"N={n}"] = gaps.mean(axis=0).tolist()
        curves["difference"][f"N={n}"] = np.abs(gaps - ref).mean(axis=0).tolist()
    N = np.asarray(config.samples, dtype=float)
    fit = fit_rate(N, errs, seed=seed)
    curves["critic"] = {"N": N.tolist(), "error": errs, "max_gap_difference": worst}
    checks = [
        Claim("exact-critic", "exact compatible critic, tabular features: |gap_NAC − gap_NPG| ≤ 1e-9 at every t",
              "Kakade (2001); Agarwal et al. (2021), §5.3", None, "bound").check(
            check_bound(diff, np.full_like(diff, 1e-9))),
        Claim("critic-rate", "LSTD critic error ∝ N^{-1/2} (slope CI contains −1/2)",
              "Lazaric, Ghavamzadeh & Munos (2012), JMLR 13, Theorem 1", -0.5, "rate").check(fit),
        Claim("tracking", f"max_t |gap_NAC − gap_NPG| at N = {config.samples[-1]} ≤ at N = {config.samples[0]}",
              "Agarwal et al. (2021), Theorem 20 (critic error enters additively)", None, "bound").check(
            check_bound([worst[-1]], [worst[0]])),
    ]
    return ExperimentResult(
        name="nac-critic", config=config_to_dict(config), curves=curves, checks=checks,
        meta={"seed": seed, "fit": fit.to_dict(), "wall_time_s": time.perf_counter() - t0},
    )


def plot(result: ExperimentResult) -> Any:
    """Left: distance of NAC's suboptimality to exact NPG's for each N; right: critic error vs N."""
    fig, axes = figure(1, 2, width=4.8, height=3.6)
    g = result.curves["difference"]
    for i, name in enumerate(k for k in g if k != "t"):
        series(axes[0, 0], i, g["t"][1:], g[name][1:], label=name, logx=False)
    axes[0, 0].set_title("mean |gap_NAC − gap_NPG| over seeds")
    axes[0, 0].set_xlabel("actor step t")
    c = result.curves["critic"]
    series(axes[0, 1], 0, c["N"], c["error"], label="critic error", fit=RateFit.from_dict(result.meta["fit"]))
    axes[0, 1].set_title("critic error vs samples N")
    axes[0, 1].set_xlabel("N")
    fig.suptitle("Natural actor-critic with a linear compatible critic")
    return fig


EXPERIMENT = register(Experiment(
    name="nac-critic",
    title="Natural actor-critic with an LSTD compatible critic vs exact NPG as the critic error shrinks",
    config_cls=Config,
    run=run,
    plot=plot,
))
