"""Every bound function rejects a bad argument with an error that names it (and, for arrays,
the first bad index and its value) — before computing anything."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.bounds import average as avg
from rltheory.bounds import average_reward as ar
from rltheory.bounds import constrained as con
from rltheory.bounds import coverage as cov
from rltheory.bounds import games as gm
from rltheory.bounds import offline as off
from rltheory.bounds import policy_optimization as po
from rltheory.bounds import td_q_learning as tq

_NPG_PD = {"gamma": 0.5, "eta1": 1.0, "eta2": 0.1, "Lambda": 4.0, "n_actions": 2}
_QL = {"alpha": 0.1, "gamma": 0.5, "initial_error": 1.0, "value_span": 1.0, "n_pairs": 4, "horizon": 10,
       "delta": 0.1}

CASES = [
    # rltheory.bounds.average
    (avg.vanishing_discount_bound, (0.9, -1.0), {}, r"bias_span must be a finite number >= 0; got -1\.0"),
    (avg.vanishing_discount_bound, (1.0, 1.0), {}, r"gamma must lie in \[0, 1\); got 1\.0"),
    (avg.span_contraction_coefficient, (np.ones(3),), {}, r"P must have shape \(S, S\) or \(S, A, S\); got \(3,\)"),
    (avg.rvi_asymptotic_rate, (np.eye(2), 0.0), {}, r"tau must lie in \(0, 1\]; got 0\.0"),
    (avg.rvi_asymptotic_rate, (np.eye(2), True), {}, r"tau must lie in \(0, 1\]; got True"),
    (avg.mixing_time_spectral_bounds, (2.0, math.inf, 0.5), {}, r"eps must be a finite number; got inf"),
    (avg.mixing_time_spectral_bounds, (0.5, 0.25, 0.5), {}, r"relaxation_time must be >= 1"),
    (avg.mixing_time_spectral_bounds, (2.0, 0.5, 0.5), {}, r"eps must lie in \(0, 1/2\) for the lower bound; got 0\.5"),
    (avg.mixing_time_spectral_bounds, (2.0, 0.25, 0.0), {}, r"mu_min must lie in \(0, 1\]; got 0\.0"),
    (avg.mixing_time_eps_bound, (-1, 0.1), {}, r"t_mix must be a non-negative integer; got -1"),
    (avg.mixing_time_eps_bound, (3, 1.0), {}, r"eps must lie in \(0, 1\); got 1\.0"),
    # rltheory.bounds.average_reward
    (ar.markov_average_bias, ([1, 2], [1.0, 0.5, 1.5], 1.0), {}, r"tv must be in \[0, 1\]; tv\[2\] = 1\.5"),
    (ar.markov_average_bias, ([1], [[1.0]], 1.0), {}, r"tv must be a 1-D array .*got shape \(1, 1\)"),
    (ar.markov_average_bias, ([0], [1.0, 0.5], 1.0), {}, r"N must be integers in \[1, len\(tv\)=2\]; got \[0\]"),
    (ar.markov_average_bias, ([1], [1.0], -1.0), {}, r"span must be a finite number >= 0; got -1\.0"),
    (ar.mlmc_expected_samples, (0,), {}, r"T_max must be an integer >= 1; got 0"),
    (ar.mac_rate, (0,), {}, r"T must be >= 1; got 0"),
    (ar.mac_rate, (10,), {"tau_mix": 0.5}, r"tau_mix must be >= 1; got 0\.5"),
    (ar.mac_rate, (10,), {"T_max": 1}, r"T_max must be an integer >= 2; got 1"),
    (ar.mac_rate, (10,), {"C": -1.0}, r"C must be a finite number >= 0; got -1\.0"),
    # rltheory.bounds.games
    (gm.hedge_regret_bound, ([1, 0], 2, 0.1, 1.0), {}, r"t must be >= 1; t\[1\] = 0\.0"),
    (gm.hedge_regret_bound, (10, 0, 0.1, 1.0), {}, r"k must be an integer >= 1; got 0"),
    (gm.hedge_regret_bound, (10, 2, 0.0, 1.0), {}, r"eta must be a finite number > 0; got 0\.0"),
    (gm.hedge_gap_bound, (10, 2, 0, 0.1, 0.1, 1.0), {}, r"n must be an integer >= 1; got 0"),
    (gm.hedge_tuned_regret, (0.5, 2, 1.0), {}, r"T must be >= 1; got 0\.5"),
    (gm.regret_matching_gap_bound, (10, 2, 2, math.nan), {}, r"payoff_range must be a finite number >= 0; got nan"),
    (gm.optimistic_max_step, (-1.0,), {}, r"lipschitz must be a finite number >= 0; got -1\.0"),
    (gm.optimistic_max_step, ("a",), {}, r"lipschitz must be a finite number >= 0; got 'a'"),
    (gm.optimistic_gap_bound, (10, -0.5, 0.5, 0.1), {}, r"D_x must be a finite number >= 0; got -0\.5"),
    (gm.optimistic_gap_bound, (10, 0.5, math.nan, 0.1), {}, r"D_y must be a finite number >= 0; got nan"),
    (gm.shapley_error_bound, ([0, -1], 0.5, 1.0), {}, r"k must be >= 0; k\[1\] = -1\.0"),
    (gm.shapley_error_bound, (1, 0.5, [1.0, -2.0]), {}, r"initial_error must be finite and >= 0; initial_error\[1\] = -2\.0"),
    # rltheory.bounds.constrained
    (con.npg_pd_step_sizes, (0,), {"gamma": 0.5, "n_actions": 2}, r"T must be an integer >= 1; got 0"),
    (con.npg_pd_step_sizes, (10,), {"gamma": 0.5, "n_actions": 0}, r"n_actions must be an integer >= 1; got 0"),
    (con.npg_pd_step_sizes, (10,), {"gamma": 1.0, "n_actions": 2}, r"gamma must be a number in \[0, 1\); got 1\.0"),
    (con.npg_pd_bounds, ([1, 2],), _NPG_PD | {"cost_deviation": [0.5, -1.0]},
     r"cost_deviation must be finite and >= 0; cost_deviation\[1\] = -1\.0"),
    (con.npg_pd_bounds, ([1, 2],), _NPG_PD | {"cost_deviation": np.ones((2, 2))},
     r"cost_deviation must be a scalar or a vector .*got shape \(2, 2\)"),
    (con.npg_pd_bounds, ([1, 2],), _NPG_PD | {"cost_deviation": 1.0, "cost_span": math.inf},
     r"cost_span must be finite and >= 0; got inf"),
    (con.npg_pd_bounds, ([1, 2],), _NPG_PD | {"cost_deviation": 1.0, "n_actions": None},
     r"give kl0 or n_actions \(an integer >= 1\); got n_actions=None"),
    (con.npg_pd_bounds, ([1, 2],), _NPG_PD | {"cost_deviation": 1.0, "kl0": -1.0},
     r"kl0 must be a finite number >= 0; got -1\.0"),
    (con.fosp_schedule, (0,), {}, r"T must be an integer >= 1; got 0"),
    (con.fosp_rate, ([1, 0.5],), {}, r"T must be >= 1; T\[1\] = 0\.5"),
    (con.truncation_envelope, ([0, -1],), {"phi": 0.5}, r"kappa must be finite and >= 0; kappa\[1\] = -1\.0"),
    (con.truncation_envelope, ([0],), {"phi": 1.0}, r"phi must lie in \(0, 1\); got 1\.0"),
    # rltheory.bounds.td_q_learning
    (tq.td_fixed_point_bound, (0.1,), {"gamma": 0.5, "lam": 1.5}, r"lam must lie in \[0, 1\]; got 1\.5"),
    (tq.q_learning_bound, ([1],), _QL | {"delta": 1.0}, r"delta must lie in \(0, 1\); got 1\.0"),
    (tq.q_learning_bound, ([1],), _QL | {"delta": "x"}, r"delta must lie in \(0, 1\); got 'x'"),
    (tq.q_learning_bound, ([1],), _QL | {"horizon": 0}, r"horizon must be an integer >= 1; got 0"),
    (tq.q_learning_bound, ([1],), _QL | {"value_span": [1.0, -1.0]}, r"value_span must be finite and >= 0; value_span\[1\] = -1\.0"),
    (tq.q_learning_bound, ([1],), _QL | {"initial_error": math.nan}, r"initial_error must be finite and >= 0; got nan"),
    # problem constants of a bound: a NaN or a negative one gave a silent NaN or a negative bound
    (po.npg_bound, (10,), {"eta": 1.0, "gamma": 0.5, "kl0": math.nan}, r"kl0 must be a number >= 0 \(inf allowed\); got nan"),
    (po.npg_bound, (10,), {"eta": 1.0, "gamma": 0.5, "kl0": [0.1, -1.0]}, r"kl0 must be .*; kl0\[1\] = -1\.0"),
    (po.softmax_pg_bound, (1,), {"gamma": 0.5, "n_states": 2, "c": 0.5, "mismatch": -1.0, "inv_rho": 2.0},
     r"mismatch must be a number >= 0 \(inf allowed\); got -1\.0"),
    (po.softmax_pg_bound, (1,), {"gamma": 0.5, "n_states": 2, "c": 0.5, "mismatch": 1.0, "inv_rho": 0.5},
     r"inv_rho must be a number >= 1 \(inf allowed\); got 0\.5"),
    (po.softmax_pg_bound, (1,), {"gamma": 0.5, "n_states": 2, "c": 1.5, "mismatch": 1.0, "inv_rho": 2.0},
     r"c must be > 0 .* and <= 1 \(a probability\); got 1\.5"),
    (po.projected_pg_bound, (10,), {"gamma": 0.5, "n_states": 2, "n_actions": 2, "mismatch": math.nan},
     r"mismatch must be a number >= 0 \(inf allowed\); got nan"),
    (po.entropy_npg_bound, (1,), {"eta": 0.5, "tau": 1.0, "gamma": 0.5, "C1": -1.0}, r"C1 must be a number >= 0 \(inf allowed\); got -1\.0"),
    (po.entropy_pg_bound, (1,), {"gamma": 0.5, "tau": 1.0, "n_actions": 2, "c": 0.5, "mismatch": 0.0, "inv_mu": 2.0},
     r"mismatch must be a number > 0 \(inf allowed\); got 0\.0"),
    (po.entropy_pg_bound, (1,), {"gamma": 0.5, "tau": 1.0, "n_actions": 2, "c": 0.5, "mismatch": 1.0, "inv_mu": -2.0},
     r"inv_mu must be a number >= 1 \(inf allowed\); got -2\.0"),
    (po.pmd_sublinear_bound, (1,), {"eta": 1.0, "gamma": 0.5, "kl0": math.nan}, r"kl0 must be a number >= 0 \(inf allowed\); got nan"),
    (po.pmd_linear_bound, (1,), {"rate": 0.5, "eta0": 1.0, "gap0": -1.0, "kl0": 0.0}, r"gap0 must be a number >= 0 \(inf allowed\); got -1\.0"),
    (tq.td_fixed_point_bound, (math.nan,), {"gamma": 0.5}, r"projection_error must be finite and >= 0; got nan"),
    (tq.tvr_fixed_point_bound, ([0.5, -1.0],), {"gamma": 0.5}, r"projection_error must be finite and >= 0; projection_error\[1\] = -1\.0"),
    (off.hoeffding_radius, (10, -1.0, 0.1), {}, r"value_range must be finite and >= 0; value_range = -1\.0"),
    (off.hoeffding_radius, ([3, math.nan], 1.0, 0.1), {}, r"n must be a count >= 0; n\[1\] = nan"),
    (off.empirical_bernstein_radius, ([1, 5], [math.nan, math.nan], 1.0, 0.1), {},
     r"variance must be finite where n >= 2 \(n < 2 gets B\); variance\[1\] = nan"),
    (off.elliptical_bonus, (np.eye(2).reshape(1, 2, 2), -np.eye(2)[None], 1.0), {},
     r"Lambda\[0\] must be positive definite .*smallest eigenvalue of its symmetric part is -1"),
    (off.offline_game_gap_rate, (1.0, 1, (2, 0), 1, 100, 0.5), {}, r"actions\[1\] must be a positive integer; got 0"),
    (off.offline_game_gap_rate, (1.0, 1, (2, 2), 1, 100, 0.5), {"support": -1},
     r"support must be a positive integer .*; got -1"),
    (con.npg_pd_bounds, ([1, 2],), _NPG_PD | {"cost_deviation": [1.0, 2.0], "cost_span": [1.0, 1.0, 1.0]},
     r"cost_span must be a scalar or one entry per constraint \(2, as cost_deviation\); got shape \(3,\)"),
    (avg.rvi_asymptotic_rate, (np.array([[2.0]]), 1.0), {}, r"each P_pi\[s, :\] must sum to 1 .*sums to 2"),
    (avg.rvi_asymptotic_rate, (np.ones(3) / 3, 1.0), {}, r"P_pi must be a square \(S, S\) transition matrix"),
    (cov.relative_condition_number, (np.zeros((0, 0)), np.zeros((0, 0))), {}, r"at least one \(k, k\) matrix with k >= 1"),
]


@pytest.mark.parametrize("fn, args, kwargs, message", CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_bad_argument_is_named(fn, args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fn(*args, **kwargs)


def test_numpy_scalars_are_accepted_like_python_numbers():
    # step sizes and ranges often arrive as numpy scalars or 0-d arrays from a computation
    for eta in (0.25, np.float32(0.25), np.float64(0.25), np.array(0.25)):
        assert float(gm.optimistic_gap_bound(10, 0.5, 0.5, eta)) == pytest.approx(0.4)
    assert con.npg_pd_step_sizes(np.int64(100), gamma=np.float32(0.5), n_actions=np.int32(1)) == (1.0, 0.1)
