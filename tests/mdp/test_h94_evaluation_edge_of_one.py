"""Exact policy evaluation at the last floats below γ = 1, against exact rational solves.

At γ = 1 − 2⁻⁵³ (the largest float64 below 1), 1 − 2⁻⁵² and 1 − 3·2⁻⁵³ the pivoted LU's
error in the slow direction of ``I − γP_π`` (``ε`` against an eigenvalue ``1 − γ`` of the same
size) made its iterative refinement oscillate (corrections shrinking by 0.85 a step, overshooting
by 1.85), so ``evaluate_policy`` returned values up to 5e15·ε·max|r_π|/(1−γ) off (−8.10e15 for
an exact −5.01e15: dyadic seed 42, S = 3) and once raised numpy's "Singular matrix"; float32 at
1 − 2⁻²³ likewise. The solves there now eliminate on the leave rates
(``difference_form._leave_rate_lu``), entrywise accurate at any γ < 1. References: the stored
model (rows normalised, :func:`rltheory.testing.exact_policy_values`) in fractions.
"""

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP, advantage, evaluate_policy
from rltheory.mdp.difference_form import _leave_rate_lu
from rltheory.testing import dyadic_model, exact_policy_values

EDGE64 = [1.0 - 2.0**-53, 1.0 - 2.0**-52, 1.0 - 3 * 2.0**-53]
EDGE32 = [1.0 - 2.0**-24, 1.0 - 2.0**-23]


def _cases(dtype):
    """(P, R, pi as given, pi as an [S, A] array): dyadic rows (exact sums), slow sticky rows, and
    Dirichlet rows (stored sums 1 ± ε) with rewards of sizes 1e-3 to 1e3 and stochastic policies."""
    for seed in range(24):
        S = 1 + seed % 6
        rng = np.random.default_rng(seed + 1000)
        kind = seed % 3
        if kind < 2:
            P, R = dyadic_model(seed + 7, S, 2, sticky=kind == 1)
            pi = rng.integers(2, size=S)
            pis = np.zeros((S, 2))
            pis[np.arange(S), pi] = 1.0
        else:
            P = rng.dirichlet(np.full(S, 0.5), size=(S, 2))
            R = rng.standard_normal((S, 2)) * 10.0 ** rng.integers(-3, 4)
            pis = rng.dirichlet(np.ones(2), size=S).astype(dtype)
            pi = pis
        yield P.astype(dtype), R.astype(dtype), pi, pis
    # models the old refinement got wrong: dyadic seed 42 (the module docstring's, at 1 − 2^-53),
    # seed 48 (S = 4, at 1 − 2^-52), Dirichlet rows in float32 (1.4e6 ε·max|r_π|/(1−γ) at
    # 1 − 2^-23)
    for seed, S, pi in [(42, 3, [0, 1, 1]), (48, 4, [0, 0, 0, 1])]:
        P, R = dyadic_model(seed, S, 2)
        yield P.astype(dtype), R.astype(dtype), np.array(pi), np.eye(2)[pi]
    rng = np.random.default_rng(8)
    P = rng.dirichlet(np.ones(4), size=(4, 2))
    R = rng.standard_normal((4, 2))
    yield P.astype(dtype), R.astype(dtype), np.zeros(4, dtype=int), np.eye(2)[[0, 0, 0, 0]]
    # Dirichlet rows, stochastic policy, S = 5: the old LU called I − γP_π singular at 1 − 2^-53
    rng = np.random.default_rng(1010)
    P = rng.dirichlet(np.full(5, 0.5), size=(5, 2))
    R = rng.standard_normal((5, 2)) * 10.0 ** rng.integers(-3, 4)
    pis = rng.dirichlet(np.ones(2), size=5).astype(dtype)
    yield P.astype(dtype), R.astype(dtype), pis, pis


def _scaled_error(V, P, R, pis, gamma, eps):
    """``max_s |V(s) − V_exact(s)| / (ε·max|r_π|/(1−γ))`` in fractions."""
    S, A = R.shape
    exact = exact_policy_values(P, R, gamma, pis)
    r_pi = max(
        abs(sum(Fraction(float(pis[s, a])) * Fraction(float(R[s, a])) for a in range(A)))
        / sum(Fraction(float(x)) for x in pis[s])
        for s in range(S)
    )
    err = max(abs(Fraction(float(v)) - e) for v, e in zip(V, exact, strict=True))
    return float(err / (Fraction(eps) * r_pi / (1 - Fraction(gamma))))


@pytest.mark.parametrize(
    ("dtype", "gamma"), [(np.float64, g) for g in EDGE64] + [(np.float32, g) for g in EDGE32]
)
def test_values_at_the_last_floats_below_one_match_the_rational_solve(dtype, gamma):
    # the documented bound, a few ε·max|r_π|/(1−γ): measured ≤ 0.84 (float64) and ≤ 1.26
    # (float32, stochastic policies) on these and 200 more such models; before, up to 5.3e15
    eps = float(np.finfo(dtype).eps)
    for i, (P, R, pi, pis) in enumerate(_cases(dtype)):
        mdp = FiniteMDP(P, R, gamma=gamma)
        V = np.asarray(evaluate_policy(mdp, pi), dtype=np.float64)
        q = _scaled_error(V, P, R, pis, float(mdp.gamma), eps)
        assert q <= 4.0, (i, q)


def test_values_agree_with_the_rational_solve_on_every_backend(xp):
    gamma = 1.0 - 2.0**-53
    P, R = dyadic_model(42, 3, 2)
    pi = np.array([0, 1, 1])
    mdp = FiniteMDP(xp.asarray(P), xp.asarray(R), gamma=gamma)
    V = np.asarray(evaluate_policy(mdp, xp.asarray(pi)), dtype=np.float64)
    pis = np.eye(2)[pi]
    assert _scaled_error(V, P, R, pis, gamma, 2.0**-52) <= 4.0
    # the exact values, −5014746340673538 and −5014746340673539 (twice), to the unit: the old
    # refinement returned −8.10e15 for all three
    np.testing.assert_allclose(V, [-5014746340673538.0] + [-5014746340673539.0] * 2, rtol=0, atol=4)


def test_batched_policies_give_each_instance_its_own_values():
    gamma = 1.0 - 2.0**-52
    P, R = dyadic_model(48, 4, 2)
    pis = np.array([[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 1]])
    V = evaluate_policy(FiniteMDP(P, R, gamma=gamma), pis)
    for i in range(3):
        np.testing.assert_array_equal(V[i], evaluate_policy(FiniteMDP(P, R, gamma=gamma), pis[i]))
        assert _scaled_error(V[i], P, R, np.eye(2)[pis[i]], gamma, 2.0**-52) <= 4.0


def _exact_elimination(Ppi, gamma):
    """Gaussian elimination (no pivoting) of ``I − γP_π`` (self-loops read as ``1 − Σ_{j≠s}``) in
    fractions: ``(multipliers l[k][i], U off-diagonals a[k][j] ≥ 0, pivots m[k])``."""
    S = Ppi.shape[0]
    g = Fraction(gamma)
    M = [
        [
            (1 - g * (1 - sum(Fraction(float(Ppi[i, t])) for t in range(S) if t != i)))
            if i == j
            else -g * Fraction(float(Ppi[i, j]))
            for j in range(S)
        ]
        for i in range(S)
    ]
    ls, us, piv = [], [], []
    for k in range(S):
        piv.append(M[k][k])
        us.append([-M[k][j] for j in range(k + 1, S)])
        lk = [-M[i][k] / M[k][k] for i in range(k + 1, S)]
        ls.append(lk)
        for i in range(k + 1, S):
            f = M[i][k] / M[k][k]
            M[i] = [x - f * y for x, y in zip(M[i], M[k], strict=True)]
    return ls, us, piv


@pytest.mark.parametrize("gamma", [1.0 - 2.0**-53, 1.0 - 1e-9, 0.5])
def test_leave_rate_factors_are_entrywise_accurate(gamma):
    # every factor entry within 4S·ε relative of the exact elimination (sums and products of
    # non-negative numbers only; Alfa, Xue & Ye 2002); the pivots include the smallest, which
    # carries 1 − γ and which a pivoted LU gets wrong by its own size at γ = 1 − 2^-53
    eps = 2.0**-52
    for seed in range(12):
        S = 2 + seed % 5
        rng = np.random.default_rng(seed)
        Ppi = (
            dyadic_model(seed, S, 1, sticky=seed % 2 == 1)[0][:, 0]
            if seed % 3
            else rng.dirichlet(np.full(S, 0.5), size=S)
        )
        off = Ppi * (1.0 - np.eye(S))
        lcols, urows, piv = _leave_rate_lu(np, gamma, off)
        ls, us, epiv = _exact_elimination(Ppi, gamma)
        tol = 4 * S * eps
        for k in range(S):
            got = [*lcols[k], *urows[k], piv[k]]
            want = [*ls[k], *us[k], epiv[k]]
            for x, w in zip(got, want, strict=True):
                assert abs(Fraction(float(x)) - w) <= Fraction(tol) * abs(w), (seed, k, x, w)


def test_advantages_at_one_minus_two_to_the_minus_52_are_within_their_allowance():
    # advantage's bound, a few ε·(max|r| + J), J the largest |V(j) − V(s)| along a transition,
    # rests on V^π: at γ = 1 − 2^-52 the old values made it 1187 ε·(max|r| + J); now ≤ 0.95
    gamma = 1.0 - 2.0**-52
    for seed in range(12):
        S = 1 + seed % 5
        P, R = dyadic_model(seed, S, 2, sticky=seed % 2 == 1)
        pi = np.random.default_rng(seed).integers(2, size=S)
        A = np.asarray(advantage(FiniteMDP(P, R, gamma=gamma), pi))
        V = exact_policy_values(P, R, gamma, np.eye(2)[pi])
        g = Fraction(gamma)
        for s in range(S):
            for a in range(2):
                q = Fraction(float(R[s, a])) + g * sum(
                    Fraction(float(P[s, a, j])) * V[j] for j in range(S)
                )
                J = max(abs(V[j] - V[s]) for j in range(S) if P[s, a, j] > 0)
                scale = Fraction(2.0**-52) * (Fraction(float(np.abs(R).max())) + J)
                assert abs(Fraction(float(A[s, a])) - (q - V[s])) <= 4 * scale, (seed, s, a)
