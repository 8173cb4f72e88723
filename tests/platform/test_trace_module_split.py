"""rltheory.trace is split by concept below STYLE's ~500 lines, and the moved names are the same objects.

Atomic writes live in ``rltheory._atomic_write`` and the JSON/.npz array codec in
``rltheory._trace_codec``; ``rltheory.trace`` re-exports ``write_atomic`` (public) and the staging
helpers the CLI imports from it. Moved, not copied: each name has one definition.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import rltheory
from rltheory import _atomic_write, _trace_codec, cli, trace


def test_trace_is_below_the_module_size_limit():
    for mod in (trace, _atomic_write, _trace_codec):
        n = len(Path(mod.__file__).read_text(encoding="utf-8").splitlines())
        assert n < 500, (mod.__name__, n)


def test_the_moved_names_are_importable_from_trace_and_defined_once():
    for name in ("write_atomic", "_stage", "_discard", "_sync_directory"):
        assert getattr(trace, name) is getattr(_atomic_write, name)
        assert getattr(trace, name).__module__ == "rltheory._atomic_write"
    for name in ("_encode_array", "_decode_array", "_unique_keys", "_check_npz_name"):
        assert getattr(trace, name) is getattr(_trace_codec, name)
    assert set(trace.__all__) == {"Trace", "TraceRecorder", "ResultFileError", "write_atomic"}
    src = Path(trace.__file__).read_text(encoding="utf-8")
    assert "def write_atomic" not in src and "def _decode_array" not in src
    # the CLI's paired writes still stage through the trace module's names
    assert "from .trace import _discard, _stage, _sync_directory" in inspect.getsource(cli)
    assert rltheory.trace.ResultFileError.__module__ == "rltheory.trace"
