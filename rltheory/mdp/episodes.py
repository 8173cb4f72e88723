r"""Finite-horizon episode datasets (single-agent or joint actions) and their empirical model.

:class:`EpisodeDataset` holds ``K`` episodes ``(s_0, a_0, r_0, …, s_H)``, validated on
construction (located :class:`~rltheory.errors.InvalidModelError` for indices out of
range, wrong shapes or horizon, non-finite rewards, empty data);
:func:`empirical_model` gives the counts ``n_h(s, a)``, ``P̂_h``, ``r̂_h`` and ``π̂_b``.

References
----------
Jin, Y., Yang, Z., Wang, Z. (2021). Is pessimism provably efficient for offline RL? ICML
(§2: episodic datasets from an arbitrary behaviour policy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backend import to_numpy
from ..errors import InvalidModelError
from ._dataset_checks import (
    _action_sizes,
    _check_finite_host,
    _check_range,
    _frozen,
    _int_array,
    _positive,
    _reward_host,
)

__all__ = ["EpisodeDataset", "EmpiricalModel", "empirical_model"]

MAX_MODEL_ENTRIES = 2**27
"""Largest dense empirical kernel ``P̂`` (``H·S·J·S`` entries; 1 GiB in float64, and as much
again for the transition counts) that :func:`empirical_model` builds."""


@dataclass(frozen=True, eq=False)
class EpisodeDataset:
    r"""``K`` finite-horizon episodes ``(s_0, a_0, r_0, …, s_{H−1}, a_{H−1}, r_{H−1}, s_H)``.

    Parameters
    ----------
    states : int array, shape (K, H+1)
        ``states[k, h] = s_h^k`` (the last column is the state reached after step ``H−1``).
    actions : int array, shape (K, H) or (K, H, n)
        ``a_h^k``; with ``n`` players the joint action ``(a_{1,h}^k, …, a_{n,h}^k)``.
    rewards : float array, shape (K, H) or (K, H, n)
        Observed rewards ``r_h^k`` (one per player for games).
    S : int
        Number of states.
    A : int or tuple of int
        Number of actions, or per-player action counts ``(A_1, …, A_n)`` for games.

    The arrays are stored as read-only copies (int64 indices, float64 rewards), so the
    validated dataset does not change when the caller's arrays do.

    Raises
    ------
    InvalidModelError
        Empty dataset (``K = 0`` or ``H = 0``), shapes that disagree, a state or
        action index out of range (the first offending ``[k=…, h=…]`` and its value are
        named), non-integer indices or non-finite rewards.
    TypeError
        Rewards that are not real numbers: text, complex, dates, records
        (``EpisodeDataset.rewards`` is named).

    Examples
    --------
    >>> import numpy as np
    >>> d = EpisodeDataset(np.array([[0, 1, 1]]), np.array([[1, 0]]), np.array([[0.5, 1.0]]), S=2, A=2)
    >>> d.K, d.H, d.n_players
    (1, 2, 1)
    """

    states: Any
    actions: Any
    rewards: Any
    S: int
    A: Any

    def __post_init__(self) -> None:
        cls = "EpisodeDataset"
        S = _positive(self.S, f"{cls}.S")
        A = _action_sizes(self.A, cls)
        n = len(A)
        st = _int_array(self.states, "states", cls)
        ac = _int_array(self.actions, "actions", cls)
        # string, complex, date and record rewards get a TypeError naming the field (a cast
        # parsed text, failed with numpy's unlocated 'could not convert string to float', or
        # read a date as a number)
        rw = _reward_host(self.rewards, f"{cls}.rewards")
        if st.ndim != 2:
            raise InvalidModelError(f"{cls}.states must have shape (K, H+1); got {st.shape}")
        K, H = st.shape[0], st.shape[1] - 1
        if K == 0 or H < 1:
            raise InvalidModelError(
                f"{cls} is empty: states has shape {st.shape} (K = {K} episodes, H = {H} steps); "
                "an offline dataset needs K >= 1 episodes of horizon H >= 1"
            )
        want_a = (K, H) if n == 1 and not isinstance(self.A, (tuple, list)) else (K, H, n)
        if ac.shape != want_a:
            raise InvalidModelError(
                f"{cls}.actions must have shape {want_a} (K, H{', n' if len(want_a) == 3 else ''}) "
                f"to match states {st.shape}; got {ac.shape}"
            )
        if rw.shape != want_a:
            raise InvalidModelError(
                f"{cls}.rewards must have shape {want_a} to match actions; got {rw.shape}"
            )
        _check_range(st, S, "states", cls, ("k", "h"), "a state")
        if ac.ndim == 2:
            _check_range(ac, A[0], "actions", cls, ("k", "h"), "an action")
        else:
            for i in range(n):
                _check_range(
                    ac[..., i], A[i], f"actions[..., {i}]", cls, ("k", "h"), f"a player-{i} action"
                )
        _check_finite_host(rw, "rewards", cls, ("k", "h", "i")[: rw.ndim])
        object.__setattr__(self, "states", _frozen(st))
        object.__setattr__(self, "actions", _frozen(ac))
        object.__setattr__(self, "rewards", _frozen(rw))
        object.__setattr__(self, "S", S)
        object.__setattr__(self, "A", A[0] if ac.ndim == 2 else A)

    @property
    def K(self) -> int:
        """Number of episodes."""
        return int(self.states.shape[0])

    @property
    def H(self) -> int:
        """Horizon (steps per episode)."""
        return int(self.states.shape[1] - 1)

    @property
    def n_players(self) -> int:
        """1 for an MDP dataset, ``n`` for joint actions of ``n`` players."""
        return 1 if self.actions.ndim == 2 else int(self.actions.shape[2])

    @property
    def action_shape(self) -> tuple[int, ...]:
        """``(A,)`` or ``(A_1, …, A_n)``."""
        return (self.A,) if self.actions.ndim == 2 else tuple(self.A)

    def joint_actions(self) -> np.ndarray:
        """Flat joint-action index ``[K, H]`` (row-major over players; the action itself for n = 1).

        The index runs over ``J = Π_i A_i`` joint actions and is int64: a ``ValueError`` names
        the action sizes when ``J`` exceeds ``2**63 − 1`` (the players' own actions remain in
        ``actions[..., i]``).
        """
        if self.actions.ndim == 2:
            return self.actions
        J = math.prod(self.action_shape)  # Python ints: no wrap-around
        # (numpy's ravel_multi_index said only 'invalid dims: array size defined by dims is larger
        # than the maximum possible size')
        if J > np.iinfo(np.intp).max:
            raise ValueError(
                f"joint_actions: the joint action space J = {'·'.join(map(str, self.action_shape))} "
                f"= {J:.3g} is beyond the int64 index range (2**63 - 1); the per-player actions "
                f"are EpisodeDataset.actions[..., i]"
            )
        return np.ravel_multi_index(tuple(np.moveaxis(self.actions, -1, 0)), self.action_shape)

    def subset(self, episodes: Any) -> EpisodeDataset:
        """The dataset restricted to the given episode indices (or boolean mask).

        ``episodes`` is a 1-D integer array of indices in ``[-K, K)`` (repeats allowed) or a
        boolean mask of length ``K``; anything else raises a located :class:`InvalidModelError`
        (an empty selection is an empty dataset, which is rejected as well).
        """
        idx = np.asarray(to_numpy(episodes))
        where = f"EpisodeDataset.subset(episodes) (K = {self.K})"
        if idx.ndim != 1:
            raise InvalidModelError(
                f"{where}: episodes must be a 1-D array of episode indices or a boolean mask; "
                f"got shape {idx.shape}"
            )
        if idx.dtype == bool:
            if idx.shape[0] != self.K:
                raise InvalidModelError(
                    f"{where}: a boolean mask must have length K = {self.K}; got {idx.shape[0]}"
                )
        elif idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise InvalidModelError(
                f"{where}: episodes must hold integer indices or booleans; got dtype {idx.dtype}"
            )
        else:
            # range-checked before the int64 cast, which wraps uint64 2**64 - 1 to the valid -1
            bad = np.flatnonzero((idx < -self.K) | (idx >= self.K))
            if bad.size:
                j = int(bad[0])
                raise InvalidModelError(
                    f"{where}: episodes[{j}] = {int(idx[j])} is not an episode index in [-{self.K}, {self.K})"
                )
            idx = idx.astype(np.int64)
        return EpisodeDataset(
            self.states[idx], self.actions[idx], self.rewards[idx], self.S, self.A
        )

    def check_compatible(
        self, *, S: int | None = None, A: Any = None, H: int | None = None
    ) -> None:
        """Raise a located :class:`InvalidModelError` when the dataset does not fit a model.

        ``S``, ``H`` and each entry of ``A`` must be integers ``>= 1`` (located
        :class:`InvalidModelError` otherwise; a float is not truncated).

        Examples
        --------
        >>> import numpy as np
        >>> d = EpisodeDataset(np.zeros((2, 4), int), np.zeros((2, 3), int), np.zeros((2, 3)), S=1, A=1)
        >>> d.check_compatible(H=5)
        Traceback (most recent call last):
        ...
        rltheory.errors.InvalidModelError: wrong horizon: the dataset has H = 3 (states shape (2, 4)) but the model has H = 5
        """
        # sizes are checked as integers first: int(H) truncated H = 3.7 to a matching 3
        if H is not None and _positive(H, "check_compatible: H") != self.H:
            raise InvalidModelError(
                f"wrong horizon: the dataset has H = {self.H} (states shape {self.states.shape}) "
                f"but the model has H = {int(H)}"
            )
        if S is not None and _positive(S, "check_compatible: S") != self.S:
            raise InvalidModelError(
                f"the dataset has S = {self.S} states but the model has S = {int(S)}"
            )
        if A is not None:
            want = _action_sizes(A, "check_compatible: model")
            if want != self.action_shape:
                raise InvalidModelError(
                    f"the dataset has action sizes {self.action_shape} but the model has {want}"
                )

    def __repr__(self) -> str:
        return f"EpisodeDataset(K={self.K}, H={self.H}, S={self.S}, A={self.A})"


# --------------------------------------------------------------------------- empirical model
@dataclass(frozen=True, eq=False)
class EmpiricalModel:
    r"""Count-based model of an episode dataset (joint actions flattened for games).

    Attributes
    ----------
    counts : int array, shape (H, S, J)
        ``n_h(s, a) = #{k : s_h^k = s, a_h^k = a}``, ``J = A`` or ``Π_i A_i``.
    P : array, shape (H, S, J, S)
        ``P̂_h(s'|s, a) = n_h(s, a, s')/n_h(s, a)``; rows with ``n_h(s, a) = 0`` are zero.
    R : array, shape (n, H, S, J)
        ``r̂_{i,h}(s, a)`` = mean observed reward (0 where unvisited); finite for any
        finite rewards (the sum is taken in a scaled form that cannot overflow).
    behaviour : array, shape (H, S, J)
        ``π̂_{b,h}(a|s) = n_h(s, a)/n_h(s)``; rows of unvisited states are zero.
    action_shape : tuple of int
    """

    counts: np.ndarray
    P: np.ndarray
    R: np.ndarray
    behaviour: np.ndarray
    action_shape: tuple[int, ...]

    @property
    def visited(self) -> np.ndarray:
        """Boolean mask ``n_h(s, a) > 0``."""
        return self.counts > 0


def _cell_means(cell: np.ndarray, r: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Mean of ``r`` over each cell, ``Σ_{j: cell_j = c} r_j / n_c``, without overflow.

    Each cell's sum is taken of ``r / 2^e`` with ``2^e ≤ max_c |r| < 2^{e+1}``, so every
    term is below 2 in magnitude and the sum cannot overflow (the plain sum of two
    rewards ``1e308`` is ``inf``). Scaling by a power of two is exact, so away from the
    underflow range the result is bit-identical to ``(Σ r) / n``; the product is kept in
    ``[−max |r|, max |r|]``, where the exact mean lies.
    """
    big = np.zeros(n.shape[0])
    np.maximum.at(big, cell, np.abs(r))
    scale = np.ldexp(1.0, np.frexp(big)[1] - 1)
    total = np.bincount(cell, weights=r / scale[cell], minlength=n.shape[0])
    return np.clip(total / n * scale, -big, big)


def empirical_model(data: EpisodeDataset) -> EmpiricalModel:
    r"""Counts, empirical kernel ``P̂_h``, mean rewards ``r̂_h`` and behaviour ``π̂_b`` of a dataset.

    ``TypeError`` unless ``data`` is an :class:`EpisodeDataset`; ``ValueError`` (before any
    work) when the dense ``P̂`` would hold more than :data:`MAX_MODEL_ENTRIES` entries.

    Examples
    --------
    >>> import numpy as np
    >>> d = EpisodeDataset(np.array([[0, 1], [0, 0]]), np.array([[1], [1]]), np.array([[1.0], [0.0]]), S=2, A=2)
    >>> m = empirical_model(d)
    >>> m.counts[0, 0].tolist(), m.P[0, 0, 1].tolist(), float(m.R[0, 0, 0, 1])
    ([0, 2], [0.5, 0.5], 0.5)
    """
    if not isinstance(data, EpisodeDataset):  # "'str' object has no attribute 'H'" before
        raise TypeError(f"empirical_model needs an EpisodeDataset; got {type(data).__name__}")
    H, S, K = data.H, data.S, data.K
    J = math.prod(data.action_shape)  # Python ints: np.prod wraps around past 2^63
    if H * S * J * S > MAX_MODEL_ENTRIES:  # numpy's MemoryError at best, swapping at worst
        shape = data.action_shape
        joint = f"J = A = {J}" if len(shape) == 1 else f"J = {'·'.join(map(str, shape))} = {J}"
        raise ValueError(
            f"empirical_model builds the dense kernel P_hat of H·S·J·S = {H}·{S}·{J}·{S} = "
            f"{H * S * J * S:.3g} entries ({joint}), above MAX_MODEL_ENTRIES = {MAX_MODEL_ENTRIES} "
            f"(rltheory.mdp.episodes.MAX_MODEL_ENTRIES)"
        )
    ja = data.joint_actions()
    h = np.broadcast_to(np.arange(H)[None, :], (K, H))
    sa = (h * S + data.states[:, :-1]) * J + ja
    counts = np.bincount(sa.ravel(), minlength=H * S * J).reshape(H, S, J)
    trans = np.bincount((sa * S + data.states[:, 1:]).ravel(), minlength=H * S * J * S).reshape(
        H, S, J, S
    )
    rw = data.rewards if data.rewards.ndim == 3 else data.rewards[..., None]
    safe = np.maximum(counts, 1)
    P = trans / safe[..., None]
    R = np.stack(
        [_cell_means(sa.ravel(), rw[..., i].ravel(), safe.ravel()) for i in range(rw.shape[-1])]
    )
    R = R.reshape(-1, H, S, J)
    ns = counts.sum(-1, keepdims=True)
    beh = counts / np.maximum(ns, 1)
    return EmpiricalModel(counts, P, R, beh, data.action_shape)
