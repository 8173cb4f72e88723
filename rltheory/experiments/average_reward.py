r"""Average reward as the limit of discounting, and relative value iteration vs the spectral gap.

``discount-to-gain`` — for weakly communicating MDPs, ``(1−γ)V*_γ → g*`` as ``γ → 1``
with an ``O(1−γ)`` error. Figure: ``err(γ) = ‖(1−γ)V*_γ − g*‖∞`` against ``1−γ`` on
log–log axes for a random unichain MDP, a two-room MDP and a sparse-reward ring,
with the bound ``(1−γ)·sp(h*)`` and the first-order Laurent line ``(1−γ)‖h_π‖∞``.

Claims, per model:

1. *bound* — ``err(γ) ≤ (1−γ) sp(h*)`` at every γ (proof in
   :mod:`rltheory.bounds.average`; ``h*`` from multichain policy iteration, which in a
   weakly communicating model solves ``g* + h* = max_a [r + P h*]``). The allowance is
   the discount solver's certified error ``(1−γ)·‖V* − V^π‖∞`` bound.
2. *slope 1* — the least-squares log–log slope over ``1−γ ∈ [x_min, fit_max]`` is within
   ``tol = 3κ`` of 1 (two one-sided checks on the point estimate). Measurement: for the discount-optimal ``π`` (gain-optimal on the
   window) ``(1−γ)V^π_γ − g* = (1−γ)[h_π − (1−γ)u_γ]`` with ``u_γ = (I − γP_π)^{-1}P_π h_π``
   (exact; evaluated this way to avoid cancelling ``g/(1−γ)``), so
   ``log err = log(1−γ) + log‖h_π − (1−γ)u_γ‖∞`` and the second term varies by at most
   ``≈ 2.1κ`` with ``κ = max_window (1−γ)‖u_γ‖∞/‖h_π‖∞``. An OLS slope of a function that
   varies by ``V`` over a log-range ``L`` deviates by at most ``6V/L``; with ``L ≥ ln 100``
   this is ``≤ 3κ`` (``κ`` is computed and reported).

``rvi-spectral-gap`` — relative value iteration with the aperiodicity transform
``τ`` converges geometrically once the greedy policy settles, at the second-largest
eigenvalue modulus ``ρ = max_{λ≠1}|τλ + 1 − τ|`` of the optimal chain, so the iteration
count grows like ``1/(1−ρ)`` as the two-room bottleneck ``p`` closes. Figure: the span
``sp(T v_k − v_k)`` against ``k`` (semilog) for several ``p`` with the fitted rate.
Claim per ``p``: the geometric rate fitted on the second half of the run equals ``ρ``
within ``1e-4`` (a deterministic curve: sub-dominant modes ``|λ₃/λ₂|^k`` are below
``1e-4`` relative by mid-run for these models; the fit's CI is reported).

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. §8.2 (Laurent expansion), §8.5
(relative value iteration, aperiodicity transformation).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_int, check_real
from ..bounds.average import rvi_asymptotic_rate, vanishing_discount_bound
from ..bounds.rates import Claim, RateFit, check_bound, fit_linear_rate, fit_rate
from ..mdp import (
    FiniteMDP,
    average_policy_iteration,
    bellman_certificate,
    evaluate_policy,
    gain_bias,
    policy_iteration,
    policy_transition_matrix,
    relative_value_iteration,
    ring_mdp,
    spectral_gap,
    two_room_mdp,
)
from ..plot import convergence_plot, figure
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = [
    "Config",
    "RVIConfig",
    "run",
    "plot",
    "run_rvi",
    "plot_rvi",
    "discount_error",
    "EXPERIMENT",
    "RVI_EXPERIMENT",
]

SOURCE = "Puterman (1994) §8.2 (Laurent expansion); bound proved in rltheory.bounds.average"
#: policy-iteration tie tolerance (absolute, on Q) for the discount-optimal policies
TIE_TOL = 1e-9


@dataclass(frozen=True)
class Config:
    """Models and discounts of ``discount-to-gain``.

    Attributes
    ----------
    random_states, random_actions : int
        Size of the random unichain MDP (rows mixed with 5 % uniform noise).
    room_size : int
        Two-room MDP room size; ``bottleneck`` its door probability.
    ring_size : int
        Sparse-reward ring size.
    x_max, x_min : float
        ``1 − γ`` ranges over ``n_points`` log-spaced values in ``[x_min, x_max]``.
    fit_max : float
        The slope is fitted over ``1 − γ ∈ [x_min, fit_max]``.
    """

    random_states: int = 10
    random_actions: int = 3
    room_size: int = 4
    bottleneck: float = 0.05
    ring_size: int = 8
    x_max: float = 0.1
    x_min: float = 1e-5
    n_points: int = 13
    fit_max: float = 1e-3

    def __post_init__(self) -> None:
        # a grid outside (0, 1) failed inside the solvers (x_max = 2: "gamma must lie in [0, 1); got
        # -1.0") or numpy (x_min = 0: "Geometric sequence cannot include zero"); n_points = 1 or a
        # fit window without grid points raised "max() arg is an empty sequence" in run
        x_max = check_real(
            self.x_max, "Config.x_max", low=0.0, high=1.0, low_open=True, high_open=True
        )
        check_real(self.x_min, "Config.x_min", low=0.0, high=x_max, low_open=True, high_open=True)
        check_int(self.n_points, "Config.n_points", 2)
        check_real(self.fit_max, "Config.fit_max", low=0.0, low_open=True)

    @classmethod
    def quick(cls) -> Config:
        """Small models, 1−γ from 0.1 to 1e-5 (13 points): about a second."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """S = 60 random MDP, rooms of 10 with p = 0.01, a 32-ring; 1−γ down to 1e-6 (26 points),
        slope fitted on 1−γ ≤ 1e-4 (these models mix ~10× slower, so the Laurent regime starts later)."""
        return cls(
            random_states=60,
            random_actions=4,
            room_size=10,
            bottleneck=0.01,
            ring_size=32,
            x_min=1e-6,
            n_points=26,
            fit_max=1e-4,
        )


def _random_unichain(S: int, A: int, seed: int) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    P = rng.random((S, A, S)) ** 4
    P /= P.sum(-1, keepdims=True)
    P = 0.95 * P + 0.05 / S
    return FiniteMDP(P, rng.random((S, A)), None)


def _models(config: Config, seed: int) -> dict[str, FiniteMDP]:
    return {
        "random unichain": _random_unichain(config.random_states, config.random_actions, seed),
        "two rooms": two_room_mdp(config.room_size, config.bottleneck, reward="dense"),
        "sparse ring": ring_mdp(config.ring_size, reward="sparse"),
    }


def discount_error(mdp: FiniteMDP, gamma: float, g_star: float) -> dict[str, Any]:
    r"""``‖(1−γ)V*_γ − g*‖∞`` evaluated without cancellation, with its certified uncertainty.

    ``π`` = policy iteration's policy at ``γ``; with ``(g_π, h_π)`` from :func:`gain_bias`
    (per state, ``P*h = 0``), ``(1−γ)V^π_γ − g* = (g_π − g*) + (1−γ)h_π − (1−γ)²(I − γP_π)^{-1}P_π h_π``
    exactly. ``uncertainty = (1−γ)·‖V* − V^π‖∞``-certificate (Puterman Thm 6.6.6).
    """
    # g_star = nan returned err = nan, True was read as 1 and a string failed inside numpy
    g_star = check_real(g_star, "g_star")
    dm = mdp.replace(gamma=gamma)
    # Q-differences between actions are accurate to ~1e-10 however close γ is to 1 (the
    # ill-conditioned direction of I − γP is the constant vector, which cancels in (P_a − P_b)V),
    # so ties are resolved at 1e-9 instead of the default 1e-10/(1−γ)
    pi = policy_iteration(dm, tie_tol=TIE_TOL).policy
    cert = float(bellman_certificate(dm, evaluate_policy(dm, pi))[3])
    g, h = (np.asarray(a) for a in gain_bias(mdp, pi, per_state=True))
    P = np.asarray(policy_transition_matrix(mdp, pi))
    u = np.linalg.solve(np.eye(mdp.S) - gamma * P, P @ h)
    x = 1.0 - gamma
    dev = (g - g_star) + x * h - x * x * u
    hmax = float(np.max(np.abs(h)))
    return {
        "err": float(np.max(np.abs(dev))),
        "uncertainty": x * cert,
        "gain_optimal": bool(np.max(np.abs(g - g_star)) <= 1e-9 * (1 + abs(g_star))),
        "kappa": x * float(np.max(np.abs(u))) / hmax if hmax > 0 else math.inf,
        "h_norm": hmax,
        "policy": np.asarray(pi).tolist(),
    }


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Measure ``‖(1−γ)V*_γ − g*‖∞`` over γ for each model; check the bound and slope 1."""
    seed = check_run_seed(seed)
    t0 = time.perf_counter()
    xs = np.geomspace(config.x_max, config.x_min, config.n_points)
    curves: dict[str, dict[str, list]] = {}
    checks = []
    meta: dict[str, Any] = {"seed": seed, "fits": {}}
    models = _models(config, seed)
    bar = None
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        bar = tqdm(total=len(models) * xs.size, desc="discount-to-gain")
    for name, mdp in models.items():
        sol = average_policy_iteration(mdp, multichain=True)
        gains = np.asarray(sol.gain)
        g_star = float(np.mean(gains))
        span = float(np.ptp(np.asarray(sol.bias)))
        rows = []
        for x in xs:
            rows.append(discount_error(mdp, 1.0 - float(x), g_star))
            if bar is not None:
                bar.update(1)
        err = np.array([r["err"] for r in rows])
        unc = max(r["uncertainty"] for r in rows)
        bound = vanishing_discount_bound(1.0 - xs, span)
        laurent = xs * np.array([r["h_norm"] for r in rows])
        curves[name] = {
            "one_minus_gamma": xs.tolist(),
            "error": err.tolist(),
            "bound": bound.tolist(),
            "laurent": laurent.tolist(),
        }
        checks.append(
            Claim(
                f"{name}-bound",
                f"{name}: ‖(1−γ)V*_γ − g*‖∞ ≤ (1−γ)·sp(h*) at every γ (sp(h*) = {span:.4g}; "
                f"allowance = certified discount-solver error {unc:.2g})",
                SOURCE,
                None,
                "bound",
            ).check(check_bound(err, bound, atol=unc + 1e-13))
        )
        win = [i for i, x in enumerate(xs) if x <= config.fit_max * (1 + 1e-12)]
        if len(win) < 2:
            raise ValueError(
                f"Config.fit_max = {config.fit_max!r} leaves {len(win)} of the {config.n_points} values of "
                f"1−γ in [{config.x_min:g}, {config.x_max:g}] in the slope window; it needs at least 2"
            )
        kappa = max(rows[i]["kappa"] for i in win)
        fit = fit_rate(xs[win], err[win], seed=seed)
        tol = 3.0 * kappa
        optimal = all(rows[i]["gain_optimal"] for i in win)
        statement = (
            f"{name}: the least-squares log–log slope of the error against 1−γ on [{config.x_min:g}, "
            f"{config.fit_max:g}] is 1 within 3κ = {tol:.2g} (κ = max (1−γ)‖(I−γP)⁻¹Ph‖∞/‖h‖∞, the relative "
            f"second Laurent term; every policy on the window gain-optimal: {optimal})"
        )
        # the 3κ bound is on the OLS slope itself (a deterministic curve), so both one-sided checks
        # use the point estimate, not the bootstrap interval
        checks.append(
            Claim(f"{name}-slope-upper", statement, SOURCE, 1.0, "rate_at_most", tol).check(fit)
        )
        checks.append(
            Claim(f"{name}-slope-lower", statement, SOURCE, 1.0, "rate_at_least", tol).check(fit)
        )
        meta["fits"][name] = {
            "fit": fit.to_dict(),
            "kappa": kappa,
            "g_star": g_star,
            "bias_span": span,
            "gain_spread": float(np.ptp(gains)),
            "policies": [r["policy"] for r in rows],
        }
    if bar is not None:
        bar.close()
    meta["wall_time_s"] = time.perf_counter() - t0
    return ExperimentResult(
        name="discount-to-gain",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta=meta,
    )


def plot(result: ExperimentResult) -> Any:
    """One panel per model: error, (1−γ)sp(h*) bound, Laurent line, fitted slope with CI."""
    names = list(result.curves)
    fig, axes = figure(1, len(names), width=4.4, height=3.5)
    for ax, name in zip(axes[0], names, strict=True):
        c = result.curves[name]
        fit = RateFit.from_dict(result.meta["fits"][name]["fit"])
        convergence_plot(
            ax,
            c["one_minus_gamma"],
            c["error"],
            label="‖(1−γ)V*_γ − g*‖∞",
            bound=c["bound"],
            bound_label="(1−γ)·sp(h*)",
            fit=fit,
        )
        ax.plot(
            c["one_minus_gamma"],
            c["laurent"],
            ls="-.",
            lw=1.0,
            color="tab:green",
            label="(1−γ)‖h_π‖∞ (Laurent)",
        )
        ax.legend(fontsize="small")
        ax.set_xlabel("1 − γ")
        ax.set_title(name)
    fig.suptitle("Vanishing discount: (1−γ)V*_γ → g* at rate O(1−γ)")
    return fig


EXPERIMENT = register(
    Experiment(
        name="discount-to-gain",
        title="(1−γ)V*_γ → g* with error ≤ (1−γ)sp(h*) and log–log slope 1 (Laurent expansion, Puterman §8.2)",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)


# ---- rvi-spectral-gap ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RVIConfig:
    """Two-room family of ``rvi-spectral-gap``.

    Attributes
    ----------
    room_size : int
    bottlenecks : tuple of float
        Door probabilities ``p`` (one curve each).
    tau : float
        Aperiodicity transform.
    tol : float
        RVI stopping tolerance on ``sp(Tv − v)``.
    """

    room_size: int = 4
    bottlenecks: tuple[float, ...] = (0.3, 0.1, 0.03)
    tau: float = 0.5
    tol: float = 1e-11
    rate_tol: float = 1e-4

    def __post_init__(self) -> None:
        # bottlenecks=() ran no RVI and returned a result without claims (passed = False, no reason)
        if len(self.bottlenecks) == 0:
            raise ValueError(
                "RVIConfig.bottlenecks must not be empty (one RVI run and rate claim per p)"
            )

    @classmethod
    def quick(cls) -> RVIConfig:
        """Rooms of 4, p ∈ {0.3, 0.1, 0.03}: well under a second."""
        return cls()

    @classmethod
    def full(cls) -> RVIConfig:
        """Rooms of 8, p down to 0.003."""
        return cls(room_size=8, bottlenecks=(0.3, 0.1, 0.03, 0.01, 0.003))


def run_rvi(config: RVIConfig, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Run RVI on each two-room model, fit the tail rate, compare with the spectral prediction."""
    seed = check_run_seed(seed)  # (a bad seed failed in the rate fit, after every RVI run)
    t0 = time.perf_counter()
    curves: dict[str, dict[str, list]] = {}
    checks = []
    meta: dict[str, Any] = {"seed": seed, "fits": {}}
    for p in config.bottlenecks:
        mdp = two_room_mdp(config.room_size, p, reward="dense")
        res = relative_value_iteration(mdp, tau=config.tau, tol=config.tol, max_iter=10_000_000)
        span = np.asarray(res.trace["span"])
        k = np.arange(span.size)
        P = np.asarray(policy_transition_matrix(mdp, res.policy))
        rho = rvi_asymptotic_rate(P, config.tau)
        half = int(k[-1]) // 2
        fit = fit_linear_rate(k, span, window=(half, int(k[-1])), seed=seed)
        panel = f"p={p:g}"
        curves[panel] = {
            "k": k.tolist(),
            "span": span.tolist(),
            "predicted": (span[half] * rho ** (k - half)).tolist(),
        }
        checks.append(
            Claim(
                f"rvi-rate-{panel}",
                f"two rooms, p={p:g}: RVI tail rate = SLEM of τP_π* + (1−τ)I = {rho:.6f} "
                f"within {config.rate_tol:g}",
                "Puterman (1994) §8.5.4; rltheory.bounds.average.rvi_asymptotic_rate",
                rho,
                "rate",
                config.rate_tol,
            ).check(fit)
        )
        sg = spectral_gap(P)
        # converged: False when RVI stopped before its bound reached tol (a tol below the
        # certificate's round-off floor); "iterations" is then not an iteration count to tol
        meta["fits"][panel] = {
            "fit": fit.to_dict(),
            "rho": rho,
            "iterations": res.iterations,
            "converged": bool(res.converged),
            "gain": float(res.gain),
            "absolute_gap": sg.absolute_gap,
            "predicted_iterations": math.log(span[0] / config.tol) / -math.log(rho),
        }
        if progress:
            print(f"p={p:g}: {res.iterations} iterations, rho={rho:.6f}")
    meta["wall_time_s"] = time.perf_counter() - t0
    return ExperimentResult(
        name="rvi-spectral-gap",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta=meta,
    )


def plot_rvi(result: ExperimentResult) -> Any:
    """Left: span curves with the predicted ρ^k lines; right: iterations against 1/(1−ρ)."""
    fig, axes = figure(1, 2, width=4.8, height=3.6)
    ax = axes[0, 0]
    for panel, c in result.curves.items():
        k = np.asarray(c["k"], dtype=float)
        ax.plot(k, c["span"], lw=2, label=f"{panel}: sp(Tv_k − v_k)")
        ax.plot(k, c["predicted"], ls="--", lw=1, color="black")
    ax.set_yscale("log")
    ax.set_xlabel("iteration k")
    ax.set_title("RVI span vs ρ^k (dashed)")
    ax.legend(fontsize="small")
    ax = axes[0, 1]
    fits = result.meta["fits"]
    inv = [1.0 / (1.0 - f["rho"]) for f in fits.values()]
    its = [f["iterations"] for f in fits.values()]
    ax.loglog(inv, its, "o-", label="RVI iterations to tol")
    ax.loglog(
        inv,
        [f["predicted_iterations"] for f in fits.values()],
        "k--",
        label="log(sp₀/tol)/log(1/ρ)",
    )
    ax.set_xlabel("1/(1 − ρ)")
    ax.legend(fontsize="small")
    ax.set_title("iterations grow like 1/spectral gap")
    fig.suptitle("Relative value iteration vs the spectral gap of the optimal chain")
    return fig


RVI_EXPERIMENT = register(
    Experiment(
        name="rvi-spectral-gap",
        title="RVI converges at the SLEM of the aperiodic-transformed optimal chain (two-room bottleneck dial)",
        config_cls=RVIConfig,
        run=run_rvi,
        plot=plot_rvi,
    )
)
