"""td_linear's Polyak–Ruppert average ``(1/T) Σ_t θ_t`` for values near the top of the float range.

TD(λ) is linear in the rewards: scaling them by ``2^k`` scales every iterate, the average and the
errors by ``2^k`` exactly (powers of 2, no rounding while in range). The average was formed from
the sum ``Σ_t θ_t``, which overflowed for values near 1e306 although each ``θ_t`` converged:
``theta_avg = inf`` and ``error_avg = NaN``, with numpy's overflow warnings.
"""

from __future__ import annotations

import warnings

import numpy as np

from rltheory.algorithms.critics import td_linear
from rltheory.mdp import FiniteMDP


def test_average_scales_exactly_with_the_rewards_near_the_top_of_the_range():
    P = np.array([[[0.0, 1.0]], [[1.0, 0.0]]])
    k = 1016  # 2^1016 ≈ 7e305: V = (4/3, 2/3)·2^1016, 200 steps sum to ~2e308 > max float
    ref = td_linear(
        FiniteMDP(P, np.array([[1.0], [0.0]]), gamma=0.5),
        np.array([0, 0]),
        np.eye(2),
        steps=200,
        step_size=0.5,
        rng=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = td_linear(
            FiniteMDP(P, np.array([[2.0**k], [0.0]]), gamma=0.5),
            np.array([0, 0]),
            np.eye(2),
            steps=200,
            step_size=0.5,
            rng=0,
        )
    np.testing.assert_array_equal(big.theta, np.ldexp(ref.theta, k))
    np.testing.assert_array_equal(big.theta_avg, np.ldexp(ref.theta_avg, k))
    np.testing.assert_array_equal(big.trace["error_avg"], np.ldexp(ref.trace["error_avg"], k))
