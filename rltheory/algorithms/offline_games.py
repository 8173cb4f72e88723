r"""Offline equilibrium learning in finite-horizon general-sum Markov games, and MARLHF.

A dataset of episodes with joint actions ``a = (a_1, …, a_n)`` and one reward per
player (:func:`rltheory.mdp.offline_data.sample_game_episodes`) gives, at every step,
confidence intervals on each player's Bellman backup (Hoeffding radius
``(H−h)√(ln(2/δ')/(2n_h(s,a)))`` on split data, or the elliptical radius
``β‖φ‖_{Λ_h^{-1}}`` for linear features). For a joint Markov policy ``π`` they give

* a **lower bound** on each player's value ``V̲_i^π ≤ V_i^π`` (pessimistic evaluation),
* an **upper bound** on each player's best deviation value ``V̄_i^† ≥ max_{dev} V_i^{dev}``
  (optimistic best response): coarse deviations ``(π_i', π_{−i})`` for Nash / CCE, strategy
  modifications ``φ∘π`` for CE,

and so the **gap relaxation** (Zhang, Bai & Jiang 2023, §4, "Bellman-consistent pessimism")

    ``Ĝ(π)(s) = Σ_i [ V̄_{i,0}^†(s) − V̲_{i,0}^π(s) ]  ≥  Gap(π)(s)``

on the confidence event — NashConv for Nash/CCE, the CE gap for CE, one framework for
the three solution concepts. Two learners minimise it:

* :func:`pessimistic_equilibrium_vi` — stage-wise: backward over ``h``, at every state
  the stage policy minimising ``Σ_i max(0, dev_i(σ; Q̄_i^†) − σ·Q̲_i)`` (an LP for CE/CCE; for
  Nash, the best product policy among the pure profiles and the Lemke–Howson equilibria
  of the pessimistic and point-estimate stage games). The policy at step ``h`` depends
  only on data of steps ``≥ h``, so with split data the certificate needs no union bound
  over policies (cf. Cui & Du 2022, strategy-wise pessimism).
* :func:`gap_relaxation_equilibrium` — ``argmin_{π∈Π} Ĝ(π)`` over a finite candidate set
  (union bound over ``|Π|``); with ``π* ∈ Π`` it satisfies the unilateral-coverage bound
  :func:`rltheory.bounds.offline.offline_game_gap_rate`.

:func:`equilibrium_gap` computes the exact NashConv / CCE gap / CE gap of a joint policy
in the true game (the same recursions with the exact backup); the stage quantities and the
recursion live in :mod:`rltheory.algorithms.stage_equilibria` and the confidence intervals in
:mod:`rltheory.algorithms.game_intervals` (re-exported here).

**MARLHF** (Zhang et al. 2024; implemented in :mod:`rltheory.algorithms.marlhf`, re-exported here):
rewards are unobserved; each player compares
trajectory pairs (Bradley–Terry). :func:`bradley_terry_mle` fits ``r_i`` (tabular,
``r_{i,h}(s, a)``) by ridge-regularised logistic MLE (Newton's method);
:func:`marlhf_equilibrium` picks, among candidate policies, the one minimising the upper
confidence bound on its Nash gap ``Σ_i max_{π_i'} [θ̂_iᵀΔ + β‖Δ‖_{Σ_i^{-1}}]`` with
``Δ = ψ(π_i', π_{−i}) − ψ(π)`` the occupancy difference (known dynamics).

Host-only (numpy, SciPy HiGHS for the stage LPs).

References
----------
Zhang, Y., Bai, Y., Jiang, N. (2023). Offline learning in Markov games with general
function approximation. ICML (interval estimation, gap relaxation; NE/CE/CCE).
Cui, Q., Du, S. S. (2022). When are offline two-player zero-sum Markov games solvable?
NeurIPS 35; and Provably efficient offline multi-agent RL via strategy-wise bonus. NeurIPS 35.
Zhang, N., Wang, X., Cui, Q., Zhou, R., Kakade, S., Du, S. (2024). Multi-agent RL from
human feedback: data coverage and algorithmic techniques (single-policy coverage is not
enough; unilateral coverage is).
Bradley, R. A., Terry, M. E. (1952). Rank analysis of incomplete block designs. Biometrika 39.
Liu, Q., Wang, T., Jin, C. (2021). A sharp analysis of model-based RL with self-play. ICML
(Markov CE via strategy modifications).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import (
    PROB_ATOL,
    _source_atol,
    as_distribution,
    check_int,
    real_scalar,
)
from ..backend import to_numpy
from ..errors import InvalidModelError
from ..mdp.offline_data import EpisodeDataset
from ._offline_common import _policy_array

# the confidence intervals live in .game_intervals
from .game_intervals import _estimator

# MARLHF lives in .marlhf; re-exported so every name stays importable here
from .marlhf import (  # noqa: F401
    BradleyTerryResult,
    MARLHFResult,
    bradley_terry_mle,
    marlhf_equilibrium,
    trajectory_features,
)

# the stage recursions and the exact gap live in .stage_equilibria; re-exported so every name
# (and the private ones the experiments and tests use) stays importable here
from .stage_equilibria import (  # noqa: F401
    CONCEPTS,
    _backward,
    _concept,
    _equilibrium_gap,
    _stage_lp,
    equilibrium_gap,
)

__all__ = [
    "GameOfflineResult",
    "BradleyTerryResult",
    "MARLHFResult",
    "equilibrium_gap",
    "interval_gap_bound",
    "pessimistic_equilibrium_vi",
    "gap_relaxation_equilibrium",
    "trajectory_features",
    "bradley_terry_mle",
    "marlhf_equilibrium",
]


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class GameOfflineResult:
    r"""Output of an offline equilibrium learner.

    Attributes
    ----------
    policy : array (H, S, A_1, …, A_n)
        Joint Markov policy (product for Nash).
    lower : array (n, H+1, S)
        ``V̲_{i,h}``: lower confidence bounds on each player's value of ``policy``.
    upper : array (n, H+1, S)
        ``V̄_{i,h}^†``: upper confidence bounds on each player's best deviation value.
    gap_bound : array (S,)
        ``Ĝ(s) = Σ_i max(0, V̄_{i,0}^†(s) − V̲_{i,0}(s))`` — certified upper bound on the gap of
        ``concept`` from ``s`` on the confidence event.
    concept : str
    delta : float
    counts : int array (H, S, J)
    candidate : int or None
        Index of the chosen candidate (:func:`gap_relaxation_equilibrium`).
    candidate_bounds : array or None
        ``μ·Ĝ`` of every candidate.
    """

    policy: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    gap_bound: np.ndarray
    concept: str
    delta: float
    counts: np.ndarray
    candidate: int | None = None
    candidate_bounds: np.ndarray | None = None


# --------------------------------------------------------------------------- checks and estimators
def _prob(delta: Any, name: str = "delta") -> float:
    d = real_scalar(
        delta
    )  # Python or numpy real scalar (not bool); NaN otherwise, which fails below
    if not 0.0 < d < 1.0:
        raise ValueError(f"{name} must be a probability in (0, 1); got {delta!r}")
    return d


def _check_game_data(data: Any, what: str) -> EpisodeDataset:
    if not isinstance(data, EpisodeDataset):
        raise TypeError(
            f"{what} needs an EpisodeDataset of joint actions; got {type(data).__name__}"
        )
    if data.rewards.ndim != 3:
        raise InvalidModelError(
            f"{what} needs joint actions and one reward per player (actions [K, H, n]); got a single-agent dataset"
        )
    bad = (data.rewards < 0) | (data.rewards > 1)
    if bad.any():
        k, h, i = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidModelError(
            f"{what} assumes rewards in [0, 1]; EpisodeDataset.rewards[k={k}, h={h}, i={i}] = {data.rewards[k, h, i]:.6g}"
        )
    return data


def interval_gap_bound(
    data: EpisodeDataset,
    policy: Any,
    *,
    concept: str = "nash",
    delta: float = 0.1,
    n_candidates: int = 1,
    features: Any = None,
    beta: Any = None,
    ridge: float = 1.0,
    split: bool = True,
) -> GameOfflineResult:
    r"""Interval estimation for one joint policy: ``V̲_i^π``, ``V̄_i^†`` and ``Ĝ(π) = Σ_i (V̄_i^† − V̲_i^π)``.

    The Bellman-consistent pessimism intervals of Zhang, Bai & Jiang (2023), tabular
    (Hoeffding, ``features=None``) or linear (``β‖φ‖_{Λ^{-1}}``) form. On the confidence
    event (probability ``≥ 1 − δ`` with ``split=True``; the union bound covers
    ``n_candidates`` policies chosen before seeing the data) ``Ĝ(π)(s) ≥ Gap(π)(s)`` at
    every state.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import sample_game_episodes
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    >>> d = sample_game_episodes(P, R, np.full((1, 1, 2, 2), 0.25), 4000, rng=0)
    >>> res = interval_gap_bound(d, np.eye(4)[0].reshape(1, 1, 2, 2))  # coordinated (0, 0)
    >>> bool(0.0 < res.gap_bound[0] < 0.2)
    True
    """
    data = _check_game_data(data, "interval_gap_bound")
    c = _concept(concept)
    dl = _prob(delta)
    n_candidates = check_int(n_candidates, "n_candidates")
    shape = data.action_shape
    # a copy (the result's policy was the caller's own array), a float32 one's rows divided by their sums
    pol = np.array(
        _renormalised_low_precision(_policy_array(policy, data.H, data.S, shape), policy)
    )
    est = _estimator(data, dl, n_candidates, features, beta, ridge, split)
    _, lo_V, hi_V = _backward(data.H, data.S, shape, est.q_bounds, c, pol)
    gap = np.sum(np.maximum(0.0, hi_V[:, 0] - lo_V[:, 0]), axis=0)
    return GameOfflineResult(pol, lo_V, hi_V, gap, c, dl, est.counts)


def pessimistic_equilibrium_vi(
    data: EpisodeDataset,
    *,
    concept: str = "nash",
    delta: float = 0.1,
    features: Any = None,
    beta: Any = None,
    ridge: float = 1.0,
    split: bool = True,
) -> GameOfflineResult:
    r"""Stage-wise pessimistic equilibrium value iteration (Nash, CE or CCE) from offline data.

    Backward over ``h``: with ``V̲_{h+1}`` (pessimistic values of the policy built so
    far) and ``V̄_{h+1}^†`` (optimistic deviation values) form ``Q̲_i`` and ``Q̄_i^†``
    (:func:`interval_gap_bound`) and choose at every ``s``

        ``π̂_h(s) = argmin_σ Σ_i max(0, dev_i(σ; Q̄_i^†(s)) − σ·Q̲_i(s))``

    (LP over joint distributions for CE/CCE; for Nash, product policies among the pure
    profiles and the Lemke–Howson equilibria of ``Q̲`` and of ``(Q̲ + Q̄)/2``).

    Returns
    -------
    GameOfflineResult
        ``gap_bound[s] ≥ Gap(π̂)(s)`` on the confidence event (probability ``≥ 1 − δ``
        with split data: ``π̂_h`` depends only on data of steps ``≥ h``, which is
        independent of the step-``h`` samples' noise given ``V̂_{h+1}``).

    Notes
    -----
    With exact intervals (infinite data) the recursion is Nash / CE / CCE value
    iteration (``Q̲ = Q̄``) and the gap is 0. The positive parts matter for CCE only: a
    player's CCE term can be negative (a correlated device may pay more than every fixed
    deviation), and minimising the plain sum traded one player's negative term against
    another's profitable deviation (for Nash and CE every term is ``≥ 0``). Under unilateral coverage every quantity
    the certificate needs is estimated at rate ``1/√n``; under single-policy coverage
    the deviation values stay uncertain and the certificate — and, by the lower
    bound of Cui & Du (2022), any learner's gap — does not vanish.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import sample_game_episodes
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    >>> d = sample_game_episodes(P, R, np.full((1, 1, 2, 2), 0.25), 4000, rng=0)
    >>> res = pessimistic_equilibrium_vi(d)
    >>> float(equilibrium_gap(P, R, res.policy)), bool(res.gap_bound[0] < 0.2)
    (0.0, True)
    """
    data = _check_game_data(data, "pessimistic_equilibrium_vi")
    c = _concept(concept)
    dl = _prob(delta)
    shape = data.action_shape
    if c == "nash" and len(shape) != 2:
        raise ValueError(
            f"concept='nash' handles two players; got {len(shape)} (use 'cce' or 'ce')"
        )
    est = _estimator(data, dl, 1, features, beta, ridge, split)
    pol, lo_V, hi_V = _backward(data.H, data.S, shape, est.q_bounds, c, None)
    gap = np.sum(np.maximum(0.0, hi_V[:, 0] - lo_V[:, 0]), axis=0)
    return GameOfflineResult(pol, lo_V, hi_V, gap, c, dl, est.counts)


def gap_relaxation_equilibrium(
    data: EpisodeDataset,
    candidates: list[Any],
    *,
    concept: str = "nash",
    delta: float = 0.1,
    mu: Any = None,
    features: Any = None,
    beta: Any = None,
    ridge: float = 1.0,
    split: bool = True,
) -> GameOfflineResult:
    r"""``π̂ = argmin_{π ∈ Π} μ·Ĝ(π)`` over a finite candidate set (Zhang, Bai & Jiang 2023, Algorithm 1, tabular/linear).

    Every candidate's interval estimates use the failure probability ``δ/|Π|`` so the
    certificates hold simultaneously. With ``π* ∈ Π`` (a Nash equilibrium of the true
    game) and unilateral coverage, ``NashConv(π̂) ≤ Ĝ(π̂) ≤ Ĝ(π*)``, bounded by
    :func:`rltheory.bounds.offline.offline_game_gap_rate`.

    Returns
    -------
    GameOfflineResult
        With ``candidate`` (index of π̂) and ``candidate_bounds`` (``μ·Ĝ`` per candidate).

    Raises
    ------
    ValueError
        No candidates, a candidate that is not a joint policy of the dataset's shape (named
        ``candidates[j]``, its bad entry located), or a ``mu`` that is not a distribution over the
        ``S`` states (shape, non-finite or negative entry, sum), located.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import sample_game_episodes
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    >>> d = sample_game_episodes(P, R, np.full((1, 1, 2, 2), 0.25), 4000, rng=0)
    >>> cands = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]
    >>> gap_relaxation_equilibrium(d, cands).candidate in (0, 3)
    True
    """
    data = _check_game_data(data, "gap_relaxation_equilibrium")
    try:  # a generator failed with "object of type 'generator' has no len()", unlocated
        candidates = list(candidates)
    except TypeError:
        raise TypeError(
            f"candidates must be a list of joint policies (H, S, A_1, ..., A_n); got "
            f"{type(candidates).__name__}"
        ) from None
    if len(candidates) < 1:
        raise ValueError("candidates must hold at least one joint policy")
    # checked like equilibrium_gap's mu: an unchecked one of the wrong length reached numpy's bare
    # matmul error, a NaN made every bound NaN (candidate 0 "chosen") and a negative one the argmax
    if mu is not None and np.shape(mu) != (data.S,):
        raise ValueError(f"mu must have shape (S,) = ({data.S},); got {np.shape(mu)}")
    m = (
        np.full(data.S, 1.0 / data.S)
        if mu is None
        else as_distribution(mu, "mu", data.S, np, np.float64)
    )
    # checked here under their own names: interval_gap_bound's message said 'policy' for any of them
    # a low-precision candidate (float32 rows 1 ± 1.2e-7, within float32's tolerance) has its rows
    # divided by their sums: its float64 copy was refused by interval_gap_bound at 1e-8, as 'policy'
    candidates = [
        _renormalised_low_precision(
            _policy_array(p, data.H, data.S, data.action_shape, f"candidates[{j}]"), p
        )
        for j, p in enumerate(candidates)
    ]
    results = [
        interval_gap_bound(
            data,
            p,
            concept=concept,
            delta=delta,
            n_candidates=len(candidates),
            features=features,
            beta=beta,
            ridge=ridge,
            split=split,
        )
        for p in candidates
    ]
    vals = np.array([float(m @ r.gap_bound) for r in results])
    j = int(np.argmin(vals))
    r = results[j]
    return GameOfflineResult(
        r.policy, r.lower, r.upper, r.gap_bound, r.concept, r.delta, r.counts, j, vals
    )


def _renormalised_low_precision(pol: np.ndarray, source: Any) -> np.ndarray:
    """``pol`` (a validated float64 copy of ``source``) with its rows divided by their sums when
    ``source``'s dtype is judged at a looser tolerance than float64's (float32, float16)."""
    if _source_atol(np.asarray(to_numpy(source)), np) <= PROB_ATOL:
        return pol
    n = pol.ndim - 2
    return pol / pol.sum(axis=tuple(range(2, 2 + n)), keepdims=True)
