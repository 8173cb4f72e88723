"""numpy float16 policies given to array_api_strict models are promoted and judged by name.

Regression (found by helper-77): ``evaluate_policy``, ``evaluate_finite_horizon`` and
``MarkovGame.check_joint`` called ``xp.asarray(pi)`` on the raw policy, and array_api_strict has
no float16: the call failed with the namespace's own "does not support the dtype 'float16'",
naming no field. Now only integer (deterministic) tables move as they are; float16 policies are
promoted to float64 and judged at float16's rounding (tolerance 0.0156), as numpy models judge them.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.games.markov import MarkovGame
from rltheory.mdp import FiniteHorizonMDP, FiniteMDP, evaluate_policy
from rltheory.mdp.horizon import evaluate_finite_horizon

xps = pytest.importorskip("array_api_strict")

P = [[[0.3, 0.7], [1.0, 0.0]], [[0.5, 0.5], [0.0, 1.0]]]
R = [[1.0, 0.0], [0.0, 1.0]]
PI16 = np.array([[0.3, 0.7], [0.5, 0.5]], dtype=np.float16)


def _ref(pi):  # the numpy model's answer for the same (float16-rounded, renormalised) policy
    p = pi.astype(np.float64)
    return p / p.sum(-1, keepdims=True)


def test_evaluate_policy_takes_a_float16_policy_in_a_strict_model():
    m = FiniteMDP(xps.asarray(P), xps.asarray(R), 0.9)
    got = np.asarray(evaluate_policy(m, PI16))
    want = evaluate_policy(FiniteMDP(np.array(P), np.array(R), 0.9), _ref(PI16))
    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(evaluate_policy(m, np.array([0, 1]))), [10.0, 10.0], rtol=1e-14)
    with pytest.raises(ValueError, match=r"pi"):
        evaluate_policy(m, np.array([[0.3, 0.8], [0.5, 0.5]], dtype=np.float16))


def test_evaluate_finite_horizon_takes_a_float16_policy_in_a_strict_model():
    fh = FiniteHorizonMDP(xps.asarray([P]), xps.asarray([R]))
    got = np.asarray(evaluate_finite_horizon(fh, PI16[None]))
    want = evaluate_finite_horizon(FiniteHorizonMDP(np.array([P]), np.array([R])), _ref(PI16)[None])
    np.testing.assert_allclose(got, want, rtol=1e-14)
    with pytest.raises(ValueError, match=r"pi\[h, s, :\] must sum to 1 \(atol=0\.015625\)"):
        evaluate_finite_horizon(fh, np.array([[[0.3, 0.8], [0.5, 0.5]]], dtype=np.float16))


def test_markov_game_check_joint_takes_a_float16_policy_in_a_strict_game():
    Pg = np.full((1, 2, 2, 1), 1.0)
    g = MarkovGame(xps.asarray(Pg), xps.asarray(np.zeros((2, 1, 2, 2))), 0.5)
    pi = np.array([[[0.3, 0.2], [0.1, 0.4]]], dtype=np.float16)
    got = np.asarray(g.check_joint(pi))
    np.testing.assert_allclose(got, _ref(pi.reshape(1, 4)).reshape(1, 2, 2), rtol=1e-15)
