"""A NetworkedMDP keeps a frozen copy of its graph.

The local kernels' axes follow the 1-hop neighbourhoods of the graph given at construction. The
model used to keep a reference to the caller's graph: rewiring the ring 0-1-2-3-0 into
0-2-1-3-0 afterwards (every degree still 2, so every kernel shape still matched) reinterpreted
the kernels on the new neighbourhoods and changed ``networked_policy_gradient`` by 0.198 without
a word; adding an edge made it fail inside numpy ("cannot reshape array of size 16").
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import (
    neighborhoods,
    networked_policy_gradient,
    sis_network,
)


def test_rewiring_the_callers_graph_does_not_change_the_model() -> None:
    G = nx.cycle_graph(4)
    net = sis_network(G)
    rng = np.random.default_rng(0)
    th = [rng.normal(size=s) for s in net.theta_shapes()]
    g0 = networked_policy_gradient(net, th)
    G.remove_edges_from([(0, 1), (2, 3)])
    G.add_edges_from([(0, 2), (1, 3)])
    G.add_edge(0, 3)  # not a simple rewiring any more either
    assert neighborhoods(net.graph, 1) == [(0, 1, 3), (0, 1, 2), (1, 2, 3), (0, 2, 3)]
    g1 = networked_policy_gradient(net, th)
    for a, b in zip(g0, g1, strict=True):
        assert np.array_equal(a, b)


def test_the_models_graph_cannot_be_mutated() -> None:
    net = sis_network(nx.path_graph(3))
    with pytest.raises(nx.NetworkXError, match="Frozen graph can't be modified"):
        net.graph.add_edge(0, 2)
    assert net.replace(gamma=0.5).diameter == 2  # dataclasses.replace re-validates the frozen copy
