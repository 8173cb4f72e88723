"""Error paths and rarely taken branches of ``rltheory.games``.

Grouped by module (bimatrix, correlated, exploit, general_sum, markov, matrix, shapley,
zoo). Each raise is reached through the public function a user calls and its message is
pinned to the field, index or value it must name; functional branches are checked against
closed forms (derived in the comments) or an independent solver.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rltheory.backend import to_numpy
from rltheory.errors import InvalidModelError, SolverError
from rltheory.games.bimatrix import lemke_howson, nash_equilibria
from rltheory.games.correlated import ce_gap, max_entropy_ce, max_welfare_ce
from rltheory.games.exploit import best_response, exploitability, nash_conv
from rltheory.games.general_sum import (
    finite_horizon_nash_conv,
    finite_horizon_values,
    nash_value_iteration,
)
from rltheory.games.markov import MarkovGame, ZeroSumMarkovGame
from rltheory.games.matrix import _simplex, solve_zero_sum, solve_zero_sum_highs
from rltheory.games.shapley import shapley_operator, shapley_value_iteration
from rltheory.games.zoo import (
    battle_of_the_sexes,
    matching_pennies,
    prisoners_dilemma,
    random_zero_sum_markov_game,
    rock_paper_scissors,
)


def _pennies_game(gamma: float = 0.5) -> ZeroSumMarkovGame:
    return ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), matching_pennies()[None], gamma)


def _dilemma(gamma: float | None) -> MarkovGame:
    return MarkovGame(np.ones((1, 2, 2, 1)), prisoners_dilemma()[:, None], gamma)


# --------------------------------------------------------------------------- bimatrix
class TestBimatrix:
    """Support enumeration / Lemke–Howson: shapes, zero-sum default, pivot cap, huge payoffs."""

    def test_batched_payoffs_are_rejected(self):
        with pytest.raises(
            InvalidModelError,
            match=r"single \(m, n\) matrices; got shapes \(2, 2, 2\) and \(2, 2, 2\)",
        ):
            nash_equilibria(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))

    def test_zero_sum_default_matches_the_closed_form(self):
        # B=None means B = −A. For A = [[2, −1], [−1, 1]] (no saddle point) the unique
        # equilibrium equalises: x_1 = (1 − (−1))/(2 + 1 + 1 + 1) = 2/5, y_1 = 2/5 likewise.
        A = np.array([[2.0, -1.0], [-1.0, 1.0]])
        eqs = nash_equilibria(A)
        assert len(eqs) == 1
        np.testing.assert_allclose(eqs[0][0], [0.4, 0.6], atol=1e-12)
        np.testing.assert_allclose(eqs[0][1], [0.4, 0.6], atol=1e-12)
        # and the zero-sum LP agrees
        np.testing.assert_allclose(solve_zero_sum(A).x, eqs[0][0], atol=1e-12)

    def test_pivot_cap(self):
        # Matching pennies has no pure equilibrium: the path needs more than one pivot.
        A = matching_pennies()
        with pytest.raises(
            SolverError,
            match=r"Lemke-Howson did not terminate within max_pivots = 1 pivots from "
            r"initial_label = 0 \(row 0\) on this 2x2 game: the path had not picked the label up "
            r"again; it is finite \(lexicographic rule\), so raise max_pivots",
        ) as err:
            lemke_howson(A, -A, max_pivots=1)
        assert err.value.status == "max_pivots"

    def test_pivot_cap_names_a_column_label_and_the_game_size(self):
        # a 3x2 game whose equilibrium is mixed (rows 0, 1 against both columns): from label 4
        # (column 1) the path takes more than 2 pivots; the message locates the cut path
        A = np.array([[1.0, -1.0], [-1.0, 1.0], [-2.0, -2.0]])
        with pytest.raises(
            SolverError,
            match=r"within max_pivots = 2 pivots from initial_label = 4 \(column 1\) on this 3x2 game",
        ) as err:
            lemke_howson(A, -A, initial_label=4, max_pivots=2)
        assert err.value.status == "max_pivots"
        # without the cap the path ends at the equilibrium
        x, y = lemke_howson(A, -A, initial_label=4)
        np.testing.assert_array_equal(x, [0.5, 0.5, 0.0])
        np.testing.assert_array_equal(y, [0.5, 0.5])

    @pytest.mark.parametrize("scale", [1e308, 1.7e308])
    def test_payoffs_near_the_float_limit(self, scale):
        # Bug fixed: rescaling to [1, 2] computed hi − lo = 2·scale, which overflowed to inf and
        # made every payoff NaN: Lemke–Howson raised "unbounded pivot column (payoffs must be
        # positive)" and support enumeration returned no equilibrium at all. Equilibria are
        # invariant under positive affine maps, so the answers must be those of A itself.
        A = matching_pennies()
        x, y = lemke_howson(scale * A, -scale * A)
        np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-12)
        np.testing.assert_allclose(y, [0.5, 0.5], atol=1e-12)
        U = battle_of_the_sexes()
        small = nash_equilibria(U[0], U[1])
        huge = nash_equilibria(scale * (U[0] - 1.0), scale * (U[1] - 1.0))  # entries ±scale and 0
        assert len(huge) == len(small) == 3
        for (x0, y0), (x1, y1) in zip(small, huge, strict=True):
            np.testing.assert_allclose(x1, x0, atol=1e-12)
            np.testing.assert_allclose(y1, y0, atol=1e-12)


# --------------------------------------------------------------------------- correlated
class TestCorrelated:
    """Normal-form validation and the cvxpy failure path of the max-entropy CE."""

    @pytest.mark.parametrize("shape", [(2, 0, 3), (2, 2, 0)])
    def test_empty_action_set(self, shape):
        with pytest.raises(
            InvalidModelError,
            match=rf"U needs at least one action per player; got shape \({shape[0]}, {shape[1]}, {shape[2]}\)",
        ):
            max_welfare_ce(np.zeros(shape))
        with pytest.raises(InvalidModelError, match=r"at least one action per player"):
            ce_gap(np.zeros(shape), np.zeros(shape[1:]))

    def test_cvxpy_failure_is_a_solver_error(self):
        # Bug fixed: cvxpy's own SolverError escaped (not rltheory.errors.SolverError, so
        # callers catching the documented error missed it).
        U = np.stack([matching_pennies(), -matching_pennies()])
        with pytest.raises(
            SolverError, match=r"max_entropy_ce: cvxpy solver 'NOT_A_SOLVER' failed"
        ) as err:
            max_entropy_ce(U, solver="NOT_A_SOLVER")
        assert err.value.status == "solver_error"


# --------------------------------------------------------------------------- exploit
class TestExploit:
    """Best response / exploitability / NashConv: types and the player index."""

    def test_zero_sum_player_index(self):
        with pytest.raises(
            ValueError, match=r"player must be 0 \(row\) or 1 \(column\) in a zero-sum game; got 2"
        ):
            best_response(_pennies_game(), np.array([0]), player=2)

    def test_best_response_type(self):
        with pytest.raises(
            TypeError, match=r"best_response expects a ZeroSumMarkovGame or MarkovGame; got ndarray"
        ):
            best_response(np.zeros(3), np.array([0]), player=0)

    def test_exploitability_needs_zero_sum(self):
        with pytest.raises(
            TypeError, match=r"exploitability expects a ZeroSumMarkovGame; got MarkovGame"
        ):
            exploitability(_pennies_game().as_markov_game(), np.array([0]), np.array([0]))

    def test_nash_conv_needs_a_markov_game(self):
        with pytest.raises(
            TypeError, match=r"nash_conv expects a MarkovGame; got ZeroSumMarkovGame"
        ):
            nash_conv(_pennies_game(), [np.array([0]), np.array([0])])


# --------------------------------------------------------------------------- general_sum
class TestGeneralSum:
    """Finite-horizon equilibria: game type, horizon, player count, policy shape."""

    def test_needs_a_markov_game(self):
        with pytest.raises(
            TypeError, match=r"nash_value_iteration expects a MarkovGame; got ZeroSumMarkovGame"
        ):
            nash_value_iteration(_pennies_game(), 2)

    @pytest.mark.parametrize("H", [0, 1.5, True])
    def test_horizon(self, H):
        with pytest.raises(ValueError, match=rf"horizon H must be a positive integer; got {H!r}"):
            nash_value_iteration(_dilemma(None), H)

    def test_two_players_only(self):
        g = MarkovGame(np.ones((1, 2, 2, 2, 1)), np.zeros((3, 1, 2, 2, 2)), None)
        with pytest.raises(
            ValueError, match=r"nash_value_iteration handles two players; got n = 3"
        ):
            nash_value_iteration(g, 2)

    def test_policy_shape(self):
        with pytest.raises(
            ValueError,
            match=r"policy must have shape \(H, S, A_1, \.\.\., A_n\) = \(H, 1, 2, 2\); got \(2, 1, 2, 3\)",
        ):
            finite_horizon_values(_dilemma(None), np.full((2, 1, 2, 3), 1 / 6))

    @pytest.mark.parametrize("fn", [finite_horizon_values, finite_horizon_nash_conv])
    def test_scalar_policy_is_a_shape_error(self, fn):
        # Used to crash with IndexError: tuple index out of range (pol.shape[0] of a 0-d array).
        with pytest.raises(ValueError, match=r"policy must have shape .*; got \(\)"):
            fn(_dilemma(None), 1.0)


# --------------------------------------------------------------------------- markov
class TestMarkovModels:
    """Model invariants, indexing, conversion and the discount helpers."""

    @pytest.mark.parametrize("shape", [(2, 2, 2, 3), (2, 0, 2, 2)])
    def test_zero_sum_kernel_shape(self, shape):
        with pytest.raises(
            InvalidModelError,
            match=r"P must have shape \(\.\.\., S, A, B, S\).*got " + re.escape(str(shape)),
        ):
            ZeroSumMarkovGame(np.ones(shape), np.zeros(shape[:-1]), 0.5)

    @pytest.mark.parametrize("shape", [(2, 2, 2, 3), (2, 0, 2, 2)])
    def test_general_sum_kernel_shape(self, shape):
        with pytest.raises(
            InvalidModelError,
            match=r"P must have shape \(S, A_1, \.\.\., A_n, S\).*got " + re.escape(str(shape)),
        ):
            MarkovGame(np.ones(shape), np.zeros((2,) + shape[:-1]), 0.5)

    def test_unbatched_game_cannot_be_indexed(self):
        with pytest.raises(
            IndexError, match=r"a single \(unbatched\) ZeroSumMarkovGame cannot be indexed"
        ):
            _pennies_game()[0]

    def test_batched_game_has_no_markov_game_view(self):
        g = ZeroSumMarkovGame(np.ones((3, 1, 2, 2, 1)), np.zeros((3, 1, 2, 2)), 0.5)
        with pytest.raises(
            ValueError, match=r"as_markov_game needs an unbatched game; got batch_shape=\(3,\)"
        ):
            g.as_markov_game()

    def test_discount(self):
        # γ for a discounted game, 1 for an undiscounted (finite-horizon) one.
        assert _dilemma(None).discount() == 1.0
        assert _dilemma(0.25).discount() == 0.25

    def test_joint_policy_shape(self):
        with pytest.raises(
            ValueError,
            match=r"pi must have shape \(S, A_1, \.\.\., A_n\) = \(1, 2, 2\); got \(1, 2, 3\)",
        ):
            nash_conv(_dilemma(0.5), np.full((1, 2, 3), 1 / 6))

    def test_discounted_routine_on_undiscounted_game(self):
        with pytest.raises(
            ValueError, match=r"needs a discounted game \(gamma in \[0, 1\)\); got gamma=None"
        ):
            nash_conv(_dilemma(None), np.full((1, 2, 2), 0.25))


# --------------------------------------------------------------------------- matrix
# A degenerate 4x3 game (column 0 constant) on which Dantzig's rule with the smallest-index
# ratio test stalled for more than m + n = 7 pivots, so the simplex switched to Bland's rule;
# with Harris's ratio test it takes 4 pivots, so Bland's rule is also run from the first pivot
# (bland_after=0; tests/games/test_h72_simplex_pivots.py checks it on batches). Its equilibrium, from the 2x2
# block of rows 2, 3 and columns 1, 2, [[6, −1], [−2, 3]]: v = (18 − 2)/12 = 4/3,
# x = (0, 0, 5/12, 7/12), y = (0, 1/3, 2/3); rows 0, 1 earn −4/3 and −1 < v against y and
# column 0 costs 4 > v against x, so the equilibrium is unique.
_BLAND = np.array([[4.0, 0.0, -2.0], [4.0, -3.0, 0.0], [4.0, 6.0, -1.0], [4.0, -2.0, 3.0]])


class TestMatrix:
    """Batched zero-sum simplex: Bland's rule, the empty batch and device placement."""

    def test_blands_rule_after_m_plus_n_pivots(self, xp):
        sol = solve_zero_sum(xp.asarray(_BLAND))
        assert sol.n_fallback == 0
        assert float(sol.value) == pytest.approx(4 / 3, abs=1e-12)
        np.testing.assert_allclose(to_numpy(sol.x), [0.0, 0.0, 5 / 12, 7 / 12], atol=1e-12)
        np.testing.assert_allclose(to_numpy(sol.y), [0.0, 1 / 3, 2 / 3], atol=1e-12)
        # Bland's rule from the first pivot: 1ᵀq = 1/v(A'), A' = (A + 3)/9 + 1, so
        # v(A') = (4/3 + 3)/9 + 1 = 40/27
        Ap = (xp.reshape(xp.asarray(_BLAND), (1, 4, 3)) + 3.0) / 9.0 + 1.0
        _, _, obj, pivots, done = _simplex(Ap, xp, 100, bland_after=0)
        assert bool(done[0]) and pivots < 100
        assert float(obj[0]) == pytest.approx(27 / 40, abs=1e-12)

    def test_empty_batch(self, xp):
        sol = solve_zero_sum(xp.zeros((0, 2, 3), dtype=xp.float64))
        ref = solve_zero_sum_highs(np.zeros((0, 2, 3)))
        for got, want in zip(
            (sol.value, sol.x, sol.y, sol.gap), (ref.value, ref.x, ref.y, ref.gap), strict=True
        ):
            assert tuple(got.shape) == want.shape
        assert sol.max_gap == 0.0 and sol.iterations == 0

    @pytest.mark.parametrize("max_iter", [None, 0])
    def test_results_stay_on_the_input_device(self, max_iter):
        # Bugs fixed: the empty-batch strategies and the HiGHS fallback's strategies were created
        # on the default device, so a batch on another device came back split across two
        # devices (the fallback then failed mixing them). max_iter=0 forces the fallback.
        xs = pytest.importorskip("array_api_strict")
        dev = xs.Device("device1")
        empty = solve_zero_sum(xs.zeros((0, 2, 3), dtype=xs.float64, device=dev))
        assert {empty.value.device, empty.x.device, empty.y.device, empty.gap.device} == {dev}
        A = xs.asarray(np.array([[[2.0, -1.0], [-1.0, 1.0]]]), device=dev)
        sol = solve_zero_sum(A, max_iter=max_iter)
        assert {sol.value.device, sol.x.device, sol.y.device, sol.gap.device} == {dev}
        assert sol.n_fallback == (1 if max_iter == 0 else 0)
        assert float(sol.value[0]) == pytest.approx(0.2, abs=1e-12)  # (2·1 − 1)/(2 + 1 + 1 + 1)


# --------------------------------------------------------------------------- shapley
def test_zero_sum_payoffs_near_the_float_limit():
    """max A − min A overflows for payoffs near ±max float: the games are solved as A/4 (exact)
    and value/gap scaled back. The equilibrium equals that of A/max (same strategies, value
    scaled), and the certificate stays finite and within tol·(max A − min A)."""
    big = np.finfo(np.float64).max
    base = np.array(
        [[[0.9, -0.5], [-0.2, 0.0]], [[1.0, -1.0], [-1.0, 1.0]], [[0.3, 0.1], [-0.7, 0.6]]]
    )
    sol = solve_zero_sum(base * big)
    ref = solve_zero_sum(base)
    np.testing.assert_allclose(sol.x, ref.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sol.y, ref.y, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sol.value / big, ref.value, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(sol.gap)) and np.all(sol.gap <= 1e-9 * 2 * big)
    assert sol.n_fallback == 0


class TestShapley:
    """Shapley operator / value iteration argument checks."""

    def test_needs_a_zero_sum_game(self):
        with pytest.raises(
            TypeError, match=r"shapley_operator expects a ZeroSumMarkovGame; got MarkovGame"
        ):
            shapley_operator(_dilemma(0.5), np.zeros(1))

    @pytest.mark.parametrize("V", [np.zeros(2), np.float64(0.0)])
    def test_value_shape(self, V):
        with pytest.raises(
            ValueError, match=re.escape(f"V must have shape (..., S) = (..., 1); got {np.shape(V)}")
        ):
            shapley_operator(_pennies_game(), V)

    @pytest.mark.parametrize("tol", [0, -1.0, float("nan"), "1e-8"])
    def test_tol(self, tol):
        with pytest.raises(ValueError, match=rf"tol must be a positive number; got {tol!r}"):
            shapley_value_iteration(_pennies_game(), tol=tol)

    def test_initial_value_shape(self):
        with pytest.raises(ValueError, match=r"V0 must have shape \(1,\); got \(3,\)"):
            shapley_value_iteration(_pennies_game(), V0=np.zeros(3))

    @pytest.mark.parametrize("max_iter", [0, -2, 2.0])
    def test_max_iter(self, max_iter):
        # max_iter=0 used to crash with TypeError (float(None)) while formatting the warning.
        with pytest.raises(
            ValueError, match=rf"max_iter must be a positive integer or None; got {max_iter!r}"
        ):
            shapley_value_iteration(_pennies_game(), max_iter=max_iter)


# --------------------------------------------------------------------------- zoo
class TestZoo:
    """Game constructors: weights and the sparse-kernel branch."""

    @pytest.mark.parametrize(
        "weights, message",
        [
            ((1.0, 0.0, 1.0), r"weights\[1\] must be a finite number > 0; got 0\.0"),
            ((1.0, float("nan"), 1.0), r"weights\[1\] must be a finite number > 0; got nan"),
            (
                (1.0, 1.0),
                r"weights must be three positive finite numbers \(a, b, c\); got \(1\.0, 1\.0\)",
            ),
        ],
    )
    def test_rock_paper_scissors_weights(self, weights, message):
        # (1.0, 1.0) used to fail with "not enough values to unpack (expected 3, got 2)"; a bad
        # entry is named by its index
        with pytest.raises(ValueError, match=message):
            rock_paper_scissors(weights)

    def test_sparse_kernel_has_branching_successors(self):
        g = random_zero_sum_markov_game(np.random.default_rng(3), 5, 2, 3, 0.9, branching=2)
        P = np.asarray(g.P)
        assert np.all(np.count_nonzero(P, axis=-1) == 2)  # Dirichlet weights are a.s. positive
        np.testing.assert_allclose(P.sum(-1), 1.0, atol=1e-12)
        dense = random_zero_sum_markov_game(np.random.default_rng(3), 5, 2, 3, 0.9, branching=5)
        assert np.all(np.count_nonzero(np.asarray(dense.P), axis=-1) == 5)

    @pytest.mark.parametrize("branching", [0, -1, 1.5])
    def test_branching_must_be_positive(self, branching):
        # branching=0 used to surface as "P must be finite; P(s=0, a=0, b=0, s'=0) = nan".
        with pytest.raises(
            ValueError, match=rf"branching must be a positive integer or None; got {branching!r}"
        ):
            random_zero_sum_markov_game(np.random.default_rng(0), 4, 2, 2, 0.5, branching=branching)


def test_random_game_builders_name_a_bad_size():
    # a negative size reached numpy's "negative dimensions are not allowed"
    from rltheory.games.zoo import (
        random_bimatrix_game,
        random_matrix_games,
        random_zero_sum_markov_game,
    )

    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="m must be a positive integer; got -1"):
        random_matrix_games(rng, (3,), -1, 2)
    with pytest.raises(ValueError, match=r"shape\[0\] must be an integer >= 0; got -2"):
        random_matrix_games(rng, (-2,), 1, 2)
    with pytest.raises(ValueError, match="n must be a positive integer; got 0"):
        random_bimatrix_game(rng, 2, 0)
    with pytest.raises(ValueError, match="S must be a positive integer; got -3"):
        random_zero_sum_markov_game(rng, -3, 2, 2, 0.9)
    with pytest.raises(ValueError, match="B must be a positive integer; got 2.5"):
        random_zero_sum_markov_game(rng, 3, 2, 2.5, 0.9)
    assert random_matrix_games(rng, (0,), 2, 2).shape == (0, 2, 2)  # an empty batch is allowed
