"""Temperatures and value scales at the edge of the floating-point range.

Claims:

* ``check_temperature`` refuses a ``tau`` whose entropy bonus ``tau log|A|/(1 - gamma)`` (the
  value of the uniform policy's entropy alone) exceeds the dtype's largest number, naming
  ``tau``, for every entry point that takes ``tau``. Before, ``tau = 1e308`` with ``|A| = 10``,
  ``gamma = 0.5`` failed with ``OverflowError: cannot convert float infinity to integer`` (soft value
  iteration), ``R must be finite; R(s=0, a=0) = inf`` (the regularised evaluation's shifted
  reward, not the caller's ``R``) or ``tol must be a positive finite number; got inf``.
* Below that limit the soft values are certified: one state, equal rewards 0, ``|A|`` actions
  gives ``V*_tau = Q*_tau / gamma = tau log|A|/(1 - gamma)`` in closed form (the uniform policy is
  soft-optimal), and with ``tau = 1e307``, ``|A| = 10`` (``V* = 4.6e307``) the certificate was
  ``inf`` (its round-off allowance overflowed in an inner sum).
* One action: the soft maximum is exact (``V = Q``), so ``tau`` plays no part; ``tau = 1e308`` gave
  soft value iteration a bound ``inf``, ``converged=False`` and ``V = 1.5`` against the true
  ``r/(1 - gamma) = 2``.
* Values that cannot be represented (rewards ``1e308``, ``gamma = 0.5``) are refused by the drivers
  with a message about that scale, not "tol must be a positive finite number; got inf".
"""

import math
import warnings

import numpy as np
import pytest

from rltheory.algorithms.policy_gradient import softmax_gradient, softmax_policy_gradient
from rltheory.algorithms.regularized_npg import entropy_npg_step, entropy_regularized_npg
from rltheory.algorithms.soft import regularized_values, soft_bellman_operator, soft_value_iteration
from rltheory.bounds.policy_constants import entropy_npg_constant
from rltheory.mdp import FiniteMDP


def _model(A, dtype=np.float64, gamma=0.5, reward=0.0):
    return FiniteMDP(
        np.ones((1, A, 1), dtype=dtype), np.full((1, A), reward, dtype=dtype), gamma=gamma
    )


_ENTRY_POINTS = {
    "soft_value_iteration": lambda m, tau: soft_value_iteration(m, tau=tau),
    "regularized_values": lambda m, tau: regularized_values(
        m, np.full((1, m.A), 1.0 / m.A), tau=tau
    ),
    "soft_bellman_operator": lambda m, tau: soft_bellman_operator(m, np.zeros((1, m.A)), tau=tau),
    "entropy_npg_step": lambda m, tau: entropy_npg_step(
        m, np.full((1, m.A), 1.0 / m.A), eta=0.25 / tau, tau=tau
    ),
    "entropy_regularized_npg": lambda m, tau: entropy_regularized_npg(
        m, eta=0.25 / tau, tau=tau, iterations=1
    ),
    "softmax_policy_gradient": lambda m, tau: softmax_policy_gradient(
        m, eta=1e-3, tau=tau, iterations=1
    ),
    "softmax_gradient": lambda m, tau: softmax_gradient(m, np.zeros((1, m.A)), tau=tau),
    "entropy_npg_constant": lambda m, tau: entropy_npg_constant(m, eta=0.25 / tau, tau=tau),
}


@pytest.mark.parametrize("name", sorted(_ENTRY_POINTS))
@pytest.mark.parametrize(("dtype", "tau"), [(np.float64, 1e308), (np.float32, 1e38)])
def test_a_temperature_whose_entropy_bonus_overflows_is_refused(name, dtype, tau):
    mdp = _model(10, dtype)
    assert tau * math.log(10) / 0.5 > float(
        np.finfo(dtype).max
    )  # the case: tau itself is representable
    with pytest.raises(
        ValueError, match=r"tau=1e\+3(08|8) makes the entropy bonus .* exceed the largest number"
    ):
        _ENTRY_POINTS[name](mdp, tau)


@pytest.mark.parametrize(
    ("dtype", "tau", "tol"), [(np.float64, 1e307, 1e295), (np.float32, 1e37, 1e33)]
)
def test_soft_values_near_the_range_limit_are_certified(dtype, tau, tol):
    # one state, rewards 0: Q*_tau = gamma V*_tau and V*_tau = tau log|A| + gamma V*_tau, so
    # V*_tau = tau log|A|/(1 - gamma); tol is a few ulps of it
    mdp = _model(10, dtype)
    exact = tau * math.log(10) / 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converged, and no overflow on the way
        sol = soft_value_iteration(mdp, tau=tau, tol=tol)
    assert sol.converged
    bound = float(sol.bound[()])
    assert math.isfinite(bound) and bound <= tol
    assert (
        abs(float(sol.V[0]) - exact) <= bound + float(np.finfo(dtype).eps) * exact
    )  # V from Q, one more rounding
    np.testing.assert_allclose(
        np.asarray(sol.policy, dtype=np.float64), 0.1, rtol=4 * np.finfo(dtype).eps
    )


def test_one_action_makes_the_temperature_irrelevant():
    # A = 1: V = Q exactly and V* = r/(1 - gamma) = 2 for every tau
    mdp = _model(1, reward=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = soft_value_iteration(mdp, tau=1e308)
    assert sol.converged and float(sol.bound[()]) <= 1e-10
    assert abs(float(sol.V[0]) - 2.0) <= float(sol.bound[()])


def _two_state_model(reward):
    rng = np.random.default_rng(0)
    P = rng.random((2, 2, 2))
    P /= P.sum(-1, keepdims=True)
    return FiniteMDP(P, np.full((2, 2), reward), gamma=0.5)


def test_values_beyond_the_certificates_range_are_refused_with_their_scale():
    # rewards 1e308, gamma = 0.5: the values 2e308 are beyond float64
    with pytest.raises(
        ValueError, match=r"soft values' scale .* = inf \(max\|r\| = 1e\+308, tau=1.0\)"
    ):
        entropy_regularized_npg(_two_state_model(1e308), eta=0.5, tau=1.0, iterations=2)
