"""Gains and biases of nearly decomposable unichain chains against exact rational references.

Two dense blocks coupled through one state each with probability ``δ`` (1e-6 … 1e-15). The gain
``g = μᵀr`` is well conditioned under entrywise relative perturbations of ``P`` (every entry of
``μ`` is, O'Cinneide 1993), so the exact gain of the float model is reachable to a few ``u``; the
reference is ``P*`` of the row-normalised float model in ``fractions.Fraction`` arithmetic.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP, gain_bias, limiting_matrix
from rltheory.testing import exact_solve


def _two_blocks(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    S, d = 2 * n, 10.0 ** -rng.uniform(6, 15)
    P = np.zeros((S, S))
    P[:n, :n], P[n:, n:] = rng.random((n, n)), rng.random((n, n))
    P /= P.sum(-1, keepdims=True)
    P[0] *= 1 - d
    P[0, n] += d
    P[n] *= 1 - d
    P[n, 0] += d * rng.uniform(0.1, 10)
    P /= P.sum(-1, keepdims=True)
    return P, rng.random(S)


def _exact_gain_bias(P: np.ndarray, r: np.ndarray) -> tuple[Fraction, list[Fraction]]:
    """``g = μᵀr`` and ``h`` with ``(I − P + 1μᵀ) h = r − g`` (so ``μᵀh = 0``), in rationals."""
    S = P.shape[0]
    Pq = [[Fraction(float(x)) for x in row] for row in P]
    Pq = [[x / sum(row) for x in row] for row in Pq]
    mu = exact_solve(
        [[Fraction(int(i == j)) - Pq[j][i] + 1 for j in range(S)] for i in range(S)],
        [Fraction(1)] * S,
    )
    rq = [Fraction(float(x)) for x in r]
    g = sum((m * x for m, x in zip(mu, rq, strict=True)), Fraction(0))
    M = [[Fraction(int(i == j)) - Pq[i][j] + mu[j] for j in range(S)] for i in range(S)]
    return g, exact_solve(M, [x - g for x in rq])


def _exact_gain(P: np.ndarray, r: np.ndarray) -> Fraction:
    """``μᵀr`` with ``μᵀ(I − P + 11ᵀ) = 1ᵀ`` solved in rationals (the chain is irreducible)."""
    S = P.shape[0]
    Pq = [[Fraction(float(x)) for x in row] for row in P]
    Pq = [[x / sum(row) for x in row] for row in Pq]
    M = [[Fraction(int(i == j)) - Pq[j][i] + 1 for j in range(S)] for i in range(S)]
    mu = exact_solve(M, [Fraction(1)] * S)
    return sum((m * Fraction(float(x)) for m, x in zip(mu, r, strict=True)), Fraction(0))


@pytest.mark.parametrize("seed", [1, 5, 8, 12, 19, 21, 34, 39])
def test_gain_of_a_nearly_decomposable_chain_is_accurate(seed):
    # the batched solve of (I − P + 11ᵀ)ᵀμ = 1 loses u/δ: gains were off by up to 1.2e-2 relative
    # (seed 19, δ = 4.6e-15); GTH is used where that system is ill-conditioned
    P, r = _two_blocks(seed)
    S = P.shape[0]
    g, _ = gain_bias(FiniteMDP(P[:, None, :], r[:, None], gamma=None), np.zeros(S, dtype=int))
    exact = _exact_gain(P, r)
    assert abs(Fraction(float(g)) - exact) <= 8 * S * Fraction(2) ** -53 * exact


@pytest.mark.parametrize("seed", [1, 8, 12, 19, 28, 34])
def test_bias_of_a_nearly_decomposable_chain_is_accurate(seed):
    # the solve of (I − P + 1μᵀ) h = r − g loses u/δ relative to ‖h‖∞ (8.8e-2 at δ = 1.3e-15, seed 8,
    # even with the exact gain); the subtraction-free state reduction keeps a few u·S
    P, r = _two_blocks(seed)
    S = P.shape[0]
    _, h = gain_bias(FiniteMDP(P[:, None, :], r[:, None], gamma=None), np.zeros(S, dtype=int))
    _, exact = _exact_gain_bias(P, r)
    scale = max(abs(x) for x in exact)
    err = max(abs(Fraction(float(a)) - b) for a, b in zip(np.asarray(h), exact, strict=True))
    assert err <= 16 * S * Fraction(2) ** -53 * scale


def _multichain(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Class ``C = {0..5}`` (two blocks coupled by ``δ``), absorbing state 6, transient states 7, 8."""
    rng = np.random.default_rng(200 + seed)
    n, S, d = 3, 9, 10.0 ** -rng.uniform(6, 15)
    P = np.zeros((S, S))
    P[:n, :n], P[n : 2 * n, n : 2 * n] = rng.random((n, n)), rng.random((n, n))
    P[: 2 * n] /= P[: 2 * n].sum(-1, keepdims=True)
    P[0] *= 1 - d
    P[0, n] += d
    P[n] *= 1 - d
    P[n, 0] += d
    P[2 * n, 2 * n] = 1.0
    P[2 * n + 1 :] = rng.random((2, S))
    P /= P.sum(-1, keepdims=True)
    return P, rng.random(S)


def _exact_limiting(P: np.ndarray) -> list[list[Fraction]]:
    """``P*`` of :func:`_multichain`'s chains in rationals: ``μ_C`` on C, ``δ_6`` on state 6, and the
    transient rows ``f_C(t) μ_C + f_6(t) δ_6`` with ``(I − Q) f = P_{T,·} 1`` (Puterman Thm A.7)."""
    S, C, T = P.shape[0], list(range(6)), [7, 8]
    Pq = [[Fraction(float(x)) for x in row] for row in P]
    Pq = [[x / sum(row) for x in row] for row in Pq]
    mu = exact_solve(
        [[Fraction(int(i == j)) - Pq[C[j]][C[i]] + 1 for j in C] for i in C], [Fraction(1)] * 6
    )
    A = [[Fraction(int(i == j)) - Pq[T[i]][T[j]] for j in range(2)] for i in range(2)]
    f = exact_solve(A, [sum(Pq[t][c] for c in C) for t in T])
    out = [[Fraction(0)] * S for _ in range(S)]
    for s in C:
        out[s][:6] = mu
    out[6][6] = Fraction(1)
    for i, t in enumerate(T):
        out[t][:6] = [f[i] * m for m in mu]
        out[t][6] = 1 - f[i]
    return out


@pytest.mark.parametrize("seed", [0, 3, 7, 11])
def test_limiting_matrix_and_multichain_gain_with_a_nearly_decomposable_class(seed):
    # the class's μ came from the solve: P* was off by 0.042 and the per-state gains by 4% relative
    P, r = _multichain(seed)
    exact = _exact_limiting(P)
    L = np.asarray(limiting_matrix(P))
    S = P.shape[0]
    for s in range(S):
        for j in range(S):
            assert abs(Fraction(float(L[s, j])) - exact[s][j]) <= 8 * S * Fraction(2) ** -53
    g, _ = gain_bias(FiniteMDP(P[:, None, :], r[:, None], gamma=None), np.zeros(S, dtype=int))
    for s in range(S):
        ge = sum((exact[s][j] * Fraction(float(r[j])) for j in range(S)), Fraction(0))
        assert abs(Fraction(float(g[s])) - ge) <= 16 * S * Fraction(2) ** -53 * ge


@pytest.mark.parametrize("seed", [0, 3, 7, 11])
def test_multichain_bias_with_a_nearly_decomposable_class(seed):
    # h = (I − P + P*)^{-1}(r − g) by the solve was off by 3.8e-2 relative to ‖h‖∞; the reduction
    # (per class, then the transient states) keeps a few u·S. Exact: P*h = 0 and g + (I − P)h = r
    P, r = _multichain(seed)
    S = P.shape[0]
    exact_star = _exact_limiting(P)
    Pq = [[Fraction(float(x)) for x in row] for row in P]
    Pq = [[x / sum(row) for x in row] for row in Pq]
    rq = [Fraction(float(x)) for x in r]
    ge = [sum((exact_star[s][j] * rq[j] for j in range(S)), Fraction(0)) for s in range(S)]
    M = [[Fraction(int(i == j)) - Pq[i][j] + exact_star[i][j] for j in range(S)] for i in range(S)]
    exact = exact_solve(M, [rq[i] - ge[i] for i in range(S)])
    _, h = gain_bias(FiniteMDP(P[:, None, :], r[:, None], gamma=None), np.zeros(S, dtype=int))
    scale = max(abs(x) for x in exact)
    err = max(abs(Fraction(float(a)) - b) for a, b in zip(np.asarray(h), exact, strict=True))
    assert err <= 16 * S * Fraction(2) ** -53 * scale


@pytest.mark.parametrize("per_state", [None, True])
def test_chain_coupled_below_round_off_has_the_closed_form_bias(per_state):
    # P = [[1 − δ, δ], [3δ, 1 − 3δ]] with δ = 1e-30 (1 − δ rounds to 1): μ = (3/4, 1/4), g = 3/4 and
    # d(h0 − h1) = 1/4 with 3h0 + h1 = 0, so h = (1/(16δ), −3/(16δ)). The solve raised numpy's
    # LinAlgError ("Singular matrix") on the unichain path
    d = 1e-30
    P = np.array([[1.0 - d, d], [3.0 * d, 1.0 - 3.0 * d]])
    g, h = gain_bias(
        FiniteMDP(P[:, None, :], np.array([[1.0], [0.0]]), gamma=None),
        np.zeros(2, dtype=int),
        per_state=per_state,
    )
    np.testing.assert_allclose(g, 0.75, rtol=1e-15)
    np.testing.assert_allclose(h, [1 / (16 * d), -3 / (16 * d)], rtol=1e-15)
