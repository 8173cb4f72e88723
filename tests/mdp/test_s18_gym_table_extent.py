"""from_gymnasium refuses table entries outside the declared spaces (helper-83's open item).

Regression: a table with a row for state S (observation_space.n = S) or an entry for action A
(action_space.n = A) was read for states 0..S-1 and actions 0..A-1 only, the rest dropped
without a word, so the model was not the table's.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp.interop import from_gymnasium

pytest.importorskip("gymnasium")


class _TableEnv:
    def __init__(self, table, S, A):
        from gymnasium.spaces import Discrete

        self.P = table
        self.observation_space = Discrete(S)
        self.action_space = Discrete(A)


OK = {0: {0: [(1.0, 1, 1.0, False)]}, 1: {0: [(1.0, 0, 0.0, False)]}}


def test_a_state_beyond_the_observation_space_is_refused():
    table = {**OK, 2: {0: [(1.0, 0, 5.0, False)]}}
    with pytest.raises(
        InvalidModelError,
        match=r"env\.P has an entry for state 2, outside env\.observation_space \(S=2",
    ):
        from_gymnasium(_TableEnv(table, 2, 1), gamma=0.9)
    rows = [[[(1.0, 1, 1.0, False)]], [[(1.0, 0, 0.0, False)]], [[(1.0, 0, 5.0, False)]]]  # lists
    with pytest.raises(InvalidModelError, match=r"entry for state 2, outside"):
        from_gymnasium(_TableEnv(rows, 2, 1), gamma=0.9)


def test_an_action_beyond_the_action_space_is_refused():
    table = {
        0: {0: [(1.0, 1, 1.0, False)], 1: [(1.0, 0, 9.0, False)]},
        1: {0: [(1.0, 0, 0.0, False)]},
    }
    with pytest.raises(
        InvalidModelError,
        match=r"env\.P\[0\] has an entry for action 1, outside env\.action_space \(A=1",
    ):
        from_gymnasium(_TableEnv(table, 2, 1), gamma=0.9)
    with pytest.raises(InvalidModelError, match=r"env\.P\[1\] has an entry for action 'x'"):
        from_gymnasium(_TableEnv({0: OK[0], 1: {0: OK[1][0], "x": []}}, 2, 1), gamma=0.9)


def test_a_table_within_its_spaces_is_read_as_before():
    m = from_gymnasium(_TableEnv(OK, 2, 1), gamma=0.9)
    np.testing.assert_array_equal(m.P[:, 0], [[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(m.R[:, 0], [1.0, 0.0])
