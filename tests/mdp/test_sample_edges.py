"""Samplers outside the ranges of test_sample.py: chi-square goodness of fit of the generative
model and of roll-outs against P, seeds, float32 models, the model's own μ passed explicitly."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP, rollout


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
