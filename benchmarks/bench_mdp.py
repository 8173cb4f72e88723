"""rltheory's exact MDP solvers side by side with QuantEcon and mdptoolbox (hiive), in one run.

Cases (issue: MDP core):
  (a) gridworld 40x40, slip 0.1, gamma 0.99         (S=1600, A=4, 4 successors per pair)
  (b) garnet S=2000, A=10, b=5, gamma 0.99          (Archibald et al. 1995)
  (c) 1000 random dense MDPs S=20, A=4, gamma 0.95  (rltheory batched vs a per-instance loop)

Every method is run to the same accuracy target (policy suboptimality 1e-6, certified for
rltheory; epsilon=1e-6 for the others) and its returned policy is evaluated exactly, so the
table shows time *and* the achieved ‖V* − V^π‖∞. Times are medians of --repeats runs in this
process; ratios (other / rltheory) are what is reported, since absolute times drift on shared
machines. Two timings per library:
  warm: the model object is already built (rltheory caches its sparse successor lists);
  cold: from dense numpy arrays, model construction + validation + solve.
It also reports the memory-bandwidth floor of one dense Bellman sweep: bytes of P divided by
the measured streaming-read bandwidth (numpy sum over P).

Run:  python benchmarks/bench_mdp.py [--repeats 3] [--quick] [--out benchmarks/results/mdp.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import rltheory
from rltheory.mdp import (
    FiniteMDP,
    evaluate_policy,
    modified_policy_iteration,
    policy_iteration,
    value_iteration,
)
from rltheory.mdp.zoo import garnet, gridworld, random_mdp
from rltheory.trace import write_atomic

EPS = 1e-6


def median_time(fn: Callable[[], Any], repeats: int, slow_s: float = 5.0) -> tuple[float, Any]:
    """Median wall time of ``repeats`` runs; a run slower than ``slow_s`` is not repeated."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        if times[-1] > slow_s:
            break
    return float(np.median(times)), out


def suboptimality(mdp: FiniteMDP, V_star: np.ndarray, policy: np.ndarray) -> float:
    return float(np.max(V_star - evaluate_policy(mdp, np.asarray(policy, dtype=np.int64))))


def rl_methods() -> dict[str, Callable[[FiniteMDP], Any]]:
    return {
        "VI": lambda m: value_iteration(m, tol=EPS),
        "PI": lambda m: policy_iteration(m),
        "MPI(m=20)": lambda m: modified_policy_iteration(m, m=20, tol=EPS),
    }


def run_single(name: str, P: np.ndarray, R: np.ndarray, gamma: float, repeats: int) -> dict[str, Any]:
    """One large MDP: every method of every library, warm and cold."""
    import quantecon as qe
    from hiive.mdptoolbox import mdp as mtb

    rows: list[dict[str, Any]] = []
    model = FiniteMDP(P, R, gamma)
    ref = policy_iteration(model)
    V_star = np.asarray(ref.V)
    model.successors  # noqa: B018 - warm the cache once, as a user's second solve would

    for label, solve in rl_methods().items():
        t_warm, res = median_time(lambda s=solve: s(model), repeats)
        t_cold, _ = median_time(lambda s=solve: s(FiniteMDP(P, R, gamma)), repeats)
        rows.append(dict(library="rltheory", method=label, warm_s=t_warm, cold_s=t_cold,
                         iterations=int(res.iterations), converged=bool(res.converged),
                         subopt=suboptimality(model, V_star, res.policy)))

    ddp = qe.markov.DiscreteDP(R, P, gamma)
    for label, meth in [("VI", "value_iteration"), ("PI", "policy_iteration"), ("MPI(k=20)", "modified_policy_iteration")]:
        kw = {} if meth == "policy_iteration" else {"epsilon": EPS}
        t_warm, res = median_time(lambda m=meth, k=kw: ddp.solve(m, **k), repeats)
        t_cold, _ = median_time(lambda m=meth, k=kw: qe.markov.DiscreteDP(R, P, gamma).solve(m, **k), repeats)
        rows.append(dict(library="quantecon", method=label, warm_s=t_warm, cold_s=t_cold,
                         iterations=int(res.num_iter), converged=None,
                         subopt=suboptimality(model, V_star, res.sigma)))

    Pt = np.ascontiguousarray(np.transpose(P, (1, 0, 2)))  # mdptoolbox layout (A, S, S)
    for label, cls, kw in [("VI", mtb.ValueIteration, {"epsilon": EPS}), ("PI", mtb.PolicyIteration, {})]:
        def go(c=cls, k=kw):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                solver = c(Pt, R, gamma, **k)
                solver.run()
            return solver
        t_cold, res = median_time(go, repeats)
        rows.append(dict(library="mdptoolbox", method=label, warm_s=t_cold, cold_s=t_cold,
                         iterations=int(res.iter), converged=None,
                         subopt=suboptimality(model, V_star, np.asarray(res.policy))))

    def best(lib: str, key: str) -> dict[str, Any]:
        return min((r for r in rows if r["library"] == lib), key=lambda r: r[key])

    summary = {}
    for key in ("warm_s", "cold_s"):
        ours = best("rltheory", key)
        summary[key] = {
            "rltheory_best": ours["method"],
            "ratio_vs_quantecon_fastest": best("quantecon", key)[key] / ours[key],
            "quantecon_fastest": best("quantecon", key)["method"],
            "ratio_vs_mdptoolbox_fastest": best("mdptoolbox", key)[key] / ours[key],
            "mdptoolbox_fastest": best("mdptoolbox", key)["method"],
        }
    pi_row = next(r for r in rows if r["library"] == "rltheory" and r["method"] == "PI")
    return dict(case=name, S=model.S, A=model.A, gamma=gamma,
                successors_per_pair=None if model.successors is None else int(model.successors[0].shape[-1]),
                rows=rows, summary=summary,
                pi_iterations=pi_row["iterations"], pi_converged=pi_row["converged"])


def run_batched(n: int, S: int, A: int, gamma: float, repeats: int, seed: int = 1) -> dict[str, Any]:
    import quantecon as qe

    batch = random_mdp(S, A, gamma=gamma, rng=seed, batch_shape=(n,))
    P, R = np.asarray(batch.P), np.asarray(batch.R)
    V_star = np.asarray(policy_iteration(batch).V)
    rows = []
    for label, solve in rl_methods().items():
        t, res = median_time(lambda s=solve: s(FiniteMDP(P, R, gamma)), repeats)
        sub = float(np.max(V_star - evaluate_policy(batch, res.policy)))
        rows.append(dict(library="rltheory (batched)", method=label, cold_s=t, subopt=sub))
    for label, meth in [("VI", "value_iteration"), ("PI", "policy_iteration"), ("MPI(k=20)", "modified_policy_iteration")]:
        kw = {} if meth == "policy_iteration" else {"epsilon": EPS}

        def loop(m=meth, k=kw):
            return np.stack([qe.markov.DiscreteDP(R[i], P[i], gamma).solve(m, **k).sigma for i in range(n)])

        t, pol = median_time(loop, repeats)
        sub = float(np.max(V_star - evaluate_policy(batch, pol)))
        rows.append(dict(library="quantecon (loop)", method=label, cold_s=t, subopt=sub))

    solve_pi = rl_methods()["PI"]

    def loop_rl():
        return [solve_pi(FiniteMDP(P[i], R[i], gamma)) for i in range(n)]

    t_loop, _ = median_time(loop_rl, 1)
    rows.append(dict(library="rltheory (loop)", method="PI", cold_s=t_loop, subopt=None))
    ours = min((r for r in rows if r["library"] == "rltheory (batched)"), key=lambda r: r["cold_s"])
    qe_best = min((r for r in rows if r["library"] == "quantecon (loop)"), key=lambda r: r["cold_s"])
    return dict(case=f"{n} random MDPs S={S} A={A} gamma={gamma}", rows=rows,
                summary={"rltheory_best": ours["method"], "quantecon_fastest": qe_best["method"],
                         "ratio_batched_vs_quantecon_loop": qe_best["cold_s"] / ours["cold_s"],
                         "ratio_batched_vs_rltheory_loop": t_loop / ours["cold_s"]})


def bandwidth_floor(P: np.ndarray, model: FiniteMDP, repeats: int) -> dict[str, float]:
    """Bytes of P / streaming-read bandwidth = the floor of one dense sweep."""
    from rltheory.mdp import q_values

    t_read, _ = median_time(lambda: P.sum(), max(repeats, 5))
    bw = P.nbytes / t_read
    Pf = P.reshape(-1, P.shape[-1])
    v = np.ones(P.shape[-1])
    t_dense, _ = median_time(lambda: Pf @ v, max(repeats, 5))
    t_ours, _ = median_time(lambda: q_values(model, v), max(repeats, 5))
    return dict(bytes_P=float(P.nbytes), read_bandwidth_GBps=bw / 1e9,
                dense_sweep_floor_s=P.nbytes / bw, dense_matvec_s=t_dense,
                rltheory_sweep_s=t_ours, rltheory_sweep_vs_dense_floor=(P.nbytes / bw) / t_ours)


def fmt_table(case: dict[str, Any]) -> str:
    lines = [f"\n== {case['case']} =="]
    lines.append(f"{'library':22s} {'method':10s} {'warm s':>9s} {'cold s':>9s} {'iters':>6s} {'subopt':>9s}")
    for r in case["rows"]:
        warm = r.get("warm_s")
        lines.append(
            f"{r['library']:22s} {r['method']:10s} {warm if warm is not None else float('nan'):9.4f} "
            f"{r['cold_s']:9.4f} {str(r.get('iterations', '')):>6s} "
            f"{(r['subopt'] if r['subopt'] is not None else float('nan')):9.1e}"
        )
    lines.append("summary: " + json.dumps(case["summary"], indent=None, default=float))
    return "\n".join(lines)


def write_json_atomic(path: str, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON atomically (rltheory.trace.write_atomic: temp file, fsync, rename)."""
    write_atomic(path, json.dumps(data, indent=2, default=float))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smaller instances (smoke run)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "mdp.json"))
    args = ap.parse_args(argv)
    import hiive.mdptoolbox
    import quantecon as qe

    size, gS, nB = (15, 300, 100) if args.quick else (40, 2000, 1000)
    gw = gridworld(size, slip=0.1, gamma=0.99).mdp
    ga = garnet(gS, 10, 5, gamma=0.99, rng=2024)
    cases = []
    for name, m in [(f"(a) gridworld {size}x{size} slip 0.1 gamma 0.99", gw),
                    (f"(b) garnet S={gS} A=10 b=5 gamma 0.99", ga)]:
        P, R = np.asarray(m.P), np.asarray(m.R)
        case = run_single(name, P, R, 0.99, args.repeats)
        case["bandwidth"] = bandwidth_floor(P, m, args.repeats)
        cases.append(case)
        print(fmt_table(case), "\nbandwidth:", json.dumps(case["bandwidth"], default=float), flush=True)
    cb = run_batched(nB, 20, 4, 0.95, args.repeats)
    cases.append(cb)
    print(fmt_table(cb), flush=True)
    result = dict(
        benchmark="mdp", quick=args.quick, repeats=args.repeats, accuracy_target=EPS,
        machine=dict(platform=platform.platform(), processor=platform.processor(), cpus=os.cpu_count(),
                     python=sys.version.split()[0]),
        versions=dict(rltheory=rltheory.__version__, numpy=np.__version__, quantecon=qe.__version__,
                      mdptoolbox_hiive=getattr(hiive.mdptoolbox, "__version__", "4.0.3.1")),
        cases=cases,
    )
    write_json_atomic(args.out, result)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
