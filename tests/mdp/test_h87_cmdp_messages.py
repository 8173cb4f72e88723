"""solve_cmdp's infeasibility diagnosis prints a zero minimum as 0, not −0.

The minimum ``min_π V_C(μ)`` is computed as the negated maximum of ``−C``; for a zero cost that is
``−0.0``, and the message read "min_π V_C0(μ) = -0 > b[0] = -1e-300".
"""

import numpy as np
import pytest

from rltheory.errors import SolverError
from rltheory.mdp import ConstrainedMDP, FiniteMDP, solve_cmdp

P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.1, 0.9]]])
R = np.array([[1.0, 0.0], [0.0, 2.0]])


@pytest.mark.parametrize("gamma", [0.9, None])
def test_zero_cost_below_a_negative_threshold_is_reported_as_zero(gamma):
    # C = 0 gives V_C = 0 under every policy, so b = −1e-300 < 0 is infeasible, and nothing else is
    cmdp = ConstrainedMDP(FiniteMDP(P, R, gamma), np.zeros((1, 2, 2)), np.array([-1e-300]))
    with pytest.raises(SolverError, match=r"min_π V_C0\(μ\) = 0 > b\[0\] = -1e-300$") as e:
        solve_cmdp(cmdp)
    assert "-0 " not in str(e.value)
