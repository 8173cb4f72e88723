"""The sample-based constrained drivers refuse a discount whose roll-outs would not end.

``sample_npg_primal_dual`` and ``general_utility_primal_dual(rollouts=...)`` draw geometric
horizons of mean ``1/(1−γ)``: at ``γ = 1 − 1e-12`` one iteration did not finish (killed after
20 s; reported by helper-46). They now apply the library's one roll-out-length rule
(``rltheory.mdp.sample._check_rollout_length``: ``γ ≤ 1 − 1/max_length``, default 10⁴) before
any draw.
"""

import numpy as np
import pytest

from rltheory.algorithms.constrained import general_utility_primal_dual, sample_npg_primal_dual
from rltheory.mdp import ConstrainedMDP, FiniteMDP
from rltheory.mdp.utility import linear_utility

P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.0, 1.0]]])
R = np.array([[1.0, 0.0], [0.0, 0.5]])


def _cmdp(gamma):
    return ConstrainedMDP(
        FiniteMDP(P, R, gamma=gamma),
        np.array([[[0.0, 1.0], [0.0, 1.0]]]),
        np.array([0.5 / (1 - gamma)]),
    )


def test_sample_npg_pd_refuses_a_discount_beyond_the_cap():
    with pytest.raises(
        ValueError,
        match=r"^gamma = 0\.999999999999 gives an expected roll-out segment length .*max_length = 10000",
    ):
        sample_npg_primal_dual(_cmdp(1 - 1e-12), iterations=1, rollouts=2, rng=0)


def test_sample_npg_pd_takes_a_larger_cap_and_the_default_accepts_gamma_0_9999_as_written():
    with pytest.raises(ValueError, match=r"above max_length = 100 "):
        sample_npg_primal_dual(_cmdp(0.999), iterations=1, rollouts=1, rng=0, max_length=100)
    a = sample_npg_primal_dual(_cmdp(0.9), iterations=3, rollouts=2, rng=5)
    b = sample_npg_primal_dual(_cmdp(0.9), iterations=3, rollouts=2, rng=5, max_length=10)
    np.testing.assert_array_equal(a.policy, b.policy)  # accepted discounts: the same draws


def test_general_utility_pd_refuses_a_discount_beyond_the_cap():
    mdp = FiniteMDP(P, R, gamma=1 - 1e-12)
    kw = dict(iterations=1, eta_theta=1.0, eta_mu=1.0, Lambda=1.0)
    with pytest.raises(
        ValueError, match=r"^gamma = 0\.999999999999 gives an expected roll-out segment length"
    ):
        general_utility_primal_dual(mdp, linear_utility(R), rollouts=1, rng=0, **kw)
    with pytest.raises(ValueError, match=r"^max_length must be"):
        general_utility_primal_dual(
            FiniteMDP(P, R, gamma=0.5), linear_utility(R), max_length=0, **kw
        )
