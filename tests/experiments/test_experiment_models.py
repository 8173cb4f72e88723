"""The model builders and helpers the reproductions export, each against the property its docstring states."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

from rltheory.algorithms import npg_step
from rltheory.algorithms.soft import log_softmax, policy_entropy
from rltheory.backend import one_hot
from rltheory.experiments.average_reward import discount_error
from rltheory.experiments.general_utility_pd import entropy_regularized_problem
from rltheory.experiments.markov_games import independent_npg
from rltheory.experiments.marlhf_coverage import coverage_behaviour, witness_games
from rltheory.experiments.npg_primal_dual import random_cmdp
from rltheory.experiments.offline_pessimism import trap_behaviour, trap_mdp
from rltheory.experiments.solver_comparison import puterman_stopping_index
from rltheory.experiments.two_stage_vs_pd import hazard_gridworld
from rltheory.games import ZeroSumMarkovGame, exploitability
from rltheory.mdp import (
    average_policy_iteration,
    backward_induction,
    bellman_optimality_operator,
    evaluate_policy,
    greedy,
    policy_iteration,
    q_values,
    random_mdp,
    solve_cmdp,
)


@pytest.mark.parametrize("size", [4, 5, 7])
def test_hazard_gridworld_routes_have_the_stated_lengths(size):
    """Without slip the direct route (``size − 1`` moves along the top row) enters the hazard column at
    step ``size // 2`` and the safe route detours by ``2(size − 1)`` moves through the bottom row: the goal
    reward 1 is paid on the L-th move, worth ``γ^{L−1}``, and a step taken from a hazard cell at time t
    costs ``γ^t``."""
    g = 0.9
    tight = hazard_gridworld(size, 0.0, g, threshold=0.0)  # b = smallest achievable hazard time = 0
    loose = hazard_gridworld(size, 0.0, g, threshold=1.0)  # b = the unconstrained optimum's hazard time
    mu = np.asarray(tight.mdp.initial_distribution())
    assert float(np.asarray(tight.b)[0]) == pytest.approx(0.0, abs=1e-15)
    assert float(np.asarray(loose.b)[0]) == pytest.approx(g ** (size // 2), rel=1e-12)
    assert float(np.asarray(policy_iteration(tight.mdp).V) @ mu) == pytest.approx(g ** (size - 2), rel=1e-12)
    assert solve_cmdp(tight).value == pytest.approx(g ** (3 * (size - 1) - 1), rel=1e-9)


def test_hazard_gridworld_threshold_interpolates_between_the_extremes():
    lo = float(np.asarray(hazard_gridworld(5, 0.2, 0.9, 0.0).b)[0])
    hi = float(np.asarray(hazard_gridworld(5, 0.2, 0.9, 1.0).b)[0])
    mid = float(np.asarray(hazard_gridworld(5, 0.2, 0.9, 0.4).b)[0])
    assert 0.0 < lo < hi  # with slip the hazard cannot be avoided surely, and the direct route costs more
    assert mid == pytest.approx(lo + 0.4 * (hi - lo), rel=1e-12)


def test_random_cmdp_threshold_spans_the_achievable_costs():
    """At ``threshold`` 0 the constraint admits only cost-minimal behaviour, so the CMDP optimum's cost is ``b``;
    at 1 it is slack for every policy, so the CMDP optimum is the unconstrained optimum (uniform ``μ``)."""
    tight, loose = random_cmdp(4, 3, 0.8, 0.0, 7), random_cmdp(4, 3, 0.8, 1.0, 7)
    sol = solve_cmdp(tight)
    assert float(np.asarray(sol.costs)[0]) == pytest.approx(float(np.asarray(tight.b)[0]), rel=1e-7)
    v_free = float(np.mean(np.asarray(policy_iteration(loose.mdp).V)))
    assert solve_cmdp(loose).value == pytest.approx(v_free, rel=1e-9)


def test_trap_mdp_optimum_is_the_best_good_action():
    """Uniform transitions: every state and step is the same bandit, whose best arm is the first good
    action (mean 0.75 against the traps' 0.5), so ``V*_h = 0.75 (H − h)``."""
    H, S, n_good, n_traps = 4, 3, 3, 5
    fh = trap_mdp(H, S, n_good, n_traps)
    R = np.asarray(fh.R)
    assert np.all(R[..., :n_traps] == 0.5)
    np.testing.assert_allclose(R[0, 0, n_traps:], 0.75 - 0.1 * np.arange(n_good))
    sol = backward_induction(fh)
    np.testing.assert_allclose(np.asarray(sol.V)[:H], 0.75 * (H - np.arange(H))[:, None] * np.ones(S), rtol=1e-14)
    assert np.all(np.asarray(sol.policy) == n_traps)


def test_trap_behaviour_masses():
    fh = trap_mdp(2, 2, 2, 3)
    poor = trap_behaviour(fh, 3, "poor", 0.4)
    np.testing.assert_allclose(poor[0, 0, :3], 0.4 * np.array([1.0, 0.5, 0.25]))
    np.testing.assert_allclose(poor.sum(-1), 1.0)
    assert np.all(poor[..., 3:] == poor[0, 0, 3])
    np.testing.assert_array_equal(trap_behaviour(fh, 3, "good", 0.4), np.full((2, 2, 5), 0.2))


@pytest.mark.parametrize("kind, trap_mass, match", [
    ("bad", 0.4, r"kind must be 'good' or 'poor'; got 'bad'"),
    ("poor", 0.6, r"trap_mass \(with 3 traps .*\) must be a finite number in \(0, 0\.571429\); got 0\.6"),
    ("poor", 0.0, r"trap_mass \(with 3 traps .*\) must be a finite number in \(0, 0\.571429\); got 0\.0"),
    ("poor", "0.1", r"trap_mass \(with 3 traps .*\) must be a finite number in \(0, 0\.571429\); got '0\.1'"),
])
def test_trap_behaviour_rejects_bad_input(kind, trap_mass, match):
    with pytest.raises(ValueError, match=match):
        trap_behaviour(trap_mdp(2, 2, 2, 3), 3, kind, trap_mass)


def test_trap_behaviour_needs_a_good_action():
    with pytest.raises(ValueError, match=r"n_traps must leave at least one good action among the model's A = 5; got 5"):
        trap_behaviour(trap_mdp(2, 2, 2, 3), 5, "good", 0.1)


def test_entropy_regularized_problem_threshold_is_halfway():
    """``b`` is the midpoint of the unconstrained optimum's cost and the smallest achievable cost; the
    latter is recomputed here by policy iteration on ``−c`` (the builder uses the occupancy LP)."""
    mdp, F, G, b = entropy_regularized_problem(5, 3, 0.9, 0.1, seed=3)
    d = np.full((5, 3), 1.0 / 15)
    C = np.asarray(G.gradient(d))
    mu = np.asarray(mdp.initial_distribution())
    cmin = -float(np.asarray(policy_iteration(mdp.replace(R=-C)).V) @ mu) * (1 - mdp.gamma)
    from rltheory.mdp import solve_general_utility  # noqa: PLC0415

    c_free = G.value(solve_general_utility(mdp, F).occupancy)
    assert c_free > cmin + 1e-6
    assert b == pytest.approx(0.5 * (c_free + cmin), rel=1e-7)


def test_witness_games_differ_at_one_entry_only():
    w = witness_games()
    diff = np.argwhere(w["I"] != w["II"])
    np.testing.assert_array_equal(diff, [[0, 0, 0, 1, 0]])  # player 1's r_1(1, 0)
    for kind in ("single", "unilateral"):
        assert coverage_behaviour(kind).sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="kind must be 'single' or 'unilateral'; got 'both'"):
        coverage_behaviour("both")


def test_independent_npg_first_round_is_one_npg_step_per_player():
    """``μ ∝ μ exp(η Q)`` is the NPG closed form ``μ exp(η' A/(1−γ))`` with ``η' = η(1−γ)`` (Q and A differ
    by a per-state constant, removed by the normalisation)."""
    rng = np.random.default_rng(0)
    S, A, B, g = 3, 2, 3, 0.8
    P = rng.dirichlet(np.ones(S), size=(S, A, B))
    game = ZeroSumMarkovGame(P, rng.random((S, A, B)), g)
    mu0, nu0 = np.full((S, A), 1 / A), np.full((S, B), 1 / B)
    mu1 = npg_step(game.row_mdp(nu0), mu0, eta=0.5 * (1 - g))
    nu1 = npg_step(game.col_mdp(mu0), nu0, eta=0.5 * (1 - g))
    gaps = independent_npg(game, 3, 0.5)
    assert gaps.shape == (3,)
    assert gaps[0] == pytest.approx(float(exploitability(game, mu1, nu1).gap), rel=1e-12)


def test_discount_error_matches_the_direct_difference():
    """At a moderate γ the direct difference ``(1−γ)V*_γ − g*`` has no cancellation, so the exact
    rewriting of :func:`discount_error` must agree with it to round-off."""
    mdp = random_mdp(6, 3, gamma=0.5, rng=4).replace(gamma=None)
    g_star = float(np.max(np.asarray(average_policy_iteration(mdp).gain)))
    for gamma in (0.8, 0.95):
        out = discount_error(mdp, gamma, g_star)
        V = np.asarray(policy_iteration(mdp.replace(gamma=gamma)).V)
        assert out["err"] == pytest.approx(float(np.max(np.abs((1 - gamma) * V - g_star))), abs=1e-12)
        assert 0.0 <= out["uncertainty"] <= 1e-12
    # Blackwell (1962; Puterman 1994, Ch. 10): for γ close enough to 1 the discount-optimal policy is
    # gain-optimal; at γ = 0.8 on this instance it is not (the flag must be able to say so)
    assert not discount_error(mdp, 0.8, g_star)["gain_optimal"]
    assert discount_error(mdp, 0.999, g_star)["gain_optimal"]


@pytest.mark.parametrize("seed", range(4))
def test_puterman_stopping_index_fires_first_and_certifies(seed):
    """Puterman (1994) Thm 6.3.1: once ``‖v_{k+1} − v_k‖∞ < ε(1−γ)/(2γ)``, ``‖v_{k+1} − v*‖∞ < ε/2`` and the
    greedy policy of ``v_{k+1}`` is ε-optimal; the returned ``k`` is the first such index."""
    mdp = random_mdp(5, 3, gamma=0.9, rng=seed)
    eps = 1e-3
    k = puterman_stopping_index(mdp, eps)
    thr = eps * (1 - 0.9) / (2 * 0.9)
    vs = [np.zeros(5)]
    for _ in range(k + 2):
        vs.append(np.asarray(bellman_optimality_operator(mdp, vs[-1])))
    diffs = [np.max(np.abs(vs[j + 1] - vs[j])) for j in range(k + 1)]
    assert diffs[k] < thr and all(d >= thr for d in diffs[:k])
    v_star = np.asarray(policy_iteration(mdp).V)
    assert np.max(np.abs(vs[k + 1] - v_star)) < eps / 2
    pi = greedy(q_values(mdp, vs[k + 1]))
    assert np.max(v_star - np.asarray(evaluate_policy(mdp, pi))) < eps


def test_small_helpers_against_scipy_and_numpy():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 5)) * 300.0  # large logits: the unshifted formula overflows
    np.testing.assert_allclose(log_softmax(x, np), scipy.special.log_softmax(x, axis=-1), rtol=1e-13, atol=1e-13)
    pi = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])
    np.testing.assert_allclose(policy_entropy(pi, np), [np.log(2), 0.0, scipy.stats.entropy(pi[2])], rtol=1e-14)
    idx = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(one_hot(idx, 4, np, np.float64), np.eye(4)[idx])


@pytest.mark.parametrize("call, match", [
    (lambda: random_cmdp(3, 2, 0.9, 1.5, 0), r"threshold must be a finite number in \[0, 1\]; got 1\.5"),
    (lambda: hazard_gridworld(2, 0.1, 0.9, 0.5), r"size must be an integer >= 3; got 2"),
    (lambda: hazard_gridworld(4, 0.1, 0.9, 1.5), r"threshold must be a finite number in \[0, 1\]; got 1\.5"),
    (lambda: hazard_gridworld(4, 0.1, 0.9, float("nan")), r"threshold must be a finite number in \[0, 1\]; got nan"),
    (lambda: trap_mdp(2, 2, 9, 3), r"n_good must be at most 8 .*got 9"),
    (lambda: trap_mdp(2, 2, 0, 3), r"n_good must be an integer >= 1; got 0"),
    (lambda: trap_mdp(2, 2, 2, -1), r"n_traps must be an integer >= 0; got -1"),
    (lambda: entropy_regularized_problem(3, 2, 0.9, -1.0, 0), r"beta must be a finite number >= 0; got -1\.0"),
    (lambda: independent_npg(ZeroSumMarkovGame(np.full((1, 1, 1, 1), 1.0), np.zeros((1, 1, 1)), 0.5), 0, 0.5),
     r"T must be an integer >= 1; got 0"),
    (lambda: independent_npg(ZeroSumMarkovGame(np.full((1, 1, 1, 1), 1.0), np.zeros((1, 1, 1)), 0.5), 2, 0.0),
     r"eta must be a finite number > 0; got 0\.0"),
])
def test_builders_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
