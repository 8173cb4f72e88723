"""Finite-horizon backward induction against brute force over all deterministic Markov policies."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.backend import to_numpy
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP, backward_induction, evaluate_finite_horizon


@st.composite
def small_fh(draw, max_s=3, max_a=2, max_h=3):
    S, A, H = draw(st.integers(1, max_s)), draw(st.integers(1, max_a)), draw(st.integers(1, max_h))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    P = rng.random((H, S, A, S)) ** 2
    P /= P.sum(-1, keepdims=True)
    R = rng.integers(0, 3, size=(H, S, A)).astype(float) if draw(st.booleans()) else rng.random((H, S, A))
    return FiniteHorizonMDP(P, R)


@settings(max_examples=40)
@given(small_fh())
def test_backward_induction_equals_brute_force(fh):
    sol = backward_induction(fh)
    best = np.full(fh.S, -np.inf)
    for flat in itertools.product(range(fh.A), repeat=fh.H * fh.S):
        pi = np.asarray(flat).reshape(fh.H, fh.S)
        best = np.maximum(best, evaluate_finite_horizon(fh, pi)[0])
    np.testing.assert_allclose(sol.V[0], best, atol=1e-12)
    # the returned policy attains the optimum at every stage
    np.testing.assert_allclose(evaluate_finite_horizon(fh, sol.policy), sol.V, atol=1e-12)
    assert sol.V.shape == (fh.H + 1, fh.S) and np.all(sol.V[-1] == 0)


def test_stationary_reference_and_batch(xp):
    # One state, rewards (0, 1): V_h = H - h under the greedy policy.
    fh = FiniteHorizonMDP.stationary(xp.ones((2, 1, 2, 1)), xp.asarray([[[0.0, 1.0]], [[2.0, 0.5]]]), H=4)
    sol = backward_induction(fh)
    np.testing.assert_allclose(to_numpy(sol.V)[:, :, 0], [[4, 3, 2, 1, 0], [8, 6, 4, 2, 0]])
    np.testing.assert_array_equal(to_numpy(sol.policy)[:, :, 0], [[1] * 4, [0] * 4])
    np.testing.assert_allclose(to_numpy(sol.value), [4.0, 8.0])


def test_stochastic_policy_evaluation_is_linear_in_policy():
    rng = np.random.default_rng(0)
    P = rng.random((3, 4, 2, 4))
    P /= P.sum(-1, keepdims=True)
    fh = FiniteHorizonMDP(P, rng.random((3, 4, 2)))
    # a policy mixing two deterministic policies at stage 0 only: V_0 mixes linearly
    p0, p1 = np.zeros((3, 4), int), np.zeros((3, 4), int)
    p1[0] = 1
    mix = np.zeros((3, 4, 2))
    mix[..., 0] = 1.0
    mix[0] = 0.5
    v = evaluate_finite_horizon(fh, mix)[0]
    np.testing.assert_allclose(v, 0.5 * (evaluate_finite_horizon(fh, p0)[0] + evaluate_finite_horizon(fh, p1)[0]))


def test_validation():
    with pytest.raises(InvalidModelError, match=r"P must have shape \(\.\.\., H, S, A, S\)"):
        FiniteHorizonMDP(np.ones((2, 1, 2)), np.zeros((2, 1)))
    with pytest.raises(InvalidModelError, match=r"worst row \(h=1, s=0, a=1\) sums to 2"):
        P = np.ones((2, 1, 2, 1))
        P[1, 0, 1, 0] = 2.0
        FiniteHorizonMDP(P, np.zeros((2, 1, 2)))
    with pytest.raises(ValueError, match="H must be a positive integer"):
        FiniteHorizonMDP.stationary(np.ones((1, 1, 1)), np.zeros((1, 1)), H=0)
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.zeros((1, 2)), H=2)
    with pytest.raises(ValueError, match=r"action indices in \[0, 2\)"):
        evaluate_finite_horizon(fh, np.full((2, 1), 3))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., H, S\)"):
        evaluate_finite_horizon(fh, np.zeros((3, 1), int))
    with pytest.raises(TypeError, match="expects a FiniteHorizonMDP"):
        backward_induction(np.ones(3))


def test_batch_of_policies_on_one_model_matches_one_at_a_time():
    # A batch of policies on an unbatched model broadcasts like evaluate_policy does; it used to
    # crash in a reshape ("cannot reshape array of size 24 into shape (3,2)").
    rng = np.random.default_rng(3)
    P = rng.random((2, 3, 2, 3))
    P /= P.sum(-1, keepdims=True)
    fh = FiniteHorizonMDP(P, rng.random((2, 3, 2)))
    pis = rng.integers(0, 2, size=(4, 2, 3))
    V = evaluate_finite_horizon(fh, pis)
    assert V.shape == (4, 3, 3)
    for i in range(4):
        np.testing.assert_allclose(V[i], evaluate_finite_horizon(fh, pis[i]), rtol=0, atol=1e-14)
    # stochastic policies too, and mismatched batches get a message naming both shapes
    soft = rng.dirichlet(np.ones(2), size=(4, 2, 3))
    Vs = evaluate_finite_horizon(fh, soft)
    np.testing.assert_allclose(Vs[2], evaluate_finite_horizon(fh, soft[2]), rtol=0, atol=1e-14)
    fb = FiniteHorizonMDP(np.stack([P] * 3), np.zeros((3, 2, 3, 2)))
    with pytest.raises(ValueError, match=r"batch shape \(4,\) does not broadcast against the model's batch shape \(3,\)"):
        evaluate_finite_horizon(fb, pis)
