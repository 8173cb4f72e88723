"""Exact networked gradients against an independent rational reference (2–3 agents).

The reference enumerates joint states and actions with :class:`fractions.Fraction`: the joint
kernel ``Π_i P_i(s'_i | s_{N_i}, a_i)`` from brute-force 1-hop sets (networkx shortest paths),
``V_j = (I − γP_π)^{-1} r_{j,π}`` and the discounted visitation by Gauss–Jordan over the
rationals, the truncated critic ``Q̃_j^κ`` as the weighted mean over the agents outside ``N_j^κ``
(the plain mean on blocks of zero weight), and the softmax score ``1[a_i = b] − π_i(b|x)``. The
float inputs (kernels, rewards, ``μ``, ``γ``, the policy probabilities) are taken exactly as
rationals, so the only error of the library's answer is its own rounding. Graphs: a path of 3,
a star of 3 (centre 0), a path of 2; policy radius 0 and 1; ``κ = 0..2``; uniform and occupancy
weights; and an agent whose local state 1 is never visited (``μ_0 = (1, 0)``, ``P_0(1|·) = 0``),
which makes blocks of zero occupancy.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as Fr

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import (
    NetworkedMDP,
    networked_policy_gradient,
    truncated_policy_gradient,
)
from rltheory.algorithms.networked_joint import local_softmax
from rltheory.testing import exact_solve


def _ball(G, i, r):
    return tuple(j for j in sorted(G) if nx.shortest_path_length(G, i, j) <= r)


def _reference(net, thetas, kappa, weights):
    G, n, S, A = net.graph, net.n, net.S_local, net.A_local
    g = Fr(float(net.gamma))
    P = [np.asarray(p) for p in net.P_local]
    R = np.asarray(net.R_local)
    mu = np.asarray(net.mu_local)
    N1 = [_ball(G, i, 1) for i in range(n)]
    L = [_ball(G, i, net.policy_radius) for i in range(n)]
    Nk = [_ball(G, j, kappa) for j in range(n)]
    pis = [[[Fr(float(v)) for v in row] for row in np.asarray(p)] for p in local_softmax(thetas)]
    X = list(itertools.product(range(S), repeat=n))
    U = list(itertools.product(range(A), repeat=n))

    def row(i, s):
        x = 0
        for k in L[i]:
            x = x * S + s[k]
        return x

    pi = {
        (s, a): np.prod([pis[i][row(i, s)][a[i]] for i in range(n)], dtype=object)
        for s in X
        for a in U
    }
    T = {
        (s, a, t): np.prod(
            [Fr(float(P[i][tuple(s[k] for k in N1[i]) + (a[i], t[i])])) for i in range(n)],
            dtype=object,
        )
        for s in X
        for a in U
        for t in X
    }
    Ppi = {(s, t): sum(pi[s, a] * T[s, a, t] for a in U) for s in X for t in X}
    M = [[int(s == t) - g * Ppi[s, t] for t in X] for s in X]
    m0 = [np.prod([Fr(float(mu[i, s[i]])) for i in range(n)], dtype=object) for s in X]
    rho = dict(
        zip(X, exact_solve([[int(s == t) - g * Ppi[t, s] for t in X] for s in X], m0), strict=True)
    )
    d = {(s, a): (1 - g) * rho[s] * pi[s, a] for s in X for a in U}
    Qt = []
    for j in range(n):
        r = {(s, a): Fr(float(R[j, s[j], a[j]])) for s in X for a in U}
        V = dict(
            zip(X, exact_solve(M, [sum(pi[s, a] * r[s, a] for a in U) for s in X]), strict=True)
        )
        Q = {(s, a): r[s, a] + g * sum(T[s, a, t] * V[t] for t in X) for s in X for a in U}
        num, den, tot, cnt = {}, {}, {}, {}
        for (s, a), q in Q.items():
            key = tuple(s[k] for k in Nk[j]) + tuple(a[k] for k in Nk[j])
            w = d[s, a] if weights == "occupancy" else Fr(1)
            num[key] = num.get(key, 0) + w * q
            den[key] = den.get(key, 0) + w
            tot[key] = tot.get(key, 0) + q
            cnt[key] = cnt.get(key, 0) + 1
        Qt.append(
            lambda s, a, j=j, num=num, den=den, tot=tot, cnt=cnt: (
                lambda k: num[k] / den[k] if den[k] != 0 else tot[k] / cnt[k]
            )(tuple(s[k] for k in Nk[j]) + tuple(a[k] for k in Nk[j]))
        )
    out = []
    for i in range(n):
        gi = [[Fr(0)] * A for _ in pis[i]]
        for s in X:
            x = row(i, s)
            for a in U:
                w = d[s, a] * sum(Qt[j](s, a) for j in Nk[i])
                for b in range(A):
                    gi[x][b] += w * (int(a[i] == b) - pis[i][x][b])
        out.append(np.array([[float(v / (1 - g)) for v in r_] for r_ in gi]))
    return out


def _net(G, radius, unvisited, seed):
    rng = np.random.default_rng(seed)
    n, S, A = G.number_of_nodes(), 2, 2
    N1 = [_ball(G, i, 1) for i in range(n)]
    Ps = [rng.dirichlet(np.ones(S), size=(S,) * len(N1[i]) + (A,)) for i in range(n)]
    mu = rng.dirichlet(np.ones(S), size=n)
    if unvisited:  # agent 0 starts in 0 and stays there: its state 1 has zero occupancy
        mu[0] = [1.0, 0.0]
        Ps[0][..., 0], Ps[0][..., 1] = 1.0, 0.0
    net = NetworkedMDP(G, tuple(Ps), rng.normal(size=(n, S, A)), 0.7, mu, radius)
    return net, [rng.normal(size=s) for s in net.theta_shapes()]


GRAPHS = {"path3": nx.path_graph(3), "star3": nx.star_graph(2), "path2": nx.path_graph(2)}


@pytest.mark.parametrize("unvisited", [False, True])
@pytest.mark.parametrize("radius", [0, 1])
@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_truncated_and_exact_gradients_match_rational_reference(graph, radius, unvisited) -> None:
    net, th = _net(GRAPHS[graph], radius, unvisited, seed=radius + 2 * unvisited)
    exact = networked_policy_gradient(net, th)
    for kappa in range(3):
        for weights in ("uniform", "occupancy"):
            ref = _reference(net, th, kappa, weights)
            got = truncated_policy_gradient(net, th, kappa, weights=weights)
            scale = max(float(np.max(np.abs(r))) for r in ref) + 1.0
            for x, y in zip(got, ref, strict=True):
                # float64 evaluation of O(10^2) rational terms: a few hundred ulps of the scale
                assert np.max(np.abs(np.asarray(x) - y)) <= 1e-13 * scale, (kappa, weights)
            if kappa >= net.diameter:  # N_j^κ = every agent: the exact gradient
                for x, y in zip(exact, ref, strict=True):
                    assert np.max(np.abs(np.asarray(x) - y)) <= 1e-13 * scale
