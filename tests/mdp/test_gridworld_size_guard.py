"""gridworld refuses a grid whose dense transition array is beyond MAX_GRID_P_BYTES, at once.

``gridworld(3000)`` (9e6 cells, a 2.6e15-byte P) looped over its cells in Python for minutes
before numpy could refuse the array (reported by helper-52 for the CLI, which now has its own
cap; the library function had none).
"""

import numpy as np
import pytest

from rltheory.mdp.gridworlds import MAX_GRID_P_BYTES, cliff_walking, gridworld


def test_cap_is_a_documented_constant():
    assert MAX_GRID_P_BYTES == 2**33


def test_a_huge_grid_is_refused_before_any_work():
    with pytest.raises(
        ValueError,
        match=r"^a 3000x3000 grid has S = 9000000 states: .* 2\.59e\+15 bytes, more than MAX_GRID_P_BYTES = 2\*\*33",
    ):
        gridworld(3000)


def test_walls_are_not_states():
    walls = [(0, c) for c in range(10)]
    with pytest.raises(ValueError, match=r"^a 200x200 grid has S = 39990 states"):
        gridworld(200, walls=walls)


def test_just_above_the_cap_is_refused_and_small_grids_build():
    with pytest.raises(
        ValueError, match=r"S = 16512 states"
    ):  # 129 x 128 cells: 16512^2 * 32 bytes > 2**33
        gridworld((129, 128))
    g = gridworld(4, walls=[(1, 1)])
    assert g.mdp.S == 15 and np.allclose(np.asarray(g.mdp.P).sum(-1), 1.0)
    assert cliff_walking().mdp.S == 48
