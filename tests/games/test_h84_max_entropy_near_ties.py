"""max_entropy_ce on near-tie games: no solver failure on a feasible LP, no unlocated numpy error.

Both games are small integer payoffs plus noise (``1e-12`` and ``1e-9``), where incentive rows
carry entries of ``1e-13`` to ``1e-10`` next to entries of size 1. Before: the 2×3 game raised
numpy's "array must not contain infs or NaNs" (Newton's point underflowed to 0 on a joint action
and ``log 0`` reached ``scipy.optimize.nnls``); the 2×2×3 game raised ``SolverError`` from the
support LP, which is always feasible (``z = ν = 0``), where HiGHS at ``linprog``'s defaults
stopped with model status *Unknown*. Reference: the exact CE gap of the returned distribution in
rational arithmetic (the certificate must not be below it) and its size against the payoff range.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from rltheory.games import ce_gap, max_entropy_ce

# integers in {0, 1, 2} plus 1e-12 noise (2 players, 2x3)
U_2x3 = np.array(
    [
        [
            [-6.025688860331058e-13, 0.9999999999980571, 1.999999999999137],
            [1.000000000000805, 1.000000000001102, 0.9999999999999367],
        ],
        [
            [0.9999999999999105, 2.0000000000003886, 1.0000000000011686],
            [7.290981734830166e-13, 8.531091977683585e-13, 5.297923970987849e-13],
        ],
    ]
)
# integers in {0, 1, 2} plus 1e-9 noise (3 players, 2x2x3)
U_2x2x3 = np.array(
    [
        [
            [
                [1.0000000002586245, 8.247255142696147e-10, 1.0000000002139835],
                [1.0000000014759745, 1.0000000017149906, 0.9999999993618447],
            ],
            [
                [0.999999999721442, 2.0000000006453558, 9.58009102813101e-10],
                [0.9999999979931042, 2.000000000353892, 0.9999999987112546],
            ],
        ],
        [
            [
                [2.0000000013465358, 5.255636455647554e-10, 1.99999999919537],
                [1.9999999992587607, 2.0000000017909105, 2.0000000020134077],
            ],
            [
                [2.000000000092324, 1.9999999997353384, 2.000000000803539],
                [-8.1527731390283e-10, 2.000000000063486, 2.000000000567747],
            ],
        ],
        [
            [
                [2.0000000005900884, 1.0000000007159646, -1.4767925373326613e-11],
                [-1.0124798354282919e-10, -1.1436386706465437e-09, 1.9999999982141836],
            ],
            [
                [5.682395336910586e-10, 0.9999999999329353, 2.0000000016245627],
                [1.0000000006875183, 0.9999999984822775, 1.000000001021068],
            ],
        ],
    ]
)


def _exact_ce_gap(U: np.ndarray, mu: np.ndarray) -> Fraction:
    """``max_{i, a_i ≠ a_i'} Σ_{a_{−i}} μ(a) (U_i(a_i', a_{−i}) − U_i(a))`` of ``μ/Σμ`` in rationals."""
    shape = U.shape[1:]
    M = {a: Fraction(float(mu[a])) for a in itertools.product(*map(range, shape))}
    total = sum(M.values())
    worst = Fraction(0)
    for i, n_i in enumerate(shape):
        for ai, dev in itertools.permutations(range(n_i), 2):
            gain = Fraction(0)
            for a, p in M.items():
                if a[i] == ai and p:
                    b = a[:i] + (dev,) + a[i + 1 :]
                    gain += (
                        p / total * (Fraction(float(U[(i,) + b])) - Fraction(float(U[(i,) + a])))
                    )
            worst = max(worst, gain)
    return worst


@pytest.mark.parametrize("U", [U_2x3, U_2x2x3], ids=["2x3", "2x2x3"])
def test_near_tie_games_get_a_certified_correlated_equilibrium(U):
    ce = max_entropy_ce(U)
    mu = ce.distribution
    assert mu.shape == U.shape[1:] and np.all(mu >= 0.0) and abs(float(mu.sum()) - 1.0) <= 1e-15
    exact = _exact_ce_gap(U, mu)
    # the certificate bounds the exact gap, and the distribution is a CE to round-off of the
    # payoff range (2): measured 6.3e-14 (2x3) and 9.8e-15 (2x2x3)
    assert Fraction(ce.gap) >= exact and ce.gap == ce_gap(U, mu)
    assert ce.gap <= 1e-12 * float(np.ptp(U))


def test_newton_point_with_an_underflowed_entry_is_no_kkt_point():
    # the 2x3 game on the joint actions (0, 1), (1, 0), (1, 1) (the support the LP at linprog's
    # defaults gave; rows of size 3e-12 and 1.2e-13 there pin the first two to 0): from
    # Clarabel's point Newton's multipliers diverge and its point underflows to exactly 0 on
    # (0, 1) and (1, 0). Before, log 0 reached scipy's nnls, which raised numpy's unlocated
    # "array must not contain infs or NaNs"; now no KKT point (None), and max_entropy_ce goes on
    # to its L-BFGS-B start
    import sys

    from rltheory.games.correlated import _row_normalised, ce_constraints

    entropy = sys.modules["rltheory.games.correlated_entropy"]
    Gs = _row_normalised(ce_constraints(U_2x3))[:, [1, 3, 4]]
    mu0 = np.array([2.89451489e-12, 4.86755217e-10, 1.0])
    assert entropy._entropy_kkt(Gs, mu0 / mu0.sum()) is None


def test_support_lp_falls_back_to_highs_defaults_then_no_presolve(monkeypatch):
    # where the tight-tolerance solve reports trouble (scipy status 4) the support LP is solved
    # at HiGHS's defaults, and then without presolve, which is what solves the 2x2x3 game's LP
    # (its default solve stops with model status Unknown): a CE still comes back, with its
    # certificate. That LP at the defaults' 1e-7 tolerances keeps 10 of the 12 joint actions
    # (rows with entries of 1e-10 read as slack), the KKT refinement fails there and the solver's
    # point is returned: gap 4.6e-10 (2.3e-10 of the range), not the 9.8e-15 of the tight LP
    import sys
    from types import SimpleNamespace

    correlated = sys.modules["rltheory.games.correlated"]  # where _highs_chain finds it
    calls = []

    def trouble(*args, **kwargs):
        calls.append(1)
        return SimpleNamespace(status=4, message="forced trouble", x=None)

    monkeypatch.setattr(correlated, "highs_linprog", trouble)
    ce = max_entropy_ce(U_2x2x3)
    assert calls and Fraction(ce.gap) >= _exact_ce_gap(U_2x2x3, ce.distribution)
    assert ce.gap <= 1e-9 * float(np.ptp(U_2x2x3))
