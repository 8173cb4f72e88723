"""Relative value iteration stops, unconverged and warned, at an iterate it has met before.

The sweep ``v ↦ T̃v − (T̃v)(ref) 1`` is a deterministic map, so an iterate equal to an earlier one
starts a cycle that no further sweep leaves. Without the transform (``tau=1``) on a periodic chain
that happens at once (the 2-cycle: ``v_2 = v_0``), and the iteration ran to ``max_iter = 100000``
(seconds of sweeps for two states) before its warning, which did not say why.
"""

import warnings

import numpy as np
import pytest

from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP
from rltheory.mdp.average import relative_value_iteration


def test_two_cycle_without_the_transform_stops_at_the_repeat():
    # 0 → 1 → 0 with rewards (1, 0): g* = 1/2. Odoni's bounds of v_0 = 0 are min Δ = 0, max Δ = 1
    P = np.array([[[0.0, 1.0]], [[1.0, 0.0]]])
    mdp = FiniteMDP(P, np.array([[1.0], [0.0]]), gamma=None)
    with pytest.warns(
        ConvergenceWarning, match=r"after 2 sweeps .*v_2 = v_0, a cycle of period 2 .*use tau < 1"
    ):
        res = relative_value_iteration(mdp, tau=1.0)
    assert not res.converged and res.iterations == 2
    # the bounds stay certified: lower ≤ g* = 1/2 ≤ upper, and the midpoint is g*
    assert res.gain == 0.5 and res.bound >= 1.0
    # with the transform the same model converges at once
    ok = relative_value_iteration(mdp, tau=0.5, tol=1e-12)
    assert ok.converged and abs(float(ok.gain) - 0.5) <= float(ok.bound) / 2


@pytest.mark.parametrize("S", [4, 10])
def test_bipartite_periodic_chain_stops_early_and_its_bounds_hold(S):
    # states {0..S/2−1} and {S/2..S−1} alternate under every action (period 2). The transformed
    # iteration gives g* (its bound ≤ 1e-12); plain RVI reaches a cycle of iterates within 100
    # sweeps, ending unconverged with Odoni bounds that still contain g*
    rng = np.random.default_rng(S)
    h = S // 2
    P = np.zeros((S, 2, S))
    for s in range(S):
        tgt = list(range(h, S)) if s < h else list(range(h))
        P[s, :, tgt] = rng.dirichlet(np.ones(len(tgt)), size=2).T
    mdp = FiniteMDP(P, rng.random((S, 2)), gamma=None)
    ref = relative_value_iteration(mdp, tau=0.5, tol=1e-12)
    assert ref.converged
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = relative_value_iteration(mdp, tau=1.0, tol=1e-12)
    assert not res.converged and res.iterations < 100
    assert any("a cycle of period" in str(x.message) for x in w)  # (2, or 4 through round-off)
    lo, hi = float(res.trace.metrics["lower"][-1]), float(res.trace.metrics["upper"][-1])
    assert lo - 1e-12 <= float(ref.gain) <= hi + 1e-12
