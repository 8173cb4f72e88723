"""Advantages and the performance-difference identity against exact rational references.

``A^π = Q^π − V^π`` formed directly subtracts two numbers of size ``max|r|/(1−γ)``, and any
advantage formed from a stored ``V^π`` inherits ``V^π``'s rounding (``ε‖V^π‖∞``, different in
every entry) in its differences ``V(j) − V(s)``. :func:`rltheory.mdp.advantage` forms it in flow
form and corrects it by the solve of its own residual (``bellman._values_and_advantages``), so
an entry errs by a few ``ε`` times ``max|r|`` plus the largest value difference along a
transition, ``J = max_{P(j|s,a) > 0} |V^π(j) − V^π(s)|`` (which is itself of size
``max|r|/(1−γ)`` only where ``A^π`` is: two closed classes). The direct form erred by up to
``7e11·ε·max|r|`` at γ = 1 − 10⁻¹² (150 on rewards of size 10⁶), the performance difference
by ``3e11·ε·max|r|/(1−γ)``. The models have dyadic transition rows (multiples of 1/64), so
the stored rows sum to 1 exactly and the fraction solve is the exact value of the stored
model.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.mdp import FiniteMDP, advantage, evaluate_policy, performance_difference
from rltheory.testing import discounts, dyadic_model, exact_policy_values, finite_mdps, policies

CASES = [
    (np.float64, 0.0),
    (np.float64, 0.9),
    (np.float64, 1.0 - 1e-9),
    (np.float64, 1.0 - 1e-12),
    (np.float32, 0.99),
    (np.float32, 1.0 - 2.0**-20),  # exactly representable in float32
]


def _dyadic_model(seed, S=4, A=2, sticky=False, scale=1e6):
    return dyadic_model(seed, S, A, sticky=sticky, scale=scale)


def _one_hot(pi, A=2):
    out = np.zeros((len(pi), A))
    out[np.arange(len(pi)), pi] = 1.0
    return out


def _exact_advantages(P, R, gamma, pi):
    """``(V^π, A^π)`` in fractions, ``A^π(s, a) = r(s, a) + γΣ_j P(j|s, a)V^π(j) − V^π(s)``."""
    S, A = R.shape
    V = exact_policy_values(P, R, gamma, _one_hot(pi, A))
    g = Fraction(gamma)
    Adv = [
        [
            Fraction(float(R[s, a]))
            + g * sum(Fraction(float(P[s, a, j])) * V[j] for j in range(S))
            - V[s]
            for a in range(A)
        ]
        for s in range(S)
    ]
    return V, Adv


def _jump(P, V):
    """``max|r|``'s companion in the error bound: the largest ``|V(j) − V(s)|`` along a transition."""
    Vf = np.array([float(x) for x in V])
    diff = np.abs(Vf[None, None, :] - Vf[:, None, None])
    return float(np.max(np.where(P > 0, diff, 0.0)))


def _models(dtype, gamma):
    for seed in range(6):
        for sticky in (False, True):
            P, R = _dyadic_model(seed, sticky=sticky)
            R = R.astype(dtype).astype(np.float64)  # the stored rewards, read exactly
            yield seed, sticky, P, R, FiniteMDP(P.astype(dtype), R.astype(dtype), gamma=gamma)


@pytest.mark.parametrize(("dtype", "gamma"), CASES)
def test_advantage_is_within_a_few_eps_of_the_exact_one(dtype, gamma):
    eps = float(np.finfo(dtype).eps)
    for seed, sticky, P, R, mdp in _models(dtype, gamma):
        g = float(mdp.gamma)
        for pi in (np.array([0, 1, 1, 0]), np.array([1, 1, 0, 0])):
            V, exact = _exact_advantages(P, R, g, pi)
            Adv = np.asarray(advantage(mdp, pi), dtype=np.float64)
            err = max(
                abs(Fraction(float(Adv[s, a])) - exact[s][a]) for s in range(4) for a in range(2)
            )
            scale = eps * (float(np.abs(R).max()) + _jump(P, V))
            # measured ≤ 0.7 scale (float32) and ≤ 0.37 scale (float64) over these models
            assert float(err) <= 2.0 * scale, (seed, sticky, pi, float(err) / scale)
            # and the identity Σ_a π(a|s) A^π(s, a) = 0 to the same accuracy
            assert np.abs(Adv[np.arange(4), pi]).max() <= 2.0 * scale


@pytest.mark.parametrize(("dtype", "gamma"), CASES)
def test_performance_difference_is_within_a_few_eps_of_the_exact_one(dtype, gamma):
    # V^{π'}(μ) − V^π(μ) (uniform μ) from two exact solves; the right-hand side
    # (1−γ)^{-1} Σ d^{π'}(s, a) A^π(s, a) has the advantages' error over 1 − γ
    eps = float(np.finfo(dtype).eps)
    new = np.array([1, 0, 0, 1])
    for seed, sticky, P, R, mdp in _models(dtype, gamma):
        g = float(mdp.gamma)
        V_new = exact_policy_values(P, R, g, _one_hot(new))
        for old in (np.array([0, 1, 1, 0]), np.array([1, 1, 0, 0])):
            V_old = exact_policy_values(P, R, g, _one_hot(old))
            lhs = sum(a - b for a, b in zip(V_new, V_old, strict=True)) / 4
            rhs = float(performance_difference(mdp, new, old))
            scale = eps * (float(np.abs(R).max()) + _jump(P, V_old)) / (1.0 - g)
            # measured ≤ 0.33 scale over these models
            assert abs(float(Fraction(rhs) - lhs)) <= 2.0 * scale, (seed, sticky, old)


def test_batched_advantages_equal_the_single_ones():
    # a batch of policies on one model and a batch of models with one policy: the correction
    # solve broadcasts as the evaluation does
    models = [_dyadic_model(seed) for seed in range(3)]
    g = 1.0 - 1e-12
    pis = np.array([[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 1]])
    one = FiniteMDP(models[0][0], models[0][1], gamma=g)
    batch = FiniteMDP(np.stack([m[0] for m in models]), np.stack([m[1] for m in models]), gamma=g)
    by_policy = np.asarray(advantage(one, pis))
    by_model = np.asarray(advantage(batch, pis[0]))
    for i in range(3):
        np.testing.assert_array_equal(by_policy[i], np.asarray(advantage(one, pis[i])))
        single = FiniteMDP(models[i][0], models[i][1], gamma=g)
        np.testing.assert_array_equal(by_model[i], np.asarray(advantage(single, pis[0])))


def test_advantage_with_values_spanning_beyond_the_float_range():
    # V^π = (−1e308, 1e308) (γ = 1/2, each state absorbing under π): the flow form's difference
    # V(1) − V(0) = 2e308 overflows, the exact advantage A(0, 1) = −1.5e308 + 0.5·1e308 + 1e308
    # = 0 is representable and comes from the direct form there
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = P[1, :, 1] = 1.0
    R = np.array([[-0.5e308, -1.5e308], [0.5e308, 0.5e308]])
    Adv = advantage(FiniteMDP(P, R, gamma=0.5), np.array([0, 0]))
    np.testing.assert_array_equal(Adv, np.zeros((2, 2)))


def test_flow_advantages_on_sparse_successor_lists_equal_the_dense_backup():
    # S ≥ 64 with K ≤ S/8 successors: the flow form gathers V through the padded successor
    # lists; it equals r + γPV − V (dense einsum) to the rounding of values of size ~3, and a
    # V batch (5, 1) broadcasts against the model batch (2,)
    from rltheory.mdp.difference_form import _flow_advantages
    from rltheory.mdp.zoo import garnet

    mdp = garnet(80, 3, 4, gamma=0.9, rng=7, batch_shape=(2,))
    assert mdp.successors is not None
    P, R = np.asarray(mdp.P), np.asarray(mdp.R)
    V = np.random.default_rng(0).standard_normal((5, 1, 80))
    dense = R + 0.9 * np.einsum("bsap,nbp->nbsa", P, V) - V[..., None]
    np.testing.assert_allclose(np.asarray(_flow_advantages(mdp, V)), dense, rtol=0, atol=1e-14)
    # and advantage() on this model: Σ_a π(a|s) A^π(s, a) = 0 (values ≤ 10 max|r|)
    Adv = np.asarray(advantage(mdp, np.zeros(80, dtype=int)))
    assert Adv.shape == (2, 80, 3)
    assert np.abs(Adv[..., 0]).max() <= 1e-14


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_performance_difference_identity_near_gamma_one(data):
    # Kakade & Langford (2002), Lemma 6.1 on hypothesis-drawn models (S = 1 and A = 1 included,
    # {0, 1} rewards with exact ties) at γ ∈ [0.999, 1 − 1e-9]: the right-hand side from
    # d^{π'} and A^π equals V^{π'}(μ) − V^π(μ) from two evaluations to the values' own accuracy,
    # a few ε·(max|r| + J)/(1−γ); and Σ_a π(a|s) A^π(s, a) = 0 to a few ε·(max|r| + J). With
    # Q − V formed directly the identity was off by ~ε·max|r|/(1−γ)².
    mdp = data.draw(finite_mdps(max_states=4, max_actions=3, gamma=discounts(0.999, 1 - 1e-9)))
    pi_new = data.draw(policies(mdp.S, mdp.A))
    pi_old = data.draw(policies(mdp.S, mdp.A))
    g = float(mdp.gamma)
    V_old = np.asarray(evaluate_policy(mdp, pi_old))
    P = np.asarray(mdp.P)
    J = float(np.max(np.where(P > 0, np.abs(V_old[None, None, :] - V_old[:, None, None]), 0.0)))
    scale = np.finfo(np.float64).eps * (float(np.abs(np.asarray(mdp.R)).max()) + J)
    mu = np.asarray(mdp.initial_distribution())
    lhs = float(mu @ (np.asarray(evaluate_policy(mdp, pi_new)) - V_old))
    rhs = float(performance_difference(mdp, pi_new, pi_old))
    assert abs(rhs - lhs) <= 16.0 * scale / (1.0 - g), abs(rhs - lhs) * (1.0 - g) / scale
    Adv = np.asarray(advantage(mdp, pi_old))
    assert np.abs((pi_old * Adv).sum(-1)).max() <= 8.0 * scale
