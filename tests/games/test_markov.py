"""Markov games: validation, Shapley contraction, certified VI, exploitability, best responses,
finite-horizon general-sum equilibria, Littman's soccer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.backend import to_numpy
from rltheory.errors import ConvergenceWarning, InvalidModelError
from rltheory.games import (
    MarkovGame,
    ZeroSumMarkovGame,
    best_response,
    correlated_value_iteration,
    evaluate_policy_pair,
    exploitability,
    finite_horizon_nash_conv,
    nash_conv,
    nash_value_iteration,
    shapley_operator,
    shapley_value_iteration,
    solve_zero_sum,
    solve_zero_sum_highs,
)
from rltheory.games.zoo import (
    cooperative_markov_game,
    littman_soccer,
    matching_pennies,
    random_zero_sum_markov_game,
    rock_paper_scissors,
)
from rltheory.mdp import FiniteMDP, linear_program, value_iteration
from rltheory.testing import zero_sum_markov_games


# -- theorems -----------------------------------------------------------------------------------
@given(zero_sum_markov_games(), st.integers(0, 2**31))
@settings(max_examples=25)
def test_shapley_operator_is_gamma_contraction(game, seed):
    rng = np.random.default_rng(seed)
    V, W = rng.normal(0, 5, game.S), rng.normal(0, 5, game.S)
    d = np.max(
        np.abs(np.asarray(shapley_operator(game, V).TV) - np.asarray(shapley_operator(game, W).TV))
    )
    assert d <= game.gamma * np.max(np.abs(V - W)) + 1e-9 * (
        1 + np.max(np.abs(V)) + np.max(np.abs(W))
    )


@given(zero_sum_markov_games(max_states=4))
@settings(max_examples=15)
def test_shapley_vi_certificates_and_exploitability(game):
    res = shapley_value_iteration(game, tol=1e-9)
    assert res.converged
    x, y = res.policies
    ex = exploitability(game, x, y)
    assert np.max(ex.per_state) <= float(res.policy_bound) + 1e-8
    assert float(ex.gap) <= 1e-7 and float(ex.gap) >= -1e-8
    # V is within the certified bound of the minimax values V^{x,BR} ≤ V* ≤ V^{BR,y}
    lo, hi = -np.asarray(ex.br_col.V), np.asarray(ex.br_row.V)
    assert np.all(lo - 1e-7 <= res.V) and np.all(res.V <= hi + 1e-7)


def test_shapley_vi_with_a_subnormal_discount():
    # Found by the stress profile: γ = 5e-324 made the a-priori step count divide by an
    # underflowed γ·‖TV_0 − V_0‖ (ZeroDivisionError). γ that small is a one-stage matrix game.
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(2), size=(2, 2, 3))
    R = rng.normal(size=(2, 2, 3))
    res = shapley_value_iteration(ZeroSumMarkovGame(P, R, gamma=5e-324), tol=1e-9)
    assert res.converged and res.iterations <= 2
    for s in range(2):
        np.testing.assert_allclose(res.V[s], solve_zero_sum(R[s])[0], atol=1e-12)


@given(zero_sum_markov_games(max_states=4), st.integers(0, 2**31))
@settings(max_examples=15)
def test_best_response_equals_induced_mdp_optimum(game, seed):
    rng = np.random.default_rng(seed)
    nu = rng.dirichlet(np.ones(game.B), size=game.S)
    br = best_response(game, nu, player=0)
    mdp = game.row_mdp(nu)
    np.testing.assert_allclose(br.V, value_iteration(mdp, tol=1e-10).V, atol=1e-8)
    np.testing.assert_allclose(br.V, linear_program(mdp).V, atol=1e-7)
    # and it dominates every stationary row policy, e.g. a random one
    mu = rng.dirichlet(np.ones(game.A), size=game.S)
    assert np.all(evaluate_policy_pair(game, mu, nu) <= br.V + 1e-9)


# -- reference values -----------------------------------------------------------------------------
def test_one_state_game_value_is_matrix_value_over_one_minus_gamma():
    A = rock_paper_scissors((1.0, 2.0, 3.0)) + 0.5
    g = ZeroSumMarkovGame(np.ones((1, 3, 3, 1)), A[None], 0.8)
    res = shapley_value_iteration(g, tol=1e-11)
    assert float(res.V[0]) == pytest.approx(0.5 / 0.2, abs=1e-10)
    np.testing.assert_allclose(res.policies[0][0], np.array([3.0, 1.0, 2.0]) / 6, atol=1e-9)


def test_gamma_zero_is_one_matrix_game_per_state():
    rng = np.random.default_rng(4)
    g = random_zero_sum_markov_game(rng, 6, 3, 4, 0.0)
    res = shapley_value_iteration(g)
    np.testing.assert_allclose(res.V, solve_zero_sum_highs(np.asarray(g.R)).value, atol=1e-9)


def test_shapley_vi_geometric_rate_at_every_sweep():
    # ‖V_k − V*‖∞ ≤ γ^k ‖V_0 − V*‖∞ (Shapley 1953, Thm 1), with V* from a tight solve.
    from rltheory.bounds.games import shapley_error_bound

    g = random_zero_sum_markov_game(np.random.default_rng(11), 10, 3, 3, 0.9)
    Vstar = np.asarray(shapley_value_iteration(g, tol=1e-12).V)
    V, errs = np.zeros(10), []
    for _ in range(40):
        V = np.asarray(shapley_operator(g, V).TV)
        errs.append(np.max(np.abs(V - Vstar)))
    bound = shapley_error_bound(np.arange(1, 41), 0.9, np.max(np.abs(Vstar)))
    assert np.all(np.asarray(errs) <= bound + 1e-11)


def test_soccer_symmetry_and_value():
    g = littman_soccer()
    res = shapley_value_iteration(g, tol=1e-9)
    # From the symmetric reset distribution the value is 0 (swap roles + mirror board = −game).
    assert float(np.sum(g.initial_distribution() * res.V)) == pytest.approx(0.0, abs=1e-8)
    x, y = res.policies
    assert float(exploitability(g, x, y).gap) <= 1e-6
    assert np.all(np.asarray(res.V) <= 1.0 + 1e-9) and np.all(np.asarray(res.V) >= -1.0 - 1e-9)


# -- consistency ------------------------------------------------------------------------------------
def test_shapley_vi_equals_per_state_highs_vi():
    g = random_zero_sum_markov_game(np.random.default_rng(5), 8, 3, 3, 0.7)
    V = np.zeros(8)
    for _ in range(60):  # reference: per-state HiGHS loop
        V = solve_zero_sum_highs(np.asarray(g.stage_games(V))).value
    np.testing.assert_allclose(shapley_value_iteration(g, tol=1e-10).V, V, atol=1e-8)


def test_batched_games_and_backends(xp):
    g_np = random_zero_sum_markov_game(np.random.default_rng(6), 5, 2, 3, 0.9, batch_shape=(3,))
    ref = shapley_value_iteration(g_np)
    g = ZeroSumMarkovGame(xp.asarray(np.asarray(g_np.P)), xp.asarray(np.asarray(g_np.R)), 0.9)
    res = shapley_value_iteration(g)
    assert res.V.shape == (3, 5)
    np.testing.assert_allclose(to_numpy(res.V), np.asarray(ref.V), atol=1e-9)
    np.testing.assert_allclose(np.asarray(ref.V[1]), shapley_value_iteration(g_np[1]).V, atol=1e-9)


def test_cap_reports_convergence_warning():
    g = random_zero_sum_markov_game(np.random.default_rng(7), 4, 2, 2, 0.99)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        res = shapley_value_iteration(g, max_iter=3)
    assert not res.converged and len(res.trace) == 3


def test_exploitability_of_pure_pair_closed_form():
    g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), matching_pennies()[None], 0.5)
    # row plays heads, column heads: BR row earns 1/(1−γ) = 2; BR column makes row earn −2.
    assert float(exploitability(g, np.array([0]), np.array([0])).gap) == pytest.approx(4.0)


def test_nash_conv_cooperative_and_zero_sum_agree():
    g = random_zero_sum_markov_game(np.random.default_rng(8), 4, 2, 3, 0.8)
    res = shapley_value_iteration(g, tol=1e-10)
    x, y = res.policies
    mg = g.as_markov_game()
    assert float(nash_conv(mg, [x, y])) == pytest.approx(
        float(exploitability(g, x, y).gap), abs=1e-7
    )
    coop = cooperative_markov_game(np.random.default_rng(9), 4, (2, 3), 0.9)
    team = value_iteration(
        FiniteMDP(np.asarray(coop.P).reshape(4, 6, 4), np.asarray(coop.R)[0].reshape(4, 6), 0.9),
        tol=1e-11,
    )
    a = np.asarray(team.policy)
    pols = [a // 3, a % 3]  # the team-optimal joint action as a pure product policy
    assert float(nash_conv(coop, pols)) <= 1e-8


def test_general_sum_best_response_is_the_induced_optimum_and_sums_to_nash_conv():
    rng = np.random.default_rng(12)
    W = rng.exponential(size=(3, 2, 3, 3))
    g = MarkovGame(W / W.sum(-1, keepdims=True), rng.standard_normal((2, 3, 2, 3)), 0.8)
    pols = [rng.dirichlet(np.ones(2), size=3), rng.dirichlet(np.ones(3), size=3)]
    joint = np.asarray(g.joint_policy(pols))
    V = np.asarray(g.evaluate(joint))
    rho = np.asarray(g.initial_distribution())
    gains = []
    for i in range(2):
        br = best_response(g, pols, player=i)
        assert np.array_equal(np.asarray(best_response(g, joint, player=i).V), np.asarray(br.V))  # list = joint
        # the best response's value dominates the policy's own value statewise (it is the optimum of the
        # induced MDP, in which the policy's own action distribution is one feasible policy) ...
        assert np.all(np.asarray(br.V) >= V[i] - 1e-10)
        # ... and it is that optimum by a second method (linear programming on the same induced MDP)
        lp = linear_program(g.induced_mdp(i, joint))
        np.testing.assert_allclose(np.asarray(br.V), np.asarray(lp.V), atol=1e-8)
        gains.append(float(rho @ (np.asarray(br.V) - V[i])))
    assert float(nash_conv(g, pols)) == pytest.approx(sum(gains), abs=1e-10)
    with pytest.raises(ValueError, match=r"player index i must be in \[0, 2\); got 2"):
        best_response(g, pols, player=2)
    # a numpy integer is a player index too (it was refused as "must be in [0, 2); got np.int64(1)")
    assert np.array_equal(np.asarray(best_response(g, pols, player=np.int64(1)).V),
                          np.asarray(best_response(g, pols, player=1).V))
    with pytest.raises(ValueError, match=r"player index i must be in \[0, 2\); got True"):
        g.induced_mdp(True, joint)
    with pytest.raises(ValueError, match=r"need one policy per player \(2\); got 1"):
        best_response(g, pols[:1], player=0)


def test_finite_horizon_equilibria_have_zero_nash_conv():
    rng = np.random.default_rng(10)
    W = rng.exponential(size=(4, 3, 2, 4))
    g = MarkovGame(W / W.sum(-1, keepdims=True), rng.standard_normal((2, 4, 3, 2)), None)
    eq = nash_value_iteration(g, 4)
    assert eq.stage_gap <= 1e-9 and finite_horizon_nash_conv(g, eq.policy) <= 1e-8
    for coarse in (False, True):
        eq = correlated_value_iteration(g, 4, coarse=coarse)
        assert finite_horizon_nash_conv(g, eq.policy) <= 1e-7
    uniform = np.full((4, 4, 3, 2), 1 / 6)
    assert finite_horizon_nash_conv(g, uniform) > 0.1


# -- validation -------------------------------------------------------------------------------------
def test_invalid_markov_games():
    P = np.ones((2, 2, 2, 2)) / 2
    with pytest.raises(InvalidModelError, match=r"R must have shape \(2, 2, 2\)"):
        ZeroSumMarkovGame(P, np.zeros((2, 2, 3)), 0.9)
    with pytest.raises(InvalidModelError, match=r"R must be finite; R\(s=1, a=0, b=1\) = nan"):
        R = np.zeros((2, 2, 2))
        R[1, 0, 1] = np.nan
        ZeroSumMarkovGame(P, R, 0.9)
    bad = P.copy()
    bad[0, 1, 1] = [0.5, 0.4]
    with pytest.raises(InvalidModelError, match=r"worst row \(s=0, a=1, b=1\) sums to 0.9"):
        ZeroSumMarkovGame(bad, np.zeros((2, 2, 2)), 0.9)
    with pytest.raises(InvalidModelError, match="gamma must lie in"):
        ZeroSumMarkovGame(P, np.zeros((2, 2, 2)), 1.0)
    with pytest.raises(InvalidModelError, match=r"R must have shape \(n, S, A_1, ..., A_n\)"):
        MarkovGame(P, np.zeros((3, 2, 2, 2)), 0.9)
    with pytest.raises(ValueError, match="gamma=None"):
        nash_value_iteration(MarkovGame(P, np.zeros((2, 2, 2, 2)), 0.9), 3)
    g = ZeroSumMarkovGame(P, np.zeros((2, 2, 2)), 0.9)
    with pytest.raises(ValueError, match=r"nu\(1,\) = 5 is not an action index"):
        exploitability(g, np.array([0, 0]), np.array([0, 5]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the exact gap of the all-zero game is 0; the certificate is twice the gap allowance, whose
        # only nonzero part here is the underflow term 2(m + n + 6)s (s = 2^-1074, matrix._gap_allowance)
        assert solve_zero_sum(np.asarray(g.R)).max_gap == 2 * 2 * (2 + 2 + 6) * 2.0**-1074


def test_batched_reward_nan_and_bad_policy_are_located():
    """Game models share the MDP layer's reward and policy checks (batch axes named correctly)."""
    P = np.full((2, 1, 2, 2, 1), 1.0)
    R = np.zeros((2, 1, 2, 2))
    R[1, 0, 1, 0] = np.nan
    with pytest.raises(InvalidModelError, match=r"R must be finite; R\(batch=\(1,\), s=0, a=1, b=0\) = nan"):
        ZeroSumMarkovGame(P, R, 0.9)
    g = ZeroSumMarkovGame(P, np.zeros((2, 1, 2, 2)), 0.9)
    with pytest.raises(ValueError, match=r"nu\(0,\) = 3 is not an action index in \[0, 2\)"):
        g.col_policy(np.array([3]))
    with pytest.raises(ValueError, match=r"stochastic policy nu must have shape \(\.\.\., S, B\)"):
        g.col_policy(np.ones((1, 3)) / 3)
    with pytest.raises(InvalidModelError, match=r"R must have shape \(2, 1, 2, 2\) \(…, S, A, B\)"):
        ZeroSumMarkovGame(P, np.zeros((2, 1, 2)), 0.9)


def test_shapley_vi_bound_covers_round_off_at_large_payoffs():
    # One state, A = 1e9·[[2, −1], [−3, 4]]: val A = 0.5e9 (x = (7, 3)/10 equalises both
    # columns), so V* = 0.5e9/(1 − γ) = 5e10 exactly. Before the sweep error ρ entered the
    # certificate, VI reached a floating-point fixed point (δ = 0) and certified bound = 0 with
    # converged=True while |V − V*| = 1.07e-3. tol = 1e-8 is below the round-off floor here.
    A = np.array([[2.0, -1.0], [-3.0, 4.0]]) * 1e9
    g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), A[None], 0.99)
    with pytest.warns(ConvergenceWarning):
        res = shapley_value_iteration(g, tol=1e-8)
    err = abs(float(res.V[0]) - 5e10)
    assert err > 0.0 and err <= float(res.bound)
    assert not res.converged
