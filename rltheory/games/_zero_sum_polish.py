r"""Better strategies for zero-sum games the HiGHS fallback leaves above the target.

:func:`rltheory.games.matrix.solve_zero_sum` re-solves the games its simplex kernel cannot
certify with HiGHS; on near-tie games (integer payoffs plus ``1e-9`` noise) HiGHS's answer can
itself miss the target (gaps of ``1.7e-9`` and ``1.5e-8`` of the range at ``tol = 1e-9``, 2 of
3000 such ``5×6`` games). The duality gap splits by player,

    ``gap(x, y) = [max_i (A y)_i − v] + [v − min_j (xᵀA)_j]``,

so each player's strategy can be chosen on its own guarantee: :func:`best_strategies` keeps,
for each player, the best of the kernel's, HiGHS's and the *equalised* candidates. An equalised
candidate solves, on the supports ``S_x, S_y`` a candidate pair uses, the indifference equations
of the other player's support, ``(xᵀA)_j = v`` for ``j ∈ S_y`` with ``Σ x = 1`` (least squares;
likewise ``(Ay)_i = w`` for ``i ∈ S_x``), the classical support-enumeration step (von Stengel
2007, §3.4, in *Algorithmic Game Theory*), clipped at 0 and renormalised. Where the supports are
those of an equilibrium its strategies are accurate to round-off. Where the candidates' supports
are not an equilibrium's (game 896 of that family: HiGHS's pure pair sits in a tie of size
``1e-9``), games with at most :data:`ENUMERATION_LIMIT` equal-size support pairs also get every
pair's equalised strategies (support enumeration, von Stengel 2007, Algorithm 3.4). The scores
are computed on ``(A − min A)/(max A − min A)``, which orders strategies as ``A`` does.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["ENUMERATION_LIMIT", "best_strategies"]

#: the most equal-size support pairs ``Σ_k C(m, k) C(n, k)`` enumerated for one game (a 5×6
#: game has 461, a 7×7 game 3431)
ENUMERATION_LIMIT = 4000


def _on_supports(
    a: np.ndarray, sx: np.ndarray, sy: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The equalised pair on the supports ``sx``, ``sy`` (None where a sum is not positive)."""
    sub = a[np.ix_(sx, sy)]
    cand = []
    for M0, k in ((sub.T, sx.size), (sub, sy.size)):  # x: columns S_y equal; y: rows S_x equal
        M = np.zeros((M0.shape[0] + 1, k + 1))
        M[:-1, :-1], M[:-1, -1], M[-1, :-1] = M0, -1.0, 1.0
        rhs = np.zeros(M.shape[0])
        rhs[-1] = 1.0
        z = np.clip(np.linalg.lstsq(M, rhs, rcond=None)[0][:-1], 0.0, None)
        if not z.sum() > 0:
            return None
        cand.append(z / z.sum())
    xn, yn = np.zeros(a.shape[0]), np.zeros(a.shape[1])
    xn[sx], yn[sy] = cand
    return xn, yn


def _enumerated(a: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Equalised pairs on every pair of equal-size supports (games within ENUMERATION_LIMIT)."""
    m, n = a.shape
    if sum(math.comb(m, k) * math.comb(n, k) for k in range(1, min(m, n) + 1)) > ENUMERATION_LIMIT:
        return []
    out = []
    for k in range(1, min(m, n) + 1):
        for sx in itertools.combinations(range(m), k):
            for sy in itertools.combinations(range(n), k):
                c = _on_supports(a, np.array(sx), np.array(sy))
                if c is not None:
                    out.append(c)
    return out


def _equalised(a: np.ndarray, x: np.ndarray, y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Equalised candidates ``(x', y')`` on the supports of ``(x, y)`` at two thresholds."""
    out = []
    for thr in (1e-10, 1e-7):
        sx = np.flatnonzero(x > thr * x.max())
        sy = np.flatnonzero(y > thr * y.max())
        c = _on_supports(a, sx, sy)
        if c is not None:
            out.append(c)
    return out


def best_strategies(
    A: np.ndarray, pairs: list[tuple[np.ndarray, np.ndarray]], tol: float
) -> tuple[np.ndarray, np.ndarray]:
    """For games ``A[N, m, n]`` and candidate strategy pairs ``(x[N, m], y[N, n])``: per game, the
    row strategy with the largest ``min_j (xᵀA)_j`` and the column strategy with the least
    ``max_i (Ay)_i`` among the candidates and their equalised versions (host, float64 scores);
    where that pair's gap is still above ``tol`` of the range, among every support pair's too."""
    A = np.asarray(A, dtype=np.float64)
    N = A.shape[0]
    X = np.array(pairs[0][0], dtype=np.float64, copy=True)
    Y = np.array(pairs[0][1], dtype=np.float64, copy=True)
    for g in range(N):
        lo, hi = float(A[g].min()), float(A[g].max())
        a = (A[g] - lo) / (hi - lo) if hi > lo else np.zeros_like(A[g])
        cands = [(np.asarray(x[g], np.float64), np.asarray(y[g], np.float64)) for x, y in pairs]
        cands += [c for x, y in list(cands) for c in _equalised(a, x, y)]
        best_x = max((c[0] for c in cands), key=lambda x: float(np.min(x @ a)))
        best_y = min((c[1] for c in cands), key=lambda y: float(np.max(a @ y)))
        if float(np.max(a @ best_y) - np.min(best_x @ a)) > tol:  # still short: every support pair
            cands += _enumerated(a)
            best_x = max((c[0] for c in cands), key=lambda x: float(np.min(x @ a)))
            best_y = min((c[1] for c in cands), key=lambda y: float(np.max(a @ y)))
        X[g], Y[g] = best_x, best_y
    return X, Y
