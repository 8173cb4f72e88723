"""Generative-model sampling and roll-outs: concentration rates, CLT bounds, seeding, errors."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import (
    FiniteMDP,
    empirical_mdp,
    evaluate_policy,
    garnet,
    policy_reward,
    policy_transition_matrix,
    rollout,
    sample_transitions,
    two_state,
)


def test_counts_are_multinomial_rows():
    mdp = garnet(7, 3, 3, gamma=0.9, rng=0, batch_shape=(2,))
    N = sample_transitions(mdp, 50, rng=1)
    assert N.shape == (2, 7, 3, 7) and N.dtype == np.int64
    np.testing.assert_array_equal(N.sum(-1), 50)
    assert np.all(N[np.asarray(mdp.P) == 0] == 0)  # never a successor outside the support
    np.testing.assert_array_equal(N, sample_transitions(mdp, 50, rng=np.random.default_rng(1)))


def test_empirical_kernel_concentrates_at_the_sqrt_rate():
    # Weissman et al. (2003), Thm 2.1: Pr(‖P̂ − P‖₁ ≥ ε) ≤ (2^S − 2) e^{−nε²/2} per pair, so with
    # probability ≥ 1 − δ, max_{s,a} ‖P̂ − P‖₁ ≤ √(2 (S ln 2 + ln(SA/δ)) / n).
    # Asymptotically E‖P̂ − P‖₁ = Σ_s' √(2 P(1−P)/(π n)) (1 + o(1)): the mean error times √n
    # tends to that constant and log-error vs log-n has slope −1/2.  Fixed seed, δ = 1e-3.
    # Averaging over SA = 300 pairs puts the mean's relative s.d. near 2%, so rtol 0.1 is ~5 s.d.
    mdp = garnet(30, 10, 10, gamma=0.9, rng=3)
    P = np.asarray(mdp.P)
    S, A = mdp.S, mdp.A
    ns = np.array([100, 1_000, 10_000, 100_000])
    mean_err, max_err = [], []
    for k, n in enumerate(ns):
        err = np.abs(np.asarray(empirical_mdp(mdp, int(n), rng=100 + k).P) - P).sum(-1)
        mean_err.append(err.mean())
        max_err.append(err.max())
        assert err.max() <= np.sqrt(2 * (S * np.log(2) + np.log(S * A / 1e-3)) / n)
    slope = np.polyfit(np.log(ns), np.log(mean_err), 1)[0]
    assert -0.56 < slope < -0.44
    const = np.sqrt(2 * P * (1 - P) / np.pi).sum(-1).mean()
    np.testing.assert_allclose(np.array(mean_err) * np.sqrt(ns), const, rtol=0.1)


def test_empirical_mdp_keeps_rewards_discount_and_mu():
    base = two_state(gamma=0.8)
    mu = np.array([0.25, 0.75])
    mdp = FiniteMDP(base.P, base.R, 0.8, mu)
    emp = empirical_mdp(mdp, 20, rng=0)
    np.testing.assert_array_equal(emp.R, mdp.R)
    np.testing.assert_array_equal(emp.mu, mu)
    assert emp.gamma == 0.8
    # deterministic rows are recovered exactly from any number of samples
    np.testing.assert_array_equal(np.asarray(emp.P)[[0, 1, 1], [0, 0, 1]], np.eye(2)[[0, 1, 0]])


def test_rollout_returns_match_exact_truncated_value():
    # E[Σ_{t<H} γ^t r_t] = μᵀ Σ_{t<H} (γP_π)^t r_π exactly.  The sample mean of n i.i.d. returns
    # lies within 4 standard errors of it (CLT; fixed seed).  The truncated value is within
    # γ^H‖r‖∞/(1−γ) of V^π(μ).
    gamma, H, n = 0.9, 60, 20_000
    mdp = garnet(12, 3, 4, gamma=gamma, rng=5)
    rng = np.random.default_rng(6)
    pi = rng.dirichlet(np.ones(3), size=12)
    mu = rng.dirichlet(np.ones(12))
    tr = rollout(mdp, pi, H, n, rng=7, mu=mu)
    G = tr.discounted_returns(gamma)
    Ppi, rpi = np.asarray(policy_transition_matrix(mdp, pi)), np.asarray(policy_reward(mdp, pi))
    exact, M = 0.0, mu.copy()
    for t in range(H):
        exact += gamma**t * M @ rpi
        M = M @ Ppi
    assert abs(G.mean() - exact) <= 4 * G.std(ddof=1) / np.sqrt(n)
    V_mu = float(mu @ np.asarray(evaluate_policy(mdp, pi)))
    assert abs(exact - V_mu) <= gamma**H * np.max(np.asarray(mdp.R)) / (1 - gamma)


def test_rollout_trajectories_follow_the_model():
    mdp = garnet(9, 2, 2, gamma=0.9, rng=11)
    det = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1])
    tr = rollout(mdp, det, 25, 300, rng=12)
    assert (
        tr.states.shape == (300, 26)
        and tr.actions.shape == (300, 25)
        and tr.rewards.shape == (300, 25)
    )
    assert tr.n_episodes == 300 and tr.horizon == 25
    np.testing.assert_array_equal(tr.actions, det[tr.states[:, :-1]])  # deterministic policy obeyed
    P = np.asarray(mdp.P)
    assert np.all(P[tr.states[:, :-1], tr.actions, tr.states[:, 1:]] > 0)  # only possible moves
    np.testing.assert_array_equal(tr.rewards, np.asarray(mdp.R)[tr.states[:, :-1], tr.actions])
    # the model's uniform μ: every state appears as a start (300 draws over 9 states)
    assert set(np.unique(tr.states[:, 0])) == set(range(9))
    again = rollout(mdp, det, 25, 300, rng=np.random.default_rng(12))
    np.testing.assert_array_equal(again.states, tr.states)


def test_rollout_empirical_first_step_frequencies():
    # From a point mass at state 0 of the two-state model under "move" (p = 0.3), s_1 = 1 w.p. 0.3:
    # binomial(40 000, 0.3) frequency within 4.5 standard deviations (fixed seed).
    tr = rollout(two_state(p=0.3), np.array([1, 0]), 1, 40_000, rng=3, mu=[1.0, 0.0])
    freq = (tr.states[:, 1] == 1).mean()
    assert abs(freq - 0.3) < 4.5 * np.sqrt(0.3 * 0.7 / 40_000)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda m: sample_transitions(m, 0, rng=0),
            ValueError,
            r"n_per_pair must be an integer >= 1; got 0",
        ),
        (
            lambda m: empirical_mdp(m, 2.5, rng=0),
            ValueError,
            r"n_per_pair must be an integer >= 1; got 2\.5",
        ),
        (
            lambda m: sample_transitions(m, 5, rng=None),
            TypeError,
            r"rng must be a numpy.random.Generator or an int seed",
        ),
        (
            lambda m: rollout(m, [0, 0], 0, 5, rng=0),
            ValueError,
            r"horizon must be an integer >= 1; got 0",
        ),
        (
            lambda m: rollout(m, [0, 0], 3, -1, rng=0),
            ValueError,
            r"n_episodes must be an integer >= 1; got -1",
        ),
        (
            lambda m: rollout(m, [0, 5], 3, 2, rng=0),
            ValueError,
            r"pi\(1,\) = 5 is not an action index in \[0, 2\)",
        ),
        (
            lambda m: rollout(m, [0, 0], 3, 2, rng=0, mu=[0.5, 0.6]),
            ValueError,
            r"mu must be a probability vector of shape \(2,\)",
        ),
        (
            lambda m: rollout(m, [0, 0], 3, 2, rng=0, mu=[1.0]),
            ValueError,
            r"mu must be a probability vector of shape \(2,\)",
        ),
        (
            lambda m: rollout(m, [0, 0], 2, 2, rng=0).discounted_returns(1.5),
            ValueError,
            r"gamma must be a number in \[0, 1\]; got 1\.5",
        ),
    ],
)
def test_sampling_arguments(call, exc, match):
    with pytest.raises(exc, match=match):
        call(two_state())


def test_rollout_rejects_batched_models_and_batched_policies():
    batch = garnet(4, 2, 2, gamma=0.9, rng=0, batch_shape=(3,))
    with pytest.raises(ValueError, match=r"rollout needs a single MDP; got batch_shape=\(3,\)"):
        rollout(batch, np.zeros(4, int), 3, 2, rng=0)
    with pytest.raises(
        ValueError, match=r"rollout needs one policy of shape \(S, A\) or \(S,\); got \(2, 4, 2\)"
    ):
        rollout(batch[0], np.zeros((2, 4), int), 3, 2, rng=0)


def test_sampling_runs_from_array_api_models(xp):
    # host-side routines accept host namespaces (numpy, array_api_strict) and return numpy;
    # a device model (cupy) is refused rather than copied silently
    ref = garnet(5, 2, 2, gamma=0.9, rng=0)
    mdp = garnet(5, 2, 2, gamma=0.9, rng=0, xp=xp)
    if "cupy" in xp.__name__:
        for call in (
            lambda: sample_transitions(mdp, 3, rng=0),
            lambda: rollout(mdp, np.zeros(5, int), 2, 2, rng=0),
        ):
            with pytest.raises(
                TypeError, match=r"runs on the host \(CPU\) only; got a device array"
            ):
                call()
        return
    np.testing.assert_array_equal(
        sample_transitions(mdp, 30, rng=4), sample_transitions(ref, 30, rng=4)
    )
    a, b = rollout(mdp, np.zeros(5, int), 4, 3, rng=5), rollout(ref, np.zeros(5, int), 4, 3, rng=5)
    np.testing.assert_array_equal(a.states, b.states)
