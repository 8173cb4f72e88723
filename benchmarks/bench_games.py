"""rltheory's game solvers side by side with scipy HiGHS, nashpy and pygambit, in one run.

Cases (issue: games and equilibrium solvers):
  (a) 1000 random 5x5 zero-sum games (N(0,1) payoffs): rltheory.games.solve_zero_sum (one
      batched simplex call) vs a loop of scipy HiGHS LPs and a loop of nashpy's
      Game.linear_program (also scipy); accuracy: rltheory's certificate (duality gap) and
      max |value − HiGHS value|.
  (b) all Nash equilibria of random 8x8 bimatrix games: rltheory.games.nash_equilibria vs
      nashpy support_enumeration(non_degenerate=True), nashpy vertex_enumeration and pygambit
      enummixed_solve (floating point); accuracy: equilibrium counts against pygambit.
  (c) Shapley value iteration on a random zero-sum Markov game, 200 states, 5x5 actions,
      gamma 0.9, to tol 1e-8 (one batched call per sweep) vs the same iteration with a
      per-state HiGHS loop. The HiGHS loop is timed on a few sweeps and its per-sweep median
      multiplied by rltheory's sweep count (the iterates are identical up to 1e-9, checked).

Times are medians of --repeats runs (first call discarded as warm-up; the HiGHS loop of (a)
is the median of 3 runs, the nashpy runs are single runs); ratios (other / rltheory) are what
is reported, since absolute times drift on a shared machine.

Run:  python benchmarks/bench_games.py [--repeats 5] [--out benchmarks/results/games.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import rltheory
from rltheory.games import (
    nash_equilibria,
    shapley_operator,
    shapley_value_iteration,
    solve_zero_sum,
    solve_zero_sum_highs,
)
from rltheory.games.zoo import (
    random_bimatrix_game,
    random_matrix_games,
    random_zero_sum_markov_game,
)
from rltheory.trace import write_atomic


def median_time(fn: Callable[[], Any], repeats: int, warmup: bool = True) -> tuple[float, Any]:
    if warmup:
        fn()
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def case_zero_sum(repeats: int) -> dict[str, Any]:
    import nashpy  # noqa: PLC0415

    A = random_matrix_games(np.random.default_rng(0), (1000,), 5, 5)
    t_ours, sol = median_time(lambda: solve_zero_sum(A), repeats)
    t_highs, ref = median_time(lambda: solve_zero_sum_highs(A), 3, warmup=False)

    def nashpy_loop() -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.array(
                [float(x @ G @ y) for G in A for x, y in [nashpy.Game(G).linear_program()]]
            )

    t_nashpy, v_nashpy = median_time(nashpy_loop, 1, warmup=False)
    return {
        "case": "1000 random 5x5 zero-sum games",
        "times_s": {"rltheory batched": t_ours, "HiGHS loop": t_highs, "nashpy loop": t_nashpy},
        "ratios": {
            "HiGHS loop / rltheory": t_highs / t_ours,
            "nashpy loop / rltheory": t_nashpy / t_ours,
        },
        "accuracy": {
            "rltheory max duality gap": sol.max_gap,
            "HiGHS max duality gap": ref.max_gap,
            "max |v_rltheory - v_HiGHS|": float(np.max(np.abs(sol.value - ref.value))),
            "max |v_nashpy - v_HiGHS|": float(np.max(np.abs(v_nashpy - ref.value))),
            "rltheory games re-solved by HiGHS": sol.n_fallback,
        },
        "target": "HiGHS loop / rltheory >= 100",
    }


def case_bimatrix(repeats: int, n_games: int) -> dict[str, Any]:
    import nashpy  # noqa: PLC0415
    import pygambit as gbt  # noqa: PLC0415

    rng = np.random.default_rng(1)
    games = [random_bimatrix_game(rng, 8, 8) for _ in range(n_games)]
    t_ours, ours = median_time(lambda: [nash_equilibria(U[0], U[1]) for U in games], repeats)
    t_gbt, gb = median_time(
        lambda: [
            gbt.nash.enummixed_solve(
                gbt.StrategicGame.from_arrays(U[0], U[1]), rational=False
            ).equilibria
            for U in games
        ],
        repeats,
    )
    k_se, k_ve = min(3, n_games), min(2, n_games)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_se, se = median_time(
            lambda: [
                list(nashpy.Game(U[0], U[1]).support_enumeration(non_degenerate=True))
                for U in games[:k_se]
            ],
            1,
            warmup=False,
        )
        t_ve, ve = median_time(
            lambda: [list(nashpy.Game(U[0], U[1]).vertex_enumeration()) for U in games[:k_ve]],
            1,
            warmup=False,
        )
    per = {
        "rltheory": t_ours / n_games,
        "pygambit enummixed": t_gbt / n_games,
        "nashpy support_enumeration": t_se / k_se,
        "nashpy vertex_enumeration": t_ve / k_ve,
    }
    return {
        "case": f"all equilibria of {n_games} random 8x8 bimatrix games",
        "times_per_game_s": per,
        "ratios": {
            "nashpy support_enumeration / rltheory": per["nashpy support_enumeration"]
            / per["rltheory"],
            "nashpy vertex_enumeration / rltheory": per["nashpy vertex_enumeration"]
            / per["rltheory"],
            "pygambit enummixed / rltheory": per["pygambit enummixed"] / per["rltheory"],
        },
        "accuracy": {
            "equilibrium counts rltheory": [len(e) for e in ours],
            "equilibrium counts pygambit": [len(e) for e in gb],
            "equilibrium counts nashpy support_enumeration": [len(e) for e in se],
            "equilibrium counts nashpy vertex_enumeration": [len(e) for e in ve],
        },
        "target": "nashpy / rltheory >= 10",
    }


def case_shapley(repeats: int, highs_sweeps: int) -> dict[str, Any]:
    game = random_zero_sum_markov_game(np.random.default_rng(2), 200, 5, 5, 0.9)
    t_ours, res = median_time(lambda: shapley_value_iteration(game, tol=1e-8), repeats)
    sweeps = res.iterations + 1  # + the final stage-game solve for the policies
    t_sweep_ours, _ = median_time(lambda: shapley_operator(game, np.zeros(200)), repeats)

    V_ours, V_ref = np.zeros(200), np.zeros(200)
    times = []
    for _ in range(highs_sweeps):
        t0 = time.perf_counter()
        V_ref = solve_zero_sum_highs(np.asarray(game.stage_games(V_ref))).value
        times.append(time.perf_counter() - t0)
        V_ours = np.asarray(shapley_operator(game, V_ours).TV)
    t_sweep_highs = float(np.median(times))
    return {
        "case": "Shapley VI, 200 states, 5x5 actions, gamma 0.9, tol 1e-8",
        "times_s": {
            "rltheory full solve": t_ours,
            "per-state HiGHS loop (extrapolated to the same sweeps)": t_sweep_highs * sweeps,
            "rltheory per sweep": t_sweep_ours,
            "HiGHS loop per sweep": t_sweep_highs,
        },
        "ratios": {
            "HiGHS loop / rltheory (full solve)": t_sweep_highs * sweeps / t_ours,
            "HiGHS loop / rltheory (per sweep)": t_sweep_highs / t_sweep_ours,
        },
        "accuracy": {
            "sweeps": sweeps,
            "certified ||V - V*||": float(res.bound),
            "certified policy exploitability": float(res.policy_bound),
            f"max |V_k rltheory - V_k HiGHS| after {highs_sweeps} sweeps": float(
                np.max(np.abs(V_ours - V_ref))
            ),
        },
        "target": ">= 20",
    }


def fmt(case: dict[str, Any]) -> str:
    lines = [f"== {case['case']}"]
    times = case.get("times_s") or case.get("times_per_game_s")
    unit = "s" if "times_s" in case else "s/game"
    for k, v in times.items():
        lines.append(f"  {k:<58s} {v:10.4f} {unit}")
    for k, v in case["ratios"].items():
        lines.append(f"  ratio {k:<52s} {v:10.1f}x")
    for k, v in case["accuracy"].items():
        lines.append(f"  {k:<58s} {v}")
    lines.append(f"  target: {case['target']}")
    return "\n".join(lines)


def write_json_atomic(path: str, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON atomically (rltheory.trace.write_atomic: temp file, fsync, rename)."""
    write_atomic(path, json.dumps(data, indent=2, default=float))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--bimatrix-games", type=int, default=10)
    ap.add_argument("--highs-sweeps", type=int, default=3)
    ap.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "games.json")
    )
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    cases = []
    for case in (
        case_zero_sum(args.repeats),
        case_bimatrix(args.repeats, args.bimatrix_games),
        case_shapley(args.repeats, args.highs_sweeps),
    ):
        print(fmt(case), flush=True)
        cases.append(case)
    result = {
        "benchmark": "games",
        "cases": cases,
        "wall_time_s": time.perf_counter() - t0,
        "versions": {
            "rltheory": rltheory.__version__,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
        },
    }
    write_json_atomic(args.out, result)
    print(f"wrote {args.out} ({result['wall_time_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
