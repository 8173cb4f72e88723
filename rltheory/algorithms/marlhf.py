r"""Multi-agent RL from human feedback (MARLHF): Bradley–Terry reward MLE and a Nash-gap UCB learner.

Rewards are unobserved; each player compares trajectory pairs by its own return
(Bradley–Terry). :func:`bradley_terry_mle` fits tabular ``r_{i,h}(s, a)`` by
ridge-regularised logistic MLE (Newton's method); :func:`marlhf_equilibrium` picks, among
candidate policies, the one minimising the upper confidence bound on its Nash gap
``Σ_i max_{π_i'} [θ̂_iᵀΔ + β‖Δ‖_{Σ_i^{-1}}]`` with ``Δ = ψ(π_i', π_{−i}) − ψ(π)`` the occupancy
difference (known dynamics). The certificate vanishes only when the comparisons cover
the equilibrium's unilateral deviations.

Cost of the certificate: with ``β > 0`` the inner maximum is a convex function of the occupancy,
so it is attained at a deterministic Markov deviation and these are enumerated, ``A_i^{H·S}`` of
them per player; a model with more than :data:`MAX_DEVIATIONS` (``2^14``, about a second per
player and candidate) is refused before any work. With ``β = 0`` the maximum is player ``i``'s
best-response value in the single-agent finite-horizon MDP induced by ``π_{−i}`` and ``θ̂_i``,
computed by backward induction in ``O(H S² A_1 A_2)`` without enumeration.

References
----------
Zhang, N., Wang, X., Cui, Q., Zhou, R., Kakade, S., Du, S. (2024). Multi-agent RL from
human feedback: data coverage and algorithmic techniques (single-policy coverage is not
enough; unilateral coverage is).
Bradley, R. A., Terry, M. E. (1952). Rank analysis of incomplete block designs. Biometrika 39.
Zhu, B., Jordan, M., Jiao, J. (2023). Principled RLHF from pairwise or K-wise comparisons. ICML.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import PROB_ATOL, _renormalised, _source_atol
from ..backend import _rectangular, to_numpy
from ..bounds.coverage import finite_horizon_occupancy
from ..mdp._dataset_checks import _real_host
from ..mdp.model import FiniteHorizonMDP
from ..mdp.offline_data import PreferenceDataset
from ._offline_common import _policy_array

# the reward fit lives in .bradley_terry; re-exported so every name stays importable here
from .bradley_terry import (  # noqa: F401
    BradleyTerryResult,
    _compared_pairs,
    _inverse_gram_norm,
    _row_space,
    _sigmoid,
    bradley_terry_mle,
    trajectory_features,
)

MAX_DEVIATIONS = 2**14
"""Largest number ``A_i^{H·S}`` of deterministic Markov deviations per player that
:func:`marlhf_equilibrium` enumerates (``β > 0``); about 0.06 ms each per candidate (their
occupancies are computed in batches)."""

__all__ = [
    "BradleyTerryResult",
    "MARLHFResult",
    "trajectory_features",
    "bradley_terry_mle",
    "marlhf_equilibrium",
]


@dataclass(frozen=True, eq=False)
class MARLHFResult:
    """Output of :func:`marlhf_equilibrium`: the chosen candidate, every candidate's gap UCB, the reward fit.

    ``policy`` is the chosen candidate as the float64 array that was certified (a float32
    candidate's rows divided by their sums)."""

    policy: np.ndarray
    candidate: int
    gap_ucb: np.ndarray
    fit: BradleyTerryResult


_OCCUPANCY_BATCH = 2**20
"""Largest number of floats in one batch of joint policies given to ``finite_horizon_occupancy``."""


def _occupancies(fh: FiniteHorizonMDP, pols: np.ndarray) -> np.ndarray:
    """Occupancies ``ψ(π)`` (flattened ``H·S·J``) of a stack ``pols[B, H, S, J]`` of joint policies of
    ``fh``, in batches of at most :data:`_OCCUPANCY_BATCH` floats (one validation per batch)."""
    B = pols.shape[0]
    step = max(1, _OCCUPANCY_BATCH // max(1, int(np.prod(pols.shape[1:]))))
    out = [
        np.asarray(finite_horizon_occupancy(fh, pols[j : j + step])).reshape(min(step, B - j), -1)
        for j in range(0, B, step)
    ]
    return np.concatenate(out, axis=0)


def _player_deviations(H: int, S: int, Ai: int) -> np.ndarray:
    """All deterministic Markov policies of one player as one-hot ``[A_i^{H·S}, H, S, A_i]`` arrays
    (in ``itertools.product`` order)."""
    choices = np.asarray(list(itertools.product(range(Ai), repeat=H * S)), dtype=np.intp)
    return np.eye(Ai)[choices.reshape(-1, H, S)]


def _deviation_count(H: int, S: int, Ai: int) -> tuple[bool, str]:
    """Whether ``A_i^{H·S}`` exceeds :data:`MAX_DEVIATIONS`, and the count as text (exact up to
    ``10^18``, else its power of ten) without forming an astronomically large integer."""
    n = H * S
    digits = n * math.log10(Ai) if Ai > 1 else 0.0
    if digits < 18:
        count = Ai**n
        return count > MAX_DEVIATIONS, f"{count}"
    return True, f"about 10^{digits:.1f}"


def _check_deviation_counts(H: int, S: int, shape: tuple[int, ...]) -> None:
    """Located ``ValueError`` when a player's ``A_i^{H·S}`` deviations exceed :data:`MAX_DEVIATIONS`."""
    for i, Ai in enumerate(shape):
        over, count = _deviation_count(H, S, Ai)
        if over:
            raise ValueError(
                f"marlhf_equilibrium with beta > 0 enumerates every deterministic Markov deviation of "
                f"player {i + 1}: A_{i + 1}^(H·S) = {Ai}^({H}·{S}) = {count} deviations, above "
                f"MAX_DEVIATIONS = {MAX_DEVIATIONS} (rltheory.algorithms.marlhf.MAX_DEVIATIONS); "
                f"beta = 0 computes the gap by backward induction instead"
            )


def _best_response_gain(
    Pj: np.ndarray, theta_i: np.ndarray, own: np.ndarray, pol: np.ndarray, m: np.ndarray, i: int
) -> float:
    r"""``max_{π_i'} θ_iᵀψ(π_i', π_{−i}) − θ_iᵀψ(π)`` by backward induction, ``max(0, ·)``.

    The induced single-agent MDP of player ``i`` against ``own = π_{−i}[H, S, A_{−i}]``:
    ``r_h(s, b) = Σ_c π_{−i}(c|h, s) θ_i[h, s, (b, c)]``, ``P_h(s'|s, b) = Σ_c π_{−i}(c|h, s)
    P_h(s'|s, (b, c))``; ``V_H = 0``, ``V_h(s) = max_b r_h(s, b) + Σ_s' P_h(s'|s, b) V_{h+1}(s')``.
    The best response's value is ``μᵀV_0``; the candidate's is ``θ_iᵀψ(π)`` evaluated the same
    way (``V_h^π = Σ_a π(a|h, s)(θ_i + P V_{h+1}^π)``), so the difference is ``≥ 0`` up to rounding.
    """
    H, S = pol.shape[:2]
    A1, A2 = pol.shape[2:]
    th = theta_i.reshape(H, S, A1, A2)
    P4 = Pj.reshape(H, S, A1, A2, S)
    v_best, v_pol = np.zeros(S), np.zeros(S)
    for h in range(H - 1, -1, -1):
        q_best = th[h] + P4[h] @ v_best  # [S, A1, A2]: own action value with the best continuation
        q_pol = th[h] + P4[h] @ v_pol
        if i == 0:  # player 1 deviates against y = π_2: average over a_2, maximise over a_1
            v_best = np.max(np.sum(q_best * own[h][:, None, :], axis=2), axis=1)
        else:
            v_best = np.max(np.sum(q_best * own[h][:, :, None], axis=1), axis=1)
        v_pol = np.sum(q_pol * pol[h], axis=(1, 2))
    return max(0.0, float(m @ v_best - m @ v_pol))


def _product_policy(cand: Any, H: int, S: int, shape: tuple[int, ...], c: int) -> np.ndarray:
    """``candidates[c]`` as a validated joint policy ``[H, S, A_1, A_2]`` that is a product ``π_1 ⊗ π_2``.

    The test is ``|π(a_1, a_2 | h, s) − π_1(a_1 | h, s) π_2(a_2 | h, s)| ≤ atol·(1 + √(A_1 A_2))`` at
    every entry, with the marginals ``π_1 = Σ_{a_2} π``, ``π_2 = Σ_{a_1} π`` and the probability
    rule of :func:`rltheory._validate.check_probability` for a row of ``A_1 A_2`` joint actions:
    ``atol = max(PROB_ATOL, 16·eps)`` of the dtype the candidate came in
    (``_validate._source_atol``), 1e-8 for float64 and about 1.9e-6 for float32. So a float32
    product passes, a float64 copy of one passes whenever its rows pass the row-sum rule (its
    entries are ~1e-8 from the product of their marginals; measured on 19485 random products up
    to 7 x 7, worst 0.92 of the tolerance), and a float64 candidate 2e-6 away from every product
    does not (``np.allclose``'s default ``rtol = 1e-5`` accepted it).
    """
    if isinstance(cand, (list, tuple)):  # a ragged list: named, not numpy's unlocated error
        cand = _rectangular(cand, f"candidates[{c}]")
    pol = _policy_array(cand, H, S, shape, field=f"candidates[{c}]")
    n = int(np.prod(shape))
    atol = _source_atol(np.asarray(to_numpy(cand)), np)
    tol = atol * (1.0 + n**0.5)
    x, y = pol.sum(axis=3), pol.sum(axis=2)
    dev = np.abs(pol - x[..., :, None] * y[..., None, :])
    if np.any(dev > tol):
        h, s, a1, a2 = (int(i) for i in np.unravel_index(np.argmax(dev), dev.shape))
        raise ValueError(
            f"candidates[{c}] must be a product policy π_1 ⊗ π_2 (within {tol:.3g} = "
            f"{atol:g}·(1 + √{n})); at "
            f"(h={h}, s={s}, a1={a1}, a2={a2}) it is {pol[h, s, a1, a2]:.12g}, the product of its "
            f"marginals {x[h, s, a1] * y[h, s, a2]:.12g} (|difference| = {dev[h, s, a1, a2]:.3g})"
        )
    return pol


def _check_fit_values(fit: BradleyTerryResult) -> None:
    """Located ``ValueError`` unless ``fit.theta`` and ``fit.gram`` are finite and ``fit.gram`` is
    symmetric positive definite: a NaN in either made every deviation's UCB term NaN, which the
    maximum with the zero deviation dropped, certifying a gap of 0 for every candidate; a gram
    that is not positive definite gives negative ``‖Δ‖²_{Σ^{-1}}``, whose β-term was clipped to 0.
    """
    for name in ("theta", "gram"):
        a = np.asarray(getattr(fit, name), dtype=np.float64)
        bad = ~np.isfinite(a)
        if np.any(bad):
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"fit.{name} must be finite; fit.{name}{list(idx)} = {a[idx]}")
    G = np.asarray(fit.gram, dtype=np.float64)
    asym = np.abs(G - G.T)
    if np.any(asym > 0):
        i, j = (int(k) for k in np.unravel_index(np.argmax(asym), asym.shape))
        raise ValueError(
            f"fit.gram must be symmetric (Σ = XᵀX + λI); fit.gram[{i}, {j}] = {G[i, j]!r} but "
            f"fit.gram[{j}, {i}] = {G[j, i]!r}"
        )
    try:
        np.linalg.cholesky(G)
    except np.linalg.LinAlgError:
        w = np.linalg.eigvalsh(G)
        hint = (
            ": a ridge below round-off of XᵀX makes it singular in floating point; pass fit=None "
            "and the ridge, whose Σ^{-1}-norms are then computed from X's SVD"
            if abs(w[0]) <= 1e-12 * abs(w[-1])
            else ""
        )
        raise ValueError(
            f"fit.gram must be positive definite (Σ = XᵀX + λI with λ > 0); its smallest "
            f"eigenvalue is {w[0]:.6g} (largest {w[-1]:.6g}){hint}"
        ) from None


def marlhf_equilibrium(
    prefs: PreferenceDataset,
    P: Any,
    candidates: list[Any],
    *,
    beta: float,
    mu: Any = None,
    ridge: float = 1e-3,
    fit: BradleyTerryResult | None = None,
) -> MARLHFResult:
    r"""MARLHF: Bradley–Terry reward MLE, then the candidate minimising a UCB on its Nash gap.

    ``UCB(π) = Σ_i max_{π_i'} [ θ̂_iᵀΔ_i + β ‖Δ_i‖_{Σ^{-1}} ]`` with
    ``Δ_i = ψ(π_i', π_{−i}) − ψ(π)`` (occupancy differences under the known dynamics
    ``P``; ``π_i'`` ranges over player ``i``'s deterministic Markov policies, which include
    the best response: enumerated for ``β > 0``, at most :data:`MAX_DEVIATIONS` per player;
    a backward induction for ``β = 0``, see the module docstring). On the event ``‖θ̂_i − θ_i‖_Σ ≤ β``,
    ``NashConv(π) ≤ UCB(π)`` for every product candidate ``π`` (Cauchy–Schwarz), so the
    output's NashConv is certified — and it vanishes only when the data cover the
    equilibrium's unilateral deviations (Zhang et al. 2024).

    Parameters
    ----------
    prefs : PreferenceDataset
    P : array (H, S, A_1, A_2, S)
        Rows judged at the probability tolerance of ``P``'s dtype (a float32 ``P`` at float32's
        ``16·eps``, its rows then divided by their sums, as for ``mu`` and the candidates).
    candidates : list (or any iterable) of product joint policies (H, S, A_1, A_2)
        Each entry within ``atol·(1 + √(A_1 A_2))`` of the product of its marginals, ``atol`` the
        probability tolerance of the candidate's dtype (1e-8 for float64, ``16·eps`` ≈ 1.9e-6
        for float32; :func:`_product_policy`).
    beta : float ≥ 0
        Confidence radius in the ``Σ``-norm.
    mu : array (S,), optional
    ridge : float
        ``λ`` of the MLE (ignored when ``fit`` is given).
    fit : BradleyTerryResult, optional
        A precomputed reward fit of ``prefs`` (:func:`bradley_terry_mle`).

    Raises
    ------
    ValueError
        ``beta`` not a finite number ``≥ 0``; ``InvalidModelError`` (a ``ValueError``) for ``P``
        rows or ``mu`` that are not distributions, before any work; ``β > 0`` and a player with more than
        :data:`MAX_DEVIATIONS` deterministic deviations ``A_i^{H·S}`` (before any work, naming
        ``H``, ``S``, ``A_i`` and the count); ``P``, ``mu`` or a candidate of the wrong shape, or a
        candidate that is not a product policy; no candidates; a ``fit`` whose shapes do not match
        ``prefs``, with a non-finite entry of ``theta`` or ``gram`` (located), or whose ``gram`` is
        not symmetric positive definite. ``TypeError`` for ``prefs`` not a
        :class:`PreferenceDataset` or ``fit`` not a :class:`BradleyTerryResult`.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import sample_game_episodes, sample_preferences
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    >>> beh = np.full((1, 1, 2, 2), 0.25)
    >>> t1, t2 = (sample_game_episodes(P, R, beh, 3000, rng=s) for s in (0, 1))
    >>> prefs = sample_preferences(t1, t2, R, rng=2)
    >>> cands = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]
    >>> marlhf_equilibrium(prefs, P, cands, beta=1.0).candidate in (0, 3)
    True
    """
    if not isinstance(prefs, PreferenceDataset):
        raise TypeError(f"marlhf_equilibrium needs a PreferenceDataset; got {type(prefs).__name__}")
    if (
        isinstance(beta, bool)
        or not isinstance(beta, (int, float, np.integer, np.floating))
        or not beta >= 0
    ):
        raise ValueError(
            f"beta must be a number >= 0; got {beta!r}"
        )  # numpy scalars too (not np.bool_)
    if not math.isfinite(beta):
        raise ValueError(f"beta must be finite; got {beta!r}")
    beta = float(beta)  # a numpy float32 would make every UCB term float32 (NEP 50)
    d0 = prefs.first
    if isinstance(P, (list, tuple)):  # a ragged list: named, not numpy's unlocated error
        P = _rectangular(P, "P")
    if isinstance(mu, (list, tuple)):
        mu = _rectangular(mu, "mu")
    Pf = _real_host(P, "P")  # a float cast parsed text and dropped imaginary parts
    shape = d0.action_shape
    H, S = d0.H, d0.S
    if Pf.shape != (H, S) + shape + (S,):
        raise ValueError(
            f"P must have shape (H, S, A_1, ..., A_n, S) = {(H, S) + shape + (S,)}; got {Pf.shape}"
        )
    if len(shape) != 2:
        raise ValueError(
            f"marlhf_equilibrium handles two players; got n = {len(shape)} (action shape {shape})"
        )
    J = int(np.prod(shape))
    Pj = Pf.reshape(H, S, J, S)
    # P's rows and mu are checked here, before any work (FiniteHorizonMDP's located errors): the
    # enumeration built the model only after the reward fit, and the backward induction never.
    # A float32 P or mu is judged at float32's tolerance and its rows divided by their sums, as
    # FiniteHorizonMDP and sample_game_episodes do (its float64 copy was refused at 1e-8)
    P_src = np.asarray(to_numpy(P))
    atol = _source_atol(P_src, np)
    if atol > PROB_ATOL:  # the rows' check in P's own precision
        FiniteHorizonMDP(P_src.reshape(H, S, J, S), np.zeros((H, S, J), dtype=P_src.dtype))
        Pj = _renormalised(Pj, atol, np)
    if mu is not None:
        m_src, mu = np.asarray(to_numpy(mu)), _real_host(mu, "mu")
        if m_src.dtype.kind == "f":  # FiniteHorizonMDP judges mu at its own precision
            mu = m_src
    fh = FiniteHorizonMDP(Pj, np.zeros((H, S, J)), mu)
    m = np.asarray(fh.initial_distribution(), dtype=np.float64)  # uniform when mu is None
    if beta > 0:  # A_i^(H·S) deviations: H = 3, S = 5, A = 3 gave 14M and did not finish
        _check_deviation_counts(H, S, shape)
    try:  # a generator failed with "object of type 'generator' has no len()"
        candidates = list(candidates)
    except TypeError:
        raise TypeError(
            f"candidates must be a list of product joint policies (H, S, A_1, A_2); got "
            f"{type(candidates).__name__}"
        ) from None
    if len(candidates) == 0:  # np.argmin's "attempt to get argmin of an empty sequence" before
        raise ValueError("candidates must hold at least one product joint policy; got none")
    # every candidate is checked before the reward fit (a bad last one failed after all the work)
    pols = [_product_policy(cand, H, S, shape, c) for c, cand in enumerate(candidates)]
    # a float32 candidate's rows divided by their sums: its float64 copy's rows (1 ± 6e-8) were
    # refused by the occupancy computation at 1e-8 ("each pi[s, :] must sum to 1", no candidate named)
    pols = [
        pol / pol.sum(axis=(2, 3), keepdims=True)
        if _source_atol(np.asarray(to_numpy(cand)), np) > PROB_ATOL
        else pol
        for pol, cand in zip(pols, candidates, strict=True)
    ]
    if (
        fit is not None
    ):  # a fit of other data: numpy's matmul core-dimension error in the UCB before
        if not isinstance(fit, BradleyTerryResult):
            raise TypeError(
                f"fit must be a BradleyTerryResult (from bradley_terry_mle); got {type(fit).__name__}"
            )
        want, D = (2, H, S) + shape, H * S * int(np.prod(shape))
        if tuple(fit.theta.shape) != want or tuple(fit.gram.shape) != (D, D):
            raise ValueError(
                f"fit does not match prefs: fit.theta must have shape (n, H, S, A_1, A_2) = {want} "
                f"and fit.gram ({D}, {D}); got {tuple(fit.theta.shape)} and {tuple(fit.gram.shape)}"
            )
        _check_fit_values(fit)
    quad = None
    if fit is None:
        fit = bradley_terry_mle(prefs, ridge=ridge)
        quad = _inverse_gram_norm(prefs, float(ridge))
    if quad is None:
        try:
            G_inv = np.linalg.inv(fit.gram)
        except np.linalg.LinAlgError:
            raise ValueError(
                "fit.gram is singular in floating point (a ridge below round-off of XᵀX); "
                "pass fit=None and the ridge, whose Σ^{-1}-norms are then computed from X's SVD"
            ) from None

        def quad(d: np.ndarray) -> np.ndarray:
            return np.sum((d @ G_inv) * d, axis=-1)

    theta = fit.theta.reshape(2, -1)
    devs = (
        [_player_deviations(H, S, shape[0]), _player_deviations(H, S, shape[1])]
        if beta > 0
        else None
    )
    ucb = np.zeros(len(candidates))
    if devs is None:  # β = 0: best responses by backward induction, no enumeration
        for c, pol in enumerate(pols):
            x, y = pol.sum(axis=3), pol.sum(axis=2)  # the players' marginals [H, S, A_i]
            ucb[c] = sum(
                _best_response_gain(Pj, theta[i], y if i == 0 else x, pol, m, i) for i in range(2)
            )
    else:
        n1, n2 = len(devs[0]), len(devs[1])
        per = 1 + n1 + n2  # the candidate and its unilateral deviations (π_1', π_2), (π_1, π_2')
        group = max(1, _OCCUPANCY_BATCH // (per * H * S * J))  # candidates per batch
        for c0 in range(0, len(pols), group):
            joints = []
            for pol in pols[c0 : c0 + group]:
                x, y = pol.sum(axis=3), pol.sum(axis=2)
                joints += [
                    pol[None],
                    devs[0][..., :, None] * y[None, ..., None, :],
                    x[None, ..., :, None] * devs[1][..., None, :],
                ]
            occ = _occupancies(fh, np.concatenate(joints).reshape(-1, H, S, J))
            for k in range(len(occ) // per):
                o = occ[k * per : (k + 1) * per]
                total = 0.0
                for i, delta in enumerate((o[1 : 1 + n1] - o[0], o[1 + n1 :] - o[0])):
                    vals = delta @ theta[i] + beta * np.sqrt(np.maximum(quad(delta), 0.0))
                    total += max(0.0, float(np.max(vals)))  # the deviation π_i' = π_i gives 0
                ucb[c0 + k] = total
    j = int(np.argmin(ucb))
    # the policy certified (pols[j]: a float32 candidate's rows divided by their sums); its float64
    # copy as given, rows 1 - 1.2e-7, was refused by equilibrium_gap and every float64 consumer.
    # A copy: a float64 candidate came back as the caller's own array, which later edits changed
    return MARLHFResult(np.array(pols[j], dtype=np.float64), j, ucb, fit)
