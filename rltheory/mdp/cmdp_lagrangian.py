r"""Exact evaluation, Lagrangian and dual function of a constrained MDP.

:func:`evaluate_cmdp` gives ``(V_R^π(μ), [V_{C_i}^π(μ)]_i)`` by policy evaluation (independent of
the LP, so it checks :func:`rltheory.mdp.solve_cmdp`); :func:`lagrangian` is
``L(π, λ) = V_R^π(μ) + Σ_i λ_i (b_i − V_{C_i}^π(μ))`` and :func:`dual_function`
``D(λ) = max_π L(π, λ) = V*_{R − λᵀC}(μ) + λᵀb``, by exact policy iteration on the Lagrangian reward.
``D`` is convex and piecewise linear, ``D(λ) ≥ V*`` (weak duality) and ``min_{λ≥0} D = V*`` when the
CMDP is feasible (Altman 1999, Thm 3.6; Paternain et al. 2019).

References
----------
Altman, E. (1999). *Constrained Markov Decision Processes*. Chapman & Hall/CRC. Thm 3.6, ch. 9.
Paternain, S., Chamon, L., Calvo-Fullana, M. & Ribeiro, A. (2019). Constrained
reinforcement learning has zero duality gap. NeurIPS.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import as_float, from_host, to_numpy
from .average import average_policy_iteration, gain_bias
from .bellman import as_stochastic_policy, evaluate_policy
from .cmdp_model import ConstrainedMDP, _check_cmdp
from .discounted import policy_iteration

__all__ = ["evaluate_cmdp", "lagrangian", "dual_function"]


def _value_of(cmdp: ConstrainedMDP, pi: Any, f: Any) -> float:
    """``V_f^π(μ)`` for a reward/cost ``f[S, A]`` (unnormalised discounted, or μᵀ gain)."""
    xp = cmdp.mdp.xp
    mdp = cmdp.mdp.replace(R=f)
    mu = mdp.initial_distribution()
    if cmdp.gamma is None:
        g, _ = gain_bias(mdp, pi, per_state=True)
        return float(xp.sum(mu * g))
    return float(xp.sum(mu * evaluate_policy(mdp, pi)))


def evaluate_cmdp(cmdp: ConstrainedMDP, pi: Any) -> tuple[float, Any]:
    r"""Exact ``(V_R^π(μ), [V_{C_i}^π(μ)]_i)`` by policy evaluation.

    Discounted: ``V_f^π(μ) = μᵀ(I − γP_π)^{-1} f_π``; average reward:
    ``V_f^π(μ) = μᵀ P_π* f_π`` (per-state gains, so multichain policies are valued
    correctly). Independent of the LP, so it checks :func:`solve_cmdp`.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> cmdp = ConstrainedMDP(mdp, C=np.array([[[0.0, 1.0]]]), b=np.array([1.0]))
    >>> evaluate_cmdp(cmdp, np.array([[0.5, 0.5]]))
    (1.0, array([1.]))
    """
    _check_cmdp(cmdp, "evaluate_cmdp")
    as_stochastic_policy(cmdp.mdp, pi)
    value = _value_of(cmdp, pi, cmdp.mdp.R)
    costs = [_value_of(cmdp, pi, cmdp.C[i, ...]) for i in range(cmdp.m)]
    return value, from_host(np.asarray(costs, dtype=float), cmdp.mdp.P, cmdp.mdp.dtype)


def _check_lambda(cmdp: ConstrainedMDP, lam: Any) -> np.ndarray:
    # as_float refuses complex and text (a float cast dropped λ's imaginary part with only a warning)
    lam = np.asarray(as_float(to_numpy(lam), np, np.float64, field="lam"), dtype=float)
    if lam.shape != (cmdp.m,):
        raise ValueError(f"lam must have shape (m,) = ({cmdp.m},); got {lam.shape}")
    if not np.all(np.isfinite(lam)) or np.any(lam < 0):
        i = int(np.flatnonzero(~np.isfinite(lam) | (lam < 0))[0])
        raise ValueError(f"lam must be finite and non-negative; lam[{i}] = {lam[i]}")
    return lam


def lagrangian(cmdp: ConstrainedMDP, pi: Any, lam: Any) -> float:
    r"""``L(π, λ) = V_R^π(μ) + Σ_i λ_i (b_i − V_{C_i}^π(μ))`` (maximised over π, minimised over λ ≥ 0).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> cmdp = ConstrainedMDP(mdp, C=np.array([[[0.0, 1.0]]]), b=np.array([1.0]))
    >>> lagrangian(cmdp, np.array([1]), np.array([0.5]))  # V_R = V_C = 2: 2 + 0.5 (1 - 2)
    1.5
    """
    _check_cmdp(cmdp, "lagrangian")
    lam = _check_lambda(cmdp, lam)
    value, costs = evaluate_cmdp(cmdp, pi)
    return float(value + lam @ (to_numpy(cmdp.b) - to_numpy(costs)))


def _optimal_value(cmdp: ConstrainedMDP, reward: Any) -> float:
    """``max_π V_reward^π(μ)`` and nothing else (exact PI)."""
    return _optimal(cmdp, reward)[0]


def _optimal(cmdp: ConstrainedMDP, reward: Any) -> tuple[float, Any]:
    mdp = cmdp.mdp.replace(R=reward)
    xp = mdp.xp
    mu = mdp.initial_distribution()
    if cmdp.gamma is None:
        sol = average_policy_iteration(mdp, multichain=True)
        return float(xp.sum(mu * sol.gain)), sol.policy
    sol = policy_iteration(mdp)
    return float(xp.sum(mu * sol.V)), sol.policy


def dual_function(cmdp: ConstrainedMDP, lam: Any) -> tuple[float, Any]:
    r"""``D(λ) = max_π L(π, λ) = max_π V_{R − λᵀC}^π(μ) + λᵀb`` and a maximising deterministic policy.

    Computed exactly by policy iteration on the Lagrangian reward ``R − Σ_i λ_i C_i``
    (multichain average-reward PI when ``gamma is None``). ``D`` is convex and
    piecewise linear in ``λ``, ``D(λ) ≥ V*`` for every ``λ ≥ 0`` (weak duality) and
    ``D(λ*) = V*`` at the LP multipliers (strong duality; Altman 1999, Thm 3.6).

    Returns
    -------
    (float, int array (S,))

    Raises
    ------
    ValueError
        ``lam`` not of shape ``(m,)``, or with a negative or non-finite entry (index named); a
        Lagrangian reward ``R − λᵀC`` beyond the float range (the pair named).
    TypeError
        Complex or string ``lam``.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> cmdp = ConstrainedMDP(mdp, C=np.array([[[0.0, 1.0]]]), b=np.array([1.0]))
    >>> [round(dual_function(cmdp, np.array([lam]))[0], 12) for lam in (0.0, 1.0, 2.0)]
    [2.0, 1.0, 2.0]
    """
    _check_cmdp(cmdp, "dual_function")
    lam = _check_lambda(cmdp, lam)
    xp = cmdp.mdp.xp
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        shaped = cmdp.mdp.R - xp.sum(
            from_host(lam, cmdp.mdp.P, cmdp.mdp.dtype)[:, None, None] * cmdp.C, axis=0
        )
    if not bool(xp.all(xp.isfinite(shaped))):
        # (the model check of the Lagrangian MDP said "R must be finite; R(s=0, a=2) = -inf", naming a
        # field the caller did not pass)
        h = to_numpy(shaped)
        s, a = (int(i) for i in np.argwhere(~np.isfinite(h))[0])
        raise ValueError(
            f"dual_function: the Lagrangian reward R - lamᵀC leaves the {cmdp.mdp.dtype} range at (s={s}, a={a}) "
            f"(R = {float(to_numpy(cmdp.mdp.R)[s, a]):.4g}, C[:, {s}, {a}] = {to_numpy(cmdp.C)[:, s, a].tolist()}, "
            f"lam = {lam.tolist()}); rewards, costs and multipliers scale together: divide R and lam by a power of 2"
        )
    val, pi = _optimal(cmdp, shaped)
    return float(val + lam @ to_numpy(cmdp.b)), pi
