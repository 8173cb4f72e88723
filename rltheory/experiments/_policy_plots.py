"""Plot helper shared by the policy-optimisation reproductions: one colour per series."""

from __future__ import annotations

from typing import Any

from ..plot import convergence_plot

__all__ = ["COLORS", "series"]

# the ten tab colours: full presets draw up to eight series on one axis
COLORS = (
    "tab:blue",
    "tab:orange",
    "tab:green",
    "tab:red",
    "tab:purple",
    "tab:brown",
    "tab:pink",
    "tab:gray",
    "tab:olive",
    "tab:cyan",
)


def series(ax: Any, index: int, t: Any, err: Any, **kwargs: Any) -> Any:
    """:func:`rltheory.plot.convergence_plot` drawn in the ``index``-th colour (curve, bound and fit)."""
    n = len(ax.get_lines())
    convergence_plot(ax, t, err, **kwargs)
    for line in ax.get_lines()[n:]:
        line.set_color(COLORS[index % len(COLORS)])
    ax.legend(fontsize=6)  # rebuilt so the legend shows the new colours
    return ax
