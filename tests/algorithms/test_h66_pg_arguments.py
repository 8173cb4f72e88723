"""Arguments of softmax PG and of the entropy-regularised PG constants, at their edges.

* ``softmax_policy_gradient``: a ``theta0`` with more leading axes than the model's batch shape
  failed inside numpy ("input operand has more dimensions than allowed by the axis remapping");
  now a ``ValueError`` naming ``theta0`` and both shapes. A ``soft`` reference with ``tau = 0``, or a
  ``V_star`` with ``tau > 0``, was silently ignored (the gap was measured against the other
  objective's optimum); now each is refused.
* ``entropy_npg_constant``: a ``pi0`` that is not a policy was reported as ``pi`` (the name inside
  ``regularized_values``); now as ``pi0``.
* ``entropy_pg_step_size`` (Mei et al. 2020, Thm 6: ``(1 - gamma)^3/(8 + tau(4 + 8 log|A|))``) returned
  0.0 at ``tau = 1.5e308`` (the denominator overflowed) where the step is 7.0e-310; and
  ``entropy_pg_bound`` returned ``inf`` (with a RuntimeWarning) where its prefactor overflows but
  the bound, times ``exp(-C(t - 1))``, is a float64 number. Reference values: mpmath at 40 digits.
"""

import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from rltheory.algorithms.policy_gradient import softmax_policy_gradient
from rltheory.algorithms.soft import soft_reference
from rltheory.bounds.policy_optimization import (
    entropy_npg_constant,
    entropy_pg_bound,
    entropy_pg_step_size,
)
from rltheory.mdp import FiniteMDP


def _model(batch=()):
    rng = np.random.default_rng(0)
    P = rng.random(batch + (2, 2, 2))
    P /= P.sum(-1, keepdims=True)
    return FiniteMDP(P, rng.random(batch + (2, 2)), gamma=0.5)


def test_theta0_with_more_instances_than_the_model_is_refused_by_name():
    with pytest.raises(
        ValueError, match=r"theta0 must have shape .* = \(2, 2\) .*; got \(3, 2, 2\)"
    ):
        softmax_policy_gradient(_model(), eta=0.1, iterations=1, theta0=np.zeros((3, 2, 2)))
    with pytest.raises(
        ValueError, match=r"theta0 must have shape .* = \(4, 2, 2\) .*; got \(3, 2, 2\)"
    ):
        softmax_policy_gradient(_model((4,)), eta=0.1, iterations=1, theta0=np.zeros((3, 2, 2)))


def test_theta0_that_broadcasts_is_still_accepted():
    # one theta0 for every instance, or one per instance: both start the run at the same policy
    mdp = _model((3,))
    theta0 = np.array([[0.3, -0.2], [1.0, 0.0]])
    a = softmax_policy_gradient(mdp, eta=0.1, iterations=2, theta0=theta0)
    b = softmax_policy_gradient(
        mdp, eta=0.1, iterations=2, theta0=np.broadcast_to(theta0, (3, 2, 2))
    )
    c = softmax_policy_gradient(mdp, eta=0.1, iterations=2, theta0=theta0[None])
    np.testing.assert_array_equal(a.theta, b.theta)
    np.testing.assert_array_equal(a.theta, c.theta)


def test_a_reference_for_the_other_objective_is_refused():
    mdp = _model()
    with pytest.raises(
        ValueError, match=r"soft is the reference of the entropy-regularised objective"
    ):
        softmax_policy_gradient(mdp, eta=0.1, iterations=1, soft=soft_reference(mdp, tau=1.0))
    with pytest.raises(ValueError, match=r"V_star is the unregularised optimum .* got tau=1.0"):
        softmax_policy_gradient(mdp, eta=0.1, tau=1.0, iterations=1, V_star=np.zeros(2))


def test_entropy_npg_constant_names_pi0():
    with pytest.raises(ValueError, match=r"pi0\[s, :\] must sum to 1.*\(s=0\) sums to 1.1"):
        entropy_npg_constant(_model(), eta=0.1, tau=1.0, pi0=np.array([[0.5, 0.6], [0.5, 0.5]]))


def test_entropy_pg_step_size_at_a_huge_temperature():
    mp.mp.dps = 40
    tau = 1.5e308
    exact = 1 / (mp.mpf(tau) * (4 + 8 * mp.log(2)) + 8)  # gamma = 0
    step = entropy_pg_step_size(gamma=0.0, tau=tau, n_actions=2)
    # a subnormal: two roundings of about 5e-324 each, relative 1e-14 at 7e-310
    assert step > 0 and abs(mp.mpf(step) - exact) <= 1e-12 * exact


def test_entropy_pg_bound_past_an_overflowing_prefactor():
    # (1 + tau log 2)/(1 - gamma)^2 = 2.77e308 is beyond float64; times exp(-C(t - 1)) it is not
    mp.mp.dps = 40
    tau, g, c, t = 1e308, 0.5, 0.5, np.array([1, 1000, 5000])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = entropy_pg_bound(t, gamma=g, tau=tau, n_actions=2, c=c, mismatch=1.0, inv_mu=1.0)
    C = (1 - mp.mpf(g)) ** 4 / (8 / mp.mpf(tau) + 4 + 8 * mp.log(2)) * mp.mpf(c) ** 2
    exact = [
        (1 + mp.mpf(tau) * mp.log(2)) / (1 - mp.mpf(g)) ** 2 * mp.exp(-C * (int(k) - 1)) for k in t
    ]
    assert exact[0] > mp.mpf(np.finfo(np.float64).max) and b[0] == math.inf
    # in logs: the log (about 709) carries eps-relative errors, so 1e-12 relative on the value
    for k in (1, 2):
        assert abs(mp.mpf(float(b[k])) - exact[k]) <= 1e-12 * exact[k]
