"""slater_slack (m > 1) solves the occupancy LP of the row-normalised model in float64.

Regression (helper-87's open item): the flow rows were built from a float32 ``P`` in float32,
so ``γP`` was rounded to ``float32(0.999) = 0.99900001``: on one state with two actions,
costs ``c₁ = (0, 1)``, ``c₂ = (1, 0)`` and ``b = (550, 550)`` the occupancy sums to
``1/(1 − γ) = 1000`` and ``ξ = 550 − 500 = 50`` exactly (at the uniform policy); it gave 49.995.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.constrained import slater_slack
from rltheory.mdp import ConstrainedMDP, FiniteMDP, solve_general_utility
from rltheory.mdp.utility import linear_utility


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_slater_slack_of_a_float32_model_is_exact(dtype):
    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=dtype), np.zeros((1, 2), dtype=dtype), gamma=0.999)
    C = np.array([[[0.0, 1.0]], [[1.0, 0.0]]], dtype=dtype)
    xi, pi = slater_slack(ConstrainedMDP(mdp, C, np.array([550.0, 550.0])))
    assert xi == pytest.approx(50.0, rel=1e-12, abs=0)
    np.testing.assert_allclose(pi, [[0.5, 0.5]], rtol=0, atol=1e-12)


def test_general_utility_value_of_a_float32_model_is_the_float64_one():
    # the normalised occupancy of one state sums to 1: F(d) = <r, d> is maximised at d = (0, 1)
    # for r = (0, 1) whatever gamma; the float32 polytope put its mass at 1 + 9.5e-6 (0.99900001)
    mdp = FiniteMDP(
        np.ones((1, 2, 1), dtype=np.float32), np.zeros((1, 2), dtype=np.float32), gamma=0.999
    )
    sol = solve_general_utility(mdp, linear_utility(np.array([[0.0, 1.0]])))
    assert float(sol.value) == pytest.approx(1.0, rel=1e-9, abs=0)
