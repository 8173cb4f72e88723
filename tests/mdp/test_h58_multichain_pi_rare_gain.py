"""Multichain policy iteration against exact rational optimal gains when a gain improvement is rare.

An action that reaches a better recurrent class with probability ``p`` improves ``P g`` by only
``p·Δg`` at that state, but the gain of the state by the whole ``Δg`` (it keeps trying). The step (a)
tie tolerance ``64(S + 2)u·max|r|`` per state read ``p·Δg`` as a tie for ``p ≲ 64(S + 2)u`` and PI
returned, ``converged=True``, a policy ``Δg`` below ``g*``. Reference: the gain of every
deterministic policy of the row-normalised float model in ``fractions.Fraction`` arithmetic
(recurrent classes' stationary laws, absorption probabilities), ``g* = max_π g^π`` per state.
"""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP, average_linear_program, average_policy_iteration
from rltheory.mdp.structure import chain_structure
from rltheory.testing import exact_solve


def _exact_gain(P: np.ndarray, R: np.ndarray, pi: tuple[int, ...]) -> list[Fraction]:
    """Per-state gain of the deterministic ``pi`` in the row-normalised model, exactly."""
    S = P.shape[0]
    Pq = [[Fraction(float(x)) for x in P[s, pi[s]]] for s in range(S)]
    Pq = [[x / sum(row) for x in row] for row in Pq]
    rq = [Fraction(float(R[s, pi[s]])) for s in range(S)]
    Ppi = np.array([P[s, pi[s]] for s in range(S)], dtype=np.float64)
    cs = chain_structure(Ppi / Ppi.sum(-1, keepdims=True))  # the support is all it uses
    g = [Fraction(0)] * S
    for C in cs.recurrent_classes:  # μᵀ(I − P_CC + 11ᵀ) = 1ᵀ on the class
        n = len(C)
        M = [[Fraction(int(i == j)) - Pq[C[j]][C[i]] + 1 for j in range(n)] for i in range(n)]
        mu = exact_solve(M, [Fraction(1)] * n)
        gk = sum((m * rq[s] for m, s in zip(mu, C, strict=True)), Fraction(0))
        for s in C:
            g[s] = gk
    T = list(cs.transient)
    if T:  # (I − Q) g_T = P_TR g_R
        M = [[Fraction(int(i == j)) - Pq[t][T[j]] for j in range(len(T))] for i, t in enumerate(T)]
        b = [sum((Pq[t][j] * g[j] for j in range(S) if j not in T), Fraction(0)) for t in T]
        for t, x in zip(T, exact_solve(M, b), strict=True):
            g[t] = x
    return g


def _exact_optimal_gain(P: np.ndarray, R: np.ndarray) -> list[Fraction]:
    S, A = R.shape
    gains = [_exact_gain(P, R, pi) for pi in itertools.product(range(A), repeat=S)]
    return [max(gp[s] for gp in gains) for s in range(S)]


def _door(p: float, dtype: type) -> FiniteMDP:
    """State 1 absorbing with reward 1; state 0 stays (reward 0) or, with action 1, moves to state 1
    with probability ``p`` (else stays, reward 0): ``g*(0) = 1`` for every ``p > 0``."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = 1.0
    P[0, 1, 0], P[0, 1, 1] = 1.0 - p, p
    P[1, :, 1] = 1.0
    R = np.array([[0.0, 0.0], [1.0, 1.0]])
    return FiniteMDP(P.astype(dtype), R.astype(dtype), None)


def _ladder(p: float, dtype: type) -> FiniteMDP:
    """States 0 ↔ 1 a recurrent pair with reward 0.2; state 2 absorbing with reward 0.5; state 3
    absorbing with reward 1. Action 1 at state 0 leaks to 2 with probability ``p``, action 1 at state
    2 leaks to 3 with probability ``p``: ``g* = 1`` everywhere, through two rare doors in a row."""
    P = np.zeros((4, 2, 4))
    P[0, 0, 1] = 1.0
    P[0, 1, 1], P[0, 1, 2] = 1.0 - p, p
    P[1, :, 0] = 1.0
    P[2, 0, 2] = 1.0
    P[2, 1, 2], P[2, 1, 3] = 1.0 - p, p
    P[3, :, 3] = 1.0
    R = np.array([[0.2, 0.2], [0.2, 0.2], [0.5, 0.5], [1.0, 1.0]])
    return FiniteMDP(P.astype(dtype), R.astype(dtype), None)


CASES = [
    (_door, 2e-14, np.float64),  # old: policy [0 0], gain [0 1], converged, bound 2.2e-14
    (_door, 1e-15, np.float64),
    (_ladder, 1e-14, np.float64),
    (_door, 1e-6, np.float32),  # float32: 64(S + 2)u = 1.5e-5 > p
    (_ladder, 2e-6, np.float32),
]


@pytest.mark.parametrize(("model", "p", "dtype"), CASES)
def test_multichain_pi_finds_a_gain_improvement_through_a_rare_transition(model, p, dtype):
    mdp = model(p, dtype)
    res = average_policy_iteration(mdp, multichain=True)
    P, R = np.asarray(mdp.P, dtype=np.float64), np.asarray(mdp.R, dtype=np.float64)
    g_star = _exact_optimal_gain(P, R)
    g_pi = _exact_gain(P, R, tuple(int(a) for a in np.asarray(res.policy)))
    assert res.converged
    assert g_pi == g_star  # the returned policy is optimal, exactly
    u = float(np.finfo(dtype).eps) / 2
    np.testing.assert_allclose(
        np.asarray(res.gain, dtype=np.float64), [float(x) for x in g_star], rtol=0, atol=64 * 6 * u
    )


def test_gain_step_does_not_read_round_off_inside_a_recurrent_class_as_an_improvement():
    # consistency with the exact rule D > 0: on a unichain-by-policy model every state has the same
    # computed gain, so D(s, a) = 0 exactly for all actions and the current policy is kept
    from rltheory.mdp.average_pi import _gain_step  # noqa: PLC0415

    rng = np.random.default_rng(4)
    P = rng.random((5, 3, 5))
    P /= P.sum(-1, keepdims=True)
    g = np.full(5, 0.123456789)
    pi = np.array([2, 0, 1, 1, 0])
    new, D, allowed = _gain_step(np, P, g, pi, np.asarray(1e-12), 1e-15)
    np.testing.assert_array_equal(new, pi)
    assert np.all(D == 0.0) and np.all(allowed)


LP_CASES = CASES + [
    (_door, 1e-9, np.float64),
    (_door, 1e-11, np.float64),
    (_ladder, 1e-10, np.float64),
]


@pytest.mark.parametrize(("model", "p", "dtype"), LP_CASES)
def test_multichain_lp_gain_is_the_exact_gain_of_its_policy(model, p, dtype):
    # the multichain LP returned HiGHS's duals as gains: [0, 1] on the door at p = 2e-14 although
    # its policy [1 1] has gain [1, 1]; g(0) = 1.00000003 > max r at p = 1e-9; on the ladder at
    # p = 1e-14, g(2) = 0.5 for a policy whose gain there is 1 (all with converged=True and bounds
    # ~1e-14). It now returns the evaluation of its policy: consistency with the exact rational gain
    mdp = model(p, dtype)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = average_linear_program(mdp, multichain=True)
    # a policy the LP's tolerances left suboptimal is flagged (see the next test)
    assert res.converged == (not any(w.category is ConvergenceWarning for w in caught))
    P, R = np.asarray(mdp.P, dtype=np.float64), np.asarray(mdp.R, dtype=np.float64)
    g_pi = _exact_gain(P, R, tuple(int(a) for a in np.asarray(res.policy)))
    u = float(np.finfo(dtype).eps) / 2
    np.testing.assert_allclose(
        np.asarray(res.gain, dtype=np.float64), [float(x) for x in g_pi], rtol=0, atol=64 * 6 * u
    )
    if model is _door:  # there the LP's policy is also optimal (on the ladder it is not: open)
        assert g_pi == _exact_optimal_gain(P, R)


@pytest.mark.parametrize("p", [1e-14, 1e-10])
def test_multichain_lp_does_not_report_a_suboptimal_policy_as_converged(p):
    # on the two-door ladder the LP's policy stays in the 0.2 pair (gain 0.2 at states 0 and 1,
    # g* = 1) and was returned converged with a residual of 1.1e-5 (p = 1e-10); PI's gain step now
    # finds the hidden improvement, and PI started from that policy reaches g* exactly
    mdp = _ladder(p, np.float64)
    P, R = np.asarray(mdp.P), np.asarray(mdp.R)
    with pytest.warns(ConvergenceWarning, match=r"misses a gain improvement at state 0"):
        res = average_linear_program(mdp, multichain=True)
    assert not res.converged
    assert _exact_gain(P, R, tuple(int(a) for a in np.asarray(res.policy))) != _exact_optimal_gain(
        P, R
    )
    pi = average_policy_iteration(mdp, multichain=True, pi0=res.policy).policy
    assert _exact_gain(P, R, tuple(int(a) for a in np.asarray(pi))) == _exact_optimal_gain(P, R)
