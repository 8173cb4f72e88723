"""value_heatmap / occupancy_heatmap: a (rows, cols) grid must be two integers >= 1."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.plot import figure, occupancy_heatmap, value_heatmap


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        # int(2.5) = 2: six values were drawn as a 2x3 image of a "2.5 x 3" grid
        ((2.5, 3), r"grid = \(2\.5, 3\): rows must be an integer >= 1; got 2\.5"),
        # True was read as 1 row
        ((True, 6), r"grid = \(True, 6\): rows must be an integer >= 1; got True"),
        # numpy's reshape failed: "can only specify one unknown dimension"
        ((-2, -3), r"grid = \(-2, -3\): rows must be an integer >= 1; got -2"),
        ((6, 0), r"grid = \(6, 0\): cols must be an integer >= 1; got 0"),
        ((2, 3, 1), r"grid must be a GridWorld or a \(rows, cols\) pair; got \(2, 3, 1\)"),
        ("23", r"grid must be a GridWorld or a \(rows, cols\) pair; got '23'"),
    ],
)
def test_a_grid_that_is_not_two_positive_integers_is_refused(grid, message):
    _, axes = figure()
    with pytest.raises(ValueError, match=message):
        value_heatmap(axes[0, 0], np.arange(6.0), grid)
    with pytest.raises(ValueError, match=message):
        occupancy_heatmap(axes[0, 0], np.ones(6), grid=grid)


def test_numpy_integer_shapes_still_place_the_states():
    # state s at divmod(s, cols): V = 0..5 on a 2x3 grid is the image [[0, 1, 2], [3, 4, 5]]
    _, axes = figure()
    ax = value_heatmap(axes[0, 0], np.arange(6.0), np.array([2, 3]))
    np.testing.assert_array_equal(ax.images[0].get_array(), np.arange(6.0).reshape(2, 3))
