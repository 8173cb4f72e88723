"""The constrained drivers at the ends of the float range: values beyond it are refused by
``bellman._check_in_range`` with the driver named; values inside it give finite traces.

Regressions (3 states, 2 actions, gamma = 0.9):
* costs 2e307 (values 1.4e308, in range): npg_primal_dual's running sums overflowed, ``avg_violation``
  was inf, with overflow warnings;
* rewards 1.7e308 (values beyond the range) with ``reference`` and ``Lambda`` given: the error named
  ``evaluate_policy`` and a batch index nobody passed;
* rewards 1e307: sample_npg_primal_dual's roll-out sums and logit steps overflowed and it failed with
  "pi must be finite; pi(s=2, a=0) = nan";
* two_stage_constrained_ac with rewards 1.7e308: "tol must be a positive finite number; got inf".
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms import (
    lagrangian_policy_gradient,
    npg_pd_step,
    npg_primal_dual,
    sample_npg_primal_dual,
    two_stage_constrained_ac,
)
from rltheory.mdp import ConstrainedMDP, FiniteMDP


def _cmdp(R_scale=1.0, C_scale=1.0, b=8.0):
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=(3, 2))
    R, C = rng.random((3, 2)), rng.random((1, 3, 2))
    return ConstrainedMDP(FiniteMDP(P, R * R_scale, 0.9), C * C_scale, np.array([b]))


def test_npg_pd_average_violation_does_not_overflow_where_the_values_do_not():
    # costs 1.5e307·(0..1) at gamma = 0.9: every V_c is below 1.5e308, in range, but two of them summed
    # are not. With b = 0 every iterate violates, so avg_violation(t) = mean of violation(1..t) exactly
    # (up to rounding); the old running sum made it inf from t = 2 on, with overflow warnings.
    # (Lambda = 1e-300 keeps λ·c ≤ 1.5e7: the logit steps stay in range.)
    big = _cmdp(C_scale=1.5e307, b=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = npg_primal_dual(big, iterations=4, Lambda=1e-300, reference=1.0)
    tr = res.trace.metrics
    assert np.all(tr["violation"] > 1e307)
    for t in range(4):
        assert tr["avg_violation"][t] == pytest.approx(
            np.mean(tr["violation"][: t + 1] / 2.0**1000) * 2.0**1000, rel=1e-13
        )


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda c: npg_primal_dual(c, iterations=2, Lambda=1.0, reference=1.0), "npg_primal_dual"),
        (
            lambda c: sample_npg_primal_dual(
                c, iterations=2, rollouts=1, rng=0, Lambda=1.0, reference=1.0
            ),
            "sample_npg_primal_dual",
        ),
        (
            lambda c: lagrangian_policy_gradient(
                c, iterations=2, eta_theta=0.1, eta_lambda=0.1, Lambda=1.0, reference=1.0
            ),
            "lagrangian_policy_gradient",
        ),
    ],
)
def test_values_beyond_the_range_are_refused_with_the_driver_named(call, name):
    cmdp = _cmdp(R_scale=1.7e308)  # V_r ~ 5·1.7e308 > 1.8e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError,
            match=rf"^{name}: evaluate_policy: the values V\^pi left the float64 range "
            r"\(batch index \(0,\)\): max\|R\| = .* at gamma = 0\.9 .*"
            r"\(batch index 0 is the reward r, i \+ 1 the cost c_i\)$",
        ):
            call(cmdp)


def test_npg_pd_step_names_itself_and_the_lagrangian_reward():
    cmdp = _cmdp(R_scale=1.7e308)
    with pytest.raises(
        ValueError,
        match=r"^npg_pd_step: .*left the float64 range.*\(the Lagrangian reward r − λ·c\)$",
    ):
        npg_pd_step(cmdp, np.full((3, 2), 0.5), np.zeros(1), eta1=1.0, eta2=1.0, Lambda=1.0)


def test_sample_npg_pd_at_rewards_1e307_refuses_the_logit_step_located():
    # V_r ≤ 10·1e307 is in range, but η_1 Â_L/(1 − γ) (Â_L ~ 1e307, divided by 0.1, times η_1 = 2 log 2) is
    # not: the step is refused, located, instead of NaN logits
    cmdp = _cmdp(R_scale=1e307)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError,
            match=r"^sample_npg_primal_dual: the logit step eta1 A_L/\(1-gamma\) left the "
            r"float64 range: .*first non-finite entry \(s=\d, a=\d\)",
        ):
            sample_npg_primal_dual(cmdp, iterations=3, rollouts=2, rng=0, Lambda=1.0)


def test_sample_npg_pd_rollout_sums_are_scale_covariant():
    # Q̂ of rewards r·2^1020 (1.1e307; values up to 1.1e308, in range) is Q̂ of r times 2^1020 bit for bit
    # (the sums are taken in units of 2^e: a roll-out longer than ~16 steps overflowed them before); with
    # eta1 scaled by 2^-1020 the whole run is the unit run's: the same policies and multipliers
    unit = sample_npg_primal_dual(
        _cmdp(), iterations=3, rollouts=2, rng=4, Lambda=1.0, reference=1.0, eta1=1.0
    )
    big_c = _cmdp(R_scale=2.0**1020)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = sample_npg_primal_dual(
            big_c, iterations=3, rollouts=2, rng=4, Lambda=1.0, reference=1.0, eta1=2.0**-1020
        )
    np.testing.assert_array_equal(big.policy, unit.policy)
    np.testing.assert_array_equal(big.duals, unit.duals)


def test_two_stage_refuses_an_uncertifiable_soft_value_bound_located():
    cmdp = _cmdp(R_scale=1.7e308)
    with pytest.raises(
        ValueError,
        match=r"^two_stage_constrained_ac: the soft-value bound of stage 2 \(reward r \+ "
        r"Σ_i w_i log π_i\) left the float64 range: max\|R\| = .* at gamma = 0\.9, "
        r"temperature 1",
    ):
        two_stage_constrained_ac(cmdp, weights=[1.0])
    big_c = _cmdp(C_scale=1.7e308, b=1e308)
    with pytest.raises(
        ValueError,
        match=r"^two_stage_constrained_ac: the soft-value bound of stage 1 \(reward -c_0\)",
    ):
        two_stage_constrained_ac(big_c, weights=[1.0])
