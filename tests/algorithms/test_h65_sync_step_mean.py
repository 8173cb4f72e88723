"""One synchronous Q-learning step is, in expectation, the Bellman optimality operator.

``E[Q_1] = (1 − α) Q_0 + α T Q_0`` with ``(T Q)(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) max_b Q(s', b)``
(the next states and the zero-mean reward noise are the only randomness). A batch of ``N`` copies
of one model draws ``N`` independent steps in one call; each entry's sample mean must lie in its
CLT interval, Bonferroni over the ``S·A`` entries at family level ``1e-4``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rltheory.algorithms.q_learning import constant_step, synchronous_q_learning
from rltheory.mdp import FiniteMDP, q_values
from rltheory.mdp.zoo import random_mdp

N = 20_000


@pytest.mark.parametrize(
    ("dtype", "alpha", "noise"),
    [(np.float64, 1.0, 0.0), (np.float64, 0.5, 0.7), (np.float32, 0.3, 0.0)],
)
def test_the_mean_of_one_synchronous_step_is_the_bellman_operator(dtype, alpha, noise):
    base = random_mdp(4, 3, gamma=0.9, rng=7)
    P, R = np.asarray(base.P, dtype=dtype), np.asarray(base.R, dtype=dtype)
    batch = FiniteMDP(np.broadcast_to(P, (N,) + P.shape), np.broadcast_to(R, (N,) + R.shape), 0.9)
    Q0 = np.random.default_rng(1).normal(size=(4, 3)) * 3.0
    res = synchronous_q_learning(
        batch, iterations=1, step_size=constant_step(alpha), rng=2, Q0=Q0, reward_noise=noise
    )
    # the samplers draw from the float64 row-normalised kernel: T of that model
    Pn = np.asarray(P, dtype=np.float64)
    Pn = Pn / Pn.sum(-1, keepdims=True)
    exact = FiniteMDP(Pn, np.asarray(R, dtype=np.float64), 0.9)
    want = (1 - alpha) * Q0 + alpha * np.asarray(q_values(exact, Q0.max(-1)))
    mean, se = res.Q.mean(0), res.Q.std(0, ddof=1) / np.sqrt(N)
    z = stats.norm.ppf(1 - 1e-4 / (2 * 12))  # 4.6
    assert np.all(np.abs(mean - want) <= z * se + 1e-12)
