r"""Lemke–Howson: one Nash equilibrium of a bimatrix game by complementary pivoting.

Split from :mod:`.bimatrix` (which re-exports :func:`lemke_howson`).

References
----------
von Stengel, B. (2007). Equilibrium computation for two-player games in strategic and extensive
form. Ch. 3 of *Algorithmic Game Theory*, Cambridge UP, §3.4 (best-response polytopes, labels),
§3.5 (Lemke–Howson) and its lexicographic degeneracy resolution.
Lemke, C. E. & Howson, J. T. (1964). Equilibrium points of bimatrix games. J. SIAM 12(2).
Savani, R. & von Stengel, B. (2006). Hard-to-solve bimatrix games. Econometrica 74(2)
(Lemke–Howson paths exponentially long in the game's size).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._numerics import higham_gamma
from .._validate import check_positive_int
from ..errors import SolverError
from ._bimatrix_common import _payoffs, _positive
from ._support_exact import ExactGame, is_exact_equilibrium, solve_exact

__all__ = ["lemke_howson"]


def _pivot_cap(max_pivots: int, label: int, m: int, n: int) -> SolverError:
    """The located error for a path that did not pick ``label`` up again within ``max_pivots``."""
    kind = f"row {label}" if label < m else f"column {label - m}"
    return SolverError(
        f"Lemke-Howson did not terminate within max_pivots = {max_pivots} pivots from "
        f"initial_label = {label} ({kind}) on this {m}x{n} game: the path had not picked the "
        f"label up again; it is finite (lexicographic rule), so raise max_pivots",
        status="max_pivots",
    )


# A float ratio test decided by less than this (relative) may differ from the exact one: the
# round-off of the float tableau is far below it on the games the float path is meant for
_NEAR = 1e-9


def _lex_ratio_row(T: np.ndarray, col: int, rhs: int, slack: slice) -> tuple[int, bool]:
    """Lexicographic minimum-ratio test: rows with T[r, col] > 0, compare (rhs, slack cols)/T[r, col].

    Returns the row and whether the choice is a *near tie*: two candidates' ratios ``rhs/T[r, col]``
    within ``_NEAR`` (relative) of the least, or a row whose column entry is within ``_NEAR`` of 0
    (relative to the column) and whose right-hand side is small enough that, were the entry
    positive, it could have the least ratio. There exact arithmetic may choose another row (a
    payoff perturbed by one ulp decides the exact ratio test, which the float one sees as a tie
    resolved by the slack columns, or the other way round), so the float path may leave the exact
    one while staying on feasible bases.
    """
    c = T[:, col]
    rows = np.flatnonzero(c > 1e-12)
    if rows.size == 0:
        raise SolverError(
            "Lemke-Howson: unbounded pivot column (payoffs must be positive)", status="unbounded"
        )
    keys = np.concatenate([T[rows, rhs][:, None], T[rows, slack]], axis=1) / c[rows, None]
    best = 0
    # lexicographic comparison; exact keys never tie (the slack part is a row of an invertible
    # matrix), so differences below the relative 1e-13 are round-off and skipped
    for r in range(1, rows.size):
        d = keys[r] - keys[best]
        nz = np.flatnonzero(np.abs(d) > 1e-13 * (1.0 + np.abs(keys[best])))
        if nz.size and d[nz[0]] < 0:
            best = r
    least = float(np.min(keys[:, 0]))
    margin = _NEAR * (1.0 + abs(least))
    tie = int(np.sum(keys[:, 0] <= least + margin)) > 1
    # an entry that may be 0, or of the other sign, exactly: its row has a ratio at most
    # rhs/entry ≤ least (so could be chosen) only if its rhs is at most least·entry, up to round-off
    size = max(1.0, float(np.max(np.abs(c))))
    small = (c != 0.0) & (np.abs(c) <= _NEAR * size) & (T[:, rhs] <= margin * size)
    return int(rows[best]), tie or bool(np.any(small))


def _certified_choice(
    T: np.ndarray, T0: np.ndarray, basis: list[int], col: int, rhs: int, slack: slice, r: int
) -> bool:
    r"""Whether row ``r`` is, provably, the exact ratio test's choice in column ``col``.

    The exact tableau at the basis is ``T* = B*⁻¹ T0*``, ``B* = T0*[:, basis]``, where ``T0*`` is the
    initial tableau on the payoffs mapped exactly into ``[1, 2]`` and ``T0`` its float copy (each
    entry within ``5u`` of it, ``u`` the unit roundoff; the slack and right-hand-side columns are
    exact). With the float tableau ``T`` and ``S = T[:, slack]`` (the float ``B⁻¹``), the residuals
    ``B·T − T0`` computed in float bound ``|B*·T − T0*|`` entrywise by
    ``ρ = |fl(B·T − T0)| + (γ_{k+1} + 8u)(|B||T| + |T0|)`` (Higham 2002, Lemma 3.1 and eq. (3.4)
    for the products, ``8u`` for the payoffs' rounding). From the slack columns, ``F = I − B*·S``
    has ``‖F‖∞ ≤ f = ‖ρ_S‖∞``; if ``f < 1/2`` then ``‖B*⁻¹‖∞ ≤ ‖S‖∞/(1 − f)`` (``B*⁻¹ = S(I − F)⁻¹``),
    and every entry of the column ``col`` and of the right-hand side is within
    ``e = ‖B*⁻¹‖∞‖ρ_col‖∞`` of the exact one (doubled here for the rounding of the bound's own
    arithmetic). The choice is certified when ``T[r, col] − e_c > 0`` and the largest exact ratio
    row ``r`` can have, ``(T[r, rhs] + e_b)/(T[r, col] − e_c)``, is below the least ratio of every
    other row whose entry can be positive, ``max(T[i, rhs] − e_b, 0)/(T[i, col] + e_c)`` (exact
    right-hand sides are ``≥ 0`` on the exact path, which the float path is on so far). An exact
    tie (a degenerate game), ``f ≥ 1/2`` or intervals that overlap are not certified. The products
    with the basis take only its payoff columns; its slack columns are identity columns of ``T0``,
    whose products are exact row placements (a sum of at most ``k + 1`` terms either way).
    """
    k = T.shape[0]
    u = float(np.finfo(np.float64).eps) / 2.0
    g = higham_gamma(k + 1, u) + 8.0 * u
    # basis columns that are slack columns of T0 are identity columns: their products are exact
    # row placements, so only the payoff columns (the supports, often few) cost a product
    pos = np.arange(k)
    lab = np.asarray(basis)
    is_slack = (lab >= slack.start) & (lab < slack.stop)
    pay, sl, sl_rows = pos[~is_slack], pos[is_slack], lab[is_slack] - slack.start
    Bp = T0[:, lab[~is_slack]]
    aBp = np.abs(Bp)

    def times_basis(X: np.ndarray, aX: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``B·X`` and ``|B|·|X|`` (rows of ``X`` by basis position)."""
        BX, aBX = Bp @ X[pay], aBp @ aX[pay]
        BX[sl_rows] += X[sl]
        aBX[sl_rows] += aX[sl]
        return BX, aBX

    S = T[:, slack]
    aS = np.abs(S)
    BS, aBS = times_basis(S, aS)
    eye = np.eye(k)
    rho_s = np.abs(BS - eye) + g * (aBS + eye)
    f = float(np.max(np.sum(rho_s, axis=1)))
    if not f < 0.5:
        return False
    inv_norm = float(np.max(np.sum(aS, axis=1))) / (1.0 - f)
    cols, cols0 = T[:, [col, rhs]], T0[:, [col, rhs]]
    Bc, aBc = times_basis(cols, np.abs(cols))
    rho = np.abs(Bc - cols0) + g * (aBc + np.abs(cols0))
    e_c, e_b = 2.0 * inv_norm * np.max(rho, axis=0)
    c, b = T[:, col], T[:, rhs]
    if not c[r] - e_c > 0.0:
        return False
    hi = max(b[r] + e_b, 0.0) / (c[r] - e_c)
    others = np.flatnonzero(c + e_c > 0.0)
    others = others[others != r]
    lo = np.maximum(b[others] - e_b, 0.0) / (c[others] + e_c)
    return bool(np.all(lo > hi))


def lemke_howson(
    A: Any, B: Any, *, initial_label: int = 0, max_pivots: int = 10_000
) -> tuple[np.ndarray, np.ndarray]:
    r"""One Nash equilibrium by the Lemke–Howson path from the artificial equilibrium.

    Works on the best-response polytopes ``P = {x ≥ 0: Bᵀx ≤ 1}`` and
    ``Q = {y ≥ 0: Ay ≤ 1}`` (payoffs rescaled to be positive). Starting from
    ``(0, 0)``, label ``initial_label`` (``0..m−1`` rows, ``m..m+n−1`` columns) is
    dropped and complementary pivoting alternates between the two tableaux until that
    label is picked up again; the endpoint, normalised, is an equilibrium
    (von Stengel 2007, §3.5; Lemke & Howson 1964).

    Parameters
    ----------
    A, B : numpy arrays, shape (m, n)
    initial_label : int in [0, m + n)
    max_pivots : int, default 10_000
        Cap on the pivots of the path (in each of the float and, if needed, the exact pass). A float
        path cut at the cap with no sign of round-off raises at once, without an exact pass.

    Returns
    -------
    (x, y) : numpy arrays
        The endpoint of the Lemke–Howson path from ``initial_label`` (the exact path, lexicographic
        rule; see Notes), a Nash equilibrium of ``(A, B)`` checked in exact rational arithmetic;
        its probabilities are the exact ones rounded to float64 once.

    Raises
    ------
    ValueError
        ``initial_label`` out of range.
    SolverError
        ``status="max_pivots"``: the path did not end within ``max_pivots`` pivots (the message
        names the cap, ``initial_label`` and the game's size). The path is finite (lexicographic
        rule) but can be exponentially long in ``m + n`` (Savani & von Stengel 2006), so a large
        game can reach the default cap. This is an exception and not a result with
        ``converged=False`` (STYLE.md's rule for iterative methods) because the function returns
        a bare ``(x, y)`` tuple that callers unpack, which a result type would break, and because
        a cut path has no answer to return: its bases are almost complementary, not equilibria,
        and carry no certificate.

    Notes
    -----
    Degenerate games are handled by the lexicographic minimum-ratio test: the leaving
    row minimises ``(rhs, row of the inverse basis)/pivot`` lexicographically, which is
    the ratio test of a perturbed, nondegenerate system (von Stengel 2007, §3.5 end), so
    the path never cycles and always ends at an equilibrium — unlike support
    enumeration, Lemke–Howson needs no nondegeneracy. Host-only.

    The path is followed in float64 on payoffs rescaled to ``[1, 2]``; its final bases are then
    solved in exact rationals on ``(A, B)`` as given (the same affine map, exactly) and accepted
    only if the basic solution is feasible and a Nash equilibrium. Otherwise (payoffs that differ
    by less than round-off of the payoff range, where the float path can end at a complementary
    basis that is infeasible exactly) the whole path is followed again in exact arithmetic.
    Before, ``A = [[3.4e7, 7.2e-7], [1.6e5, 6.5e-9]]``, ``B = [[1.1e9, 2.4e-3], [20, 112]]``
    from label 1 returned (row 1, column 1), where the row player gains ``7.1e-7`` by switching.
    The exact check costs two rational solves of the supports' sizes and ``O(mn)`` rational
    products for the best responses (2 ms at 10×10, 0.16 s at 100×100 random normal games).

    The exact path also runs when the float path shows round-off: a basis pair that comes back (the
    exact path never repeats one, so the float path is cycling; it stops at the repeat), or a float
    path cut at ``max_pivots`` whose last bases are infeasible in exact arithmetic. A float path cut
    at the cap on exactly feasible bases, with every ratio test certified (below), raises at once:
    its pivots are the exact path's, which the same cap cuts too (an exact pass, in rational
    arithmetic, took 1.6 s to say so for ``max_pivots = 50`` on a 60×60 random normal game whose
    whole solve takes 0.09 s).

    An exact equilibrium at the end of the float path need not be the end of the exact path: on
    payoffs within round-off of a tie (small integer games perturbed by one ulp, or by ``1e-14``),
    the float ratio test resolved the tie by the slack columns where the exact one is decided by
    the perturbation, left the exact path on feasible bases and ended at another equilibrium
    (29 of 899 (game, label) pairs of ulp-perturbed 2–4 × 2–4 integer games, 36 of 902 with
    ``1e-14`` noise). So the exact path also runs when some float ratio test was a *near tie*:
    two least ratios within ``1e-9`` (relative), or a pivot-column entry within ``1e-9`` of 0
    whose row could have had the least ratio (:func:`_lex_ratio_row`), or a choice that a bound on
    the float tableau's error does not certify (:func:`_certified_choice`: residuals of the basis
    against the initial tableau and a bound on the basis inverse from its slack columns,
    ``O(s·k²)`` per pivot, ``k`` the tableau's rows and ``s`` the basis's payoff columns: the slack
    columns in the basis are identity columns, placed exactly; as dense ``k×k`` products the
    check took a 100×100 random normal game from 0.16 s to 2.5 s under a loaded multithreaded
    BLAS, now 0.2 s). The fixed margin alone was not a bound: on a 7×8 game of
    integers in ``{0, …, 3}`` plus ``1e-7`` noise the float ratios at pivot 36 of the path from
    label 0 were ``1.34e-9`` off the exact ones, which differed by ``1.27e-9``, and the path was
    trusted. Every other float pivot is the exact path's pivot (up to the rounding of the
    bound's own arithmetic, covered by a factor 2). Degenerate games (exact ties) always take the exact path,
    which pivots in integers (:func:`_exact_path`): a 40×40 game of payoffs in ``{0, …, 3}``
    took 0.08 s (0.05 s by the float path alone), a 100×100 game of payoffs in ``{0, …, 99}``
    1.2 s (0.4 s); a 100×100 game in ``{0, …, 3}`` whose float path ended off an equilibrium
    took 9 s, where the exact path in fractions took 202 s. Random normal games have no near
    ties and keep the float path's cost.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[1.0, -1.0], [-1.0, 1.0]])
    >>> x, y = lemke_howson(A, -A)
    >>> np.round(x, 9).tolist(), np.round(y, 9).tolist()
    ([0.5, 0.5], [0.5, 0.5])
    """
    A, B = _payoffs(A, B)
    m, n = A.shape
    if (
        isinstance(initial_label, bool)
        or not isinstance(initial_label, (int, np.integer))
        or not 0 <= initial_label < m + n
    ):
        raise ValueError(
            f"initial_label must be an integer in [0, m + n) = [0, {m + n}); got {initial_label!r}"
        )
    max_pivots = check_positive_int(max_pivots, "max_pivots")
    label = int(initial_label)
    game = ExactGame(A, B)
    Aq, BqT = _exact_positive(game, "A", m), _exact_positive(game, "BT", n)
    try:
        basisP, basisQ, outcome, near_tie = _float_path(
            _positive(A), _positive(B), label, max_pivots
        )
    except SolverError:  # round-off in the float path (a pivot column lost): go exact
        found = None
    else:
        if outcome == "cap" and not near_tie and _exact_feasible(Aq, BqT, basisP, basisQ):
            # a float path with no sign of round-off was cut: the exact path would be cut too
            raise _pivot_cap(max_pivots, label, m, n)
        # a near tie (the float path may have left the exact one), a repeated basis pair (a
        # round-off cycle) or an exactly infeasible basis at the cap: follow the exact path
        trusted = outcome == "end" and not near_tie
        found = _exact_endpoint(game, Aq, BqT, basisP, basisQ) if trusted else None
    if found is None:  # the float path ended at a basis that is not an equilibrium exactly
        basisP, basisQ = _exact_path(Aq, BqT, label, max_pivots)
        found = _exact_endpoint(game, Aq, BqT, basisP, basisQ)
        # not reachable: the end of an exact path is a completely labelled vertex pair other than
        # (0, 0), i.e. an equilibrium (von Stengel 2007, §3.5)
        if found is None:
            raise SolverError(
                "Lemke-Howson: the exact path ended off an equilibrium", status="exact_endpoint"
            )
    x, y = found
    return _rounded(x), _rounded(y)


def _rounded(z: list[Fraction]) -> np.ndarray:
    return np.array([float(t) for t in z], dtype=np.float64)


def _integer_tableaux(
    Aq: list[list[Fraction]], BqT: list[list[Fraction]], m: int, n: int
) -> tuple[list[list[int]], list[list[int]]]:
    """The initial tableaux in integers: each constraint times the common denominator ``D`` of its
    tableau's payoffs, with the slack rescaled to keep an identity column (``s' = D s``).

    ``P`` (player 1): rows ``j < n``, ``D_P Bpᵀ x + s' = D_P``, columns by label ``x_i`` (``i < m``),
    ``s'_j`` (``m + j``), then the right-hand side. ``Q`` (player 2): rows ``i < m``,
    ``r' + D_Q Ap y = D_Q``, columns ``r'_i`` (``i < m``), ``y_j`` (``m + j``), then the right-hand
    side. The bases and the lexicographic ratio test are those of the rational tableaux: the
    ratios ``rhs/pivot`` are scaled by ``D`` and the slack columns' by ``1/D``, in every row alike.
    """
    dP = math.lcm(*(v.denominator for row in BqT for v in row))
    dQ = math.lcm(*(v.denominator for row in Aq for v in row))
    TP = [[int(v * dP) for v in BqT[j]] + [int(t == j) for t in range(n)] + [dP] for j in range(n)]
    TQ = [[int(t == i) for t in range(m)] + [int(v * dQ) for v in Aq[i]] + [dQ] for i in range(m)]
    return TP, TQ


def _float_path(
    Ap: np.ndarray, Bp: np.ndarray, label: int, max_pivots: int
) -> tuple[list[int], list[int], str, bool]:
    """The last bases ``(basisP, basisQ)`` of the Lemke–Howson path in float64, how it stopped, and
    whether some ratio test on the way was a near tie (:func:`_lex_ratio_row`).

    ``"end"``: ``label`` was picked up again. ``"repeat"``: a basis pair came back, which the
    exact path never does (it is a path in a finite graph, von Stengel 2007, §3.5), so round-off
    made the float path cycle. ``"cap"``: ``max_pivots`` pivots without either. Without a near
    tie every pivot is the exact path's (up to round-off far below ``_NEAR``); after one the path
    may have left it.
    """
    m, n = Ap.shape
    TP = np.concatenate([Bp.T, np.eye(n), np.ones((n, 1))], axis=1)
    TQ = np.concatenate([np.eye(m), Ap, np.ones((m, 1))], axis=1)
    basisP, basisQ = list(range(m, m + n)), list(range(m))
    rhs = m + n
    slackP, slackQ = slice(m, m + n), slice(0, m)
    entering = label
    in_P = entering < m  # x_k enters P when a row label is dropped, y_j enters Q otherwise
    # the basis pair as two bit masks over the labels 0..m+n-1, updated at each pivot
    maskP, maskQ = sum(1 << k for k in basisP), sum(1 << k for k in basisQ)
    seen = {(maskP, maskQ)}
    T0P, T0Q = TP.copy(), TQ.copy()
    near_tie = False
    for _ in range(max_pivots):
        T, basis, slack = (TP, basisP, slackP) if in_P else (TQ, basisQ, slackQ)
        r, near = _lex_ratio_row(T, entering, rhs, slack)
        if not (near or near_tie):  # once flagged the exact path runs anyway: no bound needed
            T0 = T0P if in_P else T0Q
            near = not _certified_choice(T, T0, basis, entering, rhs, slack, r)
        near_tie = near_tie or near
        T[r] /= T[r, entering]
        for i in range(T.shape[0]):
            if i != r and T[i, entering] != 0.0:
                T[i] -= T[i, entering] * T[r]
        leaving = basis[r]
        basis[r] = entering
        if leaving == label:
            return basisP, basisQ, "end", near_tie
        if in_P:
            maskP ^= (1 << entering) | (1 << leaving)
        else:
            maskQ ^= (1 << entering) | (1 << leaving)
        if (maskP, maskQ) in seen:
            return basisP, basisQ, "repeat", near_tie
        seen.add((maskP, maskQ))
        entering = leaving
        in_P = not in_P
    return basisP, basisQ, "cap", near_tie


def _exact_positive(game: ExactGame, which: str, size: int) -> list[list[Fraction]]:
    """Rows of ``A`` (``which="A"``) or ``Bᵀ`` mapped exactly by ``M ↦ M − lo + span`` into ``[span, 2 span]``.

    ``span = hi − lo`` (1 for a constant matrix): ``span`` times the float path's ``[1, 2]`` map, so
    the best-response polytope is the float path's scaled by ``1/span`` and has the same bases.
    """
    rows = [game.row(which, k) for k in range(size)]
    lo = min(min(r) for r in rows)
    span = max(max(r) for r in rows) - lo
    span = span if span > 0 else Fraction(1)
    return [[v - lo + span for v in r] for r in rows]


def _exact_endpoint(
    game: ExactGame,
    Aq: list[list[Fraction]],
    BqT: list[list[Fraction]],
    basisP: list[int],
    basisQ: list[int],
) -> tuple[list[Fraction], list[Fraction]] | None:
    """The normalised basic solution of the bases ``(basisP, basisQ)`` in exact arithmetic, if it is a
    Nash equilibrium of the game; else ``None`` (a singular basis, or no equilibrium).

    Only the strategy part is solved: in ``P`` the basic ``x_i`` (``i ∈ X``) make the ``|X|``
    constraints whose slacks are nonbasic tight, ``Σ_{i∈X} Bq_ij x_i = 1``; likewise in ``Q``. The
    slacks need not be formed: :func:`is_exact_equilibrium` checks ``x, y ≥ 0`` and every best
    response exactly, which is what the endpoint must satisfy.
    """
    m, n = game.shape
    out = []
    # (constraint rows, basis, own size, own labels' offset, other size, slack labels' offset)
    sides = ((BqT, basisP, m, 0, n, m), (Aq, basisQ, n, m, m, 0))
    for M, basis, size, own_off, n_rows, slack_off in sides:
        support = [lab - own_off for lab in basis if 0 <= lab - own_off < size]
        tight = [k for k in range(n_rows) if k + slack_off not in basis]
        if len(tight) != len(support) or not support:
            return None
        z = solve_exact([[M[k][i] for i in support] for k in tight], [Fraction(1)] * len(tight))
        if z is None:
            return None
        total = sum(z, Fraction(0))
        if total <= 0:
            return None
        w = [Fraction(0)] * size
        for i, v in zip(support, z, strict=True):
            w[i] = v / total
        out.append(w)
    x, y = out
    return (x, y) if is_exact_equilibrium(game, x, y) else None


def _exact_feasible(
    Aq: list[list[Fraction]], BqT: list[list[Fraction]], basisP: list[int], basisQ: list[int]
) -> bool:
    """Whether the basic solutions of the bases ``(basisP, basisQ)`` are feasible, exactly.

    In ``P`` the basic ``x_i`` (``i ∈ X``) solve the ``|X|`` constraints whose slacks are nonbasic,
    ``Σ_{i∈X} Bq_ij x_i = 1``, and the basic slacks are ``s_j = 1 − Σ_{i∈X} Bq_ij x_i``; feasible
    means a nonsingular system and all of them ``≥ 0`` (likewise in ``Q``). Every basis of the
    exact path is feasible, so ``False`` shows that round-off took the float path off it.
    """
    m, n = len(Aq), len(BqT)
    # (constraint rows, basis, own size, own labels' offset, other size, slack labels' offset)
    for M, basis, size, own_off, n_rows, slack_off in (
        (BqT, basisP, m, 0, n, m),
        (Aq, basisQ, n, m, m, 0),
    ):
        support = [lab - own_off for lab in basis if 0 <= lab - own_off < size]
        tight = [k for k in range(n_rows) if k + slack_off not in basis]
        if len(tight) != len(support):
            return False
        z = solve_exact([[M[k][i] for i in support] for k in tight], [Fraction(1)] * len(tight))
        if z is None or any(v < 0 for v in z):
            return False
        for k in range(n_rows):
            if k + slack_off in basis:
                s_k = 1 - sum((M[k][i] * v for i, v in zip(support, z, strict=True)), Fraction(0))
                if s_k < 0:
                    return False
    return True


def _exact_path(
    Aq: list[list[Fraction]], BqT: list[list[Fraction]], label: int, max_pivots: int
) -> tuple[list[int], list[int]]:
    """The final bases of the Lemke–Howson path in exact arithmetic (lexicographic rule).

    Integer pivoting (fraction-free Gauss–Jordan, as in von Stengel 2007, §3.5): each tableau is
    kept as ``det`` times the rational one, ``det`` the previous pivot element (``> 0``); a pivot
    on ``p = T[r][k]`` maps every other row to ``(p·T[i] − T[i][k]·T[r]) / det``, an exact integer
    division (the entries are minors of the constraint matrix), and sets ``det = p``. Ratios are
    compared by cross-multiplication. Python integers without the ``gcd`` of every
    :class:`~fractions.Fraction` operation: 9 s where fractions took 202 s (a 100×100 game of
    payoffs in ``{0, …, 3}``).
    """
    m, n = len(Aq), len(BqT)
    TP, TQ = _integer_tableaux(Aq, BqT, m, n)
    basisP, basisQ = list(range(m, m + n)), list(range(m))
    det = {True: 1, False: 1}  # by tableau: P (True), Q (False)
    rhs = m + n
    entering = label
    in_P = entering < m
    for _ in range(max_pivots):
        T, basis, slack = (TP, basisP, range(m, m + n)) if in_P else (TQ, basisQ, range(m))
        rows = [r for r in range(len(T)) if T[r][entering] > 0]
        if not rows:  # not reachable: the polytopes are bounded (positive payoffs)
            raise SolverError("Lemke-Howson: unbounded pivot column", status="unbounded")
        r = rows[0]
        for k in rows[1:]:  # lexicographic minimum of (rhs, slack columns)/T[·][entering]
            a, b = T[k][entering], T[r][entering]
            for c in (rhs, *slack):
                d = T[k][c] * b - T[r][c] * a
                if d:
                    if d < 0:
                        r = k
                    break
        p, q = T[r][entering], det[in_P]
        pivot_row = T[r]
        for i in range(len(T)):
            if i != r:
                f = T[i][entering]
                T[i] = [(p * v - f * w) // q for v, w in zip(T[i], pivot_row, strict=True)]
        det[in_P] = p
        leaving = basis[r]
        basis[r] = entering
        if leaving == label:
            return basisP, basisQ
        entering = leaving
        in_P = not in_P
    raise _pivot_cap(max_pivots, label, m, n)
