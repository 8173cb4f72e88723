"""The exact discounted solvers refuse models whose values leave the float range, and empty batches.

Regression: with rewards 1e308 at γ = 0.9 (``V* = 1e309``, beyond float64) policy iteration returned
``converged=True`` with bound NaN and ``V = inf``, value iteration ran with overflow warnings and the
LP failed on an internal "v must be finite"; an empty batch crashed in numpy's reshape.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.mdp import (
    FiniteMDP,
    linear_program,
    modified_policy_iteration,
    policy_iteration,
    value_iteration,
)

SOLVERS = [policy_iteration, value_iteration, modified_policy_iteration, linear_program]
P2 = np.full((2, 2, 2), 0.5)
R2 = np.array([[1e308, 0.0], [0.0, 1e308]])


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda f: f.__name__)
def test_values_beyond_the_float_range_are_refused(solver):
    # (value iteration's first sweep is still in range, V = R; its certificate is what overflows)
    with pytest.raises(ValueError, match=r"(left|overflows) the float64 range: max\|R\| = 1e\+308 at gamma = 0.9"), \
            warnings.catch_warnings():
        warnings.simplefilter("error")  # the located error, not a numpy RuntimeWarning first
        solver(FiniteMDP(P2, R2, 0.9))
    # the batch index of the first offending instance is named (the other instance is in range)
    batch = FiniteMDP(np.stack([P2, P2]), np.stack([R2 * 1e-10, R2]), 0.9)
    with pytest.raises(ValueError, match=r"\(batch index \(1,\)\)"):
        solver(batch)
    with pytest.raises(ValueError, match="the batch is empty"):
        solver(FiniteMDP(np.full((0, 2, 2, 2), 0.5), np.zeros((0, 2, 2)), 0.9))


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda f: f.__name__)
def test_values_inside_the_range_are_solved(solver):
    # R / 64: the optimal policy earns 1e308/64 at every step from either state, so V* = 1.5625e306/(1 − 0.9)
    # = 1.5625e307, in range; the run is certified at the model's scale
    kw = {"tol": 1e296} if solver in (value_iteration, modified_policy_iteration) else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = solver(FiniteMDP(P2, R2 / 64, 0.9), **kw)
    assert res.converged and np.all(np.isfinite(res.V))
    np.testing.assert_allclose(res.V, 1.5625e307, rtol=1e-12)
    assert float(res.bound) <= 1e-6 * 1.5625e307


def test_float32_range_is_the_float32_one():
    R = np.array([[4e37, 0.0], [0.0, 4e37]], dtype=np.float32)  # V* = 4e38 > 3.4e38
    with pytest.raises(ValueError, match="(left|overflows) the float32 range"):
        policy_iteration(FiniteMDP(P2.astype(np.float32), R, 0.9))


def test_values_at_the_edge_of_the_range_are_solved():
    # γ = 0, r = 1e308: V* = 1e308 is representable (the Q-learning family computes its Q* this way)
    res = policy_iteration(FiniteMDP(np.ones((1, 2, 1)), np.array([[1e308, -1e308]]), 0.0))
    assert res.converged and res.V[0] == 1e308 and res.policy[0] == 0


def test_values_in_range_with_a_bound_beyond_it_are_solved():
    # max|R|/(1 − γ) = 2^1024 overflows, but V* = (1.5, 0.5)·2^1023 is representable: solved, not refused
    mdp = FiniteMDP(np.full((2, 2, 2), 0.5), np.array([[2.0**1023, 0.0], [0.0, -(2.0**1023)]]), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = policy_iteration(mdp)
    np.testing.assert_array_equal(res.V, [1.5 * 2.0**1023, 0.5 * 2.0**1023])
    assert res.converged and np.isfinite(res.bound)
