"""projected_fixed_point with λ = 1 at the last floats below γ = 1, against exact rationals.

For λ = 1 the TD(1) fixed point is the projection ``Φθ* = Π_D V^π`` (Tsitsiklis & Van Roy 1997,
Lemma 6 with ``M^{-1}(I − γP_π) = I``): ``Ã = I`` and nothing is solved through the nearly
singular ``I − γP_π``. Its singularity check of ``Ã`` (rounding level ``|ΨᵀD M^{-1}|·|I − γP_π|·|Ψ|``,
which carries ``|M^{-1}| ~ 1/(1−γ)``) still ran and refused γ = 1 − 2⁻⁵³ and 1 − 2⁻⁵² ("singular to
rounding: smallest singular value 0.512 ... <= its rounding level 11.9"). With ``V^π`` accurate
there (tests/mdp/test_h94_evaluation_edge_of_one.py) the projection is accurate: checked here
against the exact ``Π_D V^π`` of the stored model and weighting in fractions.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms import projected_fixed_point
from rltheory.mdp import FiniteMDP
from rltheory.testing import dyadic_model, exact_policy_values, exact_solve

from .test_h96_fixed_point_lambda_below_one import _cases  # the same twelve dyadic models

EPS = 2.0**-52


def _exact_projection(Phi, d, V):
    """``(Π_D V, ‖Π_D V − V‖_D²)`` in fractions: the weighted least-squares normal equations."""
    S, k = Phi.shape
    F = [[Fraction(float(x)) for x in row] for row in Phi]
    D = [Fraction(float(x)) for x in d]
    G = [[sum(D[s] * F[s][i] * F[s][j] for s in range(S)) for j in range(k)] for i in range(k)]
    h = [sum(D[s] * F[s][i] * V[s] for s in range(S)) for i in range(k)]
    th = exact_solve(G, h)
    vals = [sum(F[s][i] * th[i] for i in range(k)) for s in range(S)]
    return vals, sum(D[s] * (vals[s] - V[s]) ** 2 for s in range(S))


@pytest.mark.parametrize("gamma", [1.0 - 2.0**-53, 1.0 - 2.0**-52, 1.0 - 3 * 2.0**-53])
def test_td1_fixed_point_is_the_exact_projection_at_the_edge_of_one(gamma):
    # values and error within cond(√DΦ)·ε·max|r_π|/(1−γ) of the exact ones (the accuracy of V^π,
    # which has the size max|r_π|/(1−γ)): measured ≤ 0.97 of it here and at γ = 0.99, 1 − 1e-12;
    # before, 1 − 2^-53 and 1 − 2^-52 were refused as singular to rounding
    for seed, P, R, pi, Phi in _cases():
        fp = projected_fixed_point(FiniteMDP(P, R, gamma=gamma), pi, Phi, lam=1.0)
        S = len(pi)
        V = exact_policy_values(P, R, gamma, np.eye(2)[pi])
        vals, err2 = _exact_projection(Phi, np.asarray(fp.d), V)
        X = np.sqrt(np.asarray(fp.d))[:, None] * Phi
        cond = float(np.linalg.cond(X / np.linalg.norm(X, axis=0)))
        scale = cond * EPS * float(np.abs(R[np.arange(S), pi]).max()) / (1.0 - gamma)
        got = max(abs(Fraction(float(x)) - y) for x, y in zip(fp.values, vals, strict=True))
        assert got <= 4 * Fraction(scale), (seed, float(got) / scale)
        assert abs(fp.error - math.sqrt(err2)) <= 4 * scale, seed
        assert fp.error == pytest.approx(fp.projection_error, rel=0, abs=4 * scale)
        np.testing.assert_allclose(Phi @ fp.theta, fp.values, rtol=0, atol=4 * scale)


def test_td_lambda_half_at_the_last_float_below_one_is_answered_accurately():
    # This test asserted a refusal here ("singular to rounding": σ_min(Ã) ≥ (1−γ)/(1−γλ) fell below
    # Ã's rounding level as the check estimated it). helper-96 derived that level from the
    # difference form Ã is actually computed in and rotated the constant direction into one basis
    # column; the refusal was false, and the answer now meets the documented accuracy
    # cond(√DΦ)·ε·max|V^π|/(1−γλ) against exact rationals (measured 0.14 of it).
    from .test_h96_fixed_point_lambda_below_one import _value_error

    P, R = dyadic_model(0, 4, 2)
    Phi = np.stack([np.ones(4), np.arange(4.0)], axis=1)
    got, scale = _value_error(P, R, np.zeros(4, dtype=int), 1.0 - 2.0**-53, 0.5, Phi)
    assert got <= scale
