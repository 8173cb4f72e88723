r"""Two-stage constrained actor-critic (Cai et al. 2023) in tabular form.

Stage 1 learns, for each cost ``c_i``, the soft-optimal policy ``π_i`` of ``−c_i``; stage 2
maximises ``V_r`` minus the KL-proximity ``Σ_i w_i KL(π ‖ π_i)`` to them, solved exactly as a
soft MDP (:func:`rltheory.algorithms.soft.soft_value_iteration`). A heuristic: the weights, not
the thresholds, set the trade-off; :func:`two_stage_calibrated` bisects a common weight until
every constraint holds. The ``two-stage-vs-pd`` experiment compares it with the LP optimum.

Host only; device arrays raise ``TypeError``.

References
----------
Cai, Q., Xue, Z., Zhang, C., et al. (2023). Two-stage constrained actor-critic for short
video recommendation. WWW. §3 (stage 1: auxiliary policies; stage 2: KL-regularised main policy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_real
from ..backend import as_float, to_numpy
from ..mdp.bellman import _check_in_range
from ..mdp.constrained import ConstrainedMDP, evaluate_cmdp
from ..mdp.sample import _count
from .constrained_base import _cmdp, _host_cmdp, _positive
from .soft import _reachable_tol, soft_value_iteration

__all__ = ["TwoStageResult", "two_stage_constrained_ac", "two_stage_calibrated"]


# ------------------------------------------------------------------- two-stage AC
@dataclass(frozen=True, eq=False)
class TwoStageResult:
    """Result of :func:`two_stage_constrained_ac`.

    Attributes
    ----------
    policy : ndarray (S, A)
        Stage-2 policy.
    auxiliary : ndarray (m, S, A)
        Stage-1 policies ``π_i``.
    value : float
        ``V_r^π(μ)``.
    costs : ndarray (m,)
        ``V_{c_i}^π(μ)``.
    weights : ndarray (m,)
        KL weights used.
    converged : bool
        Whether every soft value iteration (the ``m`` stage-1 solves and stage 2) met its certified
        ``tol``; one that stopped at its cap also warned (``ConvergenceWarning``).
    """

    policy: np.ndarray
    auxiliary: np.ndarray
    value: float
    costs: np.ndarray
    weights: np.ndarray
    converged: bool = True


def two_stage_constrained_ac(
    cmdp: ConstrainedMDP, *, weights: Any, tau: float = 0.1, tol: float | None = None
) -> TwoStageResult:
    r"""Two-stage constrained actor-critic (Cai et al. 2023) in tabular form.

    Stage 1: for each cost ``c_i``, the soft-optimal policy ``π_i`` of the reward
    ``−c_i`` at temperature ``τ`` (:func:`rltheory.algorithms.soft.soft_value_iteration`)
    — the auxiliary policy that keeps that cost low. Stage 2: maximise

    ``E[Σ_t γ^t (r(s_t, a_t) − Σ_i w_i KL(π(·|s_t) ‖ π_i(·|s_t)))]``,

    i.e. the soft MDP with reward ``r + Σ_i w_i log π_i`` and temperature
    ``W = Σ_i w_i``, solved exactly by soft value iteration; its optimum is
    ``π(a|s) ∝ Π_i π_i(a|s)^{w_i/W} exp(Q(s,a)/W)``, the closed form of the
    paper's stage-2 actor with its critic at the fixed point.

    Notes
    -----
    A heuristic: the weights trade the main return against proximity to the
    auxiliary policies, never against the thresholds ``b`` themselves, so the
    result is feasible only for large enough weights and is in general dominated
    by the LP optimum at the same cost (checked by the ``two-stage-vs-pd`` experiment).

    ``tol`` is the certified accuracy of each soft value iteration; by default ``1e-10``, or the
    smallest target above soft VI's round-off floor where that is larger (large weights make the
    stage-2 reward large).
    """
    cmdp = _host_cmdp(cmdp, "two_stage_constrained_ac")
    P, R, C, b, mu, g = _cmdp(cmdp, "two_stage_constrained_ac")
    # as_float refuses complex and text by name (numpy's unlocated "float() argument must be ... not
    # 'complex'"); the shape is (m,) exactly (a reshape accepted [[1.0]] for m = 1)
    rule = f"weights must be {cmdp.m} finite non-negative numbers with a positive sum (shape ({cmdp.m},))"
    if np.asarray(weights).dtype == bool:
        raise ValueError(f"{rule}; got booleans {weights!r}")
    w = np.asarray(as_float(weights, np, np.float64, field="weights"), dtype=float)
    if w.shape != (cmdp.m,):
        raise ValueError(f"{rule}; got shape {w.shape}")
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        raise ValueError(f"{rule}; weights[{bad[0]}] = {w[bad[0]]}")
    if not w.sum() > 0:
        raise ValueError(f"{rule}; got {weights!r}")
    t = _positive(tau, "tau")
    tol = check_real(tol, "tol", low=0.0, low_open=True, allow_none=True)

    def solve(mdp: Any, temp: float, stage: str) -> Any:
        # soft values satisfy |Q| <= (max|r| + τ log A)/(1 − γ); beyond the float range soft VI can certify
        # nothing (its round-off floor is inf), and the default tol was refused as "tol must be a positive
        # finite number; got inf", naming an argument the caller did not pass
        with np.errstate(over="ignore"):
            bound = (float(np.max(np.abs(np.asarray(mdp.R)))) + temp * math.log(cmdp.A)) / (1.0 - g)
        _check_in_range(
            mdp,
            np.asarray(bound),
            "two_stage_constrained_ac",
            f"the soft-value bound of {stage}",
            (),
            lambda M: (
                f"at gamma = {g!r}, temperature {temp:g} (|Q| <= (max|R| + tau log A)/(1-gamma));"
                " soft values scale with R, tau and the weights together"
            ),
        )
        # default: 1e-10, or the smallest target above soft VI's round-off floor where that is larger
        # (stage 2's reward r + Σ w_i log π_i reaches |log π_i| ~ 1e2 and more: a fixed 1e-10 sat
        # below the floor at γ ≥ 0.99 and every solve ended with a ConvergenceWarning)
        return soft_value_iteration(
            mdp, tau=temp, tol=_reachable_tol(mdp, temp, 1e-10) if tol is None else tol
        )

    stage1 = [
        solve(cmdp.mdp.replace(R=-C[i]), t, f"stage 1 (reward -c_{i})") for i in range(cmdp.m)
    ]
    aux = np.stack([np.asarray(s1.policy) for s1 in stage1])
    W = float(w.sum())
    # log π_i = (Q_i − V_i)/τ exactly: np.log(π_i) was −inf where π_i underflowed (costs of span
    # ~1e3 at τ = 0.1), and stage 2 failed with "R must be finite; R(s=0, a=1) = -inf"
    logp = np.tensordot(w, np.stack([np.asarray(s1.log_policy) for s1 in stage1]), axes=(0, 0))
    sol = solve(cmdp.mdp.replace(R=R + logp), W, "stage 2 (reward r + Σ_i w_i log π_i)")
    pi = np.asarray(sol.policy)
    value, costs = evaluate_cmdp(cmdp, pi)
    # (a solve that stopped at its cap was used as if certified: no flag said so)
    converged = all(bool(s.converged) for s in [*stage1, sol])
    return TwoStageResult(
        pi, aux, float(value), np.asarray(to_numpy(costs), dtype=float), w, converged
    )


def two_stage_calibrated(
    cmdp: ConstrainedMDP, *, tau: float = 0.1, w_max: float = 1e3, bisections: int = 40
) -> TwoStageResult:
    r"""Two-stage AC with the smallest common weight ``w·1`` that makes every constraint hold (bisection).

    Raises
    ------
    ValueError
        ``tau`` or ``w_max`` not a finite number ``> 0``, ``bisections`` not an integer
        ``≥ 1`` (all checked before the first solve); a CMDP without constraints (``m = 0``);
        even ``w_max`` leaves a constraint violated.
    """
    cmdp = _host_cmdp(cmdp, "two_stage_calibrated")
    _cmdp(cmdp, "two_stage_calibrated")
    tau = _positive(tau, "tau")
    w_max = _positive(w_max, "w_max")
    bisections = _count(bisections, "bisections")
    if cmdp.m == 0:
        # (the first solve refused weights the caller never passed: "weights must be 0 finite
        # non-negative numbers with a positive sum (shape (0,)); got array([], dtype=float64)")
        raise ValueError(
            "two_stage_calibrated needs at least one constraint (the CMDP has m = 0): the stage-2 "
            "temperature is the sum of the KL weights, and there is no weight to calibrate"
        )
    b = np.asarray(to_numpy(cmdp.b), dtype=float)
    hi = two_stage_constrained_ac(cmdp, weights=np.full(cmdp.m, w_max), tau=tau)
    if np.any(hi.costs > b):
        raise ValueError(
            f"two-stage AC with weight {w_max} still violates the constraints (costs {hi.costs}, b {b})"
        )
    lo_w, hi_w = 0.0, w_max
    best = hi
    for _ in range(bisections):
        mid = 0.5 * (lo_w + hi_w)
        res = two_stage_constrained_ac(cmdp, weights=np.full(cmdp.m, mid), tau=tau)
        if np.all(res.costs <= b):
            hi_w, best = mid, res
        else:
            lo_w = mid
    return best
