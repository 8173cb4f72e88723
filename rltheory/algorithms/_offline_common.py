r"""Shared pieces of the offline learners: the result type and per-step sample statistics.

Private to :mod:`rltheory.algorithms` (used by :mod:`.offline`, :mod:`.conservative`,
:mod:`.offline_discounted`, :mod:`.hybrid` and :mod:`.offline_games`): per-step transition
samples with optional sample splitting (episode ``k`` feeds step ``k mod H`` only), count /
mean / variance grouping by state-action pair, feature checks, ridge statistics and the
generic clipped backward recursion ``Q̂_h = clip(B̂_h V̂_{h+1} − Γ_h, 0, H − h)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import _source_atol, _where, check_finite, real_scalar
from ..backend import to_numpy
from ..errors import InvalidModelError
from ..mdp._dataset_checks import _real_host
from ..mdp.offline_data import EpisodeDataset

__all__ = ["OfflineResult"]


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class OfflineResult:
    r"""Output of an offline value-based method.

    Attributes
    ----------
    policy : int array, shape (H, S)
        Greedy policy ``π̂_h(s) = argmax_a Q̂_h(s, a)`` (lowest index on ties).
    Q : array, shape (H, S, A)
        ``Q̂_h`` (pessimistic for LCB-VI/PEVI/CQL).
    V : array, shape (H+1, S)
        ``V̂_h(s) = max_a Q̂_h(s, a)``, ``V̂_H = 0``.
    bonus : array, shape (H, S, A)
        ``Γ_h(s, a)`` subtracted (``H − h`` on unvisited pairs for LCB-VI; zero for
        certainty equivalence; ``α(1/π̂_b − 1)`` for CQL's chosen action).
    counts : int array, shape (H, S, A)
        ``n_h(s, a)`` in the samples each step used.
    method : str
    delta : float or None
        Failure probability of the confidence event (pessimistic methods).
    Lambda : array (H, d, d) or None
        PEVI's ``Λ_h = Σ_τ φ_τ φ_τᵀ + λI``.
    """

    policy: np.ndarray
    Q: np.ndarray
    V: np.ndarray
    bonus: np.ndarray
    counts: np.ndarray
    method: str
    delta: float | None = None
    Lambda: np.ndarray | None = None


# --------------------------------------------------------------------------- step data
@dataclass(frozen=True)
class _Step:
    """Transitions used at step ``h``: state, action, reward, next state."""

    s: np.ndarray
    a: np.ndarray
    r: np.ndarray
    s2: np.ndarray


def _steps(data: EpisodeDataset, split: bool) -> list[_Step]:
    """Per-step samples; with ``split`` episode ``k`` feeds only step ``k mod H``."""
    H = data.H
    out = []
    k = np.arange(data.K)
    for h in range(H):
        idx = k[k % H == h] if split else k
        out.append(
            _Step(
                data.states[idx, h],
                data.actions[idx, h],
                data.rewards[idx, h],
                data.states[idx, h + 1],
            )
        )
    return out


def _check_data(data: Any, what: str, unit_rewards: bool) -> EpisodeDataset:
    if not isinstance(data, EpisodeDataset):
        raise TypeError(f"{what} needs an EpisodeDataset; got {type(data).__name__}")
    if data.n_players != 1:
        raise InvalidModelError(
            f"{what} is single-agent; the dataset has {data.n_players} players' joint actions"
        )
    if data.actions.ndim == 3:
        # a one-player game dataset (A = (A_1,), actions and rewards [K, H, 1]) is a single-agent one;
        # its [K, H, 1] actions met the [K] states in s·A + a and numpy's "object too deep for desired
        # array" came from bincount
        data = EpisodeDataset(
            data.states, data.actions[..., 0], data.rewards[..., 0], S=data.S, A=int(data.A[0])
        )
    if unit_rewards:
        bad = (data.rewards < 0) | (data.rewards > 1)
        if bad.any():
            k, h = (int(i) for i in np.argwhere(bad)[0])
            raise InvalidModelError(
                f"{what} assumes rewards in [0, 1] (its bonus and clipping use the range H − h); "
                f"EpisodeDataset.rewards[k={k}, h={h}] = {data.rewards[k, h]:.6g}"
            )
    return data


def _prob(delta: Any) -> float:
    # Python or numpy real scalar (not bool); NaN otherwise, which fails below
    d = real_scalar(delta)
    if not 0.0 < d < 1.0:
        raise ValueError(f"delta must be a probability in (0, 1); got {delta!r}")
    return d


def _flag(x: Any, name: str) -> bool:
    """A switch given as ``True``/``False`` (``numpy.bool_`` too): ``'False'`` is truthy, ``None`` falsy."""
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {x!r}")
    return bool(x)


def _group(step: _Step, S: int, A: int, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-pair count, mean and unbiased sample variance (two-pass) of targets ``y``."""
    sa = step.s * A + step.a
    n = np.bincount(sa, minlength=S * A).astype(np.float64)
    # targets near the float range (certainty equivalence)
    with np.errstate(over="ignore", invalid="ignore"):
        mean = np.where(n > 0, np.bincount(sa, weights=y, minlength=S * A) / np.maximum(n, 1), 0.0)
        if not np.all(np.isfinite(mean)) and np.all(np.isfinite(y)):
            # Σ y overflowed though every y is finite (two targets 1e308 gave the mean inf); Σ y/n stays
            # within max|y|. Only such pairs change: the others keep Σ y / n bit for bit.
            mean = np.where(
                np.isfinite(mean),
                mean,
                np.bincount(sa, weights=y / np.maximum(n, 1)[sa], minlength=S * A),
            )
        # two-pass Σ (y − ȳ)²: the one-pass (Σ y² − n ȳ²) cancelled to 0 for targets ~3 whose sample
        # variance is ~1e-15, and the Bernstein bonus (its only user) fell below its stated radius
        ss = np.bincount(sa, weights=(y - mean[sa]) ** 2, minlength=S * A)
        var = np.where(n > 1, ss / np.maximum(n - 1, 1), 0.0)
    return n.reshape(S, A), mean.reshape(S, A), np.maximum(var, 0.0).reshape(S, A)


def _features(features: Any, H: int, S: int, A: int) -> np.ndarray:
    phi = _real_host(features, "features")  # a float cast parsed text and dropped imaginary parts
    stationary = phi.ndim == 3 and phi.shape[:2] == (S, A)
    if not stationary and (phi.ndim != 4 or phi.shape[:3] != (H, S, A)):
        raise ValueError(
            f"features must have shape (S, A, d) = ({S}, {A}, d) or (H, S, A, d); got {phi.shape}"
        )
    # numpy's "cannot reshape array of size 0 into shape (0)" came from the ridge solve
    if phi.shape[-1] == 0:
        raise ValueError(
            f"features must have at least one dimension (d >= 1); got shape {phi.shape}"
        )
    if not np.all(np.isfinite(phi)):  # located in the array as given, before any broadcast over h
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(phi))[0])
        raise ValueError(f"features must be finite; features{list(idx)} = {phi[idx]}")
    return np.broadcast_to(phi, (H,) + phi.shape) if stationary else phi


def _ridge(step: _Step, phi: np.ndarray, ridge: float, h: int) -> tuple[np.ndarray, np.ndarray]:
    """``Λ_h = Σ φ φᵀ + λI`` and the sample feature matrix ``Φ_τ`` at step ``h`` (``phi`` is step h's)."""
    X = phi[step.s, step.a]  # [m, d]
    with np.errstate(over="ignore"):
        Lam = X.T @ X + ridge * np.eye(phi.shape[-1])
    if not np.all(np.isfinite(Lam)):  # an inf Λ would give Λ⁻¹ = 0: silent zero bonuses and radii
        raise ValueError(
            f"Λ_{h} = Σ φφᵀ + ridge·I overflows at step h={h}; rescale the features "
            f"(max |features| = {float(np.max(np.abs(phi))):.3g})"
        )
    return Lam, X


def _recursion(
    H: int, S: int, A: int, backup: Any, clip: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``Q̂_h = clip(B̂_h V̂_{h+1} − Γ_h)`` backwards; ``backup(h, V_next) -> (est, bonus, visited)``."""
    Q = np.zeros((H, S, A))
    V = np.zeros((H + 1, S))
    G = np.zeros((H, S, A))
    pol = np.zeros((H, S), dtype=np.int64)
    for h in range(H - 1, -1, -1):
        est, bonus, visited = backup(h, V[h + 1])
        q = est - bonus
        if clip:
            q = np.clip(q, 0.0, float(H - h))
        Q[h] = np.where(visited, q, 0.0)
        G[h] = bonus
        pol[h] = np.argmax(Q[h], axis=-1)
        V[h] = np.max(Q[h], axis=-1)
    return pol, Q, V, G


def _row_sum_tol(x: Any, n: int) -> float:
    """Row-sum tolerance of a length-``n`` distribution given as ``x``: check_probability's
    ``max(1e-8, 16 eps of x's dtype)·(1 + √n)``; a float32 uniform row over 7 actions sums to
    1 − 4.5e-8 and an absolute 1e-8 refused it."""
    return _source_atol(np.asarray(to_numpy(x)), np) * (1.0 + n**0.5)


def _policy_array(
    policy: Any, H: int, S: int, shape: tuple[int, ...], field: str = "policy"
) -> np.ndarray:
    pol = _real_host(policy, field)  # a float cast parsed text and dropped imaginary parts
    want = (H, S) + shape
    if pol.shape != want:
        raise ValueError(f"{field} must have shape (H, S, A_1, ..., A_n) = {want}; got {pol.shape}")
    names = ("h", "s") + tuple(f"a{i + 1}" for i in range(len(shape)))
    check_finite(pol, field, names)
    if np.any(pol < -1e-12):
        idx = tuple(int(i) for i in np.unravel_index(np.argmin(pol), pol.shape))
        raise ValueError(
            f"{field} must be non-negative; most negative entry {field}{_where(idx, names)} = {pol[idx]:.6g}"
        )
    flat = pol.reshape(H * S, -1)
    dev = np.abs(flat.sum(-1) - 1.0)
    if np.any(dev > _row_sum_tol(policy, flat.shape[-1])):
        row = int(np.argmax(dev))
        raise ValueError(
            f"{field}[h={row // S}, s={row % S}] must be a distribution over joint actions; "
            f"it sums to {float(flat[row].sum()):.12g}"
        )
    return pol
