"""Deterministic policies on batched models (bellman helpers)."""

import numpy as np
import pytest

from rltheory.mdp import (
    bellman_optimality_operator,
    evaluate_policy,
    expected_next,
    policy_reward,
    policy_transition_matrix,
    q_values,
    random_mdp,
)


@pytest.mark.parametrize("f", [policy_transition_matrix, policy_reward, evaluate_policy])
def test_one_deterministic_policy_on_a_batch_of_models(f):
    # an int[S] policy on a (4,)-batch crashed in numpy's broadcast_to ('input operand has more
    # dimensions than allowed by the axis remapping'); its one-hot [S, A] form worked
    m = random_mdp(3, 2, gamma=0.5, rng=0, batch_shape=(4,))
    det = np.array([0, 1, 0])
    out = f(m, det)
    np.testing.assert_allclose(out, f(m, np.eye(2)[det]), rtol=0, atol=1e-15)
    for i in range(4):  # = the policy on each instance alone
        np.testing.assert_allclose(out[i], f(m[i], det), rtol=0, atol=1e-15)
    # a batch of policies on the batch of models broadcasts: (2, 1) x (4,) -> (2, 4)
    many = f(m, np.stack([det, 1 - det])[:, None, :])
    assert many.shape[:2] == (2, 4)
    np.testing.assert_allclose(many[1, 2], f(m[2], 1 - det), rtol=0, atol=1e-15)


def test_a_policy_batch_that_does_not_broadcast_is_named():
    m = random_mdp(3, 2, gamma=0.5, rng=0, batch_shape=(4,))
    with pytest.raises(ValueError, match=r"pi's batch shape \(3,\) does not broadcast against the model's batch shape \(4,\)"):
        evaluate_policy(m, np.zeros((3, 3), dtype=int))


@pytest.mark.parametrize("f", [policy_transition_matrix, policy_reward, evaluate_policy])
def test_a_stochastic_policy_batch_that_does_not_broadcast_is_named(f):
    # a (3, S, A) policy on a (4,)-batch failed inside numpy's matmul / multiply ('operands could
    # not be broadcast together with remapped shapes ...'), naming neither pi nor the model
    m = random_mdp(3, 2, gamma=0.5, rng=0, batch_shape=(4,))
    with pytest.raises(ValueError, match=r"pi's batch shape \(3,\) does not broadcast against the model's batch shape \(4,\)"):
        f(m, np.full((3, 3, 2), 0.5))
    assert f(m, np.full((2, 1, 3, 2), 0.5)).shape[:2] == (2, 4)  # (2, 1) x (4,) broadcasts


@pytest.mark.parametrize("f", [q_values, expected_next, bellman_optimality_operator])
def test_a_value_batch_that_does_not_broadcast_is_named(f):
    # a (4, S) V on a (3,)-batch failed inside numpy's matmul ('operands could not be broadcast
    # together with remapped shapes ...'), naming neither V nor the model
    m = random_mdp(2, 2, gamma=0.5, rng=0, batch_shape=(3,))
    with pytest.raises(ValueError, match=r"V's batch shape \(4,\) does not broadcast against the model's batch shape \(3,\)"):
        f(m, np.ones((4, 2)))
    assert f(m, np.ones((4, 1, 2))).shape[:2] == (4, 3)
