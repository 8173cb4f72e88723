"""max_welfare_cce on a near-tie game whose welfare LP HiGHS at its defaults called unbounded.

The game: payoffs in ``{0, 1, 2}`` plus ``1e-9`` noise (3×3). Its CCE rows, each scaled to a
largest entry of 1, carry entries of ``1e-10``; the LP ``max welfare`` over ``{μ ≥ 0 : Σμ = 1,
Gμ ≤ 0}`` is bounded (a polytope in the simplex), yet HiGHS at its defaults (dual simplex and
interior point alike) reported it unbounded and ``max_welfare_cce`` raised ``SolverError``.
Reference: the exact rational CCE gap of the returned distribution, and the welfare of the
game's exact Nash equilibria (every Nash equilibrium is a CCE, so none may beat the optimum by
more than the certificate allows).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from rltheory.games import cce_gap, max_welfare_cce, max_welfare_ce, nash_equilibria

U = np.array(
    [
        [
            [1.9999999996713032, 2.821403710851952e-09, 1.9999999994026092],
            [1.0000000018227733, 0.9999999995842881, 3.067889590592264e-10],
            [4.98458474721755e-10, 3.214181782903242e-10, 1.0000000014467587],
        ],
        [
            [1.0105749844673363e-10, 2.0000000007202865, 1.9999999980289378],
            [1.0000000009406076, 1.0000000009078926, 2.0000000014043415],
            [1.0000000002513112, 0.9999999999516715, 1.9999999992033464],
        ],
    ]
)


def _exact_cce_gap(mu: np.ndarray) -> Fraction:
    """``max_{i, a_i'} Σ_a μ(a) (U_i(a_i', a_{−i}) − U_i(a))`` of ``μ/Σμ`` in rationals (2 players)."""
    m, n = mu.shape
    M = [[Fraction(float(v)) for v in row] for row in mu]
    total = sum(sum(r) for r in M)
    F = [[[Fraction(float(v)) for v in row] for row in U[i]] for i in range(2)]
    gains = [
        sum(M[a][b] * (F[0][d][b] - F[0][a][b]) for a in range(m) for b in range(n))
        for d in range(m)
    ] + [
        sum(M[a][b] * (F[1][a][d] - F[1][a][b]) for a in range(m) for b in range(n))
        for d in range(n)
    ]
    return max(Fraction(0), max(gains) / total)


def test_welfare_cce_of_a_near_tie_game_is_solved_and_certified():
    cce = max_welfare_cce(U)  # before: SolverError "The problem is unbounded"
    mu = cce.distribution
    assert Fraction(cce.gap) >= _exact_cce_gap(mu) and cce.gap == cce_gap(U, mu)
    # a CCE to round-off of the payoff range (measured 4.2e-15)
    assert cce.gap <= 1e-12 * float(np.ptp(U))
    # CE ⊆ CCE and Nash ⊆ CCE: no exact Nash equilibrium and no CE has more welfare than the
    # CCE optimum, beyond each one's certified violation times the payoff range
    slack = 1e-9 * float(np.ptp(U))
    ce = max_welfare_ce(U)
    assert ce.welfare <= cce.welfare + slack
    for x, y in nash_equilibria(U[0], U[1]):
        assert float(x @ (U[0] + U[1]) @ y) <= cce.welfare + slack
