"""Exact NPG, batched over MDP instances vs per-instance loops (and on a GPU when there is one).

Case (issue 6): 1000 NPG iterations, ``π_{t+1} ∝ π_t exp(η A^{π_t}/(1−γ))`` with exact
evaluation, on 256 random dense MDPs (S = 50, A = 5, γ = 0.9, η = 1).

What each side does:

* ``batched`` — one call of :func:`rltheory.algorithms.natural_policy_gradient` on the
  batched model: inputs checked once; the batch runs in cache-sized chunks; each
  iteration evaluates ``V^{π_t}`` by the certified warm-started evaluation of
  :mod:`rltheory.algorithms._warm_eval` (extrapolated start, Richardson steps
  preconditioned by a stored inverse, LU only for the instances that need it; every
  value certified to ``‖V − V^π‖∞ ≤ ‖residual‖∞/(1−γ)``, recorded as the trace metric
  ``evaluation_bound``), one product with ``P`` gives the advantage, one fused
  softmax update of the (max-shifted) logits; instances whose value is certified for
  every later iterate leave the run (their logits advance in closed form) — the
  benchmark records how many settled, when, and (paired repeats) the same batched run
  with settling switched off; rows ``(s, a)`` with ``log π(a|s) < −50`` leave the arrays
  (:mod:`rltheory.algorithms._live_rows`: their logits in closed form, their share of the
  residual bounded in the certificate) — recorded: the layout builds and the live rows
  per instance, and (paired repeats) the same batched run with the full layout;
* ``loop``    — the same public function called on ``mdp[i]`` for each instance (it
  settles converged instances the same way);
* ``textbook loop`` — a plain per-instance numpy NPG: ``np.linalg.solve`` of
  ``(I − γP_π) V = r_π`` every iteration, ``Q = R + γ P V``, multiplicative update
  (the loop a researcher writes by hand; it records the same suboptimality trace);
* ``cupy``    — the batched call on a CUDA device, when cupy sees one.

The headline ratio is against the *faster* of the two loops; each side is timed after one
untimed warm-up call (the batch once, each loop on one instance). Wall-clock and process
CPU seconds are both recorded; ``--repeat`` further back-to-back pairs (batched run, textbook
loop) record the spread of the ratio and its median (timings here drift by tens of
percent); each repeat also times the batched run with settling switched off and the
library's per-instance loop with and without settling (``--loop-settling-instances``
instances), so that what settling saves on either side is recorded, not assumed.
Checks that all runs give the same final policies, prints a table and merges one section
(``local_cpu`` without a GPU, ``device`` with one; ``--section`` overrides) into
``benchmarks/results/npg.json``, keeping the other sections. Run:
``python benchmarks/bench_npg.py [--iterations 1000] [--batch 256] [--out benchmarks/results/npg.json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

import rltheory
from rltheory.algorithms import _npg_chunk as npg_module
from rltheory.algorithms import natural_policy_gradient
from rltheory.algorithms import npg as npg_driver
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
    # which BLAS kernels ran: OPENBLAS_CORETYPE (set on some machines for old OpenBLAS builds)
    # forces one; threadpoolctl, when installed, reports the one in use
    info["openblas_coretype_env"] = os.environ.get("OPENBLAS_CORETYPE")
    try:
        import threadpoolctl  # noqa: PLC0415 - optional, benchmark metadata only

        info["blas"] = [{k: d.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
                        for d in threadpoolctl.threadpool_info() if d.get("user_api") == "blas"]
    except ImportError:
        info["blas"] = None
    return info


def _textbook_npg(P: np.ndarray, R: np.ndarray, gamma: float, eta: float, T: int,
                  V_star: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Per-instance NPG as written by hand: one LU solve per iteration."""
    S, A = R.shape
    pi = np.full((S, A), 1.0 / A)
    eye = np.eye(S)
    subopt = []
    for t in range(T + 1):
        P_pi = np.einsum("sa,sat->st", pi, P)
        V = np.linalg.solve(eye - gamma * P_pi, np.sum(pi * R, axis=1))
        subopt.append(float(rho @ (V_star - V)))
        if t == T:
            break
        with np.errstate(divide="ignore"):  # probabilities that underflowed to 0 stay 0
            z = np.log(pi) + (eta / (1.0 - gamma)) * (R + gamma * (P @ V) - V[:, None])
        z -= z.max(axis=1, keepdims=True)
        pi = np.exp(z)
        pi /= pi.sum(axis=1, keepdims=True)
    return pi, subopt


@contextlib.contextmanager
def _live_record() -> Iterator[dict[str, Any]]:
    """Record the live-row layouts the batched run built: (iteration, rows per instance, instances).

    Benchmark-only instrumentation of :class:`rltheory.algorithms._live_rows.LiveRows`.
    """
    from rltheory.algorithms import _live_rows  # noqa: PLC0415 - benchmark only

    builds: list[tuple[int, int, int]] = []
    cls = _live_rows.LiveRows
    init = cls.__init__

    def spy(self: Any, ev: Any, theta: Any, step: float, t: int) -> None:
        init(self, ev, theta, step, t)
        builds.append((int(t), int(self.lay.K), int(self.lay.B)))

    out: dict[str, Any] = {}
    cls.__init__ = spy  # type: ignore[method-assign]
    try:
        yield out
    finally:
        cls.__init__ = init  # type: ignore[method-assign]
    out |= {"builds": len(builds), "first_build_iteration": builds[0][0] if builds else None,
            "rows_per_instance_at_builds": [k for _, k, _ in builds], "build_iterations": [t for t, _, _ in builds]}


@contextlib.contextmanager
def _settling_record() -> Iterator[dict[str, Any]]:
    """Record which instances settled (left the run, certified for every later iterate) and when.

    Benchmark-only instrumentation: wraps the driver's chunk class and its chunk merge for the
    duration (a merged chunk replaces its parts) and fills the yielded dict when the run ends.
    """
    runs: list[Any] = []
    cls = npg_module.NPGChunk
    init, merge = cls.__init__, npg_driver.merge_chunks

    def spy(self: Any, *a: Any, **k: Any) -> None:
        init(self, *a, **k)
        runs.append(self)

    def spy_merge(parts: list[Any]) -> Any:
        merged = merge(parts)
        if merged is not None:
            runs[:] = [r for r in runs if all(r is not p for p in parts)] + [merged]
        return merged

    out: dict[str, Any] = {}
    cls.__init__ = spy  # type: ignore[method-assign]
    npg_driver.merge_chunks = spy_merge
    try:
        yield out
    finally:
        cls.__init__ = init  # type: ignore[method-assign]
        npg_driver.merge_chunks = merge
    frozen = np.concatenate([r.frozen for r in runs])
    t_end = max(r.t for r in runs)
    f_t = np.concatenate([r.f_t for r in runs])[frozen]
    out |= {"instances": int(frozen.sum()), "of": int(frozen.shape[0]),
            "median_settling_iteration": float(np.median(f_t)) if f_t.size else None,
            "skipped_instance_iterations_share": float(np.sum(t_end - f_t) / (frozen.shape[0] * max(t_end, 1)))}


def _floor(mdp: FiniteMDP, reps: int = 200) -> dict[str, float]:
    """Per instance-iteration microseconds of the work no full-layout batched NPG iteration can skip.

    One product ``K V`` with ``K = I − γP`` (the advantage; read in the chunks the driver
    uses, so from cache where they fit) and one fused log-space policy update over the
    batch. Their sum is a floor for an iteration on all ``S·A`` rows; the live-row layout
    reads only the rows with ``log π ≥ −50`` (about a quarter of them late in the run) and goes
    below it.
    """
    from rltheory.algorithms._policy_opt import logit_step  # noqa: PLC0415 - benchmark only
    from rltheory.algorithms.npg import _CHUNK_BYTES  # noqa: PLC0415

    B, S, A = mdp.batch_shape[0], mdp.S, mdp.A
    K = np.eye(S)[:, None, :] - mdp.gamma * np.asarray(mdp.P)
    K = np.ascontiguousarray(np.swapaxes(K, 1, 2)).reshape(B, A * S, S)
    size = max(1, min(B, _CHUNK_BYTES // (S * A * S * 8)))
    chunks = [K[i:i + size] for i in range(0, B, size)]
    V = np.ones((size, S, 1))
    t0 = time.perf_counter()
    for c in chunks:
        for _ in range(reps):
            c @ V[: c.shape[0]]
    product = (time.perf_counter() - t0) / (reps * B) * 1e6
    theta, scores = np.log(np.full((B, A, S), 1.0 / A)), np.zeros((B, A, S))
    t0 = time.perf_counter()
    for _ in range(reps):
        logit_step(theta, scores, np)
    update = (time.perf_counter() - t0) / (reps * B) * 1e6
    return {"product_with_P_us": product, "policy_update_us": update, "floor_us": product + update}


def _eta_sweep(mdp: FiniteMDP, V_star: Any, etas: list[float], T: int, n_batch: int, n_loop: int,
               repeat: int) -> dict[str, Any]:
    """Per instance-iteration times and ratios at several step sizes (the batched side's cost
    depends on how fast the policy moves; the loops solve by LU at every iteration).

    At each ``η``, ``max(repeat, 1)`` back-to-back triples (batched run on the first
    ``n_batch`` instances, the library's per-instance loop and the textbook loop on the first
    ``n_loop``) give the ratios; their medians are recorded.
    """
    sub = mdp[:n_batch]
    Vs = np.asarray(V_star)
    P, R, rho = np.asarray(mdp.P), np.asarray(mdp.R), np.asarray(mdp.initial_distribution())
    out: dict[str, Any] = {"instances_batched": n_batch, "instances_loops": n_loop, "iterations": T, "by_eta": []}
    for eta in etas:
        us: dict[str, list[float]] = {"batched": [], "loop": [], "textbook_loop": []}
        shares = []
        for _ in range(max(repeat, 1)):
            t0 = time.perf_counter()
            with _settling_record() as settled:
                natural_policy_gradient(sub, eta=eta, iterations=T, V_star=Vs[:n_batch])
            shares.append(settled["skipped_instance_iterations_share"])
            us["batched"].append((time.perf_counter() - t0) / (n_batch * T) * 1e6)
            t0 = time.perf_counter()
            for i in range(n_loop):
                natural_policy_gradient(mdp[i], eta=eta, iterations=T, V_star=Vs[i])
            us["loop"].append((time.perf_counter() - t0) / (n_loop * T) * 1e6)
            t0 = time.perf_counter()
            for i in range(n_loop):
                _textbook_npg(P[i], R[i], mdp.gamma, eta, T, Vs[i], rho[i])
            us["textbook_loop"].append((time.perf_counter() - t0) / (n_loop * T) * 1e6)
        b = np.asarray(us["batched"])
        row = {"eta": eta, "per_instance_iteration_us": us,
               "median_ratio_vs_loop": float(np.median(np.asarray(us["loop"]) / b)),
               "median_ratio_vs_textbook_loop": float(np.median(np.asarray(us["textbook_loop"]) / b)),
               "settled_share_of_instance_iterations": shares[-1]}
        out["by_eta"].append(row)
        print(f"eta {eta:6.2f}: batched {np.median(b):5.2f} us/inst-it, x{row['median_ratio_vs_loop']:.1f} vs "
              f"library loop, x{row['median_ratio_vs_textbook_loop']:.1f} vs textbook loop "
              f"({100 * row['settled_share_of_instance_iterations']:.0f} % settled)", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--states", type=int, default=50)
    ap.add_argument("--actions", type=int, default=5)
    ap.add_argument("--gamma", type=float, default=0.9)
    ap.add_argument("--eta", type=float, default=1.0)
    ap.add_argument("--textbook-instances", type=int, default=64,
                    help="instances timed for the textbook loop (its time is scaled to the batch)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="extra back-to-back pairs (batched run, textbook loop) whose ratios are recorded "
                         "with their median: this machine's timings drift by tens of percent")
    ap.add_argument("--loop-settling-instances", type=int, default=32,
                    help="instances of the library's per-instance loop timed with and without settling "
                         "in each paired repeat (scaled to the batch)")
    ap.add_argument("--eta-sweep", default="0.1,0.3,1,3,10",
                    help="comma-separated step sizes: at each, paired timings of the batched run on "
                         "--sweep-batch instances and of both loops on --sweep-loop-instances ('' to skip)")
    ap.add_argument("--sweep-batch", type=int, default=64)
    ap.add_argument("--sweep-loop-instances", type=int, default=16)
    ap.add_argument("--section", default=None, help="JSON section to replace (default: local_cpu / device)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "npg.json"))
    args = ap.parse_args()
    section = args.section or ("device" if cupy_available() else "local_cpu")
    machine = _machine()

    mdp = random_mdp(args.states, args.actions, gamma=args.gamma, rng=0, batch_shape=(args.batch,))
    V_star = policy_iteration(mdp).V
    T = args.iterations
    rows: dict[str, Any] = {}

    # warm-up, untimed: a process's first batched call pays one-off costs (fresh arrays' page faults,
    # BLAS start-up) that are not per-iteration work; each loop below runs one instance untimed too
    natural_policy_gradient(mdp, eta=args.eta, iterations=T, V_star=V_star)
    t0, c0 = time.perf_counter(), time.process_time()
    with _settling_record() as settled, _live_record() as live:
        batched = natural_policy_gradient(mdp, eta=args.eta, iterations=T, V_star=V_star)
    rows["batched_numpy_s"] = time.perf_counter() - t0
    rows["batched_numpy_cpu_s"] = time.process_time() - c0
    rows["settled"] = settled
    rows["live_rows"] = live | {"rows_per_instance_full": args.states * args.actions}
    print(f"batched numpy : {rows['batched_numpy_s']:8.2f} s ({settled['instances']} instances settled, "
          f"{100 * settled['skipped_instance_iterations_share']:.0f} % of instance-iterations skipped)", flush=True)

    singles = [mdp[i] for i in range(args.batch)]
    natural_policy_gradient(singles[0], eta=args.eta, iterations=T, V_star=V_star[0])  # warm-up, untimed
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

    P, R, rho = np.asarray(mdp.P), np.asarray(mdp.R), np.asarray(mdp.initial_distribution())
    n_text = min(args.batch, args.textbook_instances)
    _textbook_npg(P[0], R[0], args.gamma, args.eta, T, V_star[0], rho[0])  # warm-up, untimed
    t0, c0 = time.perf_counter(), time.process_time()
    text = [_textbook_npg(P[i], R[i], args.gamma, args.eta, T, V_star[i], rho[i]) for i in range(n_text)]
    scale = args.batch / n_text
    rows["textbook_loop_s"] = (time.perf_counter() - t0) * scale
    rows["textbook_loop_cpu_s"] = (time.process_time() - c0) * scale
    rows["textbook_loop_measured_instances"] = n_text
    rows["max_abs_diff_textbook_vs_batched"] = float(
        np.max(np.abs(np.stack([p for p, _ in text]) - np.asarray(batched.policy)[:n_text])))
    rows["max_abs_diff_textbook_trace"] = float(np.max(np.abs(
        np.stack([s for _, s in text], axis=1) - np.asarray(batched.trace["suboptimality"])[:, :n_text])))
    print(f"textbook loop : {rows['textbook_loop_s']:8.2f} s (extrapolated from {n_text} instances)", flush=True)
    fastest = min(rows["loop_numpy_s"], rows["textbook_loop_s"])
    fastest_cpu = min(rows["loop_numpy_cpu_s"], rows["textbook_loop_cpu_s"])
    rows["speedup_batched_vs_textbook_loop"] = rows["textbook_loop_s"] / rows["batched_numpy_s"]
    rows["speedup_batched_vs_fastest_loop"] = fastest / rows["batched_numpy_s"]
    rows["speedup_batched_vs_fastest_loop_cpu_time"] = fastest_cpu / rows["batched_numpy_cpu_s"]
    rows["per_instance_iteration_us"]["textbook_loop"] = 1e6 * rows["textbook_loop_s"] / (T * args.batch)
    rows["max_evaluation_bound"] = float(np.max(batched.trace["evaluation_bound"]))
    floor = _floor(mdp)
    floor["ratio_bound_textbook_over_floor"] = rows["per_instance_iteration_us"]["textbook_loop"] / floor["floor_us"]
    rows["floor_per_instance_iteration"] = floor
    print(f"floor         : {floor['floor_us']:.2f} us per instance-iteration (product with P "
          f"{floor['product_with_P_us']:.2f} + update {floor['policy_update_us']:.2f}); textbook/floor "
          f"x{floor['ratio_bound_textbook_over_floor']:.1f}", flush=True)

    pairs: dict[str, list[float]] = {"batched_s": [], "textbook_loop_s": [], "ratio": [],
                                     "batched_without_settling_s": [], "settling_gain": [],
                                     "batched_full_layout_s": [], "live_rows_gain": [],
                                     "loop_s": [], "loop_without_settling_s": [], "loop_settling_gain": []}
    n_loop = min(args.batch, args.loop_settling_instances)
    for _ in range(args.repeat):  # paired: each ratio from runs taken one right after the other
        t0 = time.perf_counter()
        natural_policy_gradient(mdp, eta=args.eta, iterations=T, V_star=V_star)
        pairs["batched_s"].append(time.perf_counter() - t0)
        # the same batched run with every instance to the last iterate, then on the full (B, A, S) layout
        for key, gain, flag in (("batched_without_settling_s", "settling_gain", "_SETTLE"),
                                ("batched_full_layout_s", "live_rows_gain", "_ROWS")):
            setattr(npg_module, flag, False)
            try:
                t0 = time.perf_counter()
                natural_policy_gradient(mdp, eta=args.eta, iterations=T, V_star=V_star)
                pairs[key].append(time.perf_counter() - t0)
            finally:
                setattr(npg_module, flag, True)
            pairs[gain].append(pairs[key][-1] / pairs["batched_s"][-1])
        for key, settle in (("loop_s", True), ("loop_without_settling_s", False)):  # the library's own loop
            npg_module._SETTLE = settle
            try:
                t0 = time.perf_counter()
                for i in range(n_loop):
                    natural_policy_gradient(singles[i], eta=args.eta, iterations=T, V_star=V_star[i])
                pairs[key].append((time.perf_counter() - t0) * args.batch / n_loop)
            finally:
                npg_module._SETTLE = True
        pairs["loop_settling_gain"].append(pairs["loop_without_settling_s"][-1] / pairs["loop_s"][-1])
        t0 = time.perf_counter()
        for i in range(n_text):
            _textbook_npg(P[i], R[i], args.gamma, args.eta, T, V_star[i], rho[i])
        pairs["textbook_loop_s"].append((time.perf_counter() - t0) * scale)
        pairs["ratio"].append(pairs["textbook_loop_s"][-1] / pairs["batched_s"][-1])
    if pairs["ratio"]:
        rows["paired_repeats_vs_textbook_loop"] = pairs | {
            "median_ratio": float(np.median(pairs["ratio"])),
            "median_settling_gain": float(np.median(pairs["settling_gain"])),
            "median_live_rows_gain": float(np.median(pairs["live_rows_gain"])),
            "loop_settling_instances": n_loop,
            "median_loop_settling_gain": float(np.median(pairs["loop_settling_gain"])),
            "median_ratio_vs_loop": float(np.median(np.asarray(pairs["loop_s"]) / np.asarray(pairs["batched_s"]))),
            "median_ratio_vs_loop_without_settling": float(np.median(
                np.asarray(pairs["loop_without_settling_s"]) / np.asarray(pairs["batched_s"])))}
        print(f"paired repeats: batched vs textbook loop x{', x'.join(f'{r:.1f}' for r in pairs['ratio'])} "
              f"(median x{np.median(pairs['ratio']):.1f}), vs the library's loop (median) "
              f"x{rows['paired_repeats_vs_textbook_loop']['median_ratio_vs_loop']:.1f}; settling saves "
              f"x{', x'.join(f'{r:.2f}' for r in pairs['settling_gain'])} (batched), "
              f"x{', x'.join(f'{r:.2f}' for r in pairs['loop_settling_gain'])} (per-instance loop, "
              f"{n_loop} instances); the live-row layout saves "
              f"x{', x'.join(f'{r:.2f}' for r in pairs['live_rows_gain'])}", flush=True)

    if args.eta_sweep:
        rows["eta_sweep"] = _eta_sweep(mdp, V_star, [float(e) for e in args.eta_sweep.split(",")], T,
                                       args.sweep_batch, args.sweep_loop_instances, args.repeat)

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
        rows["speedup_cupy_vs_loop"] = min(rows["loop_numpy_s"], rows["textbook_loop_s"]) / rows["batched_cupy_s"]
        rows["speedup_cupy_vs_batched_numpy"] = rows["batched_numpy_s"] / rows["batched_cupy_s"]
        rows["gpu"] = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        print(f"batched cupy  : {rows['batched_cupy_s']:8.2f} s", flush=True)

    print(f"batched vs fastest loop (CPU): x{rows['speedup_batched_vs_fastest_loop']:.1f} wall, "
          f"x{rows['speedup_batched_vs_fastest_loop_cpu_time']:.1f} CPU time")
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
