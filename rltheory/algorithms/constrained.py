r"""Primal-dual policy optimisation for constrained MDPs and general utilities; two-stage constrained AC.

Problem (:class:`rltheory.mdp.constrained.ConstrainedMDP`): maximise ``V_r^π(μ)``
subject to ``V_{c_i}^π(μ) ≤ b_i`` (unnormalised discounted values), with
Lagrangian ``L(π, λ) = V_r^π(μ) − Σ_i λ_i (V_{c_i}^π(μ) − b_i)``.

* :func:`npg_primal_dual` — NPG-PD (Ding et al. 2020, Algorithm 1): natural
  policy gradient ascent on the Lagrangian reward ``r − λ_t·c`` (one
  :func:`~rltheory.algorithms.policy_gradient.npg_step`) and projected dual descent
  ``λ_{t+1} = Π_{[0,Λ]^m}(λ_t + η_2 (V_c^{π_t}(μ) − b))``, ``Λ`` from Slater's
  condition (:func:`slater_slack`, :func:`rltheory.bounds.constrained.slater_dual_radius`).
  The averaged optimality gap and constraint violation are ``O(1/√T)``
  (:func:`rltheory.bounds.constrained.npg_pd_bounds`), traced against the exact
  CMDP optimum of :func:`rltheory.mdp.solve_cmdp`. :func:`sample_npg_primal_dual`
  replaces ``A_L`` and ``V_c`` by unbiased Monte Carlo estimates (Ding et al. 2020, §5).
* :func:`lagrangian_policy_gradient` — the same with a softmax policy-gradient
  primal step (the "standard CMDP case" of the general-utility method).
* :func:`general_utility_primal_dual` — maximise a concave ``F(d^π)`` subject to
  convex ``G_i(d^π) ≤ b_i`` of the normalised occupancy ``d^π``: the primal step
  follows ``∇_θ[F − μ·G](d^{π_θ}) = (1−γ) ∇_θ V^{π_θ}_{r̃}`` with the shadow reward
  ``r̃ = ∇F(d) − Σ_i μ_i ∇G_i(d)`` (:func:`rltheory.mdp.utility.shadow_reward`), the dual a
  regularised projected step ``μ ← Π_{[0,Λ]}(μ + η_μ (G(d) − b − δμ))`` (Ying et al. 2023).
  Sample-based: ``d`` and ``Q_{r̃}`` estimated from roll-outs.
* :func:`two_stage_constrained_ac` — the two-stage constrained actor-critic
  (Cai et al. 2023) in tabular form: stage 1 learns a soft-optimal policy
  ``π_i`` for each cost, stage 2 maximises ``V_r`` minus KL-proximity to them.

Every routine here runs on the host (HiGHS LPs, numpy loops): a model from another host
namespace (``array_api_strict``) is copied to numpy once; device arrays raise ``TypeError``.

Modules: :mod:`~rltheory.algorithms.constrained_base` (:class:`PrimalDualResult`, Slater's
condition), :mod:`~rltheory.algorithms.constrained_npg` (NPG-PD),
:mod:`~rltheory.algorithms.constrained_gu` (general utilities, Lagrangian policy gradient),
:mod:`~rltheory.algorithms.two_stage` (two-stage AC); every public name is importable from here.

References
----------
Ding, D., Zhang, K., Başar, T., Jovanović, M. R. (2020). Natural policy gradient primal-dual
method for constrained Markov decision processes. NeurIPS. Algorithm 1, Theorem 1, §5.
Ying, D., Zhang, Y., Ding, Y., Koppel, A., Lavaei, J. (2023). Scalable primal-dual
actor-critic method for safe multi-agent RL with general utilities. NeurIPS.
Zhang, J., Koppel, A., Bedi, A. S., Szepesvári, C., Wang, M. (2020). Variational policy
gradient method for RL with general utilities. NeurIPS. (Shadow reward / chain rule.)
Cai, Q., Xue, Z., Zhang, C., et al. (2023). Two-stage constrained actor-critic for short
video recommendation. WWW. §3 (stage 1: auxiliary policies; stage 2: KL-regularised main policy).
"""

from __future__ import annotations

from .constrained_base import PrimalDualResult, slater_slack
from .constrained_gu import (
    _pd_settings,  # noqa: F401  (imported from here by rltheory.algorithms.networked_pd)
    fosp_residual,
    general_utility_primal_dual,
    lagrangian_policy_gradient,
)
from .constrained_npg import npg_pd_step, npg_primal_dual, sample_npg_primal_dual
from .two_stage import TwoStageResult, two_stage_calibrated, two_stage_constrained_ac

__all__ = [
    "PrimalDualResult",
    "slater_slack",
    "npg_pd_step",
    "npg_primal_dual",
    "sample_npg_primal_dual",
    "lagrangian_policy_gradient",
    "general_utility_primal_dual",
    "fosp_residual",
    "TwoStageResult",
    "two_stage_constrained_ac",
    "two_stage_calibrated",
]
