"""Start vectors of the average-reward solvers must broadcast to the model's batch: ``v0`` of
relative value iteration and ``pi0`` of policy iteration with a batch shape that does not fit got
numpy's "operands could not be broadcast together with remapped shapes" or "input operand has more
dimensions than allowed by the axis remapping", naming neither the argument nor the model's batch."""

import re

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP
from rltheory.mdp.average import average_policy_iteration, relative_value_iteration

P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.1, 0.9]]])
R = np.array([[1.0, 0.0], [0.0, 2.0]])
BATCH = FiniteMDP(np.stack([P, P, P]), np.stack([R, 2 * R, 3 * R]), gamma=None)


@pytest.mark.parametrize(
    "lead, mdp", [((2,), BATCH), ((4, 3), BATCH), ((2,), FiniteMDP(P, R, gamma=None))]
)
def test_start_vectors_that_do_not_broadcast_are_named(lead, mdp):
    where = f"batch shape {lead} does not broadcast to the model's batch shape {mdp.batch_shape}"
    with pytest.raises(
        ValueError, match=re.escape(f"v0's {where} (one start vector per instance)")
    ):
        relative_value_iteration(mdp, v0=np.zeros(lead + (2,)))
    with pytest.raises(
        ValueError, match=re.escape(f"pi0's {where} (one start policy per instance)")
    ):
        average_policy_iteration(mdp, pi0=np.zeros(lead + (2,), dtype=int))


@pytest.mark.parametrize("lead", [(), (1,), (3,)])
def test_start_vectors_that_broadcast_are_taken(lead):
    # g* = μᵀr of the policy (1, 1): μ = (1/9, 8/9), g* = 16/9 per unit of reward scale (instances
    # scale R by 1, 2, 3), whatever the start
    g_star = 16.0 / 9.0 * np.array([1.0, 2.0, 3.0])
    rvi = relative_value_iteration(BATCH, v0=np.zeros(lead + (2,)), tol=1e-10)
    assert np.all(np.abs(np.asarray(rvi.gain) - g_star) <= np.asarray(rvi.bound) / 2)
    pi = average_policy_iteration(BATCH, pi0=np.zeros(lead + (2,), dtype=int))
    np.testing.assert_allclose(pi.gain, g_star, rtol=1e-14)
    np.testing.assert_array_equal(pi.policy, np.ones((3, 2), dtype=int))
