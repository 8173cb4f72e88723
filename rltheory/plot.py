"""Figures: convergence curves with the theorem overlaid, gridworld values/policies, occupancies.

This is the only rltheory module (besides :mod:`rltheory.experiments` and
:mod:`rltheory.cli`) that imports matplotlib. Figures are built with the
object-oriented API (:class:`matplotlib.figure.Figure`, no pyplot state), so
they can be made in worker processes and saved with ``fig.savefig``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .backend import to_numpy
from .bounds.rates import RateFit
from .mdp.zoo import GRID_ACTIONS, GridWorld

__all__ = [
    "figure",
    "png_bytes",
    "save_figure",
    "convergence_plot",
    "value_heatmap",
    "occupancy_heatmap",
]


def figure(
    nrows: int = 1, ncols: int = 1, *, width: float = 4.2, height: float = 3.4
) -> tuple[Figure, np.ndarray]:
    """A constrained-layout figure with an ``(nrows, ncols)`` array of axes, each ``width × height`` inches."""
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = np.asarray(fig.subplots(nrows, ncols, squeeze=False))
    return fig, axes


def png_bytes(fig: Figure, *, dpi: int = 110) -> bytes:
    """The figure rendered as PNG bytes (for files, notebooks: ``IPython.display.Image(png_bytes(fig))``)."""
    import io  # noqa: PLC0415

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def save_figure(fig: Figure, path: Any, *, dpi: int = 110) -> Path:
    """Write ``fig`` to ``path`` atomically, in the format its suffix names (``.png``, ``.pdf``, ``.svg``, ...).

    The figure is rendered in memory first and then written to a temporary file in the same
    folder that replaces ``path`` (:func:`rltheory._atomic_write.write_atomic`), so a reader
    sees the old file or the complete new one, and a figure that fails to render leaves no file.

    Raises
    ------
    ValueError
        ``path`` has no suffix or one that matplotlib cannot write (the supported formats are
        listed); nothing is written.
    """
    import io  # noqa: PLC0415

    from ._atomic_write import write_atomic  # noqa: PLC0415

    path = Path(path)
    fmt = path.suffix[1:].lower()
    formats = fig.canvas.get_supported_filetypes()
    if fmt not in formats:
        raise ValueError(
            f"save_figure: path {str(path)!r} must end in one of "
            f"{', '.join('.' + f for f in sorted(formats))}; got suffix {path.suffix!r}"
        )
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    return write_atomic(path, buf.getvalue())


def _series(name: str, x: Any) -> np.ndarray:
    """``x`` as a 1-D float array; a column or row vector is accepted, but an array with two
    non-trivial axes is refused (flattening a (2, 2) ``t`` against a length-4 ``err`` drew a
    curve that zig-zagged through both rows without a word)."""
    arr = np.asarray(to_numpy(x), dtype=float)
    if sum(d != 1 for d in arr.shape) > 1:
        raise ValueError(f"{name} must be one series (shape (n,)); got shape {arr.shape}")
    return arr.reshape(-1)


def _finite_series(name: str, x: np.ndarray, *, allow_nan: bool) -> None:
    """Refuse ``±inf`` anywhere in ``x`` (and NaN unless ``allow_nan``): matplotlib drops such
    points without a word, so a diverged run (an error of inf) looked like a shorter curve.
    With ``allow_nan`` a NaN is a gap in the curve, but a series with no value at all is refused
    (it drew a blank figure)."""
    bad = np.isinf(x) if allow_nan else ~np.isfinite(x)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}[{i}] = {x[i].item()!r} is not finite ({int(bad.sum())} of {x.shape[0]} "
            f"entries are not); {name} must hold finite numbers"
            + (" (NaN marks a gap in the curve)" if allow_nan else "")
        )
    if allow_nan and x.shape[0] and np.all(np.isnan(x)):
        raise ValueError(f"{name} is NaN at all {x.shape[0]} points: there is no curve to draw")


def _positive(x: np.ndarray) -> np.ndarray:
    """Non-positive values cannot be drawn on a log axis: mask them (NaN) instead of clipping."""
    return np.where(x > 0, x, np.nan)


def convergence_plot(
    ax: Axes,
    t: Any,
    err: Any,
    *,
    label: str,
    bound: Any = None,
    bound_label: str | None = None,
    fit: RateFit | None = None,
    logx: bool = True,
    logy: bool = True,
) -> Axes:
    """Draw a measured convergence curve, the theorem's curve over it, and the fitted rate.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    t : array_like, shape (n,)
        Iterations (or sample sizes).
    err : array_like, shape (n,)
        Measured error at ``t`` (solid line with markers).
    label : str
        Legend entry of the measured curve.
    bound : array_like, shape (n,), optional
        The theorem's curve at ``t`` (dashed), e.g. ``γ^k ‖v_0 − v*‖∞``.
    bound_label : str, optional
        Its legend entry (default ``"bound"``).
    fit : RateFit, optional
        Drawn as a dotted line over its window (on a log ``t`` axis, a window from
        ``t ≤ 0`` from the first positive ``t`` of the curve in it); the legend gives the
        fitted rate with its confidence interval (:meth:`RateFit.label`).
    logx, logy : bool
        Logarithmic axes (log–log for algebraic rates; ``logx=False`` for
        geometric rates, which are straight on semilog axes). Non-positive values
        are masked on a log axis, never clipped; a log axis left with no positive value
        at all (an error that is exactly 0 everywhere) gets fixed limits and a note
        saying so, so that the figure still renders.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, for chaining.

    Raises
    ------
    ValueError
        ``t``, ``err`` or ``bound`` has two non-trivial axes, their lengths differ, or they
        are empty; an entry of ``t`` is not
        finite, or one of ``err``/``bound`` is ``±inf`` (NaN is a gap in the curve, but a curve
        that is NaN everywhere is refused): each message names the series and the index.
    """
    t = _series("t", t)
    err = _series("err", err)
    if t.shape != err.shape:
        raise ValueError(
            f"t and err must have the same length; got {t.shape[0]} and {err.shape[0]}"
        )
    if t.shape[0] == 0:  # drew an empty figure, with a note about log axes
        raise ValueError(f"convergence_plot({label!r}): t and err are empty; nothing to draw")
    _finite_series("t", t, allow_nan=False)
    _finite_series("err", err, allow_nan=True)
    tt = _positive(t) if logx else t
    marker = "o" if t.shape[0] <= 80 else None
    ax.plot(
        tt,
        _positive(err) if logy else err,
        marker=marker,
        markersize=3,
        lw=2.2,
        color="tab:blue",
        label=label,
        zorder=2,
    )
    if bound is not None:
        b = _series("bound", bound)
        if b.shape != t.shape:
            raise ValueError(
                f"bound must have the same length as t; got {b.shape[0]} and {t.shape[0]}"
            )
        _finite_series("bound", b, allow_nan=True)
        # drawn on top of the measured curve so that a tight bound stays visible
        ax.plot(
            tt,
            _positive(b) if logy else b,
            ls="--",
            lw=1.4,
            color="tab:red",
            zorder=3,
            label=bound_label or "bound",
        )
    if fit is not None:
        lo, hi = fit.window
        if not logx:
            tf = np.linspace(lo, hi, 64)
        elif lo > 0:
            tf = np.geomspace(lo, hi, 64)
        else:
            # a log axis shows t > 0 only: from the first positive t measured in the window (the
            # line from 1e-300 of a window starting at t = 0 stretched the axis over 300 decades)
            inside = t[(t > 0) & (t <= hi)]
            tf = np.geomspace(inside.min(), hi, 64) if inside.size else np.array([])
        ax.plot(
            tf,
            fit.predict(tf),
            ls=":",
            lw=2.0,
            color="black",
            zorder=4,
            label=f"fit: {fit.label()}",
        )
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    _nothing_to_draw_fallback(ax, logx, logy)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def _nothing_to_draw_fallback(ax: Axes, logx: bool, logy: bool) -> None:
    """Give axes on which no point can be drawn (on a log axis: an error that is exactly 0 at
    every point, or only ``t = 0``) fixed limits and say so on them: matplotlib would otherwise
    fail when the figure is drawn ("Data cannot be log-scaled because all values are <= 0")."""
    for line in ax.get_lines():
        x = np.asarray(line.get_xdata(), dtype=float)
        y = np.asarray(line.get_ydata(), dtype=float)
        ok = (
            np.isfinite(x)
            & np.isfinite(y)
            & ((x > 0) if logx else True)
            & ((y > 0) if logy else True)
        )
        if np.any(ok):
            return
    ax.set_xlim(*((1e-3, 1.0) if logx else (0.0, 1.0)))
    ax.set_ylim(*((1e-3, 1.0) if logy else (0.0, 1.0)))
    ax.text(
        0.5,
        0.5,
        "no point to draw (no positive values on the log axes)",
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize="small",
        color="gray",
    )


_DIRECTIONS = {"up": (-1, 0), "right": (0, 1), "down": (1, 0), "left": (0, -1), "stay": (0, 0)}


def _on_grid(values: np.ndarray, grid: Any, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(image[rows, cols], row[S], col[S])`` of per-state ``values`` on ``grid``.

    ``grid`` is a :class:`rltheory.mdp.GridWorld` (walls are NaN in the image) or a
    ``(rows, cols)`` pair for a wall-free grid with row-major states.
    """
    if isinstance(grid, GridWorld):
        cells = np.asarray(grid.cells, dtype=int).reshape(-1, 2)
        if values.shape[0] != cells.shape[0]:
            raise ValueError(
                f"{what} has {values.shape[0]} entries but the gridworld has {cells.shape[0]} states"
            )
        return grid.to_grid(values), cells[:, 0], cells[:, 1]
    try:
        if isinstance(grid, (str, bytes)) or len(grid) != 2:
            raise ValueError
        rows, cols = grid
    except (TypeError, ValueError):
        raise ValueError(f"grid must be a GridWorld or a (rows, cols) pair; got {grid!r}") from None
    for name, n in (("rows", rows), ("cols", cols)):
        # int(2.5) read a 2.5-row grid as 2 rows; -2 failed in numpy's reshape, naming neither
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"grid = {grid!r}: {name} must be an integer >= 1; got {n!r}")
    rows, cols = int(rows), int(cols)
    if values.shape[0] != rows * cols:
        raise ValueError(
            f"{what} has {values.shape[0]} entries but a {rows}x{cols} grid needs {rows * cols}"
        )
    r, c = np.divmod(np.arange(rows * cols), cols)
    return values.reshape(rows, cols), r, c


def value_heatmap(
    ax: Axes,
    V: Any,
    grid: Any,
    *,
    policy: Any = None,
    moves: Sequence[tuple[int, int]] | None = None,
    title: str | None = None,
    cmap: str = "viridis",
) -> Axes:
    """Gridworld values as a heatmap, with a deterministic policy as arrows.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    V : array_like, shape (S,)
        State values.
    grid : GridWorld or (rows, cols)
        A :class:`rltheory.mdp.GridWorld` (its cells place the states; walls are
        left blank), or a wall-free ``(rows, cols)`` grid with state
        ``s`` at ``divmod(s, cols)``.
    policy : array_like of int, shape (S,), optional
        Deterministic policy; action ``a`` is drawn as an arrow along ``moves[a]``
        (integer-valued floats are accepted; no other value is rounded).
    moves : sequence of (d_row, d_col), optional
        Displacement of each action; defaults to the gridworld's actions
        ``("up", "right", "down", "left")`` for a GridWorld, required otherwise.
        ``(0, 0)`` (stay) is drawn as a dot. Rows grow downwards, as in the image.
    title : str, optional
    cmap : str

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        Sizes do not match the grid, ``V`` has a non-finite entry (named by index), a
        ``(rows, cols)`` grid that is not two integers
        ``≥ 1``, ``moves`` missing or not a sequence of pairs, or a
        policy entry that is not an action index of ``moves`` (negative, too large,
        fractional or NaN).
    TypeError
        ``policy`` holds text, booleans or objects instead of action indices.
    """
    v = np.asarray(to_numpy(V), dtype=float).reshape(-1)
    img, r, c = _on_grid(v, grid, "V")
    # an inf stretched the colour scale to nothing (every cell one colour), a NaN was a blank
    # cell indistinguishable from a wall
    _finite_series("V", v, allow_nan=False)
    im = ax.imshow(img, cmap=cmap, origin="upper")
    ax.figure.colorbar(im, ax=ax, shrink=0.8, label="V(s)")
    if policy is not None:
        if moves is None:
            if not isinstance(grid, GridWorld):
                raise ValueError(
                    "value_heatmap: policy arrows on a (rows, cols) grid need moves (one (d_row, d_col) per action)"
                )
            moves = [_DIRECTIONS[name] for name in GRID_ACTIONS]
        raw = np.asarray(to_numpy(policy)).reshape(-1)
        if raw.shape[0] != v.shape[0]:
            raise ValueError(f"policy has {raw.shape[0]} entries but V has {v.shape[0]}")
        mv = np.asarray(moves, dtype=float)
        if mv.ndim != 2 or mv.shape[1] != 2:  # reshape(-1, 2) read three 3-tuples as four moves
            raise ValueError(
                f"moves must be a sequence of (d_row, d_col) pairs; got shape {mv.shape}"
            )
        if raw.dtype.kind not in "iuf":  # text, bools, objects: no action indices
            raise TypeError(f"policy must hold integer action indices; got dtype {raw.dtype}")
        # checked before any cast: 1.7 is no index, NaN is not -2^63
        with np.errstate(invalid="ignore"):
            bad = (
                ~(raw >= 0)
                | ~(raw < mv.shape[0])
                | (raw != np.floor(raw) if raw.dtype.kind == "f" else False)
            )
        if np.any(bad):
            s = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"policy[{s}] = {raw[s].item()!r} is not an action index in 0..{mv.shape[0] - 1}"
            )
        pi = raw.astype(np.int64)
        d = mv[pi]
        length = np.hypot(d[:, 0], d[:, 1])
        go = length > 0
        goal = np.zeros_like(go)
        if isinstance(grid, GridWorld) and grid.goals:
            goal_states = [grid.state_of(*cell) for cell in grid.goals]
            goal[goal_states] = True
            ax.plot(
                c[goal],
                r[goal],
                "*",
                color="gold",
                markersize=12,
                markeredgecolor="black",
                label="goal",
            )
        go &= ~goal
        stay = ~go & ~goal
        # angles="xy" draws in data coordinates, whose y (row) axis imshow already points down
        ax.quiver(
            c[go],
            r[go],
            d[go, 1] / length[go],
            d[go, 0] / length[go],
            color="white",
            scale=1.6,
            scale_units="xy",
            angles="xy",
            pivot="middle",
            width=0.006,
        )
        if np.any(stay):
            ax.plot(c[stay], r[stay], "o", color="white", markersize=3)
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title)
    return ax


def occupancy_heatmap(
    ax: Axes,
    d: Any,
    *,
    grid: Any = None,
    action_names: Sequence[str] | None = None,
    title: str | None = None,
    cmap: str = "magma",
) -> Axes:
    """Occupancy measure as a heatmap.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    d : array_like, shape (S, A) or (S,)
        State-action occupancy ``d(s, a)`` or state occupancy ``d(s)``.
    grid : GridWorld or (rows, cols), optional
        Draw the state occupancy ``Σ_a d(s, a)`` on the grid (see :func:`value_heatmap`);
        without it the ``(S, A)`` matrix (or the ``(S, 1)`` column) is drawn as is.
    action_names : sequence of str, optional
        Column labels of the matrix.
    title : str, optional
    cmap : str

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        ``d`` is not 1-D/2-D, is empty, has negative or non-finite entries, or does not fit ``grid`` (a
        ``(rows, cols)`` grid must be two integers ``≥ 1``);
        ``action_names`` does not name each action column once (a string is one name).
    """
    arr = np.asarray(to_numpy(d), dtype=float)
    if arr.ndim not in (1, 2):
        raise ValueError(f"d must have shape (S, A) or (S,); got {arr.shape}")
    if arr.size == 0:  # drew an empty image with matplotlib's singular-limits warning
        raise ValueError(f"d is empty (shape {arr.shape}); an occupancy needs S >= 1 and A >= 1")
    bad = ~np.isfinite(arr) | (arr < 0)
    if np.any(bad):
        i = tuple(int(j) for j in np.unravel_index(int(np.flatnonzero(bad)[0]), arr.shape))
        raise ValueError(
            f"occupancy must be finite and non-negative; d{list(i)} = {float(arr[i])!r}"
        )
    if grid is not None:
        img, _, _ = _on_grid(arr.sum(axis=1) if arr.ndim == 2 else arr, grid, "d")
        im = ax.imshow(img, cmap=cmap, origin="upper")
        ax.set_xticks([])
        ax.set_yticks([])
        label = "d(s)"
    else:
        mat = arr if arr.ndim == 2 else arr[:, None]
        im = ax.imshow(mat, cmap=cmap, aspect="auto", interpolation="nearest")
        ax.set_ylabel("state s")
        ax.set_xlabel("action a")
        if action_names is not None:
            names = [action_names] if isinstance(action_names, str) else list(action_names)
            if len(names) != mat.shape[1]:  # matplotlib's FixedLocator message named neither
                raise ValueError(
                    f"action_names has {len(names)} entries but d has {mat.shape[1]} action columns"
                )
            ax.set_xticks(range(mat.shape[1]), names)
        label = "d(s, a)" if arr.ndim == 2 else "d(s)"
    ax.figure.colorbar(im, ax=ax, shrink=0.8, label=label)
    if title:
        ax.set_title(title)
    return ax
