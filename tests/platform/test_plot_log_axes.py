"""convergence_plot on log axes with nothing positive to draw: the figure still renders."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from rltheory.plot import convergence_plot, figure, png_bytes

_NOTE = "no point to draw (no positive values on the log axes)"


@pytest.mark.parametrize(
    ("t", "err", "kwargs"),
    [
        ([1, 2, 3], [0.0, 0.0, 0.0], {}),  # an exact method: error 0 at every record
        ([0], [1.0], {}),  # a single record at t = 0 on a log t-axis
        ([1, 2], [np.nan, -1.0], {}),
        ([0, 1], [0.0, 0.0], {"logx": False}),
    ],
)
def test_a_figure_with_no_drawable_point_renders_with_a_note(t, err, kwargs):
    # savefig raised matplotlib's "Data cannot be log-scaled because all values are <= 0",
    # after the experiment had run, naming no series
    fig, axes = figure()
    ax = axes[0, 0]
    convergence_plot(ax, t, err, label="measured", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert png_bytes(fig)[:8] == b"\x89PNG\r\n\x1a\n"
    assert [x.get_text() for x in ax.texts] == [_NOTE]


def test_drawable_points_keep_the_automatic_limits():
    fig, axes = figure()
    ax = axes[0, 0]
    convergence_plot(
        ax, [1, 2, 3], [1.0, 0.5, 0.0], label="measured"
    )  # the 0 is masked, two points drawn
    png_bytes(fig)
    assert len(ax.texts) == 0 and ax.get_ylim()[0] < 0.5 < 1.0 < ax.get_ylim()[1]
    fig, axes = figure()
    convergence_plot(axes[0, 0], [0], [0.0], label="measured", logx=False, logy=False)
    png_bytes(fig)
    assert len(axes[0, 0].texts) == 0


@pytest.mark.parametrize(
    ("moves", "shape"),
    [
        ([(0, 1, 0), (1, 0, 0), (0, 0, 1), (1, 1, 1)], "(4, 3)"),
        ([(0, 1, 0, 1)], "(1, 4)"),
        ([0, 1], "(2,)"),
    ],
)
def test_value_heatmap_refuses_moves_that_are_not_pairs(moves, shape):
    # moves were reshaped to (-1, 2): four 3-tuples were read as six moves, one 4-tuple as
    # two, and the arrows drawn from the wrong displacements
    from rltheory.plot import value_heatmap

    fig, axes = figure()
    with pytest.raises(
        ValueError,
        match=re.escape(f"moves must be a sequence of (d_row, d_col) pairs; got shape {shape}"),
    ):
        value_heatmap(axes[0, 0], np.arange(4.0), (2, 2), policy=[0, 0, 0, 0], moves=moves)


@pytest.mark.parametrize(("names", "n"), [(["a", "b", "c"], 3), (["a"], 1), ("ab", 1)])
def test_occupancy_heatmap_names_each_action_column_once(names, n):
    # a wrong count raised matplotlib's "The number of FixedLocator locations (2) ... does not
    # match the number of labels (3)"; the string "ab" was split into the labels 'a', 'b'
    from rltheory.plot import occupancy_heatmap

    fig, axes = figure()
    with pytest.raises(
        ValueError, match=re.escape(f"action_names has {n} entries but d has 2 action columns")
    ):
        occupancy_heatmap(axes[0, 0], np.full((3, 2), 1 / 6), action_names=names)
    occupancy_heatmap(axes[0, 0], np.full((3, 2), 1 / 6), action_names=("left", "right"))
    assert [t.get_text() for t in axes[0, 0].get_xticklabels()] == ["left", "right"]
