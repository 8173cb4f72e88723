r"""The learning study of ``mac-mixing``: vanilla actor-critic vs MAC on the laziness dial.

Protocol (stated in full in :mod:`rltheory.experiments.mac_mixing`): each dial instance is
``ring_mdp(learning_n, laziness=α, reward=...)`` with exact ``g*`` (multichain policy
iteration) and ``g^{unif}``, and ``t_mix`` of the uniform policy (:func:`_instance`); one run
is scored by its normalised final gap ``(g* − g^{π_T})/(g* − g^{unif})``
(:func:`learning_gap`); hyper-parameters are chosen by grid search on the fastest instance
(:func:`_tune`) or on a given instance (:func:`retuning`), then every method runs on every
instance at an equal sample budget and is summarised by its mean with a 95% percentile-bootstrap
interval (:func:`_mean_ci`, :func:`_learning_panel`).

References
----------
Suttle, W. A., Bedi, A. S., Patel, B., Sadler, B. M., Koppel, A., Manocha, D. (2023).
Beyond exponentially fast mixing in average-reward RL via multi-level Monte Carlo
actor-critic. ICML. Algorithm 1 (MAC).
Wu, Y., Zhang, W., Xu, P., Gu, Q. (2020). A finite-time analysis of two time-scale actor-critic
methods. NeurIPS. Theorem 4.5 (steps ∝ 1/τ_mix, the oracle arm).
Efron, B., Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. §13.3 (percentile interval).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._validate import real_scalar
from ..algorithms.average_reward import (
    StepSchedule,
    average_reward_actor_critic,
    multilevel_actor_critic,
)
from ..mdp import FiniteMDP, policy_transition_matrix
from ..mdp.average import average_policy_iteration, gain_bias
from ..mdp.mixing import mixing_time
from ..mdp.mixing_zoo import ring_mdp

if TYPE_CHECKING:
    from .mac_mixing import Config

__all__ = ["learning_gap", "retuning"]


TUNING_SEED0 = 10**6  # tuning run k uses the seed TUNING_SEED0 + k (k < Config.tune_seeds <= 1000)


def learning_gap(
    method: tuple, mdp: FiniteMDP, g_star: float, g_unif: float, *, budget: int, seed: int
) -> float:
    """Normalised final gap ``(g* − g^{π_T})/(g* − g^{unif})`` of one run.

    ``method`` is ``("vanilla", critic_step, actor_step)`` or ``("mac", actor_scale, critic_step, T_max)``.
    """
    if method[0] == "vanilla":
        r = average_reward_actor_critic(
            mdp,
            steps=budget,
            rng=seed,
            critic_step=StepSchedule(method[1]),
            actor_step=StepSchedule(method[2]),
            optimal_gain=g_star,
            record_every=10**9,
        )
    elif method[0] == "mac":
        r = multilevel_actor_critic(
            mdp,
            iterations=10**9,
            T_max=int(method[3]),
            rng=seed,
            optimal_gain=g_star,
            actor_scale=method[1],
            critic_step=StepSchedule(method[2]),
            max_samples=budget,
            record_every=10**9,
        )
    else:
        raise ValueError(f"method must start with 'vanilla' or 'mac'; got {method[0]!r}")
    return (g_star - float(r.trace["gain"][-1])) / (g_star - g_unif)


def _mean_ci(
    x: np.ndarray, rng: np.random.Generator, n_boot: int = 2000
) -> tuple[float, float, float]:
    """Mean of ``x`` (last axis) with its 95% percentile-bootstrap interval (Efron & Tibshirani 1993, §13.3)."""
    x = np.asarray(x, dtype=float)
    idx = rng.integers(0, x.shape[-1], size=(n_boot, x.shape[-1]))
    boot = x[..., idx].mean(axis=-1)
    return float(x.mean()), float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))


def _instance(config: Config, laziness: float, reward: str) -> tuple[FiniteMDP, float, float, int]:
    # real_scalar: numpy scalars (np.float32(0.5) was refused) but not bools; NaN fails too
    if not 0.0 <= real_scalar(laziness) < 1.0:
        raise ValueError(
            f"laziness must lie in [0, 1) on the dial (at 1 every state is absorbing and t_mix is "
            f"infinite); got {laziness!r}"
        )
    n = config.learning_n
    mdp = ring_mdp(n, laziness=laziness, reward=reward)
    unif = np.full((n, 2), 0.5)
    g_star = float(
        np.max(np.asarray(average_policy_iteration(mdp, multichain=True).gain))
    )  # communicating: constant
    g_unif = float(np.asarray(gain_bias(mdp, unif)[0]))
    return mdp, g_star, g_unif, int(mixing_time(np.asarray(policy_transition_matrix(mdp, unif))))


def _tune(config: Config, grid: list[tuple], fast: tuple) -> tuple[tuple, list[float]]:
    """Grid point with the smallest mean gap on the fastest instance (first one on ties)."""
    scores = [
        float(
            np.mean(
                [
                    learning_gap(m, *fast[:3], budget=config.budget, seed=TUNING_SEED0 + k)
                    for k in range(config.tune_seeds)
                ]
            )
        )
        for m in grid
    ]
    return grid[int(np.argmin(scores))], scores


def retuning(config: Config, laziness: float, reward: str = "sparse") -> dict[str, Any]:
    """Both grids of ``config`` searched on the dial instance ``laziness`` itself (not on the fastest one).

    Each grid point is scored by its mean normalised final gap over the tuning seeds
    ``10⁶ + k``, ``k < config.tune_seeds`` (as the tuning of :func:`run`). Returns
    ``{"t_mix", "vanilla": {"best", "score", "scores"}, "mac": {...}}``; the module docstring
    quotes this search at ``t_mix`` 4, 62 and 124 of the sparse dial (8 tuning seeds).
    """
    inst = _instance(config, laziness, reward)
    out: dict[str, Any] = {"t_mix": inst[3]}
    for name, grid in (("vanilla", config.vanilla_grid), ("mac", config.mac_grid)):
        best, scores = _tune(config, [(name, *g) for g in grid], inst)
        out[name] = {"best": list(best[1:]), "score": float(min(scores)), "scores": scores}
    return out


def evaluation_seed(seed: int, k: int) -> int:
    """The seed of evaluation run ``k < 1000`` of the experiment seed ``seed``: ``1000·seed + k``.

    Blocks of 1000 per experiment seed never overlap, and the block ``[10⁶, 10⁶ + 1000)`` of the
    tuning seeds is skipped: seeds ``≥ 1000`` use the next block, ``1000·(seed + 1) + k``. (At
    ``seed = 1000`` the evaluation runs were the tuning runs, so the held-out instances were not
    held out.) Every seed below 1000 keeps the runs it always had.
    """
    block = seed if seed < TUNING_SEED0 // 1000 else seed + 1
    return 1000 * block + k


def _learning_panel(
    config: Config, reward: str, seed: int, progress: bool
) -> tuple[dict, list, dict]:
    """Tune (or take the fixed settings) on the fastest instance, then run every method on every instance."""
    instances = [_instance(config, a, reward) for a in config.laziness]
    van = ("vanilla", *config.vanilla_steps)
    mac = ("mac", *config.mac_settings)
    tuning: dict[str, Any] = {"tuned": config.tune}
    if config.tune:
        van, tuning["vanilla_scores"] = _tune(
            config, [("vanilla", *v) for v in config.vanilla_grid], instances[0]
        )
        mac, tuning["mac_scores"] = _tune(
            config, [("mac", *m) for m in config.mac_grid], instances[0]
        )
    tuning["vanilla"], tuning["mac"] = list(van[1:]), list(mac[1:])
    t_fast = instances[0][3]
    learn: dict[str, list] = {
        "laziness": list(config.laziness),
        "t_mix": [],
        "vanilla": [],
        "oracle": [],
        "mac": [],
    }
    iterator: Any = instances
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        iterator = tqdm(instances, desc=f"mac-mixing ({reward})")
    for mdp, g_star, g_unif, tm in iterator:
        oracle = ("vanilla", van[1] * t_fast / tm, van[2] * t_fast / tm)
        learn["t_mix"].append(tm)
        # the oracle steps equal the tuned ones at the tuning instance (t_mix = t_fast): the same
        # method, instance and seeds, so the vanilla runs are reused there, not run twice
        # (a ninth of the quick preset's runs)
        done: dict[tuple, list[float]] = {}
        for key, method in (("vanilla", van), ("oracle", oracle), ("mac", mac)):
            if method not in done:
                done[method] = [
                    learning_gap(
                        method,
                        mdp,
                        g_star,
                        g_unif,
                        budget=config.budget,
                        seed=evaluation_seed(seed, k),
                    )
                    for k in range(config.seeds)
                ]
            learn[key].append(list(done[method]))
    boot = np.random.default_rng(seed)
    summary = []
    for i, tm in enumerate(learn["t_mix"]):
        v, o, m = (np.asarray(learn[k][i]) for k in ("vanilla", "oracle", "mac"))
        summary.append(
            {
                "t_mix": tm,
                "vanilla": _mean_ci(v, boot),
                "oracle": _mean_ci(o, boot),
                "mac": _mean_ci(m, boot),
                "mac_minus_vanilla": _mean_ci(m - v, boot),
            }
        )
    return learn, summary, tuning
