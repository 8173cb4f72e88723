r"""Confidence intervals on the Bellman backups of a finite-horizon Markov game from episodes.

For each player ``i``, step ``h`` and joint action, an interval ``[mean ∓ Γ]`` on
``E[r_i + V(s') | s, a]`` from the episodes of an :class:`~rltheory.mdp.offline_data.EpisodeDataset`
with joint actions: the Hoeffding radius ``(H−h)√(ln(2/δ')/(2n_h(s,a)))`` of the tabular
estimate (capped at ``H − h``; ``H − h`` for unvisited pairs), or the elliptical radius
``β‖φ‖_{Λ_h^{-1}}`` of ridge regression on features ``φ`` (fixed ``β`` or the
self-normalised ``β`` of Abbasi-Yadkori et al. 2011, Thm 2). With ``split=True`` episode ``k``
serves only step ``k mod H``, so the data of step ``h`` is independent of the policies
chosen at later steps. ``δ'`` is ``δ`` divided by a union over players, steps, pairs (tabular),
the two value functions and the candidate policies, kept as ``ln(1/δ')``. Used by the
offline learners of :mod:`rltheory.algorithms.offline_games` (their ``Q̲``/``Q̄`` bounds).

References
----------
Hoeffding, W. (1963). Probability inequalities for sums of bounded random variables. JASA 58.
Abbasi-Yadkori, Y., Pál, D., Szepesvári, C. (2011). Improved algorithms for linear stochastic
bandits. NeurIPS, Theorem 2.
Zhang, Y., Bai, Y., Jiang, N. (2023). Offline learning in Markov games with general
function approximation. ICML (interval estimation).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_real, real_scalar
from ..mdp.offline_data import EpisodeDataset
from ._offline_common import _features, _group, _ridge, _Step

__all__: list[str] = []


def _joint_steps(data: EpisodeDataset, split: bool) -> list[_Step]:
    H = data.H
    ja = data.joint_actions()
    k = np.arange(data.K)
    out = []
    for h in range(H):
        idx = k[k % H == h] if split else k
        out.append(
            _Step(data.states[idx, h], ja[idx, h], data.rewards[idx, h], data.states[idx, h + 1])
        )
    return out


class _Estimator:
    """Per-step interval estimates ``[mean ∓ radius]`` of ``E[r_i + V(s') | s, a]``."""

    def __init__(
        self,
        data: EpisodeDataset,
        *,
        log_inv_delta: float,
        features: Any,
        beta: Any,
        ridge: float,
        split: bool,
    ) -> None:
        self.H, self.S = data.H, data.S
        self.J = int(np.prod(data.action_shape))
        self.steps = _joint_steps(data, split)
        self.log_inv_delta = log_inv_delta  # ln(1/δ') of one interval (δ' itself may underflow)
        self.counts = np.stack(
            [_group(st, self.S, self.J, np.zeros(st.s.shape[0]))[0] for st in self.steps]
        ).astype(np.int64)
        self.phi = None
        if features is not None:
            self.phi = _features(features, self.H, self.S, self.J)
            d = self.phi.shape[-1]
            self.Z, self.W, self.beta = [], [], []
            for h, st in enumerate(self.steps):
                Lam, X = _ridge(st, self.phi[h], ridge, h)
                try:
                    Linv = np.linalg.inv(Lam)
                except np.linalg.LinAlgError:
                    raise ValueError(f"Λ_{h} is singular at step h={h}; use ridge > 0") from None
                F = self.phi[h].reshape(-1, d)
                self.W.append(F @ Linv @ X.T)  # maps sample targets to fitted values [S*J, m]
                self.Z.append(
                    np.sqrt(np.maximum(np.sum((F @ Linv) * F, axis=-1), 0.0)).reshape(
                        self.S, self.J
                    )
                )
                if isinstance(beta, str):
                    B = float(self.H - h)
                    logdet = np.linalg.slogdet(Lam)[1] - d * math.log(ridge)
                    self.beta.append(
                        0.5 * B * math.sqrt(2.0 * log_inv_delta + logdet) + math.sqrt(ridge * d) * B
                    )
                else:
                    self.beta.append(float(beta))

    def interval(self, h: int, i: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, radius, visited) for targets ``y = r_i + v(s')`` at step ``h``."""
        st = self.steps[h]
        y = st.r[:, i] + v[st.s2]
        B = float(self.H - h)
        if self.phi is None:
            n, mean, _ = _group(st, self.S, self.J, y)
            # hoeffding_radius(n, B, δ') = B √(ln(2/δ')/(2n)) (B for n = 0, capped at B), from ln(1/δ')
            r = B * np.sqrt((math.log(2.0) + self.log_inv_delta) / (2.0 * np.maximum(n, 1.0)))
            return mean, np.where(n > 0, np.minimum(r, B), B), n > 0
        mean = (self.W[h] @ y).reshape(self.S, self.J)
        return mean, self.beta[h] * self.Z[h], np.ones((self.S, self.J), dtype=bool)

    def q_bounds(
        self, h: int, i: int, v_lo: np.ndarray, v_hi: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``Q̲ = clip(mean(v_lo) − Γ)`` (0 unvisited) and ``Q̄ = clip(mean(v_hi) + Γ)`` (H−h unvisited)."""
        B = float(self.H - h)
        m_lo, g, vis = self.interval(h, i, v_lo)
        m_hi, g2, _ = self.interval(h, i, v_hi)
        lo = np.where(vis, np.clip(m_lo - g, 0.0, B), 0.0)
        hi = np.where(vis, np.clip(m_hi + g2, 0.0, B), B)
        return lo, hi


def _estimator(
    data: EpisodeDataset,
    delta: float,
    n_candidates: int,
    features: Any,
    beta: Any,
    ridge: float,
    split: bool,
) -> _Estimator:
    n, H, S = data.n_players, data.H, data.S
    J = int(np.prod(data.action_shape))
    # union over players, steps, (s, a) pairs, the two value functions and the candidates:
    # δ' = δ / (2 n H |Π| S J), kept as ln(1/δ') = ln(2 n H |Π| S J) − ln δ because δ' itself
    # underflows (δ = 5e-324, or δ = 1e-320 with a few hundred events) and 1/δ' overflows
    # (δ' < 5.6e-309), which made the self-normalised β infinite and β·‖φ‖ = inf·0 = NaN
    log_inv_delta = math.log(
        2 * n * H * n_candidates * (S * J if features is None else 1)
    ) - math.log(delta)
    if not isinstance(split, (bool, np.bool_)):  # split='False' is truthy: it split the data
        raise ValueError(f"split must be True or False; got {split!r}")
    if features is not None and beta is None:
        raise ValueError("linear intervals need beta (a number or 'self-normalized')")
    if isinstance(beta, str):
        if beta != "self-normalized":
            raise ValueError(
                f"beta must be a finite number >= 0 or 'self-normalized'; got {beta!r}"
            )
        if not split or not ridge > 0:
            raise ValueError(
                f"beta='self-normalized' needs split=True and ridge > 0; got split={split!r}, ridge={ridge!r}"
            )
    elif beta is not None:
        b = real_scalar(beta)  # Python or numpy real scalar (not bool); NaN otherwise
        if not (
            b >= 0 and math.isfinite(b)
        ):  # a negative radius would swap the interval ends and void the certificate
            raise ValueError(
                f"beta must be a finite number >= 0 or 'self-normalized'; got {beta!r}"
            )
        beta = b
    if features is not None:
        check_real(ridge, "ridge", low=0.0)
    return _Estimator(
        data, log_inv_delta=log_inv_delta, features=features, beta=beta, ridge=ridge, split=split
    )
