r"""Host-side building blocks shared by the occupancy-measure linear programs.

The occupancy polytope of a finite MDP is ``{d ≥ 0 : M d = c}`` with, for every state ``s'``,

* discounted (normalised ``d``): ``Σ_a d(s', a) − γ Σ_{s,a} P(s'|s, a) d(s, a) = (1 − γ) μ(s')``;
* average reward (stationary frequencies): the same with ``γ = 1`` and right-hand side 0,
  plus ``Σ_{s,a} d(s, a) = 1``

(Puterman 1994, §6.9 and §8.8). :func:`flow_matrix` is ``M`` without the normalisation
row; :func:`occupancy_constraints` returns ``(M, c)`` for a model. Used by the MDP and
average-reward LPs, the CMDP LP and the general-utility convex programs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_distribution
from ..backend import require_host, to_numpy
from .model import FiniteMDP


def flow_matrix(P: np.ndarray, gamma: float) -> np.ndarray:
    """``E − γ Pᵀ`` of shape ``[S, S·A]`` for one instance ``P[S, A, S]``; ``E[s, (s, a)] = 1``."""
    S, A = P.shape[0], P.shape[1]
    E = np.kron(np.eye(S), np.ones((1, A)))
    return E - gamma * P.reshape(S * A, S).T


def occupancy_constraints(
    mdp: FiniteMDP, what: str, *, normalised: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Equality constraints ``(M, c)`` of the occupancy polytope of an unbatched ``mdp`` (host only).

    Discounted: ``c = (1 − γ) μ`` for the normalised occupancy (sums to 1), or ``c = μ`` with
    ``normalised=False`` (the unnormalised ``Σ_t γ^t Pr(s_t, a_t)``, sums to ``1/(1 − γ)``,
    the CMDP convention). ``what`` names the caller in the host-only error.

    The constraints are those of the row-normalised model ``P/σ`` (``σ`` the stored rows' sums),
    in float64 whatever the model's dtype: the model every certificate is about. Built from a
    float32 ``P`` in its own dtype, ``γP`` was rounded to float32 (the polytope of
    ``γ = float32(0.999) = 0.99900001``): :func:`rltheory.algorithms.constrained.slater_slack`
    gave ``ξ = 49.995`` for an exact 50 (:func:`rltheory.mdp.solve_cmdp` had the same flaw).
    """
    P = np.asarray(require_host(mdp.P, what), dtype=np.float64)
    P = P / P.sum(-1, keepdims=True)
    S, A = mdp.S, mdp.A
    if mdp.gamma is None:
        M = np.vstack([flow_matrix(P, 1.0), np.ones((1, S * A))])
        return M, np.concatenate([np.zeros(S), [1.0]])
    g = float(mdp.gamma)
    mu = np.asarray(to_numpy(mdp.initial_distribution()), dtype=np.float64)
    return flow_matrix(P, g), (1.0 - g) * mu if normalised else mu


def state_weights(mdp: FiniteMDP, weights: Any) -> np.ndarray:
    """LP state weights, shape ``[n_instances, S]``.

    ``weights=None``: the model's ``μ`` where it is strictly positive, else uniform (positive
    weights make the primal LP solution equal the optimal values in every state). Given
    weights must be a strictly positive distribution (``ValueError`` otherwise).
    """
    S = mdp.S
    if weights is None:
        W = to_numpy(mdp.initial_distribution()).reshape((-1, S))
        return np.where(np.any(W <= 0, axis=-1, keepdims=True), 1.0 / S, W)
    try:
        W = as_distribution(weights if isinstance(weights, (list, tuple)) else to_numpy(weights), "weights", S, np)
    except ValueError as e:
        raise type(e)(f"weights must be a strictly positive distribution over states; {e}") from None
    if np.any(W <= 0):
        idx = tuple(int(i) for i in np.argwhere(W <= 0)[0])
        raise ValueError(f"weights must be a strictly positive distribution over states; weights{idx} = {W[idx]}")
    try:
        W = np.broadcast_to(W, mdp.batch_shape + (S,))
    except ValueError:
        raise ValueError(
            f"weights must have shape (S,) or batch + (S,) = {mdp.batch_shape + (S,)}; got {W.shape}"
        ) from None
    return W.reshape((-1, S))
