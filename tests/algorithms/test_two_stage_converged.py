"""two_stage_constrained_ac reports whether its soft value iterations were certified.

Regression: with ``tol=1e-300`` (below soft VI's round-off floor ~1e-13) both soft value iterations
stopped at their caps with a ConvergenceWarning, and the result carried no flag: a capped run was
returned as if certified.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms import two_stage_calibrated, two_stage_constrained_ac
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import ConstrainedMDP, FiniteMDP


def _cmdp():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=(3, 2))
    return ConstrainedMDP(
        FiniteMDP(P, rng.random((3, 2)), 0.9), rng.random((1, 3, 2)), np.array([8.0])
    )


def test_capped_soft_value_iteration_gives_converged_false():
    with pytest.warns(ConvergenceWarning, match="soft_value_iteration stopped"):
        res = two_stage_constrained_ac(_cmdp(), weights=[1.0], tol=1e-300)
    assert res.converged is False


def test_certified_runs_give_converged_true():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = two_stage_constrained_ac(_cmdp(), weights=[1.0])
        cal = two_stage_calibrated(_cmdp(), bisections=3)
    assert res.converged is True and cal.converged is True
