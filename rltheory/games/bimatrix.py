r"""Bimatrix (two-player general-sum) games: all Nash equilibria and their NashConv.

One equilibrium by Lemke–Howson is :func:`lemke_howson` (module :mod:`.lemke_howson`,
re-exported here).

Player 1 picks rows with payoff matrix ``A ∈ R^{m×n}``, player 2 columns with
``B``; ``(x, y) ∈ Δ_m × Δ_n`` is a Nash equilibrium iff

    ``xᵀAy = max_i (Ay)_i``  and  ``xᵀBy = max_j (xᵀB)_j``

(every pure strategy in a support is a best response). The game is
*nondegenerate* when no mixed strategy with support size ``k`` has more than
``k`` pure best responses (von Stengel 2007, Def. 3.2). Then every equilibrium
has supports of equal size, equilibria are isolated and finite in number, and
*support enumeration* over all equal-size support pairs finds all of them
(von Stengel 2007, Algorithm 3.4). In a degenerate game equilibria can form
connected components that no finite list represents; :func:`nash_equilibria`
detects degeneracy (it enumerates every vertex of both best-response polytopes and
counts their labels; a floating-point pass proposes, exact rational arithmetic on the
payoffs confirms) and says so.

References
----------
von Stengel, B. (2007). Equilibrium computation for two-player games in strategic and
extensive form. Ch. 3 of *Algorithmic Game Theory* (Nisan, Roughgarden, Tardos,
Vazirani, eds.), Cambridge UP. Def. 3.2 (nondegenerate), Algorithm 3.4 (support
enumeration), §3.4 (best-response polytopes, labels), §3.5 (Lemke–Howson) and its
lexicographic degeneracy resolution.
Lemke, C. E. & Howson, J. T. (1964). Equilibrium points of bimatrix games. J. SIAM 12(2).
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction
from typing import Any

import numpy as np

from .._numerics import higham_gamma, subnormal_spacing
from .._validate import as_distribution, check_positive_int, check_real
from ._bimatrix_common import _FMAX, _host_payoffs, _payoffs, _positive
from ._support_exact import ExactGame, exact_equilibrium, exact_extra_labels
from .lemke_howson import lemke_howson

__all__ = [
    "DegenerateGameWarning",
    "DegenerateGameError",
    "bimatrix_nash_conv",
    "is_degenerate",
    "lemke_howson",
    "nash_equilibria",
]

#: tolerance for "tight" constraints and zero probabilities after rescaling to [1, 2].
LABEL_TOL = 1e-9
#: default cap on the support pairs nash_equilibria enumerates (a 14x14 game has 4.0e7)
MAX_SUPPORT_PAIRS = 10**8
_CHUNK = 100_000
_U = float(np.finfo(np.float64).eps) / 2.0  # unit roundoff


class DegenerateGameWarning(UserWarning):
    """The bimatrix game is degenerate: the equilibrium list may miss equilibria."""


class DegenerateGameError(ValueError):
    """Raised instead of :class:`DegenerateGameWarning` when ``strict=True``."""


def bimatrix_nash_conv(A: Any, B: Any, x: Any, y: Any) -> float:
    r"""NashConv ``[max_i (Ay)_i − xᵀAy] + [max_j (xᵀB)_j − xᵀBy] ≥ 0`` (0 iff Nash).

    Returns the computed NashConv, set to 0 where round-off made it negative (the exact one is
    ``≥ 0``), plus the round-off allowance of :func:`_nash_conv_allowance` (about
    ``(m + n)·u·(max|A| + max|B|)`` times a small constant, ``u`` the unit roundoff): never below the exact NashConv of
    ``(x/Σx, y/Σy)``. (The computed value alone was up to 6 % below the exact one at payoffs of
    size 1e8, and negative for some exact equilibria.) Games with a payoff beyond an eighth of the
    float range are scored as ``(A/8, B/8)`` and the result scaled back: finite wherever the exact
    NashConv is in range, ``inf`` only beyond it.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[3.0, 0.0], [5.0, 1.0]])   # prisoner's dilemma, (defect, defect)
    >>> bool(bimatrix_nash_conv(A, A.T, np.array([0.0, 1.0]), np.array([0.0, 1.0])) <= 1e-13)
    True
    """
    A, B = _payoffs(A, B)
    x = as_distribution(x, "x", A.shape[0], np, np.float64, name="i")
    y = as_distribution(y, "y", A.shape[1], np, np.float64, name="j")
    for v, name in ((x, "x"), (y, "y")):
        if v.ndim != 1:
            raise ValueError(f"{name} must be one mixed strategy (a vector); got shape {v.shape}")
    return _nash_conv(A, B, x, y)


def _nash_conv(A: np.ndarray, B: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """:func:`bimatrix_nash_conv` of float64 ``A, B`` and strategies ``x, y`` without checks.

    Games with a payoff beyond an eighth of the float range are scored as ``(A/8, B/8)`` (exact,
    a power of two; NashConv is positively homogeneous) and the result multiplied back: the four
    terms, their differences and the allowance then stay in range, and the result is ``inf``
    (without an overflow warning) only where it exceeds the range. On ``(A, B)`` itself the sum of
    the terms' magnitudes in the allowance overflowed, and NashConv read ``inf`` for payoffs
    ``±9e307`` even at exact equilibria. (Subnormal entries of such a game are rounded by the
    division, by far less than the allowance of payoffs of size ``2^1020``.)
    """
    c = 8.0 if max(float(np.max(np.abs(A))), float(np.max(np.abs(B)))) > _FMAX / 8.0 else 1.0
    if c > 1.0:
        A, B = A / c, B / c
    Ay, xB = A @ y, x @ B
    ca, sa, cb, sb = float(Ay.max()), float(x @ Ay), float(xB.max()), float(xB @ y)
    raw = (ca - sa) + (cb - sb)
    out = max(raw, 0.0) + _nash_conv_allowance(A, B, x, y, (ca, sa, cb, sb))
    return out * c  # Python floats: inf beyond the range, without a warning


def _nash_conv_allowance(
    A: np.ndarray,
    B: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    terms: tuple[float, float, float, float],
) -> float:
    r"""Round-off allowance ``ε`` of a computed NashConv: ``|computed − exact| ≤ ε``.

    The exact NashConv is that of ``x̂ = x/σ_x``, ``ŷ = y/σ_y`` (``σ`` the exact sums of the stored
    strategies, ``d ≥ |σ − 1|`` the computed sum's distance from 1 plus ``γ_k``; ``l ≥ Σ|x_i|``
    and ``L = l/(1 − d) ≥ ‖x̂‖₁``). With ``a = max|A|``, ``u`` the unit roundoff and
    ``γ_k = ku/(1 − ku)`` (Higham 2002, Lemma 3.1, eq. (3.4)), each computed ``(Ay)_i`` is within
    ``e₁ = a(γ_n l_y + d_y L_y)`` of ``(Aŷ)_i``, and the computed ``Σ_i x_i (Ay)_i`` within
    ``γ_m l_x (a L_y + e₁) + l_x e₁ + d_x a L_x L_y`` of ``x̂ᵀAŷ``; likewise for ``B``. The
    subtractions, the sum, and the rounding of ``ε`` and of ``max(raw, 0) + ε`` add at most
    ``4u`` of the four computed terms ``terms`` and of ``ε``, and ``(1 + 16u)`` covers the
    rounding of the allowance's own arithmetic (the same Higham ``γ`` plus
    stored-sum defect as :func:`rltheory.games.matrix._gap_allowance`).

    Underflow, which the relative model leaves out: a product with a subnormal result errs by
    up to half the subnormal spacing ``s`` absolutely (Higham 2002, eq. (2.8)); the four computed
    terms take ``2(m + n)`` products, and ``η = 2(2(m + n) + 8)s`` counts them (and the few of the
    normalisation) four times over. Without it, payoffs ~1e-310 gave NashConv certificates below
    the exact value for 89 of 300 random strategy pairs (exact rational reference).
    """
    m, n = A.shape
    u = float(np.finfo(np.float64).eps) / 2.0

    def side(M: np.ndarray, p: np.ndarray, q: np.ndarray, kp: int, kq: int) -> float:
        """Error of ``max(Mq) − pᵀMq`` (``p`` over ``kp`` rows, ``q`` over ``kq`` columns)."""
        a = float(np.max(np.abs(M)))
        lp = float(np.sum(np.abs(p))) / (1.0 - higham_gamma(kp, u))
        lq = float(np.sum(np.abs(q))) / (1.0 - higham_gamma(kq, u))
        dp = abs(float(np.sum(p)) - 1.0) + higham_gamma(kp, u) * lp
        dq = abs(float(np.sum(q)) - 1.0) + higham_gamma(kq, u) * lq
        if dp >= 0.5 or dq >= 0.5:  # not reachable for validated strategies (sums within 1e-8 of 1)
            return math.inf
        Lp, Lq = lp / (1.0 - dp), lq / (1.0 - dq)
        e1 = a * (higham_gamma(kq, u) * lq + dq * Lq)
        return e1 + higham_gamma(kp, u) * lp * (a * Lq + e1) + lp * e1 + dp * a * Lp * Lq

    eps = (
        side(A, x, y, m, n)
        + side(B.T, y, x, n, m)
        + 2.0 * (2 * (m + n) + 8) * subnormal_spacing(np.float64, np)
    )
    return (eps + 4.0 * u * (sum(abs(t) for t in terms) + eps)) * (1.0 + 16.0 * u)


def _solve_side(
    M: np.ndarray, I: np.ndarray, J: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""For every pair (I[p], J[q]) solve ``Σ_{i∈I} z_i M_ij = w (j ∈ J)``, ``Σ z_i = 1``.

    Returns (z [P, k], w [P], err [P], sure [P]) for the ``P = |I|·|J|`` pairs in row-major
    order. ``M`` (entries in ``[1, 2]``) is within ``4u`` per entry of the exact rescaled payoffs,
    and partial-pivoting LU adds a backward error of a few ``(k + 1)u`` (Higham 2002, Thm 9.5),
    so with ``η = 32(k + 1)u`` (a generous constant) the computed solution is that of some
    ``K + ΔK``, ``‖ΔK‖∞ ≤ η‖K‖∞``. Where ``κ∞(K)η < 1/2`` it is within
    ``err = 2κ∞(K)η·max|(z, w)|`` of the exact solution in every entry (the perturbation bound
    ``κη/(1 − κη)``, Higham 2002, Thm 7.2), and ``sure`` is True. Elsewhere the float solution
    says nothing (``sure`` False; it is then the solution of an identity system).
    """
    k = I.shape[1]
    sub = M[I[:, None, :, None], J[None, :, None, :]]  # (cI, cJ, k, k) = M[I, J]
    sub = sub.reshape((-1, k, k))
    P = sub.shape[0]
    K = np.zeros((P, k + 1, k + 1))
    K[:, :k, :k] = np.swapaxes(sub, -1, -2)  # rows j ∈ J: Σ_i z_i M_ij − w = 0
    K[:, :k, k] = -1.0
    K[:, k, :k] = 1.0
    try:  # one batched LU; only a batch holding an exactly singular system pays for det
        inv = np.linalg.inv(K)
        zero = np.zeros(P, dtype=bool)
    except np.linalg.LinAlgError:
        zero = np.linalg.det(K) == 0.0  # an exactly zero LU pivot: inv raised
        K[zero] = np.eye(k + 1)
        inv = np.linalg.inv(K)
    eta = 32.0 * (k + 1) * _U
    # κ∞ η with ‖K‖∞ ≤ (2k + 1)(1 + 8u) (rows: k entries of M in [1, 2], each within 4u of it, and
    # a −1; the last row k ones): an upper bound within a factor 2 of the exact norm, costing no
    # pass over K (the abs-sum over K and the determinant of every system were a third of the time)
    ke = (2 * k + 1) * (1.0 + 8.0 * _U) * np.abs(inv).sum(-1).max(-1) * eta
    sure = ~zero & (ke < 0.5)
    sol = np.where(sure[:, None], inv[:, :, k], 0.0)
    err = np.where(sure, 2.0 * ke * np.abs(sol).max(-1), np.inf)
    return sol[:, :k], sol[:, k], err, sure


def _enumerate(
    A: np.ndarray, B: np.ndarray, tol: float
) -> tuple[list[tuple[np.ndarray, np.ndarray]], str | None]:
    """Support enumeration: a floating-point pass proposes, exact rational arithmetic decides.

    The batched float pass (payoffs rescaled to [1, 2], tolerance ``tol`` plus each solve's error
    bound) proposes support pairs that may be equilibria and vertices that may be degenerate,
    and every system too ill-conditioned to judge (while the game is not known to be degenerate); each proposal is then checked in
    exact rationals on ``A``, ``B`` as given (:mod:`._support_exact`), so every returned profile is
    an exact equilibrium (rounded to floats once at the end) and a reported degeneracy is exact.
    """
    m, n = A.shape
    Ap, Bp = _positive(A), _positive(B)
    game = ExactGame(A, B)
    found: list[tuple[list[Fraction], list[Fraction]]] = []
    degenerate: str | None = None
    for k in range(1, min(m, n) + 1):
        Is = np.array(list(itertools.combinations(range(m), k)), dtype=np.intp)
        Js = np.array(list(itertools.combinations(range(n), k)), dtype=np.intp)
        step = max(1, _CHUNK // len(Js))
        for s in range(0, len(Is), step):
            Ic = Is[s : s + step]
            xs, u, ex, okx = _solve_side(Bp, Ic, Js)  # x_I makes columns J indifferent (payoff u)
            ys, v, ey, oky = _solve_side(Ap.T, Js, Ic)  # y_J makes rows I indifferent (payoff v)
            cI, cJ = len(Ic), len(Js)
            # ys was computed with pairs ordered (J, I); reorder to (I, J)
            ys = ys.reshape(cJ, cI, k).transpose(1, 0, 2).reshape(-1, k)
            v = v.reshape(cJ, cI).T.reshape(-1)
            ey = ey.reshape(cJ, cI).T.reshape(-1)
            oky = oky.reshape(cJ, cI).T.reshape(-1)
            Ifull = np.repeat(Ic, cJ, axis=0)
            Jfull = np.tile(Js, (cI, 1))
            X = np.zeros((len(Ifull), m))
            np.put_along_axis(X, Ifull, xs, axis=1)
            Y = np.zeros((len(Jfull), n))
            np.put_along_axis(Y, Jfull, ys, axis=1)
            xB = X @ Bp  # (P, n)
            Ay = Y @ Ap.T  # (P, m)
            # Each test is widened by the solve's error bound: an entry of z is within e of the
            # exact one, a payoff (z M)_j − w (entries of M in [1, 2]) within (2k + 1)e plus the
            # product's rounding. A pair is dropped only where it fails by more than that, and a
            # system too ill-conditioned for any bound (~sure) is always proposed: the exact pass
            # decides. (A determinant cutoff dropped those: payoffs spanning 9.5e-30 to 1.9e25
            # lost an equilibrium whose system is singular only after the rescaling.)
            rx = tol + (2 * k + 1) * ex + 8.0 * (k + 1) * _U * (1.0 + np.abs(xs).sum(-1))
            ry = tol + (2 * k + 1) * ey + 8.0 * (k + 1) * _U * (1.0 + np.abs(ys).sum(-1))
            # once the game is known to be degenerate (its list may miss equilibria anyway) the
            # unsure systems, most of them exactly singular there (a zero game: all), are skipped
            unsure = degenerate is None
            fx = np.where(okx, (xs.min(-1) >= -(tol + ex)) & (xB.max(-1) <= u + rx), unsure)
            fy = np.where(oky, (ys.min(-1) >= -(tol + ey)) & (Ay.max(-1) <= v + ry), unsure)
            if degenerate is None:
                # proposed degenerate vertices: labels beyond m (resp. n) within the widened
                # tests, i.e. zero probabilities inside the support or tight best responses
                # outside the other support; every unsure system too
                extra_x = (np.abs(xs) <= (tol + ex)[:, None]).sum(-1) + (
                    np.abs(xB - u[:, None]) <= rx[:, None]
                ).sum(-1)
                extra_y = (np.abs(ys) <= (tol + ey)[:, None]).sum(-1) + (
                    np.abs(Ay - v[:, None]) <= ry[:, None]
                ).sum(-1)
                degenerate = _confirm_degenerate(
                    game,
                    Ifull,
                    Jfull,
                    np.flatnonzero(fx & ((extra_x > k) | ~okx)),
                    np.flatnonzero(fy & ((extra_y > k) | ~oky)),
                )
            for p in np.flatnonzero(fx & fy):
                eq = exact_equilibrium(
                    game, tuple(Ifull[p].tolist()), tuple(Jfull[p].tolist()), m, n
                )
                if eq is not None and eq not in found:  # exact: one support pair per equilibrium
                    found.append(eq)
    return [(_as_floats(x), _as_floats(y)) for x, y in found], degenerate


def _as_floats(z: list[Fraction]) -> np.ndarray:
    """An exact distribution rounded to float64 (each entry correctly rounded)."""
    return np.array([float(t) for t in z], dtype=np.float64)


def _confirm_degenerate(
    game: ExactGame, Ifull: np.ndarray, Jfull: np.ndarray, bad_x: np.ndarray, bad_y: np.ndarray
) -> str | None:
    """The first proposed degenerate vertex that is one in exact arithmetic, described; else ``None``."""
    m, n = game.shape
    for player, bad in ((0, bad_x), (1, bad_y)):
        for p in bad:
            I, J = tuple(Ifull[p].tolist()), tuple(Jfull[p].tolist())
            hit = (
                exact_extra_labels(game, player, I, J, m, n)
                if player == 0
                else exact_extra_labels(game, 1, J, I, m, n)
            )
            if hit is None:
                continue
            z, ties = hit
            zf = _as_floats(z)
            me, other, name = (1, 2, "x") if player == 0 else (2, 1, "y")
            return (
                f"against player {me}'s strategy {name} = {np.round(zf, 6).tolist()} (support size "
                f"{sum(1 for t in z if t > 0)}) player {other} has {ties} pure best responses"
            )
    return None


def _check_pairs(shape: tuple[int, int], max_pairs: Any, name: str) -> None:
    """Refuse a game with more than ``max_pairs`` support pairs before any work (``ValueError``).

    Without it a 30×30 game (``1.2e17`` support pairs) ran on: ``7.5e8`` pairs at support size 4
    alone, hours at the ~12 µs per pair measured on a 9×9 game, and at size 15 it would list the
    ``C(30, 15) = 1.6e8`` supports of one size (gigabytes of tuples).
    """
    max_pairs = check_positive_int(max_pairs, "max_pairs")
    m, n = shape
    pairs = math.comb(m + n, m) - 1  # Σ_k C(m, k) C(n, k) (Vandermonde)
    if pairs > max_pairs:
        raise ValueError(
            f"{name} would enumerate C(m + n, m) - 1 = {pairs:.3g} support pairs for this {m}x{n} "
            f"game, more than max_pairs = {max_pairs:.3g}; use lemke_howson for one equilibrium, "
            f"or raise max_pairs"
        )


def is_degenerate(
    A: Any, B: Any, *, tol: float = LABEL_TOL, max_pairs: int = MAX_SUPPORT_PAIRS
) -> bool:
    """Whether some mixed strategy with support size ``k`` has more than ``k`` pure best responses.

    Decided by enumerating every vertex of both best-response polytopes
    ``P = {x ≥ 0 : Bᵀx ≤ 1}`` and ``Q = {y ≥ 0 : Ay ≤ 1}``: the game is nondegenerate iff every
    vertex of ``P`` has exactly ``m`` labels and every vertex of ``Q`` exactly ``n`` (von Stengel
    2007, §3.4). A floating-point pass (payoffs rescaled to [1, 2]) proposes the vertices with
    extra labels within ``tol``; each proposal is confirmed in exact rational arithmetic on the
    payoffs as given, so ``True`` is exact, and payoffs that differ by less than ``tol`` times the
    payoff range are not mistaken for ties.

    Raises
    ------
    ValueError
        ``tol`` not a finite number ``≥ 0``, or more than ``max_pairs`` support pairs
        (:func:`nash_equilibria`).

    Examples
    --------
    >>> import numpy as np
    >>> is_degenerate(np.array([[1.0, 1.0], [0.0, 2.0]]), np.array([[1.0, 1.0], [0.0, 2.0]]))
    True
    >>> is_degenerate(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]))
    False
    """
    A, B = _payoffs(A, B)
    tol = check_real(tol, "tol", low=0.0)
    _check_pairs(A.shape, max_pairs, "is_degenerate")
    return _enumerate(A, B, tol)[1] is not None


def nash_equilibria(
    A: Any,
    B: Any = None,
    *,
    strict: bool = False,
    tol: float = LABEL_TOL,
    max_pairs: int = MAX_SUPPORT_PAIRS,
) -> list[tuple[np.ndarray, np.ndarray]]:
    r"""All Nash equilibria of a nondegenerate bimatrix game by vectorised support enumeration.

    For every support pair ``I ⊆ [m]``, ``J ⊆ [n]`` with ``|I| = |J| = k`` the indifference
    systems ``Σ_{i∈I} x_i B_ij = u (j ∈ J), Σ x_i = 1`` and
    ``Σ_{j∈J} A_ij y_j = v (i ∈ I), Σ y_j = 1`` are solved — all pairs of one size in one
    batched LU call — and ``(x, y)`` is kept when ``x, y ≥ 0`` and no pure strategy beats
    ``u`` or ``v`` (von Stengel 2007, Algorithm 3.4).

    Parameters
    ----------
    A, B : numpy arrays, shape (m, n)
        Payoffs of the row and the column player. ``B=None`` means zero-sum, ``B = −A``.
    strict : bool, default False
        On a degenerate game raise :class:`DegenerateGameError` instead of warning.
    tol : float
        Tolerance of the floating-point pass that proposes support pairs and degenerate vertices
        (on probabilities and best-response ties, payoffs rescaled to [1, 2]). Proposals are
        decided in exact rational arithmetic, so ``tol`` does not let near-equilibria or
        near-ties through; too small a ``tol`` can only make the pass miss one.
    max_pairs : int, default 10**8
        Largest number of support pairs ``Σ_k C(m,k)·C(n,k) = C(m+n, m) − 1`` to enumerate; a
        larger game is refused before any work (``ValueError``).

    Returns
    -------
    list of (x, y)
        Every equilibrium, as numpy probability vectors, ordered by support size: each is an
        exact equilibrium of ``(A, B)`` (checked in rationals), its probabilities rounded to
        float64 once.

    Warns
    -----
    DegenerateGameWarning
        The game is degenerate (named strategy has more best responses than its support
        size). The list then holds the equilibria at equal-size supports that were found
        (deduplicated) and may miss equilibria, in particular whole components.

    Raises
    ------
    InvalidModelError
        Shapes differ, an empty action set, or a non-finite payoff (located).
    ValueError
        ``tol`` not a finite number ``≥ 0``, ``strict`` not ``True``/``False``, or more than
        ``max_pairs`` support pairs (a 14×14 game has 4.0e7, a 15×15 one 1.6e8, a 30×30 one
        1.2e17).
    TypeError
        Device arrays (the routine is host-only), or text or complex payoffs (naming ``A`` or ``B``).

    Notes
    -----
    Cost ``Σ_k C(m,k)·C(n,k)·O(k³) = O(C(m+n, m)·min(m,n)³)``: fine to about 12×12; the exact
    checks add ``O(k³)`` rational operations per proposal (:mod:`._support_exact`).

    Every listed profile and every reported degeneracy is exact. The floating-point pass drops a
    support pair only where its tests fail by more than the solve's error bound
    (:func:`_solve_side`: the condition number of the indifference system times its backward
    error), and proposes every system too ill-conditioned for such a bound to the exact pass, so
    on a nondegenerate game the list is that of exact support enumeration. (A determinant cutoff
    of ``1e-12`` used to drop those: payoffs from ``9.5e-30`` to ``1.9e25`` lost a mixed equilibrium
    whose system is singular only after the rescaling to [1, 2], and with ``k`` in 0–3 and
    ``|e| ≤ 100`` 3 of 254 nondegenerate probes missed equilibria; now none of them, nor of 98 up
    to 4×4.) Once a game is known to be degenerate, the ill-conditioned systems are no longer
    proposed (in a zero game every one is singular, and deciding each exactly took 8x the
    enumeration); the list of a degenerate game may miss equilibria in any case.
    (Before the exact checks, tolerance ties on payoffs spanning 2^±15 reported nondegenerate
    games as degenerate and listed profiles that are not equilibria, e.g. ones where the row
    player gains 9e-5 by deviating.)

    References
    ----------
    von Stengel (2007), §3.3: Def. 3.2 (nondegeneracy), equal support sizes in nondegenerate
    games, Algorithm 3.4 (support enumeration).

    Examples
    --------
    Battle of the sexes has two pure and one mixed equilibrium:

    >>> import numpy as np
    >>> A = np.array([[2.0, 0.0], [0.0, 1.0]]); B = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> [(np.round(x, 4).tolist(), np.round(y, 4).tolist()) for x, y in nash_equilibria(A, B)]
    [([1.0, 0.0], [1.0, 0.0]), ([0.0, 1.0], [0.0, 1.0]), ([0.6667, 0.3333], [0.3333, 0.6667])]
    """
    if B is None:
        B = -_host_payoffs(A, "A")
    A, B = _payoffs(A, B)
    tol = check_real(tol, "tol", low=0.0)
    # "no" is truthy: it would raise where the caller asked for a warning
    if not isinstance(strict, (bool, np.bool_)):
        raise ValueError(f"strict must be True or False; got {strict!r}")
    _check_pairs(A.shape, max_pairs, "nash_equilibria")
    eqs, degenerate = _enumerate(A, B, tol)
    if degenerate is not None:
        msg = (
            f"the bimatrix game is degenerate ({degenerate}); support enumeration returns the "
            f"{len(eqs)} equilibria found at equal-size supports and may miss others (components)"
        )
        if strict:
            raise DegenerateGameError(msg)
        warnings.warn(msg, DegenerateGameWarning, stacklevel=2)
    return eqs
