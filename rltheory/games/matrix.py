r"""Two-player zero-sum matrix games: batched exact minimax solver with a certificate.

A zero-sum matrix game ``A ∈ R^{m×n}`` pays ``xᵀ A y`` to the row player (who
maximises) for mixed strategies ``x ∈ Δ_m``, ``y ∈ Δ_n``. Von Neumann's minimax
theorem gives the value

    ``v(A) = max_x min_j (xᵀA)_j = min_y max_i (Ay)_i``.

For any pair ``(x, y)`` the *duality gap* ``max_i (A y)_i − min_j (xᵀ A)_j ≥ 0``
bounds the distance of both guarantees from the value; ``gap = 0`` iff ``(x, y)``
is a saddle point. :func:`solve_zero_sum` returns this gap (with a round-off
allowance) for every game as its certificate; the gap and its allowance live in
:mod:`.zero_sum_gap` (:func:`duality_gap`, re-exported here).

The kernel (:func:`solve_zero_sum`) is a batched primal simplex method in
array-API code: every game of the batch is one tableau, one pivot step updates
all tableaux at once with one-hot gathers and rank-one updates, so it runs
unchanged on numpy, cupy and array_api_strict. :func:`solve_zero_sum_highs`
solves the same LP game by game with scipy's HiGHS; it is the reference and the
fallback.

References
----------
von Neumann, J. (1928). Zur Theorie der Gesellschaftsspiele. Math. Ann. 100.
Dantzig, G. B. (1951). A proof of the equivalence of the programming problem and
the game problem. In *Activity Analysis of Production and Allocation*, ch. XX.
Bland, R. G. (1977). New finite pivoting rules for the simplex method. Math. Oper.
Res. 2(2), 103–107 (Theorem 1: the smallest-index rule never cycles).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import highs_linprog, subnormal_spacing, unit_range
from .._validate import check_int, check_real
from ..backend import array_namespace, is_host, one_hot, require_host, to_numpy
from ..errors import ConvergenceWarning, SolverError
from ._zero_sum_polish import best_strategies
from .zero_sum_gap import _big_scale as _big_scale
from .zero_sum_gap import _certificate as _certificate
from .zero_sum_gap import _computed_gap as _computed_gap
from .zero_sum_gap import _duality_gap as _duality_gap
from .zero_sum_gap import _gap_allowance as _gap_allowance
from .zero_sum_gap import _gap_parts as _gap_parts
from .zero_sum_gap import _unscale as _unscale
from .zero_sum_gap import as_matrix_games, duality_gap

__all__ = [
    "ZeroSumSolution",
    "as_matrix_games",
    "duality_gap",
    "solve_zero_sum",
    "solve_zero_sum_highs",
]


@dataclass(frozen=True, eq=False)
class ZeroSumSolution:
    """Solution of a batch of zero-sum games; unpacks as ``value, x, y``.

    Attributes
    ----------
    value : array, shape (...)
        ``v(A)`` (computed as ``xᵀ A y``).
    x, y : arrays, shapes (..., m) and (..., n)
        Maximin row strategy and minimax column strategy.
    gap : array, shape (...)
        Certificate ``≥ max_i (Ay)_i − min_j (xᵀA)_j ≥ 0`` of the strategies on the simplex,
        round-off of the computed sums and of ``value`` included (twice
        :func:`_gap_allowance`, about ``(m + n + 6)·u·max|A|`` each, ``u`` the unit roundoff),
        so ``|value − v(A)| ≤ gap``; never negative.
    iterations : int
        Simplex pivots taken by the slowest game of the batch (0 for HiGHS).
    n_fallback : int
        Games re-solved by HiGHS because the kernel's computed gap exceeded ``tol`` times the
        game's payoff range (or the kernel hit its pivot cap).
    """

    value: Any
    x: Any
    y: Any
    gap: Any
    iterations: int
    n_fallback: int = 0

    def __iter__(self):
        return iter((self.value, self.x, self.y))

    def __len__(self) -> int:
        return 3

    def __getitem__(self, k: int) -> Any:
        return (self.value, self.x, self.y)[k]

    @property
    def max_gap(self) -> float:
        """Largest certificate over the batch (a host float)."""
        return float(np.max(to_numpy(self.gap))) if np.size(to_numpy(self.gap)) else 0.0


def _pivot_tol(dtype: Any, xp: Any) -> float:
    return 1e-11 if dtype == xp.float64 else 1e-5


def _simplex(
    Ap: Any, xp: Any, max_iter: int, *, bland_after: int | None = None
) -> tuple[Any, Any, Any, int, Any]:
    """Batched simplex (Dantzig, then Bland) for ``max 1ᵀq s.t. A' q ≤ 1, q ≥ 0`` with ``A' ≥ 1``.

    ``Ap`` has shape (N, m, n). Returns ``(q [N, n], p [N, m], obj [N], pivots, done [N])``
    where ``p`` are the optimal duals (reduced costs of the slacks) and ``obj = 1ᵀq = 1ᵀp``.

    The first ``bland_after`` pivots (default ``m + n``) enter the most negative reduced cost
    (Dantzig) and choose the leaving row by Harris's two-pass ratio test: the longest step
    ``θ = min_i (b_i + tol)/a_i`` that keeps every basic variable ``≥ −tol``, then among the rows
    whose exact ratio ``b_i/a_i`` is within ``θ`` the one with the largest pivot ``a_i``. The
    smallest-ratio row could be a pivot just above ``tol`` (``1.02e-11`` on the 3×4 near-tie game
    of payoffs 0 and 2 perturbed by ``~1e-11``) that wrecks the tableau. Later pivots use
    Bland's rule as before, smallest entering index and, among the rows tied at the
    least ratio, the smallest basic index, so a game still pivoting after ``bland_after`` steps
    cannot cycle (Bland 1977, Theorem 1): the Harris phase is finitely many pivots and needs no
    anti-cycling argument of its own. Basic values below 0 (round-off, and the ``−tol`` slack
    that Harris's test allows) count as 0 in the ratios.
    """
    N, m, n = Ap.shape
    W = n + m + 1
    dt, dev = Ap.dtype, Ap.device
    tol = _pivot_tol(dt, xp)
    eye = xp.broadcast_to(xp.eye(m, dtype=dt, device=dev), (N, m, m))
    ones = xp.ones((N, m, 1), dtype=dt, device=dev)
    cons = xp.concat([Ap, eye, ones], axis=-1)
    obj = xp.concat(
        [-xp.ones((N, 1, n), dtype=dt, device=dev), xp.zeros((N, 1, m + 1), dtype=dt, device=dev)],
        axis=-1,
    )
    T = xp.concat([cons, obj], axis=-2)  # (N, m+1, W)
    basis = xp.broadcast_to(xp.arange(n, n + m, device=dev)[None, :], (N, m))
    big = n + m + 1
    if bland_after is None:  # Dantzig's rule first; Bland's rule from then on (finite termination)
        bland_after = m + n
    rowpos = xp.arange(m + 1, device=dev)[None, :]
    pivots = 0
    for it in range(max_iter + 1):
        red = T[:, m, : n + m]
        neg = red < -tol
        active = xp.any(neg, axis=-1)
        if it == max_iter or not bool(xp.any(active)):
            break
        pivots += 1
        if it < bland_after:
            enter = xp.argmin(red, axis=-1)  # Dantzig: most negative reduced cost
        else:
            enter = xp.argmax(xp.astype(neg, xp.int8), axis=-1)  # Bland: smallest index
        col = xp.take_along_axis(T, xp.broadcast_to(enter[:, None, None], (N, m + 1, 1)), axis=2)[
            :, :, 0
        ]
        ccol = col[:, :m]
        rhs = xp.where(T[:, :m, W - 1] > 0.0, T[:, :m, W - 1], 0.0)  # < 0 only by round-off
        ok = ccol > tol
        safe = xp.where(ok, ccol, 1.0)
        ratio = xp.where(ok, rhs / safe, xp.inf)
        if it < bland_after:
            # Harris's two-pass ratio test: the longest step keeping every basic variable
            # >= -tol, then the largest pivot among the rows blocking within it
            rmax = xp.min(xp.where(ok, (rhs + tol) / safe, xp.inf), axis=-1, keepdims=True)
            leave = xp.argmax(xp.where(ok & (ratio <= rmax), ccol, -1.0), axis=-1)
        else:
            rmin = xp.min(ratio, axis=-1, keepdims=True)
            cand = ok & (ratio <= rmin + tol * (1.0 + xp.abs(rmin)))
            # Bland: among tied rows the one whose basic variable has the smallest index
            leave = xp.argmin(xp.where(cand, basis, big), axis=-1)
        prow = xp.take_along_axis(T, xp.broadcast_to(leave[:, None, None], (N, 1, W)), axis=1)[
            :, 0, :
        ]
        piv = xp.take_along_axis(prow, enter[:, None], axis=1)[:, 0]
        piv = xp.where(active, piv, 1.0)
        prow = prow / piv[:, None]
        col = xp.where(active[:, None], col, 0.0)  # finished games: no-op update
        is_out = (rowpos == leave[:, None]) & active[:, None]  # (N, m+1)
        T = xp.where(is_out[:, :, None], prow[:, None, :], T - col[:, :, None] * prow[:, None, :])
        basis = xp.where(is_out[:, :m], enter[:, None], basis)
    done = ~active
    onb = one_hot(basis, n + m, xp, dt)[:, :, :n]  # (N, m, n)
    rhs, p = _refined(Ap, T, basis, onb, xp)
    q = xp.sum(onb * rhs[:, :, None], axis=-2)
    return q, p, T[:, m, W - 1], pivots, done


def _refined(Ap: Any, T: Any, basis: Any, onb: Any, xp: Any) -> tuple[Any, Any]:
    r"""Basic values and duals of the final tableau after one step of iterative refinement.

    With the basis matrix ``B`` (the columns ``basis`` of ``[A' | I]``, taken from the data, not
    from the tableau) and the tableau's own ``B⁻¹`` (its slack columns), one refinement step is
    ``b ← b + B⁻¹(1 − B b)`` for the basic values and ``p ← p + B⁻ᵀ(c_B − Bᵀp)`` for the duals
    (``c_B`` the objective on the basis). The tableau's values come from many rank-one updates,
    which are not backward stable: on near-tie games (integer payoffs plus ``1e-9`` noise) whose
    optimal basis has a condition number near ``1e9``, their residuals made the strategies' duality
    gap miss ``1e-9·range`` on 133 of 2000 4×6 games; the refined residual is of the order of
    ``u‖B‖‖b‖`` and 5 miss. Per game the pair (tableau or refined) with the smaller duality gap on
    ``A'`` is kept, so refinement never makes a game worse.
    """
    N, m, n = Ap.shape
    W = n + m + 1
    dt, dev = Ap.dtype, Ap.device
    full = xp.concat([Ap, xp.broadcast_to(xp.eye(m, dtype=dt, device=dev), (N, m, m))], axis=-1)
    Bm = xp.take_along_axis(full, xp.broadcast_to(basis[:, None, :], (N, m, m)), axis=2)
    Binv = T[:, :m, n : n + m]
    b, p = T[:, :m, W - 1], T[:, m, n : n + m]
    cB = xp.sum(onb, axis=-1)  # 1 where the basic variable is a q_j, 0 for a slack
    rb = 1.0 - (Bm @ b[:, :, None])[:, :, 0]
    b2 = b + (Binv @ rb[:, :, None])[:, :, 0]
    rp = cB - (p[:, None, :] @ Bm)[:, 0, :]
    p2 = p + (rp[:, None, :] @ Binv)[:, 0, :]

    def gap(bv: Any, pv: Any) -> Any:
        y = _normalise(xp.sum(onb * bv[:, :, None], axis=-2), xp)
        return _computed_gap(Ap, _normalise(pv, xp), y, xp)

    keep = gap(b2, p2) < gap(b, p)
    return xp.where(keep[:, None], b2, b), xp.where(keep[:, None], p2, p)


def _uncertified(Af: Any, lo: Any, rng: Any, x: Any, y: Any, tol: float, xp: Any) -> Any:
    """Games ``Af[N, m, n]`` (least entries ``lo``, ranges ``rng = max − min``) whose kernel strategies
    miss the target: computed gap ``> tol·rng + η``.

    The gap is shift-invariant, so it is computed on ``fl(Af − lo)``: entries in ``[0, rng]``, each
    rounded once, so its round-off is about ``(m + n)·u·rng`` (``u`` the unit roundoff), relative to
    the range like the target. On ``Af`` itself it is ``(m + n)·u·max|A|``, which sends a game
    ``c + A`` with ``|c| ≫ rng`` to HiGHS for round-off alone. ``η = 2(m + n + 6)s`` (``s`` the
    dtype's subnormal spacing; the underflow term of :func:`_gap_allowance`) is the least gap that
    can be told from round-off where the payoffs are subnormal and ``tol·rng`` underflows. As before,
    the round-off allowance itself sends no game to HiGHS (it is in the reported certificate): in
    float32 a test on ``gap + allowance`` would fail every game at the default ``tol`` and make
    device arrays raise. Every term scales with the game, so ``A·2^-k`` is decided as ``A`` is
    (while its payoffs stay normal).
    """
    m, n = Af.shape[-2], Af.shape[-1]
    raw = _computed_gap(Af - lo[:, None, None], x, y, xp)
    eta = 2.0 * (m + n + 6) * subnormal_spacing(Af.dtype, xp)
    return raw > tol * rng + eta


def _normalise(z: Any, xp: Any) -> Any:
    z = xp.where(z > 0.0, z, 0.0)
    s = xp.sum(z, axis=-1, keepdims=True)
    return xp.where(s > 0.0, z / xp.where(s > 0.0, s, 1.0), 1.0 / z.shape[-1])


def solve_zero_sum(
    A: Any, *, tol: float = 1e-9, fallback: bool = True, max_iter: int | None = None
) -> ZeroSumSolution:
    r"""Value and optimal strategies of every zero-sum game in a batch: ``v = max_x min_y xᵀAy``.

    Parameters
    ----------
    A : array, shape (..., m, n)
        Payoff to the row player, who maximises; the column player minimises.
    tol : float, default 1e-9
        Certificate target relative to the payoff range: a game whose kernel strategies have a
        computed duality gap above ``tol · (max A − min A)`` (plus the dtype's underflow floor,
        :func:`_uncertified`) is re-solved by HiGHS (``fallback=True``, host arrays only) or
        reported by :class:`~rltheory.errors.SolverError`. Scaling ``A`` by a power of two
        scales the target with it, so ``A·2^-k`` gets the strategies of ``A``.
    fallback : bool, default True
        Re-solve uncertified games with :func:`solve_zero_sum_highs` (numpy input only).
    max_iter : int, optional
        Pivot cap (default ``50·(m + n) + 100``).

    Returns
    -------
    ZeroSumSolution
        Unpacks as ``value[...], x[..., m], y[..., n]`` and carries ``gap[...]``, the
        certificate ``max_i (Ay)_i − min_j (xᵀA)_j``.

    Raises
    ------
    InvalidModelError
        ``A`` has fewer than two axes, an empty action set or a non-finite entry.
    SolverError
        Some game's computed gap exceeds ``tol·(max A − min A)`` and no fallback is possible.

    Warns
    -----
    ConvergenceWarning
        A game still above ``max(tol, 64·eps)·(max A − min A)`` after the fallback (``eps`` of
        the payoffs' dtype: float32 games end a few ``eps`` off once HiGHS's float64 strategies
        are cast; the reported ``gap`` certifies what is returned). The fallback keeps, for each player, the best of the kernel's, HiGHS's and
        their equalised strategies (support enumeration for games of at most
        :data:`~rltheory.games._zero_sum_polish.ENUMERATION_LIMIT` support pairs,
        :func:`~rltheory.games._zero_sum_polish.best_strategies`): HiGHS alone left 2 of the 157
        fallback games of 3000 near-tie ``5×6`` games (integers 0..1 plus ``1e-9`` noise) at gaps
        of ``1.7e-9`` and ``1.5e-8`` of the range; now all are within ``tol = 1e-9``.

    Notes
    -----
    Each game is rescaled to ``A' = (A − min A)/(max A − min A) + 1 ∈ [1, 2]`` so that
    ``v(A') ≥ 1 > 0``; then (Dantzig 1951) ``v(A') = 1/max{1ᵀq : A'q ≤ 1, q ≥ 0}``, the
    optimal ``q`` normalised is a minimax ``y`` and the optimal duals ``p`` of the rows
    normalised are a maximin ``x``. The LP is solved by a batched primal simplex with
    Dantzig's most-negative-reduced-cost rule and Harris's two-pass ratio test (the largest
    pivot among the rows blocking within the tolerance) for the first ``m + n`` pivots and
    Bland's smallest-index rule after that (ties in the ratio test go to the smallest basic
    index), so a game that cycles under Dantzig's rule on a degenerate vertex switches to a
    rule that cannot cycle (Bland 1977, Theorem 1); games that are already optimal
    stop pivoting while the rest of the batch continues. Cost per pivot
    ``O(N·m·(m+n))`` for ``N`` games. Ties, dominated strategies and ``1×n`` or ``m×1``
    games need no special handling. The final basic values and duals take one step of
    iterative refinement against the data (:func:`_refined`; kept per game only where it lowers
    the gap). Negative round-off entries of the strategies (about the pivot tolerance, 1e-11
    in float64, on well-conditioned games; larger on ill-conditioned ones, which the
    certificate then catches) are set to zero and the strategies renormalised; the
    certificate is computed afterwards, on the original ``A`` (games with
    an entry beyond a quarter of the dtype's largest float are solved as ``A/4``, an exact
    scaling, so that ``max A − min A`` cannot overflow; value and gap are scaled back). The
    reported gap adds the round-off of the computed sums and of ``value`` (without it the
    computed gap was 0 while the exact gap of the returned float32 strategies was 1.9e-6, and
    one game reported −3e-8); the fallback test uses the computed gap alone, so the allowance
    never sends a game to HiGHS. That test is relative to the range, ``gap > tol·range + η``
    with ``η`` the dtype's underflow floor (:func:`_uncertified`), the gap computed on
    ``A − min A``. It was ``gap > tol·max(1, range)``: for ranges below ``tol`` every strategy
    pair passed, and the 3×4 game of payoffs ``0`` and ``2`` perturbed by ``~1e-11`` (a pivot
    of ``1.02e-11`` wrecks the kernel's tableau) scaled by ``2^-60`` came back with a pure
    pair of gap ``0.99999·range`` and value ``−3.1e-12·2^-60`` where the value is
    ``1.0·2^-60``; unscaled, the same game went to HiGHS (and raised on a device). Harris's
    ratio test now avoids that pivot: the kernel certifies the game itself.

    References
    ----------
    Dantzig (1951), op. cit.; Bland (1977), Theorem 1; von Neumann (1928).

    Examples
    --------
    Rock-paper-scissors has value 0 and uniform optimal strategies:

    >>> import numpy as np
    >>> A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    >>> v, x, y = solve_zero_sum(A)
    >>> round(float(v), 12), np.round(x, 12).tolist()
    (0.0, [0.333333333333, 0.333333333333, 0.333333333333])
    >>> bool(solve_zero_sum(A).gap <= 1e-12)
    True
    """
    xp = array_namespace(A)
    A = as_matrix_games(A, "A", xp)
    tol = check_real(tol, "tol", low=0.0)
    if max_iter is not None:
        max_iter = check_int(max_iter, "max_iter", minimum=0)
    batch, (m, n) = tuple(A.shape[:-2]), tuple(A.shape[-2:])
    N = int(np.prod(batch)) if batch else 1
    Af = xp.reshape(A, (N, m, n))
    if N == 0:
        z = xp.zeros(batch, dtype=A.dtype, device=A.device)
        return ZeroSumSolution(
            z,
            xp.zeros(batch + (m,), dtype=A.dtype, device=A.device),
            xp.zeros(batch + (n,), dtype=A.dtype, device=A.device),
            z,
            0,
        )
    # Payoffs near ±max float: max A − min A (and the certificate) would overflow to inf, so
    # such games are solved as A/4 (exact: a power of two) and value and gap scaled back.
    big = xp.max(xp.abs(xp.reshape(Af, (N, m * n))), axis=-1) > float(xp.finfo(Af.dtype).max) / 4
    unscale = 1.0 + 3.0 * xp.astype(big, Af.dtype)  # 4 for those games, 1 otherwise
    if bool(xp.any(big)):
        Af = Af / unscale[:, None, None]
    lo = xp.min(xp.reshape(Af, (N, m * n)), axis=-1)
    hi = xp.max(xp.reshape(Af, (N, m * n)), axis=-1)
    rng = hi - lo
    scale = xp.where(rng > 0.0, rng, 1.0)
    Ap = (Af - lo[:, None, None]) / scale[:, None, None] + 1.0
    cap = 50 * (m + n) + 100 if max_iter is None else int(max_iter)
    q, p, _, pivots, done = _simplex(Ap, xp, cap)
    y = _normalise(q, xp)
    x = _normalise(p, xp)
    _, value, gap = _certificate(Af, x, y, xp)
    bad = _uncertified(Af, lo, rng, x, y, tol, xp) | ~done
    n_fb = 0
    if bool(xp.any(bad)):
        if not (fallback and is_host(xp)):
            worst = int(np.argmax(to_numpy(gap)))
            raise SolverError(
                f"solve_zero_sum: {int(xp.sum(xp.astype(bad, xp.int32)))} game(s) not certified "
                f"(worst gap {float(to_numpy(gap)[worst]):.3g} at flat index {worst}, tol {tol:g}); "
                "pass host arrays with fallback=True to re-solve them with HiGHS",
                status="uncertified",
            )
        idx = np.flatnonzero(to_numpy(bad))
        n_fb = int(idx.size)
        ref = solve_zero_sum_highs(to_numpy(Af)[idx])
        xh, yh = to_numpy(x).copy(), to_numpy(y).copy()
        # each player's best of the kernel's, HiGHS's and their equalised strategies: HiGHS alone
        # missed the target on 2 of 3000 near-tie 5x6 games (gap 1.7e-9 and 1.5e-8 of the range)
        xh[idx], yh[idx] = best_strategies(
            to_numpy(Af)[idx], [(ref.x, ref.y), (xh[idx], yh[idx])], tol
        )
        x = xp.asarray(xh.astype(to_numpy(x).dtype), device=Af.device)
        y = xp.asarray(yh.astype(to_numpy(y).dtype), device=Af.device)
        _, value, gap = _certificate(Af, x, y, xp)
        # warned above max(tol, 64 eps) of the range: float32 payoffs with the default tol = 1e-9
        # end a few eps of the range off after the cast of HiGHS's float64 strategies
        floor = max(tol, 64.0 * float(xp.finfo(Af.dtype).eps))
        short = np.flatnonzero(to_numpy(_uncertified(Af, lo, rng, x, y, floor, xp)))
        if short.size:  # (the gap is reported: it is the certificate of what is returned)
            warnings.warn(
                f"solve_zero_sum: {short.size} game(s) above tol·(max A − min A) after the HiGHS "
                f"fallback (first at flat index {int(short[0])}: gap "
                f"{float(to_numpy(gap)[short[0]]):.3g}, range {float(to_numpy(rng)[short[0]]):.3g}, "
                f"tol {tol:g}, at least 64 eps of the dtype: {floor:.3g}); their reported gap is "
                "what is certified",
                ConvergenceWarning,
                stacklevel=2,
            )
    value, gap = value * unscale, gap * unscale
    return ZeroSumSolution(
        value=xp.reshape(value, batch),
        x=xp.reshape(x, batch + (m,)),
        y=xp.reshape(y, batch + (n,)),
        gap=xp.reshape(gap, batch),
        iterations=pivots,
        n_fallback=n_fb,
    )


def solve_zero_sum_highs(A: Any) -> ZeroSumSolution:
    r"""Reference zero-sum solver: one HiGHS LP per game (host only).

    Solves ``max_{x ∈ Δ_m, v} v`` s.t. ``(xᵀA)_j ≥ v`` for all ``j`` with HiGHS's dual simplex at
    feasibility tolerances ``1e-10`` (:func:`rltheory._numerics.highs_linprog`); the minimax ``y``
    is the vector of the inequality constraints' duals. At scipy's default tolerances (``1e-7``)
    near-tie games (integer payoffs plus ``1e-9`` noise) came back with exact gaps up to
    ``2.3e-9`` of the range, above :func:`solve_zero_sum`'s default target, for which this is the
    fallback; now ``1.4e-10``. Each game is first mapped to payoffs in ``[0, 1]``
    (``(A − min A)/(max A − min A)``, which keeps the optimal strategies); value and gap are
    reported for ``A`` itself.

    Parameters
    ----------
    A : numpy array, shape (..., m, n)

    Returns
    -------
    ZeroSumSolution
        ``iterations`` is 0; ``gap`` is the duality-gap certificate.

    Raises
    ------
    TypeError
        ``A`` lives on a device (use :func:`rltheory.backend.to_numpy`).
    SolverError
        HiGHS reports a failure (status attached).

    References
    ----------
    Dantzig (1951), op. cit.; Huangfu, Q. & Hall, J. A. J. (2018). Parallelizing the dual
    revised simplex method. Math. Prog. Comp. 10, 119–142 (HiGHS).

    Examples
    --------
    >>> import numpy as np
    >>> v, x, y = solve_zero_sum_highs(np.array([[2.0, 0.0], [0.0, 1.0]]))
    >>> round(float(v), 9), np.round(x, 9).tolist()
    (0.666666667, [0.333333333, 0.666666667])
    """
    # validated (text and complex refused) before the cast to float64
    Ah = require_host(A, "solve_zero_sum_highs")
    Ah = np.asarray(to_numpy(as_matrix_games(Ah, "A", np)), dtype=np.float64)
    batch, (m, n) = Ah.shape[:-2], Ah.shape[-2:]
    flat = Ah.reshape((-1, m, n))
    X, Y = np.zeros((flat.shape[0], m)), np.zeros((flat.shape[0], n))
    c = np.zeros(m + 1)
    c[-1] = -1.0
    A_eq = np.concatenate([np.ones((1, m)), np.zeros((1, 1))], axis=1)
    bounds = [(0.0, None)] * m + [(None, None)]
    big = _big_scale(flat, np)
    for k, G in enumerate(flat):
        # a positive affine map keeps the optimal strategies; on G/4 (exact) where max G − min G
        # would overflow (payoffs of both signs beyond a quarter of the float range)
        (Gn,) = unit_range(G / big[k])
        A_ub = np.concatenate([-Gn.T, np.ones((n, 1))], axis=1)
        res = highs_linprog(c, A_ub=A_ub, b_ub=np.zeros(n), A_eq=A_eq, b_eq=[1.0], bounds=bounds)
        if res.status != 0:
            raise SolverError(f"HiGHS failed on game {k}: {res.message}", status=res.status)
        X[k] = np.clip(res.x[:m], 0.0, None)
        Y[k] = np.clip(-res.ineqlin.marginals, 0.0, None)
    X /= X.sum(-1, keepdims=True)
    Y /= Y.sum(-1, keepdims=True)
    _, value, gap = _certificate(flat, X, Y, np)
    return ZeroSumSolution(
        value=value.reshape(batch),
        x=X.reshape(batch + (m,)),
        y=Y.reshape(batch + (n,)),
        gap=gap.reshape(batch),
        iterations=0,
    )
