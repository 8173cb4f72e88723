"""The README's Python examples run as written (docs are tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_python_examples():
    assert BLOCKS, "README.md should contain at least one ```python example"


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_block_runs(code):
    pytest.importorskip("matplotlib")
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - our own documentation
    # the block ran to the end (its own asserts included) and defined what it shows
    assert [k for k in namespace if not k.startswith("__")]


# --- quoted benchmark numbers (session 18): every figure the README quotes is the JSON's, rounded ---

RESULTS = README.parent / "benchmarks" / "results"
TEXT = " ".join(README.read_text(encoding="utf-8").split())  # line breaks as spaces


def _json(name: str) -> dict:
    import json  # noqa: PLC0415

    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


def _missing(want: list[str]) -> list[str]:
    """The expected phrases the README does not contain (each test asserts this is empty)."""
    return [w for w in want if w not in TEXT]


def test_readme_quotes_the_mdp_benchmark():
    want: list[str] = []
    cases = _json("mdp.json")["cases"]
    for i in (0, 1):
        warm = cases[i]["summary"]["warm_s"]["ratio_vs_quantecon_fastest"]
        cold = cases[i]["summary"]["cold_s"]["ratio_vs_quantecon_fastest"]
        sep = " (model built)," if i == 0 else ","
        want.append(f"{warm:.1f}× solve{sep} {cold:.{1 if cold >= 1 else 2}f}× from raw arrays")
    s = cases[2]["summary"]
    want.append(
        f"{s['ratio_batched_vs_quantecon_loop']:.1f}× on the current machine, session 17 "
        f"({s['ratio_batched_vs_rltheory_loop']:.1f}× vs an rltheory loop"
    )
    pi = {r["library"]: r["iterations"] for r in cases[0]["rows"] if r["method"] == "PI"}
    want.append(
        f"PI: {pi['rltheory']} iterations, QuantEcon's PI {pi['quantecon']}, "
        f"mdptoolbox's {pi['mdptoolbox']} (cap)"
    )
    missing = _missing(want)
    assert not missing, f"README.md should say {missing!r} (the numbers in benchmarks/results)"


def test_readme_quotes_the_games_benchmark():
    want: list[str] = []
    zero_sum, bimatrix, shapley = _json("games.json")["cases"]
    want.append(f"| {zero_sum['ratios']['HiGHS loop / rltheory']:.0f}× on the current machine")
    r = bimatrix["ratios"]
    want.append(
        f"{r['nashpy support_enumeration / rltheory']:.0f}× on the current machine "
        f"(session 17; {r['pygambit enummixed / rltheory']:.1f}× pygambit's enummixed)"
    )
    r = shapley["ratios"]
    want.append(
        f"{r['HiGHS loop / rltheory (per sweep)']:.0f}× per sweep (measured side by side); "
        f"{r['HiGHS loop / rltheory (full solve)']:.0f}× for the full solve "
        f"(HiGHS time extrapolated to the same {shapley['accuracy']['sweeps']} sweeps)"
    )
    missing = _missing(want)
    assert not missing, f"README.md should say {missing!r} (the numbers in benchmarks/results)"


def test_readme_quotes_the_npg_benchmark():
    want: list[str] = []
    sections = _json("npg.json")["sections"]
    r = sections["local_cpu"]["results"]
    us = r["per_instance_iteration_us"]
    want.append(
        f"{r['speedup_batched_vs_fastest_loop']:.1f}× wall and CPU time in the headline run"
    )
    want.append(
        f"{us['batched']:.1f} µs per instance-iteration vs {us['loop']:.1f} for the library's "
        f"per-instance loop and {us['textbook_loop']:.1f} for the hand-written one"
    )
    # the features list quotes the same two numbers (it said 4.6 vs 33.5 µs, no JSON's)
    want.append(f"({us['batched']:.1f} vs {us['loop']:.1f} µs per instance-iteration on 2 cores")
    want.append(f"certified to ≤ {r['max_evaluation_bound']:.2g} counting")
    p = r["paired_repeats_vs_textbook_loop"]
    want.append(
        f"median {p['median_ratio_vs_loop']:.1f}× vs the library's loop and "
        f"{p['median_ratio']:.1f}× vs the hand-written loop"
    )
    want.append(f"answers agree to {r['max_abs_diff_textbook_vs_batched']:.2g}")
    st = r["settled"]
    want.append(
        f"({st['instances']} of {st['of']} settle, median iteration "
        f"{st['median_settling_iteration']:.0f}; "
        f"{100 * st['skipped_instance_iterations_share']:.0f} % of instance-iterations skipped)"
    )
    # the settling gains of the headline run (it said 1.14–1.17× and 1.40×: the first range
    # was the native-kernel section's, the second no section's)
    native = sections["local_cpu_native_blas_kernels"]["results"]["paired_repeats_vs_textbook_loop"]

    def span(xs):
        return f"{min(xs):.2f}–{max(xs):.2f}×"

    want.append(
        f"saves {span(p['settling_gain'])} on the batched run and {span(p['loop_settling_gain'])} "
        f"on the per-instance loop (paired, in the same benchmark; "
        f"{span(native['settling_gain'])} and {span(native['loop_settling_gain'])} "
        "with the native kernels)"
    )
    nat = sections["local_cpu_native_blas_kernels"]["results"]
    want.append(
        f"gives {nat['speedup_batched_vs_fastest_loop']:.1f}× and "
        f"{native['median_ratio']:.1f}× (`npg.json`, section `local_cpu_native_blas_kernels`)"
    )
    sweep = r["eta_sweep"]["by_eta"]
    faster = [min(e["median_ratio_vs_loop"], e["median_ratio_vs_textbook_loop"]) for e in sweep]
    want.append(
        "against the faster loop "
        + ", ".join(
            f"{f:.1f}× at {'η=' if i == 0 else ''}{e['eta']:g}"
            for i, (f, e) in enumerate(zip(faster, sweep, strict=True))
        )
    )
    want.append(f"({sweep[-1]['median_ratio_vs_textbook_loop']:.1f}× at η=10)")
    want.append(f"is {r['floor_per_instance_iteration']['floor_us']:.1f} µs")
    dev = sections["device"]["results"]
    want.append(
        f"the same benchmark gives {dev['speedup_batched_vs_fastest_loop']:.1f}× (`npg.json`"
    )
    sync = sections["device_sync_per_iteration"]["results"]
    want.append(
        f"{dev['batched_cupy_s']:.2f} s: {dev['speedup_cupy_vs_loop']:.0f}× the faster CPU loop, "
        f"{dev['speedup_cupy_vs_batched_numpy']:.1f}× batched numpy on the same host"
    )
    want.append(f"({sync['batched_cupy_s']:.2f} s with a host copy per iteration")
    missing = _missing(want)
    assert not missing, f"README.md should say {missing!r} (the numbers in benchmarks/results)"


def test_readme_quotes_the_gpu_benchmark():
    want: list[str] = []
    rows = {r["case"].split(":")[0]: r["speedup"] for r in _json("gpu.json")["rows"]}
    want.append(
        f"{rows['batched VI']:.0f}× / {rows['batched PI']:.0f}× / {rows['batched MPI(m=20)']:.0f}×; "
        f"{rows['dense PI']:.0f}×; {rows['batched zero-sum value']:.0f}× (`gpu.json`"
    )
    log = (RESULTS / "gpu_tests_h100.log").read_text(encoding="utf-8")
    n = int(re.search(r"(\d+) passed", log).group(1))
    assert "failed" not in log.splitlines()[-1]
    want.append(f"{n} of {n} cupy-parametrised tests pass there")
    missing = _missing(want)
    assert not missing, f"README.md should say {missing!r} (the numbers in benchmarks/results)"


def test_readme_counts_the_registered_experiments():
    want: list[str] = []
    from rltheory import experiments  # noqa: PLC0415

    n = len(experiments.names())
    want.append(f"All {n} pass.")
    rows = re.findall(r"^\| `([a-z0-9-]+)` \|", README.read_text(encoding="utf-8"), flags=re.M)
    assert len(rows) == n, f"the gallery table has {len(rows)} rows for {n} experiments"
    missing = _missing(want)
    assert not missing, f"README.md should say {missing!r} (the numbers in benchmarks/results)"
