"""lstd_estimate refuses an LSTD matrix that is singular to rounding (ridge = 0).

Tsitsiklis & Van Roy (1997, §IX) show off-policy sampling can make the TD matrix singular: with
one feature ``phi = (1, 2)`` and transitions ``1 -> 2``, ``2 -> 2`` (uniform weights),
``A = ((1 - 2 gamma) + 2 (2 - 2 gamma))/2 = (5 - 6 gamma)/2`` vanishes at ``gamma = 5/6``. For the
stored float ``gamma = 5/6`` the exact ``A_hat`` of the sample is ``-1.1e-16`` (``fractions``), a
rounding-level quantity: the old code returned ``theta_hat = -1.08e16`` (exact: ``-1.35e16``)
without a word, where projected_fixed_point refuses the same system. On-policy samples, nearly
singular only through ``gamma -> 1``, are still solved and match the exact estimator.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms.critics import lstd_estimate
from rltheory.testing import exact_solve


def test_off_policy_singular_sample_is_refused():
    phi, phi_next, r = np.array([[1.0], [2.0]]), np.array([[2.0], [2.0]]), np.array([1.0, 1.0])
    g = Fraction(5 / 6)
    assert float(((1 - 2 * g) + 2 * (2 - 2 * g)) / 2) == pytest.approx(-1.11e-16, rel=1e-2)
    with pytest.raises(
        np.linalg.LinAlgError, match=r"A_hat .* is singular to rounding: smallest singular value"
    ):
        lstd_estimate(phi, r, phi_next, gamma=5 / 6)
    # ridge > 0 is the documented way out: (A_hat + 1e-3) theta = 3/2 (A_hat ~ -1e-16)
    theta, _, _ = lstd_estimate(phi, r, phi_next, gamma=5 / 6, ridge=1e-3)
    assert theta[0] == pytest.approx(1500.0, rel=1e-12)


@pytest.mark.parametrize("gamma", [0.9, 0.999, 1 - 1e-7])
@pytest.mark.parametrize("lam", [0.0, 0.9, 1.0])
def test_cycle_near_gamma_one_is_solved_exactly(gamma, lam):
    # deterministic 3-cycle, one-hot features, one full lap per start state: an on-policy sample
    # whose exact estimator (Fraction arithmetic) the solve must reproduce
    S, laps = 3, 4
    s = np.arange(S * laps + 1) % S
    r = np.array([1.0, -2.0, 0.5])[s[:-1]]
    phi, phi_next = np.eye(S)[s[:-1]], np.eye(S)[s[1:]]
    theta, _, _ = lstd_estimate(phi, r, phi_next, gamma=gamma, lam=lam)
    G, L, n = Fraction(gamma), Fraction(lam), len(r)
    z = [Fraction(0)] * S
    A = [[Fraction(0)] * S for _ in range(S)]
    b = [Fraction(0)] * S
    for t in range(n):
        z = [G * L * zi for zi in z]
        z[s[t]] += 1
        for i in range(S):
            A[i][s[t]] += z[i]
            A[i][s[t + 1]] -= G * z[i]
            b[i] += z[i] * Fraction(r[t])
    ref = np.array([float(x) for x in exact_solve(A, b)])
    np.testing.assert_allclose(theta, ref, rtol=1e-6)
