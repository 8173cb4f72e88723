"""rltheory.experiments.sweep outside the usual paths: a failure while the results file is
created, a point that reads the same fresh and cached, argument errors."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _platform_sweep_fns import noisy_moments

from rltheory.experiments import load_results, sweep

HERE = Path(__file__).resolve().parent


def _echo(config: dict, seed: int) -> dict:
    return {"shape": config["shape"], "seed": seed}


def test_a_failed_header_write_leaves_no_file_that_blocks_the_rerun(tmp_path):
    # A disk that fills up while the sweep creates its results file (simulated with
    # RLIMIT_FSIZE = 10 bytes, so writes past byte 10 fail with EFBIG). The header used to be
    # appended to the already-created file: 10 bytes of it stayed behind and every rerun
    # raised ResultFileError "no complete header line". Now the header appears atomically.
    log = tmp_path / "log"
    log.mkdir()
    res = tmp_path / "res.jsonl"
    grid = {"x": [0, 1], "n": [8], "log_dir": [str(log)]}
    code = (
        "import resource, signal, sys, json; sys.path.insert(0, sys.argv[1]);"
        "from concurrent.futures import ThreadPoolExecutor;"
        "from _platform_sweep_fns import noisy_moments; from rltheory.experiments import sweep;"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN);"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (10, resource.getrlimit(resource.RLIMIT_FSIZE)[1]));"
        "sweep(noisy_moments, json.loads(sys.argv[2]), [0], results_path=sys.argv[3],"
        " executor=ThreadPoolExecutor(1))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(HERE), json.dumps(grid), str(res)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "File too large" in proc.stderr, proc.stderr[-2000:]
    assert not res.exists() or load_results(res) == {}  # no file, or a complete header
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    with ThreadPoolExecutor(1) as ex:
        points = sweep(noisy_moments, grid, [0], results_path=res, executor=ex)
    assert [p.config["x"] for p in points] == [0, 1] and not any(p.cached for p in points)
    assert len(load_results(res, fn=noisy_moments)) == 2


def test_a_point_reads_the_same_fresh_and_from_the_results_file(tmp_path):
    # the config of a fresh point was the grid entry itself ({'shape': (2, 3)}), that of the same
    # point read back on a rerun its JSON form ({'shape': [2, 3]})
    res = tmp_path / "res.jsonl"
    grid = [{"shape": (2, 3)}]
    with ThreadPoolExecutor(1) as ex:
        fresh = sweep(_echo, grid, [4], results_path=res, executor=ex)[0]
        cached = sweep(_echo, grid, [4], results_path=res, executor=ex)[0]
    assert cached.cached and not fresh.cached
    assert fresh.config == cached.config == {"shape": [2, 3]}
    assert fresh.result == cached.result == {"shape": [2, 3], "seed": 4}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        # max_workers = 0 or -1 silently ran a pool of cpu_count or 1 workers; 1.5 failed in range()
        ({"max_workers": 0}, r"max_workers must be None or an integer >= 1; got 0"),
        ({"max_workers": -1}, r"max_workers must be None or an integer >= 1; got -1"),
        ({"max_workers": 1.5}, r"max_workers must be None or an integer >= 1; got 1\.5"),
        # a string grid failed in dict(): "dictionary update sequence element #0 has length 1"
        ({"grid": "abc"}, r"grid must be a sequence of dicts or a dict of sequences; got 'abc'"),
        # a list of numbers failed in dict(): "'int' object is not iterable"
        ({"grid": [{"shape": 1}, 2]}, r"grid\[1\] must be a dict of JSON values; got int 2"),
    ],
)
def test_sweep_argument_errors_are_located(kwargs, match):
    args = {"grid": [{"shape": 1}], **kwargs}
    grid = args.pop("grid")
    with pytest.raises(ValueError, match=match):
        sweep(_echo, grid, [0], **args)
