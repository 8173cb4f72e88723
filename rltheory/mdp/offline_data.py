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

from typing import Any

import numpy as np

from .._validate import as_action_table, real_scalar
from ..backend import require_host, to_numpy
from ..errors import InvalidModelError
from ._dataset_checks import (
    _check_finite_host,
    _distribution_host,
    _policy_host,
    _positive,
    _real_host,
    _reward_mode,
)
from .dataset_io import FORMAT_VERSION, load_dataset, save_dataset  # noqa: F401 (FORMAT_VERSION re-exported)
from .episodes import EmpiricalModel, EpisodeDataset, empirical_model
from .model import FiniteHorizonMDP
from .preference_data import PreferenceDataset, sample_preferences, trajectory_returns
from .sample import _cdf, _draw, _rng
from .transition_data import TransitionDataset, sample_transition_dataset

# EpisodeDataset, EmpiricalModel (.episodes), TransitionDataset (.transition_data), PreferenceDataset
# (.preference_data) and save/load (.dataset_io) live in their own modules and are re-exported here.
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


def adversarial_policy(Q: Any) -> np.ndarray:
    r"""Deterministic worst-action policy ``π_adv(a|s) = 1[a = argmin_a' Q(s, a')]`` (one-hot, host).

    Used as the "other" component of :func:`behaviour_policy` so that the data
    concentrate on the actions a greedy learner must avoid. Ties go to the lowest index.
    ``Q`` must have shape ``(..., S, A)`` and finite entries (``ValueError`` naming ``Q``
    and the offending entry otherwise) and hold real numbers (``TypeError`` otherwise).

    Examples
    --------
    >>> adversarial_policy([[1.0, 0.0], [2.0, 3.0]]).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    # a float64 cast parsed a text Q and dropped the imaginary part of a complex one
    q = as_action_table(_real_host(Q, "adversarial_policy Q"), "Q", np)
    return np.eye(q.shape[-1])[np.argmin(q, axis=-1)]


def behaviour_policy(
    target: Any, alpha: float, *, other: Any = "uniform", drop: Any = None
) -> np.ndarray:
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
        renormalised. Integer or float 0/1 entries are read as booleans; any other value
        is refused.

    Returns
    -------
    numpy.ndarray, shape (..., S, A)

    Raises
    ------
    ValueError
        ``alpha`` outside [0, 1], shapes that disagree, an unknown ``other`` (or, for a
        deterministic ``target``, an ``other`` that is not a stochastic array and so
        does not give ``A``), a ``drop`` entry that is not boolean or 0/1, or a row left
        with no mass after dropping (the row is named).
    TypeError
        ``target`` or ``other`` holds text, complex numbers or dates.

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
    # real_scalar: a 0-d array such as np.array(0.5) is a number, as for the learners' delta; NaN
    # (refused) for bools, text and None
    a_ = real_scalar(alpha)
    if not 0.0 <= a_ <= 1.0:
        raise ValueError(f"alpha must be a number in [0, 1]; got {alpha!r}")
    t = np.asarray(target)
    if np.issubdtype(t.dtype, np.integer):
        o_arr = None if isinstance(other, str) else np.asarray(other)
        # A is read from other's last axis, which only a stochastic (..., S, A) array has: a
        # deterministic other's last axis is S (two deterministic S = 3 policies gave a
        # 3-action policy whatever A was) and a scalar has none (IndexError)
        if o_arr is None or o_arr.ndim < 2 or np.issubdtype(o_arr.dtype, np.integer):
            got = (
                repr(other)
                if o_arr is None
                else f"an array of dtype {o_arr.dtype} and shape {o_arr.shape}"
            )
            raise ValueError(
                "a deterministic target needs the number of actions: pass other as a stochastic "
                f"(..., S, A) array; got {got}"
            )
        t = _policy_host(t, o_arr.shape[-1], "target")
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
    pb = a_ * t + (1.0 - a_) * o
    if drop is not None:
        m = np.asarray(drop)
        if m.dtype != bool:
            # a cast to bool read 0.5, 2 and the text "False" as True (dropped)
            ok = np.isin(m, (0, 1)) if m.dtype.kind in "iuf" else np.zeros(m.shape, bool)
            if not ok.all():
                idx = tuple(int(i) for i in np.argwhere(~ok)[0]) if m.ndim else ()
                raise ValueError(
                    f"drop must be a boolean mask (or 0/1 entries); drop{list(idx)} = {m[idx].item()!r}"
                )
            m = m.astype(bool)
        if m.shape != pb.shape:
            raise ValueError(f"drop must have the policy's shape {pb.shape}; got {m.shape}")
        pb = np.where(m, 0.0, pb)
    mass = pb.sum(-1, keepdims=True)
    if np.any(mass <= 0):
        idx = tuple(int(i) for i in np.argwhere(mass[..., 0] <= 0)[0])
        raise ValueError(
            f"behaviour policy row {idx} has no mass left after mixing (alpha={a_:g}) and dropping; "
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
        raise ValueError(
            f"{field} must have shape (H, S, A) = {(H, S, A)}, (S, A) or integer (H, S)/(S,); got {p.shape}"
        )
    return p


def _rollout(
    P: np.ndarray,
    R: np.ndarray,
    pol: np.ndarray,
    mu: np.ndarray,
    K: int,
    gen: np.random.Generator,
    bernoulli: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def sample_episodes(
    fh: FiniteHorizonMDP,
    behaviour: Any,
    K: int,
    *,
    rng: np.random.Generator | int,
    rewards: str = "mean",
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
    P: Any,
    R: Any,
    behaviour: Any,
    K: int,
    *,
    rng: np.random.Generator | int,
    mu: Any = None,
    rewards: str = "mean",
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

    Raises
    ------
    InvalidModelError
        ``P`` or ``R`` of the wrong shape (an empty axis included), a row of ``P``,
        ``behaviour`` or ``mu`` that is not a distribution, or a non-finite ``R`` (the
        first entry is named).
    ValueError
        ``behaviour`` or ``mu`` of the wrong shape; Bernoulli rewards outside [0, 1].
    TypeError
        ``R`` does not hold real numbers (text, complex, dates).

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
    # P, behaviour and mu keep their float32/float64 dtype until checked: check_probability's
    # tolerance follows the dtype's eps, and a float32 game normalised in float32 failed the
    # float64 tolerance 1e-8 after a cast
    Ph = np.asarray(require_host(P, "sample_game_episodes"))
    # R of text or complex numbers: a float64 cast parsed "1" as a reward, dropped 1j silently
    Rh = _real_host(require_host(R, "sample_game_episodes"), "sample_game_episodes R")
    if Ph.ndim < 4:
        raise InvalidModelError(f"P must have shape (H, S, A_1, ..., A_n, S); got {Ph.shape}")
    H, S = Ph.shape[0], Ph.shape[1]
    acts = tuple(int(a) for a in Ph.shape[2:-1])
    n = len(acts)
    if Ph.shape[-1] != S:
        raise InvalidModelError(f"P's last axis must have S = {S} entries; got shape {Ph.shape}")
    if 0 in Ph.shape:
        raise InvalidModelError(
            f"P must have H, S and every A_i >= 1 (shape (H, S, A_1, ..., A_n, S)); got {Ph.shape}"
        )
    if Rh.shape != (n, H, S) + acts:
        raise InvalidModelError(
            f"R must have shape (n, H, S, A_1, ..., A_n) = {(n, H, S) + acts}; got {Rh.shape}"
        )
    # a NaN mean was blamed on the sampled EpisodeDataset.rewards, or with Bernoulli rewards
    # silently read as 0 (u < nan is False)
    _check_finite_host(
        Rh, "R", "sample_game_episodes", ("i", "h", "s") + tuple(f"a{j + 1}" for j in range(n))
    )
    J = int(np.prod(acts))
    Pf = _distribution_host(
        Ph.reshape(H, S, J, S), "P", ("h", "s", "joint a", "s'"), "P[h, s, a_1..a_n, :]"
    )
    beh = np.asarray(require_host(behaviour, "sample_game_episodes"))
    if beh.shape != (H, S) + acts:
        raise ValueError(
            f"behaviour must have shape (H, S, A_1, ..., A_n) = {(H, S) + acts}; got {beh.shape}"
        )
    bf = _distribution_host(
        beh.reshape(H, S, J), "behaviour", ("h", "s", "joint a"), "behaviour[h, s, ...]"
    )
    mu0 = np.full(S, 1.0 / S) if mu is None else np.asarray(mu)
    if mu0.shape != (S,):  # numpy's broadcast error or an IndexError otherwise
        raise ValueError(f"mu must have shape (S,) = ({S},); got {mu0.shape}")
    mu0 = _distribution_host(mu0, "mu", ("s",), "mu")
    Rf = np.moveaxis(Rh.reshape(n, H, S, J), 0, -1)
    bern = _reward_mode(rewards, Rf)
    st, ja, rw = _rollout(Pf, Rf, bf, mu0, _positive(K, "K"), gen, bern)
    return EpisodeDataset(st, _joint_actions(ja, acts), rw, S, acts)


def _joint_actions(ja: np.ndarray, acts: tuple[int, ...]) -> np.ndarray:
    """The players' actions ``(..., n)`` of the C-order joint indices ``ja`` over ``A_1 × ... × A_n``.

    Mixed-radix digits by integer division, not ``np.unravel_index``: numpy 2.4.6 returns wrong
    coordinates for some 2-D index arrays (e.g. shape ``(40000, 1)``: ``K`` episodes of horizon 1),
    which recorded joint actions that did not match the sampled rewards.
    """
    out = np.empty(ja.shape + (len(acts),), dtype=np.int64)
    rest = ja.astype(np.int64, copy=True)
    for i in range(len(acts) - 1, -1, -1):
        out[..., i] = rest % acts[i]
        rest //= acts[i]
    return out
