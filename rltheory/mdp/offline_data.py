r"""Offline datasets: behaviour policies with a coverage knob, episodes, preferences, I/O.

An offline learner sees only a fixed dataset collected by a *behaviour* policy
``π_b``. Its coverage of a target policy ``π*`` is what every offline guarantee
depends on (single-policy concentrability ``C* = max_{h,s,a} d^{π*}_h(s,a)/d^{π_b}_h(s,a)``,
:mod:`rltheory.bounds.coverage`). This module builds

* behaviour policies with a **coverage knob** (:func:`behaviour_policy`):
  ``π_b = α π* + (1 − α) π_o`` with ``π_o`` uniform, adversarial (the worst
  action of a given ``Q``, :func:`adversarial_policy`) or any policy, and
  optionally *dropped* state-action pairs (``π_b(a|s) = 0`` on a mask, rows
  renormalised) so that chosen pairs are never observed;
* finite-horizon **episode** datasets ``{(s_h^k, a_h^k, r_h^k)}_{h<H, k<K}``
  (:class:`EpisodeDataset`, :func:`sample_episodes`), single-agent or with joint
  actions and one reward per player (:func:`sample_game_episodes`);
* discounted **transition** datasets of i.i.d. tuples ``(s, a) ~ ν``,
  ``r ~ r(s, a)``, ``s' ~ P(·|s, a)`` (:class:`TransitionDataset`,
  :func:`sample_transition_dataset`), the data model of Rashidinejad et al. (2021);
* **pairwise preferences** between trajectories with Bradley–Terry labels
  ``Pr(τ ≻ τ' for player i) = σ(R_i(τ) − R_i(τ'))`` (:class:`PreferenceDataset`,
  :func:`sample_preferences`);
* the **empirical model** (counts ``n_h(s,a)``, ``P̂_h``, ``r̂_h``, ``π̂_b``) of a
  dataset (:func:`empirical_model`);
* pickle-free **save/load** (:func:`save_dataset`, :func:`load_dataset`): one
  ``.npz`` archive of plain arrays plus a JSON header, written to a temporary file
  and renamed atomically.

Datasets are frozen, validated on construction and live on the host (numpy):
a state or action index out of range, a wrong shape or horizon, non-finite
rewards or an empty dataset raise :class:`~rltheory.errors.InvalidModelError`
naming the field, the offending index and value.

References
----------
Rashidinejad, P., Zhu, B., Ma, C., Jiao, J., Russell, S. (2021). Bridging offline
reinforcement learning and imitation learning: a tale of pessimism. NeurIPS 34 (§2: data
model; the ``C*`` coverage knob by mixing the optimal and a uniform policy).
Jin, Y., Yang, Z., Wang, Z. (2021). Is pessimism provably efficient for offline RL? ICML
(§2: episodic datasets from an arbitrary behaviour policy).
Zhang, N., Wang, X., Cui, Q., Zhou, R., Kakade, S., Du, S. (2024). Multi-agent RL from
human feedback: data coverage and algorithmic techniques (Bradley–Terry preferences per player).
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import check_probability
from ..backend import require_host, to_numpy
from ..errors import InvalidModelError
from ..trace import write_atomic
from .model import FiniteHorizonMDP, FiniteMDP
from .sample import _cdf, _draw, _rng

__all__ = [
    "EpisodeDataset",
    "TransitionDataset",
    "PreferenceDataset",
    "EmpiricalModel",
    "behaviour_policy",
    "adversarial_policy",
    "sample_episodes",
    "sample_game_episodes",
    "sample_transition_dataset",
    "sample_preferences",
    "trajectory_returns",
    "empirical_model",
    "save_dataset",
    "load_dataset",
]

#: version of the on-disk format written by :func:`save_dataset`.
FORMAT_VERSION = 1


# --------------------------------------------------------------------------- validation
def _int_array(x: Any, field: str, cls: str) -> np.ndarray:
    a = np.asarray(to_numpy(x))
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
        raise InvalidModelError(f"{cls}.{field} must hold integer indices; got dtype {a.dtype}")
    return a.astype(np.int64, copy=False)


def _locate(names: tuple[str, ...], idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(f"{n}={int(i)}" for n, i in zip(names, idx, strict=True)) + "]"


def _check_range(a: np.ndarray, n: int, field: str, cls: str, names: tuple[str, ...], what: str) -> None:
    bad = (a < 0) | (a >= n)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(
            f"{cls}.{field}{_locate(names, idx)} = {int(a[idx])} is not {what} index in [0, {n})"
        )


def _check_finite_host(a: np.ndarray, field: str, cls: str, names: tuple[str, ...]) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(f"{cls}.{field}{_locate(names, idx)} = {a[idx]} must be finite")


def _positive(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidModelError(f"{field} must be an integer >= 1; got {value!r}")
    return int(value)


def _action_sizes(A: Any, cls: str) -> tuple[int, ...]:
    if isinstance(A, (tuple, list)):
        if len(A) < 1:
            raise InvalidModelError(f"{cls}.A must be a positive int or a non-empty tuple of them; got {A!r}")
        return tuple(_positive(a, f"{cls}.A[{i}]") for i, a in enumerate(A))
    return (_positive(A, f"{cls}.A"),)


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

    Raises
    ------
    InvalidModelError
        Empty dataset (``K = 0`` or ``H = 0``), shapes that disagree, a state or
        action index out of range (the first offending ``[k=…, h=…]`` and its value are
        named), non-integer indices or non-finite rewards.

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
        rw = np.asarray(to_numpy(self.rewards), dtype=np.float64)
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
            raise InvalidModelError(f"{cls}.rewards must have shape {want_a} to match actions; got {rw.shape}")
        _check_range(st, S, "states", cls, ("k", "h"), "a state")
        if ac.ndim == 2:
            _check_range(ac, A[0], "actions", cls, ("k", "h"), "an action")
        else:
            for i in range(n):
                _check_range(ac[..., i], A[i], f"actions[..., {i}]", cls, ("k", "h"), f"a player-{i} action")
        _check_finite_host(rw, "rewards", cls, ("k", "h", "i")[: rw.ndim])
        object.__setattr__(self, "states", st)
        object.__setattr__(self, "actions", ac)
        object.__setattr__(self, "rewards", rw)
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
        """Flat joint-action index ``[K, H]`` (row-major over players; the action itself for n = 1)."""
        if self.actions.ndim == 2:
            return self.actions
        return np.ravel_multi_index(tuple(np.moveaxis(self.actions, -1, 0)), self.action_shape)

    def subset(self, episodes: Any) -> EpisodeDataset:
        """The dataset restricted to the given episode indices (or boolean mask)."""
        idx = np.asarray(episodes)
        return EpisodeDataset(self.states[idx], self.actions[idx], self.rewards[idx], self.S, self.A)

    def check_compatible(self, *, S: int | None = None, A: Any = None, H: int | None = None) -> None:
        """Raise a located :class:`InvalidModelError` when the dataset does not fit a model.

        Examples
        --------
        >>> import numpy as np
        >>> d = EpisodeDataset(np.zeros((2, 4), int), np.zeros((2, 3), int), np.zeros((2, 3)), S=1, A=1)
        >>> d.check_compatible(H=5)
        Traceback (most recent call last):
        ...
        rltheory.errors.InvalidModelError: wrong horizon: the dataset has H = 3 (states shape (2, 4)) but the model has H = 5
        """
        if H is not None and int(H) != self.H:
            raise InvalidModelError(
                f"wrong horizon: the dataset has H = {self.H} (states shape {self.states.shape}) "
                f"but the model has H = {int(H)}"
            )
        if S is not None and int(S) != self.S:
            raise InvalidModelError(f"the dataset has S = {self.S} states but the model has S = {int(S)}")
        if A is not None:
            want = tuple(A) if isinstance(A, (tuple, list)) else (int(A),)
            if want != self.action_shape:
                raise InvalidModelError(
                    f"the dataset has action sizes {self.action_shape} but the model has {want}"
                )

    def __repr__(self) -> str:
        return f"EpisodeDataset(K={self.K}, H={self.H}, S={self.S}, A={self.A})"


@dataclass(frozen=True, eq=False)
class TransitionDataset:
    r"""``N`` transition tuples ``(s_i, a_i, r_i, s'_i)`` for a discounted tabular MDP.

    Parameters
    ----------
    states, actions, next_states : int arrays, shape (N,)
    rewards : float array, shape (N,)
    S, A : int

    Raises
    ------
    InvalidModelError
        Empty (``N = 0``), lengths that differ, indices out of range (``[i=…]`` and
        the value are named), non-finite rewards.
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
        for f in ("states", "actions", "next_states"):
            arrs[f] = _int_array(getattr(self, f), f, cls)
        rw = np.asarray(to_numpy(self.rewards), dtype=np.float64)
        for f, a in (*arrs.items(), ("rewards", rw)):
            if a.ndim != 1:
                raise InvalidModelError(f"{cls}.{f} must be one-dimensional (N,); got shape {a.shape}")
        N = arrs["states"].shape[0]
        if N == 0:
            raise InvalidModelError(f"{cls} is empty (N = 0 transitions); an offline dataset needs N >= 1")
        for f, a in (*arrs.items(), ("rewards", rw)):
            if a.shape[0] != N:
                raise InvalidModelError(f"{cls}.{f} has length {a.shape[0]} but states has length {N}")
        _check_range(arrs["states"], S, "states", cls, ("i",), "a state")
        _check_range(arrs["next_states"], S, "next_states", cls, ("i",), "a state")
        _check_range(arrs["actions"], A, "actions", cls, ("i",), "an action")
        _check_finite_host(rw, "rewards", cls, ("i",))
        for f, a in arrs.items():
            object.__setattr__(self, f, a)
        object.__setattr__(self, "rewards", rw)
        object.__setattr__(self, "S", S)
        object.__setattr__(self, "A", A)

    @property
    def N(self) -> int:
        """Number of transitions."""
        return int(self.states.shape[0])

    def check_compatible(self, *, S: int | None = None, A: int | None = None) -> None:
        """Located error when the dataset's ``S``/``A`` differ from a model's."""
        if S is not None and int(S) != self.S:
            raise InvalidModelError(f"the dataset has S = {self.S} states but the model has S = {int(S)}")
        if A is not None and int(A) != self.A:
            raise InvalidModelError(f"the dataset has A = {self.A} actions but the model has A = {int(A)}")

    def __repr__(self) -> str:
        return f"TransitionDataset(N={self.N}, S={self.S}, A={self.A})"


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
                raise InvalidModelError(f"{cls}.{f} must be an EpisodeDataset; got {type(getattr(self, f)).__name__}")
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
            raise InvalidModelError(f"{cls}.labels must have shape (K, n) = {(a.K, a.n_players)}; got {y.shape}")
        _check_range(y, 2, "labels", cls, ("k", "i"), "a 0/1")
        object.__setattr__(self, "labels", y)

    @property
    def K(self) -> int:
        return self.first.K

    def __repr__(self) -> str:
        return f"PreferenceDataset(K={self.K}, H={self.first.H}, S={self.first.S}, A={self.first.A})"


# --------------------------------------------------------------------------- behaviour policies
def _policy_host(pi: Any, A: int | None, field: str) -> np.ndarray:
    p = require_host(pi, field) if not isinstance(pi, (list, tuple)) else np.asarray(pi)
    p = np.asarray(p)
    if np.issubdtype(p.dtype, np.integer) and p.dtype != bool:
        if A is None:
            raise ValueError(f"{field} is deterministic (integer); give A to one-hot encode it")
        _check_range(p.astype(np.int64), A, field, "policy", tuple(f"ax{j}" for j in range(p.ndim)), "an action")
        return np.eye(A)[p]
    p = p.astype(np.float64)
    check_probability(p, field, tuple(f"ax{j}" for j in range(p.ndim - 1)) + ("a",), f"{field}[..., :]")
    return p


def adversarial_policy(Q: Any) -> np.ndarray:
    r"""Deterministic worst-action policy ``π_adv(a|s) = 1[a = argmin_a' Q(s, a')]`` (one-hot, host).

    Used as the "other" component of :func:`behaviour_policy` so that the data
    concentrate on the actions a greedy learner must avoid. Ties go to the lowest index.

    Examples
    --------
    >>> adversarial_policy([[1.0, 0.0], [2.0, 3.0]]).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    q = np.asarray(to_numpy(Q), dtype=np.float64)
    return np.eye(q.shape[-1])[np.argmin(q, axis=-1)]


def behaviour_policy(target: Any, alpha: float, *, other: Any = "uniform", drop: Any = None) -> np.ndarray:
    r"""Coverage knob ``π_b = normalise( (α π* + (1 − α) π_o) · 1[(s, a) not dropped] )``.

    Parameters
    ----------
    target : array, shape (..., S, A) stochastic or (..., S) integer
        The policy to be covered (usually ``π*``).
    alpha : float in [0, 1]
        Weight of the target. ``α = 1`` gives expert data; ``α > 0`` gives
        single-policy concentrability ``C* ≤ 1/α`` when nothing is dropped.
    other : "uniform", or array like ``target``
        The remaining mass: the uniform policy or a given policy (e.g.
        :func:`adversarial_policy`).
    drop : bool array, shape (..., S, A), optional
        State-action pairs the behaviour never takes (``π_b(a|s) = 0``); each row is
        renormalised.

    Returns
    -------
    numpy.ndarray, shape (..., S, A)

    Raises
    ------
    ValueError
        ``alpha`` outside [0, 1], shapes that disagree, an unknown ``other``, or a row
        left with no mass after dropping (the row is named).

    Notes
    -----
    Without dropping, ``π_b(a|s) ≥ α π*(a|s)`` so every state-action occupancy obeys
    ``d^{π_b}_h(s,a) ≥ α^{h+1} d^{π*}_h(s,a)`` (the data policy follows ``π*`` for all
    ``h+1`` decisions with probability at least ``α^{h+1}``), so ``C* ≤ α^{−H}``; for
    one decision (``H = 1``, bandits) ``C* ≤ 1/α`` (the knob of Rashidinejad et al.
    2021, §2). :mod:`rltheory.bounds.coverage` computes ``C*`` exactly.

    Examples
    --------
    >>> behaviour_policy([[1.0, 0.0]], 0.5).tolist()
    [[0.75, 0.25]]
    >>> behaviour_policy([[1.0, 0.0, 0.0]], 0.0, drop=[[True, False, False]]).tolist()
    [[0.0, 0.5, 0.5]]
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0.0 <= float(alpha) <= 1.0:
        raise ValueError(f"alpha must be a number in [0, 1]; got {alpha!r}")
    t = np.asarray(target)
    if np.issubdtype(t.dtype, np.integer):
        if isinstance(other, str):
            raise ValueError("a deterministic target needs the number of actions: pass other as an (..., S, A) array")
        t = _policy_host(t, np.asarray(other).shape[-1], "target")
    else:
        t = _policy_host(t, None, "target")
    if isinstance(other, str):
        if other != "uniform":
            raise ValueError(f"other must be 'uniform' or a policy array; got {other!r}")
        o = np.full_like(t, 1.0 / t.shape[-1])
    else:
        o = _policy_host(other, t.shape[-1], "other")
        if o.shape != t.shape:
            raise ValueError(f"other has shape {o.shape} but target has shape {t.shape}")
    pb = float(alpha) * t + (1.0 - float(alpha)) * o
    if drop is not None:
        m = np.asarray(drop, dtype=bool)
        if m.shape != pb.shape:
            raise ValueError(f"drop must have the policy's shape {pb.shape}; got {m.shape}")
        pb = np.where(m, 0.0, pb)
    mass = pb.sum(-1, keepdims=True)
    if np.any(mass <= 0):
        idx = tuple(int(i) for i in np.argwhere(mass[..., 0] <= 0)[0])
        raise ValueError(
            f"behaviour policy row {idx} has no mass left after mixing (alpha={alpha}) and dropping; "
            "keep at least one action with positive probability in every state"
        )
    return pb / mass


# --------------------------------------------------------------------------- sampling
def _fh_policy(pi: Any, H: int, S: int, A: int, field: str) -> np.ndarray:
    p = np.asarray(to_numpy(pi) if not isinstance(pi, (list, tuple)) else pi)
    p = _policy_host(p, A, field)
    if p.shape == (S, A):
        p = np.broadcast_to(p, (H, S, A))
    if p.shape != (H, S, A):
        raise ValueError(f"{field} must have shape (H, S, A) = {(H, S, A)}, (S, A) or integer (H, S)/(S,); got {p.shape}")
    return p


def _rollout(P: np.ndarray, R: np.ndarray, pol: np.ndarray, mu: np.ndarray, K: int, gen: np.random.Generator,
             bernoulli: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised episodes: ``P[H,S,J,S]``, ``R[H,S,J,n]``, ``pol[H,S,J]``; returns states, joint actions, rewards."""
    H, S, J = pol.shape
    cdf_P, cdf_pi, cdf_mu = _cdf(P), _cdf(pol), _cdf(mu[None, :])
    states = np.empty((K, H + 1), dtype=np.int64)
    acts = np.empty((K, H), dtype=np.int64)
    rews = np.empty((K, H, R.shape[-1]))
    states[:, 0] = _draw(np.broadcast_to(cdf_mu, (K, S)), gen.random(K))
    for h in range(H):
        s = states[:, h]
        a = _draw(cdf_pi[h, s], gen.random(K))
        acts[:, h] = a
        mean = R[h, s, a]
        rews[:, h] = (gen.random(mean.shape) < mean).astype(np.float64) if bernoulli else mean
        states[:, h + 1] = _draw(cdf_P[h, s, a], gen.random(K))
    return states, acts, rews


def _reward_mode(rewards: str, R: np.ndarray) -> bool:
    if rewards not in ("mean", "bernoulli"):
        raise ValueError(f"rewards must be 'mean' or 'bernoulli'; got {rewards!r}")
    if rewards == "bernoulli" and (R.min() < 0 or R.max() > 1):
        idx = tuple(int(i) for i in np.unravel_index(np.argmax((R < 0) | (R > 1)), R.shape))
        raise ValueError(f"Bernoulli rewards need mean rewards in [0, 1]; R{list(idx)} = {R[idx]:.6g}")
    return rewards == "bernoulli"


def sample_episodes(
    fh: FiniteHorizonMDP, behaviour: Any, K: int, *, rng: np.random.Generator | int, rewards: str = "mean"
) -> EpisodeDataset:
    r"""``K`` episodes of a finite-horizon MDP under a (time-dependent) behaviour policy.

    ``s_0 ~ μ``, ``a_h ~ π_{b,h}(·|s_h)``, ``r_h`` = ``r_h(s_h, a_h)`` (``rewards="mean"``)
    or ``~ Bernoulli(r_h(s_h, a_h))`` (``rewards="bernoulli"``, needs ``r ∈ [0, 1]``),
    ``s_{h+1} ~ P_h(·|s_h, a_h)``; episodes are independent.

    Parameters
    ----------
    fh : FiniteHorizonMDP
        A single (unbatched) host model.
    behaviour : array, shape (H, S, A) or (S, A) stochastic, or integer (H, S)/(S,)
    K : int ≥ 1
    rng : numpy.random.Generator or int seed
    rewards : {"mean", "bernoulli"}

    Returns
    -------
    EpisodeDataset

    Notes
    -----
    ``E[#{k : (s_h^k, a_h^k) = (s, a)}] = K d^{π_b}_h(s, a)``, the behaviour occupancy
    that defines every coverage coefficient. Cost ``O(K H (S + A))``.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteHorizonMDP
    >>> fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=3)
    >>> d = sample_episodes(fh, np.array([1, 1, 1])[:, None], 4, rng=0)
    >>> d.rewards.sum(axis=1).tolist()
    [3.0, 3.0, 3.0, 3.0]
    """
    if not isinstance(fh, FiniteHorizonMDP):
        raise TypeError(f"sample_episodes needs a FiniteHorizonMDP; got {type(fh).__name__}")
    if fh.batch_shape:
        raise ValueError(f"sample_episodes needs a single model; got batch_shape={fh.batch_shape}")
    Kn = _positive(K, "K")
    gen = _rng(rng)
    P = require_host(fh.P, "sample_episodes").astype(np.float64)
    R = require_host(fh.R, "sample_episodes").astype(np.float64)
    bern = _reward_mode(rewards, R)
    pol = _fh_policy(behaviour, fh.H, fh.S, fh.A, "behaviour")
    mu = require_host(fh.initial_distribution(), "sample_episodes").astype(np.float64)
    st, ac, rw = _rollout(P, R[..., None], pol, mu, Kn, gen, bern)
    return EpisodeDataset(st, ac, rw[..., 0], fh.S, fh.A)


def sample_game_episodes(
    P: Any, R: Any, behaviour: Any, K: int, *, rng: np.random.Generator | int, mu: Any = None, rewards: str = "mean"
) -> EpisodeDataset:
    r"""``K`` episodes of an ``n``-player finite-horizon Markov game under a joint behaviour policy.

    Parameters
    ----------
    P : array, shape (H, S, A_1, …, A_n, S)
        ``P[h, s, a_1, …, a_n, s']``.
    R : array, shape (n, H, S, A_1, …, A_n)
        Mean reward of each player.
    behaviour : array, shape (H, S, A_1, …, A_n)
        Joint (possibly correlated) behaviour distribution over joint actions at each
        ``(h, s)``; a product policy is ``π_1 ⊗ … ⊗ π_n``.
    K : int ≥ 1
    rng : numpy.random.Generator or int seed
    mu : array (S,), optional
        Initial distribution (uniform when omitted).
    rewards : {"mean", "bernoulli"}

    Returns
    -------
    EpisodeDataset
        With ``actions[k, h, i]`` and ``rewards[k, h, i]`` per player.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2)[None, None], -np.eye(2)[None, None]])
    >>> beh = np.zeros((1, 1, 2, 2)); beh[0, 0, 1, 1] = 1.0
    >>> d = sample_game_episodes(P, R, beh, 2, rng=0)
    >>> d.actions[:, 0].tolist(), d.rewards[:, 0].tolist()
    ([[1, 1], [1, 1]], [[1.0, -1.0], [1.0, -1.0]])
    """
    gen = _rng(rng)
    Ph = np.asarray(require_host(P, "sample_game_episodes"), dtype=np.float64)
    Rh = np.asarray(require_host(R, "sample_game_episodes"), dtype=np.float64)
    if Ph.ndim < 4:
        raise InvalidModelError(f"P must have shape (H, S, A_1, ..., A_n, S); got {Ph.shape}")
    H, S = Ph.shape[0], Ph.shape[1]
    acts = tuple(int(a) for a in Ph.shape[2:-1])
    n = len(acts)
    if Ph.shape[-1] != S:
        raise InvalidModelError(f"P's last axis must have S = {S} entries; got shape {Ph.shape}")
    if Rh.shape != (n, H, S) + acts:
        raise InvalidModelError(f"R must have shape (n, H, S, A_1, ..., A_n) = {(n, H, S) + acts}; got {Rh.shape}")
    J = int(np.prod(acts))
    Pf = Ph.reshape(H, S, J, S)
    check_probability(Pf, "P", ("h", "s", "joint a", "s'"), "P[h, s, a_1..a_n, :]")
    beh = np.asarray(require_host(behaviour, "sample_game_episodes"), dtype=np.float64)
    if beh.shape != (H, S) + acts:
        raise ValueError(f"behaviour must have shape (H, S, A_1, ..., A_n) = {(H, S) + acts}; got {beh.shape}")
    bf = beh.reshape(H, S, J)
    check_probability(bf, "behaviour", ("h", "s", "joint a"), "behaviour[h, s, ...]")
    mu0 = np.full(S, 1.0 / S) if mu is None else np.asarray(mu, dtype=np.float64)
    check_probability(mu0, "mu", ("s",), "mu")
    Rf = np.moveaxis(Rh.reshape(n, H, S, J), 0, -1)
    bern = _reward_mode(rewards, Rf)
    st, ja, rw = _rollout(Pf, Rf, bf, mu0, _positive(K, "K"), gen, bern)
    ac = np.stack(np.unravel_index(ja, acts), axis=-1)
    return EpisodeDataset(st, ac, rw, S, acts)


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
    """
    if mdp.batch_shape:
        raise ValueError(f"sample_transition_dataset needs a single model; got batch_shape={mdp.batch_shape}")
    gen = _rng(rng)
    P = require_host(mdp.P, "sample_transition_dataset").astype(np.float64)
    R = require_host(mdp.R, "sample_transition_dataset").astype(np.float64)
    bern = _reward_mode(rewards, R)
    v = np.asarray(require_host(nu, "sample_transition_dataset") if not isinstance(nu, list) else nu, dtype=np.float64)
    if v.shape != (mdp.S, mdp.A):
        raise ValueError(f"nu must have shape (S, A) = {(mdp.S, mdp.A)}; got {v.shape}")
    check_probability(v.reshape(-1), "nu", ("s*A+a",), "nu")
    n = _positive(N, "N")
    flat = _draw(np.broadcast_to(_cdf(v.reshape(1, -1)), (n, v.size)), gen.random(n))
    s, a = flat // mdp.A, flat % mdp.A
    mean = R[s, a]
    r = (gen.random(n) < mean).astype(np.float64) if bern else mean
    s2 = _draw(_cdf(P)[s, a], gen.random(n))
    return TransitionDataset(s, a, r, s2, mdp.S, mdp.A)


def trajectory_returns(data: EpisodeDataset, R: Any) -> np.ndarray:
    r"""True returns ``R_i(τ_k) = Σ_h r_{i,h}(s_h^k, a_h^k)`` of each episode under mean rewards ``R``.

    ``R`` has shape (H, S, A) (one player) or (n, H, S, A_1, …, A_n); returns shape (K, n).
    """
    Rh = np.asarray(require_host(R, "trajectory_returns"), dtype=np.float64)
    if data.n_players == 1 and Rh.ndim == 3:
        Rh = Rh[None]
    want = (data.n_players, data.H, data.S) + data.action_shape
    if Rh.shape != want:
        raise InvalidModelError(f"R must have shape (n, H, S, A_1, ..., A_n) = {want}; got {Rh.shape}")
    Rf = Rh.reshape(data.n_players, data.H, data.S, -1)
    h = np.arange(data.H)[None, :]
    return Rf[:, h, data.states[:, :-1], data.joint_actions()].sum(axis=-1).T


def sample_preferences(
    first: EpisodeDataset, second: EpisodeDataset, R: Any, *, rng: np.random.Generator | int, scale: float = 1.0
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
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive finite number; got {scale!r}")
    diff = float(scale) * (trajectory_returns(first, R) - trajectory_returns(second, R))
    p = 0.5 * (1.0 + np.tanh(0.5 * diff))  # σ(diff), overflow-free
    y = (gen.random(p.shape) < p).astype(np.int64)
    return PreferenceDataset(first, second, y)


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
        ``r̂_{i,h}(s, a)`` = mean observed reward (0 where unvisited).
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


def empirical_model(data: EpisodeDataset) -> EmpiricalModel:
    r"""Counts, empirical kernel ``P̂_h``, mean rewards ``r̂_h`` and behaviour ``π̂_b`` of a dataset.

    Examples
    --------
    >>> import numpy as np
    >>> d = EpisodeDataset(np.array([[0, 1], [0, 0]]), np.array([[1], [1]]), np.array([[1.0], [0.0]]), S=2, A=2)
    >>> m = empirical_model(d)
    >>> m.counts[0, 0].tolist(), m.P[0, 0, 1].tolist(), float(m.R[0, 0, 0, 1])
    ([0, 2], [0.5, 0.5], 0.5)
    """
    H, S, K = data.H, data.S, data.K
    J = int(np.prod(data.action_shape))
    ja = data.joint_actions()
    h = np.broadcast_to(np.arange(H)[None, :], (K, H))
    sa = (h * S + data.states[:, :-1]) * J + ja
    counts = np.bincount(sa.ravel(), minlength=H * S * J).reshape(H, S, J)
    trans = np.bincount((sa * S + data.states[:, 1:]).ravel(), minlength=H * S * J * S).reshape(H, S, J, S)
    rw = data.rewards if data.rewards.ndim == 3 else data.rewards[..., None]
    rsum = np.stack([np.bincount(sa.ravel(), weights=rw[..., i].ravel(), minlength=H * S * J) for i in range(rw.shape[-1])])
    safe = np.maximum(counts, 1)
    P = trans / safe[..., None]
    R = rsum.reshape(-1, H, S, J) / safe[None]
    ns = counts.sum(-1, keepdims=True)
    beh = counts / np.maximum(ns, 1)
    return EmpiricalModel(counts, P, R, beh, data.action_shape)


# --------------------------------------------------------------------------- save / load
_FIELDS = {
    "EpisodeDataset": ("states", "actions", "rewards"),
    "TransitionDataset": ("states", "actions", "rewards", "next_states"),
}


def _arrays(data: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    kind = type(data).__name__
    if kind == "PreferenceDataset":
        arrs = {"labels": data.labels}
        for part in ("first", "second"):
            sub, _ = _arrays(getattr(data, part))
            arrs.update({f"{part}.{k}": v for k, v in sub.items()})
        A = data.first.A
        meta = {"S": data.first.S, "A": list(A) if isinstance(A, tuple) else A}
    elif kind in _FIELDS:
        arrs = {f: getattr(data, f) for f in _FIELDS[kind]}
        meta = {"S": data.S, "A": list(data.A) if isinstance(data.A, tuple) else data.A}
    else:
        raise TypeError(f"save_dataset saves EpisodeDataset, TransitionDataset or PreferenceDataset; got {kind}")
    return arrs, {"kind": kind, "format_version": FORMAT_VERSION, **meta}


def save_dataset(data: EpisodeDataset | TransitionDataset | PreferenceDataset, path: str | os.PathLike) -> Path:
    """Write a dataset to ``path`` (``.npz``) atomically, without pickle.

    The archive holds the dataset's integer/float arrays and a ``header`` entry: a
    JSON string ``{"kind", "format_version", "S", "A"}``. The archive is built in memory
    and written by :func:`rltheory.trace.write_atomic` (temporary file in the same
    directory, fsync, ``os.replace``), so a crash never leaves a half-written dataset.

    Returns
    -------
    pathlib.Path
        The path written (``.npz`` appended when missing).
    """
    arrs, meta = _arrays(data)
    p = Path(path)
    if p.suffix != ".npz":
        p = p.with_name(p.name + ".npz")
    buf = io.BytesIO()
    np.savez(buf, header=np.asarray(json.dumps(meta, sort_keys=True)), **arrs)
    return write_atomic(p, buf.getvalue())


def _build(kind: str, arrs: dict[str, np.ndarray], meta: dict[str, Any]) -> Any:
    A = tuple(meta["A"]) if isinstance(meta["A"], list) else meta["A"]
    if kind == "EpisodeDataset":
        return EpisodeDataset(arrs["states"], arrs["actions"], arrs["rewards"], meta["S"], A)
    if kind == "TransitionDataset":
        return TransitionDataset(arrs["states"], arrs["actions"], arrs["rewards"], arrs["next_states"], meta["S"], A)
    parts = {}
    for part in ("first", "second"):
        sub = {k.split(".", 1)[1]: v for k, v in arrs.items() if k.startswith(part + ".")}
        parts[part] = _build("EpisodeDataset", sub, meta)
    return PreferenceDataset(parts["first"], parts["second"], arrs["labels"])


def load_dataset(path: str | os.PathLike) -> EpisodeDataset | TransitionDataset | PreferenceDataset:
    """Read a dataset written by :func:`save_dataset` (``allow_pickle=False``) and re-validate it.

    Raises
    ------
    InvalidModelError
        The file lacks the header or an array, names an unknown kind or format
        version, or holds an invalid dataset (the located message of the dataset
        class, prefixed with the path).
    """
    p = Path(path)
    with np.load(p, allow_pickle=False) as z:
        arrs = {k: z[k] for k in z.files}
    if "header" not in arrs:
        raise InvalidModelError(f"{p}: not an rltheory dataset (no 'header' entry; entries: {sorted(arrs)})")
    try:
        meta = json.loads(str(arrs.pop("header")))
    except json.JSONDecodeError as exc:
        raise InvalidModelError(f"{p}: header is not valid JSON ({exc})") from None
    kind = meta.get("kind")
    if kind not in ("EpisodeDataset", "TransitionDataset", "PreferenceDataset"):
        raise InvalidModelError(f"{p}: unknown dataset kind {kind!r}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise InvalidModelError(f"{p}: format_version {meta.get('format_version')!r} is not {FORMAT_VERSION}")
    need = _FIELDS.get(kind) or ("labels",) + tuple(f"{q}.{f}" for q in ("first", "second") for f in _FIELDS["EpisodeDataset"])
    missing = [f for f in need if f not in arrs]
    if missing:
        raise InvalidModelError(f"{p}: {kind} archive lacks arrays {missing}")
    try:
        return _build(kind, arrs, meta)
    except InvalidModelError as exc:
        raise InvalidModelError(f"{p}: {exc}") from None
