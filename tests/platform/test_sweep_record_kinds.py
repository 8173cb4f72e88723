"""load_results / sweep read a results file's entries as the writer writes them, casting nothing."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from rltheory.experiments.sweep import load_results, sweep
from rltheory.trace import ResultFileError


def doubled(config, seed):
    return config["x"] * 2 + seed


def _write(path, header, record):
    lines = [json.dumps(header), json.dumps(record)]
    path.write_text("\n".join(lines) + "\n")


def _header(**changes):
    h = {"format": "rltheory.sweep", "version": 1, "fn": f"{__name__}.doubled"}
    h.update(changes)
    return h


def _record(**changes):
    r = {
        "key": '{"config":{"x":1},"seed":0}',
        "config": {"x": 1},
        "seed": 0,
        "result": 2,
        "wall_time": 0.5,
    }
    r.update(changes)
    return r


@pytest.mark.parametrize(
    ("record", "message"),
    [
        # int(0.9) = 0: the stored result was returned as the cached point of seed 0
        (_record(seed=0.9), "seed = 0.9 is not an integer"),
        (_record(seed=False), "seed = False is not an integer"),
        (_record(seed="0"), "seed = '0' is not an integer"),
        # float('nan') / float('1e3') were taken as times
        (_record(wall_time="nan"), "wall_time = 'nan' is not a finite number of seconds >= 0"),
        (_record(wall_time="1e3"), "wall_time = '1e3' is not a finite number of seconds >= 0"),
        (_record(wall_time=True), "wall_time = True is not a finite number of seconds >= 0"),
        (_record(wall_time=-1.0), "wall_time = -1.0 is not a finite number of seconds >= 0"),
        (_record(config=[1]), "config = [1] is not an object"),
        ([1, 2], "a record is a JSON object; got list"),
    ],
)
def test_a_record_of_the_wrong_kind_is_corrupt(tmp_path, record, message):
    path = tmp_path / "r.jsonl"
    _write(path, _header(), record)
    with pytest.raises(ResultFileError, match=re.escape(f"{path}: line 2 is corrupt ({message})")):
        load_results(path)
    with ThreadPoolExecutor(1) as ex, pytest.raises(ResultFileError, match="line 2 is corrupt"):
        sweep(doubled, {"x": [1]}, [0], executor=ex, results_path=path)


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_header_version_of_the_wrong_kind_is_refused(tmp_path, version):
    # version true and 1.0 compared equal to 1 and were read as version 1
    path = tmp_path / "r.jsonl"
    _write(path, _header(version=version), _record())
    with pytest.raises(
        ResultFileError, match=re.escape(f"unsupported sweep file version {version!r}")
    ):
        load_results(path)


def test_the_writers_records_still_resume(tmp_path):
    path = tmp_path / "r.jsonl"
    with ThreadPoolExecutor(2) as ex:
        first = sweep(doubled, {"x": [1, 2]}, [0, 3], executor=ex, results_path=path)
        again = sweep(doubled, {"x": [1, 2]}, [0, 3], executor=ex, results_path=path)
    assert [p.result for p in first] == [2, 5, 4, 7] and not any(p.cached for p in first)
    assert [p.result for p in again] == [2, 5, 4, 7] and all(p.cached for p in again)
    assert [p.wall_time for p in again] == [p.wall_time for p in first]


def test_a_results_path_that_is_a_folder_is_named(tmp_path):
    # read_bytes() raised a bare "IsADirectoryError: [Errno 21] Is a directory"
    with (
        ThreadPoolExecutor(1) as ex,
        pytest.raises(
            ValueError,
            match=re.escape(
                f"results_path {str(tmp_path)!r} is a folder; give the path of a results file"
            ),
        ),
    ):
        sweep(doubled, {"x": [1]}, [0], executor=ex, results_path=tmp_path)
    assert list(tmp_path.iterdir()) == []
