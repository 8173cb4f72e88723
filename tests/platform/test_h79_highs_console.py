"""HiGHS's own console text never reaches standard output; its status still reaches the caller.

HiGHS (scipy 1.17's) prints ``Highs::returnFromOptimizeModel: return_status = -1 != 0 =
run_return_status For model_status_ = Not Set`` with a bare ``printf`` when an LP ends at model
status *Not Set* (scipy status 4), whatever ``disp``/``output_flag`` say. The CMDP of
``tests/mdp/test_h71_cmdp_near_one.py`` (second case) at ``γ = 1 − 2^-33`` meets it: its q-LP
ends at status 4 from the simplex and interior point at ``small_matrix_value`` 1e-9, and
``solve_cmdp`` then solves the normalised LP.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from rltheory._numerics import highs_console_silenced, highs_linprog

ROOT = Path(__file__).resolve().parents[2]

# tests/mdp/test_h71_cmdp_near_one.py CASES[1]: P in sixteenths, R and C in 64ths, budgets in 64ths
_CMDP = """
import numpy as np
from rltheory.mdp import FiniteMDP
from rltheory.mdp.constrained import ConstrainedMDP, solve_cmdp
P = np.array([[[4, 6, 6], [16, 0, 0]], [[1, 2, 13], [3, 0, 13]], [[5, 4, 7], [3, 5, 8]]]) / 16
R = np.array([[43, 7], [57, 55], [0, 35]]) / 64
C = np.array([[[7, 17], [27, 29], [30, 59]], [[17, 12], [43, 61], [59, 56]]]) / 64
k = 33
b = np.array([21, 43]) / 64 * 2.0**k
cmdp = ConstrainedMDP(FiniteMDP(P, R, 1.0 - 2.0**-k), C, b)
"""


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_solve_cmdp_prints_nothing_when_highs_ends_at_status_4():
    # the old code printed the HiGHS line twice on standard output (a pipe here, as in a script)
    proc = _run(_CMDP + "print('before')\nsol = solve_cmdp(cmdp)\nprint(repr(sol.value))\n")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "before" and len(lines) == 2, proc.stdout
    # the value reached through the normalised LP; test_h71 checks it against an exact LP
    assert float(lines[1]) > 0


def test_highs_linprog_status_4_reaches_the_caller_and_nothing_is_printed():
    # the q-LP solve_cmdp sends first, taken from a spy; status 4 at every rung of the ladder
    code = _CMDP + (
        "import rltheory.mdp.constrained as con\n"
        "seen = []\n"
        "real = con.highs_linprog\n"
        "con.highs_linprog = lambda *a, **kw: seen.append((a, kw)) or real(*a, **kw)\n"
        "solve_cmdp(cmdp)\n"
        "a, kw = seen[0]\n"
        "res = real(*a, **kw)\n"
        "import sys\n"
        "print(res.status, res.message, file=sys.stderr)\n"
        "print('after')\n"
    )
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == "after\n"
    assert proc.stderr.startswith("4 "), proc.stderr  # the status is returned, not hidden
    assert "Not Set" in proc.stderr


def test_the_real_standard_output_is_back_after_a_call_and_after_an_error(capfd):
    before = os.fstat(1)
    print("kept ", end="")  # pending Python output is flushed before fd 1 is switched
    res = highs_linprog(np.array([1.0, 1.0]), A_eq=np.array([[1.0, 1.0]]), b_eq=np.array([1.0]))
    assert res.status == 0 and res.fun == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(RuntimeError, match="inside"), highs_console_silenced():
        raise RuntimeError("inside")
    print("shown")
    assert capfd.readouterr().out == "kept shown\n"
    after = os.fstat(1)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)


def test_calls_from_several_threads_leave_standard_output_where_it_was(capfd):
    before = os.fstat(1)
    c = np.array([1.0, 2.0, 3.0])
    A, b = np.ones((1, 3)), np.array([2.0])
    values: list[float] = []

    def work():
        for _ in range(20):
            values.append(highs_linprog(c, A_eq=A, b_eq=b).fun)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert values == [pytest.approx(2.0, abs=1e-12)] * 80
    print("still here")
    assert capfd.readouterr().out == "still here\n"
    after = os.fstat(1)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)


def test_threads_neither_see_the_options_warning_nor_leave_a_filter_behind():
    # warnings.catch_warnings saves and restores the process-wide filter list: threads leaving it
    # out of order removed each other's filter (OptimizeWarning "Unrecognized options detected"
    # reached the caller) or left an "ignore" filter installed after every call had returned
    code = (
        "import threading, warnings, numpy as np\n"
        "from scipy.optimize import OptimizeWarning\n"
        "from rltheory._numerics import highs_linprog\n"
        "warnings.simplefilter('error', OptimizeWarning)\n"
        "before = list(warnings.filters)\n"
        "c, A, b = np.array([1.0, 2.0, 3.0]), np.ones((1, 3)), np.array([2.0])\n"
        "errors, leaks = [], 0\n"
        "def work():\n"
        "    for _ in range(40):\n"
        "        try:\n"
        "            highs_linprog(c, A_eq=A, b_eq=b)\n"
        "        except OptimizeWarning as exc:\n"
        "            errors.append(exc)\n"
        "for _ in range(5):\n"
        "    ts = [threading.Thread(target=work) for _ in range(6)]\n"
        "    for t in ts: t.start()\n"
        "    for t in ts: t.join()\n"
        "    leaks += warnings.filters != before\n"
        "    warnings.filters[:] = before\n"
        "print(len(errors), leaks)\n"
    )
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == "0 0\n"


def test_without_a_devnull_to_open_the_lp_is_solved_with_fd_1_as_it_was(
    monkeypatch, tmp_path, capfd
):
    # os.open(os.devnull) failing (a sandbox without /dev/null) raised out of highs_linprog and
    # left the duplicate of fd 1 open; the LP is now solved with the console as it is
    before = os.fstat(1)
    monkeypatch.setattr(os, "devnull", str(tmp_path / "missing" / "null"))
    res = highs_linprog(np.array([1.0, 1.0]), A_eq=np.array([[1.0, 1.0]]), b_eq=np.array([1.0]))
    monkeypatch.undo()
    assert res.status == 0 and res.fun == pytest.approx(1.0, abs=1e-12)
    after = os.fstat(1)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
    print("shown")
    assert capfd.readouterr().out == "shown\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_process_forked_during_a_highs_call_has_its_standard_output(tmp_path):
    # the child of a fork made while another thread was inside a HiGHS call inherited fd 1 on
    # os.devnull and a count of one call in progress that no thread of the child would end
    code = (
        "import os, sys, threading, numpy as np\n"
        "from rltheory._numerics import highs_console_silenced, highs_linprog\n"
        "inside, leave = threading.Event(), threading.Event()\n"
        "def hold():\n"
        "    with highs_console_silenced():\n"
        "        inside.set(); leave.wait()\n"
        "t = threading.Thread(target=hold); t.start(); inside.wait()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.write(1, b'child fd 1\\n')\n"
        "    res = highs_linprog(np.array([1.0, 1.0]), A_eq=np.ones((1, 2)), b_eq=np.ones(1))\n"
        "    os.write(1, f'child lp {res.status} {res.fun:g}\\n'.encode())\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "leave.set(); t.join()\n"
        "print('parent', flush=True)\n"
    )
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == "child fd 1\nchild lp 0 1\nparent\n"
