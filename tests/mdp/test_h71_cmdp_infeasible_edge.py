"""The infeasibility diagnosis of solve_cmdp names a constraint infeasible by round-off alone."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.errors import SolverError
from rltheory.mdp import ConstrainedMDP, FiniteMDP, policy_iteration, solve_cmdp


@pytest.mark.parametrize("below", [1e-11, 1e-9])
def test_one_constraint_just_below_its_minimum_is_named_not_called_jointly_infeasible(below):
    # one constraint with b = min_π V_C(μ) − below (1.6e-12 .. 1.6e-10 relative): HiGHS finds the LP
    # infeasible, and the message said "each constraint is satisfiable alone, but not all at once",
    # false for a single constraint
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), (3, 2))
    mdp = FiniteMDP(P, rng.random((3, 2)), 0.9)
    C = rng.random((1, 3, 2))
    low = -float(np.mean(np.asarray(policy_iteration(mdp.replace(R=-C[0])).V)))
    with pytest.raises(SolverError, match=r"infeasible") as info:
        solve_cmdp(ConstrainedMDP(mdp, C, np.array([low - below])))
    msg = str(info.value)
    assert "not all at once" not in msg
    assert "min_π V_C0(μ) = 6.2312089957 equals b[0] = " in msg
    assert "at the edge of feasibility" in msg
