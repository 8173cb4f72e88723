"""The unichain average-reward LP reports the gain of the policy it returns.

It reported ``min(Σ r x*, min_s g^π(s))``; HiGHS's ``x*`` meets the flow rows only to its absolute
tolerance 1e-10, so where transitions of probability ~1e-10 set the stationary law, ``Σ r x*`` fell
below the returned policy's own gain: 2.1e-8 below ``g* = 1/2`` on a two-state chain, while policy
iteration (the same policy) gave 1/2 exactly. ``g^π ≤ g*`` holds for every policy, so the policy's
gain alone is the lower bound the docstring promises.

Outside the support ``S_x`` of ``x*`` the policy moved one breadth-first layer closer to ``S_x``,
through a transition of probability 1e-11 if need be; where ``S_x`` leaked back to that state below
HiGHS's tolerance, the two shared a recurrent class and the policy's gain was 1/2 with ``g* ≈ 1``.
The completion now minimises the expected time to reach ``S_x``.
"""

import itertools

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP
from rltheory.mdp.average import average_linear_program, average_policy_iteration
from rltheory.mdp.average_lp_completion import _fastest_reach_actions

U = 2.0**-53


@pytest.mark.parametrize("eps", [1e-10, 1e-11])
@pytest.mark.parametrize("r", [(1.0, 0.0), (0.7888401509005519, 0.47814407701591455)])
def test_symmetric_two_state_chain_with_a_rare_switch(eps, r):
    # one action; each state switches w.p. eps: by symmetry μ = (1/2, 1/2), g* = (r0 + r1)/2.
    # Old: gain 2.07e-8 (r = (1, 0)) and 6.4e-9 below g*, from x* = (0.49999998, 0.50000002)
    P = np.array([[[1 - eps, eps]], [[eps, 1 - eps]]])
    mdp = FiniteMDP(P, np.array(r)[:, None], gamma=None)
    g_star = (r[0] + r[1]) / 2
    lp = average_linear_program(mdp)
    assert float(lp.gain) == pytest.approx(g_star, rel=4 * U, abs=0)
    assert abs(float(lp.gain) - g_star) <= float(lp.bound)  # its certificate (Odoni) still holds
    pi = average_policy_iteration(mdp)
    assert float(lp.gain) == pytest.approx(float(pi.gain), rel=4 * U, abs=0)


@pytest.mark.parametrize("eps", [1e-11, 1e-12])
def test_policy_outside_the_lp_support_reaches_it_fastest(eps):
    # weakly communicating: state 0 (reward 1) stays under a0 but leaks to 1 w.p. eps; state 1's a0
    # goes back to 0 w.p. eps only, its a1 reaches 0 through 2 in about 4 steps. g* = 1 − O(eps) by
    # the policy (0, 1, 0). HiGHS's x* sits on state 0 (the leak is below its 1e-10 tolerance), and
    # the breadth-first completion took a0 at state 1 (one step from 0): the returned policy
    # (0, 0, 0) had gain 1/2 (μ = (1/2, 1/2, 0)), bound 1.25e10, converged=True (old code)
    P = np.zeros((3, 2, 3))
    P[0, 0] = [1 - eps, eps, 0.0]
    P[0, 1] = [0.5, 0.0, 0.5]
    P[1, 0] = [eps, 1 - eps, 0.0]
    P[1, 1] = [0.0, 0.5, 0.5]
    P[2, :] = [0.5, 0.5, 0.0]
    R = np.array([[1.0, 0.2], [0.0, 0.6], [0.3, 0.3]])
    mdp = FiniteMDP(P, R, gamma=None)
    lp = average_linear_program(mdp)
    np.testing.assert_array_equal(lp.policy, [0, 1, 0])
    pi = average_policy_iteration(mdp)  # (its evaluation of the same policy)
    np.testing.assert_array_equal(pi.policy, lp.policy)
    assert float(lp.gain) == pytest.approx(float(pi.gain), rel=8 * U, abs=0)
    assert float(lp.gain) > 1 - 10 * eps
    assert float(lp.bound) <= 1e-12


@pytest.mark.parametrize("seed", range(40))
def test_fastest_reach_actions_minimise_the_expected_hitting_time(seed):
    # SSP optimality (Bertsekas & Tsitsiklis 1991): the returned completion's expected times to reach
    # the target are the componentwise minimum over every proper deterministic completion (brute force)
    rng = np.random.default_rng(seed)
    S, A = int(rng.integers(2, 5)), int(rng.integers(1, 4))
    P = rng.random((S, A, S)) * (rng.random((S, A, S)) < 0.5)
    P[..., 0] += 1e-3 * rng.random((S, A))  # every state reaches state 0 (in the target)
    P /= P.sum(-1, keepdims=True)
    target = rng.random(S) < 0.4
    target[0] = True
    out = np.flatnonzero(~target)
    if out.size == 0:
        return

    def times(actions):
        Q = P[out][:, :, out][np.arange(out.size), actions]
        return np.linalg.solve(np.eye(out.size) - Q, np.ones(out.size))

    best = np.min(
        [times(np.array(a)) for a in itertools.product(range(A), repeat=out.size)], axis=0
    )
    act = _fastest_reach_actions(P, target)
    assert np.all(act[out] >= 0)
    np.testing.assert_allclose(times(act[out]), best, rtol=1e-9)
