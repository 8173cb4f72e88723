"""projected_fixed_point as γ → 1: the values and the certified error against exact rationals.

The TD(λ) fixed point solves ``Φᵀ D M^{-1}(r_π − (I − γP_π)Φθ) = 0`` (``M = I − γλP_π``;
Tsitsiklis & Van Roy 1997, Lemma 6). On a dyadic model (rows of ``k/64``, stored exactly) the
reference below is that equation solved in exact rational arithmetic for the stored ``P``, ``R``,
``γ`` and ``Φ``, with ``d`` the exact stationary law. The values ``Φθ*`` have the size
``max|r|/(1−γ)``, so rounding them alone is ``ε·max|V^π|``; one linear solve erred by about
``ε·max|V^π|/(1−γ)``, and the certificate ``error = ‖Φθ* − V^π‖_D`` (a difference of two such
vectors) came out 14.5 at ``γ = 1 − 1e-9`` where the exact value is 0.139, and 1.6e7 at
``1 − 1e-12``; with ``λ = 1`` it exceeded the projection error, against the bound
``error ≤ ‖Π_D V^π − V^π‖_D/√(1−κ²)`` with ``κ = 0`` (Tsitsiklis & Van Roy 1997, Lemma 6).
"""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest

from rltheory.algorithms.critics import projected_fixed_point
from rltheory.mdp import FiniteMDP
from rltheory.testing import dyadic_model, exact_solve


def _exact(P, R, g, Phi, lam):
    """``(values, V^π, error)`` of the fixed point, exactly (one action: ``π`` trivial)."""
    S, k = Phi.shape
    g, lam = Fr(g), Fr(lam)
    Pp = [[Fr(float(P[s, 0, t])) for t in range(S)] for s in range(S)]
    r = [Fr(float(R[s, 0])) for s in range(S)]
    eye = [[Fr(int(s == t)) for t in range(S)] for s in range(S)]
    stat = [[eye[s][t] - Pp[s][t] for s in range(S)] for t in range(S)]  # d (I − P) = 0
    stat[-1] = [Fr(1)] * S  # Σ d = 1
    d = exact_solve(stat, [Fr(0)] * (S - 1) + [Fr(1)])
    F = [[Fr(float(Phi[s, j])) for j in range(k)] for s in range(S)]
    M = [[eye[s][t] - g * lam * Pp[s][t] for t in range(S)] for s in range(S)]
    LF = [
        [F[s][j] - g * sum(Pp[s][t] * F[t][j] for t in range(S)) for j in range(k)]
        for s in range(S)
    ]
    cols = [exact_solve(M, [LF[s][j] for s in range(S)]) for j in range(k)]
    y = exact_solve(M, r)
    A = [[sum(F[s][i] * d[s] * cols[j][s] for s in range(S)) for j in range(k)] for i in range(k)]
    b = [sum(F[s][i] * d[s] * y[s] for s in range(S)) for i in range(k)]
    th = exact_solve(A, b)
    vals = [sum(F[s][j] * th[j] for j in range(k)) for s in range(S)]
    V = exact_solve([[eye[s][t] - g * Pp[s][t] for t in range(S)] for s in range(S)], r)
    err = float(sum(d[s] * (vals[s] - V[s]) ** 2 for s in range(S))) ** 0.5
    return np.array([float(v) for v in vals]), np.array([float(v) for v in V]), err


@pytest.mark.parametrize("gamma", [1 - 1e-6, 1 - 1e-9, 1 - 1e-12])
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fixed_point_and_its_error_match_exact_rationals_near_gamma_one(gamma, lam, seed):
    P, R = dyadic_model(seed, S=3, A=1)
    Phi = np.c_[np.ones(3), np.arange(3.0)]  # the constant feature: V^π's large direction
    fp = projected_fixed_point(FiniteMDP(P, R, gamma=gamma), np.ones((3, 1)), Phi, lam=lam)
    vals, V, err = _exact(P, R, gamma, Phi, lam)
    tol = 16 * np.finfo(float).eps * np.max(np.abs(V))  # a few roundings of values of size |V^π|
    assert np.max(np.abs(np.asarray(fp.values) - vals)) <= tol
    assert abs(fp.error - err) <= tol
    # Tsitsiklis & Van Roy (1997), Lemma 6: error ≤ projection error/√(1 − κ²), κ = γ(1−λ)/(1−γλ)
    kappa = gamma * (1 - lam) / (1 - gamma * lam)
    assert fp.error <= fp.projection_error / np.sqrt(1 - kappa**2) + 2 * tol


@pytest.mark.parametrize("gamma", [1 - 1e-6, 1 - 1e-9, 1 - 1e-12])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_returned_A_and_b_near_gamma_one(gamma, seed):
    P, R = dyadic_model(seed, S=3, A=1)
    Phi = np.c_[np.ones(3), np.arange(3.0)]
    mdp = FiniteMDP(P, R, gamma=gamma)
    eps = np.finfo(float).eps
    # λ = 0, the constant feature: A[0, 0] = 1ᵀD(I − γP)1 = (1 − γ)·Σ_s d(s) = 1 − γ exactly
    # (it came out 1.7e-5 relative off at γ = 1 − 1e-12: I − γP formed directly rounds to ε)
    A0 = np.asarray(projected_fixed_point(mdp, np.ones((3, 1)), Phi, lam=0.0).A)
    assert abs(A0[0, 0] - (1 - gamma)) <= 16 * eps * (1 - gamma)
    # λ = 1: M^{-1}(I − γP) = I, so A = ΦᵀDΦ and b = ΦᵀD V^π (b was 9e-6 relative off at
    # γ = 1 − 1e-12, through the ill-conditioned M = I − γP); d is the chain's stationary law
    fp = projected_fixed_point(mdp, np.ones((3, 1)), Phi, lam=1.0)
    _, V, _ = _exact(P, R, gamma, Phi, 1.0)
    d = np.asarray(fp.d)
    A_ref = Phi.T @ (d[:, None] * Phi)
    b_ref = Phi.T @ (d * V)
    np.testing.assert_allclose(np.asarray(fp.A), A_ref, rtol=16 * eps, atol=0)
    np.testing.assert_allclose(np.asarray(fp.b), b_ref, rtol=16 * eps, atol=0)


def _sqrt_fraction(q: Fr) -> float:
    """``√q`` for a tiny or huge rational (``float(q)`` would underflow or overflow first)."""
    k = 0
    while q < 1:
        q, k = q * 4, k + 1
    while q > 4:
        q, k = q / 4, k - 1
    return float(np.ldexp(np.sqrt(float(q)), -k))


@pytest.mark.parametrize("scale", [1e-320, 1e-310, 1e-300, 1.5e305])
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_rewards_at_the_ends_of_the_float_range_keep_their_digits(scale, lam):
    # θ*, the values and the errors are linear in r: computed for r/2^e and scaled back. With
    # subnormal rewards (1e-320, three significant digits stored) every product lost digits and the
    # certified error came out 2.95e-321 where the stored model's exact error is 1.39e-321
    P, R = dyadic_model(0, S=3, A=1, scale=scale)
    Phi = np.c_[np.ones(3), np.arange(3.0)]
    g = 0.999
    fp = projected_fixed_point(FiniteMDP(P, R, gamma=g), np.ones((3, 1)), Phi, lam=lam)
    # the exact fixed point of the stored model, and its error, in rationals (not via floats)
    S = 3
    G, L = Fr(g), Fr(lam)
    Pp = [[Fr(float(P[s, 0, t])) for t in range(S)] for s in range(S)]
    r = [Fr(float(R[s, 0])) for s in range(S)]
    eye = [[Fr(int(s == t)) for t in range(S)] for s in range(S)]
    stat = [[eye[s][t] - Pp[s][t] for s in range(S)] for t in range(S)]
    stat[-1] = [Fr(1)] * S
    d = exact_solve(stat, [Fr(0)] * (S - 1) + [Fr(1)])
    F = [[Fr(float(Phi[s, j])) for j in range(2)] for s in range(S)]
    M = [[eye[s][t] - G * L * Pp[s][t] for t in range(S)] for s in range(S)]
    LF = [
        [F[s][j] - G * sum(Pp[s][t] * F[t][j] for t in range(S)) for j in range(2)]
        for s in range(S)
    ]
    cols = [exact_solve(M, [LF[s][j] for s in range(S)]) for j in range(2)]
    y = exact_solve(M, r)
    A = [[sum(F[s][i] * d[s] * cols[j][s] for s in range(S)) for j in range(2)] for i in range(2)]
    th = exact_solve(A, [sum(F[s][i] * d[s] * y[s] for s in range(S)) for i in range(2)])
    vals = [sum(F[s][j] * th[j] for j in range(2)) for s in range(S)]
    V = exact_solve([[eye[s][t] - G * Pp[s][t] for t in range(S)] for s in range(S)], r)
    err = _sqrt_fraction(sum(d[s] * (vals[s] - V[s]) ** 2 for s in range(S)))
    tiny = np.finfo(float).smallest_subnormal
    # relative accuracy at γ = 0.999 (cond·ε·max|V|/((1−γλ)·error) < 1e-12 here), then one rounding
    # to the output's grid (absolute 4.9e-324 for subnormal results)
    assert abs(fp.error - err) <= 1e-12 * err + 2 * tiny
    vmax = max(abs(float(v)) for v in vals)
    assert (
        np.max(np.abs(np.asarray(fp.values) - [float(v) for v in vals])) <= 1e-15 * vmax + 2 * tiny
    )
