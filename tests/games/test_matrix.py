"""Zero-sum matrix games: minimax theorem, certificates, closed forms, HiGHS agreement, backends."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.backend import to_numpy
from rltheory.errors import InvalidModelError, SolverError
from rltheory.games import duality_gap, solve_zero_sum, solve_zero_sum_highs
from rltheory.games.zoo import matching_pennies, random_matrix_games, rock_paper_scissors
from rltheory.testing import matrix_games


def _scale(A: np.ndarray) -> float:
    return max(1.0, float(np.max(A) - np.min(A)))


# -- theorems ------------------------------------------------------------------------------
@given(matrix_games(batch_shape=(3,)))
def test_minimax_theorem_and_certificate(A):
    """max_x min_j (xᵀA)_j = min_y max_i (Ay)_i up to the certificate, which is ≤ 1e-9·scale."""
    sol = solve_zero_sum(A)
    v, x, y = sol
    assert np.all(sol.gap <= 1e-9 * _scale(A))
    lower = np.min(np.einsum("bi,bij->bj", x, A), axis=-1)  # guarantee of x
    upper = np.max(np.einsum("bij,bj->bi", A, y), axis=-1)  # guarantee of y
    assert np.all(lower <= v + 1e-9 * _scale(A)) and np.all(v <= upper + 1e-9 * _scale(A))
    assert np.all(upper - lower <= 1e-9 * _scale(A))
    for z in (x, y):  # strategies lie on the simplex
        assert np.all(z >= 0) and np.allclose(z.sum(-1), 1.0, atol=1e-12)


@given(matrix_games(ties=False), st.floats(-5, 5), st.floats(0.1, 10))
@settings(max_examples=20)
def test_value_is_affine_equivariant(A, c, s):
    """v(sA + c) = s·v(A) + c (positive affine invariance of optimal strategies)."""
    v1 = float(solve_zero_sum(A).value)
    v2 = float(solve_zero_sum(s * A + c).value)
    assert v2 == pytest.approx(s * v1 + c, abs=1e-9 * max(1.0, abs(s) * _scale(A) + abs(c)))


@given(matrix_games(ties=False), st.floats(-5, 5), st.sampled_from([1e-12, 1e-9, 1e-4, 1e4, 1e9]))
@settings(max_examples=20)
def test_highs_reference_is_affine_equivariant_at_every_scale(A, c, s):
    """The HiGHS reference solver on ``s·A + c·s``: value ``s(v(A) + c)``, gap ≤ 1e-9·s·range, any
    payoff scale (HiGHS drops |entries| < 1e-9; a game of size 1e-12 lost every entry before the
    solver mapped payoffs to [0, 1])."""
    ref = solve_zero_sum_highs(A)
    out = solve_zero_sum_highs(s * A + c * s)
    tol = 1e-9 * _scale(A)
    assert float(out.value) / s == pytest.approx(float(ref.value) + c, abs=tol * (1 + abs(c)))
    assert float(out.gap) <= tol * s
    assert float(duality_gap(A, out.x, out.y)) <= tol  # its strategies are optimal for A itself


@given(matrix_games(ties=False))
@settings(max_examples=20)
def test_transpose_negation_duality(A):
    """The column player's game −Aᵀ has value −v(A)."""
    assert float(solve_zero_sum(-A.T).value) == pytest.approx(
        -float(solve_zero_sum(A).value), abs=1e-9 * _scale(A)
    )


# -- reference values ------------------------------------------------------------------------
def test_rock_paper_scissors_value_zero_uniform():
    v, x, y = solve_zero_sum(rock_paper_scissors())
    assert float(v) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(x, np.full(3, 1 / 3), atol=1e-12)
    np.testing.assert_allclose(y, np.full(3, 1 / 3), atol=1e-12)


def test_weighted_rps_closed_form():
    # A = [[0,-b,a],[b,0,-c],[-a,c,0]] is skew-symmetric: value 0, x = y ∝ (c, a, b).
    a, b, c = 1.0, 2.0, 3.0
    v, x, y = solve_zero_sum(rock_paper_scissors((a, b, c)))
    expect = np.array([c, a, b]) / (a + b + c)
    assert float(v) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(x, expect, atol=1e-12)
    np.testing.assert_allclose(y, expect, atol=1e-12)


def test_matching_pennies():
    v, x, y = solve_zero_sum(matching_pennies())
    assert float(v) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(y, [0.5, 0.5], atol=1e-12)


def test_two_by_two_closed_form():
    # No saddle point in [[a, b], [c, d]] (a > b, a > c, d > b, d > c):
    # x1 = (d − c)/(a − b − c + d), y1 = (d − b)/(a − b − c + d), v = (ad − bc)/(a − b − c + d).
    rng = np.random.default_rng(7)
    for _ in range(20):
        b, c = rng.uniform(-3, 0, 2)
        a, d = rng.uniform(0.5, 3, 2)
        D = a - b - c + d
        v, x, y = solve_zero_sum(np.array([[a, b], [c, d]]))
        assert float(v) == pytest.approx((a * d - b * c) / D, abs=1e-12)
        assert x[0] == pytest.approx((d - c) / D, abs=1e-12)
        assert y[0] == pytest.approx((d - b) / D, abs=1e-12)


@pytest.mark.parametrize(
    "A, value",
    [
        (np.array([[3.0, 1.0, 4.0]]), 1.0),  # 1×n: min over the row
        (np.array([[3.0], [1.0], [4.0]]), 4.0),  # m×1: max over the column
        (np.zeros((3, 4)), 0.0),  # constant
        (np.array([[2.0, 2.0], [2.0, 2.0]]), 2.0),
        (
            np.array([[1.0, 2.0], [0.0, 3.0], [1.0, 2.0]]),
            1.0,
        ),  # duplicate rows; column 0 dominates: v = 1
        (np.array([[5.0, 5.0, 1.0], [5.0, 5.0, 1.0], [0.0, 0.0, 0.0]]), 1.0),  # saddle with ties
    ],
)
def test_degenerate_games(A, value):
    sol = solve_zero_sum(A)
    assert float(sol.value) == pytest.approx(value, abs=1e-12)
    assert float(sol.gap) <= 1e-12 and sol.n_fallback == 0


# -- consistency -------------------------------------------------------------------------------
def test_agrees_with_highs_on_random_batch():
    A = random_matrix_games(np.random.default_rng(0), (200,), 5, 5)
    ours, ref = solve_zero_sum(A), solve_zero_sum_highs(A)
    np.testing.assert_allclose(ours.value, ref.value, atol=1e-9)
    assert ours.max_gap <= 1e-12 and ref.max_gap <= 1e-7


def test_backends_agree(xp):
    A = random_matrix_games(np.random.default_rng(1), (4, 6), 3, 4)
    ref = solve_zero_sum(A)
    sol = solve_zero_sum(xp.asarray(A))
    assert sol.value.shape == (4, 6) and sol.x.shape == (4, 6, 3)
    np.testing.assert_allclose(to_numpy(sol.value), ref.value, atol=1e-12)
    assert sol.max_gap <= 1e-12


def test_float32_input_keeps_dtype():
    A = random_matrix_games(np.random.default_rng(2), (10,), 3, 3).astype(np.float32)
    sol = solve_zero_sum(A, tol=1e-5)
    assert sol.value.dtype == np.float32 and sol.max_gap <= 1e-5


def test_fallback_to_highs_and_solver_error():
    A = random_matrix_games(np.random.default_rng(3), (5,), 4, 4)
    sol = solve_zero_sum(A, max_iter=0)  # no pivots: nothing certified, all re-solved by HiGHS
    assert sol.n_fallback == 5 and sol.max_gap <= 1e-7
    with pytest.raises(SolverError, match="not certified"):
        solve_zero_sum(A, max_iter=0, fallback=False)


def test_duality_gap_reference():
    A = matching_pennies()
    assert float(duality_gap(A, np.array([1.0, 0.0]), np.array([0.5, 0.5]))) == pytest.approx(1.0)


def test_pinned_tuple_api():
    sol = solve_zero_sum(rock_paper_scissors())
    assert len(sol) == 3 and sol[0] is sol.value and sol[2] is sol.y


# -- validation ----------------------------------------------------------------------------------
def test_invalid_games():
    with pytest.raises(InvalidModelError, match=r"A must be finite; A\(i=1, j=0\) = nan"):
        solve_zero_sum(np.array([[1.0, 2.0], [np.nan, 0.0]]))
    with pytest.raises(InvalidModelError, match="shape"):
        solve_zero_sum(np.array([1.0, 2.0]))
    with pytest.raises(InvalidModelError, match="at least one action"):
        solve_zero_sum(np.zeros((0, 3)))
    with pytest.raises(InvalidModelError, match=r"batch=\(1,\)"):
        solve_zero_sum(np.stack([np.zeros((2, 2)), np.full((2, 2), np.inf)]))
