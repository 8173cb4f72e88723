"""``rltheory solve``: solve a zoo model and print its certificate (split out of
:mod:`rltheory.cli`, which builds the command line and re-exports these names).

::

    rltheory solve gridworld [--size 10] [--slip 0.1] [--gamma 0.99] [--method vi|pi|mpi|lp]
                             [--tol 1e-8] [--wall ROW,COL ...]

Status 2 with a message naming the option for a model :func:`rltheory.mdp.gridworld` refuses,
or whose dense transition array would exceed :data:`SOLVE_MAX_P_BYTES` (refused before it is
built), or when the external LP solver fails (``--method lp``; its message and status).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Sequence

import numpy as np

from .errors import SolverError

__all__ = ["SOLVE_MAX_P_BYTES"]

#: Cap on the bytes of the dense transition array ``P`` (``S·A·S`` float64 entries, ``A = 4``)
#: that ``rltheory solve gridworld`` builds: 1 GiB, ``--size 76`` without walls (``S = 5776``).
#: Larger grids are refused with status 2 before anything is built. The peak memory of a solve is
#: about twice ``P`` (measured at ``--size 40``, above the interpreter's own: vi 1.3x, mpi 1.3x,
#: lp 1.8x, pi 2.1x), so the cap keeps a solve under about 2.5 GB.
SOLVE_MAX_P_BYTES = 2**30


_ARROWS = {0: "↑", 1: "→", 2: "↓", 3: "←"}


def _gridworld_size_error(size: int, walls: Sequence[tuple[int, int]]) -> str | None:
    """The message refusing a ``size × size`` gridworld whose dense ``P`` exceeds the cap, else
    ``None`` (also for sizes below 1, which :func:`rltheory.mdp.gridworld` refuses itself).

    ``S`` counts the cells that are not walls (walls off the grid are left to ``gridworld``)."""
    from .mdp.gridworlds import _dense_p_size  # noqa: PLC0415

    if size < 1:
        return None
    S, n_bytes = _dense_p_size(size, size, walls)
    if n_bytes <= SOLVE_MAX_P_BYTES:
        return None
    largest = 1
    while 8 * 4 * (largest + 1) ** 4 <= SOLVE_MAX_P_BYTES:
        largest += 1
    return (
        f"--size {size} gives S = {S} states and a dense transition array P of S*A*S = "
        f"{S * 4 * S:.3g} float64 entries ({n_bytes:.3g} bytes), more than the cap of "
        f"{SOLVE_MAX_P_BYTES} bytes (rltheory.cli.SOLVE_MAX_P_BYTES); the largest --size without "
        f"walls is {largest}"
    )


def _solve_option(message: str, size: int) -> str:
    """``gridworld``'s message prefixed with the option it is about: its fields are ``size``,
    ``slip``, ``gamma`` and (from ``--wall``) ``walls``; ``start``/``goals`` are fixed by the
    command, so a wall on them is named with those cells."""
    for field, option in (("size", "--size"), ("slip", "--slip"), ("gamma", "--gamma")):
        if message.startswith(f"{field} "):
            return f"{option}: {message}"
    if message.startswith(("start[", "goals[")):
        return (
            f"--wall: {message} (solve gridworld starts at (0, 0) and has its goal at "
            f"({size - 1}, {size - 1}); neither may be a wall)"
        )
    if message.startswith("walls[") or "wall" in message:
        return f"--wall: {message}"
    return message


def _cmd_solve(args: argparse.Namespace) -> int:
    from .mdp import (  # noqa: PLC0415
        gridworld,
        linear_program,
        modified_policy_iteration,
        policy_iteration,
        value_iteration,
    )

    too_big = _gridworld_size_error(args.size, args.wall)
    if too_big is not None:  # before building: P alone would not fit in memory
        print(f"rltheory solve: {too_big}", file=sys.stderr)
        return 2
    try:
        world = gridworld(args.size, slip=args.slip, gamma=args.gamma, walls=args.wall)
    except ValueError as exc:
        print(f"rltheory solve: {_solve_option(str(exc), args.size)}", file=sys.stderr)
        return 2
    mdp = world.mdp
    solvers = {
        "vi": lambda: value_iteration(mdp, tol=args.tol),
        "pi": lambda: policy_iteration(mdp),
        "mpi": lambda: modified_policy_iteration(mdp, tol=args.tol),
        "lp": lambda: linear_program(mdp),
    }
    t0 = time.perf_counter()
    failure = None
    # a solver's warnings (ConvergenceWarning: tol below the round-off floor) are printed as the
    # command's own lines, not with the source line of this module that called the solver
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            res = solvers[args.method]()
        except SolverError as exc:  # e.g. HiGHS's verdict on the LP near gamma = 1: no traceback
            failure = exc
    for w in caught:
        print(f"rltheory solve: warning: {w.message}", file=sys.stderr)
    if failure is not None:
        print(
            f"rltheory solve: --method {args.method}: {failure} (status {failure.status!r}); "
            "the other methods (vi, pi, mpi) need no external solver",
            file=sys.stderr,
        )
        return 2
    elapsed = time.perf_counter() - t0
    V = np.asarray(res.V)
    start = world.state_of(0, 0)
    print(
        f"gridworld {args.size}x{args.size}, slip={args.slip}, gamma={args.gamma}: S={mdp.S}, A={mdp.A}"
    )
    print(f"method:      {res.method}")
    print(f"iterations:  {res.iterations}")
    print(f"converged:   {res.converged}")
    print(f"certificate: ||V* - V^pi||_inf <= {float(np.max(np.asarray(res.bound))):.3e}")
    print(f"time:        {elapsed:.3f} s")
    print(
        f"V:           min {V.min():.6f}  mean {V.mean():.6f}  max {V.max():.6f}  V(start=(0, 0)) {V[start]:.6f}"
    )
    pol = np.asarray(res.policy)
    goals = {world.state_of(*g) for g in world.goals}
    print("greedy policy (G = goal):")
    rows, cols = world.shape
    for r in range(rows):
        line = []
        for c in range(cols):
            if (r, c) in world.walls:
                line.append("#")
                continue
            s = world.state_of(r, c)
            line.append("G" if s in goals else _ARROWS[int(pol[s])])
        print("  " + " ".join(line))
    return 0


def _cell(text: str) -> tuple[int, int]:
    """``"ROW,COL"`` → ``(row, col)`` for ``--wall``."""
    parts = text.split(",")
    try:
        row, col = (int(x) for x in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a wall is ROW,COL (two integers); got {text!r}"
        ) from None
    return row, col


def _tolerance(text: str) -> float:
    """``solve --tol``: a positive finite number (the solvers' own rule, checked before solving)."""
    try:
        tol = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if not 0 < tol < math.inf:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be a positive finite number; got {text}")
    return tol
