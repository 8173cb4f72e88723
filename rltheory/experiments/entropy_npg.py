r"""Entropy-regularised NPG converges linearly: fitted contraction factors against ``1 − ητ``.

Figure: ``‖Q*_τ − Q_τ^{(t)}‖∞`` and ``‖log π*_τ − log π^{(t)}‖∞`` against ``t``
(semilog) on a garnet for several step sizes ``η = f·(1−γ)/τ``, with Cen et al.'s
bounds overlaid and the fitted contraction factors.

Claims checked, for every step ``f ∈ fractions``:

1. *bound* — ``‖Q*_τ − Q_τ^{(t)}‖∞ ≤ C_1 γ(1−ητ)^{t−1}`` and
   ``‖log π*_τ − log π^{(t)}‖∞ ≤ 2C_1 τ^{-1}(1−ητ)^{t−1}`` at every ``t ≥ 1``
   (Cen, Cheng, Chen, Wei, Chi 2022, Thm 1), allowance ``1e-10`` (accuracy of ``Q*_τ``).
2. *rate ≤ 1 − ητ* — the geometric rate fitted to the Q-error over the second half of
   its measurable range is at most ``1 − ητ`` (+1e-6 for round-off). A fit needs the
   Q-error above the floor ``1e-10·‖Q*_τ‖∞`` at 6 or more iterates; a step whose error
   falls below it sooner gets no rate claim, and ``meta["fits"][name]["rate_not_checked"]``
   says so (on the quick preset: ``f = 1``, soft policy iteration, which converges
   quadratically and is above the floor at 4 iterates only, seeds 0–3); the bound of
   claim 1 is checked at every step.
3. *local rate* (``f < 1``) — the log-policy error contracts at exactly
   ``α = 1 − ητ/(1−γ)``: ``log π^{(t+1)} − log π*_τ = α(log π^{(t)} − log π*_τ) +
   (1−α)(Q_τ^{(t)} − Q*_τ)/τ`` up to a per-state constant, and ``Q_τ^{(t)} − Q*_τ`` is of
   second order in the policy error (``V_τ`` is stationary at ``π*_τ``), so the
   asymptotic factor is ``α`` (and ``α²`` for the Q-error); tolerance ``2e-3``. Cen et al.'s
   ``1 − ητ = α + (1−α)γ`` is the worst case of this recursion. For ``f = 1`` (soft policy
   iteration, ``α = 0``) convergence is quadratic (Cen et al. 2022, Thm 2). As for claim 2,
   a step with fewer than 6 log-policy errors above ``1e-10`` gets no local-rate claim and
   ``meta["fits"][name]["local_rate_not_checked"]`` says so.

References
----------
Cen, S., Cheng, C., Chen, Y., Wei, Y., Chi, Y. (2022). Fast global convergence of natural
policy gradient methods with entropy regularization. Operations Research 70(4), Thms 1–2.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms import entropy_regularized_npg
from ..algorithms.soft import soft_reference
from ..bounds import (
    Claim,
    RateFit,
    check_bound,
    entropy_npg_bound,
    entropy_npg_constant,
    fit_linear_rate,
)
from ..mdp.zoo import garnet
from ..plot import figure
from ._policy_config import (
    check_count,
    check_discount,
    check_fractions,
    check_garnet,
    check_positive,
)
from ._policy_plots import series
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = ["Config", "run", "plot", "EXPERIMENT"]

FLOOR = 1e-10
RATE_TOL = 1e-6
LOCAL_TOL = 2e-3


@dataclass(frozen=True)
class Config:
    """Garnet ``G(S, A, b)``, discount, temperature and step fractions ``η = f(1−γ)/τ``."""

    states: int = 50
    actions: int = 5
    branching: int = 5
    gamma: float = 0.9
    tau: float = 0.1
    fractions: tuple[float, ...] = (0.1, 0.3, 1.0)
    max_iter: int = 2000

    def __post_init__(self) -> None:
        """Name a bad field before the run (a fraction above 1 failed as an ``eta`` error)."""
        check_garnet(self.states, self.actions, self.branching)
        check_discount(self.gamma, "gamma")
        check_positive(self.tau, "tau")
        check_fractions(self.fractions, "fractions")  # η = f(1−γ)/τ ≤ (1−γ)/τ: Theorem 1's range
        check_count(self.max_iter, "max_iter")  # (the bounds are checked at t >= 1)

    @classmethod
    def quick(cls) -> Config:
        """S = 50, three steps: a few seconds."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """S = 200, γ = 0.95, five steps."""
        return cls(states=200, gamma=0.95, fractions=(0.05, 0.1, 0.3, 0.6, 1.0), max_iter=10_000)


def _window(err: np.ndarray, floor: float) -> tuple[int, int] | None:
    ok = np.flatnonzero(err > floor)
    if ok.size < 6:
        return None
    hi = int(ok.max())
    return hi // 2, hi


def _too_short(err: np.ndarray, floor: float, what: str) -> str:
    """Why no rate is fitted to ``err``: the count of iterates above ``floor`` (fewer than 6)."""
    n = int(np.count_nonzero(err > floor))
    return f"the {what} is above the floor {floor:.3g} at {n} iterates only (a rate fit needs 6)"


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Run entropy-regularised NPG for every step fraction and check the claims."""
    seed = check_run_seed(seed)
    t0 = time.perf_counter()
    g, tau = config.gamma, config.tau
    mdp = garnet(config.states, config.actions, config.branching, gamma=g, rng=seed)
    soft = soft_reference(
        mdp, tau=tau
    )  # to the round-off floor (a fixed 1e-13 sat below it in the full preset)
    scale = float(np.abs(np.asarray(soft.Q)).max())
    src = "Cen, Cheng, Chen, Wei, Chi (2022), Operations Research 70(4), Theorem 1"
    curves: dict[str, dict[str, list]] = {}
    checks = []
    fits: dict[str, dict] = {}
    for f in config.fractions:
        eta = f * (1.0 - g) / tau
        rate = 1.0 - eta * tau
        alpha = 1.0 - eta * tau / (1.0 - g)
        T = int(min(config.max_iter, np.ceil(40.0 / (1.0 - alpha)) if alpha > 0 else 20))
        res = entropy_regularized_npg(mdp, eta=eta, tau=tau, iterations=T, soft=soft)
        q, lp = res.trace["q_error"], res.trace["log_policy_error"]
        t = np.arange(q.shape[0])
        C1 = float(entropy_npg_constant(mdp, eta=eta, tau=tau, soft=soft))
        qb, lb = entropy_npg_bound(t[1:], eta=eta, tau=tau, gamma=g, C1=C1)
        name = f"f={f:g}"
        curves[name] = {
            "t": t.tolist(),
            "q_error": q.tolist(),
            "log_policy_error": lp.tolist(),
            "q_bound": [C1] + qb.tolist(),
            "log_bound": [None] + lb.tolist(),
        }
        atol = FLOOR * scale
        checks.append(
            Claim(
                f"{name}-q-bound",
                f"η={eta:.4g}: ‖Q*_τ − Q_τ^(t)‖∞ ≤ C1 γ (1−ητ)^(t−1), t ≥ 1",
                src,
                None,
                "bound",
            ).check(check_bound(q[1:], qb, atol=atol))
        )
        checks.append(
            Claim(
                f"{name}-log-bound",
                f"η={eta:.4g}: ‖log π*_τ − log π^(t)‖∞ ≤ 2C1/τ (1−ητ)^(t−1)",
                src,
                None,
                "bound",
            ).check(check_bound(lp[1:], lb, atol=atol / tau))
        )
        fits[name] = {"eta": eta, "claimed_rate": rate, "alpha": alpha, "C1": C1}
        wq = _window(q, FLOOR * scale)
        # too few measurable iterates to fit a rate: said in meta, not left out silently
        if wq is None:
            fits[name]["rate_not_checked"] = _too_short(q, FLOOR * scale, "Q-error")
        else:
            fq = fit_linear_rate(t, q, window=wq, seed=seed)
            fits[name]["q_fit"] = fq.to_dict()
            checks.append(
                Claim(
                    f"{name}-rate",
                    f"η={eta:.4g}: fitted Q-error contraction ≤ 1 − ητ = {rate:.4g}",
                    src,
                    rate,
                    "rate_at_most",
                    RATE_TOL,
                ).check(fq)
            )
        wl = _window(lp, FLOOR)
        if alpha > 0 and wl is None:
            fits[name]["local_rate_not_checked"] = _too_short(lp, FLOOR, "log-policy error")
        if alpha > 0 and wl is not None:
            fl = fit_linear_rate(t, lp, window=wl, seed=seed)
            fits[name]["log_fit"] = fl.to_dict()
            checks.append(
                Claim(
                    f"{name}-local-rate",
                    f"η={eta:.4g}: log-policy error contracts at "
                    f"α = 1 − ητ/(1−γ) = {alpha:.4g} (local linearisation; tol {LOCAL_TOL})",
                    "Cen et al. (2022), recursion of §3 linearised at π*_τ",
                    alpha,
                    "rate",
                    LOCAL_TOL,
                ).check(fl)
            )
    return ExperimentResult(
        name="entropy-npg",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta={"seed": seed, "fits": fits, "wall_time_s": time.perf_counter() - t0},
    )


def plot(result: ExperimentResult) -> Any:
    """Q-error (left) and log-policy error (right) for each step, with Cen et al.'s bounds."""
    fig, axes = figure(1, 2, width=4.8, height=3.6)
    fits = result.meta["fits"]
    for i, (name, c) in enumerate(result.curves.items()):
        t = np.asarray(c["t"], dtype=float)
        fq = RateFit.from_dict(fits[name]["q_fit"]) if "q_fit" in fits[name] else None
        fl = RateFit.from_dict(fits[name]["log_fit"]) if "log_fit" in fits[name] else None
        lb = np.asarray([np.nan if v is None else v for v in c["log_bound"]], dtype=float)
        series(
            axes[0, 0],
            i,
            t,
            c["q_error"],
            label=f"{name}",
            bound=c["q_bound"],
            bound_label=f"{name}: C1γ(1−ητ)^(t−1)",
            fit=fq,
            logx=False,
        )
        series(
            axes[0, 1],
            i,
            t,
            c["log_policy_error"],
            label=f"{name}",
            bound=lb,
            bound_label=f"{name}: 2C1/τ (1−ητ)^(t−1)",
            fit=fl,
            logx=False,
        )
    for ax, title in zip(axes[0], ("‖Q*_τ − Q_τ^(t)‖∞", "‖log π*_τ − log π^(t)‖∞"), strict=True):
        ax.set_title(title)
        ax.set_xlabel("iteration t")
        ax.legend(fontsize=6)
    fig.suptitle("Entropy-regularised NPG: linear rate vs 1 − ητ (Cen et al. 2022)")
    return fig


EXPERIMENT = register(
    Experiment(
        name="entropy-npg",
        title="Entropy-regularised NPG on a garnet: Cen et al. bounds, fitted contraction vs 1 − ητ",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
