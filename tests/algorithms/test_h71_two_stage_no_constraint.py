"""two_stage_calibrated on a CMDP without constraints is refused by name, before any solve."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.constrained import two_stage_calibrated
from rltheory.mdp import ConstrainedMDP, FiniteMDP


def test_two_stage_calibrated_refuses_a_cmdp_without_constraints():
    # m = 0 used to fail inside the first two_stage_constrained_ac call with "weights must be 0 finite
    # non-negative numbers with a positive sum (shape (0,)); got array([], dtype=float64)", naming an
    # argument two_stage_calibrated's caller never passed
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    cmdp = ConstrainedMDP(mdp, np.zeros((0, 1, 2)), np.zeros(0))
    with pytest.raises(
        ValueError,
        match=r"two_stage_calibrated needs at least one constraint \(the CMDP has m = 0\)",
    ):
        two_stage_calibrated(cmdp)
