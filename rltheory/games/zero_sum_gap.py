r"""Duality gaps of zero-sum matrix games: the certificate and its round-off allowance.

Split from :mod:`.matrix` (which re-exports these names). For payoffs ``A ∈ R^{m×n}`` (row
player maximises ``xᵀAy``) and any pair ``(x, y)`` of mixed strategies the *duality gap* (the
exploitability of the pair)

    ``gap(x, y) = max_i (A y)_i − min_j (xᵀ A)_j ≥ 0``

bounds the distance of both guarantees from the value ``v(A)``,
``min_j (xᵀA)_j ≤ v(A) ≤ max_i (Ay)_i``; ``gap = 0`` iff ``(x, y)`` is a saddle point
(von Neumann 1928). The computed gap is made a certificate by a round-off allowance
(Higham's ``γ_n`` plus an underflow term, :func:`_gap_allowance`), and payoffs near the float
range are scored on ``A/4`` (:func:`_big_scale`).

References
----------
von Neumann, J. (1928). Zur Theorie der Gesellschaftsspiele. Math. Ann. 100.
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM,
Lemma 3.1, eqs. (2.8) and (3.4).
"""

from __future__ import annotations

from typing import Any

from .._numerics import higham_gamma, subnormal_spacing
from .._validate import as_distribution, check_finite, check_ndim
from ..backend import array_namespace, as_float
from ..errors import InvalidModelError

__all__ = ["as_matrix_games", "duality_gap"]


def as_matrix_games(A: Any, field: str = "A", xp: Any = None) -> Any:
    """Validate payoff matrices ``A[..., m, n]`` (finite, ``m, n ≥ 1``) as a float array.

    Raises
    ------
    InvalidModelError
        Fewer than two axes, an empty action set or a non-finite entry (located).
    TypeError
        Text or complex entries (naming ``field``).
    """
    xp = array_namespace(A) if xp is None else xp
    A = as_float(A, xp, field=field)
    check_ndim(A, field, 2, "(..., m, n)")
    if A.shape[-2] < 1 or A.shape[-1] < 1:
        raise InvalidModelError(
            f"{field} needs at least one action per player; got shape {tuple(A.shape)}"
        )
    check_finite(A, field, ("i", "j"))
    return A


def duality_gap(A: Any, x: Any, y: Any) -> Any:
    r"""Exploitability of ``(x, y)`` in the zero-sum game ``A``: ``max_i (Ay)_i − min_j (xᵀA)_j``.

    Parameters
    ----------
    A : array, shape (..., m, n)
    x : array, shape (..., m)
        Row (maximising) mixed strategy.
    y : array, shape (..., n)
        Column (minimising) mixed strategy.

    Returns
    -------
    gap : array, shape (...)
        Never negative, and never below the exact gap of ``(x/Σx, y/Σy)``: the computed gap
        (0 where round-off made it negative; the exact one is ``≥ 0`` by weak duality and
        0 iff ``(x, y)`` is a saddle point) plus a round-off allowance of about
        ``(m + n + 6)·u·max|A|`` (``u`` the unit roundoff; :func:`_gap_allowance`). Each
        player's loss against a best response at the value is at most ``gap``:
        ``v − min_j (xᵀA)_j ≤ gap`` and ``max_i (Ay)_i − v ≤ gap``. Games with an entry
        beyond a quarter of the dtype's largest float are scored as ``A/4`` (exact) and the gap
        scaled back, so it is finite wherever it is in range and ``inf`` (without an overflow
        warning) only where it exceeds the float range.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[1.0, -1.0], [-1.0, 1.0]])          # matching pennies
    >>> g = float(duality_gap(A, np.array([0.5, 0.5]), np.array([0.5, 0.5])))
    >>> 0.0 < g < 1e-14                                   # 0 exactly, plus the allowance
    True
    >>> round(float(duality_gap(A, np.array([1.0, 0.0]), np.array([1.0, 0.0]))), 12)
    2.0
    """
    xp = array_namespace(A, x, y)
    A = as_matrix_games(A, "A", xp)
    x = as_distribution(x, "x", A.shape[-2], xp, A.dtype, name="i")
    y = as_distribution(y, "y", A.shape[-1], xp, A.dtype, name="j")
    return _duality_gap(A, x, y, xp)


def _big_scale(A: Any, xp: Any) -> Any:
    """``c = 4`` for games ``A[..., m, n]`` with an entry beyond a quarter of the float range, else 1.

    The gap, ``xᵀAy`` and their allowance are computed on ``A/c`` (exact: a power of two, and
    subnormal entries only occur scaled in games whose round-off allowance is ~1e290): there the
    utilities ``Ay``, ``xᵀA`` and ``max − min`` of two of them stay in range. On ``A`` itself a
    gap of payoffs ``±1e308`` was ``inf − …`` with a RuntimeWarning even where it is 0.
    """
    m, n = A.shape[-2], A.shape[-1]
    a_max = xp.max(xp.abs(xp.reshape(A, tuple(A.shape[:-2]) + (m * n,))), axis=-1)
    big = a_max > float(xp.finfo(A.dtype).max) / 4.0
    return 1.0 + 3.0 * xp.astype(big, A.dtype)


def _unscale(z: Any, c: Any, xp: Any) -> Any:
    """``c·z`` (``c ∈ {1, 4}``, exact) without an overflow warning: ``±inf`` where it leaves the range.

    Only a ``z`` of a scaled game (``c = 4``) beyond a quarter of the float range overflows;
    its product is then ``±inf`` (the only float bound of a number beyond the range).
    """
    lim = float(xp.finfo(z.dtype).max) / 4.0
    over = (c > 1.0) & (xp.abs(z) > lim)
    safe = xp.where(over, 0.0, z) * c
    return xp.where(over & (z > 0.0), xp.inf, xp.where(over, -xp.inf, safe))


def _gap_parts(A: Any, x: Any, y: Any, xp: Any) -> tuple[Any, Any, Any, Any]:
    """``(c, computed gap, xᵀAy, allowance)`` of the games ``A/c`` (:func:`_big_scale`).

    The gap is ``max_i (A'y)_i − min_j (xᵀA')_j`` as computed in ``A``'s precision on
    ``A' = A/c`` (no allowance), the allowance :func:`_gap_allowance` of ``A'``; multiplied by
    ``c`` (:func:`_unscale`) they are those of ``A``, finite wherever the number is in range.
    """
    c = _big_scale(A, xp)
    As = A / c[..., None, None]
    Ay = (As @ y[..., None])[..., 0]
    xA = (x[..., None, :] @ As)[..., 0, :]
    raw = xp.max(Ay, axis=-1) - xp.min(xA, axis=-1)
    return c, raw, xp.sum(x * Ay, axis=-1), _gap_allowance(As, x, y, xp)


def _computed_gap(A: Any, x: Any, y: Any, xp: Any) -> Any:
    """``max_i (Ay)_i − min_j (xᵀA)_j`` as computed in ``A``'s precision (no allowance).

    Computed on ``A/4`` for games with payoffs beyond a quarter of the float range
    (:func:`_gap_parts`), so it is finite whenever the gap is in range.
    """
    c, raw, _, _ = _gap_parts(A, x, y, xp)
    return _unscale(raw, c, xp)


def _gap_allowance(A: Any, x: Any, y: Any, xp: Any) -> Any:
    r"""Round-off allowance ``ε`` of a computed gap (or of a computed ``xᵀAy``), per game.

    With unit roundoff ``u``, ``γ_k = ku/(1 − ku)`` (Higham 2002, Lemma 3.1, eq. (3.4)) and the
    stored strategies summing to ``σ_x, σ_y`` (``δ_x ≥ |σ_x − 1|``: the computed sum's distance
    from 1 plus ``γ_m``), each computed ``(Ay)_i`` is within ``γ_n σ_y max|A|`` of the exact one,
    which is within ``δ_y max|A|`` of ``(A y/σ_y)_i``, the payoff of the strategy on the
    simplex; likewise for ``xᵀA``. So ``ε = max|A|·((1 + δ_y)γ_{n+3} + δ_y + (1 + δ_x)γ_{m+3} +
    δ_x)``, whose ``3u`` slack per term covers the subtraction ``max − min``, the rounding of
    ``gap + ε`` and of ``ε`` itself (the same bound holds for ``xᵀAy``, a sum of ``n`` then
    ``m`` products). The same allowance as :class:`rltheory.mdp.discounted._Roundoff`'s
    (Higham's ``γ`` plus the stored distribution's sum defect), for a matrix game.

    Plus the underflow the relative model leaves out, ``η = 2(m + n + 6)s`` (``s`` the dtype's
    subnormal spacing, :func:`~rltheory._numerics.subnormal_spacing`): a product with a subnormal
    result errs by up to ``s/2`` absolutely (Higham 2002, eq. (2.8)), and a gap or ``xᵀAy`` takes
    ``m + n`` of them. Without it, games with payoffs ~1e-310 (float32: ~1e-40) got gap
    certificates below the exact gap (125 of 300 random strategy pairs; ``solve_zero_sum``
    reported 0 for 52 of 300 games whose exact gap was up to 2.4e-47 in float32).
    """
    m, n = A.shape[-2], A.shape[-1]
    u = float(xp.finfo(A.dtype).eps) / 2.0

    def gam(k: int) -> float:
        return higham_gamma(k, u)

    a_max = xp.max(xp.abs(xp.reshape(A, tuple(A.shape[:-2]) + (m * n,))), axis=-1)
    dx = xp.abs(xp.sum(x, axis=-1) - 1.0) + gam(m)
    dy = xp.abs(xp.sum(y, axis=-1) - 1.0) + gam(n)
    eta = 2.0 * (m + n + 6) * subnormal_spacing(A.dtype, xp)
    return a_max * ((1.0 + dy) * gam(n + 3) + dy + (1.0 + dx) * gam(m + 3) + dx) + eta


def _duality_gap(A: Any, x: Any, y: Any, xp: Any) -> Any:
    """:func:`duality_gap` without checks, for loops over iterates of validated games.

    The computed gap, set to 0 where round-off made it negative (the exact gap of strategies on
    the simplex is ``≥ 0``), plus :func:`_gap_allowance`: never below the exact gap of
    ``(x/Σx, y/Σy)``.
    """
    c, raw, _, allowance = _gap_parts(A, x, y, xp)
    return _unscale(xp.where(raw > 0.0, raw, 0.0) + allowance, c, xp)


def _certificate(A: Any, x: Any, y: Any, xp: Any) -> tuple[Any, Any, Any]:
    """``(computed gap, value = xᵀAy, certificate)`` of validated games ``A[N, m, n]``.

    The certificate is :func:`_duality_gap` (``≥`` the exact gap) plus one more
    :func:`_gap_allowance` for the rounding of ``value``, so that ``|value − v(A)| ≤ gap``.
    """
    c, raw, value, allowance = _gap_parts(A, x, y, xp)
    cert = xp.where(raw > 0.0, raw, 0.0) + 2.0 * allowance
    return _unscale(raw, c, xp), _unscale(value, c, xp), _unscale(cert, c, xp)
