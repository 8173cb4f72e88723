r"""Optimistic learning dynamics in zero-sum matrix games: optimistic Hedge (OMWU) and OGDA.

Both play the uniform strategies in round 1, with no prediction, and from round 2 on predict
the next utility by the last one. The shared driver is :mod:`rltheory.games.dynamics_base`.

Average iterate: the RVU property
---------------------------------
Syrgkanis, Agarwal, Luo & Schapire (2015) call a learner RVU with constants ``(α, β, γ)`` if
for every comparator ``Reg(T) ≤ α + β Σ_{t≤T} ‖u_t − u_{t−1}‖*² − γ Σ_{t≤T} ‖x_t − x_{t−1}‖²``
(Def. 3, ineq. (1)). The statements used here:

* Prop. 7 (p. 5): optimistic FTRL with prediction ``M_t = u_{t−1}``, step ``η`` and a
  regulariser 1-strongly convex in ``‖·‖₁`` whose range on the simplex is ``D`` is RVU on
  every utility sequence ``u_0, u_1, …`` with ``α = D/η``, ``β = η``, ``γ = 1/(4η)``
  (``ℓ₁``/``ℓ∞``). OMWU is this with the entropy, ``D = ln k``.
* Prop. 5: optimistic mirror descent with ``α = D/η``, ``β = η``, ``γ = 1/(8η)``,
  ``D = max_x D_R(x, x_1)``; OGDA is the Euclidean case, ``D = (1 − 1/k)/2``.
* Thm 4 (p. 4): if every player is RVU in ``‖·‖₁`` with ``β ≤ γ/(n−1)²`` (utilities in
  ``[0, 1]``), ``Σ_i Reg_i(T) ≤ n α``; Cor. 8 (p. 5): OFTRL with ``η = 1/(2(n−1))`` gives
  ``Σ_i Reg_i(T) ≤ n D/η``.

In a zero-sum game ``‖A(y_t − y_{t−1})‖∞ ≤ (R/2)‖y_t − y_{t−1}‖₁`` (``R = max A − min A``;
``y_t − y_{t−1}`` sums to 0), so both players' RVU terms cancel once ``η L² ≤ γ`` with
``L = R/2``: ``η ≤ 1/R`` for OMWU (Prop. 7), ``η ≤ 1/(√8 ‖A‖₂)`` for OGDA (Prop. 5). Round 1
has no prediction, so its error ``ρ²`` (:func:`rltheory.bounds.games.optimistic_first_round`)
stays in the sum, and ``gap(x̄_t, ȳ_t) ≤ [(D_x + D_y)/η + η ρ²]/t``
(:func:`rltheory.bounds.games.optimistic_gap_bound`). The constants are the papers': on a
``1×k`` game with one better action and a small step the bound is attained to within 0.5%
(``D = ln k`` for OMWU, ``D = (1 − 1/k)/2`` for OGDA).

Last iterate
------------
Wei, Lee, Zhang & Luo (2021): OMWU's last iterate converges linearly when the equilibrium is
unique (Thm 3, as cited), and OGDA's on polytopes (Thm 5, as cited), with game-dependent
rate constants. OMWU's step condition, ``η ≤ 1/8`` on losses in ``[0, 1]``, is as restated
by Cai, Farina, Grand-Clément, Kroer, Lee, Luo & Zheng (2025), Lemma 1 ("adapted from Lemma 1
in Wei et al.") and Lemma 2 ("adapted from Lemma 19"). OMWU on ``A`` with step ``η`` has the
iterates of OMWU on ``(A − min A)/R`` with step ``ηR``, so for payoff range ``R`` the condition
is ``η ≤ 1/(8R)``. OGDA's condition ``η ≤ 1/(8L)``, ``L = ‖A‖₂``, is cited from Thm 5.

Verification record
-------------------
Def. 3, Props. 5 and 7, Thm 4 and Cor. 8 of Syrgkanis et al. are quoted above from
arXiv:1507.00407v5. Def. 3, Prop. 7, Thm 4 and Cor. 8 were checked against formal
restatements that quote the paper with page numbers (prove2me/formalpedia,
``RegLearnGames.TotalRegret``). Prop. 5 could not be found in the sources available: cited,
not verified. The OMWU condition of Wei et al. was read only in the restatement of Cai et al.
(2025), not in the paper: the theorem numbers 3 and 5 and OGDA's ``1/(8L)`` are as cited,
not verified against the text. Cai et al. (2025, §2) also state that OFTRL and optimistic
mirror descent give the same iterates for the entropy, so Prop. 5 applies to OMWU too.
Rakhlin & Sridharan (2013), Daskalakis & Panageas (2019; OMWU's last iterate converges for a
small enough step, no constant) and Mokhtari, Ozdaglar & Pattathil (2020; OGDA as an
approximate proximal point, unconstrained problems) are not used by any bound here.

References
----------
Syrgkanis, V., Agarwal, A., Luo, H., Schapire, R. E. (2015). Fast convergence of regularized
learning in games. NeurIPS (arXiv:1507.00407v5).
Wei, C.-Y., Lee, C.-W., Zhang, M., Luo, H. (2021). Linear last-iterate convergence in
constrained saddle-point optimization. ICLR.
Cai, Y., Farina, G., Grand-Clément, J., Kroer, C., Lee, C.-W., Luo, H., Zheng, W. (2025). On
separation between best-iterate, random-iterate, and last-iterate convergence of learning in
games.
Rakhlin, A., Sridharan, K. (2013). Optimization, learning, and games with predictable
sequences. NeurIPS.
Daskalakis, C., Panageas, I. (2019). Last-iterate convergence: zero-sum games and constrained
min-max optimization. ITCS.
Mokhtari, A., Ozdaglar, A., Pattathil, S. (2020). A unified analysis of extra-gradient and
optimistic gradient methods for saddle point problems: proximal point approach. AISTATS.
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
    descent with entropy on the simplex); round 1 plays uniform. Default ``η = 1/(√8 L)`` with
    ``L = R/2`` (``R = max A − min A``): since ``Σ_j Δy_j = 0``, ``‖AΔy‖∞ ≤ (R/2)‖Δy‖₁``.

    Bounds (module docstring): for ``η ≤ 1/R`` (Syrgkanis et al. 2015, Prop. 7, so the default
    ``1/(√2 R)`` is covered) at every ``t``
    ``gap(x̄_t, ȳ_t) ≤ [(ln m + ln n)/η + η ρ²]/t`` with ``ρ²`` the first round's prediction
    error (:func:`rltheory.bounds.games.optimistic_gap_bound`,
    :func:`rltheory.bounds.games.optimistic_first_round`). With a unique equilibrium the last
    iterate converges linearly for ``η ≤ 1/(8R)`` (Wei et al. 2021, as restated by Cai et al.
    2025; the default is larger, and no rate is asserted for it).
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
    ``v = −Aᵀx``), the form analysed by Wei et al. (2021, Eq. (3)); ``x_1 = x̂_1`` uniform.
    Default ``η = 1/(√8 ‖A‖_F)`` (``‖A‖_F ≥ ‖A‖₂``, the ℓ₂ Lipschitz constant). At every ``t``
    ``gap(x̄_t, ȳ_t) ≤ [(D_x + D_y)/η + η ρ²]/t`` with ``D = max ½‖x − x̂_1‖² = (1 − 1/k)/2``
    and the first round's error ``ρ²`` in ℓ₂ (Syrgkanis et al. 2015, Prop. 5 as cited, not
    verified; :func:`rltheory.bounds.games.optimistic_gap_bound`).

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
