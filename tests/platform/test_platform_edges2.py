"""Platform edges outside the ranges of the other platform tests: corrupted trace entries that
were cast silently, metric names the .npz format cannot hold, recorder values that are text,
the CLI's output folder and arguments, sweeps that lost finished points or shared a results
file between partials, verdicts that were not bools, and rate fits and bound checks given
text, bools or numbers past the float range."""

from __future__ import annotations

import copy
import json
import threading

import numpy as np
import pytest

from rltheory.trace import ResultFileError, Trace


def _trace_dict() -> dict:
    return Trace(
        metrics={"m": np.array([0.5, 0.25]), "i": np.array([1, 2]), "b": np.array([True, False]),
                 "h": np.array([1.0, 2.0], dtype=np.float16)},
        iteration=np.arange(2), wall_time=np.array([0.0, 0.1]),
    ).to_dict()


def _set(path, value):
    def edit(d):
        *keys, last = path
        for k in keys:
            d = d[k]
        d[last] = value
    return edit


@pytest.mark.parametrize(("edit", "msg"), [
    # each of these loaded without a word before: null became NaN, true became 1.0, 1.5 the
    # integer 1, 'nan' and 2 the boolean True, 1e10 float16 inf, an iteration 1.7 became 1
    (_set(("metrics", "m", "data", 0), None), r"metrics\['m'\]: non-numeric entry in data; data\[0\] = None"),
    (_set(("metrics", "m", "data", 0), True), r"metrics\['m'\]: non-numeric entry in data; data\[0\] = True"),
    (_set(("metrics", "i", "data", 0), 1.5), r"metrics\['i'\]: data\[0\] = 1.5 is not an integer \(int64\)"),
    (_set(("metrics", "b", "data", 0), "nan"), r"metrics\['b'\]: data\[0\] = 'nan' is not a boolean"),
    (_set(("metrics", "b", "data", 1), 2), r"metrics\['b'\]: data\[1\] = 2 is not a boolean"),
    (_set(("metrics", "h", "data", 0), 1e10), r"metrics\['h'\]: data\[0\] = 10000000000.0 is too large for float16"),
    (_set(("iteration", "data", 1), 1.7), r"iteration: data\[1\] = 1.7 is not an integer \(int64\)"),
    (_set(("metrics", "m", "shape"), [2.5]), r"metrics\['m'\]: shape must be a list of non-negative integers"),
    (_set(("metrics", "m", "shape"), "2"), r"metrics\['m'\]: shape must be a list of non-negative integers"),
    (_set(("metrics", "m", "dtype"), None), r"metrics\['m'\]: dtype must be a NumPy dtype string"),
    (_set(("version",), True), r"unsupported trace version True"),
    (_set(("version",), 1.0), r"unsupported trace version 1.0"),
    # these raised, but without the field: "int too large to convert to float", "'list' object
    # has no attribute 'items'", "data type 'junk' not understood"; and 2^40 x 2^40 "needs 0"
    (_set(("metrics", "m", "data", 0), 10**400), r"metrics\['m'\]: data\[0\] = 1000.* is too large for float64"),
    (_set(("metrics",), []), r"metrics must be an object of named arrays; got list"),
    (_set(("metrics", "m", "dtype"), "junk"), r"metrics\['m'\]: dtype 'junk' is not a NumPy dtype"),
    (_set(("metrics", "m", "shape"), [2**40, 2**40]), r"shape \(1099511627776, 1099511627776\) needs 1208925819614629174706176"),
])
def test_json_entries_of_the_wrong_kind_are_located_not_cast(tmp_path, edit, msg):
    d = copy.deepcopy(_trace_dict())
    edit(d)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(d))
    with pytest.raises(ResultFileError, match=msg) as info:
        Trace.load(p)
    assert str(info.value).startswith(f"{p}: ")


def test_a_float_iteration_must_be_integral_in_both_formats(tmp_path):
    # iteration NaN in a float array became -9223372036854775808 (with a RuntimeWarning only)
    d = _trace_dict()
    d["iteration"] = {"dtype": "<f8", "shape": [2], "data": ["nan", 1.0]}
    p = tmp_path / "t.json"
    p.write_text(json.dumps(d))
    with pytest.raises(ResultFileError, match=r"iteration\[0\] = nan is not an int64 iteration index"):
        Trace.load(p)
    for it in (np.array([0.0, 1.5]), np.array([0, 2**64 - 1], dtype=np.uint64)):
        q = tmp_path / "t.npz"
        np.savez(q, __format__=np.asarray("rltheory.trace/1"), iteration=it, wall_time=np.zeros(2))
        with pytest.raises(ResultFileError, match=rf"{q.name}: .*iteration\[1\] = .* is not an int64 iteration index"):
            Trace.load(q)
    # integral floats (a Trace built with np.arange(2.0)) still load, as int64
    back = Trace.load(Trace(iteration=np.arange(2.0), wall_time=np.zeros(2)).save(tmp_path / "f.json"))
    assert back.iteration.dtype == np.int64 and back.iteration.tolist() == [0, 1]


@pytest.mark.parametrize("ext", ["json", "npz"])
def test_written_entries_of_every_kind_still_round_trip(tmp_path, ext):
    t = Trace(
        metrics={"f": np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7976931348623157e308]),
                 "i": np.array([-(2**63), 2**63 - 1, 0, 1, 2, 3]), "u": np.array([0, 2**64 - 1] * 3, dtype=np.uint64),
                 "b": np.array([True, False] * 3), "h": np.array([65504, -65504, np.inf, 0, 1, 2], dtype=np.float16)},
        iteration=np.arange(6), wall_time=np.zeros(6),
    )
    back = Trace.load(t.save(tmp_path / f"t.{ext}"))
    for k, v in t.metrics.items():
        assert back[k].dtype == v.dtype
        np.testing.assert_array_equal(back[k], v)
        assert np.array_equal(np.signbit(back[k]), np.signbit(v)) or v.dtype.kind != "f"


@pytest.mark.parametrize(("name", "msg"), [
    # saved, then loaded back as the metric 'a': zip cuts member names at NUL
    ("a\x00b", r"metrics\['a\\x00b'\]: a name containing NUL cannot be stored in .npz"),
    # UnicodeEncodeError "surrogates not allowed", naming no metric
    ("x\udcff", r"metrics\['x\\udcff'\]: the name is not valid Unicode text"),
    # struct.error "ushort format requires 0 <= number <= 65535"
    ("a" * 70000, r"metrics\['aaaa.*: the name is too long for .npz \(70011 UTF-8 bytes"),
], ids=["nul", "surrogate", "70000-chars"])
def test_npz_refuses_a_metric_name_a_zip_cannot_hold(tmp_path, name, msg):
    path = tmp_path / "t.npz"
    Trace().save(path)
    before = path.read_bytes()
    t = Trace(metrics={name: np.zeros(1)}, iteration=np.arange(1), wall_time=np.zeros(1))
    with pytest.raises(ValueError, match=msg):
        t.save(path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["t.npz"]
    back = Trace.load(t.save(tmp_path / "t.json"))  # JSON holds the name as it is
    assert back.names == [name]


def test_npz_keeps_unicode_long_and_reserved_looking_names(tmp_path):
    names = ["ρ‖v−v*‖∞ 😀", "", "a/b", "__format__", "iteration", "metric/x", "a.npy", "b" * 60000]
    t = Trace(metrics={n: np.full(1, float(i)) for i, n in enumerate(names)},
              final={"wall_time": np.ones(2), "__format__": np.zeros(1)}, iteration=np.arange(1), wall_time=np.zeros(1))
    for ext in ("npz", "json"):
        back = Trace.load(t.save(tmp_path / f"t.{ext}"))
        assert back.names == sorted(names) and sorted(back.final) == ["__format__", "wall_time"]
        for i, n in enumerate(names):
            assert back[n].tolist() == [float(i)]


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def toy_cli(monkeypatch):
    from _platform_toy import ToyConfig

    from rltheory.bounds import Claim, check_bound
    from rltheory.experiments import Experiment, ExperimentResult, base
    from rltheory.plot import figure

    runs = []

    def run(config, *, seed=0, progress=False):
        runs.append(seed)
        return ExperimentResult("toy-out", {"n": config.n}, {}, [
            Claim("small", "x ≤ 1", "made up", None, "bound").check(check_bound([0.5], [1.0]))])

    monkeypatch.setitem(base._REGISTRY, "toy-out", Experiment("toy-out", "A passing toy", ToyConfig, run,
                                                              lambda r: figure()[0]))
    return runs


@pytest.mark.parametrize("extra", [[], ["--seeds", "0:2"]])
def test_reproduce_refuses_an_out_folder_it_cannot_write_before_running(tmp_path, capsys, monkeypatch, toy_cli, extra):
    # an existing folder that takes no files (read-only mount, no permission): the experiment
    # ran to the end, then write_atomic's FileNotFoundError/PermissionError escaped as a
    # traceback with status 1, the status of a failed claim
    import tempfile

    from rltheory.cli import main

    def refuse(*args, dir=None, **kwargs):
        if dir is not None and str(dir).startswith(str(tmp_path)):
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    real = tempfile.mkstemp
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert main(["reproduce", "toy-out", "--quiet", "--out", str(tmp_path), *extra]) == 2
    assert f"cannot write to --out {str(tmp_path)!r}: Permission denied" in capsys.readouterr().err
    assert toy_cli == []  # refused before any run
    assert list(tmp_path.iterdir()) == []


def test_reproduce_names_a_file_it_could_not_write(tmp_path, capsys, monkeypatch, toy_cli):
    # a write that fails after the folder test (disk full): a located message and status 2
    import os

    from rltheory.cli import main

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    for extra, name in (([], "toy-out.png"), (["--seeds", "0:2"], "toy-out.seeds.json")):
        assert main(["reproduce", "toy-out", "--quiet", "--out", str(tmp_path), *extra]) == 2
        assert f"cannot write {str(tmp_path / name)!r}: No space left on device" in capsys.readouterr().err
        assert list(tmp_path.iterdir()) == []  # no temporary file left


@pytest.mark.parametrize("failing", ["toy-out.json", "toy-out.png"])
def test_reproduce_replaces_the_png_and_json_together_or_not_at_all(tmp_path, capsys, monkeypatch, toy_cli, failing):
    # the PNG was renamed into place before the JSON was written: when the JSON could not be
    # written (no space for a new file), the folder held the new NAME.png next to the old NAME.json
    import tempfile

    from rltheory.cli import main

    (tmp_path / "toy-out.png").write_bytes(b"old png")
    (tmp_path / "toy-out.json").write_text("old json")

    def refuse(*args, prefix=None, **kwargs):
        if prefix == f".{failing}.":
            raise OSError(28, "No space left on device")
        return real(*args, prefix=prefix, **kwargs)

    real = tempfile.mkstemp
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert main(["reproduce", "toy-out", "--quiet", "--out", str(tmp_path)]) == 2
    assert f"cannot write {str(tmp_path / failing)!r}: No space left on device" in capsys.readouterr().err
    assert (tmp_path / "toy-out.png").read_bytes() == b"old png"
    assert (tmp_path / "toy-out.json").read_text() == "old json"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy-out.json", "toy-out.png"]  # no temporary files
    monkeypatch.setattr(tempfile, "mkstemp", real)
    assert main(["reproduce", "toy-out", "--quiet", "--out", str(tmp_path)]) == 0  # both replaced
    assert (tmp_path / "toy-out.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "toy-out.json").read_text())["pass"] is True


def test_a_result_that_cannot_be_written_as_json_writes_no_png(tmp_path, monkeypatch, toy_cli):
    # the PNG was written first; a result whose meta held a set then raised TypeError from
    # the JSON conversion, leaving a PNG with no JSON record
    from rltheory.cli import main
    from rltheory.experiments import base

    exp = base._REGISTRY["toy-out"]

    def run(config, *, seed=0, progress=False):
        r = exp.run(config, seed=seed, progress=progress)
        return base.ExperimentResult(r.name, r.config, r.curves, r.checks, meta={"sizes": {1, 2}})

    monkeypatch.setitem(base._REGISTRY, "toy-out", base.Experiment("toy-out", exp.title, exp.config_cls, run, exp.plot))
    with pytest.raises(TypeError, match="cannot convert set to JSON"):
        main(["reproduce", "toy-out", "--quiet", "--out", str(tmp_path)])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("tol", ["-1", "0", "nan", "inf", "abc"])
def test_solve_refuses_a_bad_tolerance_with_a_usage_error(capsys, tol):
    # --tol -1 / 0 / nan / inf reached value_iteration's ValueError as a traceback (status 1)
    from rltheory.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["solve", "gridworld", "--size", "3", "--tol", tol])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --tol: " in err and ("positive finite number" in err or "invalid float value" in err)


def test_solve_tolerance_still_reaches_the_solver(capsys):
    from rltheory.cli import main

    assert main(["solve", "gridworld", "--size", "3", "--method", "mpi", "--tol", "1e-3"]) == 0
    cert = float(capsys.readouterr().out.split("||V* - V^pi||_inf <= ")[1].split()[0])
    assert 0 <= cert <= 1e-3


# --------------------------------------------------------------------------- sweep


_ALL_STARTED = threading.Barrier(4)  # the four points of the test below, on four threads


def _set_at_zero(config, seed):
    """A set (not JSON) at x = 0 once every point has started; the other points finish later.

    The barrier makes the test deterministic: a point still queued when x = 0 fails is cancelled
    (by design), and under load a thread could pick its point up only after that (it failed once
    in a loaded full run)."""
    import time

    _ALL_STARTED.wait(timeout=60)
    if config["x"] == 0:
        return {1, 2}
    time.sleep(0.2)
    return config["x"] + seed


def test_a_result_that_is_not_json_keeps_the_points_that_finish(tmp_path):
    # the ValueError was raised from inside the collection loop: points 1, 2, 3, still
    # running, finished unrecorded (the results file kept only its header), so a rerun
    # recomputed them; fn's own exceptions already let running points finish and be written
    from concurrent.futures import ThreadPoolExecutor

    from rltheory.experiments.sweep import load_results, sweep

    path = tmp_path / "r.jsonl"
    with ThreadPoolExecutor(4) as ex, pytest.raises(ValueError, match=r"config \{'x': 0\}, seed 5 is not JSON-serialisable"):
        sweep(_set_at_zero, {"x": [0, 1, 2, 3]}, [5], executor=ex, results_path=path)
    done = load_results(path, fn=_set_at_zero)
    assert sorted((p.config["x"], p.result) for p in done.values()) == [(1, 6), (2, 7), (3, 8)]


# --------------------------------------------------------------------------- claims


@pytest.mark.parametrize("verdict", [float("nan"), np.float64("nan"), "no", 1, np.array([True, False])])
def test_a_verdict_that_is_not_a_bool_is_refused(verdict):
    # bool(nan) and bool("no") are True: a BoundCheck with holds=nan (experiments build them
    # directly, e.g. marlhf-coverage) passed its claim, and so did ClaimCheck(..., passed=nan)
    import math

    from rltheory.bounds.rates import BoundCheck, Claim, ClaimCheck, check_bound

    claim = Claim("b", "x ≤ 1", "made up", None, "bound")
    with pytest.raises(TypeError, match=r"BoundCheck.holds must be a bool; got"):
        BoundCheck(worst_ratio=math.nan, holds=verdict, argmax=(0,), n=1)
    with pytest.raises(TypeError, match=r"ClaimCheck for 'b': passed must be None or a bool; got"):
        ClaimCheck(claim, check_bound([2.0], [1.0]), passed=verdict)


def test_bool_verdicts_are_kept():
    from rltheory.bounds.rates import BoundCheck, Claim, ClaimCheck, check_bound

    claim = Claim("b", "x ≤ 1", "made up", None, "bound")
    bc = BoundCheck(worst_ratio=0.5, holds=np.bool_(True), argmax=(0,), n=1)
    assert bc.holds is True and claim.check(bc).passed is True
    assert ClaimCheck(claim, check_bound([2.0], [1.0]), passed=np.bool_(True)).passed is True
    assert ClaimCheck(claim, check_bound([0.5], [1.0]), passed=False).passed is False
    assert claim.check(check_bound([2.0], [1.0])).passed is False


@pytest.mark.parametrize(("measured", "bound", "msg"), [
    # OverflowError 'int too large to convert to float', naming neither argument nor entry
    ([10**400], [1.0], r"measured must be finite; measured\[0\] = 1000.* is beyond the float range"),
    ([[1.0, 0.5]], [[1.0, -(10**400)]], r"bound must be finite; bound\[0, 1\] = -1000.* is beyond the float range"),
])
def test_check_bound_locates_an_integer_beyond_the_float_range(measured, bound, msg):
    from rltheory.bounds.rates import check_bound

    with pytest.raises(ValueError, match=msg):
        check_bound(measured, bound)


@pytest.mark.parametrize("kwargs", [{"rtol": True}, {"atol": True}, {"rtol": "0.1"}, {"atol": 10**400}])
def test_check_bound_tolerances_are_real_numbers(kwargs):
    # rtol=True was read as a 100% allowance (2 <= 1 + 1·1 held); rtol='0.1' raised
    # "'<=' not supported between instances of 'float' and 'str'"; atol 10**400 an OverflowError
    from rltheory.bounds.rates import check_bound

    with pytest.raises(ValueError, match=r"rtol and atol must be finite and non-negative; got rtol="):
        check_bound([2.0], [1.0], **kwargs)
    c = check_bound([2.0], [1.0], rtol=np.float32(1.0), atol=np.int64(0))  # numpy scalars are numbers
    assert c.holds and c.rtol == 1.0 and type(c.rtol) is float


# --------------------------------------------------------------------------- plot


@pytest.mark.parametrize(("policy", "exc", "msg"), [
    # 1.7 was cut to action 1 and drawn; NaN became -2^63 and uint64 2^64-1 became -1 in the message
    (np.array([1.7, 0, 0, 0]), ValueError, r"policy\[0\] = 1.7 is not an action index in 0..1"),
    (np.array([0, np.nan, 0, 0]), ValueError, r"policy\[1\] = nan is not an action index in 0..1"),
    (np.array([0, 0, 2**64 - 1, 0], dtype=np.uint64), ValueError,
     r"policy\[2\] = 18446744073709551615 is not an action index in 0..1"),
    # text '1' and booleans were cast to action indices and drawn
    (np.array(["1", "0", "0", "0"]), TypeError, r"policy must hold integer action indices; got dtype <U1"),
    (np.array([True, False, True, False]), TypeError, r"policy must hold integer action indices; got dtype bool"),
])
def test_value_heatmap_refuses_policies_that_are_not_action_indices(policy, exc, msg):
    from rltheory.plot import figure, value_heatmap

    fig, axes = figure()
    with pytest.raises(exc, match=msg):
        value_heatmap(axes[0, 0], np.arange(4.0), (2, 2), policy=policy, moves=[(0, 1), (1, 0)])
    # integer-valued floats (a policy stored as float) are indices
    value_heatmap(axes[0, 0], np.arange(4.0), (2, 2), policy=np.array([1.0, 0, 1, 0]), moves=[(0, 1), (1, 0)])


# --------------------------------------------------------------------------- rate fits


@pytest.mark.parametrize(("kwargs", "exc", "msg"), [
    # text was parsed: fit_rate([1, 2, 4], ['1', '0.5', '0.25']) returned slope -1
    ({"err": ["1", "0.5", "0.25"]}, TypeError, r"err must hold real numbers; got an array of dtype <U4"),
    ({"t": ["1", "2", "4"]}, TypeError, r"t must hold real numbers; got an array of dtype <U1"),
    # booleans were read as 1.0: a constant series, slope 0
    ({"err": [True, True, True]}, TypeError, r"err must hold real numbers; got an array of dtype bool"),
    # "float() argument must be ... not 'complex'" / "int too large to convert to float"
    ({"err": [1 + 0j, 0.5, 0.25]}, TypeError, r"err must hold real numbers; got an array of dtype complex128"),
    ({"err": [[1, 0.5, 0.25], [1, 0.5, 10**400]]}, ValueError, r"err must be finite; err\[1, 2\] = 1000.* is beyond the float range"),
    # numpy's "expected non-negative integer"; seed=True was seed 1
    ({"seed": -1}, ValueError, r"seed must be an integer >= 0 or a numpy.random.Generator; got -1"),
    ({"seed": True}, ValueError, r"seed must be an integer >= 0 or a numpy.random.Generator; got True"),
    ({"seed": 1.5}, ValueError, r"seed must be an integer >= 0 or a numpy.random.Generator; got 1.5"),
    # "cannot unpack non-iterable int object", "too many values to unpack", "'<=' not supported"
    ({"window": 3}, ValueError, r"window must be a pair \(t_lo, t_hi\) of numbers; got 3"),
    ({"window": (1, 2, 3)}, ValueError, r"window must be a pair \(t_lo, t_hi\) of numbers; got \(1, 2, 3\)"),
    ({"window": (1, "a")}, ValueError, r"window must satisfy t_lo <= t_hi; got \(1, 'a'\)"),
    ({"level": "0.9"}, ValueError, r"level must lie in \(0, 1\); got '0.9'"),
])
def test_fit_arguments_that_are_not_real_numbers_are_refused(kwargs, exc, msg):
    from rltheory.bounds.rates import fit_rate

    args = {"t": [1, 2, 4], "err": [1.0, 0.5, 0.3]} | kwargs
    with pytest.raises(exc, match=msg):
        fit_rate(args.pop("t"), args.pop("err"), **args)


def test_fit_still_takes_numpy_scalars_generators_and_float32():
    from rltheory.bounds.rates import fit_linear_rate, fit_rate

    t, e = np.array([1, 2, 4]), np.array([1.0, 0.5, 0.3])
    ref = fit_rate(t, e, seed=3)
    assert fit_rate(t, e, seed=np.int64(3)).ci == ref.ci
    assert fit_rate(t, e, seed=np.random.default_rng(3), window=np.array([1, 4])).ci == ref.ci
    k = np.arange(20, dtype=np.float32)
    fit = fit_linear_rate(k, (0.5 ** k).astype(np.float32), level=np.float32(0.9))
    assert abs(fit.rate - 0.5) <= 4 * np.finfo(float).eps and fit.contains(0.5)  # exact data: the rate to round-off


def test_a_geometric_fit_that_overflows_raises_instead_of_returning_nan():
    # t = 1e308, 1.5e308, 1.7e308: the mean of t overflowed and fit_linear_rate returned slope,
    # ci and slope_ci all NaN without a word (the run-wise fit too)
    import warnings

    from rltheory.bounds.rates import fit_linear_rate

    t = [1e308, 1.5e308, 1.7e308]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for err in ([1.0, 0.5, 0.25], [[1.0, 0.5, 0.25], [1.0, 0.5, 0.2]]):
            with pytest.raises(ValueError, match=r"the least-squares fit overflows float64: t spans \[1e\+308, 1.7e\+308\]"):
                fit_linear_rate(t, err)


@pytest.mark.parametrize(("value", "why"), [
    ("1.5", r"it holds text/bytes \(dtype <U3\), not numbers"),  # was recorded as 1.5
    (np.array(["1", "2"]), r"it holds text/bytes \(dtype <U1\), not numbers"),  # was [1.0, 2.0]
    (b"1", r"it holds text/bytes \(dtype \|S1\), not numbers"),
    (10**400, r"int too large to convert to float"),  # a bare OverflowError, naming no metric
])
def test_recorder_refuses_text_and_integers_past_the_float_range(value, why):
    from rltheory.trace import TraceRecorder

    rec = TraceRecorder()
    rec.record(0, err=0.5)
    with pytest.raises(ValueError, match=rf"TraceRecorder.record: metric 'err' at iteration 1 must be a real number or array; got .*\({why}\)"):
        rec.record(1, err=value)
    assert rec.finish()["err"].tolist() == [0.5]  # the refused record left nothing behind


def test_a_json_trace_that_names_a_metric_twice_is_refused(tmp_path):
    # json.loads kept the last of two "m" entries: a merged or corrupt file silently lost a metric
    text = ('{"format": "rltheory.trace", "version": 1, '
            '"iteration": {"dtype": "<i8", "shape": [1], "data": [0]}, '
            '"wall_time": {"dtype": "<f8", "shape": [1], "data": [0.0]}, '
            '"metrics": {"m": {"dtype": "<f8", "shape": [1], "data": [1.0]}, '
            '"m": {"dtype": "<f8", "shape": [1], "data": [2.0]}}, "final": {}}')
    p = tmp_path / "t.json"
    p.write_text(text)
    with pytest.raises(ResultFileError, match=rf"{p.name}: the key 'm' appears twice in one JSON object"):
        Trace.load(p)
    p.write_text(text.replace('"m": {"dtype": "<f8", "shape": [1], "data": [2.0]}', '"n": {"dtype": "<f8", "shape": [1], "data": [2.0]}'))
    assert Trace.load(p).names == ["m", "n"]


def _scaled(config, seed, *, k):
    return k * config["x"] + seed


def test_two_partials_of_one_function_do_not_share_a_results_file(tmp_path):
    # the header named only the partial's function: a rerun with partial(_scaled, k=3) on the
    # results of partial(_scaled, k=2) returned the k=2 numbers as cached, without a word
    import functools
    from concurrent.futures import ThreadPoolExecutor

    from rltheory.experiments.sweep import sweep
    from rltheory.trace import ResultFileError

    path = tmp_path / "r.jsonl"
    with ThreadPoolExecutor(2) as ex:
        first = sweep(functools.partial(_scaled, k=2), {"x": [1, 2]}, [0], executor=ex, results_path=path)
        assert [p.result for p in first] == [2, 4]
        with pytest.raises(ResultFileError, match=r"results belong to .*_scaled with .*\"k\":2.*, not .*_scaled with .*\"k\":3"):
            sweep(functools.partial(_scaled, k=3), {"x": [1, 2]}, [0], executor=ex, results_path=path)
        again = sweep(functools.partial(_scaled, k=2), {"x": [1, 2]}, [0], executor=ex, results_path=path)
        assert [(p.result, p.cached) for p in again] == [(2, True), (4, True)]  # the same partial resumes


def test_reproduce_writes_no_png_when_a_folder_has_the_json_name(tmp_path, capsys, toy_cli):
    # the PNG was renamed into place, then os.replace onto the folder NAME.json failed: a new
    # NAME.png with no record
    from rltheory.cli import main

    (tmp_path / "toy-out.json").mkdir()
    assert main(["reproduce", "toy-out", "--quiet", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {str(tmp_path / 'toy-out.json')!r}: a folder has that name" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy-out.json"]
