"""Values beyond the float range in the Bellman helpers and backward induction: a located error.

Exact references: one absorbing state with reward ``r`` has ``V^π = r/(1−γ)``, and a horizon-H
model paying ``r`` per step has ``V_0 = H·r``. Powers of 2 keep every product exact, so the
largest representable cases are solved to the last bit and the next power of 2 is refused.
"""

import numpy as np
import pytest

from rltheory.mdp import (
    FiniteHorizonMDP,
    FiniteMDP,
    advantage,
    backward_induction,
    evaluate_finite_horizon,
    evaluate_policy,
    performance_difference,
    q_function,
    q_values,
)

BIG = 2.0**1022  # the float64 maximum is (2 - 2^-52)·2^1023


def _one_state(r, gamma):
    return FiniteMDP(np.ones((1, 2, 1)), np.array([[r, 0.0]]), gamma=gamma)


def test_values_at_the_edge_of_the_range_are_exact():
    m = _one_state(BIG, 0.5)  # V^π = 2^1023, Q(·, 1) = 0 + 0.5·2^1023
    assert evaluate_policy(m, np.array([0]))[0] == 2.0**1023
    np.testing.assert_array_equal(q_function(m, np.array([0])), [[2.0**1023, 2.0**1022]])
    np.testing.assert_array_equal(advantage(m, np.array([0])), [[0.0, -(2.0**1022)]])
    fh = FiniteHorizonMDP.stationary(np.ones((1, 1, 1)), np.array([[BIG]]), H=3)
    sol = backward_induction(fh)
    np.testing.assert_array_equal(sol.V[:, 0], [3 * BIG, 2 * BIG, BIG, 0.0])
    np.testing.assert_array_equal(evaluate_finite_horizon(fh, np.zeros((3, 1), dtype=int))[:, 0], [3 * BIG, 2 * BIG, BIG, 0.0])


@pytest.mark.parametrize(
    "call",
    [
        lambda m: evaluate_policy(m, np.array([0])),
        lambda m: q_function(m, np.array([0])),
        lambda m: advantage(m, np.array([0])),
        lambda m: performance_difference(m, np.array([1]), np.array([0])),
    ],
    ids=["evaluate_policy", "q_function", "advantage", "performance_difference"],
)
def test_discounted_values_beyond_the_range_are_refused(call):
    # V^π = 2^1024 (reward 2^1023, gamma 0.5) was returned as inf, and performance_difference
    # as nan after 'invalid value encountered in subtract'
    m = _one_state(2.0**1023, 0.5)
    with pytest.raises(ValueError, match=r"evaluate_policy: the values V\^pi left the float64 range: max\|R\| = 8\.988e\+307 "
                                         r"at gamma = 0\.5 .*first non-finite entry \(s=0\) = inf\. .*divide R by a power of 2"):
        call(m)


def test_q_values_beyond_the_range_are_refused():
    # Q_V = r + γ P V = 2^1023 + 2^1023 overflowed to inf silently
    m = _one_state(2.0**1023, 0.5)
    with pytest.raises(ValueError, match=r"q_values: Q_V = r \+ gamma P V left the float64 range: .*first non-finite entry \(s=0, a=0\) = inf"):
        q_values(m, np.array([np.finfo(np.float64).max]))
    np.testing.assert_array_equal(q_values(m, np.array([BIG])), [[2.0**1023 + 2.0**1021, 2.0**1021]])


def test_backward_induction_beyond_the_range_is_refused():
    # V_0 = 4·2^1022 = 2^1024: overflow warnings, V = inf and a policy read off infinite ties
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[BIG, 0.0]]), H=4)
    with pytest.raises(ValueError, match=r"backward_induction: Q_h left the float64 range: max\|R\| = 4\.494e\+307 over H = 4 steps .*"
                                         r"first non-finite entry \(h=0, s=0, a=0\) = inf"):
        with np.errstate(all="raise"):  # no overflow warning on the way to the located error
            backward_induction(fh)
    with pytest.raises(ValueError, match=r"evaluate_finite_horizon: V\^pi_h left the float64 range"):
        with np.errstate(all="raise"):
            evaluate_finite_horizon(fh, np.zeros((4, 1), dtype=int))


def test_a_batch_names_the_instance_that_overflows():
    P = np.ones((2, 1, 1, 1))
    m = FiniteMDP(P, np.array([[[1.0]], [[2.0**1023]]]), gamma=0.5)
    with pytest.raises(ValueError, match=r"range \(batch index \(1,\)\): max\|R\| = 8\.988e\+307 .*\(s=0\) = inf"):
        evaluate_policy(m, np.ones((2, 1, 1)))
    # a batch of policies on one model: the policy's batch index, the model's max|R|
    one = FiniteMDP(P[1], np.array([[2.0**1023]]), gamma=0.5)
    with pytest.raises(ValueError, match=r"range \(batch index \(0,\)\): max\|R\| = 8\.988e\+307"):
        evaluate_policy(one, np.zeros((3, 1), dtype=int))
