"""Lemke–Howson returns the endpoint of the exact path from ``initial_label``, also at near ties.

The float path's ratio test cannot tell a tie from payoffs one ulp apart: where the exact test is
decided by the perturbation, the float one resolved the tie by the slack columns, left the exact
path on feasible bases and ended at another exact equilibrium (or later than the exact path, so
that a ``max_pivots`` the exact path meets raised). Reference: the Lemke–Howson path in rational
arithmetic with the lexicographic rule (von Stengel 2007, §3.5), written here independently of the
library on the same positive payoffs ``M − min M + (max M − min M)``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.games import lemke_howson


def _positive(M: np.ndarray) -> list[list[Fraction]]:
    F = [[Fraction(float(v)) for v in r] for r in M]
    lo = min(min(r) for r in F)
    span = max(max(r) for r in F) - lo
    span = span if span > 0 else Fraction(1)
    return [[v - lo + span for v in r] for r in F]


def _exact_lh(A: np.ndarray, B: np.ndarray, label: int) -> tuple[list[float], list[float], int]:
    """Endpoint ``(x, y)`` (rounded once) of the exact path from ``label`` and its pivot count.

    Tableau of ``P``: rows ``j``, ``Σ_i B'_ij x_i + s_j = 1`` (labels ``x_i → i``, ``s_j → m + j``);
    of ``Q``: rows ``i``, ``r_i + Σ_j A'_ij y_j = 1`` (``r_i → i``, ``y_j → m + j``). The leaving
    row minimises ``(rhs, slack columns)/pivot`` lexicographically.
    """
    m, n = A.shape
    Ap, Bp = _positive(A), _positive(B)
    one, zero = Fraction(1), Fraction(0)
    TP = [
        [Bp[i][j] for i in range(m)] + [one if t == j else zero for t in range(n)] + [one]
        for j in range(n)
    ]
    TQ = [[one if t == i else zero for t in range(m)] + Ap[i] + [one] for i in range(m)]
    bP, bQ = list(range(m, m + n)), list(range(m))
    k, in_p, pivots = label, label < m, 0
    while True:
        T, basis, slack = (TP, bP, range(m, m + n)) if in_p else (TQ, bQ, range(m))
        rows = [r for r in range(len(T)) if T[r][k] > 0]
        r = min(rows, key=lambda r: [T[r][-1] / T[r][k]] + [T[r][c] / T[r][k] for c in slack])
        p = T[r][k]
        T[r] = [v / p for v in T[r]]
        for i in range(len(T)):
            if i != r and T[i][k] != 0:
                f = T[i][k]
                T[i] = [a - f * c for a, c in zip(T[i], T[r], strict=True)]
        leaving, basis[r] = basis[r], k
        pivots += 1
        if leaving == label:
            break
        k, in_p = leaving, not in_p
    x, y = [zero] * m, [zero] * n
    for r, v in enumerate(bP):
        if v < m:
            x[v] = TP[r][-1]
    for r, v in enumerate(bQ):
        if v >= m:
            y[v - m] = TQ[r][-1]
    sx, sy = sum(x), sum(y)
    return [float(v / sx) for v in x], [float(v / sy) for v in y], pivots


# small integer payoffs perturbed by one ulp (_near_tie_games("ulp", ...), games 85 and 72)
A85 = np.array(
    [
        [2.0, 1.0000000000000002, 3.0, 0.0, 0.9999999999999998],
        [1.9999999999999996, -2.220446049250313e-16, 3.0000000000000004, 1.0000000000000002, 1.0],
    ]
)
B85 = np.array(
    [
        [1.0000000000000002, 1.0000000000000002, 2.0, 3.0, -2.220446049250313e-16],
        [
            0.9999999999999998,
            1.9999999999999996,
            1.0000000000000002,
            0.9999999999999998,
            2.0000000000000004,
        ],
    ]
)
A72 = np.array(
    [
        [2.0, 2.220446049250313e-16, 1.0000000000000002],
        [2.0000000000000004, 0.9999999999999998, 3.0],
        [2.0, 1.9999999999999996, 1.0000000000000002],
        [0.0, 2.9999999999999996, 1.9999999999999996],
    ]
)
B72 = np.array(
    [
        [0.0, 0.0, 0.0],
        [2.0, 1.0, 2.0],
        [0.9999999999999998, 0.9999999999999998, -2.220446049250313e-16],
        [2.220446049250313e-16, 2.0, -2.220446049250313e-16],
    ]
)


def test_a_one_ulp_tie_game_ends_where_the_exact_path_ends():
    # from label 2 the exact path takes 5 pivots to the mixed equilibrium x ≈ (1/3, 2/3),
    # y ≈ (0, 1/2, 0, 1/2, 0); before, the float path ended at the pure one (row 1, column 4),
    # an exact equilibrium too but the end of the path from label 1, not from label 2
    x, y, pivots = _exact_lh(A85, B85, 2)
    assert (
        pivots == 5
        and x == [0.3333333333333333, 0.6666666666666667]
        and y == [0.0, 0.49999999999999994, 0.0, 0.5, 0.0]
    )
    lx, ly = lemke_howson(A85, B85, initial_label=2)
    assert (lx.tolist(), ly.tolist()) == (x, y)


def test_a_max_pivots_the_exact_path_meets_does_not_raise():
    # from label 4 the exact path ends after 3 pivots at (row 1, column 2); before, the float
    # path had left it, was cut at max_pivots = 3 on feasible bases and raised SolverError
    x, y, pivots = _exact_lh(A72, B72, 4)
    assert pivots == 3 and (x, y) == ([0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    lx, ly = lemke_howson(A72, B72, initial_label=4, max_pivots=3)
    assert (lx.tolist(), ly.tolist()) == (x, y)


def _near_tie_games(kind: str, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng({"ulp": 0, "noise": 1, "ties": 2}[kind])
    games = []
    for _ in range(count):
        m, n = (int(v) for v in rng.integers(2, 6, size=2))
        A, B = rng.integers(0, 4, (2, m, n)).astype(float)
        if kind == "ulp":  # one ulp up or down, entry by entry
            A = A + rng.integers(-1, 2, A.shape) * np.spacing(np.maximum(np.abs(A), 1.0))
            B = B + rng.integers(-1, 2, B.shape) * np.spacing(np.maximum(np.abs(B), 1.0))
        elif kind == "noise":
            A = A + 1e-14 * rng.standard_normal(A.shape)
            B = B + 1e-14 * rng.standard_normal(B.shape)
        games.append((A, B))
    return games


@pytest.mark.parametrize("kind", ["ulp", "noise", "ties"])
def test_every_label_ends_at_the_exact_paths_endpoint(kind):
    # before: 29 of 710 (ulp) and 57 of 696 (noise) (game, label) pairs ended at another
    # equilibrium; exact ties (degenerate integer games, 742 pairs) agreed already and still do
    bad = []
    for t, (A, B) in enumerate(_near_tie_games(kind, 100)):
        for label in range(sum(A.shape)):
            x, y, _ = _exact_lh(A, B, label)
            lx, ly = lemke_howson(A, B, initial_label=label)
            if (lx.tolist(), ly.tolist()) != (x, y):
                bad.append((t, label))
    assert not bad, f"(game, label) ending off the exact path's endpoint: {bad[:5]}"


@pytest.mark.parametrize("kind", ["normal", "wide"])
def test_the_integer_exact_path_is_the_rational_one(kind):
    # the exact path pivots in integers (fraction-free); consistency with the rational reference
    # on every label, where the float path is not used: random normal payoffs (denominators up to
    # 2^52 after the shift) and payoffs k·2^e with |e| <= 60 (common denominators near 2^120)
    from rltheory.games._support_exact import ExactGame
    from rltheory.games.lemke_howson import _exact_endpoint, _exact_path, _exact_positive

    rng = np.random.default_rng(9)
    for _ in range(15):
        m, n = (int(v) for v in rng.integers(1, 6, size=2))
        if kind == "normal":
            A, B = rng.standard_normal((2, m, n))
        else:
            A, B = rng.integers(1, 9, (2, m, n)) * 2.0 ** rng.integers(-60, 61, (2, m, n))
        game = ExactGame(A, B)
        Aq, BqT = _exact_positive(game, "A", m), _exact_positive(game, "BT", n)
        for label in range(m + n):
            x, y, _ = _exact_lh(A, B, label)
            ex, ey = _exact_endpoint(game, Aq, BqT, *_exact_path(Aq, BqT, label, 10_000))
            assert ([float(v) for v in ex], [float(v) for v in ey]) == (x, y)
