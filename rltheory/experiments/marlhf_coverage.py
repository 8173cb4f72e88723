r"""MARLHF: learning a Nash equilibrium from preferences needs unilateral coverage, not single-policy coverage.

Two-player ``3×3`` general-sum game (one step, one state). Rewards are never
observed: each player compares two sampled joint actions and prefers the first with
probability ``σ(c·(r_i(a) − r_i(a')))`` (Bradley–Terry, scale ``c``). The learner
(:func:`rltheory.algorithms.offline_games.marlhf_equilibrium`) fits the rewards by
Bradley–Terry MLE and returns the pure profile minimising an upper confidence bound on
its Nash gap, ``Σ_i max_{a_i'} [θ̂_iᵀΔ + β‖Δ‖_{Σ^{-1}}]``.

*Lower-bound witness* (Zhang et al. 2024; Cui & Du 2022): games I and II differ only in
player 1's reward at the deviation ``(1, 0)`` — 0.6 in I, where ``(0, 0)`` is the unique
pure equilibrium (weakly: the deviation ties), 0.9 in II, where ``(0, 0)`` is not an
equilibrium. Datasets:

* ``single`` — joint actions from the equilibrium ``(0, 0)`` and the diagonal
  ``(1, 1), (2, 2)``: single-policy concentrability ``C*`` is finite but no unilateral
  deviation is ever seen (``C_uni = ∞``). The preference data have the same law under I
  and II, so every learner outputs the same profiles in both, and one of the two games
  leaves it a NashConv ``≥ 0.2``: the gap does not vanish with ``N``.
* ``unilateral`` — adds every unilateral deviation ``(a, 0)``, ``(0, b)``
  (``C_uni < ∞``): the learner identifies ``(0, 0)`` in game I, and the certificate (the
  UCB of its output) decays as ``N^{-1/2}``.

Claims checked:

1. *witness* — under ``single``, the learner's outputs are identical in games I and II
   in every run, and ``max(NashConv_I, NashConv_II) ≥ 0.2`` on average at every ``N``;
2. *unilateral → 0* — under ``unilateral`` in game I, the output's NashConv is at most
   its certificate (UCB) at every ``N`` and is 0 at the largest ``N``;
3. *rate* — that certificate decays as ``N^{-1/2}``: the weak equilibrium makes its tied
   deviation's term ``β‖Δ‖_{Σ^{-1}} ∝ N^{-1/2}`` the whole certificate once ``N ≥ N*``
   (:func:`certificate_regime`: every losing deviation's term is negative there; ``N* = 4812``
   for the defaults). The slope is fitted on the sizes ``N ≥ N*``, one curve per seed, with
   Student's ``t`` interval over the seeds (:func:`rltheory.bounds.fit_rate` with runs in rows),
   and must contain −1/2 with no allowance, half-width ``≤ 0.1``. Quick preset (sizes 6400,
   9051, 12 800 in the window), seeds 0–3: −0.484 [−0.560, −0.408], −0.506 [−0.581, −0.431],
   −0.518 [−0.560, −0.477], −0.496 [−0.574, −0.417]. The former fit of the seed-mean curve over
   all sizes 200 … 12 800 gave −0.676 [−0.730, −0.622] (seed 0; −0.670, −0.671, −0.670 at seeds
   1–3), pulled down by the losing deviations' terms below ``N*``, and passed only through its
   allowance 0.15;
4. *confidence event* — the radius ``β = √((D + 2 ln(1/δ))/κ)`` (``κ = σ'(c·range r)``,
   the smallest logistic curvature) contains ``θ`` — ``‖θ̂_i − c r_i‖_Σ ≤ β`` on the
   identified directions — in at least ``1 − δ`` of the runs.

References
----------
Zhang, N., Wang, X., Cui, Q., Zhou, R., Kakade, S., Du, S. (2024). Multi-agent RL from human
feedback: data coverage and algorithmic techniques.
Cui, Q., Du, S. S. (2022). When are offline two-player zero-sum Markov games solvable? NeurIPS 35
(single-policy coverage is insufficient; unilateral coverage suffices).
Zhu, B., Jordan, M., Jiao, J. (2023). Principled RL with human feedback from pairwise or
K-wise comparisons. ICML, Lemma 3.1 (MLE confidence set in the data covariance norm).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_real
from ..algorithms.offline_games import (
    _equilibrium_gap,
    bradley_terry_mle,
    marlhf_equilibrium,
)
from ..bounds import Claim, RateFit, check_bound, fit_rate
from ..bounds.coverage import single_policy_concentrability, unilateral_concentrability
from ..bounds.rates import BoundCheck, ClaimCheck
from ..mdp.offline_data import sample_game_episodes, sample_preferences
from ..plot import convergence_plot, figure
from ._offline_config import check_delta, check_seeds, check_sizes
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = [
    "Config",
    "run",
    "plot",
    "witness_games",
    "coverage_behaviour",
    "certificate_regime",
    "EXPERIMENT",
]

RATE_PRECISION = 0.1
"""Largest half-width of the unilateral-rate interval that measures the slope: it must tell −1/2
from −0.4 and −0.6 (the pre-asymptotic fit over all quick sizes read −0.67)."""


@dataclass(frozen=True)
class Config:
    """Preference-set sizes, seeds and the Bradley–Terry scale.

    Attributes
    ----------
    sizes : tuple of int
        Numbers of compared pairs ``N``.
    seeds : int
    scale : float
        ``c`` in ``σ(c·ΔR)``.
    delta : float
    ridge : float
        ``λ`` of the MLE.
    """

    sizes: tuple[int, ...] = (200, 400, 800, 1600, 3200, 6400, 9051, 12800)
    seeds: int = 20
    scale: float = 5.0
    delta: float = 0.1
    ridge: float = 1e-3

    def __post_init__(self) -> None:
        check_sizes(self.sizes, "Config.sizes", distinct=3)
        check_seeds(self.seeds, "Config.seeds")
        check_real(self.scale, "Config.scale", low=0.0, low_open=True)
        check_delta(self.delta, "Config.delta")
        check_real(self.ridge, "Config.ridge", low=0.0, low_open=True)
        self.rate_window()  # names the sizes when fewer than 3 reach the N^(-1/2) regime

    def rate_window(self) -> tuple[float, list[int]]:
        """``N*`` of :func:`certificate_regime` for game I under the unilateral data, and the
        sizes ``N ≥ N*`` the rate is fitted on; ``ValueError`` naming ``Config.sizes`` when
        fewer than 3 of them are."""
        if self.seeds < 2:  # the interval is Student's t over the seeds' slopes
            raise ValueError(
                f"Config.seeds must be at least 2 (the unilateral rate's interval is over the seeds' "
                f"slopes); got {self.seeds!r}"
            )
        n_star = certificate_regime(self.scale, self.delta)
        window = sorted({int(n) for n in self.sizes if n >= n_star})
        if len(window) < 3:
            raise ValueError(
                f"Config.sizes must hold at least 3 different sizes N >= N* = {n_star:.0f} (above it the "
                f"certificate decays as N^(-1/2): certificate_regime); got {window} of {self.sizes!r}"
            )
        return n_star, window

    @classmethod
    def quick(cls) -> Config:
        """Sizes 200 … 12 800 (doubling, with 9051 between the last two: three sizes above
        ``N* ≈ 4812`` for the rate)."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        return cls(sizes=tuple(200 * 2**j for j in range(10)), seeds=100)


def witness_games() -> dict[str, np.ndarray]:
    """Reward tensors ``R[i, h=0, s=0, a, b]`` of games I and II (they differ only at ``r_1(1, 0)``)."""
    r1 = np.array([[0.6, 0.7, 0.7], [0.6, 0.5, 0.1], [0.3, 0.1, 0.5]])
    r2 = np.array([[0.6, 0.4, 0.3], [0.2, 0.5, 0.1], [0.1, 0.3, 0.5]])
    r1b = r1.copy()
    r1b[1, 0] = 0.9
    return {"I": np.stack([r1, r2])[:, None, None], "II": np.stack([r1b, r2])[:, None, None]}


def coverage_behaviour(kind: str) -> np.ndarray:
    """Joint-action sampling distribution ``[1, 1, 3, 3]`` of the ``single`` / ``unilateral`` datasets."""
    b = np.zeros((3, 3))
    if kind == "single":
        b[0, 0], b[1, 1], b[2, 2] = 0.8, 0.1, 0.1
    elif kind == "unilateral":
        b[0, 0] = 0.4
        b[1, 0] = b[2, 0] = b[0, 1] = b[0, 2] = 0.1
        b[1, 1] = b[2, 2] = 0.1
    else:
        raise ValueError(f"kind must be 'single' or 'unilateral'; got {kind!r}")
    return b[None, None]


def certificate_regime(scale: float, delta: float) -> float:
    r"""``N*``: above it the certificate of ``(0, 0)`` in game I under the ``unilateral`` data is its
    tied deviation's term alone, in expectation.

    The certificate is ``Σ_i max_{a_i'} [θ̂_iᵀΔ + β‖Δ‖_{Σ^{-1}}]`` (0 for ``a_i' = a_i``). With
    pairs of independent draws from the behaviour ``b``, ``Σ ≈ 2N(diag b − bbᵀ)``, and for
    ``Δ = e_d − e_{(0,0)}`` (sum zero) ``‖Δ‖²_{Σ^{-1}} ≈ (1/b_d + 1/b_{(0,0)})/(2N)``. A deviation
    ``d`` that loses ``|Δr_d| > 0`` has ``θᵀΔ = −c|Δr_d|`` and leaves the max once
    ``β‖Δ‖_{Σ^{-1}} < c|Δr_d|``, i.e. ``N > β²(1/b_d + 1/b_{(0,0)})/(2c²Δr_d²)``; ``N*`` is the
    largest of these. Below it the certificate carries ``β‖Δ_d‖ − c|Δr_d|`` terms, which fall
    faster than ``N^{-1/2}``: over the quick sizes 200 … 12 800 the fitted slope was −0.67.
    Game I, ``c = 5``, ``δ = 0.1``: player 2's deviation ``(0, 1)`` (``Δr = −0.2``, ``b = 0.1``)
    gives ``N* = 6.25 β² = 4812``.
    """
    r = witness_games()["I"][:, 0, 0]  # (player, a1, a2)
    b = coverage_behaviour("unilateral")[0, 0]
    r_range = float(max(np.ptp(R) for R in witness_games().values()))
    kappa = math.exp(-scale * r_range) / (1.0 + math.exp(-scale * r_range)) ** 2
    beta2 = (9 + 2.0 * math.log(1.0 / delta)) / kappa
    n_star = 0.0
    for i in range(2):
        for dev in (1, 2):
            a = (dev, 0) if i == 0 else (0, dev)
            dr = float(r[i][a] - r[i][0, 0])
            if dr < 0:
                n_star = max(
                    n_star, beta2 * (1.0 / b[a] + 1.0 / b[0, 0]) / (2.0 * (scale * dr) ** 2)
                )
    return n_star


def _event(fit: Any, R: np.ndarray, scale: float, beta: float, ridge: float) -> bool:
    """``‖θ̂_i − c r_i‖_Σ ≤ β`` after removing the unidentified directions (null space of the data).

    The identified directions are the eigenvectors of ``XᵀX = Σ − λI`` (``fit.gram`` less the
    ridge) with eigenvalue ``> 1e-9·max(λ_max, 1)``: ``X`` holds differences of one-hot features,
    so ``XᵀX`` has integer entries, its null eigenvalues are round-off (``≲ 1e-11`` here) and the
    others at least ``≈ 0.1·N``. An SVD of the ``N × 9`` matrix ``X`` gave the same directions at
    ~12% of the quick run's time.
    """
    G = np.asarray(fit.gram, dtype=np.float64) - ridge * np.eye(fit.gram.shape[0])
    w, V = np.linalg.eigh(G)
    B = V[:, w > 1e-9 * max(float(w.max()), 1.0)]  # identified directions
    ok = True
    for i in range(R.shape[0]):
        err = B @ (B.T @ (fit.theta[i].reshape(-1) - scale * R[i].reshape(-1)))
        ok &= float(np.sqrt(err @ fit.gram @ err)) <= beta
    return bool(ok)


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Sample preference datasets of each size and coverage, learn, measure NashConv (module docstring)."""
    t0 = time.perf_counter()
    seed = check_run_seed(seed)
    games = witness_games()
    P = np.ones((1, 1, 3, 3, 1))
    cands = [np.eye(9)[j].reshape(1, 1, 3, 3) for j in range(9)]
    rng_all = np.random.default_rng(seed)
    D = 9
    r_range = float(max(np.ptp(R) for R in games.values()))
    kappa = math.exp(-config.scale * r_range) / (1.0 + math.exp(-config.scale * r_range)) ** 2
    beta = math.sqrt((D + 2.0 * math.log(1.0 / config.delta)) / kappa)
    sizes = np.asarray(config.sizes, dtype=float)
    curves: dict[str, dict[str, list]] = {}
    checks = []
    meta: dict[str, Any] = {"seed": seed, "beta": beta, "kappa": kappa, "fits": {}}
    pi_star = [np.eye(3)[[0]][None], np.eye(3)[[0]][None]]  # (0, 0): [H=1, S=1, A]
    d_star = np.zeros((1, 1, 3, 3))
    d_star[0, 0, 0, 0] = 1.0
    bar = None
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        bar = tqdm(total=2 * len(sizes), desc="marlhf-coverage")
    for kind in ("single", "unilateral"):
        rho = coverage_behaviour(kind)
        meta[f"C_star_{kind}"] = single_policy_concentrability(d_star, rho)
        meta[f"C_uni_{kind}"] = unilateral_concentrability(P, pi_star, rho)
        nc = {g: np.zeros((len(sizes), config.seeds)) for g in games}
        ucb = {g: np.zeros((len(sizes), config.seeds)) for g in games}
        same = True
        events = 0
        for i, N in enumerate(config.sizes):
            for j in range(config.seeds):
                run_seed = int(rng_all.integers(2**31))
                chosen = {}
                for g, R in games.items():
                    rng = np.random.default_rng(run_seed)  # the same draws for both games
                    t1 = sample_game_episodes(P, R, rho, int(N), rng=rng)
                    t2 = sample_game_episodes(P, R, rho, int(N), rng=rng)
                    prefs = sample_preferences(t1, t2, R, rng=rng, scale=config.scale)
                    fit = bradley_terry_mle(prefs, ridge=config.ridge)
                    out = marlhf_equilibrium(prefs, P, cands, beta=beta, fit=fit)
                    chosen[g] = out.candidate
                    nc[g][i, j] = _equilibrium_gap(
                        P, np.asarray(R, dtype=np.float64), out.policy, "nash", np.ones(1)
                    )
                    ucb[g][i, j] = out.gap_ucb[out.candidate] / config.scale
                    if g == "I":
                        events += _event(fit, R, config.scale, beta, config.ridge)
                same &= chosen["I"] == chosen["II"]
            if bar is not None:
                bar.update(1)
        panel = f"{kind} coverage"
        curves[panel] = {"N": sizes.tolist()}
        for g in games:
            curves[panel][f"nashconv_{g}"] = nc[g].mean(1).tolist()
            curves[panel][f"ucb_{g}"] = ucb[g].mean(1).tolist()
        freq = events / (len(sizes) * config.seeds)
        meta[f"event_frequency_{kind}"] = freq
        checks.append(
            Claim(
                f"{kind}-confidence-event",
                f"{kind}: ‖θ̂_i − c r_i‖_Σ ≤ β on the identified directions in at least "
                f"1 − δ = {1 - config.delta} of the runs (β = √((D + 2 ln 1/δ)/κ) = {beta:.3g})",
                "Zhu, Jordan & Jiao (2023), Lemma 3.1 (form)",
                None,
                "bound",
            ).check(check_bound([1.0 - freq], [config.delta]))
        )
        if kind == "single":
            worst = np.maximum(nc["I"].mean(1), nc["II"].mean(1))
            curves[panel]["nashconv_max"] = worst.tolist()
            checks.append(
                Claim(
                    "single-witness",
                    "single-policy coverage: max over the witness games I, II of the mean NashConv "
                    "stays ≥ 0.2 at every N (the data cannot tell I from II)",
                    "Zhang et al. (2024); Cui & Du (2022)",
                    None,
                    "bound",
                ).check(check_bound(np.full(len(sizes), 0.2), worst))
            )
            bc = BoundCheck(
                worst_ratio=0.0 if same else math.inf,
                holds=bool(same),
                argmax=(0,),
                n=len(sizes) * config.seeds,
            )
            checks.append(
                ClaimCheck(
                    Claim(
                        "single-indistinguishable",
                        "single-policy coverage: the learner's output is the same in games I and "
                        "II in every run (identical preference data)",
                        "Zhang et al. (2024)",
                        None,
                        "bound",
                    ),
                    bound_check=bc,
                )
            )
        else:
            m_nc, m_ucb = nc["I"].mean(1), ucb["I"].mean(1)
            checks.append(
                Claim(
                    "unilateral-certified",
                    "unilateral coverage, game I: mean NashConv ≤ mean certificate (UCB of the "
                    "output) at every N, and NashConv = 0 at the largest N",
                    "Zhang et al. (2024)",
                    None,
                    "bound",
                ).check(
                    check_bound(np.concatenate([m_nc, [m_nc[-1]]]), np.concatenate([m_ucb, [0.0]]))
                )
            )
            n_star, window = config.rate_window()
            w = np.isin(np.asarray(config.sizes), window)
            # one curve per seed j (independent runs at every N): Student t over the seeds' slopes
            fit = fit_rate(sizes[w], ucb["I"][w].T, seed=seed)
            meta["fits"]["unilateral-ucb"] = fit.to_dict()
            meta["rate_regime_N"] = n_star
            checks.append(
                Claim(
                    "unilateral-rate",
                    f"unilateral coverage, game I: the certificate decays as N^(−1/2) for "
                    f"N ≥ N* = {n_star:.0f} (every losing deviation's term β‖Δ‖_Σ^-1 − c|Δr| < 0 there); slope over "
                    f"N ∈ {window}, one fit per seed, Student t interval over the {config.seeds} seeds; "
                    "no allowance, precision 0.1",
                    "Zhang et al. (2024); Zhu, Jordan & Jiao (2023)",
                    -0.5,
                    "rate",
                    precision=RATE_PRECISION,
                ).check(fit)
            )
    if bar is not None:
        bar.close()
    meta["wall_time_s"] = time.perf_counter() - t0
    return ExperimentResult(
        name="marlhf-coverage",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta=meta,
    )


def plot(result: ExperimentResult) -> Any:
    """Two panels: NashConv vs N under single-policy and under unilateral coverage, with the certificates."""
    fig, axes = figure(1, 2, width=5.4, height=4.2)
    c = result.curves["single coverage"]
    N = np.asarray(c["N"])
    ax = axes[0, 0]
    ax.plot(
        N,
        c["nashconv_max"],
        marker="o",
        lw=2.2,
        color="tab:blue",
        label="max(NashConv_I, NashConv_II)",
    )
    ax.plot(N, c["nashconv_I"], marker=".", ls=":", color="tab:green", label="NashConv, game I")
    ax.plot(N, c["nashconv_II"], marker=".", ls=":", color="tab:orange", label="NashConv, game II")
    ax.plot(N, c["ucb_I"], ls="--", color="tab:red", label="certificate (UCB) of the output")
    ax.axhline(0.2, color="gray", lw=0.8, label="0.2 (witness gap)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    m = result.meta
    ax.set_title(
        f"single-policy coverage: C* = {m.get('C_star_single', float('nan')):.3g}, "
        f"C_uni = {m.get('C_uni_single', float('nan')):.3g}"
    )
    ax.set_xlabel("preference pairs N")
    ax.set_ylabel("NashConv")
    ax.legend(fontsize="x-small")
    c = result.curves["unilateral coverage"]
    fit = (
        RateFit.from_dict(m["fits"]["unilateral-ucb"])
        if "unilateral-ucb" in m.get("fits", {})
        else None
    )
    ax = axes[0, 1]
    nc = np.asarray(c["nashconv_I"], dtype=float)
    u = np.asarray(c["ucb_I"], dtype=float)
    convergence_plot(
        ax,
        N,
        u,
        label="certificate (UCB) of the output, game I",
        fit=fit,
        bound=u[0] * np.sqrt(N[0] / N),
        bound_label="∝ N^(−1/2) (from the first point)",
    )
    ax.plot(
        N,
        np.where(nc > 0, nc, np.nan),
        marker="o",
        color="tab:green",
        label="NashConv, game I (0 not drawn)",
    )
    if np.all(nc == 0):
        ax.text(
            0.03, 0.04, "measured NashConv = 0 at every N", transform=ax.transAxes, fontsize="small"
        )
    ax.set_title(
        f"unilateral coverage: C* = {m.get('C_star_unilateral', float('nan')):.3g}, "
        f"C_uni = {m.get('C_uni_unilateral', float('nan')):.3g}"
    )
    ax.set_xlabel("preference pairs N")
    ax.set_ylabel("NashConv / certificate")
    ax.legend(fontsize="x-small")
    fig.suptitle(
        "MARLHF: single-policy coverage cannot certify a Nash equilibrium, unilateral coverage can"
    )
    return fig


EXPERIMENT = register(
    Experiment(
        name="marlhf-coverage",
        title="NashConv from preference data vs N: single-policy vs unilateral coverage (Zhang et al. 2024)",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
