"""mdpo_step refuses an inner ascent that ends below its start on a visited state's surrogate.

Per state, ``L_s(p) = Σ_a p(a)(A(s, a) − log(p(a)/π(a|s))/η)`` satisfies
``L_s(p) = (log Z(s) − KL(p ‖ p*))/η`` with ``p* = π(·|s) exp(η A(s, ·))/Z(s)`` the MDPO step, and
``L_s(π) = 0``: a row with ``L_s < 0`` is farther from the step than ``π(·|s)`` itself. Such a result
used to come with a ConvergenceWarning only, and only when the ``d``-weighted sum over states was
negative; an overshoot in one state hidden by another state's gain came without a word.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms.policy_mirror_descent import mdpo_step, pmd_kl_step
from rltheory.mdp import FiniteMDP


def _two_absorbing_states(r0: float) -> FiniteMDP:
    # each state absorbing, γ = 0: d^π_μ = μ = (0.9, 0.1), A^π(s, ·) = r(s, ·) − mean
    P = np.zeros((2, 2, 2))
    P[0, :, 0] = 1.0
    P[1, :, 1] = 1.0
    return FiniteMDP(P, np.array([[0.0, r0], [0.0, 10.0]]), gamma=0.0, mu=np.array([0.9, 0.1]))


def _surrogate(p, pi, A, eta):
    return np.sum(p * (A - np.log(p / pi) / eta), axis=-1)


def test_surrogate_is_log_partition_minus_kl_to_the_mdpo_step():
    # the identity the refusal rests on, on random rows (A = 4 actions, several η)
    rng = np.random.default_rng(57)
    for eta in (1e-3, 0.3, 1.0, 20.0):
        pi = rng.dirichlet(np.ones(4), size=50)
        A = rng.standard_normal((50, 4))
        A -= np.sum(pi * A, axis=-1, keepdims=True)  # advantages: Σ_a π(a) A(a) = 0
        p = rng.dirichlet(np.ones(4), size=50)
        w = pi * np.exp(eta * A)
        Z = w.sum(-1)
        star = w / Z[:, None]
        kl = np.sum(p * np.log(p / star), axis=-1)
        np.testing.assert_allclose(
            _surrogate(p, pi, A, eta), (np.log(Z) - kl) / eta, rtol=1e-9, atol=1e-9
        )
        np.testing.assert_allclose(_surrogate(pi, pi, A, eta), 0.0, atol=1e-12)


def test_an_overshoot_in_one_state_is_refused_even_when_another_state_gains():
    # η = 1, inner_lr = 10, 10 steps: state 0 (advantages ±0.005, weight 0.9) overshoots to
    # (0.798, 0.202), moving mass *away* from the better action, for the MDPO step (0.4975, 0.5025);
    # its L_0 = −0.193, while state 1 (advantages ±5) gains L_1 = 4.29. The old check on the
    # weighted sum 0.9·(−0.193) + 0.1·4.29 > 0 returned that policy without a warning.
    mdp = _two_absorbing_states(0.01)
    pi = np.full((2, 2), 0.5)
    exact = pmd_kl_step(mdp, pi, eta=1.0)
    np.testing.assert_allclose(
        exact[0], [1 / (1 + np.exp(0.01)), 1 / (1 + np.exp(-0.01))], rtol=1e-12
    )
    with pytest.raises(
        ValueError,
        match=r"below its start .* in state s=0 \(L_s = -0\.193 .* d\(s\) = 0\.9\).*inner_lr=10 ",
    ):
        mdpo_step(mdp, pi, eta=1.0, inner_steps=10, inner_lr=10.0)
    # a rate within the curvature: no error, no warning, and the row moves towards the exact step
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = mdpo_step(mdp, pi, eta=1.0, inner_steps=2000, inner_lr=1.0)
    np.testing.assert_allclose(p[0], exact[0], atol=1e-12)
    assert (
        0.5 < float(p[1, 1]) <= float(exact[1, 1])
    )  # (state 1 nears its corner slowly: the softmax gradient fades)


def test_the_refusal_names_the_batch_instance():
    # two instances of a one-state model at η = 0.1 with the default inner_lr = 1: rewards (0, 10)
    # are a step the ascent can take (it moves towards action 1), rewards (0, 1) are not (L_s = −5.07);
    # batched, the instance is named
    P = np.ones((2, 1, 2, 1))
    mdp = FiniteMDP(P, np.array([[[0.0, 10.0]], [[0.0, 1.0]]]), gamma=0.5)
    pi = np.full((2, 1, 2), 0.5)
    ok = mdpo_step(mdp[0], pi[0], eta=0.1)
    assert float(ok[0, 1]) > 0.5
    with pytest.raises(ValueError, match=r"in state s=0, batch index \(1,\) \(L_s = -5\.07 "):
        mdpo_step(mdp, pi, eta=0.1)
