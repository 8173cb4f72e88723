"""Trace persistence and recording outside the hypothesis ranges: files that load() would
reject are never written, overflowing numbers in a file, rows that change shape."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rltheory.trace import ResultFileError, Trace, TraceRecorder


def _good() -> Trace:
    return Trace(metrics={"err": np.array([1.0, np.nan, np.inf])}, iteration=np.arange(3), wall_time=np.zeros(3))


@pytest.mark.parametrize("ext", ["json", "npz"])
@pytest.mark.parametrize(
    ("bad", "msg"),
    [
        # a 0-d metric: save() wrote it, load() then said "metric 'a' has shape ()"
        (Trace(metrics={"a": np.array(1.0)}, iteration=np.arange(1), wall_time=np.zeros(1)),
         r"metric 'a' has shape \(\); its first axis must have length 1; nothing written"),
        (Trace(metrics={"a": np.zeros(3)}, iteration=np.arange(2), wall_time=np.zeros(2)),
         r"metric 'a' has shape \(3,\); its first axis must have length 2; nothing written"),
        (Trace(iteration=np.arange(2), wall_time=np.zeros(3)),
         r"iteration and wall_time must be 1-D of equal length; got \(2,\) and \(3,\); nothing written"),
    ],
)
def test_save_refuses_a_trace_that_load_would_reject(tmp_path, ext, bad, msg):
    path = tmp_path / f"t.{ext}"
    _good().save(path)
    before = path.read_bytes()
    with pytest.raises(ValueError, match=msg):
        bad.save(path)
    assert path.read_bytes() == before  # the previous file is kept
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"t.{ext}"]


def test_npz_refuses_object_arrays_instead_of_pickling_them(tmp_path):
    # np.savez pickled the object array; Trace.load (allow_pickle=False) then called rltheory's
    # own file "corrupt, truncated or foreign"
    t = Trace(final={"policy": np.array([None, 1], dtype=object)})
    with pytest.raises(TypeError, match=r"final\['policy'\]: object arrays cannot be saved .*got dtype object"):
        t.save(tmp_path / "t.npz")
    assert list(tmp_path.iterdir()) == []
    # what the .npz format can hold without pickle still round-trips
    t = Trace(final={"z": np.array([1 + 2j]), "s": np.array(["a", "bc"])})
    back = Trace.load(t.save(tmp_path / "ok.npz"))
    np.testing.assert_array_equal(back.final["z"], t.final["z"])
    np.testing.assert_array_equal(back.final["s"], t.final["s"])


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="longdouble is float64 here")
def test_json_names_a_float_wider_than_float64(tmp_path):
    # was json's "Object of type longdouble is not JSON serializable", naming no array
    t = Trace(final={"V": np.array([0.1], dtype=np.longdouble)})
    with pytest.raises(TypeError, match=r"final\['V'\]: dtype float\d+ has no JSON form without rounding"):
        t.save(tmp_path / "t.json")
    assert list(tmp_path.iterdir()) == []
    back = Trace.load(t.save(tmp_path / "t.npz"))  # exact in .npz
    assert back.final["V"].dtype == np.longdouble and back.final["V"][0] == t.final["V"][0]


@pytest.mark.parametrize("entry", ["1e400", "99999999999999999999999"])
def test_overflowing_numbers_in_a_file_raise_result_file_error(tmp_path, entry):
    # an int64 array holding 1e400 (inf) or 10^23 escaped as a bare OverflowError
    d = _good().to_dict()
    text = json.dumps(d).replace('"iteration": {"dtype": "<i8", "shape": [3], "data": [0, 1, 2]}',
                                 f'"iteration": {{"dtype": "<i8", "shape": [3], "data": [0, 1, {entry}]}}')
    assert entry in text
    p = tmp_path / "t.json"
    p.write_text(text)
    with pytest.raises(ResultFileError, match=rf"{p.name}: .*(infinity|too large)"):
        Trace.load(p)


def test_recorder_locates_a_metric_that_changes_shape_or_is_not_real():
    rec = TraceRecorder()
    rec.record(0, err=np.zeros(2), gap=1.0)
    # np.stack in finish() said only "all input arrays must have the same shape"
    with pytest.raises(ValueError, match=r"metric 'err' has shape \(3,\) at iteration 1 but \(2,\) at the first record \(iteration 0\)"):
        rec.record(1, err=np.zeros(3), gap=0.5)
    # a complex value lost its imaginary part with only a ComplexWarning
    with pytest.raises(ValueError, match=r"metric 'gap' at iteration 1 must be a real number or array; .*imaginary part is not 0"):
        rec.record(1, err=np.zeros(2), gap=np.complex128(0.5 + 1e-3j))
    with pytest.raises(ValueError, match=r"metric 'gap' at iteration 2 must be a real number or array; got 'x'"):
        rec.record(2, err=np.zeros(2), gap="x")
    rec.record(1, err=np.ones(2), gap=np.complex128(0.25))  # a real value stored as complex is kept
    t = rec.finish()  # the rejected records left nothing behind
    np.testing.assert_array_equal(t.iteration, [0, 1])
    np.testing.assert_array_equal(t["err"], [[0.0, 0.0], [1.0, 1.0]])
    np.testing.assert_array_equal(t["gap"], [1.0, 0.25])
