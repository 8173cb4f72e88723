r"""Optimistic learning dynamics in zero-sum matrix games: optimistic Hedge (OMWU) and OGDA.

Both satisfy the RVU property (Syrgkanis et al. 2015, Def. 3, Props. 5 and 7) with
``α = D/η``, ``β = η`` and ``γ ≥ 1/(8η)``; in a zero-sum game the ``β`` and ``γ`` terms
cancel once ``η ≤ 1/(√8 L)``, so ``gap(x̄_t, ȳ_t) ≤ (D_x + D_y)/(η t)``
(:func:`rltheory.bounds.games.optimistic_gap_bound`), ``D = ln k`` (entropy, OMWU) or
``1/2`` (Euclidean, OGDA). Their last iterates converge linearly under the conditions of
Wei, Lee, Zhang & Luo (2021, Thms 3 and 5; see :mod:`rltheory.games.dynamics` for the
status of the cited step conditions). The shared driver is
:mod:`rltheory.games.dynamics_base`.

References
----------
Syrgkanis, V., Agarwal, A., Luo, H., Schapire, R. E. (2015). Fast convergence of regularized
learning in games. NeurIPS.
Wei, C.-Y., Lee, C.-W., Zhang, M., Luo, H. (2021). Linear last-iterate convergence in
constrained saddle-point optimization. ICLR.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import array_namespace
from .dynamics_base import (
    DynamicsResult,
    _check_T,
    _eta,
    _normalised,
    _payoff_range,
    _pow2_scale,
    _run,
    _scaled_steps,
    _uniform,
    _zero_state_init,
)
from .matrix import as_matrix_games
from .simplex import _simplex_step, _softmax

__all__ = ["optimistic_hedge", "ogda"]


def optimistic_hedge(A: Any, T: int, *, eta: float | None = None) -> DynamicsResult:
    r"""Optimistic Hedge (OMWU): ``x_t ∝ exp(η(Σ_{s<t} u_s + u_{t−1}))``, likewise for ``y``.

    The optimistic FTRL form with entropy regulariser (identical to optimistic mirror
    descent with entropy on the simplex). Default ``η = 1/(√8 L)`` with ``L = R/2``
    (``R = max A − min A``): since ``Σ_j Δy_j = 0``, ``‖AΔy‖∞ ≤ (R/2)‖Δy‖₁``. Then at every
    ``t`` ``gap(x̄_t, ȳ_t) ≤ (ln m + ln n)/(η t)`` (RVU, Syrgkanis et al. 2015;
    :func:`rltheory.bounds.games.optimistic_gap_bound`), and with a unique equilibrium the
    last iterate converges linearly for ``η ≤ 1/(8 max|A|)`` (Wei et al. 2021, Thm 3, as cited;
    not checked against the paper's text, see the module docstring).
    As in :func:`hedge`, the weights are computed on ``A / R`` with step ``η R``, so the
    default iterates are scale-free and finite for a subnormal ``R`` (where the reported
    ``η = 1/(√2 R)`` is ``inf``) and for an ``R`` beyond the float range.

    Examples
    --------
    >>> from rltheory.games.zoo import rock_paper_scissors
    >>> res = optimistic_hedge(rock_paper_scissors(), 500)
    >>> bool(res.trace["gap_last"][-1] < 1e-3)
    True
    """
    xp = array_namespace(A)
    A = as_matrix_games(A, "A", xp)
    T = _check_T(T)
    rho, s = _payoff_range(A, xp)  # R = ρ s
    e, ue = _scaled_steps(eta, 1.0 / (math.sqrt(8.0) * 0.5), rho, s, xp)  # η R = R/(√8 L), L = R/2

    def update(x: Any, y: Any, st: Any, uv: Any) -> tuple[Any, Any, Any]:
        U, Vc = st  # cumulative utilities of the normalised games A / R
        u, v = uv
        U, Vc = U + u, Vc + v
        return _softmax(ue, U + u, xp), _softmax(ue, Vc + v, xp), (U, Vc)

    x, y, xl, yl, tr = _run(A, T, _zero_state_init, update, play=_normalised(A, rho, s, xp))
    return DynamicsResult(x, y, xl, yl, (e, e), tr, T)


def ogda(A: Any, T: int, *, eta: float | None = None) -> DynamicsResult:
    r"""Optimistic gradient descent-ascent (optimistic OMD, Euclidean) on the simplices.

    ``x_t = Π_Δ(x̂_t + η u_{t−1})``, ``x̂_{t+1} = Π_Δ(x̂_t + η u_t)`` (and ``y`` with
    ``v = −Aᵀx``), the form analysed by Wei et al. (2021, Eq. (3)). Default
    ``η = 1/(√8 ‖A‖_F)`` (``‖A‖_F ≥ ‖A‖₂``, the ℓ₂ Lipschitz constant). At every ``t``
    ``gap(x̄_t, ȳ_t) ≤ (1/2 + 1/2)/(η t)`` (RVU with ``D = max ½‖x − x̂_1‖² ≤ 1/2``;
    :func:`rltheory.bounds.games.optimistic_gap_bound`).

    Last iterate: Wei et al. (2021, Thm 5, bilinear games on polytopes) prove linear
    convergence for ``η ≤ 1/(8L)`` with ``L = ‖A‖₂``; pass ``eta ≤ 1/(8‖A‖₂)`` (for instance
    ``1/(8‖A‖_F)``) for that guarantee. The default serves the RVU bound and is not covered:
    it exceeds ``1/(8‖A‖₂)`` unless ``‖A‖_F ≥ √8 ‖A‖₂`` (rank ≥ 8 at least). The condition
    ``η ≤ 1/(8L)`` is cited, not checked against the paper's text, which could not be read
    here (module docstring); the rate constant depends on the game and no rate is asserted.

    The iterates are computed on ``A / s`` with step ``η s`` (``s`` a power of two within a
    factor 2 of ``max|A|``; ``η A y = η s (A/s) y`` exactly): bit for bit those of ``A`` at
    ordinary scales, and ``‖A‖_F = s ‖A/s‖_F`` neither overflows (payoffs beyond ~1e154,
    where ``A·A`` is inf and the step was 0) nor underflows (below ~1e-154, where the step
    was ``1/√8`` whatever the scale). For a subnormal ``‖A‖_F`` the reported ``η`` is
    ``inf`` while the iterates use the finite ``η s``, as in :func:`hedge`.

    Examples
    --------
    >>> from rltheory.games.zoo import matching_pennies
    >>> res = ogda(matching_pennies(), 300)
    >>> bool(res.trace["gap_last"][-1] < 1e-6)
    True
    """
    xp = array_namespace(A)
    A = as_matrix_games(A, "A", xp)
    T = _check_T(T)
    # on A / s (s a power of two: the same iterates bit for bit), ‖A/s‖_F ∈ [½, 2√(mn)]
    # neither overflows (A·A beyond 1.8e308 for payoffs ~1e154) nor underflows (~1e-154)
    s = _pow2_scale(A, xp)
    G = A / s[..., None, None]
    mn = G.shape[-2] * G.shape[-1]  # not -1: a batch of no games has size 0
    fro = xp.sqrt(xp.sum(xp.reshape(G * G, tuple(G.shape[:-2]) + (mn,)), axis=-1))
    fro = xp.where(fro > 0.0, fro, 1.0)
    if eta is None:  # η = 1/(√8 ‖A‖_F), η s = 1/(√8 ‖A/s‖_F) on the scaled game
        es = 1.0 / (math.sqrt(8.0) * fro)
        with np.errstate(over="ignore"):  # a subnormal ‖A‖_F: η beyond the float range (inf)
            e = es / s
    else:
        e = _eta(eta, None, xp, fro)
        with np.errstate(over="ignore"):
            es = e * s

    def init(A: Any) -> tuple[Any, Any, Any]:
        x, y = _uniform(A, xp)
        return x, y, (x, y)

    def update(x: Any, y: Any, st: Any, uv: Any) -> tuple[Any, Any, Any]:
        xh, yh = st
        u, v = uv
        xh = _simplex_step(xh, es, u, xp)
        yh = _simplex_step(yh, es, v, xp)
        return _simplex_step(xh, es, u, xp), _simplex_step(yh, es, v, xp), (xh, yh)

    x, y, xl, yl, tr = _run(A, T, init, update, play=G)
    return DynamicsResult(x, y, xl, yl, (e, e), tr, T)
