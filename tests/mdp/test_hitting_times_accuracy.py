"""Expected hitting times of nearly decomposable chains against exact rational references.

``k_B`` solves ``k = 0`` on ``B`` and ``k(s) = 1 + Σ_j P(s, j) k(j)`` elsewhere (Norris 1997,
Thm 1.3.5). With all data non-negative the exact ``k_B`` of the float chain is well conditioned
entrywise, so a few ``u`` relative is reachable however weakly the two blocks are coupled.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import hitting_times
from rltheory.testing import exact_solve


@pytest.mark.parametrize("seed", range(8))
def test_hitting_times_across_a_weak_link_are_accurate(seed):
    # two dense 3-state blocks joined through states 0 and 3 with probability δ ∈ [1e-15, 1e-6];
    # target: the last state. The solve erred by up to 8% relative (u/δ)
    rng = np.random.default_rng(300 + seed)
    n, S, d = 3, 6, 10.0 ** -rng.uniform(6, 15)
    P = np.zeros((S, S))
    P[:n, :n], P[n:, n:] = rng.random((n, n)), rng.random((n, n))
    P /= P.sum(-1, keepdims=True)
    P[0] *= 1 - d
    P[0, n] += d
    P[n] *= 1 - d
    P[n, 0] += d
    P /= P.sum(-1, keepdims=True)
    k = np.asarray(hitting_times(P, [S - 1]))
    Pq = [[Fraction(float(x)) for x in row] for row in P]
    Pq = [[x / sum(row) for x in row] for row in Pq]
    idx = list(range(S - 1))
    exact = exact_solve(
        [[Fraction(int(i == j)) - Pq[i][j] for j in idx] for i in idx], [Fraction(1)] * len(idx)
    )
    assert k[S - 1] == 0.0
    for s, ks in zip(idx, exact, strict=True):
        assert abs(Fraction(float(k[s])) - ks) <= 8 * S * Fraction(2) ** -53 * ks
