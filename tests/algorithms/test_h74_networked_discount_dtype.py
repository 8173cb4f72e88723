"""A float32 networked model whose discount rounds to 1 in float32 is refused on construction.

Every exact joint computation (``I − γP_π`` in :func:`agent_q_functions`,
:func:`networked_occupancy`, :func:`correlation_decay`) runs in ``R_local``'s dtype. With
``γ = 1 − 2**-30`` in float32 that matrix is ``I − P_π``, singular, and the model used to be
accepted and then fail with numpy's unlocated ``LinAlgError: Singular matrix`` (as the
:class:`~rltheory.mdp.FiniteMDP` did before it refused such a discount).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import (
    NetworkedMDP,
    networked_occupancy,
    networked_policy_gradient,
    sis_network,
)
from rltheory.errors import InvalidModelError


def _f32(gamma: float) -> NetworkedMDP:
    net = sis_network(nx.path_graph(2))
    return NetworkedMDP(
        net.graph,
        tuple(np.asarray(p, dtype=np.float32) for p in net.P_local),
        np.asarray(net.R_local, dtype=np.float32),
        gamma,
    )


def test_float32_discount_rounding_to_one_is_refused() -> None:
    with pytest.raises(InvalidModelError, match=r"gamma = 0\.99999999.* rounds to 1 in .*float32"):
        _f32(1.0 - 2.0**-30)


def test_float32_discount_just_below_rounding_is_kept_and_matches_float64() -> None:
    # 1 - 2**-24 is the largest float32 below 1: accepted; the normalised occupancy
    # (1-γ) μ^T (I - γP_π)^{-1} is well conditioned whatever γ, so float32 agrees with float64 to a
    # few float32 ulps (measured 1e-8; bound 64 eps_32 = 7.6e-6)
    g = 1.0 - 2.0**-24
    net32 = _f32(g)
    net64 = sis_network(nx.path_graph(2), gamma=g)
    th = [np.zeros(s) for s in net64.theta_shapes()]
    d32 = np.asarray(networked_occupancy(net32, th), dtype=float)
    d64 = np.asarray(networked_occupancy(net64, th))
    eps32 = float(np.finfo(np.float32).eps)
    assert np.max(np.abs(d32 - d64)) < 64 * eps32
    assert all(np.all(np.isfinite(np.asarray(x))) for x in networked_policy_gradient(net32, th))
