"""Networked gradients of large rewards: exact power-of-2 scaling, or a located range error.

Every exact networked quantity is linear in the local rewards, and multiplying them by a power
of 2 is exact in binary floating point, so ``f(2**k R) == 2**k f(R)`` bit for bit as long as
nothing leaves the float range (``2**(2k)`` for the squared truncation error). Where the exact
value does leave it, the functions must say so (function, quantity, ``max|r_j|``) instead of
returning ``inf``/``nan``.

Defects these tests pin (old code):
* ``truncated_policy_gradient(weights="uniform")`` summed ``Σ_outside Q_j`` before dividing by
  the count: ``inf``/``nan`` at ``R = 2**1020 R_SIS`` on a path of 3 although every ``Q_j`` and
  the exact truncated gradient (|entries| ≤ 5.5e306) are in range;
* ``agent_q_functions``/``networked_policy_gradient`` returned ``nan`` for local rewards of 1e308
  (``Q_j = r_j/(1−γ)`` overflows), and ``truncation_errors`` returned ``inf`` for
  ``R = 2**600 R_SIS`` (squared error ~ 1e359).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import (
    agent_q_functions,
    joint_mdp,
    networked_policy_gradient,
    sis_network,
    truncated_policy_gradient,
    truncation_errors,
)


def _setup():
    net = sis_network(nx.path_graph(3))
    rng = np.random.default_rng(1)
    th = [rng.normal(size=s) for s in net.theta_shapes()]
    return net, th, np.asarray(net.R_local)


@pytest.mark.parametrize("weights", ["uniform", "occupancy"])
@pytest.mark.parametrize("kappa", [0, 1, 2])
def test_truncated_gradient_scales_exactly_with_power_of_two_rewards(weights, kappa) -> None:
    net, th, R = _setup()
    a = truncated_policy_gradient(net, th, kappa, R, weights=weights)
    b = truncated_policy_gradient(net, th, kappa, 2.0**1020 * R, weights=weights)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        assert np.array_equal(2.0**1020 * np.asarray(x), np.asarray(y)), (i, y)


def test_exact_gradient_scales_exactly_with_power_of_two_rewards() -> None:
    net, th, R = _setup()
    a = networked_policy_gradient(net, th, R)
    b = networked_policy_gradient(net, th, 2.0**1020 * R)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(2.0**1020 * np.asarray(x), np.asarray(y))


def test_truncation_errors_scale_exactly_with_power_of_two_rewards() -> None:
    net, th, R = _setup()
    e = truncation_errors(net, th, [0, 1, 2], R)
    e2 = truncation_errors(net, th, [0, 1, 2], 2.0**500 * R)
    assert np.array_equal(e2, 2.0**1000 * e)
    assert e[0] > 0 and e[2] == 0.0  # κ = diam(path of 3) = 2: exact


def test_overflowing_q_functions_are_refused_located() -> None:
    net, th, R = _setup()
    big = np.full_like(R, 1e308)  # Q_j = r_j + γ P V_j ≈ 1e308 / (1 − 0.8) = 5e308
    for f in (agent_q_functions, networked_policy_gradient):
        with pytest.raises(
            ValueError,
            match=r"Q_j = r_j \+ gamma P V_j left the float64 range: max\|r_j\| = 1e\+308",
        ):
            f(net, th, big)
    with pytest.raises(ValueError, match=r"truncated_policy_gradient|agent_q_functions"):
        truncated_policy_gradient(net, th, 0, big)


def test_overflowing_squared_truncation_error_is_refused_located() -> None:
    net, th, R = _setup()
    with pytest.raises(
        ValueError,
        match=r"truncation_errors: the squared error \|\|g\^kappa - grad J\|\|\^2 \(kappa = 0\) left the float64",
    ):
        truncation_errors(net, th, [0, 1], 2.0**600 * R)


def test_joint_reward_overflow_is_refused_located() -> None:
    # two agents with local rewards 1e308: Σ_i r_i = 2e308 is beyond float64; the old message
    # was FiniteMDP's "R must be finite; R(s=0, a=0) = inf" (a joint R nobody passed)
    net = sis_network(nx.path_graph(2))
    big = np.full((2, 2, 2), 1e308)
    with pytest.raises(
        ValueError,
        match=r"joint_mdp: the joint reward sum_i r_i\(s_i, a_i\) left the float64 range",
    ):
        joint_mdp(net, big)
    # in range: the joint reward is the sum of the local ones, entry by entry (index s_0 s_1, a_0 a_1)
    half = np.full((2, 2, 2), 2.0**1022)
    half[1, 1, 0] = -(2.0**1022)
    R = np.asarray(joint_mdp(net, half).R)
    assert R[0, 0] == 2.0**1023 and R[1, 0] == 0.0 and R[3, 0] == 0.0  # agent 1 at s=1, a=0
