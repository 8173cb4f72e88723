"""The same rltheory kernels on numpy (CPU) and cupy (GPU), side by side in one run.

rltheory's kernels take their array namespace from their inputs, so moving a model to the
GPU is `FiniteMDP(cupy.asarray(P), cupy.asarray(R), gamma)`; nothing else changes. This
script times identical calls on both backends, checks that the answers agree, and writes
`benchmarks/results/gpu.json` with the device, the library versions and the ratios
(numpy time / cupy time). Needs cupy and a CUDA device; exits 0 with a message otherwise.

Cases:
  batched VI / PI / MPI on 4096 random dense MDPs (S=50, A=5, gamma=0.95);
  one large dense MDP (S=3000, A=8, gamma=0.99): VI and PI (dense solves on the GPU);
  garnet S=2000, A=10, b=5 (sparse successor kernel) VI;
  batched exact NPG (if rltheory.algorithms.npg_step exists) and batched zero-sum matrix
  games (if rltheory.games.solve_zero_sum exists).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import rltheory
from rltheory.backend import cupy_available, to_numpy
from rltheory.mdp import FiniteMDP, modified_policy_iteration, policy_iteration, value_iteration
from rltheory.mdp.zoo import garnet, random_mdp
from rltheory.trace import write_atomic


def timed(fn: Callable[[], Any], repeats: int, sync: Callable[[], None]) -> tuple[float, Any]:
    fn()  # warm-up: kernel compilation, caches
    sync()
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        sync()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def compare(name: str, build: Callable[[Any], Any], solve: Callable[[Any], Any], get: Callable[[Any], Any],
            repeats: int, cp: Any) -> dict[str, Any]:
    import array_api_compat.numpy as npx

    def nosync() -> None:
        return None

    def gsync() -> None:
        cp.cuda.Device().synchronize()

    m_cpu, m_gpu = build(npx), build(cp)
    t_cpu, r_cpu = timed(lambda: solve(m_cpu), repeats, nosync)
    t_gpu, r_gpu = timed(lambda: solve(m_gpu), repeats, gsync)
    diff = float(np.max(np.abs(np.asarray(get(r_cpu)) - to_numpy(get(r_gpu)))))
    row = dict(case=name, numpy_s=t_cpu, cupy_s=t_gpu, speedup=t_cpu / t_gpu, max_abs_diff=diff)
    print(f"{name:60s} numpy {t_cpu:9.4f}s  cupy {t_gpu:9.4f}s  x{t_cpu / t_gpu:7.1f}  diff {diff:.1e}", flush=True)
    return row


def mdp_builder(ref: FiniteMDP) -> Callable[[Any], FiniteMDP]:
    P, R = np.asarray(ref.P), np.asarray(ref.R)
    return lambda xp: FiniteMDP(xp.asarray(P), xp.asarray(R), ref.gamma)


def write_json_atomic(path: str, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON atomically (rltheory.trace.write_atomic: temp file, fsync, rename)."""
    write_atomic(path, json.dumps(data, indent=2, default=float))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gpu.json"))
    args = ap.parse_args(argv)
    if not cupy_available():
        print("no cupy / CUDA device: nothing to benchmark")
        return 0
    import cupy as cp

    rows = []
    batch = random_mdp(50, 5, gamma=0.95, rng=0, batch_shape=(4096,))
    for label, solve in [("VI", lambda m: value_iteration(m, tol=1e-8)), ("PI", policy_iteration),
                         ("MPI(m=20)", lambda m: modified_policy_iteration(m, m=20, tol=1e-8))]:
        rows.append(compare(f"batched {label}: 4096 MDPs S=50 A=5 gamma=0.95", mdp_builder(batch), solve,
                            lambda r: r.V, args.repeats, cp))
    big = random_mdp(3000, 8, gamma=0.99, rng=1)
    for label, solve in [("VI", lambda m: value_iteration(m, tol=1e-8)), ("PI", policy_iteration)]:
        rows.append(compare(f"dense {label}: S=3000 A=8 gamma=0.99", mdp_builder(big), solve,
                            lambda r: r.V, args.repeats, cp))
    ga = garnet(2000, 10, 5, gamma=0.99, rng=2024)
    rows.append(compare("sparse-kernel VI: garnet S=2000 A=10 b=5 gamma=0.99", mdp_builder(ga),
                        lambda m: value_iteration(m, tol=1e-8), lambda r: r.V, args.repeats, cp))
    try:
        from rltheory.algorithms import npg_step
    except ImportError:
        npg_step = None
    if npg_step is not None:
        nb = random_mdp(50, 5, gamma=0.9, rng=3, batch_shape=(256,))

        def npg_run(m: FiniteMDP, T: int = 200) -> Any:
            xp = m.xp
            pi = xp.full(m.batch_shape + (m.S, m.A), 1.0 / m.A, dtype=m.dtype)
            for _ in range(T):
                pi = npg_step(m, pi, eta=1.0)
            return pi

        rows.append(compare("exact NPG, 200 steps, 256 MDPs S=50 A=5", mdp_builder(nb), npg_run,
                            lambda r: r, args.repeats, cp))
    try:
        from rltheory.games import solve_zero_sum
    except ImportError:
        solve_zero_sum = None
    if solve_zero_sum is not None:
        G = np.random.default_rng(4).standard_normal((20000, 5, 5))

        def zs(xp: Any) -> Any:
            return xp.asarray(G)

        rows.append(compare("batched zero-sum value: 20000 games 5x5", zs,
                            lambda A: solve_zero_sum(A), lambda r: r[0], args.repeats, cp))

    dev = cp.cuda.runtime.getDeviceProperties(0)
    result = dict(
        benchmark="gpu", repeats=args.repeats,
        device=dict(name=dev["name"].decode() if isinstance(dev["name"], bytes) else str(dev["name"]),
                    total_memory_GiB=dev["totalGlobalMem"] / 2**30,
                    cuda_runtime=cp.cuda.runtime.runtimeGetVersion(), driver=cp.cuda.runtime.driverGetVersion()),
        host=dict(platform=platform.platform(), cpus=os.cpu_count(), python=sys.version.split()[0]),
        versions=dict(rltheory=rltheory.__version__, numpy=np.__version__, cupy=cp.__version__),
        rows=rows,
    )
    write_json_atomic(args.out, result)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
