"""Networked MDPs and the safe networked primal-dual method outside the drawn ranges:
blocks of zero occupancy, empty local spaces, graphs with other labels, text arguments."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import (
    NetworkedMDP,
    agent_q_functions,
    correlation_decay,
    joint_mdp,
    joint_policy,
    joint_transition_matrix,
    local_occupancies,
    neighborhoods,
    networked_occupancy,
    networked_policy_gradient,
    sis_network,
    truncated_policy_gradient,
    truncation_error,
    truncation_errors,
)
from rltheory.algorithms.networked_pd import (
    SafeNetworkedProblem,
    lagrangian_gradient,
    local_critics,
    networked_primal_dual,
    sample_rollouts,
    sampled_truncated_gradient,
)
from rltheory.errors import InvalidModelError
from rltheory.mdp.utility import entropy_utility, linear_utility


# ------------------------------------------------------------------ zero-occupancy blocks
def _healthy_forever(n: int = 3, gamma: float = 0.5):
    """SIS with ``infect = 0`` started all healthy: the joint state stays 0 forever, so every
    κ-hop block with an infected agent has occupancy exactly 0."""
    net = sis_network(nx.path_graph(n), gamma=gamma, infect=0.0, treat_cost=0.5)
    return net.replace(mu_local=np.tile([1.0, 0.0], (n, 1)))


def test_occupancy_weighted_truncation_is_finite_on_blocks_never_visited():
    # Closed form: d(s, a) = 1[s = 0] π(a | 0), r_j(0, a_j) = -c a_j (c = 1/2), uniform π, so
    # Q_j(0, a) = -c a_j + γ V_j(0) depends on a_j only and every truncation is exact:
    # ĝ_i[0, b] = π(b)(Q_i(0, b) - Σ_a π(a) Q_i(0, a)) / (1-γ) = 1/2 (-c b + c/2) / (1-γ)
    # = ±1/4 at γ = 1/2, and ĝ_i[1, :] = 0 (state 1 is never visited).
    # Old: the occupancy-weighted Q̃_j was 0/0 = nan on the blocks with s_j = 1, and d·nan made
    # agent i's whole row 1 of ĝ_i nan (truncation_errors: [nan, nan, 0]).
    net = _healthy_forever()
    th = [np.zeros(s) for s in net.theta_shapes()]
    expected = np.array([[0.25, -0.25], [0.0, 0.0]])
    for gi in networked_policy_gradient(net, th):
        np.testing.assert_allclose(gi, expected, rtol=0, atol=1e-15)
    for kappa in range(net.diameter + 1):
        for weights in ("uniform", "occupancy"):
            for gi in truncated_policy_gradient(net, th, kappa, weights=weights):
                np.testing.assert_allclose(gi, expected, rtol=0, atol=1e-15)
    errs = truncation_errors(net, th, range(net.diameter + 1), weights="occupancy")
    assert np.all(np.isfinite(errs)) and np.all(errs <= 1e-30)


def test_safe_primal_dual_below_the_diameter_runs_on_blocks_never_visited():
    # lagrangian_gradient(kappa < diam) uses the occupancy weights: old nan rows, and
    # networked_primal_dual(kappa=0) then stopped with "thetas[0] must be finite" at t = 1.
    net = _healthy_forever(n=2)
    f = linear_utility(np.asarray(net.R_local)[0])
    C = np.array([[0.0, 0.0], [1.0, 1.0]])
    pb = SafeNetworkedProblem(net, [f, f], [linear_utility(C)] * 2, np.full(2, 0.3))
    th = [np.zeros(s) for s in net.theta_shapes()]
    exact, _, _ = lagrangian_gradient(pb, th, np.zeros(2))
    trunc, _, _ = lagrangian_gradient(pb, th, np.zeros(2), kappa=0)
    for a, b in zip(trunc, exact, strict=True):  # Q_j depends on (s_j, a_j) only: exact truncation
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)
    res = networked_primal_dual(pb, iterations=3, kappa=0, eta_theta=1.0, eta_mu=1.0, Lambda=1.0)
    assert all(np.all(np.isfinite(t)) for t in res.thetas)
    np.testing.assert_allclose(res.trace["grad_error"], 0.0, rtol=0, atol=1e-28)


# ------------------------------------------------------------------ empty local spaces
@pytest.mark.parametrize(("S", "A"), [(2, 0), (0, 2), (0, 0)])
def test_empty_local_state_or_action_spaces_are_refused(S, A):
    # Old: accepted (the empty kernels are vacuously stochastic); A_l = 0 then failed in
    # local_softmax with numpy's "zero-size array to reduction operation maximum".
    with pytest.raises(
        InvalidModelError,
        match=r"R_local must have S_l >= 1 local states and A_l >= 1 local "
        rf"actions; got shape \(1, {S}, {A}\)",
    ):
        NetworkedMDP(nx.path_graph(1), (np.full((S, A, S), 0.5),), np.zeros((1, S, A)), 0.5)


def test_one_local_state_and_one_local_action_are_models():
    # S_l = A_l = 1 on a triangle: one joint state and action, Q_j = r_j/(1-γ), and a zero gradient.
    net = NetworkedMDP(
        nx.complete_graph(3),
        (np.ones((1, 1, 1, 1, 1)),) * 3,
        np.array([[[1.0]], [[2.0]], [[-3.0]]]),
        0.75,
    )
    th = [np.zeros(s) for s in net.theta_shapes()]
    np.testing.assert_allclose(
        np.asarray(agent_q_functions(net, th))[:, 0, 0], [4.0, 8.0, -12.0], rtol=1e-15
    )
    assert all(np.all(np.asarray(g) == 0.0) for g in networked_policy_gradient(net, th))


# ------------------------------------------------------------------ graph inputs
def test_graphs_with_other_labels_get_located_errors():
    lettered = nx.relabel_nodes(nx.path_graph(3), {0: "a", 1: "b", 2: "c"})
    # old: networkx.NodeNotFound 'Source 0 is not in G' from inside neighborhoods
    with pytest.raises(
        InvalidModelError, match=r"graph nodes must be labelled 0..n-1 \(n=3\); got node 'a'"
    ):
        sis_network(lettered)
    with pytest.raises(
        ValueError, match=r"graph nodes must be labelled 0..n-1 \(n=3\); got node 'a'"
    ):
        neighborhoods(lettered, 1)
    mixed = nx.Graph(
        [(0, "x")]
    )  # old: TypeError "'<' not supported between instances of 'str' and 'int'"
    net = sis_network(nx.path_graph(2))
    with pytest.raises(
        InvalidModelError, match=r"graph nodes must be labelled 0..n-1 \(n=2\); got node 'x'"
    ):
        NetworkedMDP(mixed, net.P_local, net.R_local, 0.5)
    # old: AttributeError "'str' object has no attribute 'number_of_nodes'"
    with pytest.raises(
        InvalidModelError, match=r"graph must be an undirected networkx\.Graph; got str"
    ):
        sis_network("path")
    with pytest.raises(TypeError, match=r"graph must be a networkx\.Graph; got list"):
        neighborhoods([(0, 1)], 1)
    H = nx.Graph()
    H.add_nodes_from(range(3))
    H.add_edge(0, 1)
    with pytest.raises(InvalidModelError, match="graph must be connected; got 2 components"):
        sis_network(H)
    with pytest.raises(InvalidModelError, match="graph must have at least one node"):
        sis_network(nx.empty_graph(0))


def test_self_loops_and_multi_edges_do_not_change_the_neighbourhoods():
    # N_i^1 of a self-loop is still {i} ∪ neighbours: the model (kernels, gradient) is the plain path's.
    base = sis_network(nx.path_graph(3), policy_radius=1)
    looped = nx.MultiGraph(nx.path_graph(3))
    looped.add_edges_from([(0, 0), (1, 2)])
    other = sis_network(looped, policy_radius=1)
    assert other.diameter == base.diameter == 2
    th = [np.random.default_rng(0).normal(size=s) for s in base.theta_shapes()]
    for a, b in zip(
        networked_policy_gradient(other, th), networked_policy_gradient(base, th), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# ------------------------------------------------------------------ text and non-sequences
def test_text_and_non_sequence_arguments_get_located_errors():
    net = sis_network(nx.path_graph(3))
    P, R = net.P_local, np.asarray(net.R_local)
    th = [np.zeros(s) for s in net.theta_shapes()]
    # old: "inputs come from different array libraries: str is not a supported array type"
    with pytest.raises(TypeError, match=r"R_local must hold real numbers; got text 'abc'"):
        NetworkedMDP(net.graph, P, "abc", 0.5)
    with pytest.raises(TypeError, match=r"P_local\[1\] must hold real numbers; got text 'x'"):
        NetworkedMDP(net.graph, (P[0], "x", P[2]), R, 0.5)
    with pytest.raises(TypeError, match=r"mu_local must hold real numbers; got a string array"):
        NetworkedMDP(net.graph, P, R, 0.5, mu_local=[["a", "b"]] * 3)
    with pytest.raises(TypeError, match=r"P_local must be a sequence of n local kernels; got int"):
        NetworkedMDP(net.graph, 3, R, 0.5)  # old: "object of type 'int' has no len()"
    # old: "input must hold real numbers; got a string array" (no field)
    with pytest.raises(TypeError, match=r"thetas\[1\] must hold real numbers; got a string array"):
        networked_policy_gradient(net, [th[0], [["a", "b"]] * 2, th[2]])
    with pytest.raises(TypeError, match=r"R_agents must hold real numbers; got a string array"):
        agent_q_functions(net, th, np.full((3, 2, 2), "1"))
    with pytest.raises(TypeError, match=r"thetas must be a sequence of n=3 arrays; got generator"):
        networked_policy_gradient(
            net, (t for t in th)
        )  # old: "object of type 'generator' has no len()"
    f = linear_utility(np.zeros((2, 2)))
    # old: "could not convert string to float: 'abc'" (no field)
    with pytest.raises(
        TypeError, match=r"b must be a real array of shape \(n,\) = \(3,\); got 'abc'"
    ):
        SafeNetworkedProblem(net, [f] * 3, [f] * 3, "abc")
    with pytest.raises(
        TypeError, match=r"objectives must be a sequence of n=3 OccupancyFunction; got int"
    ):
        SafeNetworkedProblem(net, 5, [f] * 3, np.zeros(3))  # old: "'int' object is not iterable"
    with pytest.raises(
        TypeError, match=r"constraints must be a sequence of n=3 OccupancyFunction; got Occ"
    ):
        SafeNetworkedProblem(net, [f] * 3, f, np.zeros(3))
    pb = SafeNetworkedProblem(net, [f] * 3, [f] * 3, np.zeros(3))
    with pytest.raises(
        TypeError, match=r"mu must be a real array of shape \(n,\) = \(3,\); got 'abc'"
    ):
        lagrangian_gradient(pb, th, "abc")
    with pytest.raises(ValueError, match=r"mu must be a finite array of shape \(n,\) = \(3,\)"):
        lagrangian_gradient(pb, th, [0.0, np.nan, 0.0])


def test_local_occupancies_need_the_joint_shape():
    net = sis_network(nx.path_graph(2))  # S_l = A_l = 2, n = 2: d has shape (4, 4)
    rng = np.random.default_rng(0)
    d = rng.random((4, 4))
    lam = np.asarray(local_occupancies(net, d))
    # reference: agent 0 is the most significant digit of the joint index
    T = d.reshape(2, 2, 2, 2)  # (s_0, s_1, a_0, a_1)
    np.testing.assert_allclose(lam[0], T.sum(axis=(1, 3)), rtol=1e-15)
    np.testing.assert_allclose(lam[1], T.sum(axis=(0, 2)), rtol=1e-15)
    # old: numpy's "cannot reshape array of size 12 into shape (2,2,2,2)"
    with pytest.raises(
        ValueError, match=r"d must have the joint shape \(S_l\^n, A_l\^n\) = \(4, 4\); got \(3, 4\)"
    ):
        local_occupancies(net, d[:3])
    # old: accepted, reshaped without a check: a transposed d (A_l^n, S_l^n) gave wrong marginals silently
    one = NetworkedMDP(nx.path_graph(1), (np.full((3, 2, 3), 1 / 3),), np.zeros((1, 3, 2)), 0.5)
    with pytest.raises(
        ValueError, match=r"d must have the joint shape .* = \(3, 2\); got \(2, 3\)"
    ):
        local_occupancies(one, np.full((3, 2), 1 / 6).T)
    with pytest.raises(ValueError, match=r"d must have the joint shape .* got \(16,\)"):
        local_occupancies(net, d.ravel())
    d[1, 2] = np.nan  # old: nan marginals
    with pytest.raises(ValueError, match=r"d must be finite; d\(s=1, a=2\) = nan"):
        local_occupancies(net, d)


def test_a_model_that_is_not_networked_is_refused_by_name():
    # old: AttributeError "'FiniteMDP' object has no attribute 'theta_shapes'" (or '... no attribute xp/graph/net')
    net = sis_network(nx.path_graph(2))
    flat = joint_mdp(net)
    th = [np.zeros(s) for s in net.theta_shapes()]
    d = np.asarray(networked_occupancy(net, th))
    s, a, g = np.zeros((2, 2), int), np.zeros((2, 2), int), np.zeros((2, 2))
    calls = [
        lambda m: joint_policy(m, th),
        lambda m: joint_transition_matrix(m, th),
        lambda m: joint_mdp(m),
        lambda m: agent_q_functions(m, th),
        lambda m: networked_occupancy(m, th),
        lambda m: local_occupancies(m, d),
        lambda m: networked_policy_gradient(m, th),
        lambda m: truncated_policy_gradient(m, th, 0),
        lambda m: truncation_errors(m, th, [0]),
        lambda m: truncation_error(m, th, 0),
        lambda m: correlation_decay(m, th),
        lambda m: sample_rollouts(m, th, 2, 0),
        lambda m: local_critics(m, s, a, g, 0),
        lambda m: sampled_truncated_gradient(m, th, s, a, g, 0),
    ]
    for call in calls:
        with pytest.raises(TypeError, match="net must be a NetworkedMDP; got FiniteMDP"):
            call(flat)
    with pytest.raises(TypeError, match="problem must be a SafeNetworkedProblem; got NetworkedMDP"):
        lagrangian_gradient(net, th, np.zeros(2))


def test_a_utility_without_a_finite_gradient_is_named():
    # The entropy's gradient -log λ - 1 is +inf where λ_i(s_i, a_i) = 0 (state 1 never visited).
    # old: "R_agents must be finite; R_agents(i=0, s_i=1, a_i=0) = inf", an argument never passed.
    net = _healthy_forever(n=2)
    C = np.array([[0.0, 0.0], [1.0, 1.0]])
    pb = SafeNetworkedProblem(
        net, [entropy_utility(2, 2)] * 2, [linear_utility(C)] * 2, np.full(2, 0.3)
    )
    th = [np.zeros(s) for s in net.theta_shapes()]
    with pytest.raises(
        ValueError,
        match=r"objectives\[0\] \(entropy\) has no finite gradient at lambda_0: "
        r"gradient\(s_i=1, a_i=0\) = inf at lambda_0\(s_i=1, a_i=0\) = 0\.0",
    ):
        lagrangian_gradient(pb, th, np.zeros(2))


# ------------------------------------------------------------------ tolerance of accepted models
def test_a_model_accepted_within_tolerance_has_a_valid_joint_model():
    # Local rows summing to 1 - 2.3e-8 pass the check (1e-8 (1 + sqrt 2)); the joint rows are products
    # of 3 of them, 1 - 6.9e-8, beyond the joint model's 1e-8 (1 + sqrt 8): old joint_mdp raised
    # "each P[s, a, :] must sum to 1 ... sums to 0.999999931" (mu likewise), and d summed to 1 - 6.9e-8.
    base = sis_network(nx.path_graph(3))
    eps = 2.3e-8
    net = NetworkedMDP(
        base.graph,
        tuple(np.asarray(P) * (1 - eps) for P in base.P_local),
        base.R_local,
        0.8,
        np.full((3, 2), 0.5 * (1 - eps)),
    )
    th = [np.random.default_rng(1).normal(size=s) for s in net.theta_shapes()]
    J = joint_mdp(net)
    np.testing.assert_allclose(np.asarray(J.P).sum(axis=-1), 1.0, rtol=0, atol=1e-15)
    assert abs(float(np.sum(networked_occupancy(net, th))) - 1.0) <= 1e-14
    # the accepted rows are divided by their sums: the model is the exact one's (a change within the tolerance)
    for a, b in zip(
        networked_policy_gradient(net, th), networked_policy_gradient(base, th), strict=True
    ):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)
