"""Interop: gymnasium toy-text import/export, mdptoolbox and QuantEcon layouts, cross-library values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import (
    FiniteMDP,
    cliff_walking,
    evaluate_policy,
    from_gymnasium,
    from_mdptoolbox,
    from_quantecon,
    garnet,
    gridworld,
    policy_iteration,
    to_gymnasium,
    to_mdptoolbox,
    to_quantecon_sa,
    two_state,
)

gym = pytest.importorskip("gymnasium")

from ._table_env import TableEnv as _TableEnv  # noqa: E402 - after the importorskip


def _make(*ids):
    """The first registered id (names differ across gymnasium versions)."""
    for name in ids:
        if name in gym.registry:
            return gym.make(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return gym.make(ids[0])


def _assert_same_model(a: FiniteMDP, b: FiniteMDP, atol: float = 1e-15):
    np.testing.assert_allclose(np.asarray(a.P), np.asarray(b.P), rtol=0, atol=atol)
    np.testing.assert_allclose(np.asarray(a.R), np.asarray(b.R), rtol=0, atol=atol)
    np.testing.assert_allclose(
        np.asarray(a.initial_distribution()), np.asarray(b.initial_distribution()), atol=atol
    )
    assert a.gamma == b.gamma


def _mc_return(env, policy, gamma, n, horizon, seed):
    """Monte Carlo discounted return of a deterministic policy in a gymnasium env."""
    G = np.empty(n)
    for e in range(n):
        s, _ = env.reset(seed=seed + e)
        g, disc = 0.0, 1.0
        for _ in range(horizon):
            s, r, term, trunc, _ = env.step(int(policy[s]))
            g += disc * r
            disc *= gamma
            if term or trunc:
                break
        G[e] = g
    return G


# ---- from_gymnasium -------------------------------------------------------------------------
def test_frozenlake_import_and_episodic_return_matches_value():
    # The MDP value from the start equals the env's expected discounted episodic return:
    # roll the optimal policy out in the real env, compare within 4 standard errors (fixed seeds).
    gamma = 0.9
    env = _make("FrozenLake-v1")
    mdp = from_gymnasium(env, gamma)
    assert (mdp.S, mdp.A) == (16, 4)
    holes_and_goal = [5, 7, 11, 12, 15]
    for t in holes_and_goal:
        np.testing.assert_array_equal(np.asarray(mdp.P)[t, :, t], 1.0)
        np.testing.assert_array_equal(np.asarray(mdp.R)[t], 0.0)
    res = policy_iteration(mdp)
    G = _mc_return(env, res.policy, gamma, 3000, 200, seed=0)
    assert abs(G.mean() - res.V[0]) <= 4 * G.std(ddof=1) / np.sqrt(G.size)


def test_taxi_import_and_episodic_return_matches_value():
    gamma = 0.95
    env = _make("Taxi-v4", "Taxi-v3")
    mdp = from_gymnasium(env, gamma)
    assert (mdp.S, mdp.A) == (500, 6)
    R = np.asarray(mdp.R)
    assert set(np.unique(R)) <= {-1.0, -10.0, 20.0, 0.0}
    res = policy_iteration(mdp)
    mu = np.asarray(mdp.mu)
    G = _mc_return(env, res.policy, gamma, 400, 200, seed=0)  # deterministic dynamics, random start
    se = G.std(ddof=1) / np.sqrt(G.size)
    assert abs(G.mean() - mu @ res.V) <= 4 * se
    # the "extra absorbing state" encoding gives the same values on the start states
    extra = from_gymnasium(env, gamma, terminal="extra")
    assert extra.S == 501
    np.testing.assert_allclose(
        policy_iteration(extra).V[:500][mu > 0], res.V[mu > 0], rtol=0, atol=1e-9
    )


def test_cliffwalking_import_equals_our_cliff_walking():
    # gymnasium's CliffWalking and Sutton & Barto's Example 6.6 as built by rltheory.mdp.zoo
    # are the same MDP, entry by entry (same state numbering 12·r + c and action order).
    ours = cliff_walking(gamma=0.9).mdp
    theirs = from_gymnasium(_make("CliffWalking-v1", "CliffWalking-v0"), 0.9)
    _assert_same_model(ours, theirs)


def test_inplace_terminal_refuses_an_inexact_conversion():
    # state 1 ends episodes from state 0 but is also entered without ending one from state 2,
    # which is reachable from the start: making 1 absorbing would change the model.
    table = {
        0: {0: [(1.0, 1, 1.0, True)], 1: [(1.0, 2, 0.0, False)]},
        1: {0: [(1.0, 0, 5.0, False)], 1: [(1.0, 1, 5.0, False)]},
        2: {0: [(1.0, 1, 0.0, False)], 1: [(1.0, 2, 0.0, False)]},
    }
    env = _TableEnv(table, 3, 2, isd=[1.0, 0.0, 0.0])
    with pytest.raises(
        InvalidModelError,
        match=r"state s'=1 ends episodes but is also entered without ending one, by env.P\[2\]\[0\]\[0\]",
    ):
        from_gymnasium(env, 0.9)
    extra = from_gymnasium(env, 0.9, terminal="extra")
    P = np.asarray(extra.P)
    assert extra.S == 4 and P[0, 0, 3] == 1.0 and P[2, 0, 1] == 1.0 and P[3, 1, 3] == 1.0
    # episode ends at the start state: refused in place
    env2 = _TableEnv(
        {0: {0: [(1.0, 1, 0.0, False)]}, 1: {0: [(1.0, 1, 1.0, True)]}}, 2, 1, isd=[0.5, 0.5]
    )
    with pytest.raises(
        InvalidModelError,
        match=r"state s=1 ends episodes but has initial probability mu\[1\] = 0\.5",
    ):
        from_gymnasium(env2, 0.9)


@pytest.mark.parametrize(
    "table, match",
    [
        ({0: {0: [(1.0, 0, 0.0)]}}, r"env.P\[0\]\[0\]\[0\] must be a tuple \(p, s', r, done\)"),
        (
            {0: {0: [(1.5, 0, 0.0, False)]}},
            r"env.P\[0\]\[0\]\[0\] has probability p=1\.5, not in \[0, 1\]",
        ),
        (
            {0: {0: [(1.0, 3, 0.0, False)]}},
            r"env.P\[0\]\[0\]\[0\] has next state s'=3, not an int in \[0, 1\)",
        ),
        (
            {0: {0: [(1.0, 0, float("nan"), False)]}},
            r"env.P\[0\]\[0\]\[0\] has reward r=nan, not finite",
        ),
        ({0: {}}, r"env.P\[0\] has no entry for action a=0"),
        ({}, r"env.P has no entry for state s=0"),
        (
            {0: {0: [(0.5, 0, 0.0, False)]}},
            r"each P\[s, a, :\] must sum to 1 .*worst row \(s=0, a=0\) sums to 0\.5",
        ),
    ],
)
def test_from_gymnasium_located_errors(table, match):
    with pytest.raises(InvalidModelError, match=match):
        from_gymnasium(_TableEnv(table, 1, 1), 0.9)


def test_from_gymnasium_argument_errors():
    env = _TableEnv({0: {0: [(1.0, 0, 0.0, False)]}}, 1, 1)
    with pytest.raises(ValueError, match=r"terminal must be 'inplace' or 'extra'; got 'drop'"):
        from_gymnasium(env, 0.9, terminal="drop")
    with pytest.raises(InvalidModelError, match=r"gamma must lie in \[0, 1\); got 1\.0"):
        from_gymnasium(env, 1.0)
    box = _TableEnv({}, 1, 1)
    box.observation_space = gym.spaces.Box(0, 1, shape=(2,))
    with pytest.raises(
        TypeError, match=r"env.observation_space must be gymnasium.spaces.Discrete\(n\)"
    ):
        from_gymnasium(box, 0.9)
    with pytest.raises(
        TypeError, match=r"needs a toy-text env with a transition table env.unwrapped.P"
    ):
        from_gymnasium(_make("CartPole-v1"), 0.9)


# ---- to_gymnasium -----------------------------------------------------------------------------
def test_to_gymnasium_is_a_valid_env():
    from gymnasium.utils.env_checker import check_env

    env = to_gymnasium(garnet(6, 3, 2, gamma=0.9, rng=0), seed=0)
    assert isinstance(env, gym.Env) and env.render_mode is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker warns about rendering, which we do not offer
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize(
    "mdp",
    [
        garnet(8, 3, 3, gamma=0.9, rng=1),
        gridworld(3, slip=0.2, gamma=0.95).mdp,
        two_state(gamma=0.5),
    ],
    ids=["garnet", "gridworld-with-absorbing-goal", "two-state"],
)
def test_round_trip_to_and_from_gymnasium(mdp):
    _assert_same_model(from_gymnasium(to_gymnasium(mdp), mdp.gamma), mdp)


@pytest.mark.parametrize("scale", [1e-12, 1.0, 1e9])
def test_round_trip_to_and_from_gymnasium_is_exact_at_any_reward_scale(scale):
    # to_gymnasium's table repeats r(s, a) on every entry of (s, a), and Σ_t P(t|s,a)·r rounds r by
    # an ulp (1.2e-7 at size 1e9, which broke _assert_same_model's 1e-15 and every exact
    # comparison): the reward is now accumulated as r_ref + Σ p (r − r_ref), exactly r there.
    rng = np.random.default_rng(7)
    for _ in range(20):
        S, A = rng.integers(1, 6, size=2)
        P = rng.random((S, A, S)) ** 3
        P /= P.sum(-1, keepdims=True)
        mdp = FiniteMDP(P, scale * rng.random((S, A)), 0.999, rng.dirichlet(np.ones(S)))
        back = from_gymnasium(to_gymnasium(mdp), mdp.gamma)
        np.testing.assert_array_equal(np.asarray(back.R), np.asarray(mdp.R))
        np.testing.assert_array_equal(np.asarray(back.P), np.asarray(mdp.P))
        np.testing.assert_array_equal(np.asarray(back.initial_distribution()), np.asarray(mdp.initial_distribution()))


def test_round_trip_of_an_imported_env():
    fl = from_gymnasium(_make("FrozenLake-v1"), 0.9)
    _assert_same_model(from_gymnasium(to_gymnasium(fl), 0.9), fl)


def test_to_gymnasium_step_semantics():
    mdp = garnet(5, 2, 3, gamma=0.9, rng=4)
    env = to_gymnasium(mdp, seed=3, max_episode_steps=20_000)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    s, info = env.reset(seed=11)
    assert info == {} and 0 <= s < 5
    counts = np.zeros((5, 2, 5))
    rng = np.random.default_rng(0)
    for t in range(20_000):
        a = int(rng.integers(2))
        s2, r, term, trunc, _ = env.step(a)
        assert r == float(mdp.R[s, a]) and not term
        assert trunc == (t == 19_999)
        counts[s, a, s2] += 1
        s = s2
    # empirical transition frequencies: each (s, a) visited ≈ 2000 times; 4.5 s.e. per entry
    n = counts.sum(-1, keepdims=True)
    P = np.asarray(mdp.P)
    assert np.all(np.abs(counts / n - P) <= 4.5 * np.sqrt(P * (1 - P) / n) + 1e-12)
    # reproducible by seed; bad actions are located
    env.reset(seed=5)
    a = [env.step(0)[0] for _ in range(10)]
    env.reset(seed=5)
    assert a == [env.step(0)[0] for _ in range(10)]
    with pytest.raises(ValueError, match=r"action 2 is not in the action space Discrete\(2\)"):
        env.step(2)


def test_to_gymnasium_terminates_on_absorbing_zero_reward_states():
    g = gridworld(2, slip=0.0, gamma=0.9, goals=[(0, 1)])
    env = to_gymnasium(g.mdp, seed=0)
    s, _ = env.reset()
    assert s == g.state_of(0, 0)
    s2, r, term, trunc, _ = env.step(1)  # right, into the goal
    assert (s2, r, term, trunc) == (g.state_of(0, 1), 1.0, True, False)


def test_to_gymnasium_argument_errors():
    with pytest.raises(
        ValueError, match=r"to_gymnasium converts a single MDP; got batch_shape=\(2,\)"
    ):
        to_gymnasium(garnet(3, 2, 2, gamma=0.9, rng=0, batch_shape=(2,)))
    with pytest.raises(
        ValueError, match=r"max_episode_steps must be a positive int or None; got 0"
    ):
        to_gymnasium(two_state(), max_episode_steps=0)
    with pytest.raises(TypeError, match=r"seed must be an int or None; got 1\.5"):
        to_gymnasium(two_state(), seed=1.5)
    with pytest.raises(TypeError, match=r"to_gymnasium needs a FiniteMDP; got ndarray"):
        to_gymnasium(np.zeros((2, 2, 2)))


# ---- mdptoolbox -------------------------------------------------------------------------------
def test_mdptoolbox_round_trip_and_policy_iteration_agrees():
    tb = pytest.importorskip("hiive.mdptoolbox.mdp")
    mdp = garnet(25, 4, 5, gamma=0.95, rng=9)
    P, R = to_mdptoolbox(mdp)
    assert P.shape == (4, 25, 25) and R.shape == (25, 4)
    _assert_same_model(from_mdptoolbox(P, R, 0.95), mdp)
    solver = tb.PolicyIteration(P, R, 0.95)
    solver.run()
    ours = policy_iteration(mdp)
    np.testing.assert_allclose(np.asarray(solver.V), ours.V, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(np.asarray(solver.policy), ours.policy)


def test_from_mdptoolbox_layouts():
    sparse = pytest.importorskip("scipy.sparse")
    mdp = garnet(6, 3, 2, gamma=0.9, rng=2)
    P, R = to_mdptoolbox(mdp)
    # list of per-action sparse matrices
    _assert_same_model(from_mdptoolbox([sparse.csr_matrix(p) for p in P], R, 0.9), mdp)
    # state reward R[s] (the same for every action)
    m = from_mdptoolbox(P, np.arange(6.0), 0.9)
    np.testing.assert_array_equal(m.R, np.repeat(np.arange(6.0)[:, None], 3, axis=1))
    # per-transition reward R[a, s, s'] is reduced to Σ_s' P R
    R3 = np.random.default_rng(0).normal(size=(3, 6, 6))
    m3 = from_mdptoolbox(P, R3, 0.9)
    np.testing.assert_allclose(m3.R, (P * R3).sum(-1).T, rtol=0, atol=1e-14)
    with pytest.raises(
        InvalidModelError,
        match=r"P must have the mdptoolbox layout \(A, S, S\); got shape \(3, 6\)",
    ):
        from_mdptoolbox(P[:, :, 0], R, 0.9)
    with pytest.raises(
        InvalidModelError,
        match=r"R must have shape \(S,\) = \(6,\), \(S, A\) = \(6, 3\) or \(A, S, S\).*got \(3, 6\)",
    ):
        from_mdptoolbox(P, R.T, 0.9)
    bad = P.copy()
    bad[1, 4, :] *= 0.5
    with pytest.raises(InvalidModelError, match=r"worst row \(s=4, a=1\) sums to 0\.5"):
        from_mdptoolbox(bad, R, 0.9)


# ---- QuantEcon ----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_quantecon_policy_iteration_value_equals_our_evaluation(seed):
    # Cross-library: QuantEcon solves the state-action-pair form we export; the value it reports
    # for its policy equals our exact evaluation of that policy on our model, and our optimum.
    qe = pytest.importorskip("quantecon")
    mdp = garnet(30, 4, 6, gamma=0.95, rng=seed)
    R, Q, s_idx, a_idx = to_quantecon_sa(mdp)
    ddp = qe.markov.DiscreteDP(R, Q, 0.95, s_idx, a_idx)
    sol = ddp.solve("policy_iteration")
    np.testing.assert_allclose(
        evaluate_policy(mdp, np.asarray(sol.sigma)), sol.v, rtol=0, atol=1e-9
    )
    np.testing.assert_allclose(policy_iteration(mdp).V, sol.v, rtol=0, atol=1e-9)
    _assert_same_model(from_quantecon(ddp), mdp)


def test_from_quantecon_product_form_and_infeasible_actions():
    qe = pytest.importorskip("quantecon")
    R = np.array([[5.0, 10.0], [-1.0, -np.inf]])
    Q = np.array([[[0.5, 0.5], [0.0, 1.0]], [[0.0, 1.0], [0.5, 0.5]]])
    ddp = qe.markov.DiscreteDP(R, Q, 0.95)
    with pytest.raises(
        InvalidModelError, match=r"action a=1 is infeasible in state s=1 \(1 infeasible pairs\)"
    ):
        from_quantecon(ddp)
    mdp = from_quantecon(ddp, pad_infeasible=True)
    np.testing.assert_array_equal(
        mdp.R, [[5.0, 10.0], [-1.0, -1.0]]
    )  # copy of the feasible action 0
    np.testing.assert_array_equal(np.asarray(mdp.P)[1, 1], Q[1, 0])
    sol = ddp.solve("policy_iteration")
    np.testing.assert_allclose(policy_iteration(mdp).V, sol.v, rtol=0, atol=1e-9)


def test_from_quantecon_pair_form_sparse_and_errors():
    sparse = pytest.importorskip("scipy.sparse")
    R = np.array([1.0, 2.0, 3.0])
    Q = sparse.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]))
    m = from_quantecon(R, Q, 0.9, [0, 0, 1], [0, 1, 1], pad_infeasible=True)
    np.testing.assert_array_equal(m.R, [[1.0, 2.0], [3.0, 3.0]])
    cases = [
        ((R, Q, 0.9, [0, 0, 0], [0, 1, 0]), r"pair \(s=0, a=0\) appears twice \(again at k=2\)"),
        ((R, Q, 0.9, [0, 0, 2], [0, 1, 0]), r"s_indices\[2\] = 2 is out of range \[0, 2\)"),
        ((R, Q, 0.9, [0, 0, 1], [0, -1, 0]), r"a_indices\[1\] = -1 is out of range"),
        (
            (R, Q, 0.9, [0, 0], [0, 1]),
            r"state-action-pair form needs R \(L,\), Q \(L, S\).*s_indices \(2,\)",
        ),
        ((R, Q, 0.9, [0, 0, 0], [0, 1, 2]), r"state s=1 has no feasible action"),
        ((R, Q, 0.9, [0, 0, 1], None), r"needs both s_indices and a_indices"),
        (
            (np.array([1.0, np.inf, 3.0]), Q, 0.9, [0, 0, 1], [0, 1, 1]),
            r"R must be finite in pair form; R\[1\] = inf for \(s=0, a=1\)",
        ),
        (
            (np.zeros((2, 2)), np.zeros((2, 3, 2)), 0.9),
            r"product form needs R of shape \(S, A\) and Q of shape \(S, A, S\)",
        ),
        ((np.zeros((2, 1)), np.ones((2, 1, 2)) / 2, 1.0), r"gamma must lie in \[0, 1\); got 1\.0"),
    ]
    for args, match in cases:
        with pytest.raises(InvalidModelError, match=match):
            from_quantecon(*args, pad_infeasible=True)
    with pytest.raises(ValueError, match=r"needs a DiscreteDP, or arrays R, Q and beta"):
        from_quantecon(R)


def test_converters_reject_batched_models():
    batch = garnet(3, 2, 2, gamma=0.9, rng=0, batch_shape=(2,))
    for f in (to_mdptoolbox, to_quantecon_sa):
        with pytest.raises(ValueError, match=r"converts a single MDP; got batch_shape=\(2,\)"):
            f(batch)
