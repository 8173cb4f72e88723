r"""Discounted offline RL from i.i.d. transitions: VI-LCB with data splitting and monotone updates.

References
----------
Rashidinejad, P., Zhu, B., Ma, C., Jiao, J., Russell, S. (2021). Bridging offline RL and
imitation learning: a tale of pessimism. NeurIPS 34 (VI-LCB, Algorithm 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import real_scalar
from ..bounds.offline import _hoeffding
from ..errors import InvalidModelError
from ..mdp.offline_data import TransitionDataset
from ..trace import Trace, TraceRecorder
from ._offline_common import _group, _prob, _Step

__all__ = ["DiscountedOfflineResult", "lcb_vi_discounted"]


@dataclass(frozen=True, eq=False)
class DiscountedOfflineResult:
    r"""Output of :func:`lcb_vi_discounted`.

    Attributes
    ----------
    policy : int array (S,)
    V : array (S,)
        ``V_T``, a lower bound on ``V^{π_T}`` on the confidence event.
    Q : array (S, A)
        The last fold's pessimistic ``Q_T``.
    bonus : array (S, A)
        The last fold's bonus.
    counts : int array (T, S, A)
        Per-fold counts.
    iterations : int
        ``T`` (number of folds).
    delta : float
    trace : Trace
        ``mean_value`` (``Σ_s V_t(s)/S``) and ``updated`` (states improved) per iteration.
    """

    policy: np.ndarray
    V: np.ndarray
    Q: np.ndarray
    bonus: np.ndarray
    counts: np.ndarray
    iterations: int
    delta: float
    trace: Trace


def lcb_vi_discounted(
    data: TransitionDataset, gamma: float, *, delta: float = 0.1, iterations: int | None = None
) -> DiscountedOfflineResult:
    r"""Discounted VI-LCB with data splitting and monotone updates (Rashidinejad et al. 2021, Algorithm 3).

    The ``N`` tuples are split into ``T`` folds (default ``T = min(N, ⌈ln max(N, 2)/(1 − γ)⌉)``: at least one fold for ``N = 1``). With
    fold ``t``: ``Q_t = r̂ + γ P̂_t V_{t−1} − b_t`` (``0`` on unvisited pairs),
    ``b_t(s, a) = V_max √(ln(2SAT/δ)/(2 n_t(s, a)))``, ``V_max = 1/(1 − γ)``; then at every
    state ``V_t(s) = max_a Q_t(s, a)`` and ``π_t(s) = argmax_a Q_t(s, a)`` *only if* this improves on
    ``V_{t−1}(s)`` (otherwise both are kept).

    Parameters
    ----------
    data : TransitionDataset
        Rewards in ``[0, 1]``.
    gamma : float in [0, 1)
    delta : float in (0, 1)
    iterations : int, optional
        ``T``; at most ``N``. The default ``⌈ln N/(1 − γ)⌉`` is capped at ``N`` (one tuple
        per fold) when the data are too few for it.

    Returns
    -------
    DiscountedOfflineResult

    Notes
    -----
    Each fold is independent of ``V_{t−1}`` (built from earlier folds), so Hoeffding with a
    union bound over ``(t, s, a)`` makes ``|(P̂_t − P)V_{t−1}| + |r̂ − r| ≤ b_t`` hold for all
    folds with probability ``≥ 1 − δ``; then, by induction, ``V_t ≤ T^{π_t} V_t`` and hence
    ``V_T ≤ V^{π_T}`` pointwise (the monotone update keeps the inequality where the
    policy is not changed). Rashidinejad et al. (2021) show
    ``E[V*(ρ) − V^{π_T}(ρ)] ≲ √(S C* ln N/((1 − γ)^5 N))``; with ``T`` folds each sees
    ``N/T`` samples, the source of the extra ``(1 − γ)^{-1}`` (Li et al. 2022 remove it
    without splitting).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import TransitionDataset
    >>> a = np.array([0] * 600 + [1] * 2); r = np.array([0.5] * 600 + [1.0] * 2)
    >>> d = TransitionDataset(np.zeros(602, int), a, r, np.zeros(602, int), S=1, A=2)
    >>> lcb_vi_discounted(d, 0.5).policy.tolist()
    [0]
    """
    if not isinstance(data, TransitionDataset):
        raise TypeError(f"lcb_vi_discounted needs a TransitionDataset; got {type(data).__name__}")
    bad = (data.rewards < 0) | (data.rewards > 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise InvalidModelError(f"lcb_vi_discounted assumes rewards in [0, 1]; TransitionDataset.rewards[i={i}] = {data.rewards[i]:.6g}")
    g = real_scalar(gamma)  # Python or numpy real scalar (not bool); NaN otherwise, which fails below
    if not 0.0 <= g < 1.0:
        raise ValueError(f"gamma must be a number in [0, 1); got {gamma!r}")
    gamma = g
    dl = _prob(delta)
    N, S, A = data.N, data.S, data.A
    if iterations is None:  # ⌈ln N/(1 − γ)⌉ folds, but never more folds than tuples
        T = min(N, int(math.ceil(math.log(max(N, 2)) / (1.0 - gamma))))
    elif isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or not 1 <= iterations <= N:
        raise ValueError(f"iterations must be an integer in [1, N = {N}]; got {iterations!r}")
    else:
        T = int(iterations)
    vmax = 1.0 / (1.0 - gamma)
    log_inv = math.log(T * S * A) - math.log(dl)  # ln(1/δ'), δ' = δ/(TSA), which underflows for a subnormal δ
    V = np.zeros(S)
    pol = np.zeros(S, dtype=np.int64)
    counts = np.zeros((T, S, A), dtype=np.int64)
    rec = TraceRecorder()
    Q = b = np.zeros((S, A))
    folds = np.array_split(np.arange(N), T)
    for t, idx in enumerate(folds):
        st = _Step(data.states[idx], data.actions[idx], data.rewards[idx], data.next_states[idx])
        n, mean, _ = _group(st, S, A, st.r + gamma * V[st.s2])
        counts[t] = n.astype(np.int64)
        b = _hoeffding(n, np.asarray(vmax), math.log(2.0) + log_inv)  # hoeffding_radius(n, V_max, δ')
        Q = np.where(n > 0, np.clip(mean - b, 0.0, vmax), 0.0)
        better = np.max(Q, axis=-1) > V
        pol = np.where(better, np.argmax(Q, axis=-1), pol)
        V = np.where(better, np.max(Q, axis=-1), V)
        rec.record(t + 1, mean_value=float(V.mean()), updated=int(better.sum()))
    return DiscountedOfflineResult(pol, V, Q, b, counts, T, dl, rec.finish())
