"""Theory as code: rate fits, bound checks and the bound functions of rltheory's theorems.

:mod:`rltheory.bounds.rates` fits empirical rates (:func:`fit_rate`,
:func:`fit_linear_rate`) with bootstrap intervals and checks bounds
(:func:`check_bound`); each theorem-specific module (``mdp``, ...) holds the
theorem's bound as a function with its citation.
"""

from .average import (  # average reward: vanishing discount, RVI, mixing
    laurent_first_order,
    mixing_time_eps_bound,
    mixing_time_spectral_bounds,
    rvi_asymptotic_rate,
    span_contraction_coefficient,
    vanishing_discount_bound,
)
from .average_reward import (  # average-reward actor-critic: MLMC, Markovian averages, MAC
    MAC_EXPONENT,
    mac_rate,
    markov_average_bias,
    mlmc_expected_samples,
)
from .constrained import (  # NPG primal-dual, general-utility FOSP, κ-hop truncation
    FOSP_EXPONENT,
    NPGPDBounds,
    fosp_rate,
    fosp_schedule,
    npg_pd_bounds,
    npg_pd_step_sizes,
    slater_dual_radius,
    truncation_envelope,
)
from .games import (  # zero-sum games and learning dynamics
    hedge_gap_bound,
    hedge_regret_bound,
    hedge_tuned_regret,
    optimistic_gap_bound,
    optimistic_max_step,
    regret_matching_gap_bound,
    shapley_error_bound,
)
from .mdp import (
    pi_iteration_bound,
    span_stopping_iterations,
    vi_certificate,
    vi_error_bound,
    vi_iterations_to_threshold,
    vi_stopping_threshold,
)
from .policy_optimization import (  # policy optimisation, linear critics, Q-learning
    entropy_npg_bound,
    entropy_npg_constant,
    kl_to_policy,
    mismatch_coefficient,
    npg_bound,
    pmd_linear_bound,
    pmd_sublinear_bound,
    projected_pg_bound,
    q_learning_bound,
    regularization_bias_bound,
    softmax_pg_bound,
    td_fixed_point_bound,
    tvr_fixed_point_bound,
)
from .rates import BoundCheck, Claim, ClaimCheck, RateFit, check_bound, fit_linear_rate, fit_rate

__all__ = [
    "laurent_first_order",
    "mixing_time_eps_bound",
    "mixing_time_spectral_bounds",
    "rvi_asymptotic_rate",
    "span_contraction_coefficient",
    "vanishing_discount_bound",
    "hedge_gap_bound",
    "hedge_regret_bound",
    "hedge_tuned_regret",
    "optimistic_gap_bound",
    "optimistic_max_step",
    "regret_matching_gap_bound",
    "shapley_error_bound",
    "BoundCheck",
    "Claim",
    "ClaimCheck",
    "RateFit",
    "check_bound",
    "fit_linear_rate",
    "fit_rate",
    "pi_iteration_bound",
    "span_stopping_iterations",
    "vi_certificate",
    "vi_error_bound",
    "vi_iterations_to_threshold",
    "vi_stopping_threshold",
    "entropy_npg_bound",
    "entropy_npg_constant",
    "kl_to_policy",
    "mismatch_coefficient",
    "npg_bound",
    "pmd_linear_bound",
    "pmd_sublinear_bound",
    "projected_pg_bound",
    "q_learning_bound",
    "regularization_bias_bound",
    "softmax_pg_bound",
    "td_fixed_point_bound",
    "tvr_fixed_point_bound",
    "MAC_EXPONENT",
    "mac_rate",
    "markov_average_bias",
    "mlmc_expected_samples",
    "FOSP_EXPONENT",
    "NPGPDBounds",
    "fosp_rate",
    "fosp_schedule",
    "npg_pd_bounds",
    "npg_pd_step_sizes",
    "slater_dual_radius",
    "truncation_envelope",
]
