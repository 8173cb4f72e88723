"""Average reward: chain/MDP structure, limiting matrix, mixing, gain/bias, RVI = PI = LP, bounds, zoo."""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.backend import to_numpy
from rltheory.bounds.average import (
    laurent_first_order,
    mixing_time_eps_bound,
    mixing_time_spectral_bounds,
    rvi_asymptotic_rate,
    span_contraction_coefficient,
    vanishing_discount_bound,
)
from rltheory.bounds.rates import fit_linear_rate
from rltheory.errors import ConvergenceWarning, InvalidModelError
from rltheory.mdp import (
    FiniteMDP,
    aperiodicity_transform,
    average_linear_program,
    average_policy_iteration,
    chain_structure,
    classify_mdp,
    evaluate_policy,
    gain_bias,
    hitting_times,
    limiting_matrix,
    mixing_time,
    policy_iteration,
    policy_transition_matrix,
    relative_value_iteration,
    ring_mdp,
    spectral_gap,
    stationary_distribution,
    tv_distances,
    two_room_mdp,
)
from rltheory.testing import average_reward_mdps, exact_solve, policies, transition_kernels

# ---- fixtures: hand-built chains and models -----------------------------------------------


def puterman_822() -> tuple[np.ndarray, np.ndarray]:
    """Markov reward process with the structure of Puterman (1994), Example 8.2.2.

    Recurrent classes {s1} (reward 2) and {s2, s3} (rewards 5, 4); s4, s5 transient
    (rewards 1, 3). The recurrent-class gains are the book's: g(s1) = 2 and
    g(s2) = g(s3) = μᵀr = (7/13)·5 + (6/13)·4 = 59/13 ≈ 4.538 (μ from 0.6 μ2 = 0.7 μ3).
    The transient rows below are this file's; their gains are derived in the test.
    """
    P = np.zeros((5, 5))
    P[0, 0] = 1.0
    P[1, [1, 2]] = [0.4, 0.6]
    P[2, [1, 2]] = [0.7, 0.3]
    P[3, [0, 1, 4]] = [0.5, 0.2, 0.3]
    P[4, [0, 1, 2, 3]] = [0.2, 0.3, 0.3, 0.2]
    return P, np.array([2.0, 5.0, 4.0, 1.0, 3.0])


def multichain_model() -> FiniteMDP:
    """Two absorbing rewarding states and two transient decision states (closed forms in tests).

    s0 absorbing (reward 1), s1 absorbing (reward 2). s2: a0 → s0; a1 → s1 or stay (1/2 each);
    a2 stay with reward 1.5. s3: a0 → s2; a1, a2 → s0 with reward 5.
    """
    P = np.zeros((4, 3, 4))
    R = np.zeros((4, 3))
    P[0, :, 0] = 1.0
    R[0] = 1.0
    P[1, :, 1] = 1.0
    R[1] = 2.0
    P[2, 0, 0] = 1.0
    P[2, 1, [1, 2]] = 0.5
    P[2, 2, 2] = 1.0
    R[2, 2] = 1.5
    P[3, 0, 2] = 1.0
    P[3, 1:, 0] = 1.0
    R[3, 1:] = 5.0
    return FiniteMDP(P, R, None)


def _random_chain(rng: np.random.Generator, S: int, power: float = 1.0) -> np.ndarray:
    P = rng.random((S, S)) ** power
    return P / P.sum(-1, keepdims=True)


@st.composite
def chains(draw, min_states: int = 1, max_states: int = 6) -> np.ndarray:
    """Arbitrary chains (absorbing rows, sparsity, several classes) via rltheory.testing."""
    S = draw(st.integers(min_states, max_states))
    return draw(transition_kernels(S, 1))[:, 0, :]


def _brute_classes(P: np.ndarray) -> tuple[set, set]:
    """Recurrent / transient states by reachability closure (independent of networkx SCCs)."""
    S = P.shape[0]
    R = (P > 0) | np.eye(S, dtype=bool)
    for _ in range(S):
        R = R | ((R.astype(int) @ R.astype(int)) > 0)
    recurrent = {s for s in range(S) if all(R[t, s] for t in range(S) if R[s, t])}
    return recurrent, set(range(S)) - recurrent


# ---- chain structure --------------------------------------------------------------------


def test_chain_structure_hand_built():
    # periodic 3-cycle: one class, period 3
    C3 = np.roll(np.eye(3), 1, axis=1)
    cs = chain_structure(C3)
    assert cs.irreducible and cs.unichain and cs.periods == (3,) and not cs.aperiodic
    # a self-loop breaks periodicity
    lazy = 0.5 * (np.eye(3) + C3)
    assert chain_structure(lazy).periods == (1,)
    # directed 4-cycle: period 4; simple random walk on the (bipartite) 4-cycle: period 2
    C4 = np.roll(np.eye(4), 1, axis=1)
    assert chain_structure(C4).periods == (4,)
    assert chain_structure(0.5 * (C4 + C4.T)).periods == (2,)
    # Puterman Example 8.2.2 structure: classes {0}, {1, 2}; transient {3, 4}
    P, _ = puterman_822()
    cs = chain_structure(P)
    assert cs.recurrent_classes == ((0,), (1, 2)) and cs.transient == (3, 4) and not cs.unichain
    assert "recurrent classes {0}, {1, 2}" in cs.describe()


@settings(max_examples=40)
@given(chains())
def test_chain_structure_matches_reachability_and_periods(P):
    cs = chain_structure(P)
    rec, trans = _brute_classes(P)
    assert set(cs.transient) == trans
    assert {s for c in cs.recurrent_classes for s in c} == rec
    assert sorted(s for c in cs.classes for s in c) == list(range(P.shape[0]))
    for c, d in zip(cs.recurrent_classes, cs.periods, strict=True):
        idx = list(c)
        assert np.allclose(P[np.ix_(idx, idx)].sum(-1), 1.0)  # closed
        G = nx.DiGraph()
        G.add_nodes_from(idx)
        G.add_edges_from((u, v) for u in idx for v in idx if P[u, v] > 0)
        assert (d == 1) == nx.is_aperiodic(G)
        # d = gcd of return times n ≤ 2|C|² at the first state of the class (brute force)
        B = (P[np.ix_(idx, idx)] > 0).astype(int)
        M, returns = np.eye(len(idx), dtype=int), []
        for n in range(1, 2 * len(idx) ** 2 + 2):
            M = (M @ B > 0).astype(int)
            if M[0, 0]:
                returns.append(n)
        assert math.gcd(*returns) == d


# ---- MDP classification -----------------------------------------------------------------


def _brute_classify(mdp: FiniteMDP) -> dict:
    P = np.asarray(mdp.P)
    S, A = mdp.S, mdp.A
    structs = [
        chain_structure(P[np.arange(S), list(pol)]) for pol in itertools.product(range(A), repeat=S)
    ]
    union = np.any(P > 0, axis=1) | np.eye(S, dtype=bool)
    reach = union.copy()
    for _ in range(S):
        reach = reach | ((reach.astype(int) @ reach.astype(int)) > 0)
    rec_any = {s for cs in structs for c in cs.recurrent_classes for s in c}
    return {
        "recurrent": all(cs.irreducible for cs in structs),
        "unichain": all(cs.unichain for cs in structs),
        "communicating": bool(reach.all()),
        "weakly": all(reach[s, t] for s in rec_any for t in rec_any),
    }


def test_classify_hand_built():
    # all-positive kernel: recurrent
    rng = np.random.default_rng(0)
    P = rng.random((3, 2, 3)) + 0.1
    st_ = classify_mdp(FiniteMDP(P / P.sum(-1, keepdims=True), np.zeros((3, 2)), None))
    assert st_.kind == "recurrent" and st_.unichain and st_.weakly_communicating
    # unichain, not communicating: state 0 absorbing and every action elsewhere leaks to 0
    P = np.zeros((3, 2, 3))
    P[0, :, 0] = 1.0
    P[1, 0, [0, 1]] = 0.5
    P[1, 1, [0, 2]] = 0.5
    P[2, :, [0, 1]] = 0.5
    st_ = classify_mdp(FiniteMDP(P, np.zeros((3, 2)), None))
    assert st_.kind == "unichain" and not st_.communicating and st_.weakly_communicating
    # multichain and not weakly communicating: two absorbing states
    st_ = classify_mdp(multichain_model())
    assert st_.kind == "multichain" and st_.closed_classes == ((0,), (1,))
    assert st_.witness_policy is not None and len(st_.witness_classes) >= 2


@settings(max_examples=40)
@given(st.integers(1, 4), st.integers(1, 3), st.data())
def test_classify_matches_brute_force(S, A, data):
    P = data.draw(transition_kernels(S, A))
    mdp = FiniteMDP(P, np.zeros((S, A)), None)
    st_ = classify_mdp(mdp)
    bf = _brute_classify(mdp)
    assert st_.recurrent == bf["recurrent"]
    assert st_.unichain == bf["unichain"]
    assert st_.communicating == bf["communicating"]
    assert st_.weakly_communicating == bf["weakly"]
    if st_.witness_policy is not None:  # the witness really has two recurrent classes
        Ppi = P[np.arange(S), st_.witness_policy]
        assert len(chain_structure(Ppi).recurrent_classes) >= 2


def test_classify_reports_undetermined_beyond_cap():
    # 0 absorbing, every other row leaks to 0 under every action: unichain but not recurrent, and
    # no multichain witness exists, so with a cap below A^S = 729 the verdict is None, never a guess
    rng = np.random.default_rng(3)
    P = rng.random((6, 3, 6))
    P[:, 0] = 0.0
    P[:, 0, 0] = 1.0
    P[0] = 0.0
    P[0, :, 0] = 1.0
    P /= P.sum(-1, keepdims=True)
    mdp = FiniteMDP(P, np.zeros((6, 3)), None)
    capped = classify_mdp(mdp, max_policies=10)
    assert capped.unichain is None and capped.multichain is None
    assert capped.kind == "weakly communicating"
    assert classify_mdp(mdp).unichain is True


# ---- stationary distribution, limiting matrix ---------------------------------------------


def test_stationary_two_state_closed_form(xp):
    # P = [[1-p, p], [q, 1-q]]: μ = (q, p)/(p+q)
    p, q = 0.3, 0.1
    P = xp.asarray(np.array([[1 - p, p], [q, 1 - q]]))
    mu = to_numpy(stationary_distribution(P))
    np.testing.assert_allclose(mu, [q / (p + q), p / (p + q)], rtol=0, atol=1e-14)


@settings(max_examples=40)
@given(st.integers(1, 7), st.integers(0, 2**31))
def test_stationary_is_invariant_and_batched(S, seed):
    rng = np.random.default_rng(seed)
    P = np.stack([_random_chain(rng, S, 3.0) for _ in range(3)])
    mu = stationary_distribution(P)
    np.testing.assert_allclose(np.einsum("bs,bst->bt", mu, P), mu, atol=1e-12)
    np.testing.assert_allclose(mu.sum(-1), 1.0, atol=1e-12)
    assert np.all(mu >= -1e-14)
    # consistency: an independent left eigenvector for eigenvalue 1
    w, V = np.linalg.eig(P[0].T)
    v = np.real(V[:, np.argmin(np.abs(w - 1))])
    np.testing.assert_allclose(mu[0], v / v.sum(), atol=1e-10)


def test_stationary_refuses_multichain():
    P, _ = puterman_822()
    with pytest.raises(ValueError, match=r"recurrent classes \{0\}, \{1, 2\}"):
        stationary_distribution(P)


@settings(max_examples=40)
@given(chains())
def test_limiting_matrix_identities(P):
    Ps = limiting_matrix(P)
    S = P.shape[0]
    for lhs in (P @ Ps, Ps @ P, Ps @ Ps):
        np.testing.assert_allclose(lhs, Ps, atol=1e-11)
    np.testing.assert_allclose(Ps.sum(-1), 1.0, atol=1e-12)
    # Cesàro identity Σ_{t<N} (P^t − P*) = (I − P^N) H with H the deviation matrix
    H = np.linalg.solve(np.eye(S) - P + Ps, np.eye(S) - Ps)
    N = 64
    acc, M = np.zeros((S, S)), np.eye(S)
    for _ in range(N):
        acc += M - Ps
        M = M @ P
    np.testing.assert_allclose(acc, (np.eye(S) - M) @ H, atol=1e-9)


def test_limiting_matrix_reference_and_backends(xp):
    P, _ = puterman_822()
    Ps = to_numpy(limiting_matrix(xp.asarray(P)))
    # recurrent rows: δ_0 and μ = (7/13, 6/13) on {1, 2}; absorption from s4 into {s1}:
    # f4 = .5 + .3 f5, f5 = .2 + .2 f4  ⇒  f4 = .56/.94, f5 = .2 + .2 f4
    f4 = 0.56 / 0.94
    f5 = 0.2 + 0.2 * f4
    mu = np.array([7, 6]) / 13
    expect = np.zeros((5, 5))
    expect[0, 0] = 1
    expect[1:3, 1:3] = mu
    expect[3, 0], expect[3, 1:3] = f4, (1 - f4) * mu
    expect[4, 0], expect[4, 1:3] = f5, (1 - f5) * mu
    np.testing.assert_allclose(Ps, expect, atol=1e-13)


# ---- mixing times -------------------------------------------------------------------------


def _brute_tmix(P: np.ndarray, eps: float) -> int:
    w, V = np.linalg.eig(P.T)
    mu = np.real(V[:, np.argmin(np.abs(w - 1))])
    mu /= mu.sum()
    M, t = np.eye(P.shape[0]), 0
    while 0.5 * np.abs(M - mu).sum(-1).max() > eps:
        M, t = M @ P, t + 1
    return t


@settings(max_examples=40)
@given(
    st.integers(1, 6),
    st.integers(0, 2**31),
    st.sampled_from([0.25, 0.1, 0.01]),
    st.sampled_from([1.0, 4.0]),
)
def test_mixing_time_equals_brute_force_tv(S, seed, eps, power):
    rng = np.random.default_rng(seed)
    P = _random_chain(rng, S, power)
    P = 0.8 * P + 0.2 * np.roll(np.eye(S), 1, axis=1)  # keeps some slow chains
    assert int(mixing_time(P, eps)) == _brute_tmix(P, eps)


def test_mixing_time_two_state_closed_form_and_batch(xp):
    # d(t) = |1−p−q|^t · max(p, q)/(p+q)
    p, q = 0.05, 0.15
    lam, c = 1 - p - q, max(p, q) / (p + q)
    expect = [math.ceil(math.log(eps / c) / math.log(lam)) for eps in (0.25, 0.01)]
    P = np.array([[1 - p, p], [q, 1 - q]])
    got = [int(mixing_time(xp.asarray(P), eps)) for eps in (0.25, 0.01)]
    assert got == expect
    batch = np.stack([P, 0.5 * (np.eye(2) + P)])
    t = to_numpy(mixing_time(xp.asarray(batch), 0.01))
    assert t.tolist() == [expect[1], _brute_tmix(batch[1], 0.01)]


def _exact_tv_curve(P: np.ndarray, T: int) -> list[Fraction]:
    """d(t) = max_s ½ Σ_j |P^t(s, j) − P*(s, j)|, t = 0..T, in rationals (P as the floats it holds):
    μ_k on each recurrent class and absorption probabilities (I − Q) f = b by exact_solve."""
    S = P.shape[0]
    Q = [[Fraction(float(x)) for x in row] for row in P]
    rec, trans = _brute_classes(P)
    trans = sorted(trans)
    Ps = [[Fraction(0)] * S for _ in range(S)]
    reach = (P > 0) | np.eye(S, dtype=bool)
    for _ in range(S):
        reach = reach | ((reach.astype(int) @ reach.astype(int)) > 0)
    classes = {frozenset(np.flatnonzero(reach[s]).tolist()) for s in rec}
    for C in map(sorted, classes):
        n = len(C)
        M = [[Fraction(int(i == j)) - Q[C[j]][C[i]] + 1 for j in range(n)] for i in range(n)]
        mu = exact_solve(M, [Fraction(1)] * n)
        f = [Fraction(0)] * len(trans)
        if trans:
            A = [
                [Fraction(int(i == j)) - Q[a][b] for j, b in enumerate(trans)]
                for i, a in enumerate(trans)
            ]
            f = exact_solve(A, [sum((Q[t][c] for c in C), Fraction(0)) for t in trans])
        for s, w in [(s, Fraction(1)) for s in C] + list(zip(trans, f, strict=True)):
            for m, c in zip(mu, C, strict=True):
                Ps[s][c] = w * m
    out, Pt = [], [[Fraction(int(i == j)) for j in range(S)] for i in range(S)]
    for _ in range(T + 1):
        out.append(max(sum(abs(Pt[s][j] - Ps[s][j]) for j in range(S)) / 2 for s in range(S)))
        Pt = [[sum(Pt[s][m] * Q[m][j] for m in range(S)) for j in range(S)] for s in range(S)]
    return out


@settings(max_examples=20)
@given(chains(min_states=2), st.integers(5, 30))
def test_tv_curve_is_non_increasing_and_gives_tmix(P, T):
    P = 0.5 * (P + np.eye(P.shape[0]))  # lazy ⇒ aperiodic
    d = tv_distances(P, T)
    assert np.all(np.diff(d) <= 1e-12)
    below = np.flatnonzero(d <= 0.25)
    k = int(below[0]) if below.size else T + 1
    # At an exact tie d(t) = 1/4 (lazy chains with dyadic entries: P = ½(I + [[0,1,0],[0,0,1],[0,1,0]])
    # has d(2) = 1/4) the float curve's round-off decides which side it falls on, while mixing_time
    # resolves ties in rationals (since the fix for t_mix(3/8) = 3 instead of 2); there the exact
    # curve is the reference.
    exact_rows = all(
        sum(Fraction(float(x)) for x in row) == 1 for row in P
    )  # else d(t) is only a float
    if exact_rows and any(abs(d[j] - 0.25) <= 1e-12 for j in (k - 1, k) if 0 <= j <= T):
        exact = _exact_tv_curve(P, T)
        k = next((t for t, dt in enumerate(exact) if dt <= Fraction(1, 4)), T + 1)
    if k <= T:  # the curve reaches 1/4 within T steps: its first hit is t_mix
        assert int(mixing_time(P, 0.25)) == k
    else:
        assert int(mixing_time(P, 0.25)) > T


def test_mixing_time_refuses_periodic():
    with pytest.raises(ValueError, match=r"periodic .*periods \[2\]"):
        mixing_time(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="eps must lie in"):
        mixing_time(np.eye(2), 1.5)


@pytest.mark.parametrize("n", [4, 8, 16])
def test_lazy_ring_spectrum_and_spectral_sandwich(n):
    # uniform policy on ring_mdp = lazy walk αI + (1−α)(C + Cᵀ)/2, gap (1−α)(1 − cos 2π/n) (LPW §12.3.1)
    mdp = ring_mdp(n, laziness=0.5)
    P = np.asarray(policy_transition_matrix(mdp, np.full((n, 2), 0.5)))
    sg = spectral_gap(P)
    assert sg.reversible
    assert sg.gap == pytest.approx(0.5 * (1 - math.cos(2 * math.pi / n)), abs=1e-12)
    assert sg.absolute_gap == pytest.approx(sg.gap, abs=1e-12)  # lazy ⇒ non-negative spectrum
    for eps in (0.25, 0.05):
        lo, hi = mixing_time_spectral_bounds(sg.relaxation_time, eps, 1.0 / n)
        t = int(mixing_time(P, eps))
        assert lo <= t <= hi
        assert t <= mixing_time_eps_bound(int(mixing_time(P)), eps)


def test_spectral_gap_reversible_path_matches_general_eigensolver():
    rng = np.random.default_rng(5)
    W = rng.random((5, 5))
    W = W + W.T  # random walk on a weighted graph is reversible
    P = W / W.sum(-1, keepdims=True)
    sg = spectral_gap(P)
    lam = np.sort(np.linalg.eigvals(P).real)[::-1]
    assert sg.reversible
    np.testing.assert_allclose(sg.eigenvalues, lam, atol=1e-12)
    assert sg.gap == pytest.approx(1 - lam[1], abs=1e-12)
    assert sg.absolute_gap == pytest.approx(1 - max(abs(lam[1]), abs(lam[-1])), abs=1e-12)
    # non-reversible: lazy directed 3-cycle, eigenvalues ½ + ½ e^{2πik/3}
    D = 0.5 * (np.eye(3) + np.roll(np.eye(3), 1, axis=1))
    sg = spectral_gap(D)
    assert not sg.reversible
    assert sg.absolute_gap == pytest.approx(1 - abs(0.5 + 0.5 * np.exp(2j * np.pi / 3)), abs=1e-12)
    with pytest.raises(ValueError, match="unichain"):
        spectral_gap(np.eye(2))
    # unichain with transient states (μ = 0 there): the general solver, never D^{-1/2}
    T = np.array([[0.5, 0.5, 0.0], [0.0, 0.9, 0.1], [0.0, 0.2, 0.8]])
    sg = spectral_gap(T)
    assert not sg.reversible
    lam = np.sort(np.abs(np.linalg.eigvals(T)))[::-1]
    assert sg.absolute_gap == pytest.approx(1 - lam[1], abs=1e-12) and 0 < sg.absolute_gap < 1


def test_spectral_gap_tiny_non_reversible_part_is_not_called_reversible():
    # 0 -> 0 w.p. 1-δ, 0 -> 1 w.p. δ, then 1 -> 2 -> 3 -> 0. Characteristic polynomial
    # λ⁴ − (1−δ)λ³ − δ = (λ − 1)(λ³ + δλ² + δλ + δ): the other eigenvalues have modulus ≈ δ^{1/3}.
    # The flows μ(s)P(s,s') of the directed part are ≈ δ = 1e-13, below the old absolute
    # detailed-balance tolerance 1e-12: the chain was called reversible and the symmetrised
    # spectrum gave γ* = 0.293 instead of 1 − 4.6e-5.
    d = 1e-13
    P = np.zeros((4, 4))
    P[0, 0], P[0, 1], P[1, 2], P[2, 3], P[3, 0] = 1 - d, d, 1.0, 1.0, 1.0
    sg = spectral_gap(P)
    assert not sg.reversible
    modulus = np.max(np.abs(np.roots([1.0, d, d, d])))
    assert modulus == pytest.approx(d ** (1 / 3), rel=1e-4)
    assert sg.absolute_gap == pytest.approx(1 - modulus, abs=1e-12)


@pytest.mark.parametrize(
    ("S", "p", "reference"),
    [
        # 1 − |λ₂| computed by mpmath.eig at 450 digits (the eigenvectors of these chains have
        # condition numbers up to ((1−p)/p)^S, so double or 60-digit general solvers cannot resolve them)
        (10, 0.01, 0.81074214286158696181),
        (20, 0.01, 0.80345250186623071460),
        (60, 0.001, 0.93687270996672033501),
    ],
)
def test_spectral_gap_of_birth_death_chain_with_strong_drift(S, p, reference):
    # Reversible birth–death chain, up w.p. p, down w.p. 1 − p, holding at the ends:
    # μ(s) ∝ (p/(1−p))^s spans 1e-19 … 1e-177. Forming D^{1/2} P D^{-1/2} from the computed μ
    # lost accuracy (γ* = 0.810684 for S = 10, 6e-5 off) and divided by μ = 0 (LinAlgError,
    # S ≥ 20); detailed balance gives the entries √(P(s,s')P(s',s)) without μ.
    P = np.zeros((S, S))
    idx = np.arange(S - 1)
    P[idx, idx + 1] = p
    P[idx + 1, idx] = 1 - p
    P[np.arange(S), np.arange(S)] = 1 - P.sum(-1)
    sg = spectral_gap(P)
    assert sg.reversible
    assert sg.absolute_gap == pytest.approx(reference, abs=1e-13)
    assert np.all(np.isfinite(sg.eigenvalues)) and sg.eigenvalues[0] == pytest.approx(
        1.0, abs=1e-13
    )


def test_hitting_times_reference_and_kac():
    # gambler's ruin on {0..N}: E_i[τ_{0,N}] = i (N − i)
    N = 6
    P = np.zeros((N + 1, N + 1))
    P[0, 0] = P[N, N] = 1.0
    for i in range(1, N):
        P[i, i - 1] = P[i, i + 1] = 0.5
    np.testing.assert_allclose(
        hitting_times(P, [0, N]), [i * (N - i) for i in range(N + 1)], atol=1e-10
    )
    # only {0}: states that can be absorbed at N never hit 0 a.s. → inf
    k = hitting_times(P, 0)
    assert k[0] == 0 and np.all(np.isinf(k[1:]))
    # Kac: E_s[τ_s⁺] = 1 + Σ_j P(s, j) E_j[τ_s] = 1/μ(s) for an irreducible chain
    rng = np.random.default_rng(2)
    Q = _random_chain(rng, 5, 3.0)
    mu = stationary_distribution(Q)
    for s in range(5):
        ret = 1 + Q[s] @ hitting_times(Q, s)
        assert ret == pytest.approx(1 / mu[s], rel=1e-10)
    with pytest.raises(ValueError, match="target must be non-empty"):
        hitting_times(Q, [7])


@pytest.mark.parametrize("d", [1e-9, 1e-12])
def test_nearly_absorbing_transient_state_limit_gain_and_hitting_time(d):
    # State 0 holds w.p. 1 − d, else moves to a split between absorbing states 1 and 2 (¼ : ¾);
    # reward 1 in state 1, 3 in state 2. Closed forms: P*(0, ·) = (0, ¼, ¾), g(0) = ¼ + 9/4 = 5/2,
    # E_0[τ_{1,2}] = 1/d. 1 − (1 − d) in floating point keeps only ε/d relative accuracy: the row
    # P*(0, ·) summed to 1 + 2.2e-5 at d = 1e-12 (gain 2.50006 > the optimum's closed form) and the
    # hitting time was 1.00002/d; the leave rate Σ_{j≠0} P(0, j) = d has none of that error.
    P = np.array([[1 - d, d / 4, 3 * d / 4], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(limiting_matrix(P)[0], [0.0, 0.25, 0.75], rtol=1e-14, atol=0)
    mdp = FiniteMDP(P[:, None, :], np.array([[0.0], [1.0], [3.0]]), gamma=None)
    g, h = gain_bias(mdp, np.zeros(3, dtype=int))
    np.testing.assert_allclose(g, [2.5, 1.0, 3.0], rtol=1e-14, atol=0)
    assert hitting_times(P, [1, 2])[0] == pytest.approx(1 / d, rel=1e-13)


@pytest.mark.parametrize("d", [1e-9, 1e-12])
def test_transient_cycle_with_rare_exit_limit_and_gain(d):
    # Transient cycle 0 → 1 → 0 (w.p. 1 − d), leaving from 1 to the absorbing states 2 and 3
    # (d/4 and 3d/4). Closed form: P*(0, ·) = P*(1, ·) = (0, 0, ¼, ¾); with rewards (0, 0, 1, 3)
    # g = (5/2, 5/2, 1, 3). Any elimination that forms 1 − (1 − d) keeps only ε/d: a linear solve
    # gave P*(0, ·) summing to 1 + 3e-5 at d = 1e-12.
    P = np.zeros((4, 4))
    P[0, 1] = 1.0
    P[1, 0], P[1, 2], P[1, 3] = 1 - d, d / 4, 3 * d / 4
    P[2, 2] = P[3, 3] = 1.0
    Pstar = limiting_matrix(P)
    np.testing.assert_allclose(Pstar[:2], [[0, 0, 0.25, 0.75]] * 2, rtol=1e-14, atol=0)
    mdp = FiniteMDP(P[:, None, :], np.array([[0.0], [0.0], [1.0], [3.0]]), gamma=None)
    np.testing.assert_allclose(
        gain_bias(mdp, np.zeros(4, dtype=int)).g, [2.5, 2.5, 1.0, 3.0], rtol=1e-14
    )


@settings(max_examples=40)
@given(chains(), st.data())
def test_hitting_times_solve_first_step_equations(P, data):
    S = P.shape[0]
    B = np.zeros(S, dtype=bool)
    B[data.draw(st.integers(0, S - 1))] = True
    k = hitting_times(P, B)
    fin = np.isfinite(k)
    assert np.all(k[B] == 0)
    off = fin & ~B
    # finite states only move to finite states (outside B) and satisfy k = 1 + P k
    assert np.all(P[np.ix_(off, ~fin)] == 0)
    kk = np.where(fin, k, 0.0)
    np.testing.assert_allclose(k[off], 1 + P[off] @ kk, atol=1e-8 * (1 + np.abs(kk).max()))


# ---- gain and bias --------------------------------------------------------------------------


@settings(max_examples=40)
@given(st.integers(1, 5), st.integers(1, 3), st.data())
def test_gain_bias_solve_the_poisson_equations(S, A, data):
    P = data.draw(transition_kernels(S, A))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    mdp = FiniteMDP(P, rng.random((S, A)), None)
    pi = data.draw(policies(S, A))
    g, h = gain_bias(mdp, pi, per_state=True)
    Ppi = np.asarray(policy_transition_matrix(mdp, pi))
    r = (pi * np.asarray(mdp.R)).sum(-1)
    np.testing.assert_allclose(Ppi @ g, g, atol=1e-10)
    np.testing.assert_allclose(g + h, r + Ppi @ h, atol=1e-9)
    np.testing.assert_allclose(limiting_matrix(Ppi) @ h, 0.0, atol=1e-9)
    g0, h0 = gain_bias(mdp, pi)
    if chain_structure(Ppi).unichain:  # scalar gain, μᵀh = 0
        assert np.ndim(g0) == 0 and np.allclose(g, g0, atol=1e-10)
        assert abs(stationary_distribution(Ppi) @ h0) < 1e-9
    else:
        assert np.shape(g0) == (S,)


def test_gain_bias_puterman_822_reference():
    P, r = puterman_822()
    mdp = FiniteMDP(P[:, None, :], r[:, None], None)
    g, h = gain_bias(mdp, np.zeros(5, dtype=int))
    # g on classes: 2 and 59/13; transient: absorption-weighted, f4 = .56/.94, f5 = .2 + .2 f4
    f4 = 0.56 / 0.94
    f5 = 0.2 + 0.2 * f4
    np.testing.assert_allclose(
        g,
        [2, 59 / 13, 59 / 13, 2 * f4 + 59 / 13 * (1 - f4), 2 * f5 + 59 / 13 * (1 - f5)],
        atol=1e-12,
    )
    # bias on {s2, s3}: h2 − h3 = (5 − 59/13)/0.6 = 10/13 and 7 h2 + 6 h3 = 0 ⇒ h2 = 60/169, h3 = −70/169
    np.testing.assert_allclose(h[:3], [0, 60 / 169, -70 / 169], atol=1e-12)
    with pytest.raises(ValueError, match=r"per_state=False.*recurrent classes \{0\}, \{1, 2\}"):
        gain_bias(mdp, np.zeros(5, dtype=int), per_state=False)


def test_gain_bias_backends_and_batch(xp):
    rng = np.random.default_rng(0)
    P = rng.random((2, 4, 3, 4)) + 0.05
    P /= P.sum(-1, keepdims=True)
    R = rng.random((2, 4, 3))
    pi = rng.integers(0, 3, size=(2, 4))
    mdp = FiniteMDP(xp.asarray(P), xp.asarray(R), None)
    g, h = gain_bias(mdp, xp.asarray(pi))
    ref = [gain_bias(FiniteMDP(P[i], R[i], None), pi[i]) for i in range(2)]
    np.testing.assert_allclose(to_numpy(g), [float(x.g) for x in ref], atol=1e-12)
    np.testing.assert_allclose(to_numpy(h), np.stack([x.h for x in ref]), atol=1e-11)


@settings(max_examples=40)
@given(average_reward_mdps(max_states=5), st.data())
def test_discounted_values_tend_to_gain_within_span_bound(mdp, data):
    # policy level: ‖(1−γ)V_γ^π − g^π‖∞ ≤ (1−γ) sp(h^π), and the exact Laurent remainder
    # (1−γ)V_γ − (g + (1−γ)h) = −(1−γ)² (I − γP)^{-1} P h
    pi = data.draw(policies(mdp.S, mdp.A))
    g, h = gain_bias(mdp, pi)
    P = np.asarray(policy_transition_matrix(mdp, pi))
    for gamma in (0.5, 0.9, 0.99, 0.999):
        V = np.asarray(evaluate_policy(mdp.replace(gamma=gamma), pi))
        err = np.abs((1 - gamma) * V - g).max()
        assert err <= float(vanishing_discount_bound(gamma, float(np.ptp(h)))) * (1 + 1e-9) + 1e-12
        rem = (1 - gamma) * V - laurent_first_order([gamma], g, h)[0]
        exact = -((1 - gamma) ** 2) * np.linalg.solve(np.eye(mdp.S) - gamma * P, P @ h)
        np.testing.assert_allclose(rem, exact, atol=1e-9)


@settings(max_examples=40)
@given(average_reward_mdps(max_states=5))
def test_optimal_discounted_values_tend_to_optimal_gain(mdp):
    # optimal level: ‖(1−γ)V*_γ − g*‖∞ ≤ (1−γ) sp(h*)  (bounds.average.vanishing_discount_bound)
    sol = average_policy_iteration(mdp)
    g, h = float(sol.gain), np.asarray(sol.bias)
    for gamma in (0.5, 0.9, 0.99, 0.999):
        V = np.asarray(policy_iteration(mdp.replace(gamma=gamma)).V)
        err = np.abs((1 - gamma) * V - g).max()
        assert err <= float(vanishing_discount_bound(gamma, float(np.ptp(h)))) * (1 + 1e-8) + 1e-10


# ---- optimal gain: RVI = PI = LP -------------------------------------------------------------


@settings(max_examples=40)
@given(average_reward_mdps(max_states=6))
def test_rvi_pi_lp_agree_on_unichain_models(mdp):
    tol = 1e-9
    rvi = relative_value_iteration(mdp, tol=tol)
    pi = average_policy_iteration(mdp)
    lp = average_linear_program(mdp)
    mpi = average_policy_iteration(mdp, multichain=True)
    mlp = average_linear_program(mdp, multichain=True)
    g = float(pi.gain)
    assert rvi.converged and pi.converged
    assert abs(float(rvi.gain) - g) <= tol / 2 + 1e-12
    assert float(lp.gain) == pytest.approx(g, abs=1e-9)
    np.testing.assert_allclose(mpi.gain, g, atol=1e-9)
    np.testing.assert_allclose(mlp.gain, g, atol=1e-8)
    # Odoni bounds at every RVI iterate contain g*
    lo, hi = rvi.trace["lower"], rvi.trace["upper"]
    assert np.all(lo <= g + 1e-10) and np.all(hi >= g - 1e-10)
    # every returned policy attains g* (exact evaluation), RVI within its certificate
    for sol, slack in (
        (pi, 1e-9),
        (lp, 1e-8),
        (mpi, 1e-9),
        (mlp, 1e-8),
        (rvi, float(rvi.bound) + 1e-10),
    ):
        gp = np.asarray(gain_bias(mdp, sol.policy, per_state=True).g)
        assert np.all(gp >= g - slack)
    # PI / LP certificates
    assert float(pi.bound) <= 1e-9 and float(lp.bound) <= 1e-8
    # LP dual = stationary state-action frequencies of the optimal policy
    x = np.asarray(lp.occupancy)
    Ppi = np.asarray(policy_transition_matrix(mdp, lp.policy))
    if chain_structure(Ppi).unichain:
        mu = stationary_distribution(Ppi)
        np.testing.assert_allclose(x.sum(-1), mu, atol=1e-8)


def test_rvi_backends_and_batch(xp):
    rng = np.random.default_rng(4)
    P = rng.random((3, 5, 2, 5)) ** 2 + 0.01
    P /= P.sum(-1, keepdims=True)
    R = rng.random((3, 5, 2))
    res = relative_value_iteration(FiniteMDP(xp.asarray(P), xp.asarray(R), None), tol=1e-10)
    ref = [float(average_policy_iteration(FiniteMDP(P[i], R[i], None)).gain) for i in range(3)]
    np.testing.assert_allclose(to_numpy(res.gain), ref, atol=1e-10)


def _leaky_model(d):
    """States 0 → 1 → 0 (1 − d) or → 2 (d); in state 2 action 0 pays 2 but leaks to 0 w.p. d,
    action 1 pays 1.5 and stays; state 3 feeds 2 (average reward)."""
    P = np.zeros((4, 2, 4))
    P[0, :, 1] = 1.0
    P[1, :, 0], P[1, :, 2] = 1 - d, d
    P[2, 0, 2], P[2, 0, 0], P[2, 1, 2] = 1 - d, d, 1.0
    P[3, :, 2] = 1.0
    R = np.zeros((4, 2))
    R[2] = [2.0, 1.5]
    return FiniteMDP(P, R, gamma=None)


@pytest.mark.parametrize("d", [1e-10, 1e-11])
@pytest.mark.parametrize("multichain", [False, True])
def test_policy_iteration_sees_improvements_next_to_a_huge_bias(d, multichain):
    # States 0 → 1 → 0 (1 − d) or → 2 (d); in state 2 action 0 pays 2 but leaks to 0 w.p. d,
    # action 1 pays 1.5 and stays; state 3 feeds 2. Closed forms: staying gives g* = 1.5; leaking
    # gives μ = (⅓, ⅓, ⅓, 0) and g = 2/3 (flow balance μ₂d = μ₁d, μ₁ = μ₀). The bias is of size
    # 1/d, and one tie tolerance 1e-10·max|Q| ≈ 1 over the whole model hid the improvement
    # Q(2, 1) − Q(2, 0) = 5/6 at state 2: PI stopped at g = 2/3 with converged=True.
    mdp = _leaky_model(d)
    res = average_policy_iteration(mdp, multichain=multichain)
    assert res.converged and int(res.policy[2]) == 1
    np.testing.assert_allclose(gain_bias(mdp, res.policy).g, 1.5, rtol=1e-12)
    # the LP agrees
    assert float(average_linear_program(mdp).gain) == pytest.approx(1.5, rel=1e-12)
    assert int(average_linear_program(mdp).policy[2]) == 1


def test_unichain_lp_certificate_holds_when_a_leak_is_below_highs_tolerance():
    # The model of test_policy_iteration_sees_improvements_next_to_a_huge_bias at d = 1e-12: the
    # leak of action 0 in state 2 carries a flow d·x ≈ 1e-12, below HiGHS's feasibility tolerance
    # 1e-10, so the LP may take "pay 2 and stay" for a stationary frequency. It reported gain 2.0
    # with bound 0 (claiming 0 ≤ g* − gain ≤ 0 while g* = 1.5) for a policy of gain 2/3. Whatever
    # HiGHS returns, the documented certificate must hold: 0 ≤ g* − gain ≤ bound and
    # g* − g^policy ≤ bound.
    d = 1e-12
    mdp = _leaky_model(d)
    g_star = 1.5
    res = average_linear_program(mdp)
    gain, bound = float(res.gain), float(res.bound)
    assert -1e-12 <= g_star - gain <= bound + 1e-12
    g_pol = gain_bias(mdp, res.policy, per_state=True).g
    assert np.all(g_star - g_pol <= bound + 1e-9)


def test_multichain_closed_form():
    mdp = multichain_model()
    # g* = (1, 2, 2, 2): from s2 wait for s1 (a1); from s3 go to s2 (a0) rather than cash 5 and sit at g=1.
    # bias of that policy (P*h = 0): h(s2) = 2 steps × (0 − 2) = −4, h(s3) = (0 − 2) + h(s2) = −6
    pi = average_policy_iteration(mdp, multichain=True)
    np.testing.assert_allclose(pi.gain, [1, 2, 2, 2], atol=1e-12)
    assert pi.policy.tolist()[2:] == [1, 0]
    np.testing.assert_allclose(pi.bias, [0, 0, -4, -6], atol=1e-12)
    lp = average_linear_program(mdp, multichain=True)
    np.testing.assert_allclose(lp.gain, [1, 2, 2, 2], atol=1e-9)
    np.testing.assert_allclose(gain_bias(mdp, lp.policy).g, [1, 2, 2, 2], atol=1e-9)
    # vanishing discount per state (Blackwell): (1−γ)V*_γ → g* with O(1−γ)
    for gamma in (0.99, 0.999):
        V = np.asarray(policy_iteration(mdp.replace(gamma=gamma)).V)
        assert np.abs((1 - gamma) * V - [1, 2, 2, 2]).max() <= (1 - gamma) * 6 + 1e-12


@settings(max_examples=30)
@given(st.integers(2, 5), st.integers(1, 3), st.data())
def test_multichain_pi_equals_multichain_lp(S, A, data):
    P = data.draw(transition_kernels(S, A))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    mdp = FiniteMDP(P, rng.random((S, A)), None)
    pi = average_policy_iteration(mdp, multichain=True)
    lp = average_linear_program(mdp, multichain=True)
    np.testing.assert_allclose(lp.gain, pi.gain, atol=1e-8)
    for sol in (pi, lp):
        np.testing.assert_allclose(gain_bias(mdp, sol.policy, per_state=True).g, pi.gain, atol=1e-8)
    assert float(pi.bound) <= 1e-9
    # optimality: no deterministic policy has a larger gain in any state (brute force)
    best = np.max(
        [
            np.asarray(gain_bias(mdp, np.asarray(p), per_state=True).g)
            for p in itertools.product(range(A), repeat=S)
        ],
        axis=0,
    )
    np.testing.assert_allclose(pi.gain, best, atol=1e-9)


def test_unichain_solvers_refuse_multichain_models_naming_classes():
    mdp = multichain_model()
    with pytest.raises(
        InvalidModelError,
        match=r"relative_value_iteration needs a weakly communicating.*\{0\}, \{1\}",
    ):
        relative_value_iteration(mdp)
    with pytest.raises(
        InvalidModelError,
        match=r"average_linear_program needs a weakly communicating.*\{0\}, \{1\}",
    ):
        average_linear_program(mdp)
    with pytest.raises(
        InvalidModelError,
        match=r"unichain policy iteration met the policy .* recurrent classes \{0\}, \{1\}",
    ):
        average_policy_iteration(mdp)


def test_unichain_solvers_name_states_that_can_avoid_the_closed_class():
    """One class is closed under every action ({0}), but the policy "action 0" keeps states 1 and 2
    cycling away from it forever, so the optimal gain is not constant (0 at state 0, 1/2 at 1 and 2:
    the cycle pays 1 every other step). The refusal names those states, and the batch index."""
    P = np.zeros((3, 2, 3))
    P[0, :, 0] = 1.0
    P[1, 0, 2] = P[2, 0, 1] = 1.0
    P[1, 1, 0] = P[2, 1, 0] = 1.0
    R = np.zeros((3, 2))
    R[1, 0] = 1.0
    mdp = FiniteMDP(P, R, None)
    msg = r"needs a weakly communicating model .*the states \[1, 2\] outside the closed class \{0\} can be kept away"
    with pytest.raises(InvalidModelError, match="relative_value_iteration " + msg):
        relative_value_iteration(mdp)
    ring = np.broadcast_to(
        np.eye(3)[[1, 2, 0]][:, None, :], (3, 2, 3)
    )  # one recurrent cycle: accepted
    batched = FiniteMDP(np.stack([ring, P]), np.stack([R, R]), None)
    with pytest.raises(
        InvalidModelError,
        match=r"average_linear_program .*but \(batch index \(1,\)\) the states \[1, 2\]",
    ):
        average_linear_program(batched)
    np.testing.assert_allclose(
        average_policy_iteration(mdp, multichain=True).gain, [0.0, 0.5, 0.5], atol=1e-12
    )


def test_weakly_communicating_multichain_handled_by_rvi_and_lp():
    # ring_mdp is communicating but not unichain; RVI and the LP still find g*
    mdp = ring_mdp(6, reward="dense")
    assert classify_mdp(mdp).kind == "communicating"
    rvi = relative_value_iteration(mdp, tol=1e-10)
    lp = average_linear_program(mdp)
    mpi = average_policy_iteration(mdp, multichain=True)
    assert float(rvi.gain) == pytest.approx(float(lp.gain), abs=1e-9)
    np.testing.assert_allclose(mpi.gain, float(lp.gain), atol=1e-9)
    np.testing.assert_allclose(
        gain_bias(mdp, lp.policy, per_state=True).g, float(lp.gain), atol=1e-9
    )


def test_aperiodicity_transform_and_periodic_rvi():
    swap = FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), None)
    g, h = gain_bias(swap, np.zeros(2, dtype=int))
    gt, ht = gain_bias(aperiodicity_transform(swap, 0.3), np.zeros(2, dtype=int))
    assert float(gt) == pytest.approx(0.3 * float(g)) and np.allclose(ht, h)
    # plain RVI (τ = 1) oscillates on the periodic chain; the transform converges. (Changed on purpose:
    # the warning came at max_iter=50; the iteration now stops where v_2 = v_0, a cycle it never leaves)
    with pytest.warns(ConvergenceWarning, match="after 2 sweeps .*a cycle of period 2"):
        bad = relative_value_iteration(swap, tau=1.0, max_iter=50)
    assert not bad.converged and float(bad.bound) > 0.5
    good = relative_value_iteration(swap, tau=0.5)
    assert good.converged and float(good.gain) == pytest.approx(0.5, abs=1e-8)


def test_tau_accepts_numpy_scalars():
    # np.float32(0.5) lies in (0, 1] but was refused with "tau must lie in (0, 1]; got np.float32(0.5)"
    swap = FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), None)
    for tau in (np.float32(0.5), np.array(0.5), np.float64(0.5)):
        res = relative_value_iteration(swap, tau=tau)
        assert res.converged and float(res.gain) == pytest.approx(0.5, abs=1e-8)
        np.testing.assert_allclose(aperiodicity_transform(swap, tau).P[0, 0], [0.5, 0.5])
    for bad in (True, np.float64("nan"), np.float32(1.5), "0.5"):
        with pytest.raises(ValueError, match=r"tau must lie in \(0, 1\]"):
            relative_value_iteration(swap, tau=bad)
        with pytest.raises(ValueError, match=r"tau must lie in \(0, 1\]"):
            aperiodicity_transform(swap, bad)


def test_rvi_rate_matches_spectral_prediction():
    # once the greedy policy settles, sp(Δ_k) decays like ρ^k, ρ = SLEM of τP_π + (1−τ)I
    mdp = two_room_mdp(3, 0.2, reward="dense")
    tau = 0.5
    res = relative_value_iteration(mdp, tau=tau, tol=1e-12)
    span = res.trace["span"]
    k = np.arange(span.size)
    rho = rvi_asymptotic_rate(np.asarray(policy_transition_matrix(mdp, res.policy)), tau)
    fit = fit_linear_rate(k[20:], span[20:], n_boot=200, seed=0)
    assert fit.rate == pytest.approx(rho, rel=0.02)
    # Dobrushin's coefficient of the transformed kernel bounds every one-step span ratio
    delta = span_contraction_coefficient(np.asarray(aperiodicity_transform(mdp, tau).P))
    assert np.all(span[1:] <= delta * span[:-1] * (1 + 1e-9) + 1e-15)


@settings(max_examples=40)
@given(chains(), st.integers(0, 2**31))
def test_dobrushin_span_contraction(P, seed):
    v = np.random.default_rng(seed).normal(size=P.shape[0])
    assert np.ptp(P @ v) <= span_contraction_coefficient(P) * np.ptp(v) + 1e-12


# ---- zoo ------------------------------------------------------------------------------------


def test_two_room_mixing_grows_like_inverse_bottleneck():
    # Θ(1/p): over a 25-fold range of p, t_mix · p stays within 10 %
    tp = []
    for p in (0.1, 0.02, 0.004):
        mdp = two_room_mdp(4, p)
        P = np.asarray(policy_transition_matrix(mdp, np.full((8, 2), 0.5)))
        tp.append(int(mixing_time(P)) * p)
    assert max(tp) / min(tp) <= 1.1


def test_ring_sparse_reward_gain():
    # sparse ring, laziness α: the best policy oscillates 0 ↔ 1, earning 1 in state 0.
    # From 0 step to 1 w.p. 1−α; from 1 step back w.p. 1−α: μ(0) = 1/2, so g* = 1/2.
    for a in (0.2, 0.5):
        sol = average_policy_iteration(ring_mdp(5, laziness=a), multichain=True)
        np.testing.assert_allclose(sol.gain, 0.5, atol=1e-12)


# ---- validation ------------------------------------------------------------------------------


def test_invalid_inputs_raise_located_errors():
    mdp = ring_mdp(4)
    disc = mdp.replace(gamma=0.9)
    with pytest.raises(ValueError, match="gamma = 0.9; build the model with gamma=None"):
        gain_bias(disc, np.zeros(4, dtype=int))
    with pytest.raises(ValueError, match="gamma = 0.9"):
        relative_value_iteration(disc)
    with pytest.raises(ValueError, match="gamma = 0.9"):
        average_policy_iteration(disc)
    with pytest.raises(ValueError, match="gamma = 0.9"):
        average_linear_program(disc)
    with pytest.raises(ValueError, match="mdp.gamma is None"):
        policy_iteration(mdp)  # a discounted solver given gamma=None
    with pytest.raises(ValueError, match=r"pi\(2,\) = 5 is not an action index"):
        gain_bias(mdp, np.array([0, 0, 5, 0]))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., S, A\)"):
        gain_bias(mdp, np.ones((4, 3)) / 3)
    with pytest.raises(ValueError, match="tau must lie in"):
        relative_value_iteration(mdp, tau=0.0)
    with pytest.raises(ValueError, match="tol must be"):
        relative_value_iteration(mdp, tol=-1.0)
    with pytest.raises(ValueError, match="ref_state must be a state index"):
        relative_value_iteration(mdp, ref_state=9)
    with pytest.raises(ValueError, match="max_iter must be a positive integer"):
        average_policy_iteration(mdp, max_iter=0)
    with pytest.raises(ValueError, match="pi0 must be a deterministic policy"):
        average_policy_iteration(mdp, pi0=np.full((4, 2), 0.5))
    with pytest.raises(ValueError, match="weights must be a strictly positive"):
        average_linear_program(mdp, multichain=True, weights=np.array([1.0, 0, 0, 0]))
    with pytest.raises(InvalidModelError, match=r"P must have shape \(\.\.\., S, S\)"):
        mixing_time(np.ones((2, 3)) / 3)
    with pytest.raises(InvalidModelError, match=r"each P\[s, :\] must sum to 1"):
        chain_structure(np.array([[0.5, 0.4], [0.0, 1.0]]))
    with pytest.raises(InvalidModelError, match=r"P must be finite; P\(s=0, s'=1\) = nan"):
        limiting_matrix(np.array([[0.5, np.nan], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="bottleneck must be > 0"):
        two_room_mdp(3, 0.0)
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        ring_mdp(1)
    with pytest.raises(ValueError, match="reward must be 'sparse' or 'dense'"):
        ring_mdp(4, reward="none")
    with pytest.raises(ValueError, match="relaxation_time must be >= 1"):
        mixing_time_spectral_bounds(0.5, 0.1, 0.5)
    with pytest.raises(ValueError, match="gamma must lie in"):
        vanishing_discount_bound(1.0, 1.0)
    with pytest.raises(TypeError, match="expects a FiniteMDP"):
        classify_mdp("not a model")


def test_pi_cap_warns():
    rng = np.random.default_rng(1)
    P = rng.random((6, 4, 6)) + 0.01
    P /= P.sum(-1, keepdims=True)
    hard = FiniteMDP(P, rng.random((6, 4)), None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = average_policy_iteration(hard, pi0=np.zeros(6, dtype=int))  # converges silently
    assert first.converged and first.iterations >= 2
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        capped = average_policy_iteration(hard, pi0=np.zeros(6, dtype=int), max_iter=1)
    assert not capped.converged
