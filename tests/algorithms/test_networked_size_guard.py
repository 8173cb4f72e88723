"""The exact joint functions of the networked model refuse models whose dense joint arrays are too large.

Regression: ``joint_policy(sis_network(nx.path_graph(33)), thetas)`` failed inside numpy with the
unlocated "maximum supported dimension for an ndarray is currently 64, found 66", and at n = 15 agents
with two local states ``P_π`` alone needed 8.6 GB (2^30 float64 entries). Now one located
``ValueError`` names the function, the number of agents, of joint states and actions, the memory and
the cap ``MAX_JOINT_BYTES``. Every refusal here happens before any joint array exists: instant.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms import networked as nw
from rltheory.algorithms import networked_joint as nj
from rltheory.algorithms.networked import NetworkedMDP, sis_network


def _thetas(net):
    return [np.zeros(s) for s in net.theta_shapes()]


CALLS = {
    "joint_policy": lambda net, th: nw.joint_policy(net, th),
    "joint_transition_matrix": lambda net, th: nw.joint_transition_matrix(net, th),
    "joint_mdp": lambda net, th: nw.joint_mdp(net),
    "agent_q_functions": lambda net, th: nw.agent_q_functions(net, th),
    "networked_occupancy": lambda net, th: nw.networked_occupancy(net, th),
    "networked_policy_gradient": lambda net, th: nw.networked_policy_gradient(net, th),
    "truncated_policy_gradient": lambda net, th: nw.truncated_policy_gradient(net, th, 1),
    "truncation_errors": lambda net, th: nw.truncation_errors(net, th, [0, 1]),
    "truncation_error": lambda net, th: nw.truncation_error(net, th, 1),
    "correlation_decay": lambda net, th: nw.correlation_decay(net, th),
    "local_occupancies": lambda net, th: nw.local_occupancies(net, np.zeros((1, 1))),
}


def test_the_cap_is_a_documented_module_constant():
    assert nj.MAX_JOINT_BYTES == 2**31 and nw.MAX_JOINT_BYTES is nj.MAX_JOINT_BYTES
    assert "MAX_JOINT_BYTES" in nj.__all__ and "MAX_JOINT_BYTES" in nw.__all__


@pytest.mark.parametrize("name", list(CALLS))
def test_33_agents_are_refused_with_a_located_error(name):
    net = sis_network(nx.path_graph(33))
    # 2^33 joint states and actions: π alone has 2^66 float64 entries, 2^69 = 5.9e20 bytes
    match = (
        rf"^{name}: the exact joint computation of a networked model with n = 33 agents, "
        r"S_l\^n = 2\^33 = 8589934592 joint states and A_l\^n = 2\^33 = 8589934592 joint actions is too large: "
        r"the largest, .* would need [0-9.]+e\+[23][0-9] bytes .*over the cap MAX_JOINT_BYTES = 2\*\*31"
    )
    with pytest.raises(ValueError, match=match):
        CALLS[name](net, _thetas(net))


@pytest.mark.parametrize(
    ("name", "n", "what", "nbytes"),
    [
        # P_π is S^n × S^n = 2^30 float64 entries at n = 15: 2^33 = 8589934592 bytes = 8.59e9
        ("joint_transition_matrix", 15, r"P_π \(S_l\^n × S_l\^n\)", "8.59e\\+09"),
        ("correlation_decay", 15, r"P_π \(S_l\^n × S_l\^n\)", "8.59e\\+09"),
        # all agents' Q-functions at n = 13: 13 · 2^13 · 2^13 · 8 bytes = 6979321856 = 6.98e9
        ("agent_q_functions", 13, r"Q_j of every agent", "6.98e\\+09"),
        ("truncation_errors", 13, r"Q_j of every agent", "6.98e\\+09"),
        # the joint kernel at n = 10: 2^20 · 2^10 · 8 bytes = 2^33 = 8.59e9
        ("joint_mdp", 10, r"P\(s'\|s, a\)", "8.59e\\+09"),
    ],
)
def test_the_memory_of_the_largest_array_is_named(name, n, what, nbytes):
    net = sis_network(nx.path_graph(n))
    with pytest.raises(
        ValueError,
        match=rf"^{name}: .* n = {n} agents, .*the largest, {what}.* would need {nbytes} bytes",
    ):
        CALLS[name](net, _thetas(net))


@pytest.mark.parametrize(
    ("name", "n_max"),
    # the largest n accepted with S_l = A_l = 2 in float64 (the cap is per array, 2^31 bytes):
    # P_π: 8·4^n ≤ 2^31 ⇔ n ≤ 14; π: the same; Q_j: 8·n·4^n ≤ 2^31 ⇔ n ≤ 12 (13·2^29 > 2^31);
    # joint_mdp: 8·8^n ≤ 2^31 ⇔ n ≤ 9
    [
        ("joint_policy", 14),
        ("joint_transition_matrix", 14),
        ("correlation_decay", 14),
        ("networked_occupancy", 14),
        ("agent_q_functions", 12),
        ("truncation_errors", 12),
        ("joint_mdp", 9),
    ],
)
def test_the_threshold_follows_the_cap(name, n_max):
    nj._check_joint_size(
        sis_network(nx.path_graph(n_max)), name
    )  # accepted: no array is built here
    with pytest.raises(ValueError, match=rf"^{name}: .*n = {n_max + 1} agents"):
        nj._check_joint_size(sis_network(nx.path_graph(n_max + 1)), name)


def test_float32_models_have_twice_the_entries():
    # float32 P_π at n = 15: 2^30 entries · 4 bytes = 2^32 > 2^31, refused; at n = 14, 2^28 · 4 = 2^30, accepted
    def net32(n):
        net = sis_network(nx.path_graph(n))
        return net.replace(
            P_local=tuple(np.asarray(p, dtype=np.float32) for p in net.P_local),
            R_local=np.asarray(net.R_local, dtype=np.float32),
        )

    nj._check_joint_size(net32(14), "joint_transition_matrix")
    with pytest.raises(ValueError, match=r"would need 4.29e\+09 bytes \(4-byte entries"):
        nj._check_joint_size(net32(15), "joint_transition_matrix")


def test_more_axes_than_numpy_supports_are_refused():
    # one local state and one action: every joint array has one entry, but the joint tensors have one
    # axis per agent and numpy allows 64 (2n = 66 at n = 33; joint_mdp's 3n = 66 at n = 22)
    def trivial(n):
        G = nx.path_graph(n)
        P = tuple(np.ones((1,) * len(list(G.neighbors(i))) + (1, 1, 1)) for i in range(n))
        return NetworkedMDP(G, P, np.zeros((n, 1, 1)), 0.5)

    net = trivial(33)
    with pytest.raises(
        ValueError,
        match=r"^joint_policy: .*n = 33 agents, S_l\^n = 1\^33 = 1 joint states.*66 axes",
    ):
        nw.joint_policy(net, _thetas(net))
    with pytest.raises(
        ValueError,
        match=r"^joint_mdp: .*n = 22 agents.*66 axes \(one per agent\), over numpy's limit of 64",
    ):
        nw.joint_mdp(trivial(22))
    # in range: a one-entry joint policy of 32 agents (64 axes) is computed
    net = trivial(32)
    np.testing.assert_array_equal(nw.joint_policy(net, _thetas(net)), [[1.0]])


def test_local_occupancies_names_the_occupancy_array():
    # the refusal comes before d's shape is checked: d would be 2^66 entries at n = 33
    net = sis_network(nx.path_graph(33))
    with pytest.raises(
        ValueError, match=r"^local_occupancies: .*the largest, d\(s, a\) \(S_l\^n × A_l\^n\)"
    ):
        nw.local_occupancies(net, np.zeros((1, 1)))


def test_huge_counts_are_written_without_overflow():
    # 2^2000 does not fit a float: the count is written in scientific notation from its digits
    assert nj._count(2, 2000) == "2^2000 ≈ 1.14e+602"
    assert nj._count(3, 5) == "3^5 = 243"


def test_small_models_are_unchanged():
    # n = 3: the guard accepts, and the joint policy is still the product of the local ones (here uniform)
    net = sis_network(nx.path_graph(3))
    np.testing.assert_allclose(
        nw.joint_policy(net, _thetas(net)), np.full((8, 8), 1 / 8), rtol=1e-15
    )
