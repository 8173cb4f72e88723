"""Lemke–Howson at its pivot cap: when the exact path runs, and when the error comes at once.

The float path's final bases are checked in exact rationals and the path is redone exactly when
round-off took it off the exact path. A float path that is merely long used to be redone exactly
too, with the same cap, which almost always ended in the same error many times later (1.6 s for
``max_pivots = 50`` on a 60x60 random normal game whose whole solve takes 0.09 s). These tests
count the exact passes instead of timing them.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from rltheory.errors import SolverError
from rltheory.games import bimatrix_nash_conv, lemke_howson
from rltheory.games._bimatrix_common import _positive
from rltheory.games._support_exact import ExactGame, is_exact_equilibrium

LH = importlib.import_module("rltheory.games.lemke_howson")


@pytest.fixture
def exact_passes(monkeypatch):
    """The number of exact-path passes (and their pivot caps) during the test."""
    calls: list[int] = []
    original = LH._exact_path

    def counted(Aq, BqT, label, max_pivots):
        calls.append(max_pivots)
        return original(Aq, BqT, label, max_pivots)

    monkeypatch.setattr(LH, "_exact_path", counted)
    return calls


def _is_exact_nash(A, B, x, y):
    # the returned probabilities are exact rationals rounded once; the equilibria reached below
    # are pure, so the floats are the exact probabilities and the check is exact
    from fractions import Fraction

    return is_exact_equilibrium(
        ExactGame(A, B), [Fraction(float(v)) for v in x], [Fraction(float(v)) for v in y]
    )


@pytest.mark.parametrize("max_pivots", [1, 5, 50])
def test_a_long_float_path_cut_at_the_cap_raises_without_an_exact_pass(exact_passes, max_pivots):
    # a random normal game: no payoffs within round-off of each other, the float path is the
    # exact one; its path from label 0 is longer than 50 pivots (the full solve below ends)
    A, B = np.random.default_rng(0).standard_normal((2, 60, 60))
    with pytest.raises(SolverError, match=rf"within max_pivots = {max_pivots} pivots") as err:
        lemke_howson(A, B, max_pivots=max_pivots)
    assert err.value.status == "max_pivots"
    assert exact_passes == []  # before: one exact pass with the same cap, ending in this error
    x, y = lemke_howson(A, B)
    assert exact_passes == []
    assert bimatrix_nash_conv(A, B, x, y) <= 1e-13 * float(np.abs([A, B]).max())


# 1e-12 perturbations of small integer games: after the rescaling to [1, 2] the perturbations are
# near the float path's tie tolerance (a relative 1e-13), so its ratio tests can differ from the
# exact ones (found among 300 such games by comparing the two paths)
CYCLE_A = np.array([[0, 2, 2, 2, 1], [1, 0, 0, 0, 2], [0, 2, 1, 1, 1]]) + 1e-12 * np.array(
    [[-2, 3, 2, -2, 1], [-2, 1, -3, 2, 0], [2, 2, -3, -3, 3]]
)
CYCLE_B = np.array([[2, 2, 1, 2, 1], [1, 2, 0, 2, 0], [2, 2, 0, 2, 2]]) + 1e-12 * np.array(
    [[-2, 1, 3, 2, 1], [-2, 3, -1, 3, 1], [-1, -3, 1, 1, 1]]
)


def test_a_float_path_that_cycles_stops_at_the_repeat_and_goes_exact(exact_passes):
    # from label 4 the float path comes back to a basis pair it visited, which the exact path never
    # does (it is a path in a finite graph); before, the cycle ran all max_pivots float pivots
    bP, bQ, outcome, _ = LH._float_path(_positive(CYCLE_A), _positive(CYCLE_B), 4, 10_000)
    assert outcome == "repeat"
    x, y = lemke_howson(CYCLE_A, CYCLE_B, initial_label=4)
    assert exact_passes == [10_000]
    assert _is_exact_nash(CYCLE_A, CYCLE_B, x, y)


INFEASIBLE_A = np.array([[2, 1], [2, 1], [2, 0], [2, 2]]) + 1e-12 * np.array(
    [[-1, 3], [2, 0], [1, -1], [-1, -2]]
)
INFEASIBLE_B = np.array([[2, 0], [0, 0], [0, 0], [1, 1]]) + 1e-12 * np.array(
    [[3, -2], [3, 1], [2, 1], [-2, 2]]
)


def test_a_float_path_cut_on_an_infeasible_basis_goes_exact(exact_passes):
    # from label 1 the exact path ends after 2 pivots; the float path, taken off it by round-off,
    # is still going after 2 and its bases there are infeasible in exact arithmetic: that is
    # round-off, not a long path, so the exact path runs and returns an exact equilibrium
    A, B = INFEASIBLE_A, INFEASIBLE_B
    game = ExactGame(A, B)
    Aq, BqT = LH._exact_positive(game, "A", 4), LH._exact_positive(game, "BT", 2)
    bP, bQ, outcome, _ = LH._float_path(_positive(A), _positive(B), 1, 2)
    assert outcome == "cap"
    assert not LH._exact_feasible(Aq, BqT, bP, bQ)
    x, y = lemke_howson(A, B, initial_label=1, max_pivots=2)
    assert exact_passes == [2]
    assert _is_exact_nash(A, B, x, y)
    ep, eq = LH._exact_path(Aq, BqT, 1, 2)  # the exact path ends within the cap
    assert LH._exact_feasible(Aq, BqT, ep, eq)


def test_float_paths_cut_on_well_scaled_games_are_exactly_feasible():
    # on well-scaled games (random normal; small integers, ties resolved by the lexicographic
    # rule) the float path is the exact one, so wherever it is cut its bases pass the exact
    # feasibility check and the cap error comes without an exact pass
    rng = np.random.default_rng(3)
    cut = 0
    for t in range(16):
        m, n = (int(v) for v in rng.integers(2, 6, size=2))
        A, B = (
            rng.integers(-3, 4, (2, m, n)).astype(float)
            if t % 2
            else rng.standard_normal((2, m, n))
        )
        game = ExactGame(A, B)
        Aq, BqT = LH._exact_positive(game, "A", m), LH._exact_positive(game, "BT", n)
        for label in range(m + n):
            for k in range(1, 8):
                bP, bQ, outcome, _ = LH._float_path(_positive(A), _positive(B), label, k)
                if outcome == "cap":
                    cut += 1
                    assert LH._exact_feasible(Aq, BqT, bP, bQ), (t, label, k)
    assert cut > 100  # the loop did cut paths
