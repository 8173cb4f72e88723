r"""Discounted transition datasets: i.i.d. tuples ``(s, a) ~ ν``, ``r``, ``s' ~ P(·|s, a)``.

The offline data model of Rashidinejad et al. (2021, §2) for discounted tabular MDPs.

References
----------
Rashidinejad, P., Zhu, B., Ma, C., Jiao, J., Russell, S. (2021). Bridging offline
reinforcement learning and imitation learning: a tale of pessimism. NeurIPS 34 (§2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backend import _rectangular, require_host
from ..errors import InvalidModelError
from ._dataset_checks import (
    _check_finite_host,
    _check_range,
    _distribution_host,
    _frozen,
    _int_array,
    _positive,
    _reward_host,
    _reward_mode,
)
from .model import FiniteHorizonMDP, FiniteMDP
from .sample import _cdf, _draw, _rng

__all__ = ["TransitionDataset", "sample_transition_dataset"]

#: successor CDF entries compared at once when drawing ``s'`` (bounds the sampler's scratch memory)
_DRAW_CHUNK = 1 << 20


@dataclass(frozen=True, eq=False)
class TransitionDataset:
    r"""``N`` transition tuples ``(s_i, a_i, r_i, s'_i)`` for a discounted tabular MDP.

    Parameters
    ----------
    states, actions, next_states : int arrays, shape (N,)
    rewards : float array, shape (N,)
    S, A : int

    The arrays are stored as read-only copies (int64 indices, float64 rewards).

    Raises
    ------
    InvalidModelError
        Empty (``N = 0``), lengths that differ, indices out of range (``[i=…]`` and
        the value are named), non-finite rewards.
    TypeError
        Rewards that are not real numbers: text, complex, dates, records
        (``TransitionDataset.rewards`` is named).
    ValueError
        A ragged list (``states=[0, [1]]``), named as ``TransitionDataset.states``.
    """

    states: Any
    actions: Any
    rewards: Any
    next_states: Any
    S: int
    A: int

    def __post_init__(self) -> None:
        cls = "TransitionDataset"
        S = _positive(self.S, f"{cls}.S")
        A = _positive(self.A, f"{cls}.A")
        arrs = {}
        for f in ("states", "actions", "next_states", "rewards"):
            if isinstance(getattr(self, f), (list, tuple)):  # ragged: named, not numpy's error
                object.__setattr__(self, f, _rectangular(getattr(self, f), f"{cls}.{f}"))
        for f in ("states", "actions", "next_states"):
            arrs[f] = _int_array(getattr(self, f), f, cls)
        # string, complex, date and record rewards get a TypeError naming the field (a cast
        # parsed text as numbers, dropped the imaginary part, read a date as a number, or
        # failed with numpy's unlocated 'could not convert string to float')
        rw = _reward_host(self.rewards, f"{cls}.rewards")
        for f, a in (*arrs.items(), ("rewards", rw)):
            if a.ndim != 1:
                raise InvalidModelError(
                    f"{cls}.{f} must be one-dimensional (N,); got shape {a.shape}"
                )
        N = arrs["states"].shape[0]
        if N == 0:
            raise InvalidModelError(
                f"{cls} is empty (N = 0 transitions); an offline dataset needs N >= 1"
            )
        for f, a in (*arrs.items(), ("rewards", rw)):
            if a.shape[0] != N:
                raise InvalidModelError(
                    f"{cls}.{f} has length {a.shape[0]} but states has length {N}"
                )
        _check_range(arrs["states"], S, "states", cls, ("i",), "a state")
        _check_range(arrs["next_states"], S, "next_states", cls, ("i",), "a state")
        _check_range(arrs["actions"], A, "actions", cls, ("i",), "an action")
        _check_finite_host(rw, "rewards", cls, ("i",))
        for f, a in arrs.items():
            object.__setattr__(self, f, _frozen(a))
        object.__setattr__(self, "rewards", _frozen(rw))
        object.__setattr__(self, "S", S)
        object.__setattr__(self, "A", A)

    @property
    def N(self) -> int:
        """Number of transitions."""
        return int(self.states.shape[0])

    def check_compatible(self, *, S: int | None = None, A: int | None = None) -> None:
        """Located error when the dataset's ``S``/``A`` differ from a model's (or are not integers >= 1)."""
        # int(S) truncated S = 2.5 to a matching 2
        if S is not None and _positive(S, "check_compatible: S") != self.S:
            raise InvalidModelError(
                f"the dataset has S = {self.S} states but the model has S = {int(S)}"
            )
        if A is not None and _positive(A, "check_compatible: A") != self.A:
            raise InvalidModelError(
                f"the dataset has A = {self.A} actions but the model has A = {int(A)}"
            )

    def __repr__(self) -> str:
        return f"TransitionDataset(N={self.N}, S={self.S}, A={self.A})"


def sample_transition_dataset(
    mdp: FiniteMDP, nu: Any, N: int, *, rng: np.random.Generator | int, rewards: str = "mean"
) -> TransitionDataset:
    r"""``N`` i.i.d. tuples ``(s, a) ~ ν``, ``r`` (mean or Bernoulli), ``s' ~ P(·|s, a)``.

    ``ν[s, a]`` is the data distribution, e.g. the discounted occupancy
    ``d^{π_b}_ρ`` of a behaviour policy (:func:`rltheory.mdp.occupancy_measure`);
    this is the offline data model of Rashidinejad et al. (2021, §2).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.9)
    >>> d = sample_transition_dataset(mdp, np.array([[0.0, 1.0]]), 3, rng=0)
    >>> d.actions.tolist(), d.rewards.tolist()
    ([1, 1, 1], [1.0, 1.0, 1.0])

    Raises
    ------
    TypeError
        ``mdp`` is not a :class:`FiniteMDP` (a :class:`FiniteHorizonMDP` included: use
        :func:`~rltheory.mdp.offline_data.sample_episodes`).
    ValueError
        A batched model, ``nu`` of the wrong shape, ``N`` not a positive integer, or Bernoulli
        rewards outside [0, 1].
    InvalidModelError
        ``nu`` is not a distribution over ``(s, a)`` (located).
    """
    if not isinstance(mdp, FiniteMDP):
        # a FiniteHorizonMDP (P of shape (H, S, A, S)) failed with IndexError 'index 1 is out of
        # bounds for axis 1 with size 1' or drew from the wrong axes; None with an AttributeError
        raise TypeError(
            f"sample_transition_dataset needs a FiniteMDP; got {type(mdp).__name__}"
            + (
                " (use sample_episodes for a FiniteHorizonMDP)"
                if isinstance(mdp, FiniteHorizonMDP)
                else ""
            )
        )
    if mdp.batch_shape:
        raise ValueError(
            f"sample_transition_dataset needs a single model; got batch_shape={mdp.batch_shape}"
        )
    gen = _rng(rng)
    P = require_host(mdp.P, "sample_transition_dataset").astype(np.float64)
    R = require_host(mdp.R, "sample_transition_dataset").astype(np.float64)
    bern = _reward_mode(rewards, R)
    v = (
        _rectangular(nu, "nu")  # a ragged list is named, not numpy's unlocated error
        if isinstance(nu, (list, tuple))
        else np.asarray(require_host(nu, "sample_transition_dataset"))
    )
    if v.shape != (mdp.S, mdp.A):
        raise ValueError(f"nu must have shape (S, A) = {(mdp.S, mdp.A)}; got {v.shape}")
    # checked in nu's own dtype: a float32 occupancy measure is a distribution to float32 accuracy
    v = _distribution_host(v.reshape(-1), "nu", ("s*A+a",), "nu").reshape(mdp.S, mdp.A)
    n = _positive(N, "N")
    # O(N + S·A) memory: one draw compared every u with every CDF entry, an (N, S·A) boolean and
    # an (N, S) float copy of the successor CDFs (N = 1e5, S = 1e4: 8 GB for an 8 MB dataset).
    # searchsorted(side="right") is the first entry > u, the same index _draw gives, so a seed
    # gives the same dataset as before.
    flat = np.searchsorted(_cdf(v.reshape(-1)), gen.random(n), side="right")
    s, a = flat // mdp.A, flat % mdp.A
    mean = R[s, a]
    r = (gen.random(n) < mean).astype(np.float64) if bern else mean
    u = gen.random(n)
    cdf = _cdf(P)
    s2 = np.empty(n, dtype=np.int64)
    step = max(1, _DRAW_CHUNK // mdp.S)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        s2[lo:hi] = _draw(cdf[s[lo:hi], a[lo:hi]], u[lo:hi])
    return TransitionDataset(s, a, r, s2, mdp.S, mdp.A)
