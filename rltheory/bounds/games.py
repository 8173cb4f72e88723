r"""Bounds of the game solvers and learning dynamics, as functions of their constants.

Zero-sum matrix games, two players with ``m`` and ``n`` actions, payoff range
``R = max A − min A``. For uniform averages ``gap(x̄_t, ȳ_t) = (Reg_x(t) + Reg_y(t))/t``
(Freund & Schapire 1999), so each regret bound below is an exploitability bound that
holds at EVERY iterate ``t``:

* Hedge with fixed steps ``η_x, η_y`` (Cesa-Bianchi & Lugosi 2006, Thm 2.2, losses
  rescaled from ``[0, 1]`` to range ``R``): ``Reg(t) ≤ ln k/η + η t R²/8``
  (:func:`hedge_regret_bound`, :func:`hedge_gap_bound`); tuned for horizon ``T``,
  ``Reg(T) ≤ R √(T ln k / 2)`` (:func:`hedge_tuned_regret`).
* Regret matching / RM+ (Hart & Mas-Colell 2000; Zinkevich et al. 2007, Thm 3;
  Tammelin et al. 2015): ``Reg(t) ≤ R √(k t)`` (:func:`regret_matching_gap_bound`).
* Optimistic Hedge / OGDA under the RVU property (Syrgkanis et al. 2015, Def. 3, Props. 5
  and 7): ``gap ≤ [(D_x + D_y)/η + η ρ²]/t`` (:func:`optimistic_gap_bound`), ``ρ²`` the
  error of the first round's prediction (:func:`optimistic_first_round`), for
  ``η ≤ 1/(2L)`` (OMWU, Prop. 7) or ``η ≤ 1/(√8 L)`` (OGDA, Prop. 5;
  :func:`optimistic_max_step`).

A constant game (``R = 0``, ``L = 0``), which the dynamics accept, is accepted too: every
regret is then 0, and each bound is its value at ``R = 0`` (0, or ``ln k/η`` for Hedge with a
fixed step; :func:`optimistic_max_step` is ``inf``).

Zero-sum Markov games: Shapley's operator is a γ-contraction (Shapley 1953, Thm 1):
``‖V_k − V*‖∞ ≤ γ^k ‖V_0 − V*‖∞`` (:func:`shapley_error_bound`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_discount
from ._argcheck import _count, _nonneg, _pos, _real_entries, _times, _where

__all__ = [
    "hedge_regret_bound",
    "hedge_gap_bound",
    "hedge_tuned_regret",
    "regret_matching_gap_bound",
    "optimistic_gap_bound",
    "optimistic_first_round",
    "optimistic_max_step",
    "shapley_error_bound",
]


def hedge_regret_bound(t: Any, k: int, eta: float, payoff_range: float) -> np.ndarray:
    r"""``Reg(t) ≤ ln k / η + η t R² / 8`` for Hedge with fixed step ``η`` on gains of range ``R``.

    Cesa-Bianchi & Lugosi (2006), Theorem 2.2 (stated for losses in [0, 1]; gains of range
    ``R`` are the affine image, with ``η`` acting on the unscaled gains). With one action
    (``k = 1``) the regret is 0 and ``ln k / η = 0`` for every ``η ≥ 0``, so ``η = 0`` is
    accepted there: it is :func:`~rltheory.games.hedge`'s default step ``√(8 ln 1/T)/R``.
    ``R = 0`` (a constant game, which the dynamics accept) is accepted: the theorem's bound is
    then ``ln k / η``, still an upper bound on the regret, which is 0.

    Examples
    --------
    >>> float(hedge_regret_bound(100, 2, 0.1, 1.0))
    8.181471805599453
    >>> float(hedge_regret_bound(100, 1, 0.0, 1.0))
    0.0
    >>> round(float(hedge_regret_bound(100, 2, 0.5, 0.0)), 12)  # ln 2 / 0.5
    1.386294361120
    """
    return _hedge_regret(t, k, eta, payoff_range, "k", "eta")


def _hedge_regret(
    t: Any, k: Any, eta: Any, payoff_range: Any, k_name: str, eta_name: str
) -> np.ndarray:
    """:func:`hedge_regret_bound` with the errors naming the caller's arguments."""
    tt, kk = _times(t), _count(k, k_name)
    e = _pos(eta, eta_name, allow_zero=kk == 1)
    R = _pos(payoff_range, "payoff_range", allow_zero=True)
    return (math.log(kk) / e if kk > 1 else 0.0) + e * tt * R * R / 8.0


def hedge_gap_bound(
    t: Any, m: int, n: int, eta_x: float, eta_y: float, payoff_range: float
) -> np.ndarray:
    r"""``gap(x̄_t, ȳ_t) ≤ [Reg_x(t) + Reg_y(t)] / t`` with the Hedge regret bounds of both players.

    Errors name the player's own argument (``m``/``eta_x`` or ``n``/``eta_y``); a player with
    one action may have step 0 (:func:`hedge_regret_bound`), as the steps
    :func:`~rltheory.games.hedge` reports for a ``1×n`` or ``m×1`` game are.

    Examples
    --------
    >>> round(float(hedge_gap_bound(8, 1, 2, 0.0, 1.0, 1.0)), 6)  # (ln 2/1 + 1·8·1/8)/8
    0.211643
    """
    tt = _times(t)
    return (
        _hedge_regret(tt, m, eta_x, payoff_range, "m", "eta_x")
        + _hedge_regret(tt, n, eta_y, payoff_range, "n", "eta_y")
    ) / tt


def hedge_tuned_regret(T: Any, k: int, payoff_range: float) -> np.ndarray:
    r"""``R √(T ln k / 2)``: Hedge's regret at horizon ``T`` with ``η = √(8 ln k / T)/R``.

    ``R = 0`` (a constant game) gives 0, the regret of every play in a constant game (the
    limit of the bound as ``R → 0``; the tuned step itself is then infinite).

    Examples
    --------
    >>> round(float(hedge_tuned_regret(800, 2, 1.0)), 6)
    16.651092
    >>> float(hedge_tuned_regret(800, 2, 0.0))
    0.0
    """
    TT = _times(T, "T")
    R = _pos(payoff_range, "payoff_range", allow_zero=True)
    return R * np.sqrt(TT * math.log(_count(k, "k")) / 2.0)


def regret_matching_gap_bound(t: Any, m: int, n: int, payoff_range: float) -> np.ndarray:
    r"""``gap(x̄_t, ȳ_t) ≤ R (√m + √n) / √t`` for regret matching and RM+.

    Each player's regret satisfies ``max_a R_t(a) ≤ ‖[R_t]_+‖₂ ≤ √(Σ_s ‖r_s‖₂²) ≤ R √(k t)``
    (Blackwell potential argument; Hart & Mas-Colell 2000; Zinkevich et al. 2007, Thm 3;
    Tammelin et al. 2015 for RM+), instantaneous regrets lying in ``[−R, R]``. ``R = 0`` (a
    constant game: every instantaneous regret is 0) gives 0.

    Examples
    --------
    >>> float(regret_matching_gap_bound(100, 4, 9, 2.0))
    1.0
    >>> float(regret_matching_gap_bound(100, 4, 9, 0.0))
    0.0
    """
    tt = _times(t)
    R = _pos(payoff_range, "payoff_range", allow_zero=True)
    root = _sqrt_count(_count(m, "m")) + _sqrt_count(_count(n, "n"))
    return (R * root if R > 0.0 else 0.0) / np.sqrt(
        tt
    )  # R = 0: 0 even for k beyond the float range


def _sqrt_count(k: int) -> float:
    """``√k`` for a validated count; ``inf`` beyond the float range (``math.sqrt(10**400)`` raised
    a bare ``OverflowError``, naming no argument)."""
    try:
        return math.sqrt(k)
    except OverflowError:
        return math.inf


def optimistic_max_step(lipschitz: float) -> float:
    r"""``η = 1/(√8 L)``: the step up to which the RVU terms of optimistic mirror descent cancel.

    RVU (Syrgkanis et al. 2015, Def. 3): ``Reg ≤ α + β Σ‖u_t − u_{t−1}‖*² − γ Σ‖x_t − x_{t−1}‖²``.
    In a zero-sum game ``‖u_t − u_{t−1}‖* ≤ L ‖y_t − y_{t−1}‖`` (and likewise for ``y``), so
    summing both players' inequalities the positive terms are bounded by the negative ones iff
    ``β L² ≤ γ``. With optimistic mirror descent's constants ``β = η``, ``γ = 1/(8η)``
    (Prop. 5, as cited: the statement could not be read in the sources available here) this
    is ``η ≤ 1/(√8 L)``, the value returned. Optimistic FTRL has ``γ = 1/(4η)`` (Prop. 7,
    read in a restatement that quotes the paper, see :mod:`rltheory.games.optimistic`),
    so for OMWU (optimistic FTRL with the entropy, the same iterates as the mirror-descent
    form) the terms cancel up to ``η = 1/(2L)``; with ``L = R/2`` on payoffs of range ``R``
    that is ``η ≤ 1/R``, twice the value returned. ``L = 0`` (a constant game, whose
    utilities never change) satisfies it for every step: ``inf``.

    Examples
    --------
    >>> round(optimistic_max_step(1.0), 12)
    0.353553390593
    >>> optimistic_max_step(0.0)
    inf
    """
    L = _pos(lipschitz, "lipschitz", allow_zero=True)
    return 1.0 / (math.sqrt(8.0) * L) if L > 0.0 else math.inf


def optimistic_gap_bound(
    t: Any, D_x: float, D_y: float, eta: float, *, first_round: float = 0.0
) -> np.ndarray:
    r"""``gap(x̄_t, ȳ_t) ≤ [(D_x + D_y)/η + η ρ²]/t`` for OMWU (``D = ln k``) or OGDA (``D = (1 − 1/k)/2``).

    Parameters
    ----------
    t : int or array of int ``≥ 1``
    D_x, D_y : float ``≥ 0``
        ``α = D/η`` of each player's RVU bound: the range of the regulariser over the simplex,
        ``ln k`` for the entropy (Prop. 7), ``max_x ½‖x − x_1‖² = (1 − 1/k)/2`` for the
        Euclidean one started at the uniform ``x_1`` (Prop. 5; ``1/2`` is a valid upper bound).
    eta : float ``> 0``
    first_round : float ``≥ 0``
        ``ρ² = ρ_x² + ρ_y²``, the squared dual-norm error of the first round's prediction.
        0 in the convention of Syrgkanis et al., where round 1 is predicted from a round-0
        profile and its error is cancelled like the others. rltheory's
        :func:`~rltheory.games.optimistic_hedge` and :func:`~rltheory.games.ogda` play the
        uniform strategies in round 1 with no prediction (the usual convention for OMWU):
        pass :func:`optimistic_first_round` of the game.

    Notes
    -----
    Valid for ``η ≤ 1/(2L)`` with OMWU and ``η ≤`` :func:`optimistic_max_step` with OGDA.
    Proof: a run whose first prediction is 0 is the run of Prop. 7 (or 5) on the utilities
    ``u_0 = c·1, u_1, u_2, …`` (the plays and the regret do not change when a constant vector
    is added to a utility), so the RVU sum keeps ``β ‖u_1 − c·1‖*²`` with no movement term to
    cancel it (``x_0 = x_1``); the other terms cancel as in :func:`optimistic_max_step`, and
    ``gap = (Reg_x + Reg_y)/t``. The term is needed: on ``A = [[1, 0]]`` at ``η = 1/R`` (the
    end of Prop. 7's range) OMWU's ``t·gap`` reaches ``1.003 · ln 2/η`` by ``t = 60``.

    Examples
    --------
    >>> float(optimistic_gap_bound(10, 0.5, 0.5, 0.25))
    0.4
    >>> float(optimistic_gap_bound(10, 0.5, 0.5, 0.25, first_round=2.0))  # + 0.25·2/10
    0.45
    """
    tt = _times(t)
    e = _pos(eta, "eta")
    rho2 = _nonneg(first_round, "first_round")
    return (
        (_pos(D_x, "D_x", allow_zero=True) + _pos(D_y, "D_y", allow_zero=True)) / e + e * rho2
    ) / tt


def optimistic_first_round(A: Any, *, euclidean: bool = False) -> Any:
    r"""``ρ_x² + ρ_y²``: the first-round prediction error of OMWU (ℓ∞) or OGDA (ℓ₂) on ``A``.

    Round 1 plays the uniform ``x_1, y_1`` and predicts nothing (:func:`optimistic_gap_bound`),
    so the error is that of the utilities ``u_1 = A y_1`` and ``v_1 = −Aᵀ x_1`` up to the
    best constant vector (constants change neither the plays nor the regret):
    ``ρ_x = (max u_1 − min u_1)/2`` in the ℓ∞ norm (OMWU), ``ρ_x = ‖u_1 − mean(u_1)‖₂`` in
    the ℓ₂ norm (OGDA, ``euclidean=True``); likewise ``ρ_y`` from ``v_1``. At most ``R²/2``
    (ℓ∞) and ``(m + n)R²/4`` (ℓ₂) for payoff range ``R``; 0 for a constant game.

    Parameters
    ----------
    A : array (..., m, n)
        Payoffs to the row (maximising) player; a batch gives an array of shape (...).

    Examples
    --------
    >>> float(optimistic_first_round([[1.0, 0.0]]))  # u_1 = [1/2] (ρ_x = 0), v_1 = [−1, 0]
    0.25
    >>> round(float(optimistic_first_round([[3.0, 0.0], [0.0, 1.0]], euclidean=True)), 12)
    1.0
    """
    if not isinstance(euclidean, (bool, np.bool_)):
        raise ValueError(f"euclidean must be True or False; got {euclidean!r}")
    a, _ = _real_entries(A, "A")
    if a.ndim < 2 or a.shape[-1] == 0 or a.shape[-2] == 0:
        raise ValueError(f"A must be an array (..., m, n) with m, n >= 1; got shape {a.shape}")
    bad = ~np.isfinite(a)
    if np.any(bad):
        raise ValueError(f"A must be finite; {_where(a, bad, 'A')}")
    u = np.mean(a, axis=-1)  # A y_1, y_1 uniform
    v = np.mean(a, axis=-2)  # −v_1 = Aᵀ x_1: the sign does not change the spread
    if euclidean:
        rx = np.sum((u - np.mean(u, axis=-1, keepdims=True)) ** 2, axis=-1)
        ry = np.sum((v - np.mean(v, axis=-1, keepdims=True)) ** 2, axis=-1)
    else:
        rx = ((np.max(u, axis=-1) - np.min(u, axis=-1)) / 2.0) ** 2
        ry = ((np.max(v, axis=-1) - np.min(v, axis=-1)) / 2.0) ** 2
    return rx + ry


def shapley_error_bound(k: Any, gamma: float, initial_error: Any) -> np.ndarray:
    r"""``‖V_k − V*‖∞ ≤ γ^k ‖V_0 − V*‖∞`` for Shapley value iteration (Shapley 1953, Thm 1).

    Examples
    --------
    >>> float(shapley_error_bound(2, 0.5, 4.0))
    1.0
    """
    g = float(check_discount(gamma, allow_none=False))  # type: ignore[arg-type]
    kk = _times(k, "k", minimum=0.0)
    frac = kk != np.floor(kk)
    if np.any(frac):  # V_k exists for whole k only: k = 2.5 gave 0.177, a bound on no iterate
        raise ValueError(f"k must hold integers (iteration counts); {_where(kk, frac, 'k')}")
    e0 = _nonneg(initial_error, "initial_error")
    return g**kk * e0
