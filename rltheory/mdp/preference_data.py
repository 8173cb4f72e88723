r"""Pairwise trajectory preferences with per-player Bradley–Terry labels (the MARLHF data model).

References
----------
Zhang, N., Wang, X., Cui, Q., Zhou, R., Kakade, S., Du, S. (2024). Multi-agent RL from
human feedback: data coverage and algorithmic techniques (§3, Bradley–Terry preferences per player).
Bradley, R. A., Terry, M. E. (1952). Rank analysis of incomplete block designs. Biometrika 39.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backend import require_host
from ..errors import InvalidModelError
from ._dataset_checks import (
    _check_range,
    _int_array,
)
from .episodes import EpisodeDataset
from .sample import _rng

__all__ = ["PreferenceDataset", "trajectory_returns", "sample_preferences"]


@dataclass(frozen=True, eq=False)
class PreferenceDataset:
    r"""Pairs of trajectories ``(τ_k, τ'_k)`` with per-player labels ``y_{k,i} = 1[τ_k ≻_i τ'_k]``.

    Parameters
    ----------
    first, second : EpisodeDataset
        The compared trajectories; same ``K``, ``H``, ``S``, ``A``.
    labels : int array, shape (K, n)
        ``labels[k, i] = 1`` when player ``i`` prefers ``first`` episode ``k``.

    Raises
    ------
    InvalidModelError
        The two halves disagree in shape, or a label is not 0/1 (located).
    """

    first: EpisodeDataset
    second: EpisodeDataset
    labels: Any

    def __post_init__(self) -> None:
        cls = "PreferenceDataset"
        for f in ("first", "second"):
            if not isinstance(getattr(self, f), EpisodeDataset):
                raise InvalidModelError(
                    f"{cls}.{f} must be an EpisodeDataset; got {type(getattr(self, f)).__name__}"
                )
        a, b = self.first, self.second
        if (a.K, a.H, a.S, a.action_shape) != (b.K, b.H, b.S, b.action_shape):
            raise InvalidModelError(
                f"{cls}: first (K={a.K}, H={a.H}, S={a.S}, A={a.action_shape}) and second "
                f"(K={b.K}, H={b.H}, S={b.S}, A={b.action_shape}) must have the same sizes"
            )
        y = _int_array(self.labels, "labels", cls)
        if y.ndim == 1:
            y = y[:, None]
        if y.shape != (a.K, a.n_players):
            raise InvalidModelError(
                f"{cls}.labels must have shape (K, n) = {(a.K, a.n_players)}; got {y.shape}"
            )
        _check_range(y, 2, "labels", cls, ("k", "i"), "a 0/1")
        object.__setattr__(self, "labels", y)

    @property
    def K(self) -> int:
        return self.first.K

    def __repr__(self) -> str:
        return (
            f"PreferenceDataset(K={self.K}, H={self.first.H}, S={self.first.S}, A={self.first.A})"
        )


def trajectory_returns(data: EpisodeDataset, R: Any) -> np.ndarray:
    r"""True returns ``R_i(τ_k) = Σ_h r_{i,h}(s_h^k, a_h^k)`` of each episode under mean rewards ``R``.

    ``R`` has shape (H, S, A) (one player) or (n, H, S, A_1, …, A_n); returns shape (K, n).
    """
    Rh = np.asarray(require_host(R, "trajectory_returns"), dtype=np.float64)
    if data.n_players == 1 and Rh.ndim == 3:
        Rh = Rh[None]
    want = (data.n_players, data.H, data.S) + data.action_shape
    if Rh.shape != want:
        raise InvalidModelError(
            f"R must have shape (n, H, S, A_1, ..., A_n) = {want}; got {Rh.shape}"
        )
    Rf = Rh.reshape(data.n_players, data.H, data.S, -1)
    h = np.arange(data.H)[None, :]
    return Rf[:, h, data.states[:, :-1], data.joint_actions()].sum(axis=-1).T


def sample_preferences(
    first: EpisodeDataset,
    second: EpisodeDataset,
    R: Any,
    *,
    rng: np.random.Generator | int,
    scale: float = 1.0,
) -> PreferenceDataset:
    r"""Bradley–Terry labels ``y_{k,i} ~ Bernoulli(σ(scale·(R_i(τ_k) − R_i(τ'_k))))`` for each player.

    ``σ(x) = 1/(1 + e^{−x})``; ``R_i(τ)`` is the trajectory's true return under
    mean rewards ``R`` (:func:`trajectory_returns`), as in the MARLHF data model
    (Zhang et al. 2024, §3: each agent compares trajectories by its own return).

    Examples
    --------
    >>> import numpy as np
    >>> a = EpisodeDataset(np.zeros((3, 2), int), np.ones((3, 1), int), np.zeros((3, 1)), S=1, A=2)
    >>> b = EpisodeDataset(np.zeros((3, 2), int), np.zeros((3, 1), int), np.zeros((3, 1)), S=1, A=2)
    >>> sample_preferences(a, b, np.array([[[0.0, 50.0]]]), rng=0).labels[:, 0].tolist()
    [1, 1, 1]
    """
    gen = _rng(rng)
    if (
        isinstance(scale, bool)
        or not isinstance(scale, (int, float))
        or not np.isfinite(scale)
        or scale <= 0
    ):
        raise ValueError(f"scale must be a positive finite number; got {scale!r}")
    diff = float(scale) * (trajectory_returns(first, R) - trajectory_returns(second, R))
    p = 0.5 * (1.0 + np.tanh(0.5 * diff))  # σ(diff), overflow-free
    y = (gen.random(p.shape) < p).astype(np.int64)
    return PreferenceDataset(first, second, y)
