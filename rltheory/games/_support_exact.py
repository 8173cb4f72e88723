r"""Exact rational checks behind support enumeration (private helpers of :mod:`.bimatrix`).

Support enumeration solves its indifference systems in floating point on payoffs rescaled to
``[1, 2]`` and keeps a support pair when the solution passes its tests within a tolerance
``tol``. That floating-point pass only proposes: a payoff that differs from another by less than
``tol`` times the payoff range looks like a tie there, so a game with payoffs from ``3e-5`` to
``1e7`` was reported degenerate and got "equilibria" where the row player gains ``9e-5`` by
deviating. The functions here decide each proposal in exact rational arithmetic on the payoffs
as given (every float is a rational number): the indifference system

    ``Σ_{i∈I} z_i M_ij = w  (j ∈ J)``,  ``Σ_{i∈I} z_i = 1``

is solved by Gauss–Jordan elimination over :class:`fractions.Fraction`, and the sign and
best-response conditions are compared exactly (von Stengel 2007, Algorithm 3.4 and §3.4: a vertex
of a best-response polytope is degenerate iff it has more labels than its dimension).

Cost: ``O(k³)`` rational operations per proposal, ``k`` the support size; the floating-point pass
keeps the number of proposals small.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = [
    "ExactGame",
    "exact_equilibrium",
    "exact_extra_labels",
    "is_exact_equilibrium",
    "solve_exact",
]


class ExactGame:
    """The payoffs ``A``, ``B`` as exact rationals (converted once, row by row on demand)."""

    def __init__(self, A: np.ndarray, B: np.ndarray) -> None:
        self._A, self._B = A, B
        self.shape: tuple[int, int] = (int(A.shape[0]), int(A.shape[1]))
        self._rows: dict[tuple[str, int], list[Fraction]] = {}

    def row(self, which: str, i: int) -> list[Fraction]:
        """Row ``i`` of ``A`` (``which="A"``) or of ``Bᵀ`` (``which="BT"``) as fractions."""
        key = (which, i)
        if key not in self._rows:
            src = self._A[i] if which == "A" else self._B[:, i]
            self._rows[key] = [Fraction(float(v)) for v in src]
        return self._rows[key]


def solve_exact(M: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    """``z`` with ``M z = b`` exactly (Gauss–Jordan, first nonzero pivot); ``None`` if ``M`` is singular."""
    n = len(b)
    T = [list(r) + [v] for r, v in zip(M, b, strict=True)]
    for c in range(n):
        p = next((r for r in range(c, n) if T[r][c] != 0), None)
        if p is None:
            return None
        T[c], T[p] = T[p], T[c]
        piv = T[c][c]
        T[c] = [v / piv for v in T[c]]
        for r in range(n):
            if r != c and T[r][c] != 0:
                f = T[r][c]
                T[r] = [a - f * b for a, b in zip(T[r], T[c], strict=True)]
    return [T[r][n] for r in range(n)]


def _indifferent(
    game: ExactGame, which: str, I: tuple[int, ...], J: tuple[int, ...], size: int
) -> tuple[list[Fraction], Fraction, list[Fraction]] | None:
    """Exact ``z`` on ``I`` making the opponent's strategies ``J`` indifferent.

    ``which="BT"``: ``z = x`` (player 1's mix over rows ``I``), the payoffs ``(xᵀB)_j`` of all
    ``size = n`` columns and the common value ``u`` on ``J``; ``which="A"``: ``z = y`` over columns
    ``I``, the payoffs ``(Ay)_i`` of all ``size = m`` rows, the value ``v`` on the rows ``J``.
    Returns ``(z over all strategies of the mixing player, value, opponent payoffs)``, or ``None``
    when the system is singular.
    """
    k = len(I)
    opp = [
        game.row("BT" if which == "BT" else "A", j) for j in J
    ]  # payoff rows of the opponent's J
    M = [[r[i] for i in I] + [Fraction(-1)] for r in opp] + [[Fraction(1)] * k + [Fraction(0)]]
    sol = solve_exact(M, [Fraction(0)] * k + [Fraction(1)])
    if sol is None:
        return None
    z_full = dict(zip(I, sol[:k], strict=True))
    rows = [game.row("BT" if which == "BT" else "A", j) for j in range(size)]
    pay = [sum((r[i] * z_full[i] for i in I), Fraction(0)) for r in rows]
    return sol[:k], sol[k], pay


def exact_equilibrium(
    game: ExactGame, I: tuple[int, ...], J: tuple[int, ...], m: int, n: int
) -> tuple[list[Fraction], list[Fraction]] | None:
    """The exact equilibrium on supports ``(I, J)`` (full-length ``x``, ``y``), or ``None``.

    ``(x, y)`` solves both indifference systems and is kept iff ``x, y ≥ 0`` and no pure strategy
    beats the common values: ``max_j (xᵀB)_j = u`` and ``max_i (Ay)_i = v`` exactly.
    """
    sx = _indifferent(game, "BT", I, J, n)
    sy = _indifferent(game, "A", J, I, m)
    if sx is None or sy is None:
        return None
    (xs, u, xB), (ys, v, Ay) = sx, sy
    if min(xs) < 0 or min(ys) < 0 or max(xB) > u or max(Ay) > v:
        return None
    x, y = [Fraction(0)] * m, [Fraction(0)] * n
    for i, p in zip(I, xs, strict=True):
        x[i] = p
    for j, q in zip(J, ys, strict=True):
        y[j] = q
    return x, y


def exact_extra_labels(
    game: ExactGame, player: int, I: tuple[int, ...], J: tuple[int, ...], m: int, n: int
) -> tuple[list[Fraction], int] | None:
    """Whether the mix on ``I`` making ``J`` indifferent is a degenerate vertex, exactly.

    ``player=0``: ``x`` over rows ``I`` against columns ``J``; ``player=1``: ``y`` over columns ``I``
    against rows ``J``. Returns ``(z, number of opponent best responses)`` when ``z`` is a feasible
    vertex (``z ≥ 0``, no opponent strategy above the value) with more than ``|I|`` labels (a zero
    probability inside ``I`` or a best response outside ``J``), else ``None``.
    """
    size = n if player == 0 else m
    sol = _indifferent(game, "BT" if player == 0 else "A", I, J, size)
    if sol is None:
        return None
    z, w, pay = sol
    if min(z) < 0 or max(pay) > w:
        return None
    ties = sum(1 for p in pay if p == w)
    if sum(1 for p in z if p == 0) + ties <= len(I):
        return None
    full = [Fraction(0)] * (m if player == 0 else n)
    for i, p in zip(I, z, strict=True):
        full[i] = p
    return full, ties


def is_exact_equilibrium(game: ExactGame, x: list[Fraction], y: list[Fraction]) -> bool:
    """Whether distributions ``x``, ``y`` (exact, summing to 1) are a Nash equilibrium of the game:
    ``x, y ≥ 0`` and every pure strategy in each support is a best response, exactly."""
    m, n = game.shape
    if min(x) < 0 or min(y) < 0:
        return False
    Ay = [
        sum((a * q for a, q in zip(game.row("A", i), y, strict=True)), Fraction(0))
        for i in range(m)
    ]
    xB = [
        sum((b * p for b, p in zip(game.row("BT", j), x, strict=True)), Fraction(0))
        for j in range(n)
    ]
    best_row, best_col = max(Ay), max(xB)
    return all(p == 0 or Ay[i] == best_row for i, p in enumerate(x)) and all(
        q == 0 or xB[j] == best_col for j, q in enumerate(y)
    )
