"""Networked MDPs: factored exact model vs the joint FiniteMDP, policy gradient, κ-hop truncation."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.networked import (
    NetworkedMDP,
    agent_q_functions,
    correlation_decay,
    joint_mdp,
    joint_policy,
    joint_transition_matrix,
    local_occupancies,
    local_softmax,
    neighborhoods,
    networked_occupancy,
    networked_policy_gradient,
    sis_network,
    truncated_policy_gradient,
    truncation_error,
)
from rltheory.bounds.constrained import truncation_envelope
from rltheory.errors import InvalidModelError
from rltheory.mdp import evaluate_policy, occupancy_measure, policy_transition_matrix, q_function
from rltheory.testing import networked_mdps


def _thetas(net: NetworkedMDP, seed: int, scale: float = 1.0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [scale * rng.normal(size=s) for s in net.theta_shapes()]


# --------------------------------------------------------------- consistency
@settings(max_examples=15, deadline=None)
@given(networked_mdps(max_agents=4), st.integers(0, 2**31))
def test_factored_model_matches_joint_finite_mdp(net, seed):
    """P_π, Q = Σ_j Q_j and d^π from the factored code equal the materialised joint model's."""
    th = _thetas(net, seed)
    J = joint_mdp(net)
    pi = joint_policy(net, th)
    np.testing.assert_allclose(
        joint_transition_matrix(net, th), policy_transition_matrix(J, pi), atol=1e-12
    )
    np.testing.assert_allclose(
        np.sum(agent_q_functions(net, th), axis=0), q_function(J, pi), atol=1e-9
    )
    np.testing.assert_allclose(networked_occupancy(net, th), occupancy_measure(J, pi), atol=1e-12)


@settings(max_examples=10, deadline=None)
@given(networked_mdps(max_agents=3), st.integers(0, 2**31))
def test_policy_gradient_equals_finite_differences(net, seed):
    """Policy-gradient theorem (Sutton et al. 2000) for the product of localized softmax policies."""
    th = _thetas(net, seed)
    J = joint_mdp(net)
    mu = net.initial_distribution()

    def value(t):
        return float(evaluate_policy(J, joint_policy(net, t)) @ mu)

    g = networked_policy_gradient(net, th)
    eps = 1e-6
    for i in range(net.n):
        for idx in np.ndindex(*th[i].shape):
            tp = [t.copy() for t in th]
            tm = [t.copy() for t in th]
            tp[i][idx] += eps
            tm[i][idx] -= eps
            fd = (value(tp) - value(tm)) / (2 * eps)
            assert abs(fd - g[i][idx]) <= 1e-6 * (1 + abs(fd))


@settings(max_examples=15, deadline=None)
@given(
    networked_mdps(max_agents=4), st.integers(0, 2**31), st.sampled_from(["uniform", "occupancy"])
)
def test_truncation_at_diameter_is_exact(net, seed, weights):
    """κ ≥ diam(G): N_i^κ holds every agent, so ĝ^κ = ∇J exactly (any weights)."""
    th = _thetas(net, seed)
    g = networked_policy_gradient(net, th)
    for kappa in (net.diameter, net.diameter + 1):
        h = truncated_policy_gradient(net, th, kappa, weights=weights)
        for a, b in zip(g, h, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-12)


def test_decoupled_agents_need_no_neighbours():
    """Reference: kernels depending on the own state only make Q_j a function of (s_j, a_j),
    so κ = 0 truncation (uniform weights) is already exact and no influence crosses an edge."""
    G = nx.path_graph(4)
    nb = neighborhoods(G, 1)
    rng = np.random.default_rng(3)
    Ps = []
    for i in range(4):
        own = rng.dirichlet(np.ones(2), size=(2, 2))  # P_i(s'|s_i, a_i)
        shape = (2,) * len(nb[i]) + (2, 2)
        Pi = np.empty(shape)
        k = nb[i].index(i)
        for idx in np.ndindex(*shape[:-2]):
            Pi[idx] = own[idx[k]]
        Ps.append(Pi)
    net = NetworkedMDP(G, tuple(Ps), rng.random((4, 2, 2)), 0.8)
    th = _thetas(net, 0)
    assert truncation_error(net, th, 0) < 1e-24
    d, delta = correlation_decay(net, th)
    assert delta[0] > 0 and np.all(delta[1:] < 1e-14)


def test_truncation_error_decays_geometrically_on_a_ring():
    """SIS ring: the error falls by a roughly constant factor per hop, below the φ^{2κ} envelope
    drawn through κ = 0 with φ measured independently by correlation_decay."""
    net = sis_network(nx.cycle_graph(6), gamma=0.8)
    th = _thetas(net, 1, 0.5)
    errs = np.array([truncation_error(net, th, k) for k in range(net.diameter + 1)])
    assert errs[-1] < 1e-24
    ratios = errs[1:-1] / errs[:-2]
    assert np.all(ratios < 0.5)
    d, delta = correlation_decay(net, th)
    phi = float(
        np.exp(np.mean(np.diff(np.log(delta[1:-1]))))
    )  # per-hop decay, away from the antipode
    assert 0 < phi < 1
    env = truncation_envelope(np.arange(net.diameter), phi=phi, c=errs[0])
    assert np.all(errs[:-1] <= env * 1.05)


def test_local_occupancies_are_marginals():
    net = sis_network(nx.path_graph(3))
    th = _thetas(net, 2)
    d = networked_occupancy(net, th)
    lam = local_occupancies(net, d)
    assert lam.shape == (3, 2, 2)
    np.testing.assert_allclose(lam.sum(axis=(1, 2)), 1.0, atol=1e-12)
    # the policy marginal of agent i's action given its own state is its local softmax (radius 0)
    pis = local_softmax(th)
    for i in range(3):
        np.testing.assert_allclose(lam[i] / lam[i].sum(-1, keepdims=True), pis[i], atol=1e-12)


def test_sis_reference_values():
    """γ = 0 and a single agent: Q = r, so ∇J = d(s) π(a|s)(r(s,a) − r_π(s)) with d = μ."""
    net = sis_network(nx.empty_graph(1), gamma=0.0, treat_cost=0.5)
    th = [np.zeros((2, 2))]
    g = networked_policy_gradient(net, th)[0]
    r = np.array([[0.0, -0.5], [-1.0, -1.5]])
    expected = 0.5 * 0.5 * (r - r.mean(axis=1, keepdims=True))
    np.testing.assert_allclose(g, expected, atol=1e-14)


def test_backends_agree(xp):
    net = sis_network(nx.path_graph(3), policy_radius=1)
    th = _thetas(net, 4)
    ref = joint_transition_matrix(net, th)
    import numpy as onp

    Ps = tuple(xp.asarray(onp.asarray(P)) for P in net.P_local)
    net2 = NetworkedMDP(net.graph, Ps, xp.asarray(onp.asarray(net.R_local)), net.gamma, None, 1)
    got = joint_transition_matrix(net2, [xp.asarray(t) for t in th])
    from rltheory.backend import to_numpy

    np.testing.assert_allclose(to_numpy(got), ref, atol=1e-12)


# ------------------------------------------------------------------ validation
def test_validation_messages():
    G = nx.path_graph(3)
    good = sis_network(G)
    with pytest.raises(InvalidModelError, match="labelled 0..n-1"):
        NetworkedMDP(nx.relabel_nodes(G, {0: 5}), good.P_local, good.R_local, 0.5)
    H = nx.Graph()
    H.add_nodes_from([0, 1])
    with pytest.raises(InvalidModelError, match="connected"):
        NetworkedMDP(H, good.P_local[:2], good.R_local[:2], 0.5)
    with pytest.raises(InvalidModelError, match=r"P_local\[1\] must have shape"):
        NetworkedMDP(G, (good.P_local[0], good.P_local[0], good.P_local[2]), good.R_local, 0.5)
    bad = np.array(good.P_local[0])
    bad[0, 0, 1, :] = [0.5, 0.6]
    with pytest.raises(InvalidModelError, match=r"P_local\[0\]"):
        NetworkedMDP(G, (bad,) + good.P_local[1:], good.R_local, 0.5)
    with pytest.raises(InvalidModelError, match="gamma"):
        NetworkedMDP(G, good.P_local, good.R_local, 1.0)
    with pytest.raises(InvalidModelError, match="R_local"):
        NetworkedMDP(G, good.P_local, good.R_local[:2], 0.5)
    th = _thetas(good, 0)
    with pytest.raises(ValueError, match=r"thetas\[1\] must have shape"):
        joint_policy(good, [th[0], np.zeros((3, 2)), th[2]])
    with pytest.raises(ValueError, match="kappa must be a non-negative integer; got -1"):
        truncated_policy_gradient(good, th, -1)
    with pytest.raises(ValueError, match="weights must be"):
        truncated_policy_gradient(good, th, 1, weights="bogus")


# ------------------------------------------------- validation outside the drawn ranges
def test_networked_mdp_accepts_numpy_gamma_and_radius() -> None:
    # np.float32 gamma / np.int64 policy_radius were rejected; the model must equal the Python-number one.
    base = sis_network(nx.path_graph(3), gamma=0.5, policy_radius=1)
    alt = sis_network(nx.path_graph(3), gamma=np.float32(0.5), policy_radius=np.int64(1))
    assert type(alt.gamma) is float and type(alt.policy_radius) is int
    assert alt.gamma == 0.5 and alt.policy_radius == 1
    th = _thetas(base, 0)
    np.testing.assert_array_equal(
        np.asarray(networked_occupancy(base, th)), np.asarray(networked_occupancy(alt, th))
    )


@pytest.mark.parametrize("gamma", [False, True, np.float64("nan"), 1.0])
def test_networked_mdp_rejects_bool_and_out_of_range_gamma(gamma) -> None:
    # gamma=False used to be accepted as a discount of 0.
    with pytest.raises(InvalidModelError, match="gamma must"):
        sis_network(nx.path_graph(2), gamma=gamma)
