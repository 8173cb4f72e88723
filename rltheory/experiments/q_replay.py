r"""Q-learning with and without experience replay, VA-learning, and the synchronous high-probability bound.

Figure: mean over runs of ``‖Q_t − Q*‖∞`` against environment steps for plain
Q-learning and for replay schemes (``K`` replayed updates every ``F`` steps, sliding
buffer); VA-learning against Q-learning with the same constant step; synchronous
Q-learning with a constant step against its high-probability bound.

Claims checked:

1. *replay-K-F* — for each replay scheme, the run-averaged error is at most plain
   Q-learning's at every checkpoint up to ``replay_claim_steps`` environment steps (same
   trajectories, same step rule), from the first checkpoint after the first at which some
   run's replay error differs from its plain error. Before that both tables still hold
   ``Q_0`` on the pairs not yet sampled and every run's sup-norm error is attained there,
   the same for both: the ratio 1 it gives (at ``t = 100`` on the quick preset, every
   seed) was the worst ratio reported, hiding the margin: on the quick preset at seeds 0–3
   the worst ratios, all at ``t = 200``, are 0.62–0.80 (``K = 1, F = 1``), 0.37–0.62
   (``K = 4, F = 1``) and 0.61–0.82 (``K = 4, F = 4``).
   ``meta["replay_first_checked"]`` gives that checkpoint. Replay reuses genuine
   transitions, so it is a stochastic approximation of the same ``Q*`` with more updates
   per sample. It speeds up the phase where the error is dominated by the initial
   condition (Szlak & Shamir 2021 analyse the rate in ``K`` and ``F``; their constants are
   not transcribed). Later both errors are set by the same samples, and the ordering is
   not a claim. The ratio replay/plain rises towards 1 and can cross it. At 4.9·10⁴
   steps (full preset, 50 runs), ``K = 4, F = 1`` is at 0.64, 1.17, 0.61 and 0.96 on the
   models of seeds 0–3. At seed 1 the schemes first exceed plain Q-learning at 2.8–3.6·10⁴
   steps. The claim covers the first 5000 steps (the quick preset's whole run), and the
   last checkpoint's ratios are reported in ``meta["replay_final_ratio"]``.
2. *va-vs-q* — VA-learning's run-averaged error is at most Q-learning's at every
   checkpoint after the first, both with the decaying step
   ``α_n = 1/(1/α₀ + (1−γ)n)`` (:func:`rltheory.algorithms.rescaled_linear_step`, ``α₀ =
   va_alpha``; counts per state for ``V``, per pair for ``A`` and ``Q``) and the same
   behaviour (Tang et al. 2023, the tabular sample-efficiency claim). The step decays so
   that both errors go to zero and the comparison is one of speed; ``α₀ < 1`` because
   VA's coupled updates overshoot at steps near 1.
   The same comparison with the constant step ``α = va_alpha`` is drawn and reported in
   ``meta["va_constant"]`` but is not a claim: VA's error is below Q-learning's while
   both fall and about 3× above it at the noise floor (full preset: 0.35 vs 0.11 after
   10⁵ steps), since a visit moves ``Q(s, a)`` by both its ``V`` and its ``A`` update.
   ``meta["va_speedup"]`` is the ratio of steps needed to reach Q-learning's final
   error under the decaying step.
   VA-learning's mean error oscillates under either step (figure). That is the update
   rule, not noise. Linearised at ``Q*`` with the greedy policy held fixed, the expected
   synchronous update of ``(V, A)`` has its slowest modes at ``−(1−γ) ± 0.218i`` per
   unit step on the default instance (``random_mdp(10, 4, γ=0.95, rng=2)``). Q-learning's
   slowest mode is the real ``−(1−γ)``. The envelope therefore decays at Q-learning's
   rate. The claim is checked at every checkpoint, peaks included (full preset: worst
   VA/Q ratio 0.60).
3. *sync-bound* — synchronous Q-learning, constant ``α``: ``‖Q_t − Q*‖∞ ≤ (1−α(1−γ))^t‖Q_0 − Q*‖∞
   + γ sp(V*)√(α log(2|S||A|T/δ')/2)/(1−γ)`` for all ``t ≤ T`` and every one of the ``m =
   sync_runs`` independent runs, with ``δ' = δ/m`` (:func:`rltheory.bounds.q_learning_bound`, derived
   there): each run's statement fails with probability at most ``δ/m``, so by the union bound the
   checked joint statement holds with probability at least ``1 − δ`` (``δ = 0.05``). The bound at
   ``δ`` itself, checked on every run, was a joint statement of probability only ``1 − mδ``
   (vacuous for the full preset's 20 runs).

References
----------
Szlak, L., Shamir, O. (2021). Convergence results for Q-learning with experience replay.
Tang, Y., Rowland, M., Munos, R., Valko, M. (2023). VA-learning as a more efficient
alternative to Q-learning. ICML.
Wainwright, M. J. (2019). Stochastic approximation with cone-contractive operators.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms import (
    constant_step,
    q_learning,
    q_learning_replay,
    rescaled_linear_step,
    synchronous_q_learning,
    va_learning,
)
from ..bounds import Claim, check_bound, q_learning_bound
from ..mdp import policy_iteration
from ..mdp.zoo import random_mdp
from ..plot import figure
from ._policy_plots import series
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = ["Config", "run", "plot", "EXPERIMENT"]


@dataclass(frozen=True)
class Config:
    """Model sizes, budgets and the replay grid ``(K, F)``.

    ``replay_claim_steps``: the replay claims cover the checkpoints up to this many steps
    (module docstring).
    """

    states: int = 10
    actions: int = 4
    gamma: float = 0.9
    steps: int = 5000
    runs: int = 20
    buffer_size: int = 1000
    replay: tuple[tuple[int, int], ...] = ((1, 1), (4, 1), (4, 4))
    replay_claim_steps: int = 5000
    va_gamma: float = 0.95
    va_alpha: float = 0.1
    va_steps: int = 20_000
    sync_states: int = 6
    sync_actions: int = 3
    sync_gamma: float = 0.8
    sync_alpha: float = 0.05
    sync_iterations: int = 2000
    sync_runs: int = 5
    delta: float = 0.05

    @classmethod
    def quick(cls) -> Config:
        """About 10 s."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """Longer runs, more seeds, a finer replay grid."""
        return cls(
            steps=50_000,
            runs=50,
            replay=((1, 1), (4, 1), (4, 4), (16, 4), (16, 16)),
            va_steps=100_000,
            sync_iterations=20_000,
            sync_runs=20,
        )


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Run the replay grid, VA vs Q, and synchronous Q-learning; check the claims."""
    seed = check_run_seed(seed)
    t0 = time.perf_counter()
    checks = []
    curves: dict[str, dict[str, list]] = {}
    mdp = random_mdp(config.states, config.actions, gamma=config.gamma, rng=seed)
    Qs = np.asarray(policy_iteration(mdp).Q)
    every = max(1, config.steps // 50)
    kw = dict(
        steps=config.steps,
        step_size=rescaled_linear_step(config.gamma),
        n_runs=config.runs,
        Q_star=Qs,
        record_every=every,
    )
    plain = q_learning(mdp, rng=seed + 1, **kw)
    t = plain.trace.iteration
    base = plain.trace["error"].mean(axis=1)
    curves["replay"] = {"t": t.tolist(), "K=0": base.tolist()}
    window = (t > t[0]) & (t <= config.replay_claim_steps)
    if not window.any():
        raise ValueError(
            f"replay_claim_steps = {config.replay_claim_steps} leaves no checkpoint after the first "
            f"(checkpoints every {every} steps)"
        )
    final_ratio, first_checked = {}, {}
    for K, F in config.replay:
        res = q_learning_replay(
            mdp,
            rng=seed + 1,
            replay_every=F,
            replay_updates=K,
            buffer_size=config.buffer_size,
            **kw,
        )
        err = res.trace["error"].mean(axis=1)
        curves["replay"][f"K={K},F={F}"] = err.tolist()
        final_ratio[f"K={K},F={F}"] = float(err[-1] / base[-1])
        start = _first_moved(res.trace["error"], plain.trace["error"], window, K, F, config)
        first_checked[f"K={K},F={F}"] = int(t[start])
        checked = window & (np.arange(t.size) >= start)
        checks.append(
            Claim(
                f"replay-{K}-{F}",
                f"replay K={K} every F={F} steps: mean error ≤ plain Q-learning's "
                f"at every checkpoint from t = {int(t[start])} (the first after the first at "
                f"which replay has moved some run's error) up to t = {config.replay_claim_steps}",
                "Szlak & Shamir (2021) (replay helps)",
                None,
                "bound",
            ).check(check_bound(err[checked], base[checked]))
        )
    vmdp = random_mdp(config.states, config.actions, gamma=config.va_gamma, rng=seed + 2)
    vQ = np.asarray(policy_iteration(vmdp).Q)
    curves["va"], curves["va_constant"], va_meta = {}, {}, {}
    for rule, step in (
        ("va", rescaled_linear_step(config.va_gamma, alpha0=config.va_alpha)),
        ("va_constant", constant_step(config.va_alpha)),
    ):
        vkw = dict(
            steps=config.va_steps,
            step_size=step,
            n_runs=config.runs,
            Q_star=vQ,
            record_every=max(1, config.va_steps // 50),
        )
        q = q_learning(vmdp, rng=seed + 3, **vkw)
        va = va_learning(vmdp, rng=seed + 3, **vkw)
        tq = q.trace.iteration
        eq, ev = q.trace["error"].mean(axis=1), va.trace["error"].mean(axis=1)
        reach = np.flatnonzero(ev <= eq[-1])
        va_meta[rule] = {
            "speedup": float(tq[-1] / tq[reach[0]])
            if reach.size and tq[reach[0]] > 0
            else float("nan"),
            "final_error_q": float(eq[-1]),
            "final_error_va": float(ev[-1]),
            "max_ratio_va_to_q": float((ev[1:] / eq[1:]).max()),
        }
        curves[rule] = {"t": tq.tolist(), "q": eq.tolist(), "va": ev.tolist()}
        if rule == "va":
            checks.append(
                Claim(
                    "va-vs-q",
                    f"VA-learning mean error ≤ Q-learning's at every checkpoint after the first "
                    f"(α_n = 1/(1/{config.va_alpha} + (1−γ)n), γ = {config.va_gamma})",
                    "Tang, Rowland, Munos, Valko (2023), ICML (tabular comparison)",
                    None,
                    "bound",
                ).check(check_bound(ev[1:], eq[1:]))
            )
    smdp = random_mdp(
        config.sync_states, config.sync_actions, gamma=config.sync_gamma, rng=seed + 4
    )
    sol = policy_iteration(smdp)
    sQ, sV = np.asarray(sol.Q), np.asarray(sol.V)
    T = config.sync_iterations
    # every run is checked: each at δ/m, so that all m statements hold jointly with probability ≥ 1 − δ
    delta_run = config.delta / config.sync_runs
    errs = np.stack(
        [
            synchronous_q_learning(
                smdp,
                iterations=T,
                step_size=constant_step(config.sync_alpha),
                rng=seed + 10 + r,
                Q_star=sQ,
            ).trace["error"]
            for r in range(config.sync_runs)
        ],
        axis=1,
    )
    bound = q_learning_bound(
        np.arange(T + 1),
        alpha=config.sync_alpha,
        gamma=config.sync_gamma,
        initial_error=float(np.abs(sQ).max()),
        value_span=float(sV.max() - sV.min()),
        n_pairs=smdp.S * smdp.A,
        horizon=T,
        delta=delta_run,
    )
    curves["sync"] = {
        "t": list(range(T + 1)),
        "max_error": errs.max(axis=1).tolist(),
        "bound": bound.tolist(),
    }
    checks.append(
        Claim(
            "sync-bound",
            f"synchronous Q-learning, α = {config.sync_alpha}: each of the "
            f"{config.sync_runs} runs has ‖Q_t − Q*‖∞ ≤ its δ/{config.sync_runs} high-probability "
            f"bound for all t ≤ {T} (jointly with probability ≥ 1 − δ, δ = {config.delta})",
            "rltheory.bounds.q_learning_bound (noise/contraction split of Wainwright 2019, §3)",
            None,
            "bound",
        ).check(check_bound(errs, bound[:, None]))
    )
    return ExperimentResult(
        name="q-replay",
        config=config_to_dict(config),
        curves=curves,
        checks=checks,
        meta={
            "seed": seed,
            "replay_final_ratio": final_ratio,
            "replay_first_checked": first_checked,
            "va_speedup": va_meta["va"]["speedup"],
            "va_constant": va_meta["va_constant"],
            "sync_delta_per_run": delta_run,
            "wall_time_s": time.perf_counter() - t0,
        },
    )


def _first_moved(
    err: np.ndarray, plain: np.ndarray, window: np.ndarray, K: int, F: int, config: Config
) -> int:
    """Index of the first checkpoint in ``window`` at which some run's replay error differs from
    plain Q-learning's (``err``, ``plain``: per-run errors, shape (checkpoints, runs)).

    Before it, every run's two errors are equal: with the same trajectories both tables still
    hold ``Q_0`` on the pairs not yet sampled, and the sup-norm error of every run was attained
    there (default instance: all 20 runs at t = 100, ratio exactly 1 at seeds 0–3), so the
    ratio 1 compares nothing replay did.
    """
    moved = window & np.any(err != plain, axis=1)
    if not moved.any():
        raise ValueError(
            f"replay K={K}, F={F} leaves every run's error equal to plain Q-learning's at every "
            f"checkpoint after the first up to replay_claim_steps = {config.replay_claim_steps}: "
            "no checkpoint compares what replay did (raise replay_claim_steps or steps)"
        )
    return int(np.flatnonzero(moved)[0])


def plot(result: ExperimentResult) -> Any:
    """Replay grid, VA vs Q, synchronous Q-learning vs its bound."""
    fig, axes = figure(1, 3, width=4.4, height=3.6)
    r = result.curves["replay"]
    for i, name in enumerate(k for k in r if k != "t"):
        series(axes[0, 0], i, r["t"][1:], r[name][1:], label=name)
    claim_steps = result.config.get("replay_claim_steps")
    # the claim covers t ≤ claim_steps only
    if claim_steps is not None and claim_steps < r["t"][-1]:
        axes[0, 0].axvline(
            claim_steps, color="grey", linestyle=":", linewidth=1, label="end of the claim"
        )
        axes[0, 0].legend(fontsize=6)
    axes[0, 0].set_title("Q-learning ± replay")
    v, c = result.curves["va"], result.curves.get("va_constant")
    series(axes[0, 1], 0, v["t"][1:], v["q"][1:], label="Q-learning, decaying α")
    series(axes[0, 1], 1, v["t"][1:], v["va"][1:], label="VA-learning, decaying α")
    if c is not None:  # results written before the constant-step comparison was added lack it
        series(axes[0, 1], 2, c["t"][1:], c["q"][1:], label="Q-learning, constant α")
        series(axes[0, 1], 3, c["t"][1:], c["va"][1:], label="VA-learning, constant α")
    axes[0, 1].set_title(f"VA vs Q (decaying α: speed-up ×{result.meta['va_speedup']:.2g})")
    s = result.curves["sync"]
    series(
        axes[0, 2],
        0,
        s["t"][1:],
        s["max_error"][1:],
        label="max over runs",
        bound=s["bound"][1:],
        bound_label="high-probability bound",
        logx=False,
    )
    axes[0, 2].set_title("synchronous, constant α")
    for ax in axes[0]:
        ax.set_xlabel("steps")
    axes[0, 0].set_ylabel("‖Q_t − Q*‖∞")
    fig.suptitle("Tabular Q-learning: replay, VA-learning, high-probability bound")
    return fig


EXPERIMENT = register(
    Experiment(
        name="q-replay",
        title="Q-learning with vs without experience replay; VA vs Q; synchronous Q-learning under its bound",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
