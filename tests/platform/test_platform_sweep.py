"""rltheory.experiments.sweep: local pool = Dask LocalCluster; resume after crash, kill or truncation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import distributed
import pytest
from _platform_sweep_fns import noisy_moments

from rltheory.experiments import grid_product, load_results, sweep
from rltheory.trace import ResultFileError

HERE = Path(__file__).resolve().parent


def _calls(log: Path) -> int:
    return len(list(log.glob("call-*")))


def _grid(log: Path, xs=(0, 1, 2, 3, 4, 5), **extra) -> dict:
    return {"x": list(xs), "n": [64], "log_dir": [str(log)], **{k: [v] for k, v in extra.items()}}


def _values(points) -> list:
    return [(p.config["x"], p.seed, p.result["mean"], p.result["var"]) for p in points]


@pytest.fixture(scope="module")
def dask_client():
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_cluster_gives_the_same_numbers_as_the_local_pool(tmp_path, dask_client):
    log = tmp_path / "log"
    log.mkdir()
    grid, seeds = _grid(log, xs=(0, 1, 2)), [0, 1, 2]
    local = sweep(noisy_moments, grid, seeds, max_workers=2)
    remote = sweep(noisy_moments, grid, seeds, executor=dask_client.get_executor(),
                   results_path=tmp_path / "dask.jsonl")
    threads = sweep(noisy_moments, grid, seeds, executor=ThreadPoolExecutor(2))
    direct = [(c["x"], s, noisy_moments(c, s)) for c in grid_product(**grid) for s in seeds]
    assert _values(local) == _values(remote) == _values(threads)
    assert [(x, s, r["mean"], r["var"]) for x, s, r in direct] == _values(local)
    assert [(p.config["x"], p.seed) for p in local] == [(x, s) for x in (0, 1, 2) for s in seeds]
    assert _calls(log) == 4 * 9
    assert len(load_results(tmp_path / "dask.jsonl")) == 9


def test_crash_half_way_then_rerun_computes_only_missing_points(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    (log / "abort_after").write_text("4")
    res = tmp_path / "r.jsonl"
    grid, seeds = _grid(log), [0, 1]
    with pytest.raises(RuntimeError, match="simulated crash"):
        sweep(noisy_moments, grid, seeds, results_path=res, max_workers=1)
    saved = load_results(res)
    assert len(saved) == 4  # every point that finished before the crash is on disk
    before = _calls(log)
    (log / "abort_after").unlink()
    points = sweep(noisy_moments, grid, seeds, results_path=res, max_workers=1)
    assert _calls(log) - before == 12 - 4  # only the missing points were computed
    assert sum(p.cached for p in points) == 4
    clean = sweep(noisy_moments, _grid(tmp_path), seeds, executor=ThreadPoolExecutor(1))
    assert _values(points) == _values(clean)
    # a third run computes nothing
    again = sweep(noisy_moments, grid, seeds, results_path=res)
    assert _calls(log) - before == 8 and all(p.cached for p in again)


def test_sigkill_mid_sweep_then_resume(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    res = tmp_path / "killed.jsonl"
    grid, seeds = _grid(log, delay=0.15), [0, 1]
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from _platform_sweep_fns import noisy_moments; from rltheory.experiments import sweep;"
        "import json; grid = json.loads(sys.argv[2]);"
        "sweep(noisy_moments, grid, [0, 1], results_path=sys.argv[3], max_workers=1)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(HERE), json.dumps(grid), str(res)],
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if res.exists() and res.read_bytes().count(b"\n") >= 1 + 3:  # header + 3 points
                break
            if proc.poll() is not None:
                pytest.fail(f"sweep subprocess exited early with {proc.returncode}")
            time.sleep(0.02)
        else:
            pytest.fail("sweep subprocess wrote no results within 60 s")
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its pool workers, as a kill -9 would
    finally:
        proc.wait(timeout=30)
    with _maybe_cutoff_warning():
        saved = load_results(res)
    assert 3 <= len(saved) < 12
    before = _calls(log)
    points = sweep(noisy_moments, grid, seeds, results_path=res, max_workers=1)
    assert _calls(log) - before == 12 - len(saved)
    assert _values(points) == _values(sweep(noisy_moments, _grid(tmp_path, delay=0.0), seeds,
                                            executor=ThreadPoolExecutor(2)))


class _maybe_cutoff_warning:
    """A SIGKILL may land mid-append: a cut-off last line is then reported with a RuntimeWarning."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings(record=True)
        self.caught = self._cm.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._cm.__exit__(*exc)
        for w in self.caught:
            assert issubclass(w.category, RuntimeWarning) and "cut-off" in str(w.message)
        return False


def test_truncated_last_line_is_recomputed_and_repaired(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    res = tmp_path / "r.jsonl"
    grid, seeds = _grid(log, xs=(0, 1)), [0, 1, 2]
    full = sweep(noisy_moments, grid, seeds, results_path=res, executor=ThreadPoolExecutor(2))
    raw = res.read_bytes()
    last = raw[:-1].rfind(b"\n") + 1
    res.write_bytes(raw[: last + (len(raw) - last) // 2])  # cut the last record mid-line
    before = _calls(log)
    with pytest.warns(RuntimeWarning, match="cut-off last record"):
        again = sweep(noisy_moments, grid, seeds, results_path=res, executor=ThreadPoolExecutor(2))
    assert _calls(log) - before == 1
    assert _values(again) == _values(full)
    assert len(load_results(res)) == 6 and res.read_bytes().endswith(b"\n")


def test_corrupt_foreign_and_mismatched_files_raise(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    res = tmp_path / "r.jsonl"
    grid = _grid(log, xs=(0, 1))
    sweep(noisy_moments, grid, [0, 1], results_path=res, executor=ThreadPoolExecutor(1))
    lines = res.read_bytes().split(b"\n")
    lines[2] = b'{"key": "broken'
    res.write_bytes(b"\n".join(lines))
    with pytest.raises(ResultFileError, match="line 3 is corrupt"):
        sweep(noisy_moments, grid, [0, 1], results_path=res)
    lines[2] = json.dumps({"key": "x", "config": {"x": 0}, "seed": 0, "result": 1, "wall_time": 0}).encode()
    res.write_bytes(b"\n".join(lines))
    with pytest.raises(ResultFileError, match="key does not match"):
        load_results(res)
    other = tmp_path / "other.jsonl"
    other.write_text("hello world\n")
    with pytest.raises(ResultFileError, match="not a JSON header"):
        sweep(noisy_moments, grid, [0], results_path=other)
    other.write_text('{"format": "something-else"}\n')
    with pytest.raises(ResultFileError, match="not an rltheory sweep header"):
        load_results(other)
    other.write_bytes(b"")
    with pytest.raises(ResultFileError, match="empty file"):
        load_results(other)
    mine = tmp_path / "mine.jsonl"
    sweep(noisy_moments, grid, [0], results_path=mine, executor=ThreadPoolExecutor(1))
    with pytest.raises(ResultFileError, match="results belong to"):
        sweep(_shifted, [{"x": 1}], [0], results_path=mine, executor=ThreadPoolExecutor(1))


def _shifted(config, seed):
    return config["x"] + seed


def _not_json(config, seed):
    return {1, 2}


def test_validation():
    ex = ThreadPoolExecutor(1)
    with pytest.raises(ValueError, match="at least one config"):
        sweep(_shifted, [], [0], executor=ex)
    with pytest.raises(ValueError, match="at least one seed"):
        sweep(_shifted, [{"x": 1}], [], executor=ex)
    with pytest.raises(ValueError, match=r"seeds\[1\] must be an integer"):
        sweep(_shifted, [{"x": 1}], [0, 1.5], executor=ex)
    with pytest.raises(ValueError, match=r"grid\[0\]"):
        sweep(_shifted, [{"x": object()}], [0], executor=ex)
    with pytest.raises(ValueError, match="not JSON-serialisable"):
        sweep(_not_json, [{"x": 1}], [0], executor=ex)
    with pytest.raises(ValueError, match="grid axis 'x'"):
        grid_product(x=3)
    assert grid_product(a=[1, 2], b=["u"]) == [{"a": 1, "b": "u"}, {"a": 2, "b": "u"}]
