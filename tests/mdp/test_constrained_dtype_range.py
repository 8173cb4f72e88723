"""solve_cmdp answers in the model's dtype and refuses, in that dtype's range, what it cannot represent.

Regressions: a float32 CMDP got float64 policy, costs, duals, occupancy, slack and flow duals (every
other solver returns the model's dtype); a float32 model whose value or cost leaves float32's range
(3.4e38) was answered in float64 without a word.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.mdp import ConstrainedMDP, FiniteMDP, evaluate_cmdp, solve_cmdp

ARRAYS = ("policy", "costs", "duals", "occupancy", "slack", "state_duals")


def _cmdp(dtype, R_scale=1.0, C_scale=1.0, b=8.0, gamma=0.9):
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(3), size=(3, 2))
    R, C = rng.random((3, 2)) * R_scale, rng.random((1, 3, 2)) * C_scale
    return ConstrainedMDP(
        FiniteMDP(P.astype(dtype), R.astype(dtype), gamma), C.astype(dtype), np.array([b], dtype)
    )


@pytest.mark.parametrize("gamma", [0.9, 0.5, None])
def test_float32_model_gets_float32_answers_that_agree_with_float64(gamma):
    # (average reward, gamma=None: the float32 rows of P sum to 1 ± 2e-8 in float64, and the LP's
    # implied row Σ x (1 − Σ_j P) = 0 cut the polytope while all S flow rows were kept: V* = 0.495
    # instead of 0.641)
    b = {0.9: 2.5, 0.5: 0.5, None: 0.25}[gamma]  # below the unconstrained optimum's cost: it binds
    sol32 = solve_cmdp(_cmdp(np.float32, b=b, gamma=gamma))
    sol64 = solve_cmdp(_cmdp(np.float64, b=b, gamma=gamma))
    assert 0 < float(sol64.duals[0])  # the constraint binds: every array carries information
    for name in ARRAYS:
        assert getattr(sol32, name).dtype == np.float32, name
        assert getattr(sol64, name).dtype == np.float64, name
    # the float32 model's data are the float64 model's rounded to 2^-24 relative: its answer moves by
    # O(1e-7) relative (factor 1e3 for this LP's conditioning); the policy need not be unique, so it is
    # judged by its values on the float64 model
    for name in ("costs", "duals", "slack"):
        np.testing.assert_allclose(
            getattr(sol32, name), getattr(sol64, name), rtol=1e-4, atol=1e-4, err_msg=name
        )
    assert sol32.value == pytest.approx(sol64.value, rel=1e-4, abs=1e-4)
    # (the float32 rows, read in float64, sum to 1 only to float32 rounding, ~6e-8, beyond the float64
    # model's 1e-8 check: renormalised in float64 first; changed on purpose when solve_cmdp began
    # solving the float64 LP of the row-normalised model, whose policy at γ = 0.5 rounds to a row summing
    # to 1 − 3e-8)
    pi32 = np.asarray(sol32.policy, dtype=np.float64)
    value, cost = evaluate_cmdp(
        _cmdp(np.float64, b=b, gamma=gamma), pi32 / pi32.sum(-1, keepdims=True)
    )
    assert value == pytest.approx(sol64.value, rel=1e-4, abs=1e-4)
    assert float(cost[0]) <= b + 1e-4
    _, costs = evaluate_cmdp(_cmdp(np.float32, b=b, gamma=gamma), sol32.policy)
    assert costs.dtype == np.float32


def test_float32_value_beyond_float32_range_is_refused_via_check_in_range():
    # rewards up to 2e38 at gamma = 0.9 and a slack budget: V* ~ 4.9·2e38 > 3.4e38 (float32's max),
    # though in float64 it is an ordinary number
    cmdp = _cmdp(np.float32, R_scale=2e38, b=100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError,
            match=r"^solve_cmdp: the optimal value V_R\(μ\) left the float32 range: "
            r"max\|R\| = .* at gamma = 0\.9 .*divide R by a power of 2",
        ):
            solve_cmdp(cmdp)
    # the remedy works: R / 2^8 is in range and the value scales back to the float64 answer
    small = solve_cmdp(_cmdp(np.float32, R_scale=2e38 / 256, b=100.0))
    ref = solve_cmdp(_cmdp(np.float64, R_scale=2e38, b=100.0))
    assert small.value * 256 == pytest.approx(ref.value, rel=1e-5)


def test_float32_cost_beyond_float32_range_is_refused_with_the_constraint_named():
    # costs -2e38·(0..1) on every pair: V_C ~ -3·2e38 < b (feasible), beyond float32's range
    cmdp = _cmdp(np.float32, C_scale=-2e38, b=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError,
            match=r"^solve_cmdp: the optimal policy's cost V_C0\(μ\) = -inf .*left the "
            r"float32 range .*divided by a power of 2",
        ):
            solve_cmdp(cmdp)


def test_values_beyond_float64_range_at_gamma_09_are_refused():
    # rewards ~1e308 at gamma = 0.9 (V* ~ 1e309): the same located error as the discounted solvers'
    cmdp = _cmdp(np.float64, R_scale=1.7e308, b=100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError,
            match=r"^solve_cmdp: the optimal value V_R\(μ\) left the float64 range: "
            r"max\|R\| = .* at gamma = 0\.9 \(\|V\| <= max\|R\|/\(1-gamma\)",
        ):
            solve_cmdp(cmdp)
