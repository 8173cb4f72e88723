"""The traces of the Q-learning family are measured against the ``Q*`` of the model the samplers draw from.

The samplers draw next states from the float64 row-normalised kernel ``max(P, 0)/σ``
(:mod:`rltheory.mdp.sample`), so every learner's iterates converge to that model's ``Q*``. A float64
model may hold rows that sum to ``1 − 2e-8`` or rounding negatives ``−5e-9`` (inside the validators'
tolerance ``1e-8·(1 + √S)``); the reference used to be the stored kernel's ``Q*``, so the trace of
iterates sitting exactly at the sampled ``Q*`` read ``1.8e-6`` (and ``9e-7``) instead of round-off.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.q_learning import (
    constant_step,
    double_q_learning,
    q_learning,
    q_learning_replay,
    synchronous_q_learning,
    va_learning,
)
from rltheory.mdp import FiniteMDP, policy_iteration
from rltheory.mdp.zoo import random_mdp

GAMMA = 0.9


def _short_rows() -> FiniteMDP:
    # rows sum to σ = 1 − 2e-8; every reward is 1, so the sampled (normalised) model has
    # Q* = 1/(1 − γ) = 10 at every pair, the stored kernel 1/(1 − γσ) = 10 − 1.8e-6
    P = np.array([[[0.5, 0.5 - 2e-8]], [[0.5 - 2e-8, 0.5]]])
    return FiniteMDP(P, np.ones((2, 1)), gamma=GAMMA)


LEARNERS = {
    "synchronous_q_learning": lambda m: synchronous_q_learning(
        m, iterations=600, step_size=constant_step(1.0), rng=0, record_every=600
    ),
    "q_learning": lambda m: q_learning(
        m, steps=1500, step_size=constant_step(1.0), rng=0, n_runs=3, record_every=1500
    ),
    "q_learning_replay": lambda m: q_learning_replay(
        m,
        steps=1500,
        step_size=constant_step(1.0),
        rng=0,
        replay_every=2,
        replay_updates=1,
        buffer_size=10,
        n_runs=3,
        record_every=1500,
    ),
    "double_q_learning": lambda m: double_q_learning(
        m, steps=3000, step_size=constant_step(1.0), rng=0, n_runs=3, record_every=3000
    ),
    # VA-learning overshoots at α = 1 (its Notes): a smaller constant step, same fixed point
    "va_learning": lambda m: va_learning(
        m, steps=3000, step_size=constant_step(0.3), rng=0, n_runs=3, record_every=3000
    ),
}


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_trace_error_is_round_off_at_the_sampled_models_q_star(name):
    mdp = _short_rows()
    res = LEARNERS[name](mdp)
    # the iterates themselves sit at the closed-form Q* = 10 of the sampled model
    np.testing.assert_allclose(res.Q, 10.0, rtol=0, atol=1e-11)
    # and the trace measures them against it (the stored kernel's Q* gave 1.8e-6 here)
    assert np.all(res.trace["error"][-1] <= 1e-11)
    assert np.all(np.abs(res.trace["value_bias"][-1]) <= 1e-11)


def test_rounding_negatives_count_as_zero_in_the_reference():
    # P(1|0) = −5e-9 is a rounding negative (never drawn): the sampled model keeps state 0 in
    # place, Q*(0) = 1/(1 − γ) = 10, Q*(1) = 2/(1 − γ) = 20; the stored kernel's
    # Q*(0) = (1 − 5e-9·γ·20)/(1 − γ) = 10 − 9e-7
    P = np.array([[[1.0, -5e-9]], [[0.0, 1.0]]])
    mdp = FiniteMDP(P, np.array([[1.0], [2.0]]), gamma=GAMMA)
    res = synchronous_q_learning(mdp, iterations=600, step_size=constant_step(1.0), rng=0)
    np.testing.assert_allclose(res.Q, [[10.0], [20.0]], rtol=0, atol=1e-11)
    assert res.trace["error"][-1] <= 1e-11


def test_an_exact_float64_model_keeps_its_reference_to_the_bit():
    # rows that sum to exactly 1 are divided by 1.0: the reference (and the trace) is unchanged
    mdp = random_mdp(4, 2, gamma=0.8, rng=5)
    P = np.asarray(mdp.P)
    exact = np.all(P.sum(-1) == 1.0)
    res = synchronous_q_learning(mdp, iterations=3, step_size=constant_step(0.5), rng=1)
    given = synchronous_q_learning(
        mdp, iterations=3, step_size=constant_step(0.5), rng=1, Q_star=policy_iteration(mdp).Q
    )
    if exact:
        np.testing.assert_array_equal(res.trace["error"], given.trace["error"])
    else:  # rows off by an ulp: the references agree to round-off
        np.testing.assert_allclose(res.trace["error"], given.trace["error"], rtol=0, atol=1e-13)
