"""LSTD(λ) at the last floats below γ = 1, against the exact rational estimate of the stored samples.

``θ̂ = Â^{-1} b̂`` with ``Â = (1/n) Σ_t z_t (φ_t − γφ'_t)ᵀ``, ``b̂ = (1/n) Σ_t z_t r_t``,
``z_t = γλ z_{t−1} + φ_t`` (Bradtke & Barto 1996; Boyan 2002). Where ``span φ`` holds the constant
vector, ``σ_min(Â) ~ 1 − γ``. The sample singularity check used one rounding level
``16·max(k, √n)·ε·‖(1/n)|Z̃|ᵀ(|Ψ| + γ|Ψ'|)‖_F`` for the whole matrix, which ignores that
``φ_t − γφ'_t = (1−γ)φ_t + γ(φ_t − φ'_t)`` is formed in difference form: every sample of a 3-cycle
(n = 30) was refused from γ = 1 − 2⁻⁴⁴ on. Now the basis is reflected so that one column is the
sample projection of ``1``, its differences are formed in twice the working precision, and each
column is judged at its own rounding level (rltheory/algorithms/_lstd_slow_basis.py). The reference
solves the stored samples' system in fractions; the values are within
``64·ε·max(max|φθ̂|, max|r|/(1−γ))`` of it (documented in ``lstd_estimate``; the second term is the
size by which rounding the rewards by ``ε`` moves the values).
"""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest

from rltheory.algorithms.critics import lstd, lstd_estimate
from rltheory.mdp import FiniteMDP
from rltheory.mdp.sample import rollout
from rltheory.testing import exact_solve

EPS = 2.0**-52
GAMMAS = [1.0 - 2.0**-50, 1.0 - 2.0**-52, 1.0 - 2.0**-53]


def _exact_values(f0, r, f1, gamma, lam, Phi):
    """``Φθ̂`` for the exact ``θ̂ = Â^{-1}b̂`` of the stored floats (fractions)."""
    n, k = f0.shape
    g, lm = Fr(float(gamma)), Fr(float(lam))
    z = [Fr(0)] * k
    A = [[Fr(0)] * k for _ in range(k)]
    b = [Fr(0)] * k
    for t in range(n):
        z = [g * lm * z[j] + Fr(float(f0[t, j])) for j in range(k)]
        d = [Fr(float(f0[t, j])) - g * Fr(float(f1[t, j])) for j in range(k)]
        for i in range(k):
            b[i] += z[i] * Fr(float(r[t]))
            for j in range(k):
                A[i][j] += z[i] * d[j]
    th = exact_solve(A, b)
    return [sum(Fr(float(Phi[s, j])) * th[j] for j in range(k)) for s in range(Phi.shape[0])]


def _error(theta, f0, r, f1, gamma, lam, Phi):
    """``(max_s |Φθ̂ − exact|, ε·max(max|exact|, max|r|/(1−γ)))`` in fractions."""
    ref = _exact_values(f0, r, f1, gamma, lam, Phi)
    got = Phi @ theta
    err = max(abs(Fr(float(x)) - y) for x, y in zip(got, ref, strict=True))
    scale = max(max(abs(float(y)) for y in ref), float(np.max(np.abs(r))) / (1.0 - gamma))
    return err, Fr(EPS * scale)


def _features(kind, S, rng):
    if kind == "one-hot":
        return np.eye(S)
    if kind == "constant+1":
        return np.c_[np.ones(S), rng.standard_normal((S, 1))]
    # three random columns: the constant is in the span but spread over every column
    return rng.standard_normal((S, S))


def _sample(seed, kind):
    rng = np.random.default_rng(seed)
    S, n = 3, 30
    if seed == 0:  # the deterministic 3-cycle, ten laps
        s = np.arange(n + 1) % S
        r = np.array([1.0, -2.0, 0.5])[s[:-1]]
    else:
        s = rng.integers(0, S, n + 1)
        r = rng.standard_normal(n)
    Phi = _features(kind, S, rng)
    return Phi[s[:-1]], r, Phi[s[1:]], Phi


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("kind", ["one-hot", "constant+1", "random"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lstd_estimate_matches_the_exact_sample_estimate_at_the_last_floats(gamma, lam, kind, seed):
    # refused before ("singular to rounding") for every one of these samples
    f0, r, f1, Phi = _sample(seed, kind)
    theta, _, _ = lstd_estimate(f0, r, f1, gamma=gamma, lam=lam)
    err, scale = _error(theta, f0, r, f1, gamma, lam, Phi)
    assert err <= 64 * scale, float(err / scale)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_constant_spread_over_several_columns_is_refined_to_rounding(seed):
    # three random features of a 3-state sample at γ = 1 − 2⁻⁴⁰ (answered before as well): the
    # refinement formed (φ_t − φ'_t)ᵀθ in plain floats, where the constant's huge coefficient
    # cancels, and the values were off by ~1e11·ε relative (1e-4 to 1e-3 of max|φθ̂|)
    gamma = 1.0 - 2.0**-40
    f0, r, f1, Phi = _sample(seed, "random")
    for lam in (0.0, 0.9):
        theta, _, _ = lstd_estimate(f0, r, f1, gamma=gamma, lam=lam)
        err, scale = _error(theta, f0, r, f1, gamma, lam, Phi)
        assert err <= 64 * scale, float(err / scale)


def test_lstd_answers_at_the_last_floats_on_a_replayed_trajectory():
    # lstd samples the trajectory itself; replaying it from the same seed (projected_fixed_point
    # draws nothing) gives the stored samples whose exact estimate the answer must match
    P = np.zeros((3, 1, 3))
    P[[0, 1, 2], 0, [1, 2, 0]] = 0.75
    P[[0, 1, 2], 0, [2, 0, 1]] = 0.25
    R = np.array([[1.0], [-2.0], [0.5]])
    Phi = np.c_[np.ones(3), [0.5, -1.0, 0.25]]
    pi = np.zeros(3, dtype=int)
    for gamma in (1.0 - 2.0**-52, 1.0 - 2.0**-53):
        mdp = FiniteMDP(P, R, gamma=gamma)
        theta, fp = lstd(mdp, pi, Phi, steps=40, rng=7)
        d = np.clip(np.asarray(fp.d), 0.0, None)
        tr = rollout(mdp, pi, 40, 1, np.random.default_rng(7), mu=d / d.sum())
        s = tr.states[0]
        err, scale = _error(theta, Phi[s[:-1]], tr.rewards[0], Phi[s[1:]], gamma, 0.0, Phi)
        assert err <= 64 * scale, float(err / scale)


def test_a_really_singular_sample_near_gamma_one_is_refused_with_its_direction():
    # column 1 is γ on every state and 1 on every next state: φ_t1 − γφ'_t1 = 0 exactly, so Â has a
    # zero column (exactly singular) at γ = 1 − 2⁻⁵⁰; its difference form (1−γ)γ + γ(γ − 1) is 0 too
    gamma = 1.0 - 2.0**-50
    s = np.array([0, 1, 2, 0, 2, 1, 0])
    x = np.array([0.5, -1.0, 2.0])
    f0 = np.c_[x[s[:-1]], np.full(6, gamma)]
    f1 = np.c_[x[s[1:]], np.ones(6)]
    r = np.array([1.0, 0.0, -1.0, 2.0, 0.5, 1.0])
    with pytest.raises(
        np.linalg.LinAlgError,
        match=r"singular to rounding: .*theta ~ \[.*\] \(columns of phi at unit scale; column j=1 "
        r"carries most of it\)",
    ):
        lstd_estimate(f0, r, f1, gamma=gamma)
    # the ridge is the documented way out: (Â + ridge·I)θ = b̂ is defined
    theta, A, b = lstd_estimate(f0, r, f1, gamma=gamma, ridge=1e-3)
    np.testing.assert_allclose((A + 1e-3 * np.eye(2)) @ theta, b, rtol=0, atol=1e-12)


def test_a_sample_with_two_closed_classes_is_refused_near_gamma_one_naming_their_split():
    # {0, 1} and {2, 3} never meet: each class indicator is a slow direction (σ_min(Â) ~ 1 − γ on
    # both), and only the constant one is isolated in a column of the basis; the other is judged
    # at the rounding of the O(1) columns and refused, naming the split of the classes
    s0, s1 = [0, 1, 0, 1, 1, 0], [2, 3, 3, 2, 3, 2]
    f0 = np.eye(4)[s0[:-1] + s1[:-1]]
    f1 = np.eye(4)[s0[1:] + s1[1:]]
    r = np.arange(10.0) % 3 - 1
    with pytest.raises(
        np.linalg.LinAlgError,
        match=r"singular to rounding: .*theta ~ \[ ?1\. +1\. +-1\. +-1\.\]",
    ):
        lstd_estimate(f0, r, f1, gamma=1.0 - 2.0**-52)
    # at γ = 1 − 2⁻³⁰ the same sample is answered to rounding
    theta, _, _ = lstd_estimate(f0, r, f1, gamma=1.0 - 2.0**-30)
    err, scale = _error(theta, f0, r, f1, 1.0 - 2.0**-30, 0.0, np.eye(4))
    assert err <= 64 * scale, float(err / scale)


@pytest.mark.parametrize("seed", range(4))
def test_dot2_is_within_its_error_bound(seed):
    # Ogita, Rump & Oishi (2005), Prop. 5.5: |Dot2(x, y) − xᵀy| ≤ u|xᵀy| + γ_m²|x|ᵀ|y|; the inputs
    # cancel to ~1e-12 of their sizes, where a plain product errs by ~1e-16 of the sizes
    from rltheory.algorithms._lstd_slow_basis import _dot2

    rng = np.random.default_rng(seed)
    m = 7
    y = rng.standard_normal((m, 2))
    X = rng.standard_normal((5, m))
    X[:, -1] = -(X[:, :-1] @ y[:-1, 0]) / y[-1, 0]  # column 0 of XY cancels to rounding
    got = _dot2(X, y)
    u = 2.0**-53
    gm = Fr(m) * Fr(u) / (1 - Fr(m) * Fr(u))
    for i in range(5):
        for j in range(2):
            exact = sum(Fr(float(X[i, c])) * Fr(float(y[c, j])) for c in range(m))
            size = sum(abs(Fr(float(X[i, c])) * Fr(float(y[c, j]))) for c in range(m))
            assert abs(Fr(float(got[i, j])) - exact) <= Fr(u) * abs(exact) + gm * gm * size
