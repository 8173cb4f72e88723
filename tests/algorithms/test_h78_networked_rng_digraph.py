"""networked_primal_dual's rng in the exact mode; neighborhoods on directed graphs (helper-78)."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import neighborhoods, sis_network
from rltheory.algorithms.networked_pd import SafeNetworkedProblem, networked_primal_dual
from rltheory.mdp.utility import OccupancyFunction, entropy_utility, linear_utility


def _problem() -> SafeNetworkedProblem:
    net = sis_network(nx.path_graph(3), gamma=0.6)
    R = np.asarray(net.R_local)
    C = np.array([[0.0, 0.0], [1.0, 1.0]])
    return SafeNetworkedProblem(
        net, [linear_utility(R[i]) for i in range(3)], [linear_utility(C)] * 3, np.full(3, 0.3)
    )


_KW = dict(iterations=4, kappa=1, eta_theta=1.0, eta_mu=1.0, Lambda=5.0)


def test_exact_mode_rng_is_harmless_and_draws_nothing():
    # the exact mode draws nothing: any valid rng gives the very same iterates as rng=None, and a
    # Generator passed in is not advanced
    pb = _problem()
    ref = networked_primal_dual(pb, **_KW)
    gen = np.random.default_rng(11)
    before = gen.bit_generator.state
    for rng in (gen, 0, 7, np.int64(3)):
        res = networked_primal_dual(pb, rng=rng, **_KW)
        for a, b in zip(res.thetas, ref.thetas, strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(res.duals, ref.duals)
        np.testing.assert_array_equal(res.trace["fosp"], ref.trace["fosp"])
    assert gen.bit_generator.state == before


@pytest.mark.parametrize(
    ("bad", "exc", "msg"),
    [
        ("abc", TypeError, r"rng must be a numpy\.random\.Generator or an int seed .*got str"),
        (True, TypeError, r"rng must be a numpy\.random\.Generator or an int seed .*got bool"),
        (1.5, TypeError, r"rng must be a numpy\.random\.Generator or an int seed .*got float"),
        (-1, ValueError, r"rng must be a numpy\.random\.Generator or an int seed >= 0; got -1"),
    ],
)
def test_exact_mode_names_a_bad_rng_as_the_sample_mode_does(bad, exc, msg):
    # old: the exact mode ran with rng='abc' (or True, 1.5, -1) without a word, while the sample mode
    # refused the same values; now both modes give the same located error (as for max_length)
    pb = _problem()
    for mode in ({"samples": 2}, {}):
        with pytest.raises(exc, match=msg):
            networked_primal_dual(pb, rng=bad, **_KW, **mode)


@pytest.mark.parametrize("cls", [nx.DiGraph, nx.MultiDiGraph])
def test_neighborhoods_refuses_a_directed_graph(cls):
    # old: networkx's distances follow out-edges, so on 0 -> 1 -> 2 agent 1's N^1 was (1, 2), without
    # its in-neighbour 0, and agent 2's was (2,): not the symmetric N_i^k = {j : dist(i, j) <= k} of
    # the docstring, and not the neighbourhoods NetworkedMDP (undirected only) builds its kernels on
    G = cls([(0, 1), (1, 2)])
    with pytest.raises(
        TypeError, match=rf"graph must be an undirected networkx\.Graph; got {cls.__name__}"
    ):
        neighborhoods(G, 1)


def test_neighborhoods_are_symmetric_balls_of_the_undirected_graph():
    # theorem: on an undirected graph j in N_i^k iff i in N_j^k, N_i^0 = (i,), N_i^k grows with k and
    # equals all nodes at k = diameter; reference: the 5-cycle's k-balls written out by hand
    G = nx.cycle_graph(5)
    assert neighborhoods(G, 1) == [(0, 1, 4), (0, 1, 2), (1, 2, 3), (2, 3, 4), (0, 3, 4)]
    assert neighborhoods(G, 2) == [tuple(range(5))] * 5
    for H in (nx.path_graph(6), nx.star_graph(4), nx.balanced_tree(2, 2), G):
        n = H.number_of_nodes()
        assert neighborhoods(H, 0) == [(i,) for i in range(n)]
        prev = None
        for k in range(nx.diameter(H) + 1):
            Nk = neighborhoods(H, k)
            for i, j in itertools.product(range(n), repeat=2):
                assert (j in Nk[i]) == (i in Nk[j]) == (nx.shortest_path_length(H, i, j) <= k)
            if prev is not None:
                assert all(set(a) <= set(b) for a, b in zip(prev, Nk, strict=True))
            prev = Nk
        assert prev == [tuple(range(n))] * n
    # an undirected multigraph has the same distances as its simple graph
    M = nx.MultiGraph([(0, 1), (0, 1), (1, 2)])
    assert neighborhoods(M, 1) == neighborhoods(nx.path_graph(3), 1)


def test_safe_problem_refuses_the_wrong_curvature_as_general_utility_primal_dual_does():
    # old: a convex objective or a concave constraint was accepted and run as if Ying et al.'s
    # guarantee (concave f_i, convex g_i) applied; general_utility_primal_dual refuses both
    net = sis_network(nx.path_graph(2), gamma=0.6)
    lin = linear_utility(np.zeros((2, 2)))
    H = entropy_utility(2, 2)  # concave
    neg_H = OccupancyFunction(
        "-entropy",
        "convex",
        lambda d: -H.expression(d),
        lambda d: -H.value(d),
        lambda d: -H.gradient(d),
        (2, 2),
    )
    with pytest.raises(
        ValueError,
        match=r"^objectives\[1\] \('-entropy'\) must be concave or affine .* it is convex",
    ):
        SafeNetworkedProblem(net, [lin, neg_H], [lin, lin], np.zeros(2))
    with pytest.raises(
        ValueError,
        match=r"^constraints\[0\] \('entropy'\) must be convex or affine .* it is concave",
    ):
        SafeNetworkedProblem(net, [lin, lin], [H, lin], np.zeros(2))
    # the right curvatures pass: concave / affine objectives, convex / affine constraints
    pb = SafeNetworkedProblem(net, [H, lin], [neg_H, lin], np.zeros(2))
    assert [f.curvature for f in pb.objectives] == ["concave", "affine"]
