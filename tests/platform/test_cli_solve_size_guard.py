"""``rltheory solve gridworld`` refuses grids whose dense transition array exceeds the cap.

The gridworld's ``P`` is dense, ``S·A·S`` float64 entries with ``S = size²`` cells and ``A = 4``:
``--size 3000`` (``S = 9e6``, ``2.59e15`` bytes) did not finish within 30 s under a 4 GB memory
limit. The command now refuses it with status 2 before anything is built. The cap is
``SOLVE_MAX_P_BYTES = 2**30``: ``32·76⁴ = 1067589632 ≤ 2**30 < 32·77⁴ = 1124897312``.
"""

from __future__ import annotations

import pytest

import rltheory.mdp
from rltheory import cli
from rltheory.cli import main


class _Reached(ValueError):
    pass


@pytest.fixture
def no_build(monkeypatch):
    """gridworld replaced by a stub that raises a ValueError the command reports (status 2), so a
    size that passes the guard is seen without building it."""

    def stub(size, **kwargs):
        raise _Reached(f"gridworld({size}) would be built")

    monkeypatch.setattr(rltheory.mdp, "gridworld", stub)


def test_size_3000_is_refused_before_building(capsys, no_build):
    assert main(["solve", "gridworld", "--size", "3000"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "rltheory solve: --size 3000 gives S = 9000000 states and a dense transition array P of "
        "S*A*S = 3.24e+14 float64 entries (2.59e+15 bytes), more than the cap of 1073741824 bytes "
        "(rltheory.cli.SOLVE_MAX_P_BYTES); the largest --size without walls is 76\n"
    )  # before: the build began (the stub's message, or minutes and gigabytes without it)


@pytest.mark.parametrize(("size", "built"), [(76, True), (77, False)])
def test_the_cap_sits_between_sizes_76_and_77(capsys, no_build, size, built):
    assert cli.SOLVE_MAX_P_BYTES == 2**30
    assert 32 * 76**4 <= cli.SOLVE_MAX_P_BYTES < 32 * 77**4
    assert main(["solve", "gridworld", "--size", str(size)]) == 2
    err = capsys.readouterr().err
    assert ("would be built" in err) == built
    assert ("more than the cap" in err) == (not built)


def test_walls_count_out_of_the_states(capsys, no_build):
    # 77² = 5929 cells; 137 walls leave S = 5792 and 32 S² = 1073512448 <= 2**30 (136 walls:
    # S = 5793, 1073883168 bytes, refused)
    cells = [f"{k // 77},{k % 77}" for k in range(1, 138)]
    args = ["solve", "gridworld", "--size", "77"] + [a for c in cells for a in ("--wall", c)]
    assert main(args) == 2
    assert "would be built" in capsys.readouterr().err
    assert main(args[:-2]) == 2
    assert "S = 5793 states" in capsys.readouterr().err


def test_bad_sizes_keep_gridworlds_own_message(capsys):
    # the guard leaves sizes below 1 to gridworld (S = size² would be positive for -3000)
    for size in ("0", "-3000"):
        assert main(["solve", "gridworld", "--size", size]) == 2
        assert f"size must be an integer >= 1; got {size}" in capsys.readouterr().err


def test_small_grids_still_solve(capsys):
    assert cli._gridworld_size_error(5, []) is None
    assert main(["solve", "gridworld", "--size", "3", "--gamma", "0.9"]) == 0
    assert "converged:   True" in capsys.readouterr().out
