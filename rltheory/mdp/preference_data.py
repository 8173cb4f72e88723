r"""Pairwise trajectory preferences with per-player Bradley–Terry labels (the MARLHF data model).

References
----------
Zhang, N., Wang, X., Cui, Q., Zhou, R., Kakade, S., Du, S. (2024). Multi-agent RL from
human feedback: data coverage and algorithmic techniques (§3, Bradley–Terry preferences per player).
Bradley, R. A., Terry, M. E. (1952). Rank analysis of incomplete block designs. Biometrika 39.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backend import _rectangular, require_host, to_numpy
from ..errors import InvalidModelError
from ._dataset_checks import (
    _check_finite_host,
    _check_range,
    _frozen,
    _int_array,
    _real_host,
)
from .episodes import EpisodeDataset
from .sample import _rng

__all__ = ["PreferenceDataset", "trajectory_returns", "sample_preferences"]


def _check_pair(a: Any, b: Any, where: str) -> None:
    """``a`` and ``b`` must be episode datasets of the same sizes (located error otherwise)."""
    for f, d in (("first", a), ("second", b)):
        if not isinstance(d, EpisodeDataset):
            raise InvalidModelError(
                f"{where}.{f} must be an EpisodeDataset; got {type(d).__name__}"
            )
    if (a.K, a.H, a.S, a.action_shape) != (b.K, b.H, b.S, b.action_shape):
        raise InvalidModelError(
            f"{where}: first (K={a.K}, H={a.H}, S={a.S}, A={a.action_shape}) and second "
            f"(K={b.K}, H={b.H}, S={b.S}, A={b.action_shape}) must have the same sizes"
        )
    if a.actions.ndim != b.actions.ndim:
        # A = 3 and A = (3,) have the same sizes, but save_dataset keeps one A for both
        # halves, so such a pair could be saved and never loaded again
        raise InvalidModelError(
            f"{where}: first has actions of shape {a.actions.shape} (A={a.A!r}) and second "
            f"{b.actions.shape} (A={b.A!r}); give both halves A as an int (actions (K, H)) or "
            "both as a tuple (actions (K, H, n))"
        )


@dataclass(frozen=True, eq=False)
class PreferenceDataset:
    r"""Pairs of trajectories ``(τ_k, τ'_k)`` with per-player labels ``y_{k,i} = 1[τ_k ≻_i τ'_k]``.

    Parameters
    ----------
    first, second : EpisodeDataset
        The compared trajectories; same ``K``, ``H``, ``S``, ``A`` (both an int or both a
        tuple, so that both hold actions of the same shape).
    labels : int or bool array, shape (K, n) (or (K,) for one player)
        ``labels[k, i] = 1`` when player ``i`` prefers ``first`` episode ``k``; stored as
        a read-only int64 copy.

    Raises
    ------
    InvalidModelError
        The two halves disagree in shape (``A = 3`` with ``A = (3,)`` included), or a label
        is not 0/1 (located).
    """

    first: EpisodeDataset
    second: EpisodeDataset
    labels: Any

    def __post_init__(self) -> None:
        cls = "PreferenceDataset"
        a = self.first
        _check_pair(a, self.second, cls)
        # a ragged list is named (numpy's 'setting an array element with a sequence' named nothing)
        labels = self.labels
        raw = (
            _rectangular(labels, f"{cls}.labels")
            if isinstance(labels, (list, tuple))
            else np.asarray(to_numpy(labels))
        )
        # indicators 1[τ ≻ τ'] may come as booleans (they were refused as "integer indices")
        y = _int_array(raw.astype(np.int64) if raw.dtype == bool else raw, "labels", cls)
        if y.ndim == 1 and a.n_players == 1:
            y = y[:, None]
        if y.shape != (a.K, a.n_players):
            # the shape as given (a 1-D (K,) was reported as the reshaped (K, 1))
            raise InvalidModelError(
                f"{cls}.labels must have shape (K, n) = {(a.K, a.n_players)}; got {raw.shape}"
                f"{' (one player may also give shape (K,))' if a.n_players == 1 else ''}"
            )
        _check_range(y, 2, "labels", cls, ("k", "i"), "a 0/1")
        object.__setattr__(self, "labels", _frozen(y))

    @property
    def K(self) -> int:
        return self.first.K

    def __repr__(self) -> str:
        return (
            f"PreferenceDataset(K={self.K}, H={self.first.H}, S={self.first.S}, A={self.first.A})"
        )


def _step_rewards(data: EpisodeDataset, R: Any) -> np.ndarray:
    """``r_{i,h}(s_h^k, a_h^k)`` of every episode, player and step: shape (n, K, H) (checked ``R``)."""
    if not isinstance(data, EpisodeDataset):
        # (None failed with AttributeError "'NoneType' object has no attribute 'n_players'")
        raise TypeError(f"trajectory_returns needs an EpisodeDataset; got {type(data).__name__}")
    # a float64 cast parsed text R as numbers, dropped an imaginary part, read dates as numbers
    Rh = _real_host(require_host(R, "trajectory_returns"), "trajectory_returns R")
    if data.n_players == 1 and Rh.ndim == 3:
        Rh = Rh[None]
    want = (data.n_players, data.H, data.S) + data.action_shape
    if Rh.shape != want:
        raise InvalidModelError(
            f"R must have shape (n, H, S, A_1, ..., A_n) = {want}; got {Rh.shape}"
        )
    names = ("i", "h", "s") + tuple(f"a{j + 1}" for j in range(Rh.ndim - 3))
    _check_finite_host(Rh, "R", "trajectory_returns", names)
    Rf = Rh.reshape(data.n_players, data.H, data.S, -1)
    h = np.arange(data.H)[None, :]
    return Rf[:, h, data.states[:, :-1], data.joint_actions()]


def trajectory_returns(data: EpisodeDataset, R: Any) -> np.ndarray:
    r"""True returns ``R_i(τ_k) = Σ_h r_{i,h}(s_h^k, a_h^k)`` of each episode under mean rewards ``R``.

    ``R`` has shape (H, S, A) (one player) or (n, H, S, A_1, …, A_n); returns shape (K, n).

    Raises
    ------
    InvalidModelError
        ``R`` has the wrong shape, or a non-finite entry (the first is named).
    TypeError
        ``data`` is not an :class:`EpisodeDataset`, or ``R`` does not hold real numbers (text,
        complex, dates, records).
    ValueError
        A return beyond the float64 range (``|R_i(τ)| ≤ H·max|R|``; rewards 1e308 over
        ``H = 2`` steps gave ``inf`` with numpy's overflow warning): the episode, the player,
        ``H`` and ``max|R|`` are named.
    """
    steps = _step_rewards(data, R)
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        out = steps.sum(axis=-1).T
    if not np.isfinite(out).all():
        k, i = (int(j) for j in np.argwhere(~np.isfinite(out))[0])
        M = float(np.max(np.abs(steps[i])))
        raise ValueError(
            f"trajectory_returns: the return of episode k={k} for player i={i} left the float64 range "
            f"({out[k, i]}): H = {data.H} steps, max|r_h(s_h, a_h)| = {M:.4g} (|R_i(tau)| <= H max|R|). "
            "Returns scale with R: divide R by a power of 2 and scale the result back"
        )
    return out


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

    Raises
    ------
    InvalidModelError
        ``first`` and ``second`` differ in size, or ``R`` is malformed
        (:func:`trajectory_returns`).
    ValueError
        ``scale`` is not a positive finite number, or a return difference is not a
        number (step differences overflowing to both infinities; the episode is named).

    Notes
    -----
    The difference is summed step by step, ``Σ_h (r_{i,h}(τ_k) − r_{i,h}(τ'_k))``, so
    two episodes whose returns exceed the float range still compare correctly.

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
        isinstance(scale, (bool, np.bool_))
        or not isinstance(scale, numbers.Real)  # numpy scalars included (np.float32(2.0))
        or not np.isfinite(scale)
        or scale <= 0
    ):
        raise ValueError(f"scale must be a positive finite number; got {scale!r}")
    _check_pair(first, second, "sample_preferences")
    # Σ_h (r_h(τ) − r_h(τ')): step by step, so that returns beyond the float range still
    # compare (equal steps give 0, not inf − inf)
    with np.errstate(over="ignore", invalid="ignore"):
        diff = float(scale) * (_step_rewards(first, R) - _step_rewards(second, R)).sum(axis=-1).T
    if np.isnan(diff).any():
        k, i = (int(j) for j in np.argwhere(np.isnan(diff))[0])
        raise ValueError(
            f"sample_preferences: the return difference of episode k={k} for player i={i} is not a "
            "number (its step differences overflow to +inf and -inf); rescale R"
        )
    p = 0.5 * (1.0 + np.tanh(0.5 * diff))  # σ(diff), overflow-free
    y = (gen.random(p.shape) < p).astype(np.int64)
    return PreferenceDataset(first, second, y)
