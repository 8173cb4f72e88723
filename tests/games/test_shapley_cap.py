"""The default sweep cap of shapley_value_iteration leaves room for the round-off floor."""

from __future__ import annotations

import warnings

import numpy as np

from rltheory.games import ZeroSumMarkovGame, shapley_value_iteration


def test_default_cap_certifies_a_game_whose_floor_is_below_tol():
    # One state, the row player picks payoff 1 or 0 (B = 1), γ = 0.99: V* = 1/(1 − γ) = 100.
    # The bound is (γδ + ρ)/(1 − γ) with the round-off floor ρ/(1 − γ) ≈ 3e-11 < tol = 1e-10,
    # so the stopping rule can hold; the old cap counted the contraction part to tol itself
    # and stopped at 2751 sweeps with bound 1.30e-10 > tol (converged=False, warning).
    g = ZeroSumMarkovGame(np.ones((1, 2, 1, 1)), np.array([[[1.0], [0.0]]]), 0.99)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = shapley_value_iteration(g, tol=1e-10)
    assert res.converged and float(res.bound) <= 1e-10
    assert abs(float(res.V[0]) - 100.0) <= float(res.bound)
    assert np.array_equal(np.asarray(res.policies[0]), [[1.0, 0.0]])
