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
* Optimistic Hedge / OGDA under the RVU property (Syrgkanis et al. 2015, Props. 5, 7)
  with ``η ≤ 1/(√8 L)``: ``gap ≤ (D_x + D_y)/(η t)`` (:func:`optimistic_gap_bound`).

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
from ._argcheck import _count, _nonneg, _pos, _times

__all__ = [
    "hedge_regret_bound",
    "hedge_gap_bound",
    "hedge_tuned_regret",
    "regret_matching_gap_bound",
    "optimistic_gap_bound",
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
    return (
        _pos(payoff_range, "payoff_range", allow_zero=True)
        * (math.sqrt(_count(m, "m")) + math.sqrt(_count(n, "n")))
        / np.sqrt(tt)
    )


def optimistic_max_step(lipschitz: float) -> float:
    r"""Largest step ``η = 1/(√8 L)`` for which the RVU terms cancel in a zero-sum game.

    RVU (Syrgkanis et al. 2015, Def. 3): ``Reg ≤ α + β Σ‖u_t − u_{t−1}‖*² − γ Σ‖x_t − x_{t−1}‖²``
    with ``β = η`` and ``γ ≥ 1/(8η)`` for optimistic mirror descent (Prop. 5; ``1/(4η)`` for
    optimistic FTRL, Prop. 7). In a zero-sum game ``‖u_t − u_{t−1}‖* ≤ L ‖y_t − y_{t−1}‖``, so
    summing both players' RVU bounds the positive terms by the negative ones iff
    ``η L² ≤ 1/(8η)``. ``L = 0`` (a constant game, whose utilities never change) satisfies
    it for every step: ``inf``.

    Examples
    --------
    >>> round(optimistic_max_step(1.0), 12)
    0.353553390593
    >>> optimistic_max_step(0.0)
    inf
    """
    L = _pos(lipschitz, "lipschitz", allow_zero=True)
    return 1.0 / (math.sqrt(8.0) * L) if L > 0.0 else math.inf


def optimistic_gap_bound(t: Any, D_x: float, D_y: float, eta: float) -> np.ndarray:
    r"""``gap(x̄_t, ȳ_t) ≤ (D_x + D_y)/(η t)`` for OMWU (``D = ln k``) or OGDA (``D = 1/2``).

    Valid for ``η ≤`` :func:`optimistic_max_step` (Syrgkanis et al. 2015, Thm 4 argument).

    Examples
    --------
    >>> float(optimistic_gap_bound(10, 0.5, 0.5, 0.25))
    0.4
    """
    tt = _times(t)
    return (_pos(D_x, "D_x", allow_zero=True) + _pos(D_y, "D_y", allow_zero=True)) / (
        _pos(eta, "eta") * tt
    )


def shapley_error_bound(k: Any, gamma: float, initial_error: Any) -> np.ndarray:
    r"""``‖V_k − V*‖∞ ≤ γ^k ‖V_0 − V*‖∞`` for Shapley value iteration (Shapley 1953, Thm 1).

    Examples
    --------
    >>> float(shapley_error_bound(2, 0.5, 4.0))
    1.0
    """
    g = float(check_discount(gamma, allow_none=False))  # type: ignore[arg-type]
    kk = _times(k, "k", minimum=0.0)
    e0 = _nonneg(initial_error, "initial_error")
    return g**kk * e0
