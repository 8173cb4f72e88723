"""Atomic writes also sync the folder, so the rename survives a power loss.

``write_atomic`` fsynced the temporary file and renamed it onto the target, but never fsynced
the folder: on POSIX file systems the new directory entry is durable only then, so after a
power loss the old file could reappear (reported by helper-47). ``rltheory reproduce``'s paired
PNG/JSON write had the same gap.
"""

import os
from pathlib import Path

from rltheory import trace


def test_write_atomic_fsyncs_the_folder_after_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(
            (
                "fsync",
                os.path.isdir(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else None,
            )
        )
        return real_fsync(fd)

    def replace(a, b):
        events.append(("replace", None))
        return real_replace(a, b)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    out = trace.write_atomic(tmp_path / "x.json", "{}")
    assert out.read_text() == "{}"
    kinds = [e[0] for e in events]
    assert kinds == ["fsync", "replace", "fsync"]  # the file, the rename, then the folder
    if events[2][1] is not None:
        assert events[2][1] is True and events[0][1] is False


def test_a_folder_that_cannot_be_synced_does_not_fail_the_write(tmp_path, monkeypatch):
    real_fsync = os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:  # the folder
            raise OSError(22, "Invalid argument")
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert trace.write_atomic(tmp_path / "y.txt", "ok").read_text() == "ok"
    assert Path(tmp_path / "y.txt").exists() and len(calls) == 2
