"""Projected steps ``Π(π + η d)`` keep ``π`` where ``η d`` is large (Euclidean PMD, projected PG).

``Π(y + c·1) = Π(y)``: a per-row shift of ``d`` does not move the step, so actions tied in ``d``
keep their share of ``π`` for every ``η``. Formed as ``π + η d``, ``π`` was rounded away once
``η|d| ≫ 1/ε`` and tied actions split the row evenly. Reference: the projection in exact rational
arithmetic of the same floating-point inputs (Held, Wolfe & Crowder 1974 threshold).
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms.policy_gradient import projected_gradient_step, projected_policy_gradient
from rltheory.algorithms.policy_mirror_descent import pmd_euclidean_step, policy_mirror_descent
from rltheory.mdp import FiniteMDP


def _exact_projection(y: list[Fraction]) -> list[Fraction]:
    # Π(y) = max(y − θ, 0), θ = max_k (Σ_{i≤k} u_i − 1)/k over the decreasingly sorted u
    u = sorted(y, reverse=True)
    css, theta = Fraction(0), None
    for k, v in enumerate(u, start=1):
        css += v
        t = (css - 1) / k
        theta = t if theta is None or t > theta else theta
    return [max(v - theta, Fraction(0)) for v in y]


def _bandit(r, dtype) -> FiniteMDP:
    # one state, γ = 0: Q^π = r exactly, so the Euclidean PMD step is Π(π + η r)
    r = np.asarray(r, dtype=dtype)
    return FiniteMDP(np.ones((1, r.size, 1), dtype=dtype), r[None, :], gamma=0.0)


@pytest.mark.parametrize(
    ("dtype", "eta"),
    [(np.float64, 1e20), (np.float64, 1e308), (np.float32, 1e10), (np.float32, 3e38)],
)
def test_tied_actions_keep_their_share_of_pi(dtype, eta):
    # Q = (1, 1): Π(π + η·(1, 1)) = π for every η. The old code returned (0.5, 0.5) (float64 at η = 1e20,
    # float32 at η = 1e10: π rounded away in π + η).
    mdp = _bandit([1.0, 1.0], dtype)
    pi = np.array([[0.9, 0.1]], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        out = np.asarray(pmd_euclidean_step(mdp, pi, eta=eta))
    eps = float(np.finfo(dtype).eps)
    np.testing.assert_allclose(out, pi, rtol=0, atol=2 * eps)  # (the projection's own rounding)
    # three actions, two tied on top and one far below: the top pair keeps π's split, renormalised
    mdp3 = _bandit([1.0, 1.0, -1.0], dtype)
    pi3 = np.array([[0.5, 0.25, 0.25]], dtype=dtype)
    # Π(π + η(d − 1)) with the third entry ≤ 0.25 − 2η < −1: support {0, 1}, θ = (0.75 − 1)/2
    np.testing.assert_allclose(
        np.asarray(pmd_euclidean_step(mdp3, pi3, eta=eta)), [[0.625, 0.375, 0.0]], atol=2 * eps
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_euclidean_pmd_step_matches_the_exact_projection(dtype):
    # random bandit rows at η from 1 to near the dtype's largest number, rewards of several scales,
    # with ties in a third of the rows: every entry within 2 ε of the rational projection of the same
    # inputs (the old code was 0.028 off at float32, η = 1e5, r ≈ 12.7 without ties, and 0.49 with)
    rng = np.random.default_rng(57)
    eps = float(np.finfo(dtype).eps)
    big = float(np.finfo(dtype).max)
    worst = 0.0
    for _ in range(300):
        A = int(rng.integers(2, 5))
        r = (rng.standard_normal(A) * 10.0 ** rng.integers(-3, 5)).astype(dtype)
        if rng.random() < 0.3:
            r[1] = r[0]
        pi = rng.dirichlet(np.ones(A)).astype(dtype)[None, :]
        pi = pi / pi.sum()
        eta = float(rng.choice([1.0, 1e5, 1e10, 1e20, big / 1e3, big]))
        out = np.asarray(pmd_euclidean_step(_bandit(r, dtype), pi, eta=eta))[0]
        ref = _exact_projection(
            [
                Fraction(float(p)) + Fraction(eta) * Fraction(float(q))
                for p, q in zip(pi[0], r, strict=True)
            ]
        )
        worst = max(
            worst, max(abs(float(Fraction(float(o)) - e)) for o, e in zip(out, ref, strict=True))
        )
    assert worst <= 2 * eps, worst


def test_projected_gradient_entries_keep_pi_on_ties():
    # projected_gradient_step / projected_policy_gradient / Euclidean PMD share the step: a bandit
    # with equal rewards is already optimal, and a huge η must leave π where it is (old: (0.5, 0.5))
    mdp = _bandit([2.0, 2.0], np.float64)
    pi = np.array([[0.7, 0.3]])
    np.testing.assert_allclose(projected_gradient_step(mdp, pi, eta=1e300), pi, rtol=0, atol=1e-15)
    res = projected_policy_gradient(mdp, eta=1e300, iterations=2, pi0=pi)
    np.testing.assert_allclose(np.asarray(res.policy), pi, rtol=0, atol=1e-15)
    res = policy_mirror_descent(
        mdp, step_sizes=1e300, iterations=2, update=pmd_euclidean_step, pi0=pi
    )
    np.testing.assert_allclose(np.asarray(res.policy), pi, rtol=0, atol=1e-15)
