"""Entries in [−atol, 0) pass the probability checks as round-off, and the class structure reads them
as 0 (edges are ``P > 0``); the long-run kernels now do too.

Kept as given, a −1e-9 on a transient row's entry towards an absorbing state it cannot reach made
``limiting_matrix`` put −0.001 and 1.001 on the two absorbing states (truth 1 and 0), GTH returned
``μ = −2e-12`` on two states of a unichain chain, and the bias of a transient state that leaves with
probability 1e-12 came out +5.0e8 instead of −5.0e11.
"""

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP
from rltheory.mdp.average_evaluation import gain_bias
from rltheory.mdp.mixing import limiting_matrix, stationary_distribution

U = 2.0**-53


@pytest.mark.parametrize("neg", [-1e-9, -1e-13])
def test_limiting_matrix_ignores_negative_round_off(neg):
    # state 2 is transient and reaches only the absorbing state 0 (P(2, 0) = 1e-12 > 0), so
    # P*(2, ·) = (1, 0, 0) (Puterman 1994, Thm A.7: absorption probability 1 into {0}).
    # Old: (−0.001, 1.001, 0) at neg = −1e-9 and (1.11, −0.11, 0) at −1e-13
    P = np.array([[1.0, 0, 0], [0, 1.0, 0], [1e-12, neg, 1 - 1e-12 - neg]])
    L = limiting_matrix(P)
    np.testing.assert_allclose(L, [[1, 0, 0], [0, 1, 0], [1, 0, 0]], rtol=0, atol=4 * U)
    assert np.all(L >= 0)


def test_gth_stationary_law_ignores_negative_round_off():
    # with P(2, 1) = −1e-12 read as 0: balance at 1 gives μ1 = μ0/3, at 0 gives μ0/3 = 1e-20 μ2, so
    # μ = (3e-20, 1e-20, 1)/(1 + 4e-20). Old GTH: (−2.0e-12, −2.0e-12, 1)
    P = np.array([[0.5, 0.25, 0.25], [0.5, 0.25, 0.25], [1e-20, -1e-12, 1 + 1e-12 - 1e-20]])
    mu = stationary_distribution(P, method="gth")
    np.testing.assert_allclose(mu, [3e-20, 1e-20, 1.0], rtol=16 * U, atol=0)
    mu = stationary_distribution(P)  # the solve: within 1e4·u of ‖μ‖∞ (its documented accuracy)
    assert np.all(mu >= 0) and mu[2] == pytest.approx(1.0, rel=1e4 * U, abs=0.0)


def test_bias_of_rarely_left_transient_state_ignores_negative_round_off():
    # {0, 1} recurrent with μ = (1/2, 1/2), r = (0, 1): g = 1/2, h = (−1/2, 1/2) (μᵀh = 0). State 2
    # leaves only to 0, at rate 1e-12 (the −1e-9 towards 1 is round-off): 1e-12·h(2) = r(2) − g +
    # 1e-12·h(0), so h(2) = −0.5e12 − 0.5. Old: +5.005e8
    P = np.array([[[0.5, 0.5, 0]], [[0.5, 0.5, 0]], [[1e-12, -1e-9, 1 - 1e-12 + 1e-9]]])
    gb = gain_bias(FiniteMDP(P, np.array([[0.0], [1.0], [0.0]]), gamma=None), np.ones((3, 1)))
    assert float(gb.g) == pytest.approx(0.5, rel=8 * U, abs=0.0)
    # (this was rtol 2e-9: average_evaluation formed b = r − g + P[:, R] h_R with the unclipped P,
    # so P(2, 1) h(1) = −5e-10 added −500 to h(2); it now reads the −1e-9 as 0 as well)
    np.testing.assert_allclose(gb.h, [-0.5, 0.5, -0.5e12 - 0.5], rtol=16 * U, atol=0)
