r"""Value iteration converges geometrically at rate γ: ``‖v_k − v*‖∞ ≤ γ^k ‖v_0 − v*‖∞``.

Figure: the VI error ``e_k = ‖v_k − v*‖∞`` against ``k`` (semilog) on a slippery
gridworld and on a garnet, for several discounts, with the a-priori bound
``γ^k e_0`` overlaid and the fitted geometric rate ``ρ`` (with its bootstrap CI).

Claims checked, for every model and discount:

1. *bound* — ``e_k ≤ γ^k e_0`` at every measured iterate (Puterman 1994, Prop. 6.2.4,
   Thm 6.3.3). The reference ``v*`` is policy iteration's answer polished by Bellman
   backups (:func:`reference_values`), with a certified error ``δ = ‖T v* − v*‖∞/(1−γ)``;
   the check allows ``δ + 1e-12·‖v*‖∞`` (the latter for the round-off of ``e_k``),
   and only iterates with ``e_k ≥ max(1e-9·‖v*‖∞, 1e3·δ)`` are measured;
2. *rate ≤ γ* — the least-squares geometric rate satisfies ``ρ ≤ γ + 1e-6``. On
   equally spaced ``k`` the least-squares slope of ``log e_k`` is a positively
   weighted average of the one-step log-ratios ``log(e_{k+1}/e_k)``, each ``≤ log γ``
   by the contraction, so only the reference's error can push ``ρ`` above ``γ``. Each
   measured ``e_k`` is within ``δ`` of the true one, so ``log e_k`` is off by at most
   ``ε_k = δ/(e_k − 2δ)`` and the least-squares slope, with weights ``w_k``, by at most
   ``Σ|w_k| ε_k``; ``ρ`` moves by at most ``γ·expm1(Σ|w_k| ε_k)``, recorded as
   ``meta["fits"][panel]["rate_roundoff"]``. The floor alone (``e_k ≥ 1e3·δ``, ``ε_k ≤ 1e-3``)
   would allow ``≈ 3e-3/n`` for ``n`` iterates in the window, more than ``1e-6``; but on the
   quick preset (seeds 0–3) ``δ ≤ 3e-12``, the floor is ``1e-9·‖v*‖∞``, ``ε_k ≤ 4e-5``, and the
   bound is at most ``2e-7`` (windows of 21–23 iterates on the gridworld, 99 and 1032 on the
   garnet at γ = 0.9, 0.99), so ``tol = 1e-6`` covers that round-off and nothing else;
3. *rate → γ on the garnet* (tightness) — from ``v_0 = 0`` with rewards ``≥ 0`` the
   iterates increase to ``v*``, and once the greedy policy is optimal
   ``v_k − v* = γ^{k−K} P_{π*}^{k−K}(v_K − v*)``; for an ergodic ``P_{π*}`` this
   behaves like ``γ^k μᵀ(v_K − v*)·1``, so the tail rate is exactly ``γ``. The fit
   over the second half of the curve must satisfy ``ρ ≥ γ − 1e-3`` (the
   sub-dominant eigenvalues of a garnet with branching ``b`` are ``≈ 1/√b``,
   and their contribution to the slope over the tail window is far below 1e-3).
   The gridworld's absorbing goal makes ``P_{π*}`` transient outside the goal,
   so there VI converges *faster* than γ^k; no tightness is claimed there.

References
----------
M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, Prop. 6.2.4, Thm 6.3.3.
T. W. Archibald, K. I. M. McKinnon, L. C. Thomas, "On the generation of Markov decision
processes", *J. Oper. Res. Soc.* 46(3), 1995 (garnets).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bounds import Claim, RateFit, check_bound, fit_linear_rate, vi_error_bound
from ..mdp import bellman_optimality_operator, garnet, gridworld, policy_iteration
from ..plot import convergence_plot, figure
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = [
    "Config",
    "run",
    "plot",
    "reference_values",
    "vi_error_curve",
    "rate_roundoff",
    "EXPERIMENT",
]

#: relative measurement floor: iterates are compared while e_k ≥ FLOOR·‖v*‖∞
FLOOR = 1e-9
#: reference accuracy allowance (absolute, relative to ‖v*‖∞) in the bound check
REF_ATOL = 1e-12
RATE_TOL = 1e-6
TIGHT_TOL = 1e-3


@dataclass(frozen=True)
class Config:
    """Models and discounts of the VI-rate figure.

    Attributes
    ----------
    grid_size : int
        Side of the square gridworld (``S = grid_size²``, ``A = 4``).
    slip : float
        Gridworld slip probability.
    garnet_states, garnet_actions, garnet_branching : int
        Garnet ``G(S, A, b)``.
    gammas : tuple of float
        Discounts, one row of panels each.
    max_iter : int
        Cap on measured iterations per curve.
    """

    grid_size: int = 10
    slip: float = 0.1
    garnet_states: int = 100
    garnet_actions: int = 4
    garnet_branching: int = 5
    gammas: tuple[float, ...] = (0.9, 0.99)
    max_iter: int = 20_000

    @classmethod
    def quick(cls) -> Config:
        """S = 100 for both models, γ ∈ {0.9, 0.99}: a few seconds."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """S = 400 gridworld, S = 500 garnet, γ ∈ {0.9, 0.95, 0.99, 0.999}."""
        return cls(
            grid_size=20,
            garnet_states=500,
            garnet_actions=8,
            garnet_branching=10,
            gammas=(0.9, 0.95, 0.99, 0.999),
            max_iter=50_000,
        )


def reference_values(mdp: Any, *, max_polish: int = 100_000) -> tuple[Any, float]:
    """``V*`` to round-off, with a certified accuracy: ``(v, δ)`` with ``‖v − V*‖∞ ≤ δ``.

    Policy iteration's values are polished by Bellman backups until ``‖T v − v‖∞``
    stops decreasing (PI keeps its action on near-ties, which can leave an error of
    order ``tie_tol/(1−γ)``); then ``δ = ‖T v − v‖∞ / (1 − γ)``, since
    ``‖v − V*‖∞ ≤ ‖v − T v‖∞ + γ ‖v − V*‖∞``.
    """
    xp = mdp.xp
    g = float(mdp.gamma)
    v = policy_iteration(mdp).V
    nxt = bellman_optimality_operator(mdp, v)
    res = float(xp.max(xp.abs(nxt - v)))
    for _ in range(max_polish):
        after = bellman_optimality_operator(mdp, nxt)
        res_next = float(xp.max(xp.abs(after - nxt)))
        if not res_next < res:
            break
        v, nxt, res = nxt, after, res_next
    return v, res / (1.0 - g)


def vi_error_curve(
    mdp: Any, V_star: Any, *, max_iter: int, floor: float = FLOOR
) -> tuple[np.ndarray, np.ndarray]:
    """``(k, e_k)`` with ``e_k = ‖T^k 0 − V*‖∞`` for ``k = 0, 1, …`` while ``e_k ≥ floor·‖V*‖∞``.

    Iterates the pure Bellman optimality operator (one array call per step).
    """
    xp = mdp.xp
    scale = max(float(xp.max(xp.abs(V_star))), 1e-300)
    v = xp.zeros_like(V_star)
    errs = []
    for _ in range(max_iter + 1):
        e = float(xp.max(xp.abs(v - V_star)))
        if e < floor * scale:
            break
        errs.append(e)
        v = bellman_optimality_operator(mdp, v)
    err = np.asarray(errs)
    return np.arange(err.shape[0]), err


def rate_roundoff(k: np.ndarray, err: np.ndarray, delta: float, gamma: float) -> float:
    """Largest change of the fitted geometric rate that errors ``|ê_k − e_k| ≤ δ`` can cause.

    ``|log ê_k − log e_k| ≤ ε_k = δ/(ê_k − 2δ)``; the least-squares slope of ``log ê`` on ``k``
    has weights ``w_k = (k − k̄)/Σ(k − k̄)²``, so it moves by at most ``Σ|w_k| ε_k``, and a rate
    ``ρ ≤ γ`` by at most ``γ·expm1(Σ|w_k| ε_k)`` (``inf`` if some ``ê_k ≤ 2δ``).
    """
    k = np.asarray(k, dtype=float)
    err = np.asarray(err, dtype=float)
    if np.any(err <= 2.0 * delta):
        return float("inf")
    x = k - k.mean()
    w = x / (x @ x)
    return float(gamma * np.expm1(np.abs(w) @ (delta / (err - 2.0 * delta))))


def _models(config: Config, gamma: float, seed: int) -> dict[str, Any]:
    return {
        "gridworld": gridworld(config.grid_size, slip=config.slip, gamma=gamma).mdp,
        "garnet": garnet(
            config.garnet_states,
            config.garnet_actions,
            config.garnet_branching,
            gamma=gamma,
            rng=seed,
        ),
    }


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Measure VI error curves, fit their rates and check the three claims (module docstring)."""
    seed = check_run_seed(seed)
    t0 = time.perf_counter()
    curves: dict[str, dict[str, list]] = {}
    checks = []
    fits: dict[str, dict] = {}
    jobs = [(g, name) for g in config.gammas for name in ("gridworld", "garnet")]
    bar = None
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        bar = tqdm(total=len(jobs), desc="vi-rates")
    for g in config.gammas:
        models = _models(config, g, seed)
        for name, mdp in models.items():
            V_star, delta = reference_values(mdp)
            scale = float(np.max(np.abs(np.asarray(V_star))))
            # compare only errors that dominate the reference's certified error δ by 1e3
            floor = max(FLOOR, 1e3 * delta / scale)
            k, err = vi_error_curve(mdp, V_star, max_iter=config.max_iter, floor=floor)
            bound = vi_error_bound(k, g, err[0])
            panel = f"{name} γ={g}"
            half = int(k[-1]) // 2
            fit = fit_linear_rate(k, err, window=(half, int(k[-1])), seed=seed)
            curves[panel] = {"k": k.tolist(), "error": err.tolist(), "bound": bound.tolist()}
            src = "Puterman (1994), Prop. 6.2.4 and Thm 6.3.3"
            # k = 0 is equality by construction; the worst ratio over k >= 1 shows how tight γ^k is
            checks.append(
                Claim(
                    f"{name}-{g}-bound",
                    f"{name}, γ={g}: ‖v_k − v*‖∞ ≤ γ^k ‖v_0 − v*‖∞ at every k ≥ 1 "
                    f"(allowance {REF_ATOL:g}·‖v*‖∞ for the reference v*)",
                    src,
                    None,
                    "bound",
                ).check(check_bound(err[1:], bound[1:], atol=REF_ATOL * scale + delta))
            )
            checks.append(
                Claim(
                    f"{name}-{g}-rate",
                    f"{name}, γ={g}: geometric rate fitted on k ≥ {half}, ρ ≤ γ + {RATE_TOL:g} "
                    "(round-off only: the LS slope averages one-step log-ratios ≤ log γ)",
                    src,
                    g,
                    "rate_at_most",
                    RATE_TOL,
                ).check(fit)
            )
            fits[panel] = {
                "fit": fit.to_dict(),
                "gamma": g,
                "reference_error": delta,
                "floor": floor,
                "rate_roundoff": rate_roundoff(k[half:], err[half:], delta, g),
            }
            if name == "garnet":
                checks.append(
                    Claim(
                        f"garnet-{g}-tight",
                        f"garnet, γ={g}: the same tail rate satisfies ρ ≥ γ − {TIGHT_TOL:g} "
                        "(γ^k is attained along the Perron vector of P_π*)",
                        src,
                        g,
                        "rate_at_least",
                        TIGHT_TOL,
                    ).check(fit)
                )
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return ExperimentResult(
        name="vi-rates",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta={
            "seed": seed,
            "fits": fits,
            "wall_time_s": time.perf_counter() - t0,
            "floor": FLOOR,
            "ref_atol": REF_ATOL,
        },
    )


def plot(result: ExperimentResult) -> Any:
    """One panel per (model, γ): measured error, γ^k bound, fitted ρ with CI."""
    panels = list(result.curves)
    gammas = sorted({float(p.split("γ=")[1]) for p in panels})
    fig, axes = figure(len(gammas), 2, width=4.6, height=3.4)
    fits = result.meta.get("fits", {})
    for p in panels:
        name, g = p.split(" γ=")
        ax = axes[gammas.index(float(g)), 0 if name == "gridworld" else 1]
        c = result.curves[p]
        k, err = np.asarray(c["k"], dtype=float), np.asarray(c["error"], dtype=float)
        fit = RateFit.from_dict(fits[p]["fit"]) if p in fits else None
        convergence_plot(
            ax,
            k,
            err,
            label="‖v_k − v*‖∞",
            bound=c["bound"],
            bound_label="γ^k ‖v_0 − v*‖∞",
            fit=fit,
            logx=False,
            logy=True,
        )
        ax.set_title(f"{name}, γ = {g}")
        ax.set_xlabel("iteration k")
    fig.suptitle("Value iteration: measured error vs the γ^k bound")
    return fig


EXPERIMENT = register(
    Experiment(
        name="vi-rates",
        title="Value iteration error vs k on gridworld and garnet against γ^k‖v0−v*‖∞ (Puterman Thm 6.3.3)",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
