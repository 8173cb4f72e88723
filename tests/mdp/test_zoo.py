"""Zoo models: construction laws, closed-form values, seeding, backends, argument errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.backend import to_numpy
from rltheory.mdp import (
    FiniteMDP,
    chain,
    cliff_walking,
    evaluate_policy,
    garnet,
    gridworld,
    policy_iteration,
    random_mdp,
    riverswim,
    two_state,
)
from rltheory.mdp.zoo import GRID_ACTIONS
from rltheory.testing import policies

UP, RIGHT, DOWN, LEFT = (GRID_ACTIONS.index(a) for a in ("up", "right", "down", "left"))


def _brute_force_optimum(mdp: FiniteMDP) -> np.ndarray:
    """max over all A^S deterministic policies of V^π (pointwise; an optimal policy attains it)."""
    best = np.full(mdp.S, -np.inf)
    for pol in itertools.product(range(mdp.A), repeat=mdp.S):
        best = np.maximum(best, evaluate_policy(mdp, np.array(pol)))
    return best


# ---- garnet -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "S, b", [(40, 3), (10, 7), (5, 5), (6, 1)]
)  # rejection branch (b² ≤ S) and key branch
def test_garnet_rows_have_exactly_b_successors(S, b):
    mdp = garnet(S, 3, b, gamma=0.9, rng=1, batch_shape=(2,))
    P = np.asarray(mdp.P)
    assert P.shape == (2, S, 3, S) and mdp.R.shape == (2, S, 3)
    assert np.all((P > 0).sum(-1) == b)
    np.testing.assert_allclose(P.sum(-1), 1.0, rtol=0, atol=1e-14)
    assert np.all((0 <= np.asarray(mdp.R)) & (np.asarray(mdp.R) < 1))


@pytest.mark.parametrize("S, b", [(100, 4), (12, 6)])
def test_garnet_spacings_and_successor_sets_follow_the_construction(S, b):
    # Uniform spacings of b−1 uniform cut points: each probability is Beta(1, b−1),
    # CDF F(x) = 1 − (1 − x)^{b−1}.  Kolmogorov–Smirnov at level 0.001 (critical 1.95/√n),
    # fixed seed.  Successor sets are uniform subsets: each state is a successor w.p. b/S.
    mdp = garnet(S, 5, b, gamma=0.9, rng=2024)
    P = np.asarray(mdp.P)
    probs = np.sort(P[P > 0])
    n = probs.size
    F = 1.0 - (1.0 - probs) ** (b - 1)
    ks = max(np.max(np.arange(1, n + 1) / n - F), np.max(F - np.arange(n) / n))
    assert ks < 1.95 / np.sqrt(n)
    member = (P > 0).mean(axis=(0, 1))  # frequency with which each state is a successor
    rows = S * 5
    # binomial(rows, b/S) frequency per state: 4.5 standard deviations (fixed seed)
    assert np.max(np.abs(member - b / S)) < 4.5 * np.sqrt((b / S) * (1 - b / S) / rows)


def test_garnet_is_reproducible_and_uses_no_global_rng():
    # the legacy global RNG state is read only to check that it is never advanced
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    a = garnet(20, 3, 4, gamma=0.9, rng=7)
    b = garnet(20, 3, 4, gamma=0.9, rng=np.random.default_rng(7))
    random_mdp(4, 2, gamma=0.9, rng=1)
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # noqa: NPY002
    np.testing.assert_array_equal(a.P, b.P)
    np.testing.assert_array_equal(a.R, b.R)
    assert not np.array_equal(a.P, garnet(20, 3, 4, gamma=0.9, rng=8).P)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(S=5, A=2, b=6), ValueError, r"1 <= b <= S = 5; got b=6"),
        (dict(S=5, A=2, b=0), ValueError, r"b must be an integer >= 1; got 0"),
        (dict(S=0, A=2, b=1), ValueError, r"S must be an integer >= 1; got 0"),
        (dict(S=5.0, A=2, b=1), ValueError, r"S must be an integer >= 1; got 5\.0"),
        (dict(S=5, A=True, b=1), ValueError, r"A must be an integer >= 1; got True"),
        (
            dict(S=5, A=2, b=2, rng=None),
            TypeError,
            r"rng must be a numpy.random.Generator or an int seed",
        ),
        (
            dict(S=5, A=2, b=2, batch_shape=(-1,)),
            ValueError,
            r"batch_shape\[0\] must be a non-negative int; got -1",
        ),
        (dict(S=5, A=2, b=2, gamma=1.0), ValueError, r"gamma must lie in \[0, 1\); got 1\.0"),
    ],
)
def test_garnet_arguments(kwargs, exc, match):
    kw = dict(gamma=0.9, rng=0) | kwargs
    with pytest.raises(exc, match=match):
        garnet(**kw)


# ---- random dense ---------------------------------------------------------------------------
def test_random_mdp_batched_dirichlet_rows():
    mdp = random_mdp(6, 3, gamma=0.95, rng=3, batch_shape=(500,))
    P = np.asarray(mdp.P)
    assert mdp.batch_shape == (500,) and P.shape == (500, 6, 3, 6)
    # Dirichlet(1): each coordinate has mean 1/S and variance (S−1)/(S²(S+1)); 9000 rows,
    # 5 standard errors (fixed seed).
    se = np.sqrt((6 - 1) / (36 * 7) / (500 * 6 * 3))
    np.testing.assert_allclose(P.reshape(-1, 6).mean(0), 1 / 6, atol=5 * se)
    assert np.all(P > 0)
    small = np.asarray(random_mdp(6, 3, gamma=0.95, rng=3, alpha=0.05).P)
    assert np.mean(small.max(-1)) > 0.7  # small α: nearly deterministic rows
    with pytest.raises(ValueError, match=r"alpha must be a positive number; got 0"):
        random_mdp(3, 2, gamma=0.9, rng=0, alpha=0)


def test_zoo_on_other_backends(xp):
    for mdp in (
        garnet(8, 2, 3, gamma=0.9, rng=0, xp=xp),
        random_mdp(4, 2, gamma=0.9, rng=0, batch_shape=(2,), xp=xp),
        gridworld(3, xp=xp).mdp,
        two_state(xp=xp),
    ):
        assert type(mdp.P) is type(xp.asarray([1.0]))
        assert mdp.dtype == xp.float64
    host = garnet(8, 2, 3, gamma=0.9, rng=0)
    np.testing.assert_array_equal(to_numpy(garnet(8, 2, 3, gamma=0.9, rng=0, xp=xp).P), host.P)


def test_float32_models():
    for mdp in (
        garnet(30, 2, 3, gamma=0.9, rng=0, dtype=np.float32),
        gridworld(4, dtype=np.float32).mdp,
    ):
        assert mdp.P.dtype == np.float32 and mdp.R.dtype == np.float32


# ---- gridworld ------------------------------------------------------------------------------
def test_gridworld_deterministic_values_are_discounted_distances():
    # slip = 0, step reward 0, goal reward 1: from a cell at shortest-path distance d ≥ 1 from
    # the goal, the reward arrives on the d-th move, so V*(s) = γ^{d−1}; V*(goal) = 0.
    walls = [(1, 1), (1, 2), (1, 3), (3, 0), (3, 1)]
    g = gridworld((5, 5), slip=0.0, gamma=0.9, goals=[(4, 0)], walls=walls)
    # breadth-first distances to the goal on the open cells
    dist = {(4, 0): 0}
    frontier = [(4, 0)]
    while frontier:
        nxt = []
        for r, c in frontier:
            for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                cell = (r + dr, c + dc)
                if 0 <= cell[0] < 5 and 0 <= cell[1] < 5 and cell not in walls and cell not in dist:
                    dist[cell] = dist[(r, c)] + 1
                    nxt.append(cell)
        frontier = nxt
    expected = np.array([0.0 if cell == (4, 0) else 0.9 ** (dist[cell] - 1) for cell in g.cells])
    np.testing.assert_allclose(policy_iteration(g.mdp).V, expected, rtol=0, atol=1e-10)
    assert g.mdp.S == 25 - len(walls)


def test_gridworld_slip_probabilities_walls_and_goal():
    g = gridworld(
        3, slip=0.2, gamma=0.9, walls=[(0, 1)], goals=[(2, 2)], rewards=5.0, step_reward=-1.0
    )
    P, R = np.asarray(g.mdp.P), np.asarray(g.mdp.R)
    s = g.state_of(1, 1)
    # from the centre, "down": intended w.p. 1 − slip + slip/4 = 0.85; each other move 0.05;
    # "up" is blocked by the wall (0, 1), so that 0.05 stays in place.
    assert P[s, DOWN, g.state_of(2, 1)] == pytest.approx(0.85, abs=1e-15)
    assert P[s, DOWN, s] == pytest.approx(0.05, abs=1e-15)
    assert P[s, DOWN, g.state_of(1, 0)] == pytest.approx(0.05, abs=1e-15)
    assert P[s, DOWN, g.state_of(1, 2)] == pytest.approx(0.05, abs=1e-15)
    # reward: entering the goal pays 5, every other move −1.  From (1, 2), "down" enters the
    # goal w.p. 0.85, so r = 0.85·5 + 0.15·(−1) = 4.1.
    assert R[g.state_of(1, 2), DOWN] == pytest.approx(4.1, abs=1e-14)
    goal = g.state_of(2, 2)
    np.testing.assert_array_equal(P[goal, :, goal], 1.0)
    np.testing.assert_array_equal(R[goal], 0.0)
    np.testing.assert_array_equal(g.mdp.mu, np.eye(g.mdp.S)[g.state_of(0, 0)])


def test_gridworld_geometry_roundtrip_and_heatmap():
    g = gridworld(
        (3, 4), walls=[(0, 1), (2, 2)], goals=[(2, 3), (0, 3)], rewards=[1.0, 2.0], start=None
    )
    assert g.mdp.mu is None and g.shape == (3, 4)
    for s in range(g.mdp.S):
        assert g.state_of(*g.coords(s)) == s
    grid = g.to_grid(np.arange(g.mdp.S, dtype=float))
    assert grid.shape == (3, 4) and np.isnan(grid[0, 1]) and np.isnan(grid[2, 2])
    assert grid[1, 0] == g.state_of(1, 0)
    batch = g.to_grid(np.ones((2, g.mdp.S)))
    assert batch.shape == (2, 3, 4)
    # second goal pays 2: from (1, 3) "up" with slip 0.1 enters it w.p. 0.925
    assert float(g.mdp.R[g.state_of(1, 3), UP]) == pytest.approx(
        0.925 * 2.0 + 0.025 * 1.0, abs=1e-14
    )


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: gridworld(0), r"size must be an integer >= 1; got 0"),
        (lambda: gridworld((3,)), r"size must be an int or a \(rows, cols\) pair"),
        (lambda: gridworld(3, slip=1.5), r"slip must lie in \[0, 1\]; got 1\.5"),
        (lambda: gridworld(3, walls=[(3, 0)]), r"walls\[0\] = \(3, 0\) is off the 3x3 grid"),
        (lambda: gridworld(3, walls=[(2, 2)]), r"goals\[0\] = \(2, 2\) is also a wall"),
        (lambda: gridworld(3, walls=[(0, 0)]), r"start\[0\] = \(0, 0\) is also a wall"),
        (
            lambda: gridworld(3, goals=[(0, 2), (1, 2)], rewards=[1.0]),
            r"one value per goal \(2\); got shape \(1,\)",
        ),
        (lambda: gridworld(3, rewards=float("nan")), r"rewards must be finite"),
        (lambda: gridworld(3, goals=["ab"]), r"goals\[0\] must be a cell \(row, col\)"),
        (
            lambda: gridworld(2, walls=[(0, 0), (0, 1), (1, 0), (1, 1)], goals=[], start=None),
            r"no states",
        ),
        (lambda: gridworld(3).state_of(3, 0), r"cell \(r=3, c=0\) is off the 3x3 grid"),
        (lambda: gridworld(3, walls=[(1, 1)]).state_of(1, 1), r"cell \(r=1, c=1\) is a wall"),
        (lambda: gridworld(3).coords(9), r"state s must be an int in \[0, 9\); got 9"),
        (
            lambda: gridworld(3).to_grid(np.zeros(8)),
            r"values must have shape \(\.\.\., S\) = \(\.\.\., 9\)",
        ),
    ],
)
def test_gridworld_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---- cliff walking (Sutton & Barto 2018, Example 6.6) -----------------------------------------
def test_cliff_walking_optimal_path_along_the_edge():
    # Shortest safe path: up, 11 × right, down = 13 moves of reward −1 (the last enters the
    # goal), so V*(start) = −Σ_{t<13} γ^t = −(1 − γ^13)/(1 − γ).
    gamma = 0.9
    g = cliff_walking(gamma=gamma)
    res = policy_iteration(g.mdp)
    start = g.state_of(3, 0)
    assert res.V[start] == pytest.approx(-(1 - gamma**13) / (1 - gamma), abs=1e-10)
    assert res.policy[start] == UP
    assert all(res.policy[g.state_of(2, c)] == RIGHT for c in range(11))
    assert res.policy[g.state_of(2, 11)] == DOWN
    # stepping into the cliff: −100 and back to the start
    P = np.asarray(g.mdp.P)
    assert P[start, RIGHT, start] == 1.0 and float(g.mdp.R[start, RIGHT]) == -100.0
    assert g.hazards == frozenset((3, c) for c in range(1, 11))


def test_cliff_walking_slippery_prefers_a_safer_path():
    # With slip, walking along the edge risks the cliff: the optimal start value drops
    # below the deterministic one and the policy moves up more than one row.
    g = cliff_walking(gamma=0.95, slip=0.1)
    res = policy_iteration(g.mdp)
    assert res.V[g.state_of(3, 0)] < -(1 - 0.95**13) / (1 - 0.95)
    assert res.policy[g.state_of(2, 5)] == UP


# ---- chain and RiverSwim ---------------------------------------------------------------------
def test_chain_closed_forms_without_slip():
    # slip = 0: "forward" everywhere reaches the end after n−1−s moves, then earns `large`
    # forever: V(s) = γ^{n−1−s} large/(1−γ).  "back" everywhere earns `small` each step:
    # V(s) = small/(1−γ).
    gamma, n = 0.9, 5
    m = chain(n, gamma=gamma, slip=0.0)
    s = np.arange(n)
    np.testing.assert_allclose(
        evaluate_policy(m, np.zeros(n, int)), gamma ** (n - 1 - s) * 10 / (1 - gamma), atol=1e-10
    )
    np.testing.assert_allclose(evaluate_policy(m, np.ones(n, int)), 2 / (1 - gamma), atol=1e-10)


@pytest.mark.parametrize("gamma, expected", [(0.5, [1, 1, 1, 0, 0]), (0.99, [0, 0, 0, 0, 0])])
def test_chain_optimum_matches_brute_force(gamma, expected):
    # Myopic discount: return to the start (small reward now); far-sighted: walk to the end.
    m = chain(gamma=gamma)
    res = policy_iteration(m)
    np.testing.assert_allclose(res.V, _brute_force_optimum(m), atol=1e-10)
    np.testing.assert_array_equal(res.policy, expected)


def test_riverswim_structure_and_optimal_policy():
    m = riverswim(gamma=0.95)
    P = np.asarray(m.P)
    np.testing.assert_allclose(P[3, 1, [2, 3, 4]], [0.1, 0.6, 0.3])
    np.testing.assert_allclose(P[0, 1, [0, 1]], [0.7, 0.3])
    np.testing.assert_allclose(P[5, 1, [4, 5]], [0.7, 0.3])
    np.testing.assert_array_equal(P[4, 0, 3], 1.0)
    np.testing.assert_array_equal(m.mu, [0, 0.5, 0.5, 0, 0, 0])
    # "always left" earns 5 at the bank: V(s) = γ^s·5/(1−γ).
    np.testing.assert_allclose(
        evaluate_policy(m, np.zeros(6, int)), 0.95 ** np.arange(6) * 5 / 0.05, rtol=1e-12
    )
    # The optimal policy swims right everywhere (the point of the domain), brute-force confirmed.
    res = policy_iteration(m)
    np.testing.assert_array_equal(res.policy, np.ones(6, int))
    np.testing.assert_allclose(res.V, _brute_force_optimum(m), rtol=1e-12)


def test_small_model_arguments():
    with pytest.raises(ValueError, match=r"n must be an integer >= 2; got 1"):
        chain(1)
    with pytest.raises(ValueError, match=r"n must be an integer >= 3; got 2"):
        riverswim(2)
    with pytest.raises(ValueError, match=r"p must lie in \[0, 1\]; got -0\.5"):
        two_state(p=-0.5)
    with pytest.raises(ValueError, match=r"cost must be a finite number; got inf"):
        two_state(cost=float("inf"))


# ---- two-state closed forms ------------------------------------------------------------------
def _two_state_V_pi(pi, gamma, p, r_low, r_high, cost):
    # Derivation: with x = p·π(move|0), y = π(move|1), P_π = [[1−x, x], [y, 1−y]],
    # r_π = (a, h), a = (1−π(move|0))·r_low − π(move|0)·cost, h = r_high.
    # det(I − γP_π) = (1−γ+γx)(1−γ+γy) − γ²xy = (1−γ)(1−γ+γx+γy); Cramer's rule gives
    # V(0) = [(1−γ+γy)a + γx h]/det,  V(1) = [γy a + (1−γ+γx) h]/det.
    x, y = p * pi[0, 1], pi[1, 1]
    a = pi[0, 0] * r_low - pi[0, 1] * cost
    h = r_high
    det = (1 - gamma) * (1 - gamma + gamma * x + gamma * y)
    return np.array(
        [
            ((1 - gamma + gamma * y) * a + gamma * x * h) / det,
            (gamma * y * a + (1 - gamma + gamma * x) * h) / det,
        ]
    )


@settings(max_examples=40)
@given(
    gamma=st.floats(0.0, 0.99),
    p=st.floats(0.0, 1.0),
    r_low=st.floats(-2, 2),
    r_high=st.floats(-2, 2),
    cost=st.floats(0, 2),
    pi=policies(2, 2),
)
def test_two_state_policy_value_closed_form(gamma, p, r_low, r_high, cost, pi):
    m = two_state(gamma=gamma, p=p, r_low=r_low, r_high=r_high, cost=cost)
    np.testing.assert_allclose(
        evaluate_policy(m, pi),
        _two_state_V_pi(pi, gamma, p, r_low, r_high, cost),
        rtol=1e-10,
        atol=1e-10,
    )


@settings(max_examples=40)
@given(
    gamma=st.floats(0.0, 0.99), p=st.floats(0.01, 1.0), r_low=st.floats(0, 1), cost=st.floats(0, 1)
)
def test_two_state_optimal_value_closed_form(gamma, p, r_low, cost):
    # With r_high = 1 ≥ r_low and ≥ −cost: V*(1) = 1/(1−γ) and
    # V*(0) = max(r_low/(1−γ), (−cost + γp/(1−γ)) / (1 − γ(1−p)))  (stay forever vs move until in 1).
    m = two_state(gamma=gamma, p=p, r_low=r_low, r_high=1.0, cost=cost)
    V0 = max(r_low / (1 - gamma), (-cost + gamma * p / (1 - gamma)) / (1 - gamma * (1 - p)))
    res = policy_iteration(m)
    np.testing.assert_allclose(res.V, [V0, 1 / (1 - gamma)], rtol=1e-10, atol=1e-10)


def test_two_state_switches_action_at_the_threshold_discount():
    # Defaults r_low = 0.5, r_high = 1, p = 0.5, cost = 0: moving beats staying iff
    # γ·0.5/(1−γ) / (1 − γ/2) > 0.5/(1−γ)  ⇔  γ > 1 − γ/2  ⇔  γ > 2/3.
    assert policy_iteration(two_state(gamma=0.6)).policy[0] == 0
    assert policy_iteration(two_state(gamma=0.7)).policy[0] == 1
