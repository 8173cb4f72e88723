"""compatible_critic on compatible features whose columns differ greatly in size.

Theorem: the weighted least-squares fit ``ψw*`` and its residual ``‖ψw* − A^π‖_{d⊗π}`` depend only
on the span of ``ψ``; for a design of full column rank ``w*`` is unique, so ``ψ·diag(2^{c_j})`` has
the critic ``2^{−c_j}·w*_j`` (compatible function approximation, Sutton et al. 2000, Thm 2; the
natural gradient ``F⁺∇V`` is covariant in the same way, Kakade 2001).

Before: one rounding cut at ``16·max(SA, d)·ε·max|ψ|`` dropped every column smaller than about
``1e-13`` of the largest, though its entries are known to their own relative rounding: for
``ψ·diag(2^-100, 1, 2^100)`` the residual was 0.188 where the fit's is 0.128, and the critic lost
that feature.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.critics import compatible_critic, compatible_features
from rltheory.mdp import FiniteMDP


def _case(seed: int = 0, S: int = 3, A: int = 3, d: int = 3):
    rng = np.random.default_rng(seed)
    P = rng.random((S, A, S))
    P /= P.sum(-1, keepdims=True)
    mdp = FiniteMDP(P, rng.random((S, A)), gamma=0.9)
    pi = rng.random((S, A))
    pi /= pi.sum(-1, keepdims=True)
    return mdp, pi, compatible_features(rng.normal(size=(S, A, d)), pi)


@pytest.mark.parametrize(
    "c", [[-100, 0, 100], [-520, 0, 0], [0, 0, -600], [-1000, 0, 1000], [-60, 0, 0]]
)
@pytest.mark.parametrize("seed", [0, 1])
def test_column_scaling_by_powers_of_two_is_covariant(seed, c):
    mdp, pi, psi = _case(seed)
    c = np.array(c)
    w, res = compatible_critic(mdp, pi, psi)
    w2, res2 = compatible_critic(mdp, pi, np.ldexp(psi, c))
    # a full-rank 9 x 3 design: w* unique; a few roundings of a well-conditioned solve apart
    np.testing.assert_allclose(np.ldexp(w2, c), w, rtol=0, atol=1e-14 * np.max(np.abs(w)))
    assert abs(res2 - res) <= 1e-14 * max(res, 1.0)


def test_normal_equations_hold_for_the_rescaled_critic():
    # F w* = E_{d⊗π}[ψ A^π] (the weighted normal equations) for ψ·diag(2^-100, 1, 2^100), checked
    # column by column in the unit-scale coordinates ψ_j·2^{-c_j}, w_j·2^{c_j}
    mdp, pi, psi = _case(0)
    c = np.array([-100, 0, 100])
    w2, _ = compatible_critic(mdp, pi, np.ldexp(psi, c))
    ref, _ = compatible_critic(mdp, pi, psi)
    # the feature of size 2^-100 carries weight ~2^100 (it was 0 before: the direction was cut)
    assert abs(w2[0]) > 1e29
    np.testing.assert_allclose(np.ldexp(w2, c), ref, rtol=1e-13)
