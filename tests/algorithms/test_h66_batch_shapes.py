"""Batch shapes that do not fit the model get a ValueError naming the argument.

``soft_bellman_operator`` takes ``Q`` of shape ``(..., S, A)``, its leading axes broadcast against
the model's batch shape (checked: a batch of three ``Q``'s on one model gives the three single
results). ``Q`` with 4 instances on a model with 3 failed inside numpy ("operands could not be
broadcast together with remapped shapes"). ``softmax_gradient`` with ``tau > 0`` and a batch of
logits on an unbatched model was refused as "pi must have shape ..." (a name the caller never
used); ``tau = 0`` accepts that batch (checked against the single calls).
"""

import numpy as np
import pytest

from rltheory.algorithms.policy_gradient import softmax_gradient
from rltheory.algorithms.soft import soft_bellman_operator
from rltheory.mdp import FiniteMDP


def _model(batch=()):
    rng = np.random.default_rng(0)
    P = rng.random(batch + (2, 2, 2))
    P /= P.sum(-1, keepdims=True)
    return FiniteMDP(P, rng.random(batch + (2, 2)), gamma=0.5)


def test_soft_bellman_operator_refuses_a_batch_of_the_wrong_size():
    Q = np.random.default_rng(1).random((4, 2, 2))
    with pytest.raises(
        ValueError, match=r"Q's leading axes \(4,\) must broadcast .* batch shape \(3,\)"
    ):
        soft_bellman_operator(_model((3,)), Q, tau=0.5)


def test_soft_bellman_operator_broadcasts_a_batch_of_q_over_one_model():
    mdp = _model()
    Q = np.random.default_rng(1).random((3, 2, 2))
    out = soft_bellman_operator(mdp, Q, tau=0.5)
    for i in range(3):
        np.testing.assert_array_equal(out[i], soft_bellman_operator(mdp, Q[i], tau=0.5))


def test_softmax_gradient_names_theta_for_a_batch_it_cannot_evaluate():
    theta = np.random.default_rng(2).normal(size=(3, 2, 2))
    with pytest.raises(
        ValueError, match=r"theta \(with tau > 0\) must have shape .* = \(2, 2\) .*got \(3, 2, 2\)"
    ):
        softmax_gradient(_model(), theta, tau=0.5)
    G = softmax_gradient(_model(), theta)  # tau = 0: a batch of policies on one model
    for i in range(3):
        np.testing.assert_array_equal(G[i], softmax_gradient(_model(), theta[i]))


def test_soft_reference_refuses_an_average_reward_model_by_name():
    # (TypeError "float() argument must be a string or a real number, not 'NoneType'" before)
    from rltheory.algorithms.soft import check_soft_reference, soft_reference

    avg = FiniteMDP(np.full((2, 2, 2), 0.5), np.array([[0.0, 1.0], [1.0, 0.0]]), gamma=None)
    with pytest.raises(
        ValueError, match=r"soft_reference needs a discounted model; got gamma=None"
    ):
        soft_reference(avg, tau=1.0)
    soft = soft_reference(_model(), tau=1.0)
    with pytest.raises(
        ValueError, match=r"check_soft_reference needs a discounted model; got gamma=None"
    ):
        check_soft_reference(avg, soft, 1.0)


@pytest.mark.parametrize("tau", [-1.0, float("nan"), "0.1"])
def test_temperature_error_refuses_a_bad_tau_by_name(tau):
    # (-1.0 gave 0.0 and nan gave nan without a word; '0.1' a TypeError about str and float)
    from rltheory.algorithms.temperature import rounded_temperature, temperature_error

    mdp = FiniteMDP(np.ones((1, 2, 1), np.float32), np.zeros((1, 2), np.float32), gamma=0.5)
    with pytest.raises(ValueError, match=r"tau must be a finite number > 0"):
        temperature_error(mdp, tau)
    with pytest.raises(ValueError, match=r"tau must be a finite number > 0"):
        rounded_temperature(mdp, tau)


def test_temperature_error_refuses_an_average_reward_model_by_name():
    from rltheory.algorithms.temperature import temperature_error

    avg = FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), gamma=None)
    with pytest.raises(
        ValueError, match=r"temperature_error needs a discounted model; got gamma=None"
    ):
        temperature_error(avg, 0.1)
