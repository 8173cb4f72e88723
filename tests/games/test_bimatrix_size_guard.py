"""Support enumeration refuses games too large to enumerate, before any work.

``nash_equilibria`` and ``is_degenerate`` visit ``Σ_k C(m,k)·C(n,k) = C(m+n, m) − 1`` support pairs
(Vandermonde's identity). A 30×30 game has 1.2e17 of them (7.5e8 at support size 4 alone, hours of
work, and at size 15 a list of ``C(30, 15) = 1.6e8`` supports); nothing stopped it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.games import is_degenerate, nash_equilibria


def test_vandermonde_count_of_support_pairs():
    for m, n in [(1, 1), (2, 3), (4, 4), (5, 2)]:
        assert (
            sum(math.comb(m, k) * math.comb(n, k) for k in range(1, min(m, n) + 1))
            == math.comb(m + n, m) - 1
        )


@pytest.mark.parametrize("solver", [nash_equilibria, is_degenerate])
def test_a_30x30_game_is_refused_at_once(solver):
    A = np.zeros((30, 30))  # refused before the enumeration starts
    with pytest.raises(
        ValueError,
        match=r"^"
        + solver.__name__
        + r" would enumerate C\(m \+ n, m\) - 1 = 1\.18e\+17 support pairs for this 30x30 game, more than max_pairs = 1e\+08; use lemke_howson",
    ):
        solver(A, A)


def test_max_pairs_is_the_cap():
    # a 3x3 game has C(6, 3) - 1 = 19 support pairs
    A = np.eye(3)
    with pytest.raises(
        ValueError, match=r"19 support pairs for this 3x3 game, more than max_pairs = 10"
    ):
        nash_equilibria(A, A, max_pairs=10)
    assert (
        len(nash_equilibria(A, A, max_pairs=19)) == 7
    )  # the identity coordination game: 2^3 - 1 equilibria
    with pytest.raises(ValueError, match=r"^max_pairs must be a positive integer; got 0$"):
        nash_equilibria(A, A, max_pairs=0)
