"""Transition probabilities down to the smallest subnormal, 5e-324, in the subtraction-free reductions.

A leave rate ``L`` below ~1e-308 made the ratios ``P(i, n)/L`` overflow (GTH's μ, limiting_matrix's
absorption probabilities: NaN everywhere), and spectral_gap's hitting-time scale ``2^-1075`` rounded
to 0 (gap 0.0 and t_rel = inf for a chain that does mix). The reductions now form
``P(i, n)·(P(n, j)/L)`` (``P(n, j)/L ≤ 1``) and keep scales as exponents.
"""

import numpy as np

from rltheory.mdp.mixing import limiting_matrix, spectral_gap, stationary_distribution

A = 5e-324  # 2^-1074


def test_gth_stationary_law_with_a_subnormal_leave_rate():
    # μ0 = (μ0 + μ1)/2 and μ1 = μ0/2 + A μ2 give μ0 = μ1 = 2A μ2, so μ = (2A, 2A, 1)/(1 + 4A) and
    # 2A = 1e-323 is exact. Old: NaN (overflow in P(i, 2)/A)
    P = np.array([[0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, A, 1.0 - A]])
    mu = stationary_distribution(P, method="gth")
    np.testing.assert_array_equal(mu, [2 * A, 2 * A, 1.0])


def test_limiting_matrix_with_a_subnormal_leave_rate():
    # 0, 1 absorbing; 2 → 0 w.p. 1/4, → 3 w.p. 1/2 (self-loop 1/4); 3 leaves only to 1, w.p. A.
    # Absorption: from 3 into {1} w.p. 1; from 2 into {0} w.p. (1/4)/(3/4) = 1/3, into {1} 2/3.
    # Old: every entry NaN
    P = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0.25, 0, 0.25, 0.5], [0, A, 0, 1 - A]])
    L = limiting_matrix(P)
    expect = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [1 / 3, 2 / 3, 0, 0], [0, 1, 0, 0]])
    np.testing.assert_allclose(L, expect, rtol=0, atol=4 * 2.0**-53)


def test_spectral_gap_of_a_subnormal_coupling():
    # [[1 − A, A], [A, 1 − A]] has ℓ = 2A = 1e-323 (its diagonal rounds to 1; the leave rates keep A)
    # and t_rel = 1/γ* overflows to inf. Old: gap 0.0
    sg = spectral_gap(np.array([[1 - A, A], [A, 1 - A]]))
    assert sg.gap == 2 * A and sg.absolute_gap == 2 * A
    # two 2-state blocks joined by A: ℓ₂ = A·(5/6)(1 + O(A)) (the 1e-300 case of
    # test_h81_spectral_gap_relative gives 8.33e-301 for coupling 1e-300), which rounds to A
    P = np.array([[0.5, 0.5, 0, 0], [0.25, 0.75 - A, A, 0], [0, A, 0.5, 0.5 - A], [0, 0, 0.5, 0.5]])
    sg = spectral_gap(P)
    assert sg.gap == A and sg.absolute_gap == A
