"""TraceRecorder.record checks its iteration before keeping anything of the record."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rltheory.trace import Trace, TraceRecorder


@pytest.mark.parametrize(
    ("iteration", "exc", "message"),
    [
        ("x", TypeError, "iteration must be an integer; got 'x' (str)"),
        (None, TypeError, "iteration must be an integer; got None (NoneType)"),
        (1.7, TypeError, "iteration must be an integer; got 1.7 (float)"),
        (np.float64(2.0), TypeError, "iteration must be an integer; got np.float64(2.0) (float64)"),
        (True, TypeError, "iteration must be an integer; got True (bool)"),
        (2**63, ValueError, "iteration must lie in the int64 range; got 9223372036854775808"),
    ],
)
def test_a_bad_iteration_is_refused_and_the_record_is_not_kept(tmp_path, iteration, exc, message):
    # the metric rows were appended before int(iteration) ran: 'x' raised a bare ValueError
    # and left a row with no iteration (the trace then had 2 rows of 'a' for 1 iteration and
    # save() refused it); 1.7 and True were recorded as iterations 1 and 1; 2**63 raised
    # OverflowError in finish()
    rec = TraceRecorder()
    rec.record(0, a=1.0)
    with pytest.raises(exc, match=re.escape(message)):
        rec.record(iteration, a=2.0)
    rec.record(np.int32(1), a=3.0)  # numpy integers are integers
    t = rec.finish()
    assert t.iteration.tolist() == [0, 1] and t.iteration.dtype == np.int64
    assert t["a"].tolist() == [1.0, 3.0]
    back = Trace.load(t.save(tmp_path / "t.json"))
    assert back.iteration.tolist() == [0, 1] and back["a"].tolist() == [1.0, 3.0]


@pytest.mark.parametrize(
    ("metrics", "final", "where"),
    [
        ({1: np.ones(1)}, {}, "metrics[1]: names must be strings; got int"),
        ({1: np.ones(1), "1": np.zeros(1)}, {}, "metrics[1]: names must be strings; got int"),
        ({"a": np.ones(1)}, {None: np.ones(2)}, "final[None]: names must be strings; got NoneType"),
    ],
)
def test_json_refuses_a_name_that_is_not_a_string_as_npz_does(tmp_path, metrics, final, where):
    # JSON turned the name 1 into "1" and None into "null" without a word, and wrote 1 next
    # to "1" as one key twice, a file that Trace.load refuses ('the key '1' appears twice');
    # .npz already refused such names
    t = Trace(metrics=metrics, iteration=np.arange(1), wall_time=np.zeros(1), final=final)
    for ext in ("json", "npz"):
        with pytest.raises(TypeError, match=re.escape(where)):
            t.save(tmp_path / f"t.{ext}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("iteration", "wall_time", "message"),
    [
        (np.array([0.5]), np.zeros(1), "iteration[0] = 0.5 is not an int64 iteration index"),
        (
            np.array([0.0, np.nan]),
            np.zeros(2),
            "iteration[1] = nan is not an int64 iteration index",
        ),
        (np.array([True]), np.zeros(1), "iteration must hold integers; got dtype bool"),
        (
            np.array([2**64 - 1], dtype=np.uint64),
            np.zeros(1),
            "iteration[0] = 18446744073709551615 is not an int64 iteration index",
        ),
    ],
)
def test_save_refuses_iterations_that_load_would_refuse(tmp_path, iteration, wall_time, message):
    # these traces were written, and Trace.load then raised ResultFileError on its own file
    t = Trace(iteration=iteration, wall_time=wall_time)
    for ext in ("json", "npz"):
        with pytest.raises(ValueError, match=re.escape(message) + "; nothing written"):
            t.save(tmp_path / f"t.{ext}")
    assert list(tmp_path.iterdir()) == []
    # integral float iterations and integer wall times load
    ok = Trace(iteration=np.array([0.0, 3.0]), wall_time=np.array([0, 1], dtype=np.int32))
    for ext in ("json", "npz"):
        back = Trace.load(ok.save(tmp_path / f"ok.{ext}"))
        assert back.iteration.tolist() == [0, 3] and back.wall_time.tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    ("wall_time", "dtype"),
    [(np.array([1.0 + 2.0j, 2.0]), "complex128"), (np.array(["a", "b"]), "<U1")],
)
def test_save_refuses_a_wall_time_that_is_not_real(tmp_path, wall_time, dtype):
    # .npz wrote it: text made Trace.load fail on its own file, complex loaded with the
    # imaginary part dropped (ComplexWarning); .json refused it in the array encoder
    t = Trace(iteration=np.arange(2), wall_time=wall_time)
    message = f"wall_time must hold real numbers; got dtype {dtype}; nothing written"
    for ext in ("json", "npz"):
        with pytest.raises(TypeError, match=re.escape(message)):
            t.save(tmp_path / f"t.{ext}")
    assert list(tmp_path.iterdir()) == []


def test_a_trace_built_from_lists_saves_and_loads(tmp_path):
    # Trace(metrics={"a": [1.0, 2.0]}, iteration=[0, 1], ...) was kept with lists: len() and
    # save() failed with AttributeError "'list' object has no attribute 'ndim'"
    t = Trace(
        metrics={"a": [1.0, 2.0]}, iteration=[0, 1], wall_time=(0.0, 0.5), final={"x": [1, 2]}
    )
    assert len(t) == 2 and t["a"].tolist() == [1.0, 2.0]
    for ext in ("json", "npz"):
        back = Trace.load(t.save(tmp_path / f"t.{ext}"))
        assert back.iteration.tolist() == [0, 1] and back.wall_time.tolist() == [0.0, 0.5]
        assert back["a"].tolist() == [1.0, 2.0] and back.final["x"].tolist() == [1, 2]
    with pytest.raises(ValueError, match=re.escape("Trace metrics['a']: not an array (")):
        Trace(metrics={"a": [[1.0, 2.0], [3.0]]}, iteration=[0, 1], wall_time=[0.0, 0.5])


@pytest.mark.parametrize(
    ("data", "kind"),
    [(5, "int"), ([104, 105], "list"), (np.float64(1.5), "float64"), (None, "NoneType")],
)
def test_write_atomic_takes_only_bytes_or_text(tmp_path, data, kind):
    # bytes(data) turned 5 into five NUL bytes, [104, 105] into b"hi" and a float64 into its
    # 8 raw bytes, and wrote them
    from rltheory.trace import write_atomic

    with pytest.raises(
        TypeError, match=re.escape(f"write_atomic: data must be bytes or str; got {kind}")
    ):
        write_atomic(tmp_path / "f.bin", data)
    assert list(tmp_path.iterdir()) == []
    assert write_atomic(tmp_path / "g.txt", "é").read_bytes() == "é".encode()
    assert write_atomic(tmp_path / "h.bin", bytearray(b"\x00\x01")).read_bytes() == b"\x00\x01"
