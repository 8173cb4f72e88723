"""Policy evaluation and occupancy at discounts close to 1 against exact rational solves.

``I − γP_π`` is nearly singular as γ → 1: a plain LU solve errs by ``ε‖V‖/(1−γ)``. The kernels
form its diagonal as ``(1−γ) + γΣ_{j≠s}P_π(s, j)`` and refine the solve with a flow-form residual
(``bellman._policy_values``), so the error stays at a few ``ε·max|r|/(1−γ)`` (the size of ``V``).
policy_iteration's certificate forms its residuals in flow form
(``_Roundoff.flow_advantages``), so it comes down to the rounding of ``V``. The models have dyadic
transition rows (multiples of 1/64), so the stored rows sum to 1 exactly
and the fraction solve is the exact value of the stored model.
"""

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP, evaluate_policy, policy_iteration, state_occupancy
from rltheory.mdp.certificates import _Roundoff
from rltheory.testing import dyadic_model, exact_solve

G64 = 1.0 - 1e-12
G32 = 1.0 - 2.0**-20  # exactly representable in float32


def _dyadic_model(seed, S=4, A=2, sticky=False):
    return dyadic_model(seed, S, A, sticky=sticky)


def _exact_values(P_pi, r_pi, gamma):
    """``(I − γP_π)^{-1} r_π`` in fractions (every float input converted exactly)."""
    S = len(r_pi)
    g = Fraction(gamma)
    M = [
        [(1 if i == j else 0) - g * Fraction(float(P_pi[i, j])) for j in range(S)] for i in range(S)
    ]
    return np.array([float(x) for x in exact_solve(M, [Fraction(float(x)) for x in r_pi])])


def _exact_occupancy(P_pi, gamma, mu):
    S = len(mu)
    g = Fraction(gamma)
    M = [
        [(1 if i == j else 0) - g * Fraction(float(P_pi[j, i])) for j in range(S)] for i in range(S)
    ]
    d = exact_solve(M, [(1 - g) * Fraction(float(m)) for m in mu])
    tot = sum(d)
    return np.array([float(x / tot) for x in d])


@pytest.mark.parametrize(("dtype", "gamma"), [(np.float64, G64), (np.float32, G32)])
@pytest.mark.parametrize("sticky", [False, True])
def test_policy_values_keep_full_accuracy_near_gamma_one(dtype, gamma, sticky):
    # ‖V^π‖∞ ≤ max|r|/(1−γ): an error of 8ε·max|r|/(1−γ) is 16 units in the last place of the
    # largest possible value. The plain solve erred by up to 2e10 of these units in float64 at
    # γ = 1 − 1e-12 (relative error 7e-5) and 3.5e3 in float32 at γ = 1 − 2^-20 (2 %).
    eps = float(np.finfo(dtype).eps)
    for seed in range(6):
        P, R = _dyadic_model(seed, sticky=sticky)
        R = R.astype(dtype)
        mdp = FiniteMDP(P.astype(dtype), R, gamma=gamma)
        for pi in (np.zeros(4, dtype=int), np.array([1, 0, 1, 0])):
            V = np.asarray(evaluate_policy(mdp, pi), dtype=np.float64)
            exact = _exact_values(P[np.arange(4), pi], R[np.arange(4), pi], mdp.gamma)
            scale = eps * float(np.abs(R).max()) / (1.0 - mdp.gamma)
            assert np.abs(V - exact).max() <= 8.0 * scale, (
                seed,
                pi,
                np.abs(V - exact).max() / scale,
            )


@pytest.mark.parametrize(("dtype", "gamma"), [(np.float64, G64), (np.float32, G32)])
def test_occupancy_of_a_chain_with_two_closed_classes_near_gamma_one(dtype, gamma):
    # states 0 → 2 → 1 → 0 (each with probability 1/64, else stay) form one closed class, state 3
    # another; from the uniform μ the exact occupancy is uniform (each class keeps its mass and the
    # cycle's stationary law is uniform). The solve alone put 5.5e-6 (float64, γ = 1 − 1e-12) and
    # 2.9e-3 (float32, γ = 1 − 2^-20) of mass in the wrong places.
    eps = float(np.finfo(dtype).eps)
    P_pi = np.array([[63, 0, 1, 0], [1, 63, 0, 0], [0, 1, 63, 0], [0, 0, 0, 64]]) / 64.0
    P = np.stack([P_pi, np.roll(P_pi, 1, axis=0)], axis=1)  # action 1: another valid row
    mdp = FiniteMDP(P.astype(dtype), np.zeros((4, 2), dtype=dtype), gamma=gamma)
    mu = np.full(4, 0.25)
    exact = _exact_occupancy(P_pi, mdp.gamma, mu)
    np.testing.assert_array_equal(exact, 0.25)
    d = np.asarray(state_occupancy(mdp, np.zeros(4, dtype=int), mu.astype(dtype)))
    assert np.abs(d - exact).max() <= 8.0 * eps


@pytest.mark.parametrize(("dtype", "gamma"), [(np.float64, G64), (np.float32, G32)])
def test_occupancy_near_gamma_one_matches_the_fraction_solve(dtype, gamma):
    eps = float(np.finfo(dtype).eps)
    for seed in range(6):
        for sticky in (False, True):
            P, _ = _dyadic_model(seed, sticky=sticky)
            mdp = FiniteMDP(P.astype(dtype), np.zeros((4, 2), dtype=dtype), gamma=gamma)
            mu = np.array([0.125, 0.25, 0.5, 0.125])
            pi = np.array([0, 1, 1, 0])
            d = np.asarray(state_occupancy(mdp, pi, mu.astype(dtype)), dtype=np.float64)
            exact = _exact_occupancy(P[np.arange(4), pi], mdp.gamma, mu)
            assert np.abs(d - exact).max() <= 8.0 * eps, (seed, sticky)


def test_policy_iteration_certificate_holds_near_gamma_one():
    # ‖V* − V^π‖∞ ≤ bound and ‖V − V*‖∞ ≤ bound, V* by enumerating the 16 policies exactly
    for dtype, gamma in [(np.float64, G64), (np.float32, G32)]:
        for seed in range(4):
            P, R = _dyadic_model(seed, sticky=seed % 2 == 1)
            R = R.astype(dtype)
            mdp = FiniteMDP(P.astype(dtype), R, gamma=gamma)
            sol = policy_iteration(mdp)
            assert sol.converged
            pols = [np.array([(k >> s) & 1 for s in range(4)]) for k in range(16)]
            vals = {
                tuple(p): _exact_values(P[np.arange(4), p], R[np.arange(4), p], mdp.gamma)
                for p in pols
            }
            v_star = np.max(np.stack(list(vals.values())), axis=0)
            v_pi = vals[tuple(int(a) for a in sol.policy)]
            bound = float(sol.bound)
            assert np.max(v_star - v_pi) <= bound
            assert np.max(np.abs(np.asarray(sol.V, dtype=np.float64) - v_star)) <= bound


def test_refined_evaluation_runs_on_every_backend(xp):
    P, R = _dyadic_model(3)
    mdp = FiniteMDP(xp.asarray(P), xp.asarray(R), gamma=G64)
    pi = np.array([1, 0, 1, 0])
    V = np.asarray(evaluate_policy(mdp, xp.asarray(pi)))
    exact = _exact_values(P[np.arange(4), pi], R[np.arange(4), pi], G64)
    assert np.abs(V - exact).max() <= 8.0 * np.finfo(np.float64).eps * np.abs(R).max() / (1 - G64)
    d = np.asarray(state_occupancy(mdp, xp.asarray(pi), xp.asarray(np.full(4, 0.25))))
    assert np.abs(d - _exact_occupancy(P[np.arange(4), pi], G64, np.full(4, 0.25))).max() <= 1e-15


def test_refined_kernels_broadcast_batches_as_the_single_calls():
    # the refinement runs per instance: a batch of models, of policies, or of initial
    # distributions (broader than the model's batch) gives each instance's own answer
    Ps, Rs = zip(*(_dyadic_model(seed, sticky=seed % 2 == 0) for seed in range(3)), strict=True)
    batch = FiniteMDP(np.stack(Ps), np.stack(Rs), gamma=G64)
    pis = np.array([[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 1]])
    V = evaluate_policy(batch, pis)
    mus = np.array([[0.25] * 4, [0.5, 0.5, 0, 0], [0, 0, 0, 1.0]])
    one = FiniteMDP(Ps[0], Rs[0], gamma=G64)
    D = state_occupancy(one, pis[0], mus)
    for i in range(3):
        single = FiniteMDP(Ps[i], Rs[i], gamma=G64)
        np.testing.assert_array_equal(V[i], evaluate_policy(single, pis[i]))
        np.testing.assert_allclose(D[i], state_occupancy(one, pis[0], mus[i]), rtol=0, atol=1e-15)
        exact = _exact_occupancy(Ps[0][np.arange(4), pis[0]], G64, mus[i])
        assert np.abs(D[i] - exact).max() <= 8.0 * np.finfo(np.float64).eps


def _exact_optimum(P, R, gamma):
    pols = [np.array([(k >> s) & 1 for s in range(4)]) for k in range(16)]
    vals = {tuple(p): _exact_values(P[np.arange(4), p], R[np.arange(4), p], gamma) for p in pols}
    return np.max(np.stack(list(vals.values())), axis=0), vals


@pytest.mark.parametrize("sticky", [False, True])
def test_pi_bound_is_at_the_rounding_of_v_near_gamma_one(sticky):
    # V is right to a few units in the last place (bellman._policy_values) and the certificate
    # now says so: at most 4u‖V‖∞/(1−γ), where the direct residual's allowance alone is
    # 2γ_{S+2}γ‖V‖∞/(1−γ) ≈ 12u‖V‖∞/(1−γ) (measured 2.5e-3‖V‖∞ at γ = 1 − 1e-12; now 2e-4 at most)
    u = np.finfo(np.float64).eps / 2
    for seed in range(4):
        P, R = _dyadic_model(seed, sticky=sticky)
        mdp = FiniteMDP(P, R, gamma=G64)
        sol = policy_iteration(mdp)
        v_star, vals = _exact_optimum(P, R, mdp.gamma)
        v_pi = vals[tuple(int(a) for a in sol.policy)]
        bound = float(sol.bound)
        assert np.max(v_star - v_pi) <= bound and np.max(np.abs(sol.V - v_star)) <= bound
        assert bound <= 4.0 * u * np.abs(sol.V).max() / (1.0 - mdp.gamma), (seed, bound)


@pytest.mark.parametrize(
    ("dtype", "gamma"), [(np.float64, 0.9), (np.float64, G64), (np.float32, G32)]
)
def test_flow_advantages_are_within_their_allowance_of_the_exact_ones(dtype, gamma):
    # D(s, a) = r(s, a) + γ Σ_j P(j|s, a) V(j) − V(s) in fractions, at a V that is not V^π
    rng = np.random.default_rng(7)
    for seed in range(4):
        P, R = _dyadic_model(seed, sticky=seed % 2 == 1)
        mdp = FiniteMDP(P.astype(dtype), R.astype(dtype), gamma=gamma)
        V = (rng.standard_normal(4) + 1e3 * rng.standard_normal()).astype(dtype) / (1 - gamma)
        D, e = _Roundoff(mdp).flow_advantages(mdp, V)
        g = Fraction(mdp.gamma)
        for s in range(4):
            for a in range(2):
                exact = (
                    Fraction(float(mdp.R[s, a]))
                    + g * sum(Fraction(float(P[s, a, j])) * Fraction(float(V[j])) for j in range(4))
                    - Fraction(float(V[s]))
                )
                assert abs(Fraction(float(D[s, a])) - exact) <= Fraction(float(e))


def test_large_models_keep_the_one_solve_occupancy():
    # S > 512: one transposed solve (cancellation-free diagonal), not the O(S^3)-per-step
    # refinement of the columns; d is a distribution satisfying the flow equation to the solve's
    # error times 1 − γ
    rng = np.random.default_rng(3)
    S, gamma = 520, 1.0 - 1e-6
    P = rng.dirichlet(np.full(S, 0.1), size=(S, 1))
    d = np.asarray(
        state_occupancy(FiniteMDP(P, np.zeros((S, 1)), gamma=gamma), np.zeros(S, dtype=int))
    )
    assert np.all(d >= 0) and abs(d.sum() - 1.0) <= 4 * S * np.finfo(np.float64).eps
    flow = d - ((1 - gamma) / S + gamma * P[:, 0, :].T @ d)
    assert np.abs(flow).max() <= 1e-12
