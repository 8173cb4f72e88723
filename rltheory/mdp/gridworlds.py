r"""Grid MDPs with their geometry: slippery gridworlds and cliff walking.

States are the non-wall cells in row-major order; actions are :data:`GRID_ACTIONS` =
``("up", "right", "down", "left")``, the order of gymnasium's toy-text grids. The intended
move happens with probability ``1 − slip``, a uniformly random one of the four otherwise;
moves off the grid or into a wall leave the agent in place; goals are absorbing with
reward 0. A :class:`GridWorld` carries the model and the geometry needed to draw a value
function as a heatmap (:meth:`GridWorld.to_grid`).

=====================  =====================================================
:func:`gridworld`      slippery grid with walls and absorbing goals
:func:`cliff_walking`  Sutton & Barto (2018), Example 6.6
=====================  =====================================================

References
----------
Sutton, R. S., Barto, A. G. (2018). *Reinforcement Learning: An Introduction*, 2nd ed.,
MIT Press. Example 6.6 (Cliff Walking).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_int
from ..backend import to_numpy
from ._zoo_args import _build, _probability, _scalar
from .model import FiniteMDP

__all__ = ["GRID_ACTIONS", "GridWorld", "gridworld", "cliff_walking", "MAX_GRID_P_BYTES"]

#: Largest dense transition array ``P[S, 4, S]`` (float64 bytes, as built on the host) a grid
#: model may need: ``2**33`` bytes (8 GiB, about 16 000 cells). A larger grid is a located
#: ``ValueError`` before any work; ``gridworld(3000)`` (9e6 cells, 2.6e15 bytes) ran a Python
#: loop over its cells for minutes before numpy could refuse the array.
MAX_GRID_P_BYTES = 2**33

#: grid actions, in the order used by gymnasium's toy-text grids (CliffWalking).
GRID_ACTIONS = ("up", "right", "down", "left")
_MOVES = np.array([[-1, 0], [0, 1], [1, 0], [0, -1]])


@dataclass(frozen=True, eq=False)
class GridWorld:
    """A grid MDP together with its geometry.

    States are the non-wall cells in row-major order; actions are
    :data:`GRID_ACTIONS` = ``("up", "right", "down", "left")``.

    Attributes
    ----------
    mdp : FiniteMDP
        The model.
    shape : (int, int)
        ``(rows, cols)`` of the grid.
    walls : frozenset of (int, int)
        Blocked cells (not states).
    goals : tuple of (int, int)
        Absorbing goal cells.
    hazards : frozenset of (int, int)
        Cells that send the agent back to ``start`` (the cliff in :func:`cliff_walking`).
    start : (int, int) or None
        Start cell (``mdp.mu`` is its indicator), or None for a uniform start.

    Raises
    ------
    TypeError
        ``mdp`` not a :class:`~rltheory.mdp.FiniteMDP`.
    ValueError
        ``shape`` not two positive ints; a cell that is not a pair of ints or is off the grid (field
        and index named); a goal, hazard or start on a wall; a repeated goal; ``mdp`` without
        ``A = 4`` actions or one state per non-wall cell.
    """

    mdp: FiniteMDP
    shape: tuple[int, int]
    walls: frozenset
    goals: tuple
    hazards: frozenset = frozenset()
    start: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        # the geometry was taken as given: walls=[(1, 1), (1, 1)] made state_of(2, 2) on a 3x3 grid
        # return 6 while coords(6) was (2, 1), and a shape whose cells did not match mdp.S drew
        # heatmaps on the wrong cells
        if not isinstance(self.mdp, FiniteMDP):
            raise TypeError(f"mdp must be a FiniteMDP; got {type(self.mdp).__name__}")
        try:
            rows, cols = self.shape
        except (TypeError, ValueError):
            raise ValueError(f"shape must be a (rows, cols) pair; got {self.shape!r}") from None
        rows, cols = check_int(rows, "shape[0]"), check_int(cols, "shape[1]")
        walls = frozenset(_cells_arg(self.walls, "walls", rows, cols))
        goals = _cells_arg(self.goals, "goals", rows, cols)
        hazards = frozenset(_cells_arg(self.hazards, "hazards", rows, cols))
        start = None if self.start is None else _cells_arg([self.start], "start", rows, cols)[0]
        _check_cells(walls, goals, tuple(hazards), start)
        n_cells = rows * cols - len(walls)
        if (self.mdp.S, self.mdp.A) != (n_cells, len(GRID_ACTIONS)):
            raise ValueError(
                f"mdp must have one state per non-wall cell and the {len(GRID_ACTIONS)} grid actions: "
                f"(S, A) = ({n_cells}, {len(GRID_ACTIONS)}) for the {rows}x{cols} grid with "
                f"{len(walls)} walls; got ({self.mdp.S}, {self.mdp.A})"
            )
        for field, value in (
            ("shape", (rows, cols)),
            ("walls", walls),
            ("goals", goals),
            ("hazards", hazards),
            ("start", start),
        ):
            object.__setattr__(self, field, value)

    @property
    def cells(self) -> list[tuple[int, int]]:
        """Cell ``(r, c)`` of every state, in state order."""
        rows, cols = self.shape
        return [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in self.walls]

    def state_of(self, r: int, c: int) -> int:
        """State index of cell ``(r, c)``; ``ValueError`` for a wall, a cell off the grid or a
        coordinate that is not an int."""
        rows, cols = self.shape
        # 1.5 gave the state of another cell, True that of row 1
        for name, v in (("r", r), ("c", c)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"cell coordinate {name} must be an int; got {v!r}")
        if not (0 <= r < rows and 0 <= c < cols):
            raise ValueError(f"cell (r={r}, c={c}) is off the {rows}x{cols} grid")
        if (r, c) in self.walls:
            raise ValueError(f"cell (r={r}, c={c}) is a wall, not a state")
        return int(r * cols + c - sum(1 for w in self.walls if w[0] * cols + w[1] < r * cols + c))

    def coords(self, s: int) -> tuple[int, int]:
        """Cell ``(r, c)`` of state ``s``."""
        cells = self.cells
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < len(cells):
            raise ValueError(f"state s must be an int in [0, {len(cells)}); got {s!r}")
        return cells[int(s)]

    def to_grid(self, values: Any, fill: float = float("nan")) -> np.ndarray:
        """Host array ``[..., rows, cols]`` holding ``values[..., s]`` at each state's cell, ``fill`` at walls.

        Ready for ``matplotlib.pyplot.imshow`` (a value-function heatmap). ``values`` must be real
        numbers and ``fill`` a real number (``ValueError`` otherwise: text used to reach numpy's
        "could not convert string to float" or its dtype promotion, naming neither argument).
        """
        fill = _scalar(fill)
        if isinstance(fill, bool) or not isinstance(fill, (int, float, np.integer, np.floating)):
            raise ValueError(f"fill must be a real number (nan by default); got {fill!r}")
        v = to_numpy(values)
        if v.dtype.kind not in "biuf":
            raise ValueError(f"values must be real numbers; got dtype {v.dtype}")
        S = len(self.cells)
        if v.ndim < 1 or v.shape[-1] != S:
            raise ValueError(f"values must have shape (..., S) = (..., {S}); got {v.shape}")
        rows, cols = self.shape
        out = np.full(v.shape[:-1] + (rows * cols,), fill, dtype=np.result_type(v.dtype, float))
        flat = np.array([r * cols + c for r, c in self.cells])
        out[..., flat] = v
        return out.reshape(v.shape[:-1] + (rows, cols))


def _cells_arg(cells: Any, field: str, rows: int, cols: int) -> tuple[tuple[int, int], ...]:
    out = []
    for i, cell in enumerate(cells):
        try:
            parts = tuple(cell) if not isinstance(cell, str) else ()
        except TypeError:
            parts = ()
        # a cell is a pair of integers: int() would truncate 1.5, parse "12" into (1, 2) and read
        # True as 1, silently placing the cell somewhere else
        if len(parts) != 2 or any(
            isinstance(x, bool) or not isinstance(x, (int, np.integer)) for x in parts
        ):
            raise ValueError(f"{field}[{i}] must be a cell (row, col) of two ints; got {cell!r}")
        r, c = (int(x) for x in parts)
        if not (0 <= r < rows and 0 <= c < cols):
            raise ValueError(f"{field}[{i}] = ({r}, {c}) is off the {rows}x{cols} grid")
        out.append((r, c))
    return tuple(out)


def _check_cells(
    walls: frozenset, goals: tuple, hazards: tuple, start: tuple[int, int] | None
) -> None:
    """Goals, hazards and the start are not walls; no goal repeats (it would silently take the last
    of its rewards)."""
    for field, group in (
        ("goals", goals),
        ("hazards", hazards),
        ("start", () if start is None else (start,)),
    ):
        for i, cell in enumerate(group):
            if cell in walls:
                raise ValueError(f"{field}[{i}] = {cell} is also a wall")
    seen: dict[tuple[int, int], int] = {}
    for k, g in enumerate(goals):
        if g in seen:
            raise ValueError(f"goals[{k}] = {g} repeats goals[{seen[g]}]")
        seen[g] = k


def _dense_p_size(rows: int, cols: int, walls: Any) -> tuple[int, int]:
    """``(S, bytes)`` of a grid's dense float64 ``P[S, 4, S]``: ``S`` counts the cells that are
    not walls (walls off the grid are not cells). Also used by the CLI's tighter ``solve`` cap."""
    n_states = rows * cols - len({(r, c) for r, c in walls if 0 <= r < rows and 0 <= c < cols})
    return n_states, n_states * 4 * n_states * 8


def _grid_model(
    rows: int,
    cols: int,
    *,
    walls: tuple,
    goals: tuple,
    goal_rewards: np.ndarray,
    hazards: tuple,
    hazard_reward: float,
    step_reward: float,
    slip: float,
    start: tuple[int, int] | None,
    gamma: float,
    xp: Any,
    dtype: Any,
) -> GridWorld:
    """Shared construction of :func:`gridworld` and :func:`cliff_walking`.

    The intended move happens with probability ``1 − slip``; with probability
    ``slip`` a uniformly random one of the four moves happens instead. A move off
    the grid or into a wall leaves the agent in place; a move into a hazard sends
    it to ``start`` with ``hazard_reward``. Goals are absorbing with reward 0;
    entering goal ``g`` pays ``goal_rewards[g]`` instead of ``step_reward``.
    """
    wall_set = frozenset(walls)
    n_states, nbytes = _dense_p_size(rows, cols, wall_set)
    if nbytes > MAX_GRID_P_BYTES:
        raise ValueError(
            f"a {rows}x{cols} grid has S = {n_states} states: its dense transition array P[S, 4, S] "
            f"would need {nbytes:.3g} bytes, more than MAX_GRID_P_BYTES = 2**33 "
            f"(rltheory.mdp.gridworlds); rltheory's models are dense"
        )
    cells = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in wall_set]
    index = {cell: i for i, cell in enumerate(cells)}
    S = len(cells)
    if S == 0:
        raise ValueError("every cell is a wall: the grid has no states")
    _check_cells(wall_set, goals, hazards, start)
    goal_of = {g: k for k, g in enumerate(goals)}
    hazard_set = frozenset(hazards)
    s0 = None if start is None else index[start]
    # deterministic effect of each move: destination state and reward
    dest = np.empty((S, 4), dtype=np.int64)
    rew = np.empty((S, 4))
    for s, (r, c) in enumerate(cells):
        for d, (dr, dc) in enumerate(_MOVES):
            nr, nc = r + dr, c + dc
            tgt = (
                (nr, nc)
                if 0 <= nr < rows and 0 <= nc < cols and (nr, nc) not in wall_set
                else (r, c)
            )
            if tgt in hazard_set and s0 is not None:
                dest[s, d], rew[s, d] = s0, hazard_reward
            elif tgt in goal_of:
                dest[s, d], rew[s, d] = index[tgt], goal_rewards[goal_of[tgt]]
            else:
                dest[s, d], rew[s, d] = index[tgt], step_reward
    # mix[a, d] = Pr(move d | action a)
    mix = np.full((4, 4), slip / 4.0) + (1.0 - slip) * np.eye(4)
    P = np.zeros((S, 4, S))
    s_idx = np.repeat(np.arange(S), 4 * 4)
    a_idx = np.tile(np.repeat(np.arange(4), 4), S)
    d_idx = np.tile(np.arange(4), 4 * S)
    np.add.at(P, (s_idx, a_idx, dest[s_idx, d_idx]), mix[a_idx, d_idx])
    R = rew @ mix.T  # R[s, a] = Σ_d mix[a, d] rew[s, d]
    for g in goals:  # absorbing, reward 0
        P[index[g]] = 0.0
        P[index[g], :, index[g]] = 1.0
        R[index[g]] = 0.0
    mu = None
    if s0 is not None:
        mu = np.zeros(S)
        mu[s0] = 1.0
    mdp = _build(P, R, gamma, mu, xp, dtype)
    return GridWorld(mdp, (rows, cols), wall_set, tuple(goals), hazard_set, start)


def gridworld(
    size: int | tuple[int, int],
    *,
    slip: float = 0.1,
    gamma: float = 0.99,
    goals: Sequence[tuple[int, int]] | None = None,
    walls: Sequence[tuple[int, int]] = (),
    rewards: float | Sequence[float] = 1.0,
    step_reward: float = 0.0,
    start: tuple[int, int] | None = (0, 0),
    xp: Any = None,
    dtype: Any = None,
) -> GridWorld:
    r"""Slippery gridworld with walls and absorbing rewarding goals.

    Dynamics: action ``a ∈ {up, right, down, left}`` moves one cell in its
    direction with probability ``1 − slip``; with probability ``slip`` a
    uniformly random direction (one of the four, possibly ``a`` itself) is taken
    instead, so ``P(intended) = 1 − 3·slip/4``. Moving off the grid or into a wall
    leaves the agent where it is. Entering goal ``g`` pays ``rewards[g]``; every
    other transition from a non-goal cell pays ``step_reward``. Goals are
    absorbing with reward 0, so ``V*(goal) = 0`` and from a cell next to a goal
    ``V*`` is close to the goal reward.

    Parameters
    ----------
    size : int or (rows, cols)
        Grid size (``size × size`` for an int).
    slip : float in [0, 1]
        Probability of a uniformly random move.
    gamma : float in [0, 1)
        Discount.
    goals : sequence of (row, col), optional
        Goal cells; default the bottom-right corner.
    walls : sequence of (row, col)
        Blocked cells (removed from the state space).
    rewards : float or sequence of float
        Reward for entering each goal (one value for all, or one per goal).
    step_reward : float
        Reward of every other transition out of a non-goal cell (e.g. −1 for shortest paths).
    start : (row, col) or None
        Start cell, giving ``μ`` as its indicator; None means uniform ``μ``.
    xp, dtype :
        Array namespace and float dtype of the model.

    Returns
    -------
    GridWorld
        ``.mdp`` (``S`` = number of non-wall cells, ``A = 4``), geometry for
        heatmaps (``.to_grid(V)``), ``state_of(r, c)`` and ``coords(s)``.

    Raises
    ------
    ValueError
        Bad size, slip outside [0, 1], a cell that is not a pair of ints or is off
        the grid, a goal or start on a wall, a repeated goal, or a reward list whose
        length differs from the number of goals.

    Examples
    --------
    >>> g = gridworld(3, slip=0.0, gamma=0.9)
    >>> g.mdp.S, g.mdp.A, g.state_of(2, 2)
    (9, 4, 8)
    >>> float(g.mdp.R[g.state_of(1, 2), GRID_ACTIONS.index("down")])
    1.0
    """
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        rows = cols = check_int(size, "size")
    else:
        try:
            rows, cols = size
        except (TypeError, ValueError):
            raise ValueError(f"size must be an int or a (rows, cols) pair; got {size!r}") from None
        rows, cols = check_int(rows, "size[0]"), check_int(cols, "size[1]")
    slip = _probability(slip, "slip")
    walls_t = _cells_arg(walls, "walls", rows, cols)
    goals_t = _cells_arg([(rows - 1, cols - 1)] if goals is None else goals, "goals", rows, cols)
    start_t = None if start is None else _cells_arg([start], "start", rows, cols)[0]
    step_reward, rewards = _scalar(step_reward), _scalar(rewards)
    scalars = (("step_reward", step_reward),) + (
        (("rewards", rewards),) if np.ndim(rewards) == 0 else ()
    )
    for field, v in scalars:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise ValueError(f"{field} must be a finite number; got {v!r}")
    if np.ndim(rewards) == 0:
        goal_rewards = np.full(len(goals_t), float(rewards))
    else:
        # numbers only: np.asarray(..., dtype=float) parsed ["2.5"] as 2.5 and read [True] as 1.0
        kind = np.asarray(rewards).dtype.kind if not isinstance(rewards, (str, bytes)) else "U"
        if kind not in "iuf":
            raise ValueError(f"rewards must be a number or a sequence of numbers; got {rewards!r}")
        goal_rewards = np.asarray(rewards, dtype=float)
        if goal_rewards.shape != (len(goals_t),):
            raise ValueError(
                f"rewards must be a scalar or one value per goal ({len(goals_t)}); got shape {goal_rewards.shape}"
            )
    if not np.all(np.isfinite(goal_rewards)) or not np.isfinite(step_reward):
        raise ValueError(
            f"rewards must be finite; got rewards={rewards!r}, step_reward={step_reward!r}"
        )
    return _grid_model(
        rows,
        cols,
        walls=walls_t,
        goals=goals_t,
        goal_rewards=goal_rewards,
        hazards=(),
        hazard_reward=0.0,
        step_reward=float(step_reward),
        slip=slip,
        start=start_t,
        gamma=gamma,
        xp=xp,
        dtype=dtype,
    )


def cliff_walking(
    *, gamma: float = 0.99, slip: float = 0.0, xp: Any = None, dtype: Any = None
) -> GridWorld:
    r"""Cliff walking, Sutton & Barto (2018), Example 6.6: a 4 × 12 grid.

    Start ``(3, 0)``, goal ``(3, 11)``, the cliff is ``(3, 1) … (3, 10)``. Every
    step costs −1; stepping into the cliff costs −100 and sends the agent back to
    the start. The goal is absorbing with reward 0 (the episode's end). The cliff
    cells stay in the state space (unreachable), so state ``12·r + c`` is cell
    ``(r, c)``, as in gymnasium's ``CliffWalking``. ``slip > 0`` gives a slippery
    variant (see :func:`gridworld`).

    With ``slip = 0`` the optimal return from the start is the shortest path
    along the cliff edge, 13 steps: ``V*(start) = −Σ_{t<13} γ^t``.

    References
    ----------
    Sutton, R. S., Barto, A. G. (2018). *Reinforcement Learning: An Introduction*,
    2nd ed., MIT Press. Example 6.6 (Cliff Walking).

    Examples
    --------
    >>> g = cliff_walking(gamma=0.9)
    >>> g.mdp.S, g.state_of(3, 0), g.goals
    (48, 36, ((3, 11),))
    """
    slip = _probability(slip, "slip")
    return _grid_model(
        4,
        12,
        walls=(),
        goals=((3, 11),),
        goal_rewards=np.array([-1.0]),
        hazards=tuple((3, c) for c in range(1, 11)),
        hazard_reward=-100.0,
        step_reward=-1.0,
        slip=slip,
        start=(3, 0),
        gamma=gamma,
        xp=xp,
        dtype=dtype,
    )
