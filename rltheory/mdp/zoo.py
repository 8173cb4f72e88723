r"""A zoo of finite MDPs used throughout the theory literature.

Every model is built on the host with numpy, then moved once with
``xp.asarray`` when another array namespace is requested (``xp=``), in
``float64`` unless ``dtype=`` says otherwise. Random models take an explicit
``numpy.random.Generator`` or integer seed and never touch the global RNG, so
``garnet(50, 4, 3, gamma=0.9, rng=0)`` is the same model on every machine.

=====================  =====================================================
:func:`garnet`         sparse random MDPs (Archibald, McKinnon & Thomas 1995)
:func:`random_mdp`     dense random MDPs with Dirichlet rows, batched
:func:`gridworld`      slippery grid with walls and absorbing goals
:func:`cliff_walking`  Sutton & Barto (2018), Example 6.6
:func:`chain`          the n-state chain of Dearden, Friedman & Russell (1998)
:func:`riverswim`      RiverSwim of Strehl & Littman (2008)
:func:`two_state`      two states, closed-form ``V*`` and ``V^π``
=====================  =====================================================

Grid models return a :class:`GridWorld`: the model plus the geometry needed to
draw a value function as a heatmap (:meth:`GridWorld.to_grid`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_int, check_real
from ..backend import to_numpy
from .model import FiniteMDP

__all__ = [
    "GridWorld",
    "garnet",
    "random_mdp",
    "gridworld",
    "cliff_walking",
    "chain",
    "riverswim",
    "two_state",
]

#: grid actions, in the order used by gymnasium's toy-text grids (CliffWalking).
GRID_ACTIONS = ("up", "right", "down", "left")
_MOVES = np.array([[-1, 0], [0, 1], [1, 0], [0, -1]])


# -- helpers -------------------------------------------------------------------------


def _generator(rng: Any) -> np.random.Generator:
    """An explicit ``numpy.random.Generator`` from a Generator or an integer seed."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:  # numpy's SeedSequence said only 'expected non-negative integer'
            raise ValueError(
                f"rng must be a numpy.random.Generator or an int seed >= 0; got {rng!r}"
            )
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be a numpy.random.Generator or an int seed (the global RNG is never used); "
        f"got {type(rng).__name__}"
    )


def _scalar(value: Any) -> Any:
    """A 0-d real numpy array as its Python number (the library's scalar arguments accept them,
    ``check_real``'s rule); anything else unchanged, for the caller's type check."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return value.item()
    return value


def _probability(value: Any, field: str) -> float:
    value = _scalar(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValueError(f"{field} must be a number in [0, 1]; got {value!r}")
    v = float(value)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{field} must lie in [0, 1]; got {v}")
    return v


def _batch_shape(batch_shape: Any) -> tuple[int, ...]:
    try:
        shape = tuple(batch_shape)
    except TypeError:
        raise ValueError(
            f"batch_shape must be a tuple of non-negative ints; got {batch_shape!r}"
        ) from None
    for i, n in enumerate(shape):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"batch_shape[{i}] must be a non-negative int; got {n!r}")
    return tuple(int(n) for n in shape)


def _build(P: np.ndarray, R: np.ndarray, gamma: float, mu: Any, xp: Any, dtype: Any) -> FiniteMDP:
    """Validate on the host, then move to ``xp`` once (in ``dtype``, default float64).

    ``dtype`` must be float32 or float64 (``TypeError`` otherwise): ``dtype=np.int64`` cast the
    probabilities to 0 and was reported as 'each P[s, a, :] must sum to 1 ... sums to 0', float16
    as a row summing to 0.99976."""
    if dtype is not None:
        try:
            good = (
                np.dtype(dtype) in (np.float32, np.float64)
                if xp is None
                else dtype in (xp.float32, xp.float64)
            )
        except TypeError:
            good = False
        if not good:
            raise TypeError(f"dtype must be float32 or float64; got {dtype!r}")
    if xp is None:
        if dtype is not None:
            P, R = P.astype(dtype), R.astype(dtype)
            mu = None if mu is None else np.asarray(mu, dtype=dtype)
        return FiniteMDP(P, R, gamma, mu)
    dt = xp.float64 if dtype is None else dtype
    P, R = xp.asarray(P, dtype=dt), xp.asarray(R, dtype=dt)
    mu = None if mu is None else xp.asarray(np.asarray(mu), dtype=dt)
    return FiniteMDP(P, R, gamma, mu)


# -- random models -------------------------------------------------------------------


def _distinct_subsets(gen: np.random.Generator, n: int, S: int, b: int) -> np.ndarray:
    """``n`` independent uniformly random ``b``-subsets of ``{0, …, S−1}`` (rows of an int array).

    For ``b² ≤ S`` rows of ``b`` i.i.d. uniform states are redrawn until their
    entries are distinct (rejection; a row is rejected w.p. ≤ b²/(2S) ≤ 1/2), which
    conditions an i.i.d. tuple on distinctness and so gives a uniform subset in
    ``O(n·b)``. Otherwise the subset is the ``b`` smallest of ``S`` i.i.d. uniform
    keys, drawn in chunks whose size depends on ``S`` only (reproducible).
    """
    if b * b <= S:
        succ = gen.integers(0, S, size=(n, b))
        bad = np.arange(n)
        while bad.size:
            srt = np.sort(succ[bad], axis=1)
            bad = bad[np.any(srt[:, 1:] == srt[:, :-1], axis=1)]
            succ[bad] = gen.integers(0, S, size=(bad.size, b))
        return succ
    out = np.empty((n, b), dtype=np.int64)
    chunk = max(1, (1 << 20) // S)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        out[start:stop] = np.argpartition(gen.random((stop - start, S)), b - 1, axis=1)[:, :b]
    return out


def garnet(
    S: int,
    A: int,
    b: int,
    *,
    gamma: float,
    rng: np.random.Generator | int,
    batch_shape: tuple[int, ...] = (),
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""Garnet ``G(S, A, b)``: each ``(s, a)`` has ``b`` random successors, ``r(s, a) ~ U[0, 1]``.

    Construction, independently for every ``(s, a)`` (and every batch index):

    1. the successor set ``N(s, a)`` is a uniformly random subset of ``b``
       distinct states;
    2. ``b − 1`` cut points ``u_1 ≤ … ≤ u_{b−1}`` are drawn i.i.d. ``U[0, 1]`` and
       sorted; the probabilities of the successors (in the random order they
       were drawn) are the spacings ``u_1 − 0, u_2 − u_1, …, 1 − u_{b−1}``, i.e. a uniform
       point of the ``(b−1)``-simplex;
    3. the reward ``r(s, a)`` is drawn i.i.d. ``U[0, 1]``.

    Parameters
    ----------
    S, A : int
        Numbers of states and actions (≥ 1).
    b : int
        Branching factor, ``1 ≤ b ≤ S``.
    gamma : float
        Discount factor in [0, 1).
    rng : numpy.random.Generator or int
        Source of randomness (an int is a seed).
    batch_shape : tuple of int
        Leading batch axes: that many independent garnets in one model.
    xp, dtype :
        Array namespace and float dtype of the result (numpy / float64 by default).

    Returns
    -------
    FiniteMDP
        ``P`` of shape ``batch_shape + (S, A, S)`` with exactly ``b`` non-zeros per row
        (almost surely), ``R`` of shape ``batch_shape + (S, A)``, uniform ``μ``.

    Raises
    ------
    ValueError
        ``S``, ``A`` or ``b`` not positive integers, or ``b > S``.
    TypeError
        ``rng`` is neither a Generator nor an int.

    Notes
    -----
    Cost ``O(|batch|·S·A·b)`` time when ``b² ≤ S`` (``O(|batch|·S²A)`` otherwise) plus
    the dense ``P`` in memory; the model depends on the seed only.

    References
    ----------
    Archibald, T. W., McKinnon, K. I. M., Thomas, L. C. (1995). On the generation of
    Markov decision processes. *J. Operational Research Society* 46(3):354–361.

    Examples
    --------
    >>> mdp = garnet(5, 2, 3, gamma=0.9, rng=0)
    >>> (mdp.P > 0).sum(-1).tolist()
    [[3, 3], [3, 3], [3, 3], [3, 3], [3, 3]]
    """
    S = check_int(S, "S")
    A = check_int(A, "A")
    b = check_int(b, "b")
    if b > S:
        raise ValueError(f"branching factor b must satisfy 1 <= b <= S = {S}; got b={b}")
    gen = _generator(rng)
    lead = _batch_shape(batch_shape) + (S, A)
    n_rows = int(np.prod(lead, dtype=np.int64))
    succ = _distinct_subsets(gen, n_rows, S, b)
    cuts = np.sort(gen.random((n_rows, b - 1)), axis=1)
    edges = np.concatenate([np.zeros((n_rows, 1)), cuts, np.ones((n_rows, 1))], axis=1)
    P = np.zeros((n_rows, S))
    np.put_along_axis(P, succ, np.diff(edges, axis=1), axis=1)
    R = gen.random(lead)
    return _build(P.reshape(lead + (S,)), R, gamma, None, xp, dtype)


def random_mdp(
    S: int,
    A: int,
    *,
    gamma: float,
    rng: np.random.Generator | int,
    batch_shape: tuple[int, ...] = (),
    alpha: float = 1.0,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""Dense random MDP: ``P(·|s, a) ~ Dirichlet(α·1_S)``, ``r(s, a) ~ U[0, 1]``, i.i.d.

    Parameters
    ----------
    S, A : int
        Numbers of states and actions (≥ 1).
    gamma : float
        Discount factor in [0, 1).
    rng : numpy.random.Generator or int
        Source of randomness.
    batch_shape : tuple of int
        Leading batch axes (e.g. ``(1000,)`` for a thousand instances solved in one call).
    alpha : float
        Dirichlet concentration (> 0); ``α = 1`` is uniform on the simplex, small ``α``
        gives nearly deterministic rows.
    xp, dtype :
        Array namespace and float dtype of the result.

    Returns
    -------
    FiniteMDP
        Batched model with ``P`` of shape ``batch_shape + (S, A, S)``, uniform ``μ``.

    Notes
    -----
    Every row has full support almost surely, so every policy's chain is
    irreducible and aperiodic (useful for average-reward tests).

    Examples
    --------
    >>> random_mdp(4, 2, gamma=0.9, rng=1, batch_shape=(3,)).batch_shape
    (3,)
    """
    S = check_int(S, "S")
    A = check_int(A, "A")
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float, np.integer, np.floating))
        or not alpha > 0
    ):
        raise ValueError(f"alpha must be a positive number; got {alpha!r}")
    if not math.isfinite(alpha):
        raise ValueError(f"alpha must be finite; got {alpha!r}")
    # numpy draws a Dirichlet row as S Gamma(α) variates divided by their sum, about S·α: past the
    # float range that sum is inf and every row came back 0 (reported as 'each P[s, a, :] must sum
    # to 1 ... sums to 0', a row the caller never wrote)
    big = float(np.finfo(np.float64).max) / S / (1.0 + 1e-6)
    if float(alpha) > big:
        raise ValueError(
            f"alpha = {float(alpha):.6g} is too large for S = {S}: a Dirichlet row is S Gamma(alpha) "
            f"variates over their sum, about S*alpha = {S} x {float(alpha):.6g}, beyond the float64 range; "
            f"alpha must be at most {big:.6g}"
        )
    gen = _generator(rng)
    lead = _batch_shape(batch_shape) + (S, A)
    P = gen.dirichlet(np.full(S, float(alpha)), size=lead)
    R = gen.random(lead)
    return _build(P, R, gamma, None, xp, dtype)


# -- grids ---------------------------------------------------------------------------


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
    """

    mdp: FiniteMDP
    shape: tuple[int, int]
    walls: frozenset
    goals: tuple
    hazards: frozenset = frozenset()
    start: tuple[int, int] | None = None

    @property
    def cells(self) -> list[tuple[int, int]]:
        """Cell ``(r, c)`` of every state, in state order."""
        rows, cols = self.shape
        return [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in self.walls]

    def state_of(self, r: int, c: int) -> int:
        """State index of cell ``(r, c)``; ``ValueError`` for a wall, a cell off the grid or a
        coordinate that is not an int."""
        rows, cols = self.shape
        for name, v in (
            ("r", r),
            ("c", c),
        ):  # 1.5 gave the state of another cell, True that of row 1
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

        Ready for ``matplotlib.pyplot.imshow`` (a value-function heatmap).
        """
        v = to_numpy(values)
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
    cells = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in wall_set]
    index = {cell: i for i, cell in enumerate(cells)}
    S = len(cells)
    if S == 0:
        raise ValueError("every cell is a wall: the grid has no states")
    for field, group in (
        ("goals", goals),
        ("hazards", hazards),
        ("start", () if start is None else (start,)),
    ):
        for i, cell in enumerate(group):
            if cell in wall_set:
                raise ValueError(f"{field}[{i}] = {cell} is also a wall")
    goal_of: dict[tuple[int, int], int] = {}
    for k, g in enumerate(goals):  # a repeated goal would silently take the last of its rewards
        if g in goal_of:
            raise ValueError(f"goals[{k}] = {g} repeats goals[{goal_of[g]}]")
        goal_of[g] = k
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


# -- small classic examples ----------------------------------------------------------


def chain(
    n: int = 5,
    *,
    gamma: float = 0.99,
    slip: float = 0.2,
    small: float = 2.0,
    large: float = 10.0,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""The ``n``-state chain of Dearden, Friedman & Russell (1998) (also Strens 2000).

    States ``0 … n−1``, start ``0``. Action 0 ("forward") moves from ``s`` to
    ``s+1`` with reward 0, and at the last state stays there with reward
    ``large``. Action 1 ("back") returns to state 0 with reward ``small``. With
    probability ``slip`` the *other* action is performed instead (reward of the
    performed action). Without slip the myopic policy "back" earns ``small/(1−γ)``
    from state 0 and walking to the end and staying earns ``γ^{n−1} large/(1−γ)``, so
    exploration is needed; with ``slip > 0`` both values are mixed (at the paper's
    ``slip = 0.2``, γ = 0.9: about 16.02 and 25.50 instead of 20 and 65.61).

    Parameters
    ----------
    n : int ≥ 2
        Number of states (5 in the paper).
    gamma : float
        Discount.
    slip : float in [0, 1]
        Probability of performing the opposite action (0.2 in the paper).
    small, large : float
        Rewards of "back" and of "forward" at the end (2 and 10 in the paper).

    Returns
    -------
    FiniteMDP
        ``S = n``, ``A = 2``, ``μ`` = indicator of state 0.

    References
    ----------
    Dearden, R., Friedman, N., Russell, S. (1998). Bayesian Q-learning. AAAI, Fig. 1 ("Chain").
    Strens, M. (2000). A Bayesian framework for reinforcement learning. ICML, §5.

    Examples
    --------
    >>> m = chain(5, gamma=0.9)
    >>> float(m.R[0, 1]), float(m.R[4, 0])
    (1.6, 8.4)
    >>> import numpy as np
    >>> from rltheory.mdp import evaluate_policy
    >>> m0 = chain(5, gamma=0.9, slip=0.0)  # back: 2/(1-0.9); forward: 0.9^4·10/(1-0.9)
    >>> [round(float(evaluate_policy(m0, np.full(5, a))[0]), 9) for a in (1, 0)]
    [20.0, 65.61]
    """
    n = check_int(n, "n", 2)
    slip = _probability(slip, "slip")
    small, large = check_real(small, "small"), check_real(large, "large")
    P = np.zeros((n, 2, n))
    R = np.zeros((n, 2))
    for s in range(n):
        fwd, r_fwd = (s + 1, 0.0) if s < n - 1 else (s, float(large))
        for a, (p_fwd, p_back) in enumerate(((1 - slip, slip), (slip, 1 - slip))):
            P[s, a, fwd] += p_fwd
            P[s, a, 0] += p_back
            R[s, a] = p_fwd * r_fwd + p_back * float(small)
    mu = np.zeros(n)
    mu[0] = 1.0
    return _build(P, R, gamma, mu, xp, dtype)


def riverswim(
    n: int = 6,
    *,
    gamma: float = 0.95,
    small: float = 5.0,
    large: float = 10_000.0,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""RiverSwim (Strehl & Littman 2008): swim up a river of ``n`` states.

    Action 0 ("left", with the current) moves deterministically one state left
    (state 0 stays, earning ``small``). Action 1 ("right", against the current):
    in an interior state moves right w.p. 0.3, stays w.p. 0.6, drifts left
    w.p. 0.1; in state 0 moves right w.p. 0.3, stays w.p. 0.7; in state ``n−1``
    stays w.p. 0.3 earning ``large`` and drifts left w.p. 0.7. So
    ``r(n−1, right) = 0.3·large`` (expected) and ``r(0, left) = small``. The start
    state is 1 or 2 with probability 1/2 each.

    Parameters
    ----------
    n : int ≥ 3
        Number of states (6 in the paper).
    gamma : float
        Discount.
    small, large : float
        Rewards 5 and 10000 of the paper (rescale, e.g. 0.005 and 1, as many later papers do).

    Returns
    -------
    FiniteMDP
        ``S = n``, ``A = 2``.

    References
    ----------
    Strehl, A. L., Littman, M. L. (2008). An analysis of model-based interval estimation
    for Markov decision processes. *J. Computer and System Sciences* 74(8):1309–1331,
    the RiverSwim domain of the experiments section.

    Examples
    --------
    >>> m = riverswim()
    >>> float(m.R[5, 1]), float(m.R[0, 0])
    (3000.0, 5.0)
    """
    n = check_int(n, "n", 3)
    small, large = check_real(small, "small"), check_real(large, "large")
    P = np.zeros((n, 2, n))
    R = np.zeros((n, 2))
    for s in range(n):
        P[s, 0, max(s - 1, 0)] = 1.0
    P[0, 1, 0], P[0, 1, 1] = 0.7, 0.3
    for s in range(1, n - 1):
        P[s, 1, s - 1], P[s, 1, s], P[s, 1, s + 1] = 0.1, 0.6, 0.3
    P[n - 1, 1, n - 2], P[n - 1, 1, n - 1] = 0.7, 0.3
    R[0, 0] = float(small)
    R[n - 1, 1] = 0.3 * float(large)
    mu = np.zeros(n)
    mu[1] = mu[2] = 0.5
    return _build(P, R, gamma, mu, xp, dtype)


def two_state(
    *,
    gamma: float = 0.9,
    p: float = 0.5,
    r_low: float = 0.5,
    r_high: float = 1.0,
    cost: float = 0.0,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""Two states, two actions, closed-form values.

    State 0 ("low"), state 1 ("high"); action 0 = "stay", action 1 = "move".

    * ``(0, stay)``: stay in 0, reward ``r_low``;
    * ``(0, move)``: reach 1 w.p. ``p``, else stay in 0; reward ``−cost``;
    * ``(1, stay)``: stay in 1, reward ``r_high``;
    * ``(1, move)``: go to 0, reward ``r_high``.

    For a policy with ``x = p·π(move|0)``, ``y = π(move|1)``,
    ``a = r_π(0) = (1−π(move|0)) r_low − π(move|0) cost`` and ``h = r_π(1) = r_high``,
    solving the 2 × 2 system ``(I − γP_π) V = r_π`` (determinant
    ``(1−γ)(1−γ+γx+γy)``) gives

    ``V^π(0) = [(1−γ+γy) a + γx h] / [(1−γ)(1−γ+γx+γy)]``,
    ``V^π(1) = [γy a + (1−γ+γx) h] / [(1−γ)(1−γ+γx+γy)]``.

    When ``r_high ≥ r_low`` and ``r_high ≥ −cost``, staying in 1 is optimal,
    ``V*(1) = r_high/(1−γ)``, and

    ``V*(0) = max( r_low/(1−γ), (−cost + γp r_high/(1−γ)) / (1 − γ(1−p)) )``,

    the second term being the value of "move until in 1".

    Examples
    --------
    >>> m = two_state(gamma=0.9)
    >>> m.P[0, 1].tolist(), m.R.tolist()
    ([0.5, 0.5], [[0.5, 0.0], [1.0, 1.0]])
    """
    p = _probability(p, "p")
    r_low, r_high, cost = _scalar(r_low), _scalar(r_high), _scalar(cost)
    for field, v in (("r_low", r_low), ("r_high", r_high), ("cost", cost)):
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float, np.floating, np.integer))
            or not np.isfinite(v)
        ):
            raise ValueError(f"{field} must be a finite number; got {v!r}")
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = 1.0
    P[0, 1, 0], P[0, 1, 1] = 1.0 - p, p
    P[1, 0, 1] = 1.0
    P[1, 1, 0] = 1.0
    R = np.array([[float(r_low), 0.0 - float(cost)], [float(r_high), float(r_high)]])
    return _build(P, R, gamma, None, xp, dtype)
