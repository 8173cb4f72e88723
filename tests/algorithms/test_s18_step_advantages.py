"""npg_step and softmax_gradient use accurate advantages near γ = 1.

Regression (helper-76's open item): both formed ``A^π = Q^π − V^π`` by subtracting two numbers
of size ``max|r|/(1−γ)``, which errs by up to ~1e12·ε·max|r| at γ = 1 − 1e-12; the NPG step then
multiplies the error by ``η/(1−γ)``. They now call :func:`rltheory.mdp.advantage` (flow form plus
the solve of its residual). References: exact rational advantages of the stored model
(dyadic rows, so the stored rows sum to 1 exactly).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from rltheory.algorithms import npg_step
from rltheory.algorithms.policy_gradient import softmax_gradient
from rltheory.mdp import FiniteMDP, state_occupancy
from rltheory.testing import dyadic_model, exact_policy_values

GAMMA = 1.0 - 1e-12


def _model(seed, S=4, A=2):
    return dyadic_model(seed, S, A, scale=1e6)


def _exact_advantage(P, R, pi):
    S, A = R.shape
    V = exact_policy_values(P, R, GAMMA, pi)
    g = Fraction(GAMMA)
    return np.array(
        [
            [
                float(
                    Fraction(R[s, a])
                    + g * sum(Fraction(P[s, a, j]) * V[j] for j in range(S))
                    - V[s]
                )
                for a in range(A)
            ]
            for s in range(S)
        ]
    )


def test_npg_step_matches_the_step_of_the_exact_advantage():
    for seed in range(4):
        P, R = _model(seed)
        mdp = FiniteMDP(P, R, gamma=GAMMA)
        pi = np.full((4, 2), 0.5)
        A = _exact_advantage(P, R, pi)
        eta = 1e-12 / np.max(np.abs(A))  # η/(1−γ)·|A| ≤ 1: an informative step
        logits = np.log(pi) + (eta / (1.0 - GAMMA)) * A
        want = np.exp(logits - logits.max(-1, keepdims=True))
        want /= want.sum(-1, keepdims=True)
        got = np.asarray(npg_step(mdp, pi, eta=eta))
        # old: off by up to ~1e-4 (the Q − V error, ~1e12·ε·1e6 ≈ 1e2, times η/(1−γ) ≈ 1/|A|)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)  # (measured: ≤ 2.3e-16)


def test_softmax_gradient_matches_the_exact_advantage_form():
    for seed in range(4):
        P, R = _model(seed)
        mdp = FiniteMDP(P, R, gamma=GAMMA)
        theta = np.zeros((4, 2))
        pi = np.full((4, 2), 0.5)
        A = _exact_advantage(P, R, pi)
        rho = np.full(4, 0.25)
        d = np.asarray(state_occupancy(mdp, pi, rho))
        want = d[:, None] * pi * A / (1.0 - GAMMA)
        got = np.asarray(softmax_gradient(mdp, theta, rho=rho))
        np.testing.assert_allclose(
            got, want, rtol=1e-13, atol=0
        )  # (old: 1.8e-4; measured now ≤ 2.9e-15)
