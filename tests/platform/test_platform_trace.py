"""rltheory.trace: Trace persistence (JSON/.npz, atomic, located errors) and TraceRecorder."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rltheory.trace as trace_mod
from rltheory.mdp import gridworld, value_iteration
from rltheory.trace import ResultFileError, Trace, TraceRecorder, write_atomic

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


@st.composite
def traces(draw):
    K = draw(st.integers(0, 6))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    names = draw(st.lists(st.text("abcxyz_", min_size=1, max_size=6), max_size=3, unique=True))
    metrics = {n: draw(hnp.arrays(np.float64, (K,) + batch, elements=floats)) for n in names}
    final = {}
    if draw(st.booleans()):
        final["policy"] = draw(hnp.arrays(np.int64, (4,), elements=st.integers(0, 3)))
        final["mask"] = draw(hnp.arrays(np.bool_, (2, 2)))
    return Trace(
        metrics=metrics,
        iteration=np.arange(K, dtype=np.int64),
        wall_time=draw(hnp.arrays(np.float64, (K,), elements=st.floats(0, 1e3))),
        final=final,
    )


def _same(a: Trace, b: Trace) -> None:
    assert a.names == b.names and sorted(a.final) == sorted(b.final)
    np.testing.assert_array_equal(a.iteration, b.iteration)
    np.testing.assert_array_equal(a.wall_time, b.wall_time)
    for k in a.metrics:
        assert a.metrics[k].dtype == b.metrics[k].dtype
        np.testing.assert_array_equal(a.metrics[k], b.metrics[k])  # NaN == NaN here
    for k in a.final:
        assert a.final[k].dtype == b.final[k].dtype
        np.testing.assert_array_equal(a.final[k], b.final[k])


@settings(max_examples=25)
@given(t=traces(), ext=st.sampled_from(["json", "npz"]))
def test_save_load_roundtrip_is_exact(tmp_path_factory, t, ext):
    path = tmp_path_factory.mktemp("tr") / f"trace.{ext}"
    assert t.save(path) == path
    _same(t, Trace.load(path))
    if ext == "json":  # strict JSON: no NaN/Infinity tokens
        json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"non-standard token {c}"))


def test_solver_trace_roundtrip_and_recorder_final(tmp_path):
    res = value_iteration(gridworld(4, slip=0.1, gamma=0.9).mdp, tol=1e-6)
    for ext in ("json", "npz"):
        res.trace.save(tmp_path / f"vi.{ext}")
        _same(res.trace, Trace.load(tmp_path / f"vi.{ext}"))
    rec = TraceRecorder()
    rec.record(1, err=0.5)
    rec.record(2, err=0.25)
    t = rec.finish(policy=np.array([1, 0]), V=np.array([1.0, 2.0]))
    np.testing.assert_array_equal(t["err"], [0.5, 0.25])
    np.testing.assert_array_equal(t.iteration, [1, 2])
    assert t.final["policy"].dtype.kind == "i" and len(t) == 2 and "err" in t
    with pytest.raises(ValueError, match="differ from the first record"):
        rec.record(3, other=1.0)
    with pytest.raises(KeyError, match="no metric 'nope'"):
        t["nope"]


def test_recorder_gives_host_traces_under_every_backend(xp):
    # Device rows (cupy) stay on the device until finish (one transfer per metric, wall
    # times from CUDA events); every backend gives the same host trace.
    rows = [np.array([1.0, -2.0, 0.5]) * 0.5**k for k in range(6)]
    rec = TraceRecorder()
    for k, r in enumerate(rows):
        rec.record(k, err=xp.asarray(r), worst=xp.max(xp.asarray(r)), step=float(k))
    t = rec.finish(V=xp.asarray(rows[-1]))
    for name in ("err", "worst", "step"):
        assert type(t[name]) is np.ndarray and t[name].dtype == np.float64
    np.testing.assert_array_equal(t["err"], np.stack(rows))
    np.testing.assert_array_equal(t["worst"], [r.max() for r in rows])
    np.testing.assert_array_equal(t["step"], np.arange(6.0))
    np.testing.assert_array_equal(t.final["V"], rows[-1])
    assert t.wall_time.shape == (6,) and t.wall_time[0] >= 0 and np.all(np.diff(t.wall_time) >= 0)


def _saved(tmp_path, ext: str) -> tuple[Trace, bytes]:
    rec = TraceRecorder()
    for k in range(20):
        rec.record(k, err=0.9**k)
    t = rec.finish(V=np.arange(3.0))
    p = tmp_path / f"good.{ext}"
    t.save(p)
    return t, p.read_bytes()


@pytest.mark.parametrize("ext", ["json", "npz"])
def test_truncated_and_corrupt_files_raise_located_errors(tmp_path, ext):
    _, raw = _saved(tmp_path, ext)
    bad = tmp_path / f"bad.{ext}"
    for cut in (1, len(raw) // 3, len(raw) // 2, len(raw) - 1):
        bad.write_bytes(raw[:cut])
        with pytest.raises(ResultFileError, match=str(bad.name)):
            Trace.load(bad)
    flipped = bytearray(raw)
    mid = len(flipped) // 2
    flipped[mid : mid + 16] = b"\x00" * 16
    bad.write_bytes(bytes(flipped))
    with pytest.raises(ResultFileError, match="corrupt"):
        Trace.load(bad)
    bad.write_bytes(b"")
    with pytest.raises(ResultFileError, match="empty file"):
        Trace.load(bad)


def test_foreign_files_raise(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"a": 1}')
    with pytest.raises(ResultFileError, match="not an rltheory trace"):
        Trace.load(p)
    p.write_text(json.dumps({"format": "rltheory.trace", "version": 99}))
    with pytest.raises(ResultFileError, match="unsupported trace version 99"):
        Trace.load(p)
    d = Trace(metrics={"e": np.ones(3)}, iteration=np.arange(3), wall_time=np.zeros(3)).to_dict()
    d["metrics"]["e"]["shape"] = [2]
    p.write_text(json.dumps(d))
    with pytest.raises(ResultFileError, match="3 entries, shape"):
        Trace.load(p)
    q = tmp_path / "y.npz"
    np.savez(q, x=np.ones(2))
    with pytest.raises(ResultFileError, match="no __format__"):
        Trace.load(q)
    # an object array would need pickle: refused, never unpickled
    np.savez(q, __format__=np.asarray("rltheory.trace/1"), iteration=np.arange(1),
             wall_time=np.zeros(1), **{"metric/e": np.array([object()], dtype=object)})
    with pytest.raises(ResultFileError, match="pickle"):
        Trace.load(q)
    r = tmp_path / "z.bin"
    r.write_bytes(b"\x89PNG\r\n\x1a\n....")
    with pytest.raises(ResultFileError, match="neither"):
        Trace.load(r)
    with pytest.raises(ValueError, match=r"\.json or \.npz"):
        Trace().save(tmp_path / "t.pkl")


def test_interrupted_write_keeps_previous_file(tmp_path, monkeypatch):
    t, raw = _saved(tmp_path, "json")
    target = tmp_path / "good.json"

    def boom(src, dst):
        raise KeyboardInterrupt  # the process is interrupted between writing and renaming

    monkeypatch.setattr(trace_mod.os, "replace", boom)
    longer = Trace(metrics={"err": np.ones(50)}, iteration=np.arange(50), wall_time=np.zeros(50))
    with pytest.raises(KeyboardInterrupt):
        longer.save(target)
    assert target.read_bytes() == raw  # old content intact
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # temp removed
    monkeypatch.undo()
    write_atomic(target, "new")
    assert target.read_text() == "new"
    mask = os.umask(0)
    os.umask(mask)
    assert os.stat(target).st_mode & 0o777 == 0o666 & ~mask  # usual permissions, not mkstemp's 0600
