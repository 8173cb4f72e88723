"""Provable iterative and sample-based algorithms; each returns a result with a Trace.

Modules: policy_gradient, critics, q_learning, actor_critic, constrained,
average_reward, offline, multiagent. Public names are re-exported here.
"""

from ._policy_opt import PolicyOptimizationResult, project_simplex
from .offline import (
    OfflineResult,
    certainty_equivalence,
    conservative_evaluation,
    cql,
    lcb_vi,
    pevi,
)
from .policy_gradient import (
    entropy_npg_step,
    entropy_regularized_npg,
    natural_policy_gradient,
    npg_step,
    projected_gradient_step,
    projected_policy_gradient,
    softmax_gradient,
    softmax_policy,
    softmax_policy_gradient,
)
from .policy_mirror_descent import (
    geometric_step_sizes,
    mdpo_step,
    pmd_euclidean_step,
    pmd_kl_step,
    policy_mirror_descent,
)
from .soft import (
    SoftSolution,
    policy_entropy,
    regularized_values,
    soft_bellman_operator,
    soft_value_iteration,
)

__all__: list[str] = [
    # offline RL (issue 8)
    "OfflineResult",
    "certainty_equivalence",
    "conservative_evaluation",
    "cql",
    "lcb_vi",
    "pevi",
    # policy optimisation (issue 6)
    "PolicyOptimizationResult",
    "SoftSolution",
    "entropy_npg_step",
    "entropy_regularized_npg",
    "geometric_step_sizes",
    "mdpo_step",
    "natural_policy_gradient",
    "npg_step",
    "pmd_euclidean_step",
    "pmd_kl_step",
    "policy_entropy",
    "policy_mirror_descent",
    "project_simplex",
    "projected_gradient_step",
    "projected_policy_gradient",
    "regularized_values",
    "soft_bellman_operator",
    "soft_value_iteration",
    "softmax_gradient",
    "softmax_policy",
    "softmax_policy_gradient",
]
