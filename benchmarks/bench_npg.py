"""Exact NPG, batched over MDP instances vs a per-instance loop (and on a GPU when there is one).

Case (issue 6): 1000 NPG iterations, ``π_{t+1} ∝ π_t exp(η A^{π_t}/(1−γ))`` with exact
evaluation, on 256 random dense MDPs (S = 50, A = 5, γ = 0.9, η = 1).

What each side does (the same code path, so the ratio measures batching only):

* ``batched`` — one call of :func:`rltheory.algorithms.natural_policy_gradient` on the
  batched model: inputs checked once, then per iteration one stacked solve of the 256
  systems ``(I − γP_π) V = r_π`` (LU per instance inside LAPACK), one batched
  ``A = r − K V`` product and one fused exp-normalise for all instances;
* ``loop``    — the same public function called on ``mdp[i]`` for each instance in a
  Python loop (numpy): the same unchecked kernels, 256 times the per-call checks;
* ``floor``   — the stacked LU solve alone (1000 solves of the 256 systems) vs 1000 × 256
  single-instance solves: the part of an iteration batching cannot speed up on a CPU,
  because numpy's stacked ``solve`` is a C loop of one LAPACK ``gesv`` per matrix;
* ``cupy``    — the batched call on a CUDA device, when cupy sees one.

Wall-clock and process CPU seconds are both recorded (the CPU-time ratio is the
less load-sensitive one on a shared machine). Checks that all runs give the same final policies, prints a table and merges one
section (``local_cpu`` without a GPU, ``device`` with one; ``--section`` overrides)
into ``benchmarks/results/npg.json``, keeping the other sections. Run:
``python benchmarks/bench_npg.py [--iterations 1000] [--batch 256] [--out benchmarks/results/npg.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

import numpy as np

import rltheory
from rltheory.algorithms import natural_policy_gradient
from rltheory.backend import cupy_available, to_numpy
from rltheory.mdp import FiniteMDP, policy_iteration
from rltheory.mdp.zoo import random_mdp
from rltheory.trace import write_atomic


def _write(path: str, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON atomically (rltheory.trace.write_atomic: temp file, fsync, rename)."""
    write_atomic(path, json.dumps(data, indent=2, default=float))


def _machine() -> dict[str, Any]:
    info: dict[str, Any] = {"platform": platform.platform(), "processor": platform.processor(),
                            "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
        info["cpu_model"] = names[0] if names else None
    except OSError:
        info["cpu_model"] = None
    if hasattr(os, "getloadavg"):
        info["load_average_1min_at_start"] = os.getloadavg()[0]
    return info


def _solve_floor(mdp: FiniteMDP, T: int, n_loop: int) -> dict[str, float]:
    """Seconds of the LU solves alone: T stacked solves vs T single solves per instance."""
    P, R = np.asarray(mdp.P), np.asarray(mdp.R)
    pi = np.full(R.shape, 1.0 / mdp.A)
    M = np.eye(mdp.S) - mdp.gamma * np.sum(pi[..., None] * P, axis=-2)
    r = np.sum(pi * R, axis=-1)[..., None]
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(T):
        np.linalg.solve(M, r)
    stacked, stacked_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(n_loop):
        Mi, ri = M[i], r[i]
        for _ in range(T):
            np.linalg.solve(Mi, ri)
    scale = M.shape[0] / n_loop
    single, single_cpu = (time.perf_counter() - t0) * scale, (time.process_time() - c0) * scale
    return {"solve_stacked_s": stacked, "solve_single_loop_s": single,
            "solve_stacked_cpu_s": stacked_cpu, "solve_single_loop_cpu_s": single_cpu,
            "solve_single_loop_measured_instances": n_loop}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--states", type=int, default=50)
    ap.add_argument("--actions", type=int, default=5)
    ap.add_argument("--gamma", type=float, default=0.9)
    ap.add_argument("--eta", type=float, default=1.0)
    ap.add_argument("--section", default=None, help="JSON section to replace (default: local_cpu / device)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "npg.json"))
    args = ap.parse_args()
    section = args.section or ("device" if cupy_available() else "local_cpu")
    machine = _machine()

    mdp = random_mdp(args.states, args.actions, gamma=args.gamma, rng=0, batch_shape=(args.batch,))
    V_star = policy_iteration(mdp).V
    T = args.iterations
    rows: dict[str, Any] = {}

    t0, c0 = time.perf_counter(), time.process_time()
    batched = natural_policy_gradient(mdp, eta=args.eta, iterations=T, V_star=V_star)
    rows["batched_numpy_s"] = time.perf_counter() - t0
    rows["batched_numpy_cpu_s"] = time.process_time() - c0
    print(f"batched numpy : {rows['batched_numpy_s']:8.2f} s", flush=True)

    singles = [mdp[i] for i in range(args.batch)]
    t0, c0 = time.perf_counter(), time.process_time()
    loop_pol = [natural_policy_gradient(m, eta=args.eta, iterations=T, V_star=V_star[i]).policy
                for i, m in enumerate(singles)]
    rows["loop_numpy_s"] = time.perf_counter() - t0
    rows["loop_numpy_cpu_s"] = time.process_time() - c0
    print(f"loop numpy    : {rows['loop_numpy_s']:8.2f} s", flush=True)
    rows["max_abs_diff_loop_vs_batched"] = float(np.max(np.abs(np.stack(loop_pol) - np.asarray(batched.policy))))
    rows["speedup_batched_vs_loop"] = rows["loop_numpy_s"] / rows["batched_numpy_s"]
    rows["speedup_batched_vs_loop_cpu_time"] = rows["loop_numpy_cpu_s"] / rows["batched_numpy_cpu_s"]
    rows["final_suboptimality_max"] = float(np.max(batched.trace["suboptimality"][-1]))
    rows["per_instance_iteration_us"] = {
        "batched": 1e6 * rows["batched_numpy_s"] / (T * args.batch),
        "loop": 1e6 * rows["loop_numpy_s"] / (T * args.batch),
    }

    floor = _solve_floor(mdp, T, n_loop=min(args.batch, 32))
    floor["solve_share_of_batched"] = floor["solve_stacked_s"] / rows["batched_numpy_s"]
    floor["speedup_bound_if_loop_were_solve_only"] = floor["solve_single_loop_s"] / floor["solve_stacked_s"]
    floor["speedup_bound_batched_floor_is_solve"] = rows["loop_numpy_s"] / floor["solve_stacked_s"]
    rows["floor"] = floor
    print(f"solve alone   : stacked {floor['solve_stacked_s']:.2f} s, per-instance loop "
          f"{floor['solve_single_loop_s']:.2f} s", flush=True)

    if cupy_available():
        import cupy as cp  # noqa: PLC0415 - optional GPU backend, benchmark only

        gm = FiniteMDP(cp.asarray(np.asarray(mdp.P)), cp.asarray(np.asarray(mdp.R)), args.gamma)
        gV = cp.asarray(np.asarray(V_star))
        natural_policy_gradient(gm, eta=args.eta, iterations=5, V_star=gV)  # warm-up (kernel compilation)
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        gres = natural_policy_gradient(gm, eta=args.eta, iterations=T, V_star=gV)
        cp.cuda.Device().synchronize()
        rows["batched_cupy_s"] = time.perf_counter() - t0
        rows["max_abs_diff_cupy_vs_numpy"] = float(np.max(np.abs(to_numpy(gres.policy) - np.asarray(batched.policy))))
        rows["speedup_cupy_vs_loop"] = rows["loop_numpy_s"] / rows["batched_cupy_s"]
        rows["speedup_cupy_vs_batched_numpy"] = rows["batched_numpy_s"] / rows["batched_cupy_s"]
        rows["gpu"] = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        print(f"batched cupy  : {rows['batched_cupy_s']:8.2f} s", flush=True)

    print(f"batched vs loop (CPU): x{rows['speedup_batched_vs_loop']:.1f}; "
          f"max |policy diff| {rows['max_abs_diff_loop_vs_batched']:.1e}")
    if "speedup_cupy_vs_loop" in rows:
        print(f"cupy batched vs CPU loop: x{rows['speedup_cupy_vs_loop']:.1f}; "
              f"vs CPU batched: x{rows['speedup_cupy_vs_batched_numpy']:.1f}")
    data: dict[str, Any] = {"case": vars(args) | {"out": None, "section": None}, "sections": {}}
    if os.path.exists(args.out):
        with open(args.out) as f:
            old = json.load(f)
        data["sections"] = dict(old.get("sections", {}))
    data["sections"][section] = {
        "results": rows,
        "machine": machine,
        "versions": {"rltheory": rltheory.__version__, "numpy": np.__version__, "python": platform.python_version()},
    }
    _write(args.out, data)
    print(f"wrote section {section!r} of {args.out}")


if __name__ == "__main__":
    main()
