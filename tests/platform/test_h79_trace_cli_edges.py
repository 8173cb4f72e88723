"""Trace/sweep readers and the CLI on hostile input: located errors, nothing written or created.

Each case failed differently before: a deeply nested JSON file escaped ``Trace.load`` and
``load_results`` as a ``RecursionError``; a JSON trace whose empty array had an impossible shape
raised NumPy's message without the field; a nested metric was reported as "shape ()"; a refused
``write_atomic`` created the missing folders; ``reproduce --out ''`` wrote into the working folder.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from rltheory.cli import main
from rltheory.experiments.sweep import load_results
from rltheory.trace import ResultFileError, Trace, write_atomic

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_deeply_nested_json_trace_is_a_result_file_error(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"format": "rltheory.trace", "version": 1, "metrics": ' + DEEP + "}")
    with pytest.raises(
        ResultFileError, match=re.escape(f"{path}: corrupt JSON (nested too deeply")
    ):
        Trace.load(path)


@pytest.mark.parametrize("where", ["header", "record"])
def test_a_deeply_nested_sweep_line_is_a_result_file_error(tmp_path, where):
    path = tmp_path / "r.jsonl"
    header = json.dumps({"format": "rltheory.sweep", "version": 2, "fn": "m.f"})
    path.write_text((DEEP if where == "header" else header + "\n" + DEEP) + "\n")
    line = 1 if where == "header" else 2
    message = "line 1 is not a JSON header" if line == 1 else "line 2 is corrupt"
    with pytest.raises(ResultFileError, match=re.escape(f"{path}: {message}")):
        load_results(path)


def test_an_impossible_shape_of_an_empty_array_is_located(tmp_path):
    empty = {"dtype": "<f8", "shape": [0], "data": []}
    d = {
        "format": "rltheory.trace",
        "version": 1,
        "iteration": {"dtype": "<i8", "shape": [0], "data": []},
        "wall_time": empty,
        "metrics": {"a": {"dtype": "<f8", "shape": [0, 2**62, 2**62], "data": []}},
        "final": {},
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(d))
    # NumPy's "array is too big; `arr.size * arr.dtype.itemsize` is larger than ..." named no field
    with pytest.raises(
        ResultFileError, match=re.escape("metrics['a']: shape [0, 4611686018427387904")
    ):
        Trace.load(path)


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_a_nested_metric_is_named_as_such_and_nothing_is_written(tmp_path, suffix):
    t = Trace(metrics={"a": {"b": np.arange(2.0)}}, iteration=np.arange(2), wall_time=np.zeros(2))
    path = tmp_path / f"t{suffix}"
    with pytest.raises(ValueError, match=r"metric 'a' holds a dict, not an array of numbers"):
        t.save(path)
    assert list(tmp_path.iterdir()) == []


def test_a_refused_atomic_write_creates_no_folders(tmp_path):
    with pytest.raises(TypeError, match="write_atomic: data must be bytes or str; got int"):
        write_atomic(tmp_path / "new" / "deeper" / "f.json", 5)
    assert list(tmp_path.iterdir()) == []


def test_reproduce_refuses_an_empty_out(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "vi-rates", "--out", ""]) == 2
    assert capsys.readouterr().err == "rltheory reproduce: --out '' names no folder\n"
    assert list(tmp_path.iterdir()) == []


def test_a_write_that_fails_for_space_names_the_file_and_keeps_the_old_one(tmp_path):
    # RLIMIT_FSIZE stands in for a full disk: the write fails with EFBIG ("[Errno 27] File too
    # large", which named no file); the previous trace stays complete and no temporary file stays
    code = (
        "import resource, signal, sys, numpy as np\n"
        "from rltheory.trace import Trace\n"
        "path = sys.argv[1]\n"
        "Trace(metrics={'a': np.arange(3.0)}, iteration=np.arange(3), wall_time=np.zeros(3)).save(path)\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
        "big = Trace(metrics={'a': np.arange(5000.0)}, iteration=np.arange(5000), wall_time=np.zeros(5000))\n"
        "try:\n"
        "    big.save(path)\n"
        "except OSError as exc:\n"
        "    print(exc)\n"
    )
    for suffix in (".json", ".npz"):
        path = tmp_path / f"t{suffix}"
        proc = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.strip().endswith(f"File too large: {str(path)!r}"), proc.stdout
        assert len(Trace.load(path)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json", "t.npz"]


def test_solve_reports_an_lp_solver_failure_without_a_traceback(monkeypatch, capsys):
    import rltheory.mdp  # noqa: PLC0415
    from rltheory.errors import SolverError  # noqa: PLC0415

    def failing(mdp):
        raise SolverError("HiGHS failed on the LP: forced by the test", status=4)

    monkeypatch.setattr(rltheory.mdp, "linear_program", failing)
    assert main(["solve", "gridworld", "--size", "3", "--method", "lp"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "rltheory solve: --method lp: HiGHS failed on the LP: forced by the test (status 4); "
        "the other methods (vi, pi, mpi) need no external solver\n"
    )


def test_solve_lp_near_gamma_one_ends_with_an_answer_or_a_message():
    # at gamma = 1 - 1e-12 linear_program raised SolverError on this 4x4 gridworld (HiGHS: "The
    # problem is unbounded") and the CLI showed a traceback; whichever way the LP ends, the
    # command ends with a certificate (status 0) or a message (status 2)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from rltheory.cli import main; sys.exit(main())",
            "solve",
            "gridworld",
            "--size",
            "4",
            "--gamma",
            "0.999999999999",
            "--method",
            "lp",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    if proc.returncode == 2:
        assert proc.stderr.startswith("rltheory solve: --method lp: HiGHS failed on the LP")
    else:
        assert proc.returncode == 0 and "certificate:" in proc.stdout


def test_solve_prints_a_solver_warning_as_its_own_line(capsys):
    # tol = 1e-300 is below the certificate's round-off floor: value_iteration stops with
    # converged=False and a ConvergenceWarning, which was shown with this module's source line
    # ('"vi": lambda: value_iteration(mdp, tol=args.tol),')
    assert main(["solve", "gridworld", "--size", "3", "--tol", "1e-300"]) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "rltheory solve: warning: value_iteration stopped after"
    )
    assert "is below the round-off floor" in lines[0]
    assert "converged:   False" in captured.out
