"""Sample-based κ-hop critics at a κ whose dense critic tables cannot exist.

:func:`local_critics` tabulates ``Q̂_j^κ`` densely over ``(S_l A_l)^{|N_j^κ|}`` blocks;
:func:`sampled_truncated_gradient` used to build those tables too, so on a path of 20 SIS agents
at ``κ = 19`` (``4^20`` entries, 8 TiB) it died with numpy's "Unable to allocate 8.00 TiB", and on a
path of 40 with "Python int too large to convert to C long". The gradient needs the critics only
at the (at most ``K``) sampled blocks; ``local_critics`` now refuses an oversize table, located.
"""

from __future__ import annotations

from collections import defaultdict

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import neighborhoods, sis_network
from rltheory.algorithms.networked_critics import (
    _block_index,
    local_critics,
    sample_rollouts,
    sampled_truncated_gradient,
)
from rltheory.algorithms.networked_joint import local_softmax


def _samples(n: int, seed: int, K: int = 40):
    net = sis_network(nx.path_graph(n), gamma=0.5)
    rng = np.random.default_rng(seed)
    th = [rng.normal(size=s) for s in net.theta_shapes()]
    s, a, counts = sample_rollouts(net, th, K, seed)
    ret = np.einsum("knsa,nsa->kn", counts, np.asarray(net.R_local))
    return net, th, s, a, ret


def _reference(net, th, s, a, ret, kappa):
    """ĝ_i = (1/K) Σ_k Σ_{j∈N_i^κ} mean{G_j : same (s, a)_{N_j^κ}} (1[a_i=b] − π_i(b|s_i)) by dicts."""
    Nk = neighborhoods(net.graph, kappa)
    pis = [np.asarray(p) for p in local_softmax(th)]
    K = s.shape[0]
    q = np.empty((K, net.n))
    for j in range(net.n):
        groups = defaultdict(list)
        keys = [tuple(s[k, Nk[j]]) + tuple(a[k, Nk[j]]) for k in range(K)]
        for k, key in enumerate(keys):
            groups[key].append(ret[k, j])
        q[:, j] = [np.mean(groups[key]) for key in keys]
    out = []
    for i in range(net.n):  # policy_radius 0: row x = s_i
        g = np.zeros_like(pis[i])
        for k in range(K):
            w = q[k, list(Nk[i])].sum()
            g[s[k, i]] += w * ((np.arange(net.A_local) == a[k, i]) - pis[i][s[k, i]])
        out.append(g / K)
    return out


@pytest.mark.parametrize("n, kappa", [(20, 19), (40, 39), (40, 3)])
def test_sampled_gradient_at_large_kappa_matches_grouped_reference(n, kappa) -> None:
    net, th, s, a, ret = _samples(n, seed=n + kappa)
    got = sampled_truncated_gradient(net, th, s, a, ret, kappa)
    ref = _reference(net, th, s, a, ret, kappa)
    for x, y in zip(got, ref, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12 * np.abs(ret).max())


@pytest.mark.parametrize("kappa", [0, 1, 2, 3])
def test_sampled_gradient_equals_plug_in_of_local_critic_tables(kappa) -> None:
    # where the dense tables fit, the gradient is the plug-in of local_critics, bit for bit
    net, th, s, a, ret = _samples(4, seed=kappa)
    tables = local_critics(net, s, a, ret, kappa)
    Nk = neighborhoods(net.graph, kappa)
    q = np.stack([tables[j][_block_index(net, s, a, Nk[j])] for j in range(net.n)], axis=1)
    pis = [np.asarray(p) for p in local_softmax(th)]
    got = sampled_truncated_gradient(net, th, s, a, ret, kappa)
    for i in range(net.n):
        score = -pis[i][s[:, i]]
        score[np.arange(s.shape[0]), a[:, i]] += 1.0
        g = np.zeros_like(pis[i])
        np.add.at(g, s[:, i], q[:, list(Nk[i])].sum(axis=1)[:, None] * score)
        assert np.array_equal(got[i], g / s.shape[0])


def test_local_critics_refuses_oversize_table_located() -> None:
    net, th, s, a, ret = _samples(20, seed=0, K=5)
    with pytest.raises(
        ValueError,
        match=r"local_critics: agent 0's table .*\|N_0\^kappa\| = 16 agents at kappa = 15\) has "
        r"\(S_l A_l\)\^16 = 4\^16 entries, 3\.44e\+10 bytes",
    ):
        local_critics(net, s, a, ret, 15)
    assert len(local_critics(net, s, a, ret, 2)[0]) == 4**3  # N_0^2 = {0, 1, 2}
