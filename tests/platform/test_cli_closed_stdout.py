"""The `rltheory` command when its standard output is closed early (`rltheory list | head -1`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rltheory.cli import EXIT_BROKEN_PIPE


@pytest.mark.parametrize("argv", [["list"], ["solve", "gridworld", "--size", "3"]])
def test_a_closed_stdout_stops_quietly_with_status_141(argv):
    # the reader is gone before the first line is written: print() raised BrokenPipeError,
    # which escaped as a traceback with status 1 (the status of a failed claim), followed by
    # "Exception ignored ... BrokenPipeError" when Python flushed stdout at exit
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "rltheory.cli", *argv],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert proc.returncode == EXIT_BROKEN_PIPE == 141
    assert proc.stderr == ""
