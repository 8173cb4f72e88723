"""Samplers outside the ranges of test_sample.py: chi-square goodness of fit of the generative
model and of roll-outs against P, seeds, float32 models, the model's own μ passed explicitly."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP, garnet, rollout, sample_transitions


def _mu_at_the_tolerance(S: int, dtype) -> FiniteMDP:
    # μ summing to 1 + 3e-8 (float64, S = 40: FiniteMDP's bound is 1e-8·(1 + √40) = 7.3e-8), with a
    # rounding-negative entry −1e-10 (FiniteMDP accepts entries >= −1e-8)
    rng = np.random.default_rng(3)
    P = rng.random((S, 2, S))
    P /= P.sum(-1, keepdims=True)
    mu = np.full(S, 1.0 / S)
    mu[0] += 3e-8 + 1e-10
    mu[1] = -1e-10
    mu[2] += 1.0 / S  # the sum is 1 + 3e-8
    return FiniteMDP(P.astype(dtype), np.zeros((S, 2), dtype=dtype), 0.9, mu.astype(dtype))


def test_rollout_accepts_the_model_s_own_mu():
    # rollout checked an explicit mu at 1e-8 absolute with no negative entries, stricter than
    # FiniteMDP: rollout(m, ..., mu=m.mu) refused a model's own valid μ ("its entries sum to
    # 1.00000003, not 1") although rollout(m, ...) (mu=None) drew from that same μ.
    m = _mu_at_the_tolerance(40, np.float64)
    tr = rollout(m, np.zeros(40, dtype=int), 2, 4000, rng=0, mu=m.mu)
    same = rollout(m, np.zeros(40, dtype=int), 2, 4000, rng=0)
    np.testing.assert_array_equal(tr.states, same.states)
    assert not np.any(tr.states[:, 0] == 1)  # the rounding negative is never drawn


def test_rollout_accepts_a_float32_mu_at_float32_rounding():
    # a float32 μ whose sum is 1 + 5e-7 (FiniteMDP's float32 bound 16·eps·(1 + √S) = 1.4e-5 at S = 40)
    S = 40
    mu = np.full(S, 1.0 / S, dtype=np.float32)
    mu[0] += np.float32(5e-7)
    m = FiniteMDP(
        np.full((S, 1, S), 1.0 / S, dtype=np.float32), np.zeros((S, 1), np.float32), 0.9, mu
    )
    tr = rollout(m, np.zeros(S, dtype=int), 1, 10, rng=0, mu=m.mu)
    assert tr.states.shape == (10, 2)
    # and a float64 vector with the same defect is still refused, the sum named
    with pytest.raises(ValueError, match=r"its entries sum to 1\.0000005, not 1 \(atol=1e-08"):
        rollout(
            m,
            np.zeros(S, dtype=int),
            1,
            10,
            rng=0,
            mu=mu.astype(np.float64) * (1 + 5e-7) / mu.sum(dtype=np.float64),
        )


# ---- goodness of fit --------------------------------------------------------------------------
# Pearson's chi-square per (s, a) on the support of P(·|s, a) (an off-support draw fails outright),
# each at level alpha = 1e-3 / (S·A): the family-wise false-alarm rate is <= 1e-3 (Bonferroni);
# seeds are fixed, so the outcome is deterministic.
ALPHA = 1e-3


def _assert_counts_fit(counts, P, min_count=200):
    stats = pytest.importorskip("scipy.stats")
    S, A = P.shape[-3], P.shape[-2]
    level = ALPHA / (S * A)
    tested = 0
    for s in range(S):
        for a in range(A):
            c, p = counts[s, a], P[s, a]
            n = c.sum()
            assert np.all(c[p <= 0] == 0), (s, a, c, p)
            if n < min_count:
                continue
            sup = p > 0
            if sup.sum() < 2:
                assert c[sup].sum() == n
                continue
            e = n * p[sup]
            pval = stats.chi2.sf(((c[sup] - e) ** 2 / e).sum(), df=sup.sum() - 1)
            assert pval > level, (s, a, pval, c, e)
            tested += 1
    return tested


def _sparse_model(S, A, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    P = rng.random((S, A, S)) * (rng.random((S, A, S)) < 0.6)
    P[..., 0] += 1e-3  # every row has support
    P /= P.sum(-1, keepdims=True)
    return FiniteMDP(P.astype(dtype), rng.random((S, A)).astype(dtype), 0.9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_generative_model_counts_fit_P(dtype):
    m = _sparse_model(7, 3, seed=11, dtype=dtype)
    N = sample_transitions(m, 5000, rng=np.random.default_rng(2))
    assert _assert_counts_fit(N, np.asarray(m.P, dtype=np.float64)) == 21


def test_generative_model_counts_fit_P_on_a_batch():
    S, A = 5, 2
    m = garnet(S, A, 3, gamma=0.9, rng=4, batch_shape=(3,))
    N = sample_transitions(m, 4000, rng=5)
    assert N.shape == (3, S, A, S)
    for i in range(3):
        assert _assert_counts_fit(N[i], np.asarray(m.P)[i]) == S * A
    # the instances draw independently: not three copies of the same counts
    assert not np.array_equal(N[0], N[1])


def test_rollout_transition_and_action_frequencies_fit_P_and_pi():
    m = _sparse_model(6, 3, seed=3)
    rng = np.random.default_rng(8)
    pi = rng.dirichlet(np.ones(3), size=6)
    tr = rollout(m, pi, 100, 800, rng=np.random.default_rng(9))
    s, a, s2 = tr.states[:, :-1], tr.actions, tr.states[:, 1:]
    C = np.zeros((6, 3, 6), dtype=np.int64)
    np.add.at(C, (s, a, s2), 1)
    assert _assert_counts_fit(C, np.asarray(m.P)) == 18
    # actions given the state: pi as a one-action "model" P[s, 0, :] = pi(·|s)
    CA = np.zeros((6, 1, 3), dtype=np.int64)
    np.add.at(CA, (s, 0, a), 1)
    assert _assert_counts_fit(CA, pi[:, None, :]) == 6
    np.testing.assert_array_equal(tr.rewards, np.asarray(m.R)[s, a])


def test_rollout_initial_states_fit_mu():
    m = _sparse_model(5, 2, seed=1)
    mu = np.array([0.1, 0.0, 0.4, 0.2, 0.3])
    tr = rollout(m, np.zeros(5, dtype=int), 1, 20_000, rng=6, mu=mu)
    counts = np.bincount(tr.states[:, 0], minlength=5)
    assert _assert_counts_fit(counts[None, None, :], mu[None, None, :]) == 1


def test_seeds_reproduce_and_an_int_seed_is_default_rng():
    m = _sparse_model(4, 2, seed=0)
    pi = np.full((4, 2), 0.5)
    a = rollout(m, pi, 12, 7, rng=123)
    b = rollout(m, pi, 12, 7, rng=np.random.default_rng(123))
    np.testing.assert_array_equal(a.states, b.states)
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(
        sample_transitions(m, 50, 9), sample_transitions(m, 50, np.random.default_rng(9))
    )
    # a Generator is advanced, not reset: two calls with one Generator differ
    g = np.random.default_rng(123)
    first, second = rollout(m, pi, 12, 7, rng=g), rollout(m, pi, 12, 7, rng=g)
    assert not np.array_equal(first.states, second.states)
    np.testing.assert_array_equal(first.states, a.states)


def test_single_state_and_single_action_models():
    m = FiniteMDP(np.ones((1, 1, 1)), np.array([[2.5]]), 0.5)
    tr = rollout(m, [0], 4, 3, rng=0)
    np.testing.assert_array_equal(tr.states, 0)
    np.testing.assert_array_equal(tr.rewards, 2.5)
    np.testing.assert_array_equal(tr.discounted_returns(0.5), 2.5 * (1 - 0.5**4) / 0.5)
    np.testing.assert_array_equal(sample_transitions(m, 6, rng=0), [[[6]]])
