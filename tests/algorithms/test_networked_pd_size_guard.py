"""The primal-dual entry points of the networked model refuse an oversized joint model first.

``lagrangian_gradient`` built the exact occupancy (``networked_occupancy``: at n = 13 agents with
two local states a 537 MB ``P_π``) before ``truncated_policy_gradient`` refused the model, and the
refusal named ``networked_occupancy`` (or, at 33 agents, numpy's 64-axis limit), not the function
the user called (reported by helper-42). Both refusals here happen before any joint array exists.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import sis_network
from rltheory.algorithms.networked_pd import (
    SafeNetworkedProblem,
    lagrangian_gradient,
    networked_primal_dual,
)
from rltheory.mdp.utility import linear_utility


def _problem(n):
    net = sis_network(nx.path_graph(n))
    R = np.asarray(net.R_local)
    C = np.array([[[0.0, 0.0], [1.0, 1.0]]] * n)
    return SafeNetworkedProblem(
        net,
        [linear_utility(R[i]) for i in range(n)],
        [linear_utility(C[i]) for i in range(n)],
        np.full(n, 0.3),
    )


@pytest.mark.parametrize("n", [13, 33])
def test_lagrangian_gradient_is_refused_by_its_own_name(n):
    pb = _problem(n)
    thetas = [np.zeros(s) for s in pb.net.theta_shapes()]
    with pytest.raises(
        ValueError, match=rf"^lagrangian_gradient: .* n = {n} agents.*MAX_JOINT_BYTES = 2\*\*31"
    ):
        lagrangian_gradient(pb, thetas, np.zeros(n))


def test_networked_primal_dual_is_refused_by_its_own_name():
    with pytest.raises(
        ValueError, match=r"^networked_primal_dual: .* n = 13 agents.*MAX_JOINT_BYTES = 2\*\*31"
    ):
        networked_primal_dual(
            _problem(13), iterations=1, kappa=1, eta_theta=1.0, eta_mu=1.0, Lambda=10.0
        )


def test_a_small_network_still_runs():
    pb = _problem(3)
    g, F, G = lagrangian_gradient(pb, [np.zeros(s) for s in pb.net.theta_shapes()], np.zeros(3))
    assert len(g) == 3 and np.all(np.isfinite(F)) and np.all(np.isfinite(G))
