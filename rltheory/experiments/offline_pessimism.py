r"""Offline RL: suboptimality against the dataset size, greedy vs LCB-VI vs PEVI, good vs poor coverage.

Instance ("trap MDP"): horizon ``H``, ``S`` states, uniform transitions, Bernoulli
rewards. At every ``(h, s)`` there are ``n_good`` actions with means ``0.75, 0.65, …``
(the first is optimal) and ``n_traps`` *trap* actions of mean ``0.5``. It is a linear
MDP with action features ``φ(s, a) = e_a`` (``d = A``; ``P_h(·|s,a)`` = uniform), which
PEVI uses.

Coverage:

* **good** — uniform behaviour: every action is well covered (all-policy
  concentrability ``= A``);
* **poor** — the behaviour plays the good actions almost always and the traps
  with geometrically decreasing probabilities ``q_j = q_0 2^{−j}``, down to about
  ``1/K_max`` per state: at every dataset size some traps are seen once or twice. The
  optimal policy stays well covered (single-policy concentrability ``C*`` small),
  the traps do not.

A greedy learner (certainty equivalence) believes a trap seen once with reward 1 is
worth 1 > 0.75 and keeps failing at every ``K`` (its error plateaus); pessimism
(LCB-VI with Hoeffding or Bernstein bonus, PEVI) pays ``Γ ∝ 1/√n`` on the traps and
keeps the ``1/√K`` behaviour, which depends only on ``C*``.

Claims checked (per coverage):

1. *event* — the pessimistic guarantee holds in at least ``1 − δ`` of the seeded
   datasets at every ``K``: ``V̂_h ≤ V^{π̂}_h`` pointwise **and**
   ``SubOpt ≤ 2 Σ_h E_{π*}[Γ_h]`` (Jin, Yang & Wang 2021, Thm 4.2) for LCB-VI
   (Hoeffding, Bernstein) and PEVI (self-normalised radius);
2. *bound slope −1/2* — the mean data-dependent bound ``2Σ_h E_{π*}[Γ_h]`` of each
   pessimistic method decays as ``K^{−1/2}``: fitted log–log slope within ``0.12`` of
   ``−1/2`` (LCB-VI Hoeffding, PEVI) or at most ``−0.4`` (Bernstein, whose radius adds
   an ``n^{−1}`` term) over the sizes where every comparator pair is seen (``n_h ≥ 2``);
3. *greedy, good coverage* — the greedy error decays at least as ``K^{−1/2}``
   (slope ``≤ −0.4``);
4. *greedy, poor coverage* — it does not: slope ``≥ −0.2`` over the whole range;
5. *pessimism beats greedy under poor coverage* — at the three largest ``K``, LCB-VI's
   mean error is at most a quarter of the greedy one.

The LCB rate in ``C*`` (:func:`rltheory.bounds.offline.lcb_vi_rate`,
``H(H+1)√(S C* ι/⌊K/H⌋)``) is drawn for reference.

References
----------
Rashidinejad, P., Zhu, B., Ma, C., Jiao, J., Russell, S. (2021). Bridging offline RL and
imitation learning: a tale of pessimism. NeurIPS 34 (greedy fails under partial coverage;
LCB does not).
Jin, Y., Yang, Z., Wang, Z. (2021). Is pessimism provably efficient for offline RL? ICML, Thm 4.2.
Xie, T., Jiang, N., Wang, H., Xiong, C., Bai, Y. (2021). Policy finetuning. NeurIPS 34.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_int, check_real
from ..algorithms.offline import certainty_equivalence, lcb_vi, pevi
from ..bounds import BoundCheck, Claim, ClaimCheck, RateFit, check_bound, fit_rate
from ..bounds.coverage import (
    all_policy_concentrability,
    finite_horizon_occupancy,
    single_policy_concentrability,
)
from ..bounds.offline import lcb_vi_rate, pessimism_suboptimality_bound
from ..mdp import FiniteHorizonMDP, backward_induction, evaluate_finite_horizon
from ..mdp.offline_data import sample_episodes
from ..plot import convergence_plot, figure
from ._offline_config import check_delta, check_seeds, check_sizes
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = ["Config", "run", "plot", "trap_mdp", "trap_behaviour", "EXPERIMENT"]

METHODS = ("greedy", "lcb-hoeffding", "lcb-bernstein", "pevi")
PESSIMISTIC = METHODS[1:]


@dataclass(frozen=True)
class Config:
    """Instance sizes, dataset sizes and seeds.

    Attributes
    ----------
    H, S : int
    n_good : int
        Non-trap actions (means 0.75, 0.65, …; the first is optimal).
    sizes : tuple of int
        Numbers of episodes ``K``.
    seeds : int
        Datasets per ``K``.
    delta : float
        Failure probability of every confidence event.
    trap_mass : float
        ``q_0``, the largest trap probability under poor coverage.
    """

    H: int = 3
    S: int = 2
    n_good: int = 4
    sizes: tuple[int, ...] = (
        400,
        566,
        800,
        1131,
        1600,
        2263,
        3200,
        4525,
        6400,
        12800,
        25600,
        51200,
    )
    seeds: int = 40
    delta: float = 0.1
    trap_mass: float = 0.04

    def __post_init__(self) -> None:
        check_int(self.H, "Config.H")
        check_int(self.S, "Config.S")
        check_int(self.n_good, "Config.n_good")
        check_sizes(self.sizes, "Config.sizes")
        check_seeds(self.seeds, "Config.seeds")
        check_delta(self.delta, "Config.delta")
        check_real(
            self.trap_mass, "Config.trap_mass", low=0.0, high=1.0, low_open=True, high_open=True
        )
        if self.n_good > 8:  # trap_mdp's rule, raised before the run rather than inside it
            raise ValueError(
                f"Config.n_good must be at most 8 (the Bernoulli means 0.75 − 0.1j stay in [0, 1]); "
                f"got {self.n_good}"
            )
        # the number of traps follows from trap_mass and max(sizes)/S; it was checked only inside the run
        # ("n_traps must be an integer >= 0; got -1", a field the config does not have) and the upper
        # limit of trap_mass only after the whole good-coverage half had run
        n = _n_traps(self)
        if n < 1:
            raise ValueError(
                f"Config.trap_mass · max(sizes)/S must exceed 1/2 (at least one trap action); got "
                f"{self.trap_mass!r} · {max(self.sizes)}/{self.S} = {self.trap_mass * max(self.sizes) / self.S:.3g}"
            )
        top = 1.0 / (2.0 * (1.0 - 0.5**n))
        if not self.trap_mass < top:
            raise ValueError(
                f"Config.trap_mass must be below {top:.6g} (with {n} traps the good actions keep "
                f"positive mass only then); got {self.trap_mass!r}"
            )

    @classmethod
    def quick(cls) -> Config:
        """``K`` from 400 to 51200, spaced by ``√2`` up to 6400 and by 2 above, 40 datasets per ``K``.

        Greedy's error under good coverage is positive only up to ``K`` ≈ 6400 and falls
        faster than any power there (a wrong greedy choice has exponentially small
        probability). With the sizes doubling, its slope was fitted on five points and the
        interval at seed 0 was (−4.05, 0.28), straddling the threshold −0.4 of
        ``good-greedy-rate``; the ``√2`` spacing gives nine or ten points and intervals
        below it (e.g. (−1.92, −1.18) at seed 0) at seeds 0–3.
        """
        return cls()

    @classmethod
    def full(cls) -> Config:
        return cls(sizes=tuple(400 * 2**j for j in range(10)), seeds=200)


def trap_mdp(H: int, S: int, n_good: int, n_traps: int) -> FiniteHorizonMDP:
    """The trap MDP: actions ``0..n_traps−1`` are traps (mean 0.5), then the good actions
    (means ``0.75 − 0.1 j``, ``j < n_good``); transitions are uniform, so ``V*_h = 0.75 (H − h)``.

    Raises
    ------
    ValueError
        ``n_good`` not in ``1..8`` (the Bernoulli means must stay in ``[0, 1]``), ``n_traps < 0``, or a bad
        ``H``/``S`` (from :class:`rltheory.mdp.FiniteHorizonMDP`).
    """
    n_good = check_int(n_good, "n_good")
    if n_good > 8:
        raise ValueError(
            f"n_good must be at most 8 (the Bernoulli means 0.75 − 0.1j, j < n_good, must stay in "
            f"[0, 1]); got {n_good}"
        )
    n_traps = check_int(n_traps, "n_traps", 0)
    A = n_traps + n_good
    means = np.empty(A)
    means[:n_traps] = 0.5
    means[n_traps:] = 0.75 - 0.1 * np.arange(n_good)
    return FiniteHorizonMDP(
        np.full((H, S, A, S), 1.0 / S), np.broadcast_to(means, (H, S, A)).copy()
    )


def _n_traps(config: Config) -> int:
    # smallest trap mass ≈ 1/(per-state sample count at K_max): q_0 2^{-(J-1)} ≤ S/K_max
    per_state = max(config.sizes) / config.S
    return int(np.ceil(np.log2(config.trap_mass * per_state))) + 1


def trap_behaviour(fh: FiniteHorizonMDP, n_traps: int, kind: str, trap_mass: float) -> np.ndarray:
    """Uniform (``kind="good"``) or geometric trap masses ``q_0 2^{−j}`` (``kind="poor"``).

    Raises
    ------
    ValueError
        ``kind`` not ``"good"``/``"poor"``; ``n_traps`` not in ``0..A−1``; for ``"poor"``,
        ``trap_mass`` outside ``(0, 1/(2(1 − 2^{−n_traps})))``, where the good actions would keep no mass.
    """
    if kind not in ("good", "poor"):
        raise ValueError(f"kind must be 'good' or 'poor'; got {kind!r}")
    A = fh.A
    n_traps = check_int(n_traps, "n_traps", 0)
    if n_traps >= A:
        raise ValueError(
            f"n_traps must leave at least one good action among the model's A = {A}; got {n_traps}"
        )
    if kind == "poor":
        top = 1.0 / (2.0 * (1.0 - 0.5**n_traps))  # q_0 Σ_j 2^{-j} < 1
        check_real(
            trap_mass,
            f"trap_mass (with {n_traps} traps the good actions keep positive mass only)",
            low=0.0,
            high=top,
            low_open=True,
            high_open=True,
        )
    b = np.full(A, 1.0 / A)
    if kind == "poor":
        b[:n_traps] = trap_mass * 0.5 ** np.arange(n_traps)
        b[n_traps:] = (1.0 - b[:n_traps].sum()) / (A - n_traps)
    return np.broadcast_to(b, (fh.H, fh.S, A)).copy()


def _solve(method: str, data: Any, features: np.ndarray, delta: float) -> Any:
    if method == "greedy":
        return certainty_equivalence(data)
    if method == "lcb-hoeffding":
        return lcb_vi(data, bonus="hoeffding", delta=delta)
    if method == "lcb-bernstein":
        return lcb_vi(data, bonus="bernstein", delta=delta)
    return pevi(data, features, beta="self-normalized", ridge=0.01, delta=delta, split=True)


def _rate_claim(claim: Claim, fit: RateFit | None, otherwise: bool) -> ClaimCheck:
    """``claim.check(fit)``, or the verdict ``otherwise`` when the data admit no rate fit (``fit=None``)."""
    if fit is not None:
        return claim.check(fit)
    bc = BoundCheck(worst_ratio=0.0 if otherwise else math.inf, holds=otherwise, argmax=(0,), n=0)
    return ClaimCheck(claim, bound_check=bc, passed=otherwise)


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Sample datasets at every size, run the four learners, check the claims (module docstring)."""
    t0 = time.perf_counter()
    seed = check_run_seed(seed)
    n_traps = _n_traps(config)
    fh = trap_mdp(config.H, config.S, config.n_good, n_traps)
    sol = backward_induction(fh)
    mu = np.asarray(fh.initial_distribution())
    v_star = float(np.asarray(sol.V)[0] @ mu)
    d_star = np.asarray(finite_horizon_occupancy(fh, sol.policy))
    features = np.broadcast_to(np.eye(fh.A), (fh.S, fh.A, fh.A))
    sizes = np.asarray(config.sizes, dtype=float)
    curves: dict[str, dict[str, list]] = {}
    checks = []
    meta: dict[str, Any] = {"seed": seed, "n_traps": n_traps, "A": fh.A, "fits": {}}
    rng = np.random.default_rng(seed)
    bar = None
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        bar = tqdm(total=2 * len(config.sizes), desc="offline-pessimism")
    src = "Jin, Yang & Wang (2021) Thm 4.2; Rashidinejad et al. (2021)"
    for cov in ("good", "poor"):
        beh = trap_behaviour(fh, n_traps, cov, config.trap_mass)
        rho = np.asarray(finite_horizon_occupancy(fh, beh))
        C_star = single_policy_concentrability(d_star, rho)
        C_all = all_policy_concentrability(fh, rho)
        meta[f"C_star_{cov}"], meta[f"C_all_{cov}"] = C_star, C_all
        sub = {m: np.zeros((len(sizes), config.seeds)) for m in METHODS}
        bnd = {m: np.zeros((len(sizes), config.seeds)) for m in PESSIMISTIC}
        bad = {m: np.zeros(len(sizes)) for m in PESSIMISTIC}
        covered = np.zeros(len(sizes), dtype=bool)
        for i, K in enumerate(config.sizes):
            cov_ok = True
            for j in range(config.seeds):
                data = sample_episodes(fh, beh, int(K), rng=rng, rewards="bernoulli")
                for m in METHODS:
                    res = _solve(m, data, features, config.delta)
                    V = np.asarray(evaluate_finite_horizon(fh, res.policy))
                    sub[m][i, j] = v_star - float(V[0] @ mu)
                    if m in PESSIMISTIC:
                        bnd[m][i, j] = pessimism_suboptimality_bound(d_star, res.bonus)
                        lower = bool(np.all(res.V <= V + 1e-12))
                        bad[m][i] += (not lower) or sub[m][i, j] > bnd[m][i, j] + 1e-12
                    if m == "lcb-hoeffding":
                        cov_ok &= bool(np.all(res.counts[d_star > 0] >= 2))
            covered[i] = cov_ok
            if bar is not None:
                bar.update(1)
        rate = [lcb_vi_rate(C_star, fh.S, fh.A, fh.H, int(K), config.delta) for K in config.sizes]
        panel = f"{cov} coverage"
        curves[panel] = {"K": sizes.tolist(), "lcb_rate": rate}
        for m in METHODS:
            curves[panel][m] = sub[m].mean(1).tolist()
        for m in PESSIMISTIC:
            curves[panel][f"{m}_bound"] = bnd[m].mean(1).tolist()
            freq = bad[m] / config.seeds
            curves[panel][f"{m}_violations"] = freq.tolist()
            checks.append(
                Claim(
                    f"{cov}-{m}-event",
                    f"{cov} coverage, {m}: V̂ ≤ V^π̂ pointwise and SubOpt ≤ 2Σ_h E_π*[Γ_h] "
                    f"fail in at most δ = {config.delta} of the {config.seeds} datasets at every K",
                    src,
                    None,
                    "bound",
                ).check(check_bound(freq, np.full(len(sizes), config.delta)))
            )
            lo = float(sizes[np.argmax(covered)]) if covered.any() else float(sizes[-1])
            # fewer than 3 sizes where every comparator pair is seen twice: the rate cannot be measured
            # there, and the claim fails (fit_rate raised "needs at least 3 points" and the run crashed)
            fit = (
                fit_rate(sizes, bnd[m].mean(1), window=(lo, float(sizes[-1])), seed=seed)
                if np.sum(sizes >= lo) >= 3
                else None
            )
            if fit is not None:
                meta["fits"][f"{cov}-{m}-bound"] = fit.to_dict()
            if m == "lcb-bernstein":
                checks.append(
                    _rate_claim(
                        Claim(
                            f"{cov}-{m}-bound-slope",
                            f"{cov} coverage, {m}: the data-dependent bound decays at least "
                            "as K^(−1/2) (slope ≤ −0.4): Γ = √(2V ln/n) + 7B ln/(3(n−1)) mixes n^(−1/2) and n^(−1), "
                            "so the pre-asymptotic slope lies between −1 and −1/2",
                            src,
                            -0.5,
                            "rate_at_most",
                            0.1,
                        ),
                        fit,
                        False,
                    )
                )
            else:
                checks.append(
                    _rate_claim(
                        Claim(
                            f"{cov}-{m}-bound-slope",
                            f"{cov} coverage, {m}: the data-dependent bound 2Σ_h E_π*[Γ_h] "
                            "decays as K^(−1/2) (slope within 0.12 of −1/2: Γ ∝ n^(−1/2) with n ∝ K; PEVI's radius "
                            "also grows as √(log det Λ) ∝ √(log K)) on sizes where every comparator pair has n ≥ 2",
                            src,
                            -0.5,
                            "rate",
                            0.12,
                        ),
                        fit,
                        False,
                    )
                )
        g = sub["greedy"].mean(1)
        if cov == "good":
            pos = g > 0
            fit = fit_rate(sizes[pos], g[pos], seed=seed) if np.sum(pos) >= 3 else None
            if fit is not None:
                meta["fits"]["good-greedy"] = fit.to_dict()
            # with fewer than 3 sizes of positive error (fit_rate raised and the run crashed) the error
            # decays at least as fast as K^(−1/2) iff it is exactly 0 from some K on
            zero_tail = bool(
                not pos.all() and not pos[int(np.argmin(pos)) :].any()
            )  # once 0, it stays 0
            checks.append(
                _rate_claim(
                    Claim(
                        "good-greedy-rate",
                        "good coverage: greedy's mean suboptimality decays at least as fast as "
                        "K^(−1/2) (fitted slope ≤ −0.4 over the sizes where it is positive; if fewer than 3, it "
                        "must be exactly 0 from some K on)",
                        "Rashidinejad et al. (2021), §4",
                        -0.5,
                        "rate_at_most",
                        0.1,
                    ),
                    fit,
                    zero_tail,
                )
            )
        else:
            # a mean error of exactly 0 at some K (greedy exact in every dataset) is no plateau: the claim
            # fails (fit_rate refused the zero and the run crashed); so do fewer than 3 sizes
            fit = fit_rate(sizes, g, seed=seed) if np.all(g > 0) and g.size >= 3 else None
            if fit is not None:
                meta["fits"]["poor-greedy"] = fit.to_dict()
            checks.append(
                _rate_claim(
                    Claim(
                        "poor-greedy-plateau",
                        "poor coverage: greedy does not keep the K^(−1/2) rate — its mean "
                        "suboptimality plateaus (fitted slope ≥ −0.2; an exactly zero mean error at some K fails)",
                        "Rashidinejad et al. (2021), §4",
                        -0.2,
                        "rate_at_least",
                        0.0,
                    ),
                    fit,
                    False,
                )
            )
            last = slice(len(sizes) - 3, None)
            checks.append(
                Claim(
                    "poor-lcb-beats-greedy",
                    "poor coverage: at the three largest K, LCB-VI's mean suboptimality "
                    "is at most 1/4 of greedy's",
                    "Rashidinejad et al. (2021), §4",
                    None,
                    "bound",
                ).check(check_bound(sub["lcb-hoeffding"].mean(1)[last], 0.25 * g[last]))
            )
    if bar is not None:
        bar.close()
    meta["wall_time_s"] = time.perf_counter() - t0
    meta["v_star"] = v_star
    return ExperimentResult(
        name="offline-pessimism",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta=meta,
    )


def plot(result: ExperimentResult) -> Any:
    """Two panels (good / poor coverage): mean suboptimality of each learner, the pessimistic bounds."""
    fig, axes = figure(1, 2, width=5.6, height=4.4)
    colors = {
        "greedy": "tab:gray",
        "lcb-hoeffding": "tab:blue",
        "lcb-bernstein": "tab:green",
        "pevi": "tab:purple",
    }
    fits = result.meta.get("fits", {})
    for ax, cov in zip(axes[0], ("good", "poor"), strict=True):
        c = result.curves[f"{cov} coverage"]
        K = np.asarray(c["K"])
        fit = (
            RateFit.from_dict(fits[f"{cov}-lcb-hoeffding-bound"])
            if f"{cov}-lcb-hoeffding-bound" in fits
            else None
        )
        convergence_plot(
            ax,
            K,
            c["lcb-hoeffding"],
            label="LCB-VI (Hoeffding) suboptimality",
            bound=c["lcb-hoeffding_bound"],
            bound_label="2Σ E_π*[Γ] (LCB-VI, Hoeffding)",
            fit=fit,
        )
        for m in ("greedy", "lcb-bernstein", "pevi"):
            y = np.asarray(c[m], dtype=float)
            ax.plot(
                K,
                np.where(y > 0, y, np.nan),
                marker="o",
                ms=3,
                color=colors[m],
                label=f"{m} suboptimality",
            )
        for m in ("lcb-bernstein", "pevi"):
            ax.plot(K, c[f"{m}_bound"], ls="--", lw=1.0, color=colors[m], label=f"2Σ E_π*[Γ] ({m})")
        ax.plot(K, c["lcb_rate"], ls="-.", lw=1.0, color="tab:red", label="H(H+1)√(S C* ι/⌊K/H⌋)")
        C, Ca = result.meta.get(f"C_star_{cov}"), result.meta.get(f"C_all_{cov}")
        what = "uniform data" if cov == "good" else "partial coverage (traps rarely seen)"
        ax.set_title(f"{what}: C* = {C:.3g}, C_all = {Ca:.3g}" if C is not None else what)
        ax.set_xlabel("episodes K")
        ax.set_ylabel("V*(μ) − V^π̂(μ)")
        ax.legend(fontsize="x-small")
    fig.suptitle("Offline RL: pessimism keeps K^(−1/2) under partial coverage, greedy does not")
    return fig


EXPERIMENT = register(
    Experiment(
        name="offline-pessimism",
        title="Suboptimality vs K: greedy vs LCB-VI vs PEVI under good and poor coverage (Jin et al. 2021 Thm 4.2)",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
