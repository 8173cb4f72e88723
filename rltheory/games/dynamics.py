r"""Learning dynamics in zero-sum matrix games, with exploitability traces.

Both players update simultaneously from the full utility vectors
``u_t = A y_t`` (row player, maximising) and ``v_t = −Aᵀ x_t`` (column player).
With regrets ``Reg_x(T) = max_i Σ_t (A y_t)_i − Σ_t x_tᵀ A y_t`` and
``Reg_y(T) = Σ_t x_tᵀ A y_t − min_j Σ_t (x_tᵀ A)_j`` the uniform averages satisfy the
identity

    ``gap(x̄_T, ȳ_T) = max_i (Aȳ_T)_i − min_j (x̄_Tᵀ A)_j = (Reg_x(T) + Reg_y(T)) / T``,

so any regret bound is an average-iterate exploitability bound (Freund & Schapire
1999). Every driver runs a batch of games ``A[..., m, n]`` in array-API code and
records, after every iteration ``t``, the duality gap of the average iterate
(``gap_avg``) and of the last iterate (``gap_last``). The bounds live in
:mod:`rltheory.bounds.games`:

* Hedge / MWU with step ``η``: ``Reg(t) ≤ ln k/η + η t R²/8`` for payoff range ``R``
  (Cesa-Bianchi & Lugosi 2006, Thm 2.2); with ``η = √(8 ln k / T)/R``,
  ``Reg(T) ≤ R √(T ln k / 2)``.
* Regret matching and RM+: ``Reg(t) ≤ R √(k t)`` (Hart & Mas-Colell 2000; Zinkevich et al.
  2007, Thm 3 with one information set; Tammelin et al. 2015 for RM+).
* Optimistic Hedge (OMWU) and optimistic gradient descent-ascent (OGDA) satisfy the RVU
  property (Syrgkanis et al. 2015, Def. 3; Prop. 7 for OMWU with ``γ = 1/(4η)``, Prop. 5 for
  OGDA with ``γ = 1/(8η)``, both with ``α = D/η``, ``β = η``); in a zero-sum game the ``β``
  and ``γ`` terms cancel once ``η ≤ 1/R`` (OMWU) or ``η ≤ 1/(√8 ‖A‖₂)`` (OGDA), so
  ``gap(x̄_t, ȳ_t) ≤ [(D_x + D_y)/η + η ρ²]/t``: ``O(1/t)``. ``D = ln k`` (entropy) or
  ``(1 − 1/k)/2`` (Euclidean), and ``ρ²`` is the error of round 1, which is played uniform
  with no prediction.
* OMWU's last iterate converges linearly when the equilibrium is unique, for ``η ≤ 1/(8R)``
  (Wei, Lee, Zhang & Luo 2021, as restated by Cai et al. 2025); OGDA's last iterate converges
  linearly on polytopes for ``η ≤ 1/(8L)``, ``L = ‖A‖₂`` (ibid., Thm 5, as cited). Which of
  these statements were read in which source is recorded in :mod:`rltheory.games.optimistic`.
  No default step is claimed to satisfy the last-iterate conditions (:func:`ogda`'s default
  can be up to ``√8`` times larger, OMWU's default ``1/(√2 R)`` is ``4√2`` times larger).
* Fictitious play converges in zero-sum games (Robinson 1951) with no useful rate; no bound
  is asserted.

This module holds fictitious play, regret matching and Hedge; the optimistic dynamics are in
:mod:`rltheory.games.optimistic`, the shared driver, result and step sizes in
:mod:`rltheory.games.dynamics_base`, the simplex steps in :mod:`rltheory.games.simplex`
(all re-exported here).

References
----------
Brown, G. W. (1951). Iterative solution of games by fictitious play. Robinson, J. (1951). An
iterative method of solving a game. Ann. Math. 54.
Freund, Y. & Schapire, R. E. (1999). Adaptive game playing using multiplicative weights. GEB 29.
Cesa-Bianchi, N. & Lugosi, G. (2006). *Prediction, Learning, and Games*. Thm 2.2.
Hart, S. & Mas-Colell, A. (2000). A simple adaptive procedure leading to correlated
equilibrium. Econometrica 68(5).
Zinkevich, M., Johanson, M., Bowling, M., Piccione, C. (2007). Regret minimization in games
with incomplete information. NeurIPS, Thm 3.
Tammelin, O., Burch, N., Johanson, M., Bowling, M. (2015). Solving heads-up limit Texas
hold'em. IJCAI (RM+).
Syrgkanis, V., Agarwal, A., Luo, H., Schapire, R. E. (2015). Fast convergence of regularized
learning in games. NeurIPS.
Wei, C.-Y., Lee, C.-W., Zhang, M., Luo, H. (2021). Linear last-iterate convergence in
constrained saddle-point optimization. ICLR.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import array_namespace, one_hot
from .dynamics_base import (
    DynamicsResult,
    _check_T,
    _normalised,
    _payoff_range,
    _pow2_scale,
    _run,
    _scaled_steps,
    _uniform,
    _zero_state_init,
)
from .matrix import as_matrix_games

# moved to sibling modules (one concept each); re-exported so every name stays importable here
from .optimistic import ogda, optimistic_hedge
from .simplex import _softmax, project_simplex

__all__ = [
    "DynamicsResult",
    "fictitious_play",
    "regret_matching",
    "hedge",
    "optimistic_hedge",
    "ogda",
    "project_simplex",
]


def fictitious_play(A: Any, T: int) -> DynamicsResult:
    r"""Simultaneous fictitious play: ``x_{t+1} = e_{argmax_i (A ȳ_t)_i}``, ``y_{t+1} = e_{argmin_j (x̄_tᵀA)_j}``.

    Starts from uniform strategies; ties go to the lowest index. ``gap_avg → 0`` in every
    zero-sum game (Robinson 1951) at the rate ``O(t^{−1/(m+n−2)})`` (Shapiro 1958); no
    rate bound is asserted.

    Notes
    -----
    The best responses are computed against the play counts, not the rounded averages:
    ``n t ȳ_t = 1 + n c_t`` (``c_t`` the column player's pure-play counts after the uniform
    first round) is a vector of integers, scaled by a power of two
    ``2^{−p} ≤ 1/(max(m, n) t)`` (exact; the weights sum to at most 1, so nothing
    overflows). For payoffs on a common binary grid (integers, halves, ...) with
    ``max|A|/grid · max(m, n) t < 2^53`` (float32: ``2^24``) the utilities are then computed
    exactly and an exact tie goes to the lowest index, as stated; with ``A ȳ_t`` formed
    from the rounded ``ȳ_t`` round-off broke such ties either way. For other payoffs (a
    decimal such as 0.1 is not on a binary grid) a tie may still be broken by the rounding
    of the products ``A_ij w_j``.

    Examples
    --------
    >>> from rltheory.games.zoo import matching_pennies
    >>> res = fictitious_play(matching_pennies(), 2000)
    >>> bool(res.trace["gap_avg"][-1] < 0.05)
    True
    """
    xp = array_namespace(A)
    A = as_matrix_games(A, "A", xp)
    T = _check_T(T)
    m, n = A.shape[-2], A.shape[-1]

    def init(A: Any) -> tuple[Any, Any, Any]:
        x, y = _uniform(A, xp)
        return x, y, (xp.ones_like(x), xp.ones_like(y), 1)

    def update(x: Any, y: Any, st: Any, uv: Any) -> tuple[Any, Any, Any]:
        # wx = m Σ_{s≤k} x_s, wy = n Σ_{s≤k} y_s: integers (the uniform x_1 counts 1 per row)
        wx, wy, k = st
        if k > 1:
            wx, wy = wx + m * x, wy + n * y
        # 2^-p with 2^p ≥ max(m, n) k: exact scaling, weights summing to ≤ 1 (no overflow)
        scale = 2.0 ** -math.ceil(math.log2(max(m, n) * k))
        xn = one_hot(xp.argmax((A @ (wy * scale)[..., None])[..., 0], axis=-1), m, xp, A.dtype)
        yn = one_hot(
            xp.argmin(((wx * scale)[..., None, :] @ A)[..., 0, :], axis=-1), n, xp, A.dtype
        )
        return xn, yn, (wx, wy, k + 1)

    x, y, xl, yl, tr = _run(A, T, init, update)
    return DynamicsResult(x, y, xl, yl, None, tr, T)


def regret_matching(A: Any, T: int, *, plus: bool = False) -> DynamicsResult:
    r"""Regret matching ``x_t ∝ [R_{t−1}]_+`` (uniform if no positive regret); ``plus=True``: RM+.

    ``R_t = R_{t−1} + (u_t − ⟨x_t, u_t⟩ 1)`` (RM) or ``R_t = [R_{t−1} + u_t − ⟨x_t, u_t⟩ 1]_+``
    (RM+). Bound: ``Reg(t) ≤ R √(k t)`` with ``R`` the payoff range (each instantaneous regret
    lies in ``[−R, R]``), so ``gap(x̄_t, ȳ_t) ≤ R(√m + √n)/√t``
    (:func:`rltheory.bounds.games.regret_matching_gap_bound`).

    Notes
    -----
    ``x_t ∝ [R_{t−1}]_+`` is unchanged when the payoffs are multiplied by ``c > 0``, so the
    regrets are accumulated on ``A / s`` with ``s`` a power of two within a factor 2 of
    ``max|A|``: the same numbers as on ``A`` scaled exactly by ``1/s`` (bit-identical plays
    at ordinary scales), and regrets ``≤ 4t`` that cannot overflow when the payoffs are near
    the float range (where ``u_t − ⟨x_t, u_t⟩`` on ``A`` itself can be ``±inf``).

    References
    ----------
    Hart & Mas-Colell (2000); Zinkevich et al. (2007), Thm 3; Tammelin et al. (2015).

    Examples
    --------
    >>> from rltheory.games.zoo import rock_paper_scissors
    >>> res = regret_matching(rock_paper_scissors(), 1000, plus=True)
    >>> bool(res.trace["gap_avg"][-1] < 0.05)
    True
    """
    xp = array_namespace(A)
    A = as_matrix_games(A, "A", xp)
    T = _check_T(T)
    if not isinstance(plus, (bool, np.bool_)):  # "False", None or 2 would pick a rule silently
        raise ValueError(f"plus must be True or False; got {plus!r}")

    def match(R: Any) -> Any:
        Rp = xp.where(R > 0.0, R, 0.0)
        s = xp.sum(Rp, axis=-1, keepdims=True)
        k = R.shape[-1]
        return xp.where(s > 0.0, Rp / xp.where(s > 0.0, s, 1.0), 1.0 / k)

    def update(x: Any, y: Any, st: Any, uv: Any) -> tuple[Any, Any, Any]:
        Rx, Ry = st
        u, v = uv
        Rx = Rx + u - xp.sum(x * u, axis=-1, keepdims=True)
        Ry = Ry + v - xp.sum(y * v, axis=-1, keepdims=True)
        if plus:
            Rx, Ry = xp.where(Rx > 0.0, Rx, 0.0), xp.where(Ry > 0.0, Ry, 0.0)
        return match(Rx), match(Ry), (Rx, Ry)

    # x ∝ [R]_+ does not change when A is scaled: regrets of A / s (≤ 4t in size, s a power
    # of two, so bit for bit those of A at ordinary scales) cannot overflow near the float range
    play = A / _pow2_scale(A, xp)[..., None, None]
    x, y, xl, yl, tr = _run(A, T, _zero_state_init, update, play=play)
    return DynamicsResult(x, y, xl, yl, None, tr, T)


def hedge(A: Any, T: int, *, eta: float | None = None) -> DynamicsResult:
    r"""Hedge / multiplicative weights: ``x_t ∝ exp(η_x Σ_{s<t} A y_s)``, ``y_t ∝ exp(−η_y Σ_{s<t} Aᵀ x_s)``.

    Parameters
    ----------
    A : array (..., m, n)
    T : int
    eta : float, optional
        Common step; default the horizon-tuned ``η_x = √(8 ln m / T)/R``,
        ``η_y = √(8 ln n / T)/R`` (``R = max A − min A``) giving
        ``Reg_x(T) ≤ R√(T ln m / 2)`` (Cesa-Bianchi & Lugosi 2006, Thm 2.2).

    Notes
    -----
    At every ``t``: ``gap(x̄_t, ȳ_t) ≤ [ln m/η_x + ln n/η_y + (η_x + η_y) t R²/8] / t``
    (:func:`rltheory.bounds.games.hedge_gap_bound`).

    The weights are computed on the normalised games ``A / R`` with step ``η R``
    (``exp(η Σ A y_s) = exp(η R Σ (A/R) y_s)``): the default iterates do not depend on the
    payoff scale, and stay finite for a subnormal ``R`` (below ~1e-308), where
    ``√(8 ln m / T)/R`` overflows; that step is then reported as ``inf``
    (:class:`DynamicsResult`). ``A / R`` is formed as ``(A/s)/(R/s)`` with ``s`` a power of
    two near ``max|A|`` (the same bits), so that a game whose payoffs span more than the float
    range (``R > 1.8e308``) is normalised too.

    Examples
    --------
    >>> from rltheory.games.zoo import matching_pennies
    >>> res = hedge(matching_pennies(), 2000)
    >>> bool(res.trace["gap_avg"][-1] < 0.1)
    True
    """
    xp = array_namespace(A)
    A = as_matrix_games(A, "A", xp)
    T = _check_T(T)
    m, n = A.shape[-2], A.shape[-1]
    rho, s = _payoff_range(A, xp)  # R = ρ s
    ex, ux = _scaled_steps(eta, math.sqrt(8.0 * math.log(m) / T), rho, s, xp)
    ey, uy = _scaled_steps(eta, math.sqrt(8.0 * math.log(n) / T), rho, s, xp)

    def update(x: Any, y: Any, st: Any, uv: Any) -> tuple[Any, Any, Any]:
        U, Vc = st  # cumulative utilities of the normalised games A / R
        u, v = uv
        U, Vc = U + u, Vc + v
        return _softmax(ux, U, xp), _softmax(uy, Vc, xp), (U, Vc)

    x, y, xl, yl, tr = _run(A, T, _zero_state_init, update, play=_normalised(A, rho, s, xp))
    return DynamicsResult(x, y, xl, yl, (ex, ey), tr, T)
