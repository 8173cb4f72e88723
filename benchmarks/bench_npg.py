"""Exact NPG, batched over MDP instances vs a per-instance loop (and on a GPU when there is one).

Case (issue 6): 1000 NPG iterations, ``π_{t+1} ∝ π_t exp(η A^{π_t}/(1−γ))`` with exact
evaluation, on 256 random dense MDPs (S = 50, A = 5, γ = 0.9, η = 1):

* ``batched``  — one call of :func:`rltheory.algorithms.natural_policy_gradient` on the
  batched model (every iteration is one batched solve for all 256 instances);
* ``loop``     — the same function called on each instance in a Python loop (numpy);
* ``cupy``     — the batched call on a CUDA device, when cupy sees one.

Checks that all runs give the same final policies, prints a table and writes
``benchmarks/results/npg.json`` (device, versions, seconds, ratios). Run:
``python benchmarks/bench_npg.py [--iterations 1000] [--batch 256] [--out benchmarks/results/npg.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from typing import Any

import numpy as np

import rltheory
from rltheory.algorithms import natural_policy_gradient
from rltheory.backend import cupy_available, to_numpy
from rltheory.mdp import FiniteMDP, policy_iteration
from rltheory.mdp.zoo import random_mdp


def _write(path: str, data: dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=2)
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--states", type=int, default=50)
    ap.add_argument("--actions", type=int, default=5)
    ap.add_argument("--gamma", type=float, default=0.9)
    ap.add_argument("--eta", type=float, default=1.0)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "npg.json"))
    args = ap.parse_args()

    mdp = random_mdp(args.states, args.actions, gamma=args.gamma, rng=0, batch_shape=(args.batch,))
    V_star = policy_iteration(mdp).V
    T = args.iterations
    rows: dict[str, Any] = {}

    t0 = time.perf_counter()
    batched = natural_policy_gradient(mdp, eta=args.eta, iterations=T, V_star=V_star)
    rows["batched_numpy_s"] = time.perf_counter() - t0
    print(f"batched numpy : {rows['batched_numpy_s']:8.2f} s", flush=True)

    t0 = time.perf_counter()
    loop_pol = []
    for i in range(args.batch):
        loop_pol.append(natural_policy_gradient(mdp[i], eta=args.eta, iterations=T, V_star=V_star[i]).policy)
    rows["loop_numpy_s"] = time.perf_counter() - t0
    print(f"loop numpy    : {rows['loop_numpy_s']:8.2f} s", flush=True)
    rows["max_abs_diff_loop_vs_batched"] = float(np.max(np.abs(np.stack(loop_pol) - np.asarray(batched.policy))))
    rows["speedup_batched_vs_loop"] = rows["loop_numpy_s"] / rows["batched_numpy_s"]
    rows["final_suboptimality_max"] = float(np.max(batched.trace["suboptimality"][-1]))

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
    data = {
        "case": vars(args) | {"out": None},
        "results": rows,
        "machine": {"platform": platform.platform(), "processor": platform.processor(), "cpus": os.cpu_count()},
        "versions": {"rltheory": rltheory.__version__, "numpy": np.__version__, "python": platform.python_version()},
    }
    _write(args.out, data)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
