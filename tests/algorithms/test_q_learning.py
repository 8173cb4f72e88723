"""Tabular Q-learning variants against the exact Q* and the high-probability bound; DoMo-VI."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.q_learning import (
    constant_step,
    domo_vi,
    double_q_learning,
    linear_step,
    polynomial_step,
    q_learning,
    q_learning_replay,
    rescaled_linear_step,
    synchronous_q_learning,
    va_learning,
)
from rltheory.bounds.policy_optimization import q_learning_bound
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP, policy_iteration, q_values
from rltheory.mdp.zoo import random_mdp
from rltheory.testing import discounts, finite_mdps


@settings(max_examples=15)
@given(finite_mdps(max_states=4, max_actions=3, gamma=discounts(0.0, 0.9)), st.integers(0, 2**31),
       st.sampled_from([0.05, 0.2, 0.5]))
def test_synchronous_q_learning_sits_under_the_high_probability_bound(mdp, seed, alpha):
    sol = policy_iteration(mdp)
    Qs, V = np.asarray(sol.Q), np.asarray(sol.V)
    T = 300
    res = synchronous_q_learning(mdp, iterations=T, step_size=constant_step(alpha), rng=seed, Q_star=Qs)
    bound = q_learning_bound(np.arange(T + 1), alpha=alpha, gamma=mdp.gamma, initial_error=np.abs(Qs).max(),
                             value_span=float(V.max() - V.min()), n_pairs=mdp.S * mdp.A, horizon=T, delta=1e-3)
    assert np.all(res.trace["error"] <= bound + 1e-12)


def test_synchronous_q_learning_converges_to_q_star_with_a_seed():
    mdp = random_mdp(6, 3, gamma=0.8, rng=0)
    res = synchronous_q_learning(mdp, iterations=3000, step_size=rescaled_linear_step(0.8), rng=1, record_every=100)
    assert res.trace["error"][-1] < 0.05 * res.trace["error"][0]
    assert res.trace["error"][-1] < 0.1


def test_asynchronous_q_learning_converges_to_q_star_with_a_seed():
    mdp = random_mdp(5, 2, gamma=0.7, rng=3)
    res = q_learning(mdp, steps=20000, step_size=rescaled_linear_step(0.7), rng=4, n_runs=4, record_every=1000)
    assert np.all(res.trace["error"][-1] < 0.1)
    assert np.all(res.trace["error"][-1] < 0.05 * res.trace["error"][0])


def test_batched_synchronous_equals_per_instance_on_deterministic_models():
    rng = np.random.default_rng(0)
    nxt = rng.integers(0, 4, size=(3, 4, 2))
    P = np.eye(4)[nxt]  # deterministic transitions: no sampling noise
    mdp = FiniteMDP(P, rng.random((3, 4, 2)), gamma=0.9)
    b = synchronous_q_learning(mdp, iterations=30, step_size=constant_step(0.3), rng=5)
    for i in range(3):
        s = synchronous_q_learning(mdp[i], iterations=30, step_size=constant_step(0.3), rng=6)
        np.testing.assert_allclose(b.Q[i], s.Q, atol=1e-12)


def test_alpha_one_on_a_deterministic_model_is_value_iteration():
    mdp = FiniteMDP(np.eye(3)[[[1, 2], [2, 0], [0, 0]]], np.array([[0.0, 1.0], [0.5, 0.2], [1.0, 0.0]]), gamma=0.9)
    res = synchronous_q_learning(mdp, iterations=5, step_size=constant_step(1.0), rng=0)
    Q = np.zeros((3, 2))
    for _ in range(5):
        Q = np.asarray(q_values(mdp, Q.max(-1)))
    np.testing.assert_allclose(res.Q, Q, atol=1e-14)


def test_replay_with_zero_updates_is_plain_q_learning_and_replay_helps():
    mdp = random_mdp(8, 3, gamma=0.9, rng=1)
    kw = dict(steps=3000, step_size=rescaled_linear_step(0.9), n_runs=6, record_every=300)
    plain = q_learning(mdp, rng=3, **kw)
    zero = q_learning_replay(mdp, rng=3, replay_every=1, replay_updates=0, buffer_size=100, **kw)
    np.testing.assert_allclose(zero.Q, plain.Q, atol=0)
    rep = q_learning_replay(mdp, rng=3, replay_every=1, replay_updates=4, buffer_size=1000, **kw)
    assert rep.updates == 5 * 3000
    # averaged over runs, replay is ahead of plain Q-learning at every checkpoint after the first
    assert np.all(rep.trace["error"][1:].mean(1) < plain.trace["error"][1:].mean(1))


def test_double_q_learning_removes_the_overestimation_bias():
    # noisy rewards: max over noisy estimates is biased upwards; the double estimator is not
    mdp = random_mdp(5, 4, gamma=0.9, rng=4)
    kw = dict(steps=4000, step_size=rescaled_linear_step(0.9), n_runs=30, reward_noise=1.0, record_every=400)
    q = q_learning(mdp, rng=5, **kw)
    dq = double_q_learning(mdp, rng=5, **kw)
    late = slice(3, None)
    assert np.all(q.trace["value_bias"][late].mean(1) > 0)
    assert np.all(dq.trace["value_bias"][late].mean(1) < q.trace["value_bias"][late].mean(1))
    assert np.all(dq.trace["value_bias"][late].mean(1) < 0)


@given(finite_mdps(max_states=5, max_actions=4), st.integers(0, 2**31))
def test_va_learning_fixed_point_is_q_star(mdp, seed):
    # expected VA increments vanish at V = sum_a mu Q*, A = Q* - V (for any behaviour mu)
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet(np.ones(mdp.A), size=mdp.S)
    Qs = np.asarray(policy_iteration(mdp).Q)
    V = (mu * Qs).sum(-1)
    A = Qs - V[:, None]
    y = np.asarray(q_values(mdp, (V[:, None] + A).max(-1)))  # E[r + gamma (V + max A)(s')]
    dV = (mu * (y - V[:, None])).sum(-1)
    dA = y - V[:, None] - A
    assert np.abs(dV).max() < 1e-9 * (1 + np.abs(Qs).max())
    assert np.abs(dA).max() < 1e-9 * (1 + np.abs(Qs).max())


def test_va_learning_converges_and_beats_q_learning_with_equal_constant_steps():
    mdp = random_mdp(10, 4, gamma=0.95, rng=1)
    kw = dict(steps=20000, step_size=constant_step(0.1), n_runs=10, record_every=5000)
    q = q_learning(mdp, rng=2, **kw)
    va = va_learning(mdp, rng=2, **kw)
    assert va.trace["error"][-1].mean() < 0.05 * va.trace["error"][0].mean()
    assert np.all(va.trace["error"][1:].mean(1) < q.trace["error"][1:].mean(1))
    np.testing.assert_allclose(va.Q, va.extra["V"][..., None] + va.extra["A"])


@settings(max_examples=20)
@given(finite_mdps(max_states=4, max_actions=3, gamma=discounts(0.0, 0.95)), st.integers(1, 3), st.integers(1, 2),
       st.sampled_from([0.0, 0.5, 1.0]), st.integers(0, 2**31))
def test_domo_vi_bound_and_monotonicity(mdp, n, m, lam, seed):
    mu = np.random.default_rng(seed).dirichlet(np.ones(mdp.A), size=mdp.S)
    Qs = np.asarray(policy_iteration(mdp).Q)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        res = domo_vi(mdp, behavior=mu, n_improve=n, m_eval=m, lam=lam, iterations=60, tol=1e-11, Q_star=Qs)
    # the bound counts the round-off of the iterates and of Qs, so it needs no slack
    assert np.all(res.trace["error"] <= res.trace["bound"])
    stopped_at_cap = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    if res.converged:  # stopped by tol: at Q* and silent
        assert np.abs(res.Q - Qs).max() < 1e-6 * (1 + np.abs(Qs).max()) and not stopped_at_cap
    else:  # ran to the cap: says so
        assert res.iterations == 60 and len(stopped_at_cap) == 1 and "iterations=60" in str(stopped_at_cap[0].message)


def test_domo_vi_reduces_to_value_iteration_and_speeds_it_up():
    mdp = random_mdp(8, 3, gamma=0.9, rng=6)
    Q0 = np.full((8, 3), float(np.asarray(mdp.R).min()) / 0.1)
    with pytest.warns(ConvergenceWarning, match=r"domo_vi reached iterations=5 before"):
        vi = domo_vi(mdp, n_improve=1, m_eval=1, lam=0.0, iterations=5, tol=1e-300, Q0=Q0)
    Q = Q0
    for _ in range(5):
        Q = np.asarray(q_values(mdp, Q.max(-1)))
    np.testing.assert_allclose(vi.Q, Q, atol=1e-12)
    its = {(n, m): domo_vi(mdp, n_improve=n, m_eval=m, lam=1.0, iterations=500, tol=1e-10).iterations
           for n, m in ((1, 1), (2, 1), (3, 2))}
    plain = domo_vi(mdp, n_improve=1, m_eval=1, lam=0.0, iterations=500, tol=1e-10).iterations
    assert plain > its[(1, 1)] > its[(2, 1)] > its[(3, 2)]


def test_step_schedules_reference_values():
    assert float(rescaled_linear_step(0.9)(10)) == pytest.approx(0.5)
    # alpha0 = 1/4: 1/(4 + 0.5 n) starts at 1/4 and halves at n = 8; the default is alpha0 = 1
    np.testing.assert_allclose(rescaled_linear_step(0.5, alpha0=0.25)(np.array([0, 8])), [0.25, 0.125])
    assert float(rescaled_linear_step(0.5, alpha0=1.0)(4)) == float(rescaled_linear_step(0.5)(4))
    assert float(linear_step()(0)) == 1.0
    assert float(polynomial_step(0.5 + 1e-9)(3)) == pytest.approx(0.5, rel=1e-6)
    np.testing.assert_allclose(constant_step(0.3)(np.arange(3)), [0.3, 0.3, 0.3])


def test_q_learning_validation():
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\]"):
        constant_step(1.5)
    with pytest.raises(ValueError, match=r"omega must lie in \(1/2, 1\]"):
        polynomial_step(0.3)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        q_learning(mdp, steps=10, step_size=linear_step(), rng="seed")
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        q_learning(mdp, steps=0, step_size=linear_step(), rng=0)
    with pytest.raises(ValueError, match="needs a single MDP"):
        q_learning(random_mdp(3, 2, gamma=0.9, rng=0, batch_shape=(2,)), steps=5, step_size=linear_step(), rng=0)
    with pytest.raises(ValueError, match="reward_noise must be"):
        va_learning(mdp, steps=5, step_size=linear_step(), rng=0, reward_noise=-1.0)
    with pytest.raises(ValueError, match=r"behavior must be one policy of shape \(3, 2\)"):
        q_learning(mdp, steps=5, step_size=linear_step(), rng=0, behavior=np.full((2, 3, 2), 0.5))
    with pytest.raises(ValueError, match="replay_every must be an integer >= 1"):
        q_learning_replay(mdp, steps=5, step_size=linear_step(), rng=0, replay_every=0, replay_updates=1,
                          buffer_size=3)
    with pytest.raises(ValueError, match="lam must lie in"):
        domo_vi(mdp, lam=2.0)
    with pytest.raises(ValueError, match="discounted model"):
        synchronous_q_learning(FiniteMDP(np.asarray(mdp.P), np.asarray(mdp.R), None), iterations=2,
                               step_size=linear_step(), rng=0)
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        q_learning_bound(1, alpha=0.1, gamma=0.5, initial_error=1.0, value_span=1.0, n_pairs=2, horizon=2, delta=0.0)
    with pytest.warns(ConvergenceWarning, match="domo_vi reached iterations=2"):
        res = domo_vi(mdp, iterations=2)
    assert res.converged is False
