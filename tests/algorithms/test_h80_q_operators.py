"""The sampled updates of the Q-learning family, in expectation, are their operators (exact expectations).

Each one-step update of :mod:`rltheory.algorithms.q_variants` / ``_q_common`` is applied to every
outcome of one step (the next state ``s' ~ P(·|s, a)``, the behaviour's action ``a ~ μ(·|s)``, double
Q-learning's coin), each outcome in its own run, and the increments are averaged with the outcomes'
probabilities: an exact expectation, compared with the operator written out from the model
(:func:`rltheory.mdp.q_values`, ``(T Q)(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) max_b Q(s', b)``).

VA-learning's fixed point is checked in exact rational arithmetic against ``Q*`` of
:func:`rltheory.testing.exact_optimal_values`, and its unit-step operator against the closed form of
its growth on a deterministic 2-cycle (it is not a contraction for ``γ > 1/3``).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F
from types import SimpleNamespace

import numpy as np
import pytest

from rltheory.algorithms._q_common import _Runs
from rltheory.algorithms.q_learning import constant_step, linear_step
from rltheory.algorithms.q_variants import _double_q_step, _va_step
from rltheory.mdp import FiniteMDP, q_values
from rltheory.mdp.zoo import random_mdp
from rltheory.testing import exact_optimal_values


def _model(seed: int) -> tuple[FiniteMDP, np.ndarray, np.ndarray]:
    mdp = random_mdp(4, 3, gamma=0.9, rng=seed)
    return mdp, np.asarray(mdp.P, dtype=float), np.asarray(mdp.R, dtype=float)


def _branches(*axes: range) -> tuple[np.ndarray, ...]:
    """Every combination of the outcomes, one per run: columns of indices."""
    combos = np.array(list(itertools.product(*axes)), dtype=np.int64)
    return tuple(combos[:, j] for j in range(combos.shape[1]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expected_q_learning_update_is_the_bellman_optimality_operator(seed):
    mdp, P, R = _model(seed)
    S, A = R.shape
    rng = np.random.default_rng(seed)
    Q0 = rng.normal(size=(S, A)) * 3.0
    counts = rng.integers(0, 5, size=(S, A)).astype(float)
    s, a, s1 = _branches(range(S), range(A), range(S))
    N = len(s)
    Q, n = np.broadcast_to(Q0, (N, S, A)).copy(), np.broadcast_to(counts, (N, S, A)).copy()
    runs = np.arange(N)
    _Runs.q_update(SimpleNamespace(g=mdp.gamma, runs=runs), Q, n, linear_step(), s, a, R[s, a], s1)
    w = P[s, a, s1]
    mean = np.zeros((S, A))
    np.add.at(mean, (s, a), w * (Q[runs, s, a] - Q0[s, a]))
    want = (np.asarray(q_values(mdp, Q0.max(-1))) - Q0) / (counts + 1.0)  # α = 1/(n + 1)
    np.testing.assert_allclose(mean, want, rtol=0, atol=1e-13 * (1 + np.abs(Q0).max()))
    # each branch moved one entry only, and counted it
    assert np.all((n - counts)[runs, s, a] == 1) and n.sum() == counts.sum() * N + N


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expected_double_q_update_is_half_the_cross_evaluated_operator(seed):
    # E[ΔQ_A(s, a)] = ½ α_A (r + γ Σ_s' P(s'|s, a) Q_B(s', argmax Q_A(s')) − Q_A(s, a)), A ↔ B
    mdp, P, R = _model(seed)
    S, A = R.shape
    rng = np.random.default_rng(10 + seed)
    QA0, QB0 = rng.normal(size=(2, S, A)) * 3.0
    cA, cB = rng.integers(0, 5, size=(2, S, A)).astype(float)
    s, a, s1, coin = _branches(range(S), range(A), range(S), range(2))
    N, runs = len(s), np.arange(len(s))
    QA, QB = np.broadcast_to(QA0, (N, S, A)).copy(), np.broadcast_to(QB0, (N, S, A)).copy()
    nA, nB = np.broadcast_to(cA, (N, S, A)).copy(), np.broadcast_to(cB, (N, S, A)).copy()
    _double_q_step(QA, QB, nA, nB, (runs, s, a, R[s, a], s1), coin == 0, mdp.gamma, linear_step())
    w = 0.5 * P[s, a, s1]
    mA, mB = np.zeros((S, A)), np.zeros((S, A))
    np.add.at(mA, (s, a), w * (QA[runs, s, a] - QA0[s, a]))
    np.add.at(mB, (s, a), w * (QB[runs, s, a] - QB0[s, a]))
    vA = QB0[np.arange(S), QA0.argmax(-1)]  # Q_B(s', argmax_b Q_A(s', b))
    vB = QA0[np.arange(S), QB0.argmax(-1)]
    tA, tB = R + mdp.gamma * P @ vA, R + mdp.gamma * P @ vB
    tol = 1e-13 * (1 + np.abs(QA0).max() + np.abs(QB0).max())
    np.testing.assert_allclose(mA, 0.5 * (tA - QA0) / (cA + 1.0), rtol=0, atol=tol)
    np.testing.assert_allclose(mB, 0.5 * (tB - QB0) / (cB + 1.0), rtol=0, atol=tol)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expected_va_update_of_a_visit_is_the_documented_operator(seed):
    # a visit to s under behaviour μ, with Q = V + A:
    #   E[ΔV(s)]    = α_{n(s)}          (Σ_a μ(a|s) (T Q)(s, a) − V(s))
    #   E[ΔA(s, a)] = μ(a|s) α_{n(s,a)} ((T Q)(s, a) − V(s) − A(s, a)),  no other entry moves
    mdp, P, R = _model(seed)
    S, A = R.shape
    rng = np.random.default_rng(20 + seed)
    V0, A0 = rng.normal(size=S) * 3.0, rng.normal(size=(S, A)) * 3.0
    mu = rng.dirichlet(np.ones(A), size=S)
    cV, cA = rng.integers(0, 6, size=S).astype(float), rng.integers(0, 6, size=(S, A)).astype(float)
    TQ = np.asarray(q_values(mdp, (V0[:, None] + A0).max(-1)))
    for x in range(S):
        a, s1 = _branches(range(A), range(S))
        N, runs, s = len(a), np.arange(len(a)), np.full(len(a), x)
        V, Adv = np.broadcast_to(V0, (N, S)).copy(), np.broadcast_to(A0, (N, S, A)).copy()
        nV, nA = np.broadcast_to(cV, (N, S)).copy(), np.broadcast_to(cA, (N, S, A)).copy()
        _va_step(V, Adv, nV, nA, (runs, s, a, R[x, a], s1), mdp.gamma, linear_step())
        w = (mu[x, a] * P[x, a, s1])[:, None]
        dV = (w * (V - V0)).sum(0)
        dA = (w[:, :, None] * (Adv - A0)).sum(0)
        want_V = np.zeros(S)
        want_V[x] = ((mu[x] * TQ[x]).sum() - V0[x]) / (cV[x] + 1.0)
        want_A = np.zeros((S, A))
        want_A[x] = mu[x] * (TQ[x] - V0[x] - A0[x]) / (cA[x] + 1.0)
        tol = 1e-13 * (1 + np.abs(V0).max() + np.abs(A0).max())
        np.testing.assert_allclose(dV, want_V, rtol=0, atol=tol)
        np.testing.assert_allclose(dA, want_A, rtol=0, atol=tol)


def test_va_fixed_point_is_q_star_in_exact_arithmetic():
    # dyadic model: every float is a Fraction exactly. Q* = R + γ P V* from the exact optimal values;
    # at V = Σ_a μ(a|·) Q*(·, a), A = Q* − V both expected increments above are exactly 0, and
    # Σ_a μ(a|s) A(s, a) = 0. Conversely a zero of them with μ > 0 has A = T Q − V, i.e. Q = T Q,
    # so Q = Q* (T is a γ-contraction) and V = Σ_a μ Q*: the fixed point is unique.
    P = np.array(
        [
            [[0.5, 0.25, 0.25], [0.0, 1.0, 0.0]],
            [[0.125, 0.375, 0.5], [0.75, 0.0, 0.25]],
            [[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]],
        ]
    )
    R = np.array([[1.0, 0.0], [0.5, 2.0], [0.0, -1.0]])
    gamma, mu = 0.75, np.array([[0.25, 0.75], [0.5, 0.5], [0.875, 0.125]])
    S, A = R.shape
    G = F(gamma)
    Vs = exact_optimal_values(P, R, gamma)

    def T(Q):  # (T Q)(s, a) = r + γ Σ_s' P max_b Q(s', b), exactly
        m = [max(Q[t]) for t in range(S)]
        return [
            [F(R[s, a]) + G * sum(F(P[s, a, t]) * m[t] for t in range(S)) for a in range(A)]
            for s in range(S)
        ]

    Qs = T([[v] for v in Vs])  # Q* = R + γ P V*
    assert [max(q) for q in Qs] == Vs  # Bellman optimality, exactly
    V = [sum(F(mu[s, a]) * Qs[s][a] for a in range(A)) for s in range(S)]
    Adv = [[Qs[s][a] - V[s] for a in range(A)] for s in range(S)]
    Q = [[V[s] + Adv[s][a] for a in range(A)] for s in range(S)]
    assert Q == Qs
    TQ = T(Q)
    assert all(sum(F(mu[s, a]) * TQ[s][a] for a in range(A)) - V[s] == 0 for s in range(S))
    assert all(TQ[s][a] - V[s] - Adv[s][a] == 0 for s in range(S) for a in range(A))
    assert all(sum(F(mu[s, a]) * Adv[s][a] for a in range(A)) == 0 for s in range(S))
    # the learner's own step, at the float image of this point: increments of rounding size only
    mdp = FiniteMDP(P, R, gamma)
    Vf = np.array([float(v) for v in V])
    Af = np.array([[float(x) for x in row] for row in Adv])
    for x in range(S):
        a, s1 = _branches(range(A), range(S))
        N, runs = len(a), np.arange(len(a))
        Vb, Ab = np.broadcast_to(Vf, (N, S)).copy(), np.broadcast_to(Af, (N, S, A)).copy()
        batch = (runs, np.full(N, x), a, R[x, a], s1)
        _va_step(
            Vb, Ab, np.zeros((N, S)), np.zeros((N, S, A)), batch, mdp.gamma, constant_step(0.5)
        )
        w = mu[x, a] * P[x, a, s1]
        assert abs((w * (Vb[:, x] - Vf[x])).sum()) < 1e-14
        assert np.all(np.abs((w[:, None] * (Ab[:, x] - Af[x])).sum(0)) < 1e-14)


def _two_cycle_sweeps(gamma: float, sweeps: int, va: bool) -> np.ndarray:
    """Synchronous unit-step sweeps on the deterministic 2-cycle with one action, reward 1 in state 0.

    One batch visits both states of one table (run 0): targets first, then both moves, which is the
    expected operator itself (the model is deterministic). Returns ``‖Q_k − Q*‖∞`` per sweep.
    """
    R = np.array([[1.0], [0.0]])
    Qs = np.linalg.solve(np.eye(2) - gamma * np.array([[0.0, 1.0], [1.0, 0.0]]), R[:, 0])
    batch = (
        np.zeros(2, dtype=np.int64),
        np.array([0, 1]),
        np.zeros(2, dtype=np.int64),
        R[:, 0],
        np.array([1, 0]),
    )
    V, Adv = np.array([[0.0, 1.0]]), np.zeros((1, 2, 1))  # Q_0 = (0, 1)
    nV, nA = np.zeros((1, 2)), np.zeros((1, 2, 1))
    Q = V[..., None] + Adv
    errs = []
    for _ in range(sweeps):
        if va:
            _va_step(V, Adv, nV, nA, batch, gamma, constant_step(1.0))
            Q = V[..., None] + Adv
        else:
            _Runs.q_update(
                SimpleNamespace(g=gamma, runs=batch[0]), Q, nA, constant_step(1.0), *batch[1:]
            )
        errs.append(np.abs(Q[0, :, 0] - Qs).max())
    return np.array(errs)


@pytest.mark.parametrize("gamma", [0.2, 0.3, 0.5, 0.9])
def test_unit_step_va_operator_is_not_a_contraction_above_one_third(gamma):
    # One action: V_{k+1} = T Q_k, A_{k+1} = T Q_k − V_k, so Q_{k+1} = 2 T Q_k − T Q_{k−1}. On the
    # 2-cycle the antisymmetric error mode e_{k+1} = −2γ e_k + γ e_{k−1} has the root of modulus
    # ρ = γ + √(γ² + γ), > 1 exactly when γ > 1/3 (the symmetric mode's roots have modulus √γ).
    # Q-learning's unit step on the same model is value iteration: error × γ per sweep.
    rho = gamma + math.sqrt(gamma * gamma + gamma)
    e = _two_cycle_sweeps(gamma, 60, va=True)
    assert (e[59] / e[39]) ** (1 / 20) == pytest.approx(rho, rel=1e-6)
    assert (e[-1] < e[0]) == (gamma < 1 / 3)
    q = _two_cycle_sweeps(gamma, 8, va=False)  # errors >= γ^8 ≥ 2.6e-6: rounding is 1e-10 of them
    np.testing.assert_allclose(q[1:] / q[:-1], gamma, rtol=1e-9)
