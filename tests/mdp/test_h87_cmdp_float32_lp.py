"""solve_cmdp builds its LP from the row-normalised model in float64, whatever the model's dtype.

Built from ``P`` in its own dtype, a float32 model had ``γP`` rounded to float32 in the flow rows, so
the LP was that of ``γ = float32(0.999) = 0.99900001`` (values and costs 1.3e-5 too large relative)
or of ``float32(1 − 1e-7) = 1 − 1.19e-7`` (13% off), and a returned policy broke its constraint.
"""

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import ConstrainedMDP, FiniteMDP, solve_cmdp
from rltheory.testing import exact_policy_values

U32 = 2.0**-24


@pytest.mark.parametrize("gamma", [0.999, 1 - 1e-7])
def test_one_state_cmdp_in_float32_matches_the_closed_form(gamma):
    # one state, P = 1 (exact in float32), R = (1, 2), C = (0, 1), b = H/4 with H = 1/(1 − γ): the cost
    # binds at q(1) = H/4, so π = (3/4, 1/4), V* = q(0) + 2 q(1) = 5H/4, λ* = ∂V*/∂b = 1.
    # Old code (float32): V = 1249.987 at γ = 0.999 (LP of float32(γ)); π(1) = 0.250003, whose cost
    # 250.003 exceeds b = 250
    H = 1.0 / (1.0 - gamma)
    mdp = FiniteMDP(np.ones((1, 2, 1), np.float32), np.array([[1.0, 2.0]], np.float32), gamma)
    sol = solve_cmdp(ConstrainedMDP(mdp, np.array([[[0.0, 1.0]]], np.float32), [H / 4]))
    b32 = float(np.float32(H / 4))  # the threshold as the float32 model stores it
    assert sol.value == pytest.approx(H + b32, rel=1e-12)
    np.testing.assert_allclose(sol.policy, [[1 - b32 / H, b32 / H]], rtol=2 * U32)
    assert float(sol.duals[0]) == pytest.approx(1.0, rel=2 * U32)
    # the returned (float32) policy's exact cost, for γ as given: within float32 rounding of π of b
    pi = np.asarray(sol.policy, dtype=np.float64)
    cost = exact_policy_values(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma, pi)[0]
    assert abs(float(cost - Fraction(b32))) <= 2 * U32 * b32


@pytest.mark.parametrize("gamma", [0.99, 0.999, None])
def test_float32_cmdp_solves_the_lp_of_its_row_normalised_float64_copy(gamma):
    # P's float32 rows miss 1 by ~1e-8; the float64 model with those same numbers, rows normalised,
    # has the same LP, so the two answers agree to HiGHS's accuracy (old code at γ = 0.999: values
    # 2e-5 relative apart, the float32 policy's cost above b)
    rng = np.random.default_rng(11)
    P32 = rng.dirichlet(np.ones(4), size=(4, 3)).astype(np.float32)
    R32, C32 = rng.random((4, 3)).astype(np.float32), rng.random((1, 4, 3)).astype(np.float32)
    assert np.max(np.abs(P32.astype(np.float64).sum(-1) - 1)) > 1e-9  # rows genuinely off
    H = 1.0 if gamma is None else 1.0 / (1.0 - gamma)
    b = np.array([0.3 * H], np.float32)
    P64 = P32.astype(np.float64)
    P64 /= P64.sum(-1, keepdims=True)
    s32 = solve_cmdp(ConstrainedMDP(FiniteMDP(P32, R32, gamma), C32, b))
    s64 = solve_cmdp(
        ConstrainedMDP(
            FiniteMDP(P64, R32.astype(np.float64), gamma),
            C32.astype(np.float64),
            b.astype(np.float64),
        )
    )
    assert float(s64.duals[0]) > 0  # the constraint binds
    assert s32.value == pytest.approx(s64.value, rel=1e-9)
    np.testing.assert_allclose(s32.costs, s64.costs, rtol=4 * U32)
    np.testing.assert_allclose(s32.duals, s64.duals, rtol=1e-6)
    np.testing.assert_allclose(s32.policy, s64.policy, rtol=0, atol=4 * U32)
    if gamma is not None:  # the float32 policy's exact cost on the row-normalised model, γ as given
        mu = np.full(4, 0.25)
        v = exact_policy_values(P32, C32[0], gamma, np.asarray(s32.policy, dtype=np.float64))
        cost = sum(Fraction(float(m)) * x for m, x in zip(mu, v, strict=True))
        assert float(cost) <= float(b[0]) * (1 + 1e-5)
