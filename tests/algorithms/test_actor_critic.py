"""Natural actor-critic (exact / LSTD / TD critics) and improper mixtures of base controllers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.actor_critic import (
    ExactCritic,
    LSTDCritic,
    TDCritic,
    improper_policy_gradient,
    mixture_policy,
    natural_actor_critic,
    softmax_linear_policy,
)
from rltheory.algorithms.policy_gradient import natural_policy_gradient
from rltheory.mdp import FiniteMDP, evaluate_policy
from rltheory.mdp.zoo import random_mdp
from rltheory.testing import discounts, finite_mdps


def _tabular(S, A):
    return np.eye(S * A).reshape(S, A, S * A)


@settings(max_examples=20)
@given(finite_mdps(max_states=4, max_actions=3, gamma=discounts(0.0, 0.9), with_mu=False), st.floats(0.05, 2.0))
def test_exact_critic_nac_with_tabular_features_is_npg(mdp, eta):
    nac = natural_actor_critic(mdp, _tabular(mdp.S, mdp.A), eta=eta, iterations=10)
    npg = natural_policy_gradient(mdp, eta=eta, iterations=10)
    np.testing.assert_allclose(nac.trace["suboptimality"], npg.trace["suboptimality"], atol=1e-9)
    np.testing.assert_allclose(nac.policy, npg.policy, atol=1e-9)
    # tabular features represent A^pi: the minimum-norm solve (SVD of the weighted design) leaves a
    # weighted residual at the rounding level (|A| <= 1/(1-gamma) <= 10 here)
    assert np.all(nac.trace["critic_error"] == 0) and np.all(nac.trace["approximation_error"] < 1e-12)


def test_lstd_critic_error_shrinks_with_samples_and_nac_tracks_npg():
    mdp = random_mdp(5, 3, gamma=0.8, rng=0)
    f = _tabular(5, 3)
    npg = natural_policy_gradient(mdp, eta=0.2, iterations=4)
    errs, gaps = [], []
    for n in (1000, 10000):
        runs = [natural_actor_critic(mdp, f, eta=0.2, iterations=4, critic=LSTDCritic(samples=n), rng=s) for s in range(3)]
        errs.append(np.mean([r.trace["critic_error"].mean() for r in runs]))
        gaps.append(np.mean([np.abs(r.trace["suboptimality"] - npg.trace["suboptimality"]).max() for r in runs]))
    # LSTD is O(N^{-1/2}): 10x more samples shrink the critic error by about sqrt(10) = 3.16
    assert 2 < errs[0] / errs[1] < 5
    assert gaps[1] < gaps[0]


def test_td_critic_nac_improves_the_policy():
    mdp = random_mdp(5, 3, gamma=0.8, rng=2)
    res = natural_actor_critic(mdp, _tabular(5, 3), eta=0.2, iterations=10, critic=TDCritic(samples=3000), rng=3)
    assert res.trace["suboptimality"][-1] < 0.2 * res.trace["suboptimality"][0]


def test_linear_features_report_the_approximation_error():
    mdp = random_mdp(6, 3, gamma=0.9, rng=4)
    f = np.random.default_rng(0).normal(size=(6, 3, 4))
    res = natural_actor_critic(mdp, f, eta=0.1, iterations=15, critic=ExactCritic())
    assert np.all(res.trace["approximation_error"] > 0)
    assert res.trace["suboptimality"][-1] < res.trace["suboptimality"][0]


def test_improper_natural_pg_finds_the_best_mixture():
    mdp = random_mdp(6, 3, gamma=0.9, rng=11)
    K = np.random.default_rng(1).dirichlet(np.ones(3) * 0.3, size=(3, 6))
    rho = np.asarray(mdp.initial_distribution())
    # reference: grid search over the simplex of mixture weights (step 1/50); the optimum is >= the grid's best
    best = -np.inf
    for a in np.linspace(0, 1, 51):
        for b in np.linspace(0, 1 - a, int(round((1 - a) * 50)) + 1):
            best = max(best, float(evaluate_policy(mdp, mixture_policy(K, np.log(np.array([a, b, 1 - a - b]) + 1e-300)))
                                   @ rho))
    res = improper_policy_gradient(mdp, K, eta=0.1, iterations=200, natural=True)
    assert res.trace["value"][-1] >= best - 1e-6
    assert np.all(np.diff(res.trace["value"]) >= -1e-9)  # small natural steps improve monotonically here
    plain = improper_policy_gradient(mdp, K, eta=5.0, iterations=300, natural=False)
    assert plain.trace["value"][-1] >= best - 1e-2


def test_improper_gradient_matches_finite_differences():
    mdp = random_mdp(4, 2, gamma=0.8, rng=5)
    K = np.random.default_rng(2).dirichlet(np.ones(2), size=(3, 4))
    theta = np.array([0.3, -0.2, 0.1])
    rho = np.asarray(mdp.initial_distribution())
    # one plain step from theta moves theta by eta * grad: recover grad from the trace of a 1-step run
    res = improper_policy_gradient(mdp, K, eta=1.0, iterations=1, natural=False, theta0=theta)
    grad = res.theta - theta
    h = 1e-6
    fd = np.array([
        (float(evaluate_policy(mdp, mixture_policy(K, theta + h * e)) @ rho)
         - float(evaluate_policy(mdp, mixture_policy(K, theta - h * e)) @ rho)) / (2 * h)
        for e in np.eye(3)
    ])
    np.testing.assert_allclose(grad, fd, atol=1e-6)


def test_policy_maps_reference_values():
    f = np.zeros((2, 2, 2))
    f[:, 0, 0] = f[:, 1, 1] = 1.0
    np.testing.assert_allclose(softmax_linear_policy(f, np.array([0.0, np.log(3.0)])), [[0.25, 0.75]] * 2)
    K = np.stack([np.eye(2)[[0, 0]], np.eye(2)[[1, 1]]])
    np.testing.assert_allclose(mixture_policy(K, np.zeros(2)), np.full((2, 2), 0.5))


def test_nac_kernels_under_every_backend(xp):
    m = random_mdp(3, 2, gamma=0.8, rng=3)
    mdp = FiniteMDP(xp.asarray(np.asarray(m.P)), xp.asarray(np.asarray(m.R)), gamma=0.8)
    f = _tabular(3, 2)
    ref = natural_actor_critic(m, f, eta=0.5, iterations=3)
    got = natural_actor_critic(mdp, xp.asarray(f), eta=0.5, iterations=3)
    np.testing.assert_allclose(got.trace["suboptimality"], ref.trace["suboptimality"], atol=1e-10)
    K = np.stack([np.eye(2)[[0, 0, 1]], np.full((3, 2), 0.5)])
    r1 = improper_policy_gradient(m, K, eta=0.1, iterations=3)
    r2 = improper_policy_gradient(mdp, xp.asarray(K), eta=0.1, iterations=3)
    np.testing.assert_allclose(r2.trace["value"], r1.trace["value"], atol=1e-10)


def test_actor_critic_validation():
    mdp = random_mdp(3, 2, gamma=0.8, rng=0)
    f = _tabular(3, 2)
    with pytest.raises(ValueError, match=r"features must have shape \(S, A, d\) = \(3, 2, d\)"):
        natural_actor_critic(mdp, np.ones((3, 3, 2)), eta=0.1, iterations=1)
    with pytest.raises(TypeError, match="pass rng"):
        natural_actor_critic(mdp, f, eta=0.1, iterations=1, critic=LSTDCritic(samples=10))
    with pytest.raises(TypeError, match="critic must have a fit method"):
        natural_actor_critic(mdp, f, eta=0.1, iterations=1, critic="lstd")
    with pytest.raises(ValueError, match="samples must be an integer >= 1"):
        LSTDCritic(samples=0)
    with pytest.raises(ValueError, match="theta0 must have shape"):
        natural_actor_critic(mdp, f, eta=0.1, iterations=1, theta0=np.zeros(2))
    with pytest.raises(ValueError, match=r"controllers must have shape \(M, S, A\)"):
        improper_policy_gradient(mdp, np.ones((2, 2, 2)) / 2, eta=0.1, iterations=1)
    with pytest.raises(ValueError, match=r"each controllers\[1\]\[s, :\] must sum to 1"):
        improper_policy_gradient(mdp, np.stack([np.full((3, 2), 0.5), np.full((3, 2), 0.4)]), eta=0.1, iterations=1)
    with pytest.raises(ValueError, match="needs a single MDP"):
        natural_actor_critic(random_mdp(3, 2, gamma=0.8, rng=0, batch_shape=(2,)), f, eta=0.1, iterations=1)
