"""lstd with ridge > 0 on features with linearly dependent columns.

The Tikhonov estimate ``θ̂ = (Â + ρI)^{-1} b̂`` is defined for any features, but lstd first
computed the exact fixed point to compare with, and that refused a duplicated column ("Phi must have
full column rank on the support of d ... column j=2 is, to rounding, a combination of columns
[1]"), so no estimate was returned at all. Now the estimate is returned with the minimum-norm fixed
point (``rltheory.algorithms._td_min_norm``): values those of a basis of ``span Φ``, ``θ*`` the
minimum-norm coefficients. References: the sample closed form in exact rationals from the same
trajectory; the fixed point of the de-duplicated features; exact ``ΦᵀD(I − γP_π)Φ``.
"""

from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms import projected_fixed_point
from rltheory.algorithms.least_squares_td import lstd
from rltheory.mdp import FiniteMDP
from rltheory.mdp.sample import rollout
from rltheory.testing import dyadic_model, exact_solve

EPS = 2.0**-52
GAMMA = 0.9
PI = np.array([0, 1, 1, 0])
D = np.full(4, 0.25)  # given, so the test can replay lstd's trajectory (mu = d)
RIDGE = 1e-3


def _model():
    P, R = dyadic_model(3, 4, 2)
    return P, R, FiniteMDP(P, R, gamma=GAMMA)


def _features():
    base = np.stack([np.ones(4), np.array([0.0, 1.0, 3.0, 2.0])], axis=1)
    return base, np.concatenate([base, base[:, 1:]], axis=1)  # column 2 duplicates column 1


def _exact_ridge(Phi, s, rewards, gamma, lam, ridge):
    """``(Â + ρI)^{-1} b̂`` with ``z_t = γλz_{t−1} + φ_t``, ``Â = (1/n)Σ z_t(φ_t − γφ_{t+1})ᵀ``,
    ``b̂ = (1/n)Σ z_t r_t``, every stored float read exactly."""
    F = [[Fraction(float(x)) for x in row] for row in Phi]
    g, gl, rho = Fraction(gamma), Fraction(gamma) * Fraction(lam), Fraction(ridge)
    k, n = Phi.shape[1], len(rewards)
    A = [[Fraction(0)] * k for _ in range(k)]
    b = [Fraction(0)] * k
    z = [Fraction(0)] * k
    for t in range(n):
        f0, f1 = F[s[t]], F[s[t + 1]]
        z = [gl * zi + fi for zi, fi in zip(z, f0, strict=True)]
        rt = Fraction(float(rewards[t]))
        for i in range(k):
            b[i] += z[i] * rt / n
            for j in range(k):
                A[i][j] += z[i] * (f0[j] - g * f1[j]) / n
    for i in range(k):
        A[i][i] += rho
    return A, exact_solve(A, b)


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_ridge_estimate_with_a_duplicated_column_is_the_sample_closed_form(lam):
    _, _, mdp = _model()
    _, Phi = _features()
    theta, fp = lstd(mdp, PI, Phi, steps=300, rng=11, lam=lam, d=D, ridge=RIDGE)
    tr = rollout(mdp, PI, 300, 1, np.random.default_rng(11), mu=D)  # lstd's trajectory
    A, exact = _exact_ridge(Phi, tr.states[0], tr.rewards[0], GAMMA, lam, RIDGE)
    # a backward-stable solve errs by about k·ε·cond(Â + ρI)·‖θ‖ (cond ≈ ‖Â‖/ρ here)
    Af = np.array([[float(x) for x in row] for row in A])
    tol = 8 * 3 * EPS * np.linalg.cond(Af) * max(abs(float(x)) for x in exact)
    got = max(abs(float(x) - float(y)) for x, y in zip(theta, exact, strict=True))
    assert got <= tol, (got, tol)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_duplicated_column_gets_the_minimum_norm_fixed_point(lam):
    _, _, mdp = _model()
    base, Phi = _features()
    _, fp = lstd(mdp, PI, Phi, steps=50, rng=0, lam=lam, d=D, ridge=RIDGE)
    ref = projected_fixed_point(mdp, PI, base, lam=lam, d=D)
    # the values (and everything computed from them) are those of the basis, unique
    np.testing.assert_array_equal(fp.values, ref.values)
    assert (fp.error, fp.projection_error) == (ref.error, ref.projection_error)
    # the minimum-norm θ splits the duplicated coefficient equally
    t = np.asarray(ref.theta)
    np.testing.assert_allclose(fp.theta, [t[0], t[1] / 2, t[1] / 2], rtol=4 * EPS, atol=0)
    np.testing.assert_allclose(Phi @ fp.theta, fp.values, rtol=0, atol=8 * EPS * np.abs(t).max())
    # A (singular) and b for the full Φ: the basis's block, and A θ* = b
    np.testing.assert_allclose(fp.A[:2, :2], ref.A, rtol=16 * EPS, atol=0)
    np.testing.assert_allclose(fp.b[:2], ref.b, rtol=16 * EPS, atol=0)
    scale = np.abs(fp.A).max() * np.abs(fp.theta).max() + np.abs(fp.b).max()
    assert np.abs(fp.A @ fp.theta - fp.b).max() <= 16 * EPS * scale


def test_full_phi_td0_matrix_matches_the_exact_rational_one():
    # λ = 0: A = ΦᵀD(I − γP_π)Φ, b = ΦᵀD r_π, with the duplicated column, in fractions
    P, R, mdp = _model()
    _, Phi = _features()
    _, fp = lstd(mdp, PI, Phi, steps=50, rng=0, d=D, ridge=RIDGE)
    g = Fraction(GAMMA)
    Ppi, r = P[np.arange(4), PI], R[np.arange(4), PI]
    F = [[Fraction(float(x)) for x in row] for row in Phi]
    d = [Fraction(1, 4)] * 4
    IgPF = [
        [
            F[s][j] - g * sum(Fraction(float(Ppi[s, t])) * F[t][j] for t in range(4))
            for j in range(3)
        ]
        for s in range(4)
    ]
    for i in range(3):
        for j in range(3):
            exact = sum(F[s][i] * d[s] * IgPF[s][j] for s in range(4))
            assert abs(Fraction(float(fp.A[i, j])) - exact) <= 16 * Fraction(EPS) * abs(exact)
        exact_b = sum(F[s][i] * d[s] * Fraction(float(r[s])) for s in range(4))
        assert abs(Fraction(float(fp.b[i])) - exact_b) <= 16 * Fraction(EPS) * abs(exact_b)


def test_a_scaled_copy_gets_the_minimum_norm_split():
    # Φ = [1, φ, 2φ]: Φθ depends on θ_1 + 2θ_2 = c only, and the minimum-norm (θ_1, θ_2) is
    # c·(1, 2)/5 (the projection of any solution on (1, 2))
    _, _, mdp = _model()
    base, _ = _features()
    Phi = np.concatenate([base, 2 * base[:, 1:]], axis=1)
    _, fp = lstd(mdp, PI, Phi, steps=50, rng=0, d=D, ridge=RIDGE)
    t = np.asarray(projected_fixed_point(mdp, PI, base, d=D).theta)
    # (the projection on the null space's complement errs by a few ε‖θ‖ in each entry)
    np.testing.assert_allclose(
        fp.theta, [t[0], t[1] / 5, 2 * t[1] / 5], rtol=0, atol=4 * EPS * np.linalg.norm(t)
    )


def test_full_rank_features_keep_the_plain_fixed_point():
    _, _, mdp = _model()
    base, _ = _features()
    _, fp = lstd(mdp, PI, base, steps=50, rng=0, d=D, ridge=RIDGE)
    ref = projected_fixed_point(mdp, PI, base, d=D)
    np.testing.assert_array_equal(fp.theta, ref.theta)
    np.testing.assert_array_equal(fp.A, ref.A)


def test_dependent_columns_without_ridge_are_still_refused():
    # ridge = 0: the plain estimator Â^{-1} b̂ does not exist for dependent columns
    _, _, mdp = _model()
    _, Phi = _features()
    with pytest.raises(np.linalg.LinAlgError, match=r"column j=2 is, to rounding, a combination"):
        lstd(mdp, PI, Phi, steps=50, rng=0, d=D)


def test_other_refusals_of_the_fixed_point_are_kept_with_ridge():
    # a bad d is still a located error, not a rank question
    _, _, mdp = _model()
    _, Phi = _features()
    with pytest.raises(ValueError, match="d must have shape"):
        lstd(mdp, PI, Phi, steps=50, rng=0, d=np.full(3, 1 / 3), ridge=RIDGE)
