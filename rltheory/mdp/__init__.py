"""Exact single-agent models and solvers: finite MDPs (discounted, finite-horizon,
average-reward), constrained MDPs, Bellman operators and occupancy measures."""

from .bellman import (
    advantage,
    as_stochastic_policy,
    bellman_operator,
    bellman_optimality_operator,
    evaluate_policy,
    expected_value,
    greedy,
    occupancy_measure,
    performance_difference,
    policy_reward,
    policy_transition_matrix,
    q_function,
    q_values,
    state_occupancy,
)
from .discounted import (
    MDPSolution,
    bellman_certificate,
    linear_program,
    modified_policy_iteration,
    policy_iteration,
    value_iteration,
)
from .horizon import FiniteHorizonSolution, backward_induction, evaluate_finite_horizon
from .model import FiniteHorizonMDP, FiniteMDP

__all__ = [
    "FiniteMDP",
    "FiniteHorizonMDP",
    "MDPSolution",
    "FiniteHorizonSolution",
    "value_iteration",
    "policy_iteration",
    "modified_policy_iteration",
    "linear_program",
    "bellman_certificate",
    "backward_induction",
    "evaluate_finite_horizon",
    "advantage",
    "as_stochastic_policy",
    "bellman_operator",
    "bellman_optimality_operator",
    "evaluate_policy",
    "expected_value",
    "greedy",
    "occupancy_measure",
    "performance_difference",
    "policy_reward",
    "policy_transition_matrix",
    "q_function",
    "q_values",
    "state_occupancy",
]
