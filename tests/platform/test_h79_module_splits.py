"""rltheory.cli and rltheory.experiments.sweep are split by concept below STYLE's ~500 lines; the
moved names stay importable from the old modules, are the same objects, and have one definition.

``rltheory solve`` lives in ``rltheory._cli_solve`` (cli.py was 502 lines); the naming of a sweep's
function lives in ``rltheory.experiments._sweep_names``.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from rltheory import _cli_solve, cli
from rltheory.experiments import _sweep_json, _sweep_names

# the package re-exports the function sweep under the module's name
sweep = importlib.import_module("rltheory.experiments.sweep")


def _lines(mod) -> int:
    return len(Path(mod.__file__).read_text(encoding="utf-8").splitlines())


def test_the_modules_are_below_the_size_limit():
    for mod in (cli, _cli_solve, sweep, _sweep_names, _sweep_json):
        assert _lines(mod) < 500, (mod.__name__, _lines(mod))


def test_the_moved_names_are_the_same_objects_and_defined_once():
    for name in ("SOLVE_MAX_P_BYTES", "_gridworld_size_error", "_cmd_solve", "_cell", "_tolerance"):
        assert getattr(cli, name) is getattr(_cli_solve, name)
    src = Path(cli.__file__).read_text(encoding="utf-8")
    assert "def _gridworld_size_error" not in src and "def _cmd_solve" not in src
    for name in ("_fn_name", "_check_named"):
        assert getattr(sweep, name) is getattr(_sweep_names, name)
    assert "def _fn_name" not in Path(sweep.__file__).read_text(encoding="utf-8")
    assert cli.__all__ == ["main"] and cli.EXIT_BROKEN_PIPE == 141


def test_the_console_entry_point_still_runs_solve():
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from rltheory.cli import main; sys.exit(main())",
            "solve",
            "gridworld",
            "--size",
            "2",
            "--method",
            "pi",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == "gridworld 2x2, slip=0.1, gamma=0.99: S=4, A=4"
    assert "converged:   True" in proc.stdout
