"""Edge cases of rltheory.mdp.mixing / structure beyond the earlier rounds: numpy scalars as
arguments, empty batches, exact ties of d(t) with ε (checked in rational arithmetic)."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import (
    FiniteMDP,
    chain_structure,
    classify_mdp,
    limiting_matrix,
    mixing_time,
    spectral_gap,
    stationary_distribution,
    tv_distances,
)
from rltheory.testing import exact_solve


def test_numpy_scalars_and_0d_arrays_as_arguments():
    # np.float32 / 0-d array eps, numpy atol and numpy max_policies were refused as out of range
    P = np.array([[0.75, 0.25], [0.25, 0.75]])  # d(t) = 2^{-t}/2: t_mix(1/4) = 1, t_mix(0.01) = 6
    for eps, t in ((np.float32(0.25), 1), (np.array(0.01), 6), (np.float16(0.01), 6)):
        assert int(mixing_time(P, eps)) == t
    for bad in (True, np.bool_(True), "0.25", np.array([0.25]), np.float32(1.0)):
        with pytest.raises(ValueError, match="eps must lie in"):
            mixing_time(P, bad)
    T = np.array([[1.0, 0.0], [1e-3, 1 - 1e-3]])
    assert chain_structure(T, atol=np.float32(0.01)).recurrent_classes == ((0,), (1,))
    assert chain_structure(T, atol=np.array(0)).transient == (1,)
    mdp = FiniteMDP(np.repeat(T[:, None, :], 2, axis=1), np.zeros((2, 2)), None)  # both actions follow T
    st = classify_mdp(mdp, max_policies=np.int64(4), atol=np.float64(0.01))
    assert st.unichain is False and st.closed_classes == ((0,), (1,))
    assert classify_mdp(mdp, max_policies=np.uint8(4)).unichain is True
    for bad in (np.bool_(True), 0.5, np.int64(0)):
        with pytest.raises(ValueError, match="max_policies must be a positive integer"):
            classify_mdp(mdp, max_policies=bad)


def test_empty_batches_give_empty_results(xp):
    # limiting_matrix, tv_distances and mixing_time crashed with numpy's 'need at least one array to
    # stack' on a batch of shape (0, S, S); stationary_distribution already returned shape (0, S)
    P = xp.asarray(np.zeros((0, 3, 3)))
    assert tuple(limiting_matrix(P).shape) == (0, 3, 3)
    assert tuple(tv_distances(P, 4).shape) == (0, 5)
    assert tuple(mixing_time(P).shape) == (0,)
    assert tuple(stationary_distribution(P).shape) == (0, 3)
    assert tuple(mixing_time(xp.asarray(np.zeros((2, 0, 2, 2)))).shape) == (2, 0)


def _exact_curve(P: np.ndarray, t_max: int) -> list[Fraction]:
    """d(t) = max_s ½ Σ_j |P^t(s, j) − μ(j)| for an irreducible P, in rationals (μ by exact_solve)."""
    S = P.shape[0]
    Q = [[Fraction(float(x)) for x in row] for row in P]
    M = [[Fraction(int(i == j)) - Q[j][i] + 1 for j in range(S)] for i in range(S)]  # (I − P + 11ᵀ)ᵀ
    mu = exact_solve(M, [Fraction(1)] * S)
    out, Pt = [], [[Fraction(int(i == j)) for j in range(S)] for i in range(S)]
    for _ in range(t_max + 1):
        out.append(max(sum(abs(Pt[s][j] - mu[j]) for j in range(S)) / 2 for s in range(S)))
        Pt = [[sum(Pt[s][k] * Q[k][j] for k in range(S)) for j in range(S)] for s in range(S)]
    return out


def test_mixing_time_at_exact_ties_with_eps():
    # μ = (1/6, 1/12, 1/4, 1/2) is not dyadic, yet d(t) = 11/12, 3/4, 3/8, 9/32, 21/128, ... is;
    # the float curve gave d(2) = 0.37500000000000006 > 3/8, so t_mix(3/8) was 3 instead of 2
    # (and likewise one too many at every dyadic tie d(t) = ε for t = 2..11)
    P = np.array([[0.0, 0.25, 0.0, 0.75], [0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5], [0.25, 0.0, 0.25, 0.5]])
    assert int(mixing_time(P, 0.375)) == 2
    curve = _exact_curve(P, 24)
    assert curve[:3] == [Fraction(11, 12), Fraction(3, 4), Fraction(3, 8)]
    for t, d in enumerate(curve[:20]):  # the curve runs to 24: room for the step after each tie
        if 0 < d < 1 and Fraction(float(d)) == d:  # ε = d(t) exactly: t_mix(ε) = first t' with d(t') ≤ ε
            eps = float(d)
            expect = next(k for k, dk in enumerate(curve) if dk <= d)
            assert int(mixing_time(P, eps)) == expect, (t, eps)
            below = float(np.nextafter(eps, 0.0))  # just below the tie: one step later
            assert int(mixing_time(P, below)) == next(k for k, dk in enumerate(curve) if dk <= Fraction(below))
    # batches decide each instance alike (the tie instance next to a non-tie one)
    lazy = np.array([[0.75, 0.25], [0.25, 0.75]])
    Pb = np.stack([P, np.pad(lazy, ((0, 2), (0, 2))) + np.diag([0.0, 0.0, 1.0, 1.0])])
    Pb[1, 2:, :2] = 0.5 * Pb[1, 2:, 2:]  # states 2, 3 transient: leave to {0, 1} w.p. 1/2
    Pb[1, 2:, 2:] *= 0.5
    got = mixing_time(Pb, 0.375)
    assert got.tolist() == [2, int(mixing_time(Pb[1], 0.375))]


def test_eps_below_round_off_is_named_as_such():
    # the lazy two-point walk mixes fast (d(t) = 2^{-t}/2, so t_mix(1e-17) = 56 exactly), but the
    # computed d(t) settles at round-off ~1e-16; the error blamed the chain ('does not mix in
    # representable time, or its slowest eigenvalues lie within round-off of 1') instead of eps
    P = np.array([[0.75, 0.25], [0.25, 0.75]])
    with pytest.raises(ValueError, match=r"eps = 1e-17 is below the round-off level 16·S·u = 7\.11e-15 of d\(t\) in float64"):
        mixing_time(P, 1e-17)
    with pytest.raises(ValueError, match=r"eps = 1e-300 is below the round-off level .* \(batch index \(1,\)\)"):
        mixing_time(np.stack([np.eye(2), P]), 1e-300)
    assert int(mixing_time(P, 1e-12)) == 39  # 2^{-39}/2 ≈ 9.1e-13 ≤ 1e-12 < 2^{-38}/2: above the floor


def test_spectral_gap_with_accepted_round_off_below_zero():
    # entries >= -atol pass the probability check as round-off; on a reversible chain the symmetrised
    # matrix took √P of them (NaN) and eigvalsh raised LinAlgError 'Eigenvalues did not converge'.
    # Off the support they are zeros: the spectrum is that of the chain with them (and the matching
    # 1e-9 on the diagonal) removed, up to 1e-9.
    d = 1e-9
    P = np.array([[0.5 + d, 0.5, -d], [0.25, 0.5, 0.25], [-d, 0.5, 0.5 + d]])
    Q = np.array([[0.5, 0.5, 0.0], [0.25, 0.5, 0.25], [0.0, 0.5, 0.5]])  # eigenvalues 1, 1/2, 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 'invalid value encountered in sqrt / log' either
        sg = spectral_gap(P)
    assert sg.reversible
    np.testing.assert_allclose(sg.eigenvalues, [1.0, 0.5, 0.0], rtol=0, atol=4 * d)
    assert sg.absolute_gap == pytest.approx(spectral_gap(Q).absolute_gap, abs=4 * d)


def test_tv_distances_takes_the_0d_array_mixing_time_returns():
    # tv_distances(P, mixing_time(P)) raised 't_max must be a non-negative integer; got array(1)'
    P = np.array([[0.75, 0.25], [0.25, 0.75]])
    np.testing.assert_allclose(tv_distances(P, mixing_time(P)), [0.5, 0.25], rtol=1e-15)  # d(t) = 2^{-t}/2
    np.testing.assert_allclose(tv_distances(P, np.array(2, dtype=np.uint8)), [0.5, 0.25, 0.125], rtol=1e-15)
    for bad in (np.array(1.0), np.array([1]), np.array(True)):
        with pytest.raises(ValueError, match="t_max must be a non-negative integer"):
            tv_distances(P, bad)
