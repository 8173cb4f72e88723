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
  property (Syrgkanis et al. 2015, Def. 3, Props. 5 and 7) with ``α = D/η``, ``β = η`` and
  ``γ ≥ 1/(8η)``; in a zero-sum game the ``β`` and ``γ`` terms cancel once
  ``η ≤ 1/(√8 L)`` (``L`` the Lipschitz constant of ``y ↦ Ay`` in the algorithm's norm
  pair), so ``gap(x̄_t, ȳ_t) ≤ (D_x + D_y)/(η t)``: ``O(1/t)``. ``D = ln k`` (entropy) or
  ``1/2`` (Euclidean).
* OMWU's last iterate converges linearly when the equilibrium is unique (Wei, Lee, Zhang &
  Luo 2021, Thm 3; the rate constant depends on the game); OGDA's last iterate converges
  linearly on polytopes (ibid., Thm 5) for steps ``η ≤ 1/(8L)``, ``L = ‖A‖₂`` (the ℓ₂
  smoothness constant of ``xᵀAy``). These step conditions (``1/(8L)`` for OGDA, ``1/8`` on
  payoffs in ``[−1, 1]`` for OMWU) are as we cite them: the paper was found (ICLR 2021,
  arXiv 2006.09517) but its theorem statements could not be read and checked in the
  sources available to us, so they are unverified. No default step is claimed to satisfy
  them (:func:`ogda`'s default can be up to ``√8`` times larger).
* Fictitious play converges in zero-sum games (Robinson 1951) with no useful rate; no bound
  is asserted.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_finite, real_scalar
from ..backend import array_namespace, as_float, one_hot
from ..trace import Trace, TraceRecorder
from .matrix import _duality_gap, as_matrix_games

__all__ = [
    "DynamicsResult",
    "fictitious_play",
    "regret_matching",
    "hedge",
    "optimistic_hedge",
    "ogda",
    "project_simplex",
]


@dataclass(frozen=True, eq=False)
class DynamicsResult:
    """Outcome of ``T`` rounds of a learning dynamic on games ``A[..., m, n]``.

    Attributes
    ----------
    x, y : arrays (..., m), (..., n)
        Uniform averages of the iterates.
    x_last, y_last : arrays
        Last iterates.
    eta : tuple or None
        Step sizes ``(η_x, η_y)`` on the payoffs ``A``, as arrays of shape (...) (None for
        FP and RM). Hedge and OMWU run on ``A / R`` with step ``η R``, OGDA on ``A / s``
        (``s`` a power of two near ``max|A|``) with step ``η s``; where a default
        ``η ∝ 1/R`` or ``1/‖A‖_F`` exceeds the float range (a subnormal ``R`` or ``‖A‖_F``)
        it is reported as ``inf`` while the iterates use the finite ``η R`` or ``η s``. A
        given ``eta`` beyond the range of ``A``'s dtype (1e300 for float32) is ``inf``
        too; the iterates are then the large-step limit (:func:`_softmax`,
        :func:`_simplex_step`).
    trace : Trace
        ``gap_avg[t−1]`` and ``gap_last[t−1]`` (shape (T, ...)) after ``t`` rounds.
    iterations : int
    converged : bool
        Always True: the dynamics run a fixed number of rounds and have no stopping rule.
    """

    x: Any
    y: Any
    x_last: Any
    y_last: Any
    eta: tuple[Any, Any] | None
    trace: Trace
    iterations: int
    converged: bool = True


def project_simplex(v: Any) -> Any:
    r"""Euclidean projection onto the simplex, ``argmin_{z ∈ Δ} ‖z − v‖₂``, along the last axis.

    Sort-based (Held, Wolfe & Crowder 1974; Duchi et al. 2008, Fig. 1): with ``u`` sorted
    decreasingly, ``ρ = max{j : u_j − (Σ_{r≤j} u_r − 1)/j > 0}``, ``θ = (Σ_{r≤ρ} u_r − 1)/ρ``
    and ``z = max(v − θ, 0)``.

    Notes
    -----
    Computed on ``w = max(v − max v, −2)``, the same projection: ``Π_Δ(v + t1) = Π_Δ(v)``,
    and since ``z_max = max v − θ ≤ 1`` every ``v_i ≤ max v − 1`` lies below ``θ`` and
    stays there when raised to ``max v − 2``. The sums ``Σ_{r≤j} u_r`` are then of size
    ``≤ 2j`` whatever the scale of ``v``; on ``v`` itself ``Σ u_r − 1`` cancels
    catastrophically once ``|v| ≳ 1/u`` (``v = (1e17, 1e17)`` gave ``(inf, inf)`` and
    ``(1e16 + 2, 1e16)`` gave ``(2, 0)``).

    Examples
    --------
    >>> import numpy as np
    >>> project_simplex(np.array([0.5, 0.5, 2.0])).tolist()
    [0.0, 0.0, 1.0]
    >>> project_simplex(np.array([1e17, 1e17])).tolist()
    [0.5, 0.5]

    ``v[..., k]`` (``k ≥ 1``; lists accepted) must be finite (``ValueError`` naming ``v``
    and the offending entry otherwise).
    """
    if isinstance(v, (list, tuple)):
        v = np.asarray(v, dtype=np.float64)
    xp = array_namespace(v)
    v = as_float(xp.asarray(v), xp)
    if v.ndim < 1 or v.shape[-1] == 0:
        raise ValueError(f"v must have shape (..., k) with k >= 1; got {tuple(v.shape)}")
    check_finite(v, "v", ("i",))
    return _project_simplex(v)


def _project_simplex(v: Any) -> Any:
    """:func:`project_simplex` without validation (the dynamics loops); ``−inf`` entries allowed."""
    xp = array_namespace(v)
    k = v.shape[-1]
    with np.errstate(over="ignore"):  # −inf where v spans more than the float range: clamped
        v = v - xp.max(v, axis=-1, keepdims=True)
    v = xp.where(v > -2.0, v, -2.0)  # out of the support either way (Notes of project_simplex)
    u = xp.sort(v, axis=-1, descending=True)
    css = xp.cumulative_sum(u, axis=-1)
    j = xp.arange(1, k + 1, dtype=v.dtype, device=v.device)
    cond = (u - (css - 1.0) / j) > 0.0
    r = xp.sum(xp.astype(cond, xp.int64), axis=-1)
    sel = one_hot(r - 1, k, xp, v.dtype)
    theta = (xp.sum(css * sel, axis=-1) - 1.0) / xp.astype(r, v.dtype)
    z = v - theta[..., None]
    return xp.where(z > 0.0, z, 0.0)


def _simplex_step(a: Any, c: Any, g: Any, xp: Any) -> Any:
    r"""``Π_Δ(a + c g)`` per row, ``c[...] > 0`` a step per game (``inf`` allowed).

    Where ``a + c g`` leaves the float range (a step beyond ~1.8e308 divided by the
    utilities) it is ``Π_Δ(a + c (g − max g))`` instead, the same point
    (``Π_Δ(z + t1) = Π_Δ(z)``), with ``c·0 = 0`` at the maximisers of ``g`` and ``−inf``
    elsewhere at worst, which :func:`_project_simplex` clamps.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # non-finite rows are replaced below
        v = a + c[..., None] * g
        D = g - xp.max(g, axis=-1, keepdims=True)
        alt = a + xp.where(D < 0.0, c[..., None] * D, 0.0)
    return _project_simplex(xp.where(xp.all(xp.isfinite(v), axis=-1, keepdims=True), v, alt))


def _softmax(c: Any, U: Any, xp: Any) -> Any:
    r"""``softmax(c U)`` along the last axis, ``c[...]`` a step ``≥ 0`` per game (``inf`` allowed).

    Computed as ``exp(cU − max cU)``. Where ``cU`` leaves the float range (a step ``η R``
    beyond ~1.8e308 divided by the cumulative utilities) that forms ``inf − inf``; those rows
    use ``exp(c (U − max U))`` instead, the same distribution, with ``c·0 = 0`` at the
    maximisers: for ``c = inf`` the uniform distribution on ``argmax U``, the limit of
    ``softmax(cU)`` as ``c → ∞``.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # NaN rows are replaced below
        z = c[..., None] * U
        d = z - xp.max(z, axis=-1, keepdims=True)
        D = U - xp.max(U, axis=-1, keepdims=True)
        alt = xp.where(D < 0.0, c[..., None] * D, 0.0)
    d = xp.where(xp.any(xp.isnan(d), axis=-1, keepdims=True), alt, d)
    e = xp.exp(d)
    return e / xp.sum(e, axis=-1, keepdims=True)


def _check_T(T: Any) -> int:
    """``T`` must be an integer ``≥ 1`` (Python or numpy, not bool); returned as ``int``."""
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
        raise ValueError(f"T (number of rounds) must be a positive integer; got {T!r}")
    return int(T)


def _pow2_scale(A: Any, xp: Any) -> Any:
    """A power of two ``s = 2^⌊log₂ max|A|⌋`` per game (1 where ``A = 0``), so ``max|A/s| ∈ [½, 2)``.

    Dividing by ``s`` is exact (unless a quotient is subnormal), and sums, products and
    differences of the quotients are the scaled ones bit for bit wherever neither under- nor
    overflows: a dynamic that is invariant to a positive payoff scale runs on ``A / s`` with
    the iterates of ``A`` at ordinary scales and without overflow near the float range.
    """
    flat = xp.reshape(xp.abs(A), tuple(A.shape[:-2]) + (A.shape[-2] * A.shape[-1],))
    amax = xp.max(flat, axis=-1)
    amax = xp.where(amax > 0.0, amax, 1.0)
    # log₂ of the largest floats rounds up to the overflow exponent (log₂ 1.797e308 = 1024.0):
    # capped at the largest float's own exponent (1023; float32: 127)
    top = float(math.frexp(float(xp.finfo(A.dtype).max))[1] - 1)
    e = xp.floor(xp.log2(amax))
    return xp.full_like(amax, 2.0) ** xp.where(e > top, top, e)


def _payoff_range(A: Any, xp: Any) -> tuple[Any, Any]:
    """``(ρ, s)`` with ``ρ s = R = max A − min A`` per game (``ρ = s = 1``, i.e. ``R = 1``, where
    the game is constant); ``s`` is :func:`_pow2_scale`, so ``ρ`` is finite where ``R``
    overflows (entries of both signs near the float range) and ``(A/s)/ρ`` is ``A/R`` bit for
    bit where it does not."""
    s = _pow2_scale(A, xp)
    G = A / s[..., None, None]
    flat = xp.reshape(G, tuple(G.shape[:-2]) + (G.shape[-2] * G.shape[-1],))
    rho = xp.max(flat, axis=-1) - xp.min(flat, axis=-1)
    return xp.where(rho > 0.0, rho, 1.0), xp.where(rho > 0.0, s, 1.0)


def _normalised(A: Any, rho: Any, s: Any, xp: Any) -> Any:
    """The games ``A / R = (A/s)/ρ`` that Hedge and OMWU play (:func:`_payoff_range`); 0 where
    ``A`` is constant.

    A constant game's utilities are the same for every action, so any constant utility gives
    the same (uniform) plays; 0 keeps the cumulative utilities from overflowing, which ``A / 1``
    (the ``R = 1`` convention) did for payoffs near the float range.
    """
    G = (A / s[..., None, None]) / rho[..., None, None]
    flat = xp.reshape(G, tuple(G.shape[:-2]) + (G.shape[-2] * G.shape[-1],))
    const = xp.max(flat, axis=-1) == xp.min(flat, axis=-1)
    return xp.where(const[..., None, None], 0.0, G)


def _eta(eta: Any, default: Any, xp: Any, like: Any) -> Any:
    if eta is None:
        return default
    # a Python or numpy real scalar (not a bool); an int beyond the float range reads as inf
    e = real_scalar(eta)
    if not (e > 0 and math.isfinite(e)):
        raise ValueError(f"eta must be a positive finite number; got {eta!r}")
    with np.errstate(over="ignore"):  # beyond float32's range: inf, the c → ∞ limit (_softmax)
        return xp.full(tuple(like.shape), e, dtype=like.dtype, device=like.device)


def _scaled_steps(eta: Any, unit_step: float, rho: Any, s: Any, xp: Any) -> tuple[Any, Any]:
    """Step sizes of a multiplicative-weights dynamic run on the normalised games ``A / R``.

    ``R = ρ s`` (:func:`_payoff_range`). Returns ``(η, η R)``: the step ``η`` on the payoffs
    ``A`` (the given ``eta``, or the default ``unit_step / R``) and the step ``η R`` that
    multiplies the normalised utilities. ``exp(η Σ_s A y_s) = exp(η R Σ_s (A/R) y_s)``, so
    the iterates are those of step ``η`` on ``A``; but the default ``η R = unit_step`` stays
    finite when ``R`` is subnormal and ``unit_step / R`` overflows (``η`` is then reported
    as ``inf``), and ``η = (unit_step/ρ)/s`` is the correctly rounded ``unit_step / R`` where
    ``R`` itself overflows.
    """
    if eta is None:
        unit = xp.full(tuple(rho.shape), unit_step, dtype=rho.dtype, device=rho.device)
        with np.errstate(over="ignore"):  # numpy warns; the overflow to inf is intended
            return (unit / rho) / s, unit
    e = _eta(eta, None, xp, rho)
    with np.errstate(over="ignore"):  # η R beyond the float range: the softmax handles inf
        return e, (e * s) * rho


Step = Callable[[Any, Any, Any, Any], tuple[Any, Any, Any]]


def _run(
    A: Any,
    T: int,
    init: Callable[[Any], tuple[Any, Any, Any]],
    update: Step,
    play: Any = None,
) -> tuple[Any, Any, Any, Any, Trace]:
    """Shared driver: play ``(x_t, y_t)``, observe ``u_t = A y_t``, ``v_t = −Aᵀx_t``, update.

    ``play`` (default ``A``) is the matrix whose utilities the players observe, e.g. the
    range-normalised ``A / R`` of Hedge; the trace always scores the games ``A``.
    """
    xp = array_namespace(A)
    G = A if play is None else play
    x, y, state = init(A)
    sx = xp.zeros_like(x)
    sy = xp.zeros_like(y)
    rec = TraceRecorder()
    for t in range(1, T + 1):
        sx, sy = sx + x, sy + y
        u = (G @ y[..., None])[..., 0]
        v = -(x[..., None, :] @ G)[..., 0, :]
        rec.record(
            t, gap_avg=_duality_gap(A, sx / t, sy / t, xp), gap_last=_duality_gap(A, x, y, xp)
        )
        if t < T:
            x, y, state = update(x, y, state, (u, v))
    return sx / T, sy / T, x, y, rec.finish()


def _uniform(A: Any, xp: Any) -> tuple[Any, Any]:
    m, n = A.shape[-2], A.shape[-1]
    b = tuple(A.shape[:-2])
    return (
        xp.full(b + (m,), 1.0 / m, dtype=A.dtype, device=A.device),
        xp.full(b + (n,), 1.0 / n, dtype=A.dtype, device=A.device),
    )


def _zero_state_init(A: Any) -> tuple[Any, Any, Any]:
    """Uniform first plays and a zero accumulator per player."""
    xp = array_namespace(A)
    x, y = _uniform(A, xp)
    return x, y, (xp.zeros_like(x), xp.zeros_like(y))


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
