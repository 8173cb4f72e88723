r"""Policy iteration vs value iteration vs modified PI: iterations and wall time as S grows.

Models: garnets ``G(S, A, b)`` (rewards ``U[0, 1]``) of growing ``S`` at one discount.
For each size the three solvers of :mod:`rltheory.mdp` run to the same certified
tolerance; their iteration counts and wall times are recorded. The LP solver is
timed too (host HiGHS).

Claims checked, for every ``S``:

1. *PI bound* — Howard's PI makes at most ``(S·A − S)·⌈log(1/(1−γ))/(1−γ)⌉``
   improvement steps (Scherrer 2016, Thm 3; :func:`rltheory.bounds.pi_iteration_bound`);
   ``policy_iteration`` counts one more evaluation than improvements, so its
   ``iterations − 1`` is compared.
2. *VI span-rule bound* — ``value_iteration(tol)`` stops within
   :func:`rltheory.bounds.span_stopping_iterations` ``(γ, tol, sp(T v_0 − v_0))``
   Bellman evaluations (Puterman 1994, Thm 6.6.6); this is the
   exact-arithmetic count: rounding can delay the rule by a few sweeps only when ``tol``
   is near the precision of ``V``, as on a chain in ``tests/platform/test_platform_bounds_mdp.py``;
   the worst-case rounding-aware count, ``sweep_error=vi_sweep_error(mdp)``, is infinite
   for the full preset's γ = 0.99, S = 1600, so it cannot serve here.
3. *VI count matches the prediction* — Puterman's sup-norm rule
   ``‖v_{k+1} − v_k‖∞ < ε(1−γ)/(2γ)`` (Thm 6.3.1) fires at the index ``k`` predicted
   from the geometric decay of the differences: with ``v_0 = 0`` and ``r ≥ 0`` the
   iterates increase and ``γ^k min_s(v_1 − v_0)(s) ≤ ‖v_{k+1} − v_k‖∞ ≤ γ^k ‖v_1 − v_0‖∞``,
   so ``k ∈ [N_lo, N_hi]`` with ``N = ⌊log(‖·‖/thr)/log(1/γ)⌋ + 1`` evaluated at
   ``min_s max_a r`` and ``max r`` (:func:`rltheory.bounds.vi_iterations_to_threshold`).
   Both ends are theorems; the measured count is checked against each.

References
----------
B. Scherrer, "Improved and generalized upper bounds on the complexity of policy iteration",
*Math. Oper. Res.* 41(3), 2016, Thm 3.
M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, Thm 6.3.1, Thm 6.6.6, §6.5 (MPI).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bounds import (
    Claim,
    check_bound,
    pi_iteration_bound,
    span_stopping_iterations,
    vi_iterations_to_threshold,
    vi_stopping_threshold,
)
from ..mdp import (
    bellman_optimality_operator,
    garnet,
    linear_program,
    modified_policy_iteration,
    policy_iteration,
    value_iteration,
)
from ..plot import figure
from ._policy_config import check_count, check_discount, check_positive
from ._seed import check_run_seed
from .base import Experiment, ExperimentResult, config_to_dict, register

__all__ = ["Config", "run", "plot", "puterman_stopping_index", "EXPERIMENT"]


@dataclass(frozen=True)
class Config:
    """Sizes and solver settings.

    Attributes
    ----------
    sizes : tuple of int
        Numbers of states ``S``.
    actions, branching : int
        Garnet ``A`` and ``b``.
    gamma : float
    tol : float
        Certificate target of VI / MPI (``γ/(1−γ)·sp(T v − v) < tol``).
    epsilon : float
        Target of Puterman's sup-norm rule (claim 3).
    mpi_m : int
        Partial-evaluation sweeps of MPI.
    repeats : int
        Wall time is the minimum over this many runs.
    """

    sizes: tuple[int, ...] = (25, 50, 100, 200, 400)
    actions: int = 4
    branching: int = 5
    gamma: float = 0.95
    tol: float = 1e-6
    epsilon: float = 1e-4
    mpi_m: int = 5
    repeats: int = 3

    def __post_init__(self) -> None:
        # a bad setting ran the whole comparison first: repeats=0 ended in "'NoneType' object has
        # no attribute 'iterations'", sizes=() in check_bound's "needs at least one point", and
        # sizes=(25.5,) ran as S = 25
        if not isinstance(self.sizes, (tuple, list)) or len(self.sizes) == 0:
            raise ValueError(
                f"Config.sizes must be a non-empty tuple of integers >= 1; got {self.sizes!r}"
            )
        for i, S in enumerate(self.sizes):
            check_count(S, f"sizes[{i}]")
        check_count(self.actions, "actions")
        check_count(self.branching, "branching")
        if self.branching > min(self.sizes):
            i = list(self.sizes).index(min(self.sizes))
            raise ValueError(
                f"Config.branching must be at most every size; got {self.branching!r} > Config.sizes[{i}] = "
                f"{self.sizes[i]!r}"
            )
        check_discount(self.gamma, "gamma", positive=True)
        check_positive(self.tol, "tol")
        check_positive(self.epsilon, "epsilon")
        check_count(self.mpi_m, "mpi_m", 0)
        check_count(self.repeats, "repeats")

    @classmethod
    def quick(cls) -> Config:
        """S ≤ 400, γ = 0.95, best of three timings: a few seconds."""
        return cls()

    @classmethod
    def full(cls) -> Config:
        """S ≤ 1600, γ = 0.99, best of five timings."""
        return cls(sizes=(50, 100, 200, 400, 800, 1600), gamma=0.99, repeats=5)


def puterman_stopping_index(mdp: Any, epsilon: float, *, max_iter: int = 10**6) -> int:
    """First ``k`` with ``‖v_{k+1} − v_k‖∞ < ε(1−γ)/(2γ)`` for VI from ``v_0 = 0`` (Puterman Thm 6.3.1).

    Iterates the pure Bellman optimality operator; ``k`` counts differences, so
    VI has made ``k + 1`` updates when the rule fires.
    """
    thr = vi_stopping_threshold(epsilon, float(mdp.gamma))
    xp = mdp.xp
    v = xp.zeros((mdp.S,), dtype=mdp.dtype)
    for k in range(max_iter):
        nxt = bellman_optimality_operator(mdp, v)
        if float(xp.max(xp.abs(nxt - v))) < thr:
            return k
        v = nxt
    raise RuntimeError(f"Puterman's rule did not fire within {max_iter} iterations")


def _timed(fn: Any, repeats: int) -> tuple[Any, float]:
    """Best wall time of ``repeats`` runs, after one untimed run (BLAS threads and caches settle)."""
    fn()
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


def run(config: Config, *, seed: int = 0, progress: bool = False) -> ExperimentResult:
    """Solve garnets of each size with PI, VI, MPI and LP; check the three claims (module docstring)."""
    seed = check_run_seed(seed)
    t0 = time.perf_counter()
    g, A = float(config.gamma), int(config.actions)
    rows: dict[str, list] = {
        k: []
        for k in (
            "S",
            "pi_iterations",
            "vi_iterations",
            "mpi_iterations",
            "pi_bound",
            "vi_bound",
            "puterman_k",
            "puterman_lo",
            "puterman_hi",
            "pi_time",
            "vi_time",
            "mpi_time",
            "lp_time",
            "max_value_gap",
        )
    }
    sizes = list(config.sizes)
    warm = garnet(8, A, min(int(config.branching), 8), gamma=g, rng=seed)
    for solve in (policy_iteration, value_iteration, modified_policy_iteration, linear_program):
        solve(warm)  # first calls pay imports and BLAS/HiGHS set-up; keep them out of the timings
    it = sizes
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        it = tqdm(sizes, desc="solver-comparison")
    for S in it:
        mdp = garnet(int(S), A, int(config.branching), gamma=g, rng=seed)
        pi, t_pi = _timed(lambda: policy_iteration(mdp), config.repeats)  # noqa: B023
        vi, t_vi = _timed(lambda: value_iteration(mdp, tol=config.tol), config.repeats)  # noqa: B023
        mpi, t_mpi = _timed(
            lambda: modified_policy_iteration(mdp, m=config.mpi_m, tol=config.tol),  # noqa: B023
            config.repeats,
        )
        lp, t_lp = _timed(lambda: linear_program(mdp), config.repeats)  # noqa: B023
        R = np.asarray(mdp.R)
        best_r = R.max(axis=1)  # (T 0 − 0)(s) = max_a r(s, a)
        span0 = float(best_r.max() - best_r.min())
        rows["S"].append(int(S))
        rows["pi_iterations"].append(int(pi.iterations))
        rows["vi_iterations"].append(int(vi.iterations))
        rows["mpi_iterations"].append(int(mpi.iterations))
        rows["pi_bound"].append(pi_iteration_bound(int(S), A, g))
        rows["vi_bound"].append(span_stopping_iterations(g, config.tol, span0))
        rows["puterman_k"].append(puterman_stopping_index(mdp, config.epsilon))
        rows["puterman_lo"].append(
            vi_iterations_to_threshold(config.epsilon, g, float(best_r.min()))
        )
        rows["puterman_hi"].append(
            vi_iterations_to_threshold(config.epsilon, g, float(best_r.max()))
        )
        rows["pi_time"].append(t_pi)
        rows["vi_time"].append(t_vi)
        rows["mpi_time"].append(t_mpi)
        rows["lp_time"].append(t_lp)
        gaps = [np.max(np.abs(np.asarray(x.V) - np.asarray(pi.V))) for x in (vi, mpi, lp)]
        rows["max_value_gap"].append(float(max(gaps)))
    r = {k: np.asarray(v) for k, v in rows.items()}
    checks = [
        Claim(
            "pi-iterations",
            "Howard PI improvement steps (iterations − 1) ≤ (SA − S)·⌈log(1/(1−γ))/(1−γ)⌉",
            "Scherrer (2016), Thm 3",
            None,
            "bound",
        ).check(check_bound(r["pi_iterations"] - 1, r["pi_bound"], rtol=0.0)),
        Claim(
            "vi-span-iterations",
            "VI (span rule, tol) iterations ≤ ⌊log(γ sp_0/((1−γ) tol))/log(1/γ)⌋ + 2",
            "Puterman (1994), Thm 6.6.6",
            None,
            "bound",
        ).check(check_bound(r["vi_iterations"], r["vi_bound"], rtol=0.0)),
        Claim(
            "vi-puterman-upper",
            "Puterman rule ‖v_{k+1}−v_k‖∞ < ε(1−γ)/(2γ) fires by N_hi (from max r)",
            "Puterman (1994), Thm 6.3.1",
            None,
            "bound",
        ).check(check_bound(r["puterman_k"], r["puterman_hi"], rtol=0.0)),
        Claim(
            "vi-puterman-lower",
            "Puterman rule does not fire before N_lo (from min_s max_a r; v_0 = 0, r ≥ 0)",
            "Puterman (1994), Thm 6.3.1 with monotone VI",
            None,
            "bound",
        ).check(check_bound(r["puterman_lo"], r["puterman_k"], rtol=0.0)),
    ]
    return ExperimentResult(
        name="solver-comparison",
        config=config_to_dict(config),
        curves={"garnet": rows},
        checks=checks,
        meta={
            "seed": seed,
            "wall_time_s": time.perf_counter() - t0,
            "vi_over_predicted": (r["puterman_k"] / np.maximum(r["puterman_hi"], 1)).tolist(),
        },
    )


def plot(result: ExperimentResult) -> Any:
    """Left: iterations vs S with the PI bound and the VI prediction; right: wall time vs S."""
    c = {k: np.asarray(v, dtype=float) for k, v in result.curves["garnet"].items()}
    S = c["S"]
    fig, axes = figure(1, 2, width=5.2, height=4.6)
    ax = axes[0, 0]
    ax.plot(S, c["pi_iterations"], "o-", color="tab:blue", label="PI (Howard)")
    ax.plot(
        S,
        c["pi_bound"],
        "--",
        color="tab:blue",
        alpha=0.7,
        label="PI bound (SA−S)⌈log(1/(1−γ))/(1−γ)⌉",
    )
    ax.plot(S, c["vi_iterations"], "s-", color="tab:orange", label="VI, span rule")
    ax.plot(S, c["vi_bound"], "--", color="tab:orange", alpha=0.7, label="VI span-rule bound")
    ax.plot(S, c["puterman_k"], "^-", color="tab:red", label="VI, sup-norm rule (Puterman)")
    ax.fill_between(
        S,
        c["puterman_lo"],
        c["puterman_hi"],
        color="tab:red",
        alpha=0.15,
        label="predicted [N_lo, N_hi]",
    )
    ax.plot(
        S,
        c["mpi_iterations"],
        "d-",
        color="tab:green",
        label=f"MPI (m={result.config.get('mpi_m')})",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("states S")
    ax.set_ylabel("iterations")
    ax.set_title(
        f"Iterations, garnet A={result.config.get('actions')}, γ={result.config.get('gamma')}"
    )
    _size_axis(ax, S)
    ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    ax = axes[0, 1]
    for key, lab, mk in (
        ("pi_time", "PI", "o-"),
        ("vi_time", "VI", "s-"),
        ("mpi_time", "MPI", "d-"),
        ("lp_time", "LP (HiGHS)", "x-"),
    ):
        ax.plot(S, c[key], mk, label=lab)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("states S")
    ax.set_ylabel("wall time (s)")
    ax.set_title("Wall time to the same certificate")
    _size_axis(ax, S)
    ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4)
    return fig


def _size_axis(ax: Any, S: np.ndarray) -> None:
    from matplotlib.ticker import NullFormatter  # noqa: PLC0415

    ax.set_xticks(S, [str(int(s)) for s in S])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, alpha=0.3)


EXPERIMENT = register(
    Experiment(
        name="solver-comparison",
        title="PI vs VI vs MPI iterations and wall time as S grows, against the PI bound (Scherrer 2016) "
        "and the VI count predicted by Puterman Thm 6.3.1",
        config_cls=Config,
        run=run,
        plot=plot,
    )
)
