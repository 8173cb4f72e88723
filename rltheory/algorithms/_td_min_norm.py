r"""The minimum-norm projected Bellman fixed point for features with dependent columns.

With columns of ``Φ`` linearly dependent on the support of ``d``, the projected Bellman equation
``Φθ = Π_D T^{(λ)} Φθ`` still has exactly one solution ``V_θ = Φθ`` in ``span Φ`` (on the support
of ``d``): the fixed point of any basis of the span, since ``Π_D`` and ``T^{(λ)}`` depend on
``Φ`` only through its span (Tsitsiklis & Van Roy 1997, Lemma 6 and Theorem 1, applied to that
basis). Only the coefficients ``θ`` are not unique: any two differ by a vector of the null space
``N`` of ``√DΦ``. :func:`_min_norm_fixed_point` returns that fixed point with ``θ*`` the
minimum-Euclidean-norm coefficient vector (the one orthogonal to ``N``), for
:func:`rltheory.algorithms.least_squares_td.lstd` with ``ridge > 0``, whose Tikhonov estimate
is well defined for any features.

References
----------
Tsitsiklis, J. N., Van Roy, B. (1997). An analysis of temporal-difference learning with function
approximation. IEEE TAC 42(5). Lemma 6, Theorem 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import require_host
from ..mdp.bellman import policy_reward, policy_transition_matrix
from ..mdp.model import FiniteMDP
from ._td_features import _features
from ._td_refine import _bellman_difference
from .td_fixed_point import TDFixedPoint, projected_fixed_point

__all__: list[str] = []

_RANK = "full column rank"  # the wording of projected_fixed_point's rank refusals


def _min_norm_fixed_point(
    mdp: FiniteMDP, pi: Any, Phi: Any, *, lam: float, d: Any, who: str = "lstd"
) -> TDFixedPoint:
    r""":func:`projected_fixed_point`, and for ``Φ`` rank deficient on the support of ``d`` its
    minimum-norm version (host only).

    The columns are taken in order, each kept where it raises the rank by
    :func:`projected_fixed_point`'s own test (the SVD of the column-equilibrated ``√DΦ``); the
    kept columns ``Φ_K`` are a basis of ``span Φ`` and their fixed point gives ``values``, ``V``,
    ``error``, ``projection_error`` and ``d``, which are those of ``Φ`` itself (unique).
    ``theta`` is the minimum-norm ``θ`` with ``√DΦθ = √D·values``: the kept columns' ``θ_K``
    padded with zeros, minus its orthogonal projection on ``N``, spanned by
    ``e_j − Σ_i c_{ji} e_{K_i}`` for each dropped column ``j`` with ``√Dφ_j = √DΦ_K c_j`` (least
    squares). Where the support of ``d`` is
    closed under ``P_π`` (the stationary default) this is also the minimum-norm solution of
    ``Aθ = b``. ``A = ΦᵀD M^{-1}(I − γP_π)Φ`` (``M = I − γλP_π``; ``ΦᵀDΦ`` for ``λ = 1``) and
    ``b = ΦᵀD M^{-1}r_π`` (``ΦᵀD V^π``) are formed for the full ``Φ``: singular, with
    ``Aθ* = b``. Every other refusal of :func:`projected_fixed_point` (and a ``Φ`` that vanishes on
    the support of ``d``, which has no basis) is raised as it was.
    """
    try:
        return projected_fixed_point(mdp, pi, Phi, lam=lam, d=d)
    except np.linalg.LinAlgError as err:
        if _RANK not in str(err):
            raise
        first = err
    F = np.asarray(require_host(_features(mdp, Phi), who))
    k = F.shape[1]
    kept: list[int] = []
    fp: TDFixedPoint | None = None
    for j in range(k):
        try:
            fp = projected_fixed_point(mdp, pi, F[:, kept + [j]], lam=lam, d=d)
        except np.linalg.LinAlgError as err:
            if _RANK not in str(err):
                raise
            continue
        kept.append(j)
    if fp is None:
        raise first
    dd = np.asarray(require_host(fp.d, who))
    sd = np.sqrt(dd)[:, None]
    X = sd * F
    theta = np.zeros(k, dtype=F.dtype)
    theta[kept] = np.asarray(fp.theta)
    dropped = [j for j in range(k) if j not in kept]
    C = np.linalg.lstsq(X[:, kept], X[:, dropped], rcond=None)[0]  # √Dφ_j = √DΦ_K c_j
    N = np.zeros((k, len(dropped)), dtype=F.dtype)
    N[dropped, np.arange(len(dropped))] = 1.0
    N[np.ix_(kept, range(len(dropped)))] = -C
    # θ − N (NᵀN)^{-1} Nᵀ θ: N has the identity on the dropped rows, so σ_min(N) ≥ 1 and NᵀN is
    # well conditioned; a duplicated column gets exactly half the coefficient each
    theta = theta - N @ np.linalg.solve(N.T @ N, N.T @ theta)
    g = float(mdp.gamma)
    DF = dd[:, None] * F
    with np.errstate(over="ignore", under="ignore"):  # (±inf where A, b leave the float range)
        if lam == 1.0:
            A = DF.T @ F
            b = DF.T @ np.asarray(fp.V)
        else:
            Ppi = np.asarray(require_host(policy_transition_matrix(mdp, pi), who))
            r = np.asarray(require_host(policy_reward(mdp, pi), who))
            M = np.eye(mdp.S, dtype=F.dtype) - (g * lam) * Ppi
            left = np.linalg.solve(M.T, DF)  # M^{-T} DΦ
            A = left.T @ _bellman_difference(np, g, Ppi, F)
            b = left.T @ r
    return TDFixedPoint(theta, A, b, fp.d, fp.values, fp.V, fp.error, fp.projection_error)
