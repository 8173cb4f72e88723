"""Boolean switches of the equilibrium solvers refuse anything but True / False.

``strict="no"`` is truthy: ``nash_equilibria`` raised DegenerateGameError where the caller asked for
a warning; ``coarse="no"`` made ``correlated_value_iteration`` solve the CCE programs (a larger set)
where the caller asked for a CE.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.games import MarkovGame, correlated_value_iteration, nash_equilibria
from rltheory.games.zoo import chicken


@pytest.mark.parametrize("flag", ["no", None, 0, 1.0, "False"])
def test_strict_must_be_a_bool(flag):
    A = np.array([[1.0, 1.0], [0.0, 2.0]])  # degenerate: against row 0 both columns are best
    with pytest.raises(ValueError, match=rf"^strict must be True or False; got {flag!r}$"):
        nash_equilibria(A, A, strict=flag)


@pytest.mark.parametrize("flag", ["no", None, 0, 1])
def test_coarse_must_be_a_bool(flag):
    g = MarkovGame(np.ones((1, 2, 2, 1)), chicken()[:, None], None)
    with pytest.raises(ValueError, match=rf"^coarse must be True or False; got {flag!r}$"):
        correlated_value_iteration(g, 1, coarse=flag)


def test_numpy_bools_are_switches():
    g = MarkovGame(np.ones((1, 2, 2, 1)), chicken()[:, None], None)
    ce = correlated_value_iteration(g, 1, coarse=np.False_)
    cce = correlated_value_iteration(g, 1, coarse=np.True_)
    # chicken: the welfare-maximal CE pays 5.25 each (Aumann 1974); CE ⊆ CCE, so the welfare-maximal
    # CCE pays at least as much in total
    assert ce.V[:, 0, 0] == pytest.approx([5.25, 5.25], abs=1e-9)
    assert cce.V[:, 0, 0].sum() >= ce.V[:, 0, 0].sum() - 1e-9
    eqs = nash_equilibria(np.eye(2), np.eye(2), strict=np.True_)
    assert len(eqs) == 3
