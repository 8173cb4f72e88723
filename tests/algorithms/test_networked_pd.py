"""Safe networked primal-dual actor-critic: exact gradient, truncation, sampled critics, reproducibility."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.constrained import general_utility_primal_dual
from rltheory.algorithms.networked import (
    _truncate,
    agent_q_functions,
    joint_mdp,
    local_occupancies,
    networked_occupancy,
    sis_network,
)
from rltheory.algorithms.networked_pd import (
    SafeNetworkedProblem,
    lagrangian_gradient,
    local_critics,
    networked_primal_dual,
    sample_rollouts,
    sampled_truncated_gradient,
)
from rltheory.mdp.utility import OccupancyFunction, entropy_utility, linear_utility


def _problem(
    G: nx.Graph, seed: int = 0, b: float = 0.28, beta: float = 0.1
) -> SafeNetworkedProblem:
    net = sis_network(G, gamma=0.7)
    rng = np.random.default_rng(seed)
    H = entropy_utility(2, 2)
    fs = []
    for _ in range(net.n):
        R = -rng.random((2, 2))
        lin = linear_utility(R)
        fs.append(
            OccupancyFunction(
                "r+H",
                "concave",
                lambda d, lin=lin: lin.expression(d) + beta * H.expression(d),
                lambda d, lin=lin: lin.value(d) + beta * H.value(d),
                lambda d, R=R: R + beta * H.gradient(d),
                (2, 2),
            )
        )
    C = np.array([[0.0, 0.0], [1.0, 1.0]])
    return SafeNetworkedProblem(net, fs, [linear_utility(C)] * net.n, np.full(net.n, b))


def _thetas(pb: SafeNetworkedProblem, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [0.7 * rng.normal(size=s) for s in pb.net.theta_shapes()]


def _lagrangian(pb: SafeNetworkedProblem, th: list, mu: np.ndarray) -> float:
    lam = np.asarray(local_occupancies(pb.net, networked_occupancy(pb.net, th)))
    F, G = pb.values(lam)
    return float(F.sum() - mu @ (G - pb.b))


# ------------------------------------------------------------------ theorem / consistency
@pytest.mark.parametrize("graph", [nx.path_graph(3), nx.cycle_graph(4)])
def test_lagrangian_gradient_equals_finite_differences(graph):
    """Chain rule through the shadow rewards (Zhang et al. 2020, §3): ∇_θ L = E_d[Σ_j Q_j^r̃ ∇ log π]."""
    pb = _problem(graph, seed=1)
    th = _thetas(pb, 2)
    mu = np.linspace(0.2, 1.0, pb.net.n)
    g, _, _ = lagrangian_gradient(pb, th, mu)
    eps = 1e-6
    for i in range(pb.net.n):
        for idx in np.ndindex(*th[i].shape):
            tp = [t.copy() for t in th]
            tm = [t.copy() for t in th]
            tp[i][idx] += eps
            tm[i][idx] -= eps
            fd = (_lagrangian(pb, tp, mu) - _lagrangian(pb, tm, mu)) / (2 * eps)
            assert abs(fd - g[i][idx]) <= 1e-7 * (1 + abs(fd))


def test_truncated_gradient_tends_to_exact_as_kappa_reaches_diameter():
    """‖ĝ^κ − ∇L‖² is zero for κ ≥ diam, positive below, and shrinks from κ = 0 to diam."""
    pb = _problem(nx.path_graph(5), seed=3)
    th = _thetas(pb, 4)
    mu = np.full(5, 0.5)
    exact, _, _ = lagrangian_gradient(pb, th, mu)
    errs = []
    for k in range(pb.net.diameter + 2):
        gk, _, _ = lagrangian_gradient(pb, th, mu, kappa=k)
        errs.append(sum(float(np.sum((a - b) ** 2)) for a, b in zip(gk, exact, strict=True)))
    assert errs[pb.net.diameter] <= 1e-28 and errs[-1] <= 1e-28
    assert min(errs[: pb.net.diameter]) > 1e-12
    assert errs[pb.net.diameter - 1] < errs[0]


def test_single_agent_network_reduces_to_general_utility_primal_dual():
    """n = 1: the networked method is the single-agent general-utility primal-dual (same iterates)."""
    pb = _problem(nx.path_graph(1), seed=5, b=0.2)
    res = networked_primal_dual(
        pb, iterations=60, kappa=0, eta_theta=3.0, eta_mu=2.0, Lambda=10.0, delta=0.01
    )
    mdp = joint_mdp(pb.net)
    ref = general_utility_primal_dual(
        mdp,
        pb.objectives[0],
        [(pb.constraints[0], float(pb.b[0]))],
        iterations=60,
        eta_theta=3.0,
        eta_mu=2.0,
        Lambda=10.0,
        delta=0.01,
        reference=0.0,
    )
    np.testing.assert_allclose(res.thetas[0], ref.theta, atol=1e-10)
    np.testing.assert_allclose(res.duals, ref.duals, atol=1e-10)
    np.testing.assert_allclose(res.trace["fosp"], ref.trace["fosp"], rtol=1e-8, atol=1e-14)


def test_exact_run_average_fosp_decreases_and_constraint_met_at_diameter():
    """Exact κ = diam with a fixed dual regularisation: the average FOSP measure falls and the last
    iterate's violation is at most δ·μ_T (regularised dual stationarity) plus the optimisation error."""
    pb = _problem(nx.cycle_graph(4), seed=6)
    res = networked_primal_dual(
        pb, iterations=400, kappa=2, eta_theta=5.0, eta_mu=1.0, Lambda=10.0, delta=0.01
    )
    f = res.trace["fosp"]
    assert np.mean(f[200:]) < 0.05 * np.mean(f[:20])
    assert res.trace["violation"][-1] <= 0.01 * float(res.duals.max()) + 1e-3


# ------------------------------------------------------------------ sampled critics
@pytest.mark.parametrize("radius", [0, 1])
def test_rollout_returns_are_unbiased_for_the_exact_local_q(radius):
    """E[G_j | s, a] = Q_j(s, a): the κ = diam critic (one cell per joint pair) vs the exact Q_j, within
    5 standard errors in every cell with ≥ 100 samples (policies on own state, or on the 1-hop states)."""
    pb = _problem(nx.path_graph(3), seed=7)
    net = pb.net.replace(policy_radius=radius)
    th = [2.0 * g for g in (np.random.default_rng(8).normal(size=sh) for sh in net.theta_shapes())]
    R = np.random.default_rng(9).random((3, 2, 2))
    s, a, counts = sample_rollouts(net, th, 30_000, np.random.default_rng(10))
    ret = (counts * R[None]).sum(axis=(2, 3))
    crit = local_critics(net, s, a, ret, net.diameter)
    crit2 = local_critics(net, s, a, ret**2, net.diameter)
    Q = np.asarray(agent_q_functions(net, th, R))  # (n, S^n, A^n): joint index (s, a) mixed radix
    n_cell = np.bincount(
        ((s[:, 0] * 2 + s[:, 1]) * 2 + s[:, 2]) * 8 + (a[:, 0] * 2 + a[:, 1]) * 2 + a[:, 2],
        minlength=64,
    )
    # the stopped pairs are draws from d^π: empirical frequencies within 5 binomial standard errors
    d = np.asarray(networked_occupancy(net, th)).reshape(64)
    freq = n_cell / len(s)
    assert np.all(np.abs(freq - d) <= 5 * np.sqrt(d * (1 - d) / len(s)) + 1e-12)
    checked = 0
    for j in range(3):
        q = Q[j].reshape(64)
        for c in np.flatnonzero(n_cell >= 100):
            se = np.sqrt(max(crit2[j][c] - crit[j][c] ** 2, 0.0) / n_cell[c])
            assert abs(crit[j][c] - q[c]) <= 5 * se + 1e-12
            checked += 1
    assert checked >= 60


def test_truncated_local_critic_is_consistent_for_the_occupancy_weighted_q():
    """κ = 0 critic of agent j (table over (s_j, a_j)) → E_d[Q_j | s_j, a_j] (within 5 standard errors)."""
    pb = _problem(nx.cycle_graph(4), seed=11)
    net = pb.net
    th = _thetas(pb, 12)
    R = np.random.default_rng(13).random((4, 2, 2))
    s, a, counts = sample_rollouts(net, th, 20_000, np.random.default_rng(14))
    ret = (counts * R[None]).sum(axis=(2, 3))
    crit = local_critics(net, s, a, ret, 0)
    crit2 = local_critics(net, s, a, ret**2, 0)
    Q = np.asarray(agent_q_functions(net, th, R))
    d = np.asarray(networked_occupancy(net, th))
    for j in range(4):
        Qt = np.asarray(_truncate(net, d, Q[j], (j,))).reshape((2,) * 4 + (2,) * 4)
        for sj in range(2):
            for aj in range(2):
                idx = [0] * 8
                idx[j], idx[4 + j] = sj, aj
                cnt = int(np.sum((s[:, j] == sj) & (a[:, j] == aj)))
                c = sj * 2 + aj
                se = np.sqrt((crit2[j][c] - crit[j][c] ** 2) / cnt)
                assert abs(crit[j][c] - Qt[tuple(idx)]) <= 5 * se


def test_sampled_truncated_gradient_is_unbiased():
    """policy_radius = 0: the plug-in critic gradient is unbiased for (1−γ)·the occupancy-weighted truncated
    gradient; mean of 20 independent estimates within 5 standard errors of the exact one, every entry."""
    pb = _problem(nx.cycle_graph(4), seed=15)
    net = pb.net
    th = _thetas(pb, 16)
    mu = np.full(4, 0.3)
    exact, _, _ = lagrangian_gradient(pb, th, mu, kappa=1)
    lam = np.asarray(local_occupancies(net, networked_occupancy(net, th)))
    rt = pb.shadow_rewards(lam, mu)
    gen = np.random.default_rng(17)
    draws = []
    for _ in range(20):
        s, a, counts = sample_rollouts(net, th, 1000, gen)
        g = sampled_truncated_gradient(net, th, s, a, (counts * rt[None]).sum(axis=(2, 3)), 1)
        draws.append(np.concatenate([x.ravel() for x in g]))
    draws = np.asarray(draws)
    ex = np.concatenate([x.ravel() for x in exact])
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - ex) <= 5 * se + 1e-12)


def test_seeded_sample_based_runs_are_reproducible():
    pb = _problem(nx.path_graph(3), seed=18)
    kw = dict(iterations=15, kappa=1, eta_theta=2.0, eta_mu=1.0, Lambda=10.0, samples=200)
    r1 = networked_primal_dual(pb, rng=np.random.default_rng(3), **kw)
    r2 = networked_primal_dual(pb, rng=3, **kw)
    r3 = networked_primal_dual(pb, rng=4, **kw)
    for a, b in zip(r1.thetas, r2.thetas, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(r1.trace["fosp"], r2.trace["fosp"])
    assert not np.array_equal(r1.trace["fosp"], r3.trace["fosp"])


# ------------------------------------------------------------------ validation
def test_validation():
    pb = _problem(nx.path_graph(3))
    C = linear_utility(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="objectives must hold one function per agent"):
        SafeNetworkedProblem(pb.net, pb.objectives[:2], pb.constraints, pb.b)
    with pytest.raises(TypeError, match=r"constraints\[1\] must be an OccupancyFunction"):
        SafeNetworkedProblem(pb.net, pb.objectives, [C, "x", C], pb.b)
    with pytest.raises(ValueError, match=r"constraints\[0\] has shape"):
        SafeNetworkedProblem(
            pb.net, pb.objectives, [linear_utility(np.zeros((3, 2)))] + [C] * 2, pb.b
        )
    with pytest.raises(ValueError, match="b must be a finite array of shape"):
        SafeNetworkedProblem(pb.net, pb.objectives, pb.constraints, np.zeros(2))
    kw = dict(iterations=5, kappa=1, eta_theta=1.0, eta_mu=1.0, Lambda=10.0)
    with pytest.raises(ValueError, match="needs rng"):
        networked_primal_dual(pb, samples=10, **kw)
    with pytest.raises(ValueError, match="delta must be"):
        networked_primal_dual(pb, delta=-1.0, **kw)
    with pytest.raises(ValueError, match="eta_mu must be"):
        networked_primal_dual(pb, **{**kw, "eta_mu": 0.0})
    with pytest.raises(ValueError, match="kappa must be a non-negative integer; got -1"):
        networked_primal_dual(pb, **{**kw, "kappa": -1})
    with pytest.raises(ValueError, match="mu must be a finite array"):
        lagrangian_gradient(pb, _thetas(pb, 0), np.zeros(2))
    with pytest.raises(ValueError, match="states, actions and returns"):
        local_critics(pb.net, np.zeros((4, 3), int), np.zeros((4, 3), int), np.zeros((4, 2)), 1)
