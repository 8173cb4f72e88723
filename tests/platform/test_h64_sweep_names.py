"""rltheory.experiments.sweep: results files of functions that their name does not identify,
results that json refuses with a ValueError, and a seeds argument that is no iterable."""

from __future__ import annotations

import dataclasses
import functools
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rltheory.experiments import load_results, sweep
from rltheory.trace import ResultFileError


def _circular_at_one(config, seed):
    if config["x"] == 1:
        d: dict = {}
        d["self"] = d
        return d
    return config["x"] + seed


def _scaled(config, seed, *, k):
    return k * config["x"]


def _closure(k):
    def f(config, seed):
        return k * config["x"]

    return f


def test_two_lambdas_do_not_share_a_results_file(tmp_path):
    # both are named "<module>.<function>.<locals>.<lambda>": the second sweep read the first
    # one's point from the file as its own and returned 1 where it computes 2
    path = tmp_path / "res.jsonl"
    with ThreadPoolExecutor(1) as ex:
        with pytest.raises(
            ValueError, match=r"fn is '[\w.<>]+\.<lambda>', a name that other lambdas"
        ):
            sweep(lambda c, s: 1, {"x": [0]}, [0], executor=ex, results_path=path)
        with pytest.raises(ValueError, match=r"fn is '[\w.<>]+\.<lambda>'"):
            sweep(lambda c, s: 2, {"x": [0]}, [0], executor=ex, results_path=path)
    assert not path.exists()


def test_two_closures_of_one_factory_do_not_share_a_results_file(tmp_path):
    # _closure(2) and _closure(3) are both "..._closure.<locals>.f": the second returned 2 (k = 2)
    path = tmp_path / "res.jsonl"
    with ThreadPoolExecutor(1) as ex:
        with pytest.raises(ValueError, match=r"_closure\.<locals>\.f'.*module-level function"):
            sweep(_closure(2), {"x": [1]}, [0], executor=ex, results_path=path)
        with pytest.raises(ValueError, match=r"_closure\.<locals>\.f'"):
            sweep(functools.partial(_closure(3)), {"x": [1]}, [0], executor=ex, results_path=path)
        # without a results file nothing is shared, and a lambda runs as before
        assert sweep(lambda c, s: c["x"] * 10, {"x": [1]}, [0], executor=ex)[0].result == 10
        # the documented way: a module-level function with functools.partial
        pts = sweep(
            functools.partial(_scaled, k=3), {"x": [1]}, [0], executor=ex, results_path=path
        )
    assert pts[0].result == 3


def test_a_circular_result_is_located_and_earlier_points_are_kept(tmp_path):
    # json raises ValueError("Circular reference detected") here, not TypeError: it escaped the
    # sweep with neither the config nor the seed in its message
    path = tmp_path / "res.jsonl"
    with ThreadPoolExecutor(1) as ex:
        with pytest.raises(
            ValueError,
            match=r"fn result for config \{'x': 1\}, seed 5 is not JSON-serialisable: Circular",
        ):
            sweep(_circular_at_one, {"x": [0, 1]}, [5], executor=ex, results_path=path)
    (point,) = load_results(path, fn=_circular_at_one).values()
    assert (point.config, point.seed, point.result) == ({"x": 0}, 5, 5)


@pytest.mark.parametrize("seeds", [3, None])
def test_seeds_that_are_no_iterable_are_named(seeds):
    # list(3) raised TypeError "'int' object is not iterable", naming no argument
    with pytest.raises(ValueError, match=rf"seeds must be an iterable of integers; got {seeds}"):
        sweep(_scaled, {"x": [1]}, seeds)


def _plus_seed(config, seed):
    return config["x"] + seed


def test_a_results_file_created_by_another_sweep_meanwhile_is_kept(tmp_path, monkeypatch):
    # Two jobs started on one results file: job B finds no file, job A creates it and appends
    # its point, then B wrote its header with os.replace over A's file. A's point was gone from
    # the folder (and A's later appends went to the replaced file). The race is replayed here:
    # "A" runs inside B's existence check, which then answers as it did before A ran.
    path = tmp_path / "res.jsonl"
    real_exists = Path.exists

    def exists_then_race(self):
        if self == path and not real_exists(self):
            monkeypatch.setattr(Path, "exists", real_exists)
            with ThreadPoolExecutor(1) as ex:  # job A
                sweep(_plus_seed, {"x": [1]}, [0], executor=ex, results_path=path)
            return False
        return real_exists(self)

    monkeypatch.setattr(Path, "exists", exists_then_race)
    with ThreadPoolExecutor(1) as ex:  # job B
        points = sweep(_plus_seed, {"x": [1, 2]}, [0], executor=ex, results_path=path)
    assert [(p.config["x"], p.result, p.cached) for p in points] == [(1, 1, True), (2, 2, False)]
    assert sorted(p.config["x"] for p in load_results(path, fn=_plus_seed).values()) == [1, 2]
    assert [q.name for q in tmp_path.iterdir()] == ["res.jsonl"]  # no staged file left behind


@dataclasses.dataclass(frozen=True)
class _Scaled:
    k: int

    def __call__(self, config, seed):
        return self.k * config["x"]

    def shifted(self, config, seed):
        return self.k * config["x"] + 100


class _Opaque:
    def __call__(self, config, seed):
        return config["x"]


@pytest.mark.parametrize("make", [_Scaled, lambda k: _Scaled(k).shifted])
def test_two_callable_objects_of_one_class_do_not_share_a_results_file(tmp_path, make):
    # both were named "<module>._Scaled" (or "._Scaled.shifted"): _Scaled(3) read _Scaled(2)'s
    # point from the file and returned 2 (102) where it computes 3 (103)
    path = tmp_path / "res.jsonl"
    with ThreadPoolExecutor(1) as ex:
        first = sweep(make(2), {"x": [1]}, [0], executor=ex, results_path=path)
        with pytest.raises(
            ResultFileError, match=r"results belong to '[\w.]+ of _Scaled\(k=2\)', not"
        ):
            sweep(make(3), {"x": [1]}, [0], executor=ex, results_path=path)
        again = sweep(make(2), {"x": [1]}, [0], executor=ex, results_path=path)
    assert first[0].result == again[0].result and again[0].cached


def test_an_object_named_by_its_address_is_refused(tmp_path):
    with ThreadPoolExecutor(1) as ex:
        with pytest.raises(
            ValueError,
            match=r"fn computes with <[\w.]+_Opaque object at 0x\w+>, whose default repr",
        ):
            sweep(_Opaque(), {"x": [1]}, [0], executor=ex, results_path=tmp_path / "res.jsonl")
        # without a results file nothing is shared
        assert sweep(_Opaque(), {"x": [1]}, [0], executor=ex)[0].result == 1


def test_a_module_level_function_keeps_its_header_name(tmp_path):
    # results files written before keep resuming: the name of a plain function is unchanged
    path = tmp_path / "res.jsonl"
    with ThreadPoolExecutor(1) as ex:
        sweep(_plus_seed, {"x": [1]}, [0], executor=ex, results_path=path)
    header = json.loads(path.read_text().splitlines()[0])
    assert header["fn"] == f"{_plus_seed.__module__}._plus_seed"


def test_a_dangling_symlink_as_results_path_is_replaced_by_the_file(tmp_path):
    # as write_atomic did before the header was created with os.link (which refuses any
    # existing name): the link is replaced by the results file, not followed
    path = tmp_path / "res.jsonl"
    path.symlink_to(tmp_path / "missing" / "target.jsonl")
    with ThreadPoolExecutor(1) as ex:
        points = sweep(_plus_seed, {"x": [1]}, [0], executor=ex, results_path=path)
    assert points[0].result == 1 and not path.is_symlink()
    assert [p.result for p in load_results(path, fn=_plus_seed).values()] == [1]
