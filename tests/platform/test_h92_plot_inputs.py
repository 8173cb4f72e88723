"""rltheory.plot refuses input it cannot draw with a located ValueError, and writes figures atomically.

Before, an empty trace drew an empty figure (with a note about log axes even on linear axes),
an error of ``inf`` (a diverged run) or a NaN iteration index was dropped by matplotlib without a
word, a value of ``inf`` flattened a heatmap's colour scale, and an empty occupancy drew an empty
image with matplotlib's singular-limits warning.
"""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pytest

from rltheory.plot import (
    convergence_plot,
    figure,
    occupancy_heatmap,
    png_bytes,
    save_figure,
    value_heatmap,
)


def _ax():
    fig, axes = figure()
    return fig, axes[0, 0]


@pytest.mark.parametrize("kwargs", [{}, {"logx": False, "logy": False}])
def test_empty_trace_is_refused(kwargs):
    _, ax = _ax()
    with pytest.raises(ValueError, match=r"convergence_plot\('gap'\): t and err are empty"):
        convergence_plot(ax, [], [], label="gap", **kwargs)


@pytest.mark.parametrize(
    ("t", "err", "bound", "message"),
    [
        ([1, 2, 3], [1.0, np.inf, 0.1], None, r"err[1] = inf is not finite (1 of 3 entries"),
        ([1, 2, 3], [1.0, 0.5, -np.inf], None, r"err[2] = -inf is not finite"),
        ([1, np.nan, 3], [1.0, 0.5, 0.1], None, r"t[1] = nan is not finite"),
        ([1, 2, np.inf], [1.0, 0.5, 0.1], None, r"t[2] = inf is not finite"),
        ([1, 2, 3], [1.0, 0.5, 0.1], [np.inf, 1.0, 0.5], r"bound[0] = inf is not finite"),
        ([1, 2], [np.nan, np.nan], None, r"err is NaN at all 2 points"),
        ([1, 2], [1.0, 0.5], [np.nan, np.nan], r"bound is NaN at all 2 points"),
    ],
)
@pytest.mark.parametrize("logs", [True, False])
def test_non_finite_series_are_located(t, err, bound, message, logs):
    _, ax = _ax()
    with pytest.raises(ValueError, match=re.escape(message)):
        convergence_plot(ax, t, err, bound=bound, label="gap", logx=logs, logy=logs)


def test_a_nan_is_a_gap_not_an_error():
    # documented: NaN marks a gap in the curve (e.g. a record without a measurement)
    fig, ax = _ax()
    convergence_plot(ax, [1, 2, 3], [1.0, np.nan, 0.25], bound=[2.0, 1.0, np.nan], label="gap")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png_bytes(fig)
    assert len(ax.get_lines()) == 2 and not ax.texts


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_value_heatmap_refuses_non_finite_values(bad):
    _, ax = _ax()
    with pytest.raises(ValueError, match=re.escape(f"V[2] = {float(bad)!r} is not finite")):
        value_heatmap(ax, [0.0, 1.0, bad, 3.0], (2, 2))


@pytest.mark.parametrize("shape", [(0, 2), (3, 0), (0,)])
def test_empty_occupancy_is_refused(shape):
    _, ax = _ax()
    with pytest.raises(ValueError, match=re.escape(f"d is empty (shape {shape})")):
        occupancy_heatmap(ax, np.zeros(shape))


def test_save_figure_writes_atomically_and_leaves_no_temporary(tmp_path, monkeypatch):
    fig, ax = _ax()
    convergence_plot(ax, [1, 2, 4], [1.0, 0.5, 0.25], label="gap")
    path = tmp_path / "fig.png"
    path.write_bytes(b"old figure")
    assert save_figure(fig, path) == path
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png"]
    # the new bytes reach the path by a rename of a complete file in the same folder
    renames = []
    real_replace = os.replace

    def spy(src, dst, *a, **k):
        renames.append((os.path.dirname(os.fspath(src)), os.fspath(dst)))
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", spy)
    save_figure(fig, tmp_path / "fig.svg")
    assert renames == [(str(tmp_path), str(tmp_path / "fig.svg"))]
    assert (tmp_path / "fig.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")


def test_save_figure_refuses_an_unknown_suffix_and_writes_nothing(tmp_path):
    fig, _ = _ax()
    with pytest.raises(ValueError, match=r"must end in one of .*\.png.*; got suffix '\.txt'"):
        save_figure(fig, tmp_path / "fig.txt")
    with pytest.raises(ValueError, match=r"got suffix ''"):
        save_figure(fig, tmp_path / "fig")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("t", "err", "bound", "message"),
    [
        (
            [[1, 2], [3, 4]],
            [1.0, 0.5, 0.25, 0.1],
            None,
            "t must be one series (shape (n,)); got shape (2, 2)",
        ),
        (
            [1, 2, 3, 4],
            np.ones((2, 2)),
            None,
            "err must be one series (shape (n,)); got shape (2, 2)",
        ),
        ([1, 2, 3, 4], [1.0, 0.5, 0.25, 0.1], np.ones((2, 2)), "bound must be one series"),
    ],
)
def test_two_dimensional_series_are_refused(t, err, bound, message):
    # they were flattened: a (2, 2) t against a length-4 err drew one zig-zag curve
    _, ax = _ax()
    with pytest.raises(ValueError, match=re.escape(message)):
        convergence_plot(ax, t, err, bound=bound, label="gap")


def test_column_and_row_vectors_are_one_series():
    fig, ax = _ax()
    convergence_plot(ax, np.array([[1], [2], [4]]), np.array([[1.0, 0.5, 0.25]]), label="gap")
    png_bytes(fig)
    assert list(ax.get_lines()[0].get_xdata()) == [1.0, 2.0, 4.0]
