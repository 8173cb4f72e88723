r"""Lemke–Howson: one Nash equilibrium of a bimatrix game by complementary pivoting.

Split from :mod:`.bimatrix` (which re-exports :func:`lemke_howson`).

References
----------
von Stengel, B. (2007). Equilibrium computation for two-player games in strategic and extensive
form. Ch. 3 of *Algorithmic Game Theory*, Cambridge UP, §3.4 (best-response polytopes, labels),
§3.5 (Lemke–Howson) and its lexicographic degeneracy resolution.
Lemke, C. E. & Howson, J. T. (1964). Equilibrium points of bimatrix games. J. SIAM 12(2).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_positive_int
from ..errors import SolverError
from ._bimatrix_common import _payoffs, _positive

__all__ = ["lemke_howson"]


def _lex_ratio_row(T: np.ndarray, col: int, rhs: int, slack: slice) -> int:
    """Lexicographic minimum-ratio test: rows with T[r, col] > 0, compare (rhs, slack cols)/T[r, col]."""
    c = T[:, col]
    rows = np.flatnonzero(c > 1e-12)
    if rows.size == 0:
        raise SolverError(
            "Lemke-Howson: unbounded pivot column (payoffs must be positive)", status="unbounded"
        )
    keys = np.concatenate([T[rows, rhs][:, None], T[rows, slack]], axis=1) / c[rows, None]
    best = 0
    for r in range(
        1, rows.size
    ):  # lexicographic comparison, exact (no tolerance: ties are impossible)
        d = keys[r] - keys[best]
        nz = np.flatnonzero(np.abs(d) > 1e-13 * (1.0 + np.abs(keys[best])))
        if nz.size and d[nz[0]] < 0:
            best = r
    return int(rows[best])


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
    max_pivots : int

    Returns
    -------
    (x, y) : numpy arrays
        A Nash equilibrium (certified in the tests by :func:`bimatrix_nash_conv`).

    Raises
    ------
    ValueError
        ``initial_label`` out of range.
    SolverError
        The pivot cap is reached (cannot happen with the lexicographic rule; kept as a guard).

    Notes
    -----
    Degenerate games are handled by the lexicographic minimum-ratio test: the leaving
    row minimises ``(rhs, row of the inverse basis)/pivot`` lexicographically, which is
    the ratio test of a perturbed, nondegenerate system (von Stengel 2007, §3.5 end), so
    the path never cycles and always ends at an equilibrium — unlike support
    enumeration, Lemke–Howson needs no nondegeneracy. Host-only.

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
    Ap, Bp = _positive(A), _positive(B)
    # Tableau P (player 1): rows = n constraints  Bpᵀ x + s = 1; columns by label: x_i (i < m), s_j (m + j).
    TP = np.concatenate([Bp.T, np.eye(n), np.ones((n, 1))], axis=1)
    basisP = list(range(m, m + n))
    # Tableau Q (player 2): rows = m constraints  r + Ap y = 1; columns by label: r_i (i < m), y_j (m + j).
    TQ = np.concatenate([np.eye(m), Ap, np.ones((m, 1))], axis=1)
    basisQ = list(range(m))
    rhs = m + n
    slackP, slackQ = slice(m, m + n), slice(0, m)
    entering = int(initial_label)
    in_P = entering < m  # x_k enters P when a row label is dropped, y_j enters Q otherwise
    for _ in range(max_pivots):
        T, basis, slack = (TP, basisP, slackP) if in_P else (TQ, basisQ, slackQ)
        r = _lex_ratio_row(T, entering, rhs, slack)
        T[r] /= T[r, entering]
        for i in range(T.shape[0]):
            if i != r and T[i, entering] != 0.0:
                T[i] -= T[i, entering] * T[r]
        leaving = basis[r]
        basis[r] = entering
        if leaving == initial_label:
            break
        entering = leaving
        in_P = not in_P
    else:
        raise SolverError(
            f"Lemke-Howson did not terminate within {max_pivots} pivots", status="max_pivots"
        )
    x = np.zeros(m)
    y = np.zeros(n)
    for r, lab in enumerate(basisP):
        if lab < m:
            x[lab] = TP[r, rhs]
    for r, lab in enumerate(basisQ):
        if lab >= m:
            y[lab - m] = TQ[r, rhs]
    x, y = np.clip(x, 0.0, None), np.clip(y, 0.0, None)
    return x / x.sum(), y / y.sum()
