"""Bellman layer: theorems on hypothesis-drawn models, reference values, backends, validation.

Tolerances follow from the magnitudes involved: rewards lie in [0, 1], so values are
at most 1/(1−γ) ≤ 100, and one linear solve with ``I − γP_π`` (condition number
≤ (1+γ)/(1−γ) ≤ 199 in ‖·‖∞) loses at most ``S·κ·ε·‖V‖`` ≈ 6·199·2.2e-16·100 ≈ 3e-11.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.backend import to_numpy
from rltheory.mdp import (
    FiniteMDP,
    advantage,
    as_stochastic_policy,
    bellman_operator,
    bellman_optimality_operator,
    evaluate_policy,
    expected_value,
    greedy,
    occupancy_measure,
    performance_difference,
    policy_iteration,
    policy_reward,
    policy_transition_matrix,
    q_function,
    q_values,
    state_occupancy,
)
from rltheory.testing import deterministic_policies, finite_mdps, policies

#: absolute tolerance for quantities obtained from one linear solve (see module docstring)
SOLVE_ATOL = 1e-10
#: absolute tolerance for one Bellman backup of values of size ≤ 100 (a few roundings)
BACKUP_ATOL = 1e-12


def _vectors(data, shape, scale=10.0):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    return scale * rng.uniform(-1, 1, size=shape)


def _sup(x):
    return float(np.max(np.abs(x)))


# ---- contraction and monotonicity (Puterman 1994, Prop. 6.2.4) --------------------------
@given(st.data())
def test_optimality_operator_is_gamma_contraction(data):
    mdp = data.draw(finite_mdps())
    U, V = _vectors(data, (mdp.S,)), _vectors(data, (mdp.S,))
    lhs = _sup(bellman_optimality_operator(mdp, U) - bellman_optimality_operator(mdp, V))
    assert lhs <= mdp.gamma * _sup(U - V) + BACKUP_ATOL


@given(st.data())
def test_policy_operator_is_gamma_contraction(data):
    mdp = data.draw(finite_mdps())
    pi = data.draw(policies(mdp.S, mdp.A))
    U, V = _vectors(data, (mdp.S,)), _vectors(data, (mdp.S,))
    lhs = _sup(bellman_operator(mdp, U, pi) - bellman_operator(mdp, V, pi))
    assert lhs <= mdp.gamma * _sup(U - V) + BACKUP_ATOL


@given(st.data())
def test_operators_are_monotone(data):
    mdp = data.draw(finite_mdps())
    pi = data.draw(policies(mdp.S, mdp.A))
    U = _vectors(data, (mdp.S,))
    V = U + np.abs(_vectors(data, (mdp.S,)))  # V ≥ U pointwise
    assert np.all(
        bellman_optimality_operator(mdp, U) <= bellman_optimality_operator(mdp, V) + BACKUP_ATOL
    )
    assert np.all(bellman_operator(mdp, U, pi) <= bellman_operator(mdp, V, pi) + BACKUP_ATOL)


@given(st.data())
def test_operators_shift_by_gamma_c(data):
    # T(V + c·1) = T V + γc and T^π(V + c·1) = T^π V + γc (constants pass through P).
    mdp = data.draw(finite_mdps())
    pi = data.draw(policies(mdp.S, mdp.A))
    V, c = _vectors(data, (mdp.S,)), data.draw(st.floats(-5, 5))
    np.testing.assert_allclose(
        bellman_optimality_operator(mdp, V + c),
        bellman_optimality_operator(mdp, V) + mdp.gamma * c,
        rtol=0,
        atol=BACKUP_ATOL,
    )
    np.testing.assert_allclose(
        bellman_operator(mdp, V + c, pi),
        bellman_operator(mdp, V, pi) + mdp.gamma * c,
        rtol=0,
        atol=BACKUP_ATOL,
    )


# ---- fixed points ------------------------------------------------------------------------
@given(st.data())
def test_value_of_policy_is_fixed_point_of_T_pi(data):
    mdp = data.draw(finite_mdps(batch_shape=data.draw(st.sampled_from([(), (3,)]))))
    pi = data.draw(policies(mdp.S, mdp.A, batch_shape=mdp.batch_shape))
    V = np.asarray(evaluate_policy(mdp, pi))
    np.testing.assert_allclose(bellman_operator(mdp, V, pi), V, rtol=0, atol=SOLVE_ATOL)


@settings(max_examples=25)
@given(finite_mdps())
def test_optimal_value_is_fixed_point_of_T(mdp):
    V = np.asarray(policy_iteration(mdp).V)
    np.testing.assert_allclose(bellman_optimality_operator(mdp, V), V, rtol=0, atol=SOLVE_ATOL)


@given(st.data())
def test_q_function_satisfies_bellman_equation(data):
    # Q^π(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) Σ_a' π(a'|s') Q^π(s', a')  and  V^π = Σ_a π Q^π.
    mdp = data.draw(finite_mdps())
    pi = data.draw(policies(mdp.S, mdp.A))
    Q = np.asarray(q_function(mdp, pi))
    V = np.asarray(evaluate_policy(mdp, pi))
    np.testing.assert_allclose((pi * Q).sum(-1), V, rtol=0, atol=SOLVE_ATOL)
    rhs = np.asarray(mdp.R) + mdp.gamma * np.asarray(mdp.P) @ (pi * Q).sum(-1)
    np.testing.assert_allclose(Q, rhs, rtol=0, atol=SOLVE_ATOL)


# ---- policy improvement and performance difference --------------------------------------
@given(st.data())
def test_greedy_policy_improvement_never_decreases_value(data):
    mdp = data.draw(finite_mdps(batch_shape=data.draw(st.sampled_from([(), (2,)]))))
    pi = data.draw(policies(mdp.S, mdp.A, batch_shape=mdp.batch_shape))
    V_old = np.asarray(evaluate_policy(mdp, pi))
    pi_new = greedy(q_function(mdp, pi))
    V_new = np.asarray(evaluate_policy(mdp, pi_new))
    assert np.all(V_new >= V_old - SOLVE_ATOL)
    # and the greedy policy is at least as good one step ahead: T^{π'} V^π = T V^π ≥ V^π
    np.testing.assert_allclose(
        bellman_operator(mdp, V_old, pi_new),
        bellman_optimality_operator(mdp, V_old),
        rtol=0,
        atol=BACKUP_ATOL,
    )


@given(st.data())
def test_performance_difference_identity(data):
    # Kakade & Langford (2002), Lemma 6.1:
    # V^{π'}(μ) − V^π(μ) = 1/(1−γ) Σ_s d^{π'}_μ(s) Σ_a π'(a|s) A^π(s, a).
    batch = data.draw(st.sampled_from([(), (3,)]))
    mdp = data.draw(finite_mdps(batch_shape=batch))
    pi_new = data.draw(policies(mdp.S, mdp.A, batch_shape=batch))
    pi_old = data.draw(
        st.one_of(
            policies(mdp.S, mdp.A, batch_shape=batch), deterministic_policies(mdp.S, mdp.A, batch)
        )
    )
    mu = mdp.initial_distribution()
    lhs = expected_value(evaluate_policy(mdp, pi_new), mu) - expected_value(
        evaluate_policy(mdp, pi_old), mu
    )
    rhs = performance_difference(mdp, pi_new, pi_old)
    assert np.shape(rhs) == batch
    np.testing.assert_allclose(rhs, lhs, rtol=0, atol=1e-10)
    # explicit mu argument (a point mass) agrees with evaluating at that state
    point = np.zeros(mdp.S)
    point[-1] = 1.0
    lhs_s = (
        np.asarray(evaluate_policy(mdp, pi_new))[..., -1]
        - np.asarray(evaluate_policy(mdp, pi_old))[..., -1]
    )
    np.testing.assert_allclose(
        performance_difference(mdp, pi_new, pi_old, point), lhs_s, rtol=0, atol=1e-10
    )


# ---- occupancy measures ------------------------------------------------------------------
@given(st.data())
def test_occupancy_flow_constraints_and_normalisation(data):
    # Σ_a d(s', a) = (1−γ) μ(s') + γ Σ_{s,a} P(s'|s, a) d(s, a),  d ≥ 0,  Σ d = 1.
    batch = data.draw(st.sampled_from([(), (2,)]))
    mdp = data.draw(finite_mdps(batch_shape=batch))
    pi = data.draw(policies(mdp.S, mdp.A, batch_shape=batch))
    d = np.asarray(occupancy_measure(mdp, pi))
    mu = np.asarray(mdp.initial_distribution())
    P = np.asarray(mdp.P)
    inflow = (1 - mdp.gamma) * mu + mdp.gamma * np.einsum("...sa,...sat->...t", d, P)
    np.testing.assert_allclose(d.sum(-1), inflow, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d.sum((-2, -1)), 1.0, rtol=0, atol=1e-12)
    assert np.all(d >= -1e-15)
    np.testing.assert_allclose(np.asarray(state_occupancy(mdp, pi)), d.sum(-1), rtol=0, atol=1e-15)


@given(st.data())
def test_value_is_reward_under_occupancy(data):
    # V^π(μ) = 1/(1−γ) Σ_{s,a} d^π_μ(s, a) r(s, a)  (linear-programming duality of the values).
    mdp = data.draw(finite_mdps())
    pi = data.draw(policies(mdp.S, mdp.A))
    d = np.asarray(occupancy_measure(mdp, pi))
    V_mu = float(expected_value(evaluate_policy(mdp, pi), mdp.initial_distribution()))
    assert abs((d * np.asarray(mdp.R)).sum() / (1 - mdp.gamma) - V_mu) <= SOLVE_ATOL


@given(st.data())
def test_advantage_sums_to_zero_under_policy(data):
    mdp = data.draw(finite_mdps(batch_shape=data.draw(st.sampled_from([(), (2,)]))))
    pi = data.draw(policies(mdp.S, mdp.A, batch_shape=mdp.batch_shape))
    Adv = np.asarray(advantage(mdp, pi))
    np.testing.assert_allclose((pi * Adv).sum(-1), 0.0, rtol=0, atol=SOLVE_ATOL)


# ---- deterministic = one-hot stochastic ---------------------------------------------------
@given(st.data())
def test_deterministic_policy_equals_its_one_hot(data):
    batch = data.draw(st.sampled_from([(), (2,)]))
    mdp = data.draw(finite_mdps(batch_shape=batch))
    det = data.draw(deterministic_policies(mdp.S, mdp.A, batch))
    onehot = np.eye(mdp.A)[det]
    np.testing.assert_array_equal(as_stochastic_policy(mdp, det), onehot)
    V = _vectors(data, (mdp.S,))
    for f in (
        policy_transition_matrix,
        policy_reward,
        evaluate_policy,
        q_function,
        advantage,
        occupancy_measure,
    ):
        np.testing.assert_allclose(f(mdp, det), f(mdp, onehot), rtol=0, atol=1e-13)
    np.testing.assert_allclose(
        bellman_operator(mdp, V, det), bellman_operator(mdp, V, onehot), rtol=0, atol=1e-13
    )


# ---- reference values ------------------------------------------------------------------------
def test_greedy_tie_rule_is_lowest_index():
    Q = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [0.0, 1.0, 1.0 - 1e-9]])
    np.testing.assert_array_equal(greedy(Q), [1, 0, 1])
    np.testing.assert_array_equal(greedy(Q, atol=1e-6), [1, 0, 1])
    Q2 = np.array([[5.0, 5.0 + 1e-9, 0.0]])
    np.testing.assert_array_equal(greedy(Q2), [1])
    np.testing.assert_array_equal(greedy(Q2, atol=1e-6), [0])


def test_reference_values_on_a_hand_solved_model():
    # Two states, one action each: 0 → 1 with reward 1, 1 → 1 with reward 2, γ = 0.5.
    # V(1) = 2/(1−0.5) = 4; V(0) = 1 + 0.5·4 = 3.  From μ = (1, 0):
    # d(0) = (1−γ)·1 = 0.5 and d(1) = 0.5 (the rest of the discounted mass).
    P = np.array([[[0.0, 1.0]], [[0.0, 1.0]]])
    mdp = FiniteMDP(P, np.array([[1.0], [2.0]]), 0.5, np.array([1.0, 0.0]))
    np.testing.assert_allclose(evaluate_policy(mdp, np.array([0, 0])), [3.0, 4.0], atol=1e-15)
    np.testing.assert_allclose(state_occupancy(mdp, np.array([0, 0])), [0.5, 0.5], atol=1e-15)
    np.testing.assert_allclose(q_values(mdp, np.array([10.0, 20.0])), [[11.0], [12.0]], atol=1e-15)
    np.testing.assert_allclose(bellman_optimality_operator(mdp, np.zeros(2)), [1.0, 2.0], atol=0)


# ---- backends -------------------------------------------------------------------------------
def _backend_cases():
    rng = np.random.default_rng(7)
    out = []
    for batch in ((), (3,)):
        P = rng.random(batch + (5, 3, 5)) ** 2
        P /= P.sum(-1, keepdims=True)
        R = rng.random(batch + (5, 3))
        pi = rng.random(batch + (5, 3))
        pi /= pi.sum(-1, keepdims=True)
        out.append((P, R, pi, rng.integers(0, 3, size=batch + (5,)), rng.normal(size=batch + (5,))))
    return out


@pytest.mark.parametrize("case", range(2), ids=["single", "batched"])
def test_kernels_agree_with_numpy_on_every_backend(xp, case):
    P, R, pi, det, V = _backend_cases()[case]
    ref = FiniteMDP(P, R, 0.9)
    mdp = FiniteMDP(xp.asarray(P), xp.asarray(R), 0.9)
    pi_x, det_x, V_x = xp.asarray(pi), xp.asarray(det), xp.asarray(V)
    pairs = [
        (q_values(mdp, V_x), q_values(ref, V)),
        (bellman_optimality_operator(mdp, V_x), bellman_optimality_operator(ref, V)),
        (bellman_operator(mdp, V_x, pi_x), bellman_operator(ref, V, pi)),
        (bellman_operator(mdp, V_x, det_x), bellman_operator(ref, V, det)),
        (greedy(q_values(mdp, V_x)), greedy(q_values(ref, V))),
        (policy_transition_matrix(mdp, pi_x), policy_transition_matrix(ref, pi)),
        (policy_reward(mdp, det_x), policy_reward(ref, det)),
        (evaluate_policy(mdp, pi_x), evaluate_policy(ref, pi)),
        (q_function(mdp, det_x), q_function(ref, det)),
        (advantage(mdp, pi_x), advantage(ref, pi)),
        (state_occupancy(mdp, pi_x), state_occupancy(ref, pi)),
        (occupancy_measure(mdp, det_x), occupancy_measure(ref, det)),
        (performance_difference(mdp, pi_x, det_x), performance_difference(ref, pi, det)),
    ]
    for got, want in pairs:
        # stays in the caller's namespace (numpy turns 0-d reductions into numpy scalars)
        assert type(got) is type(mdp.P) or (
            isinstance(got, np.generic) and isinstance(mdp.P, np.ndarray)
        )
        np.testing.assert_allclose(to_numpy(got), np.asarray(want), rtol=0, atol=1e-12)


# ---- validation -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "pi, match",
    [
        (np.array([0, 2, 1]), r"pi\(1,\) = 2 is not an action index in \[0, 2\)"),
        (np.array([0, -1, 0]), r"pi\(1,\) = -1 is not an action index"),
        (
            np.array([0, 1]),
            r"deterministic policy pi must have shape \(\.\.\., S\) = \(\.\.\., 3\); got \(2,\)",
        ),
        (
            np.ones((3, 3)) / 3,
            r"stochastic policy pi must have shape \(\.\.\., S, A\) = \(\.\.\., 3, 2\); got \(3, 3\)",
        ),
        (
            np.array([[0.5, 0.5], [0.9, 0.2], [1.0, 0.0]]),
            r"each pi\[s, :\] must sum to 1 .*worst row \(s=1\) sums to 1\.1",
        ),
        (
            np.array([[0.5, 0.5], [1.2, -0.2], [1.0, 0.0]]),
            r"pi must be non-negative; most negative entry pi\(s=1, a=1\) = -0\.2",
        ),
        (
            np.array([[0.5, 0.5], [np.nan, 0.5], [1.0, 0.0]]),
            r"pi must be finite; pi\(s=1, a=0\) = nan",
        ),
    ],
)
def test_invalid_policies_are_located(pi, match):
    mdp = FiniteMDP(np.ones((3, 2, 3)) / 3, np.zeros((3, 2)), 0.9)
    for f in (evaluate_policy, policy_transition_matrix, occupancy_measure):
        with pytest.raises(ValueError, match=match):
            f(mdp, pi)


def test_invalid_arguments():
    mdp = FiniteMDP(np.ones((3, 2, 3)) / 3, np.zeros((3, 2)), None)
    for f in (evaluate_policy, state_occupancy):
        with pytest.raises(
            ValueError, match=r"needs a discount factor but the model has gamma=None"
        ):
            f(mdp, np.array([0, 0, 0]))
    with pytest.raises(ValueError, match=r"atol must be >= 0; got -1"):
        greedy(np.zeros((2, 2)), atol=-1)
