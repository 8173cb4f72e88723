"""Edge inputs of the actor-critic, networked, networked primal-dual and hybrid modules:
extreme discounts and reward scales, located errors, and the stopping rule on the first iterate."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.actor_critic import LSTDCritic, TDCritic, natural_actor_critic
from rltheory.algorithms.hybrid import hybrid_actor_critic, hybrid_npg
from rltheory.algorithms.networked import (
    agent_q_functions,
    joint_mdp,
    joint_policy,
    networked_policy_gradient,
    sis_network,
    truncation_errors,
)
from rltheory.algorithms.networked_pd import local_critics, sampled_truncated_gradient
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteHorizonMDP, evaluate_policy
from rltheory.mdp.bellman import _q_values
from rltheory.mdp.zoo import random_mdp


# ------------------------------------------------------------------ hybrid: stopping rule at t = 0
@pytest.mark.parametrize("method", [hybrid_npg, hybrid_actor_critic])
@pytest.mark.parametrize("iterations", [0, 5])
def test_hybrid_initial_policy_within_tol_is_converged_after_zero_updates(method, iterations):
    # one state, r = (0, 1), H = 2: V*_0 = 2 and the uniform pi_0 earns 2 * 1/2 = 1, a gap of 1.0 <= tol
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the old code warned at iterations=0
        res = method(fh, np.eye(2).reshape(1, 2, 2), None, iterations=iterations, n_online=5, eta=1.0, rng=0, tol=1.5)
    assert res.trace["suboptimality"].tolist() == [1.0]
    assert res.converged is True and res.iterations == 0  # old: False (iterations=0) or 1 update
    np.testing.assert_array_equal(res.policy, np.full((2, 1, 2), 0.5))


# ------------------------------------------------------------------ networked: exactness at extremes
@pytest.mark.parametrize("graph", [nx.path_graph(1), nx.star_graph(3), nx.complete_graph(3)])
@pytest.mark.parametrize("gamma", [1e-8, 0.999])
@pytest.mark.parametrize("scale", [1e-12, 1e9])
def test_factored_q_and_diameter_truncation_are_exact_at_extreme_discounts_and_scales(graph, gamma, scale):
    net = sis_network(graph, gamma=gamma, policy_radius=1)
    rng = np.random.default_rng(0)
    R = scale * rng.normal(size=(net.n, 2, 2))
    th = [3.0 * rng.normal(size=s) for s in net.theta_shapes()]
    jm = joint_mdp(net, R)
    Q_joint = np.asarray(_q_values(jm, evaluate_policy(jm, np.asarray(joint_policy(net, th)))))
    Q = np.asarray(agent_q_functions(net, th, R)).sum(axis=0)
    # |Q| <= max|r|/(1-gamma); one solve of I - gamma P_pi loses ~cond = 1/(1-gamma) = 1e3 digits' worth
    assert np.abs(Q - Q_joint).max() <= 1e-12 * np.abs(Q_joint).max()
    g2 = sum(float(np.sum(np.asarray(gi) ** 2)) for gi in networked_policy_gradient(net, th, R))
    for weights in ("uniform", "occupancy"):  # kappa >= diam(G): N_i^kappa is every agent, zero truncation
        err = truncation_errors(net, th, [net.diameter, net.diameter + 2], R, weights=weights)
        assert np.all(err <= 1e-24 * max(g2, 1e-300))


def test_networked_inputs_are_validated_with_located_errors():
    net = sis_network(nx.path_graph(3))
    th = [np.zeros(s) for s in net.theta_shapes()]
    bad = [t.copy() for t in th]
    bad[1][1, 1] = np.nan
    # old: NaN gradients and occupancies returned silently
    with pytest.raises(ValueError, match=r"thetas\[1\] must be finite; thetas\[1\]\(x=1, a_i=1\) = nan"):
        networked_policy_gradient(net, bad)
    # old: IndexError 'index 2 is out of bounds for axis 0 with size 2'
    with pytest.raises(ValueError, match=r"R_agents must have shape \(n, S_l, A_l\) = \(3, 2, 2\); got \(2, 2, 2\)"):
        agent_q_functions(net, th, np.zeros((2, 2, 2)))
    R = np.zeros((3, 2, 2))
    R[2, 1, 0] = np.inf
    with pytest.raises(ValueError, match=r"R_agents must be finite; R_agents\(i=2, s_i=1, a_i=0\) = inf"):
        truncation_errors(net, th, [1], R)
    with pytest.raises(ValueError, match=r"R_agents must have shape"):
        joint_mdp(net, np.zeros((3, 2)))


def test_local_critic_samples_are_validated_with_located_errors():
    net = sis_network(nx.path_graph(3))
    th = [np.zeros(s) for s in net.theta_shapes()]
    s, a, g = np.zeros((4, 3), int), np.zeros((4, 3), int), np.zeros((4, 3))
    s_big = s.copy()
    s_big[1, 2] = 5  # old: landed in another block's bin / past the table end, NaN critics silently
    with pytest.raises(ValueError, match=r"states entries must lie in \[0, 2\); states\[1, 2\] = 5"):
        local_critics(net, s_big, a, g, 1)
    a_neg = a.copy()
    a_neg[3, 0] = -1  # old: "'list' argument must have no negative elements" from np.bincount
    with pytest.raises(ValueError, match=r"actions entries must lie in \[0, 2\); actions\[3, 0\] = -1"):
        sampled_truncated_gradient(net, th, s, a_neg, g, 1)
    with pytest.raises(ValueError, match="states must be an integer array"):
        local_critics(net, s.astype(float) + 0.5, a, g, 1)
    with pytest.raises(ValueError, match=r"at least one sample \(K >= 1\); got K = 0"):  # old: all-NaN gradient
        sampled_truncated_gradient(net, th, s[:0], a[:0], g[:0], 1)
    g_nan = g.copy()
    g_nan[0, 1] = np.nan
    with pytest.raises(ValueError, match=r"returns must be finite; returns\[0, 1\] = nan"):
        local_critics(net, s, a, g_nan, 0)
    with pytest.raises(ValueError, match="kappa must be a non-negative integer; got -1"):
        local_critics(net, s, a, g, -1)


# ------------------------------------------------------------------ actor-critic: sample-based critics
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the diverging TD critic's last finite w
def test_sample_based_critics_validate_steps_seeds_and_sample_counts():
    mdp = random_mdp(4, 3, gamma=0.8, rng=1)
    f = np.eye(12).reshape(4, 3, 12)
    kw = dict(eta=0.1, iterations=2)
    # old: "pi must be finite; pi(s=0, a=0) = nan", an actor step after the critic blew up
    with pytest.raises(ValueError, match=r"TDCritic.step_size must return a finite step >= 0; step_size\(0\) = nan"):
        natural_actor_critic(mdp, f, critic=TDCritic(samples=20, step_size=lambda k: float("nan")), rng=0, **kw)
    with pytest.raises(ValueError, match=r"TDCritic diverged: the critic weights overflowed at sample k=\d+"):
        natural_actor_critic(mdp, f, critic=TDCritic(samples=500, step_size=lambda k: 50.0), rng=0, **kw)
    with pytest.raises(TypeError, match="step_size must be a callable"):  # old: "'float' object is not callable"
        TDCritic(samples=5, step_size=0.1)
    # old: True was seed 1 and 1.5 failed inside SeedSequence without naming rng
    for seed in (True, 1.5):
        with pytest.raises(TypeError, match="rng must be a numpy.random.Generator or an int seed"):
            natural_actor_critic(mdp, f, critic=LSTDCritic(samples=20), rng=seed, **kw)
    # numpy integers count like ints (old: 'samples must be an integer >= 1; got np.int64(50)')
    assert LSTDCritic(samples=np.int64(50)).samples == 50 and TDCritic(samples=np.int32(7)).samples == 7
    a = natural_actor_critic(mdp, f, critic=LSTDCritic(samples=np.int64(50)), rng=np.int64(4), **kw)
    b = natural_actor_critic(mdp, f, critic=LSTDCritic(samples=50), rng=4, **kw)
    np.testing.assert_array_equal(a.trace["suboptimality"], b.trace["suboptimality"])


def test_exact_critic_nac_equals_npg_after_a_large_step_makes_the_policy_near_deterministic():
    # Kakade (2001) / Agarwal et al. (2021, §5.3): tabular features + the exact compatible critic make
    # theta <- theta + eta w*/(1-gamma) the NPG step pi' ∝ pi exp(eta A^pi/(1-gamma)) for every softmax
    # pi > 0, however small its entries (psi^T w* = A^pi exactly on the support, which is all of S x A).
    # Bug found here: psi = phi - E_pi phi computed 1 - pi(a|s) by cancellation, and the critic's
    # absolute SVD cut (~8.5e-14) dropped every action with d(s)pi(a|s) < ~1e-26; after one step
    # pi(1|0) = 5.7e-59 and exact NAC stalled at suboptimality 0.0321 while NPG reached 0 at t = 3.
    # psi is now formed leave-one-out, and one-hot features take the critic's closed form
    # (compatible._one_hot_critic; an SVD cannot resolve weights below ~eps^2 of the largest).
    from rltheory.algorithms.policy_gradient import natural_policy_gradient

    mdp = random_mdp(4, 3, gamma=0.5, rng=1)
    nac = natural_actor_critic(mdp, np.eye(12).reshape(4, 3, 12), eta=1000.0, iterations=3)
    npg = natural_policy_gradient(mdp, eta=1000.0, iterations=3)
    np.testing.assert_allclose(nac.trace["suboptimality"], npg.trace["suboptimality"], rtol=1e-9, atol=1e-12)
