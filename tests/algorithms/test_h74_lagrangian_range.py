"""lagrangian_gradient names the shadow rewards when their values leave the float range.

Duals of 1e308 make the shadow rewards ``r̃_j = ∇f_j − μ_j ∇g_j`` about 1e308, and their Q-functions
overflow. The old code returned an all-NaN gradient silently; after the range checks of
:func:`~rltheory.algorithms.networked_joint.agent_q_functions` the message named
``agent_q_functions`` and "R_local (or R_agents)", which the caller of ``lagrangian_gradient``
never gave.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import sis_network
from rltheory.algorithms.networked_pd import SafeNetworkedProblem, lagrangian_gradient
from rltheory.mdp.utility import linear_utility


def _problem() -> SafeNetworkedProblem:
    net = sis_network(nx.path_graph(3))
    C = np.array([[0.0, 0.0], [1.0, 1.0]])
    R = np.asarray(net.R_local)
    return SafeNetworkedProblem(
        net, [linear_utility(R[i]) for i in range(3)], [linear_utility(C)] * 3, np.full(3, 0.3)
    )


@pytest.mark.parametrize("kappa", [None, 0])
def test_huge_duals_are_refused_naming_the_shadow_rewards(kappa) -> None:
    pb = _problem()
    th = [np.zeros(s) for s in pb.net.theta_shapes()]
    with pytest.raises(
        ValueError,
        match=r"lagrangian_gradient: the shadow rewards .*max\|r~\| = 1e\+308, max mu = 1e\+308",
    ):
        lagrangian_gradient(pb, th, np.full(3, 1e308), kappa)


def test_bad_kappa_is_reported_as_such() -> None:
    pb = _problem()
    th = [np.zeros(s) for s in pb.net.theta_shapes()]
    with pytest.raises(ValueError, match=r"^kappa must be a non-negative integer; got -1$"):
        lagrangian_gradient(pb, th, np.zeros(3), -1)
    # moderate duals still give a finite gradient
    g1, _, _ = lagrangian_gradient(pb, th, np.full(3, 2.0**10), 1)
    assert all(np.all(np.isfinite(x)) for x in g1)
