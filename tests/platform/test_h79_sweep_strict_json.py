"""Sweep results files are strict JSON (format version 2): non-finite floats are text listed in the
record's ``nonfinite`` paths, read back as the floats; version-1 files are still read and resumed."""

from __future__ import annotations

import json
import math
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from rltheory.experiments.sweep import load_results, sweep
from rltheory.trace import ResultFileError


def diverging(config, seed):
    """A result with NaN, both infinities and the *text* "nan" (which must stay text)."""
    return {"loss": [1.0, math.nan, config["clip"]], "best": -math.inf, "label": "nan", "s": seed}


def echo(config, seed):
    return {"m": config["m"], "s": seed}


def _strict(line: str):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(line, parse_constant=refuse)


def _same(a, b) -> bool:
    """Equality with NaN equal to NaN (the results hold NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def test_non_finite_results_and_configs_are_written_as_strict_json_and_read_back(tmp_path):
    path = tmp_path / "r.jsonl"
    grid = [{"clip": math.inf}, {"clip": 2.0}]
    with ThreadPoolExecutor(2) as ex:
        first = sweep(diverging, grid, [0, 1], executor=ex, results_path=path)
        again = sweep(diverging, grid, [0, 1], executor=ex, results_path=path)
    lines = path.read_text().splitlines()
    # the old writer wrote NaN/Infinity tokens here, which a strict parser refuses
    records = [_strict(line) for line in lines]
    assert records[0]["version"] == 2
    assert len(records) == 5
    r = next(x for x in records[1:] if x["config"] == {"clip": "inf"} and x["seed"] == 1)
    assert r["result"]["loss"] == [1.0, "nan", "inf"] and r["result"]["label"] == "nan"
    assert sorted(r["nonfinite"]) == [
        ["config", "clip"],
        ["result", "best"],
        ["result", "loss", 1],
        ["result", "loss", 2],
    ]
    assert all(p.cached for p in again) and not any(p.cached for p in first)
    for p, q in zip(first, again, strict=True):
        assert _same(p.config, q.config) and p.seed == q.seed and _same(p.result, q.result)
    inf_point = first[1]
    assert inf_point.config == {"clip": math.inf}
    assert math.isnan(inf_point.result["loss"][1]) and inf_point.result["loss"][2] == math.inf
    assert inf_point.result["best"] == -math.inf and inf_point.result["label"] == "nan"


def test_a_config_with_integer_keys_is_found_again_on_a_rerun(tmp_path):
    # the writer keyed {10: 1, 2: 2} with its keys sorted as integers, the reader with the file's
    # text keys sorted as text: the rerun raised 'line 2 is corrupt (key does not match ...)'
    path = tmp_path / "r.jsonl"
    grid = [{"m": {10: 1, 2: 2}}]
    with ThreadPoolExecutor(1) as ex:
        first = sweep(echo, grid, [0], executor=ex, results_path=path)
        again = sweep(echo, grid, [0], executor=ex, results_path=path)
    assert again[0].cached and again[0].result == first[0].result == {
        "m": {"2": 2, "10": 1},
        "s": 0,
    }


def test_a_version_1_file_with_nan_tokens_is_read_and_resumed_as_version_1(tmp_path):
    path = tmp_path / "r.jsonl"
    fn = f"{__name__}.diverging"
    old = {
        "key": '{"config":{"clip":Infinity},"seed":0}',
        "config": {"clip": math.inf},
        "seed": 0,
        "result": {"loss": [1.0, math.nan, math.inf], "best": -math.inf, "label": "nan", "s": 0},
        "wall_time": 0.5,
    }
    path.write_text(
        json.dumps({"format": "rltheory.sweep", "version": 1, "fn": fn})
        + "\n"
        + json.dumps(old)
        + "\n"
    )
    points = load_results(path)
    (p,) = points.values()
    assert p.config == {"clip": math.inf} and math.isnan(p.result["loss"][1])
    with ThreadPoolExecutor(1) as ex:
        out = sweep(diverging, [{"clip": math.inf}], [0, 1], executor=ex, results_path=path)
    assert [q.cached for q in out] == [True, False]
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["version"] == 1 and len(lines) == 3
    assert "nonfinite" not in json.loads(lines[2])  # appended in the file's own version
    assert len(load_results(path)) == 2


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            '{"config":{"x":1},"key":"{\\"config\\":{\\"x\\":1},\\"seed\\":0}","result":NaN,'
            '"seed":0,"wall_time":0.5}',
            "NaN is not strict JSON",
        ),
        (
            '{"config":{"x":1},"key":"{\\"config\\":{\\"x\\":1},\\"seed\\":0}","result":"x",'
            '"seed":0,"wall_time":0.5,"nonfinite":[["result"]]}',
            "nonfinite[0] = ['result'] leads to 'x', not 'nan', 'inf' or '-inf'",
        ),
        (
            '{"config":{"x":1},"key":"{\\"config\\":{\\"x\\":1},\\"seed\\":0}","result":["nan"],'
            '"seed":0,"wall_time":0.5,"nonfinite":[["result", 3]]}',
            "nonfinite[0] = ['result', 3] does not exist in the record (no entry 3)",
        ),
        (
            '{"config":{"x":1},"key":"{\\"config\\":{\\"x\\":1},\\"seed\\":0}","result":1,'
            '"seed":0,"wall_time":0.5,"nonfinite":[["key"]]}',
            "nonfinite[0] = ['key'] is not a path into config or result",
        ),
    ],
)
def test_a_version_2_record_that_is_not_strict_or_misplaces_nonfinite_is_corrupt(
    tmp_path, record, message
):
    path = tmp_path / "r.jsonl"
    header = json.dumps({"format": "rltheory.sweep", "version": 2, "fn": "m.f"})
    path.write_text(header + "\n" + record + "\n")
    with pytest.raises(ResultFileError, match=re.escape(f"{path}: line 2 is corrupt ({message}")):
        load_results(path)


def test_a_circular_config_is_named():
    c: dict = {"x": 1}
    c["self"] = c
    # json's bare "Circular reference detected" named no grid entry
    with pytest.raises(ValueError, match=r"grid\[1\] = .* is not a dict of JSON values"):
        sweep(echo, [{"x": 0}, c], [0], executor=ThreadPoolExecutor(1))
