"""Two implementations of the correlated-equilibrium gaps agree on one-shot games.

``ce_gap`` / ``cce_gap`` (rltheory.games.correlated) report the largest single incentive violation,
``max_{i, a_i, a_i'}`` (CE) or ``max_{i, a_i'}`` (CCE); ``equilibrium_gap`` (rltheory.algorithms.
stage_equilibria), on a one-state, one-step game, sums over players the best deviation gain: for CE
the best strategy modification ``Σ_{a_i} max_{a_i'}`` of the same per-swap gains (each max ≥ 0, take
``a_i' = a_i``), for CCE ``max(0, max_{a_i'} …)``. Hence, exactly,

    ce_gap ≤ gap_CE ≤ Σ_i A_i · ce_gap   and   cce_gap ≤ gap_CCE ≤ n · cce_gap,

both zero exactly at a CE / CCE. (The certified gaps add a round-off allowance of about 1e-15.)
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.stage_equilibria import equilibrium_gap
from rltheory.games import cce_gap, ce_gap, max_welfare_cce, max_welfare_ce


@pytest.mark.parametrize("seed", range(3))
def test_one_shot_gaps_bracket_each_other(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        shape = tuple(int(a) for a in rng.integers(1, 4, size=2))
        U = rng.uniform(0.0, 1.0, size=(2, *shape))
        mu = rng.dirichlet(np.ones(int(np.prod(shape)))).reshape(shape)
        P, R = np.ones((1, 1, *shape, 1)), U[:, None, None]
        g_ce = equilibrium_gap(P, R, mu[None, None], concept="ce")
        g_cce = equilibrium_gap(P, R, mu[None, None], concept="cce")
        c, cc = ce_gap(U, mu), cce_gap(U, mu)
        slack = 1e-13  # the certificates' round-off allowances on payoffs in [0, 1]
        assert c <= g_ce + slack and g_ce <= sum(shape) * c + slack
        assert cc <= g_cce + slack and g_cce <= 2 * cc + slack


@pytest.mark.parametrize("solve, concept", [(max_welfare_ce, "ce"), (max_welfare_cce, "cce")])
def test_solver_outputs_have_zero_gap_in_both(solve, concept):
    rng = np.random.default_rng(7)
    for _ in range(10):
        shape = tuple(int(a) for a in rng.integers(1, 4, size=2))
        U = rng.uniform(0.0, 1.0, size=(2, *shape))
        out = solve(U)
        P, R = np.ones((1, 1, *shape, 1)), U[:, None, None]
        g = equilibrium_gap(P, R, out.distribution[None, None], concept=concept)
        assert g <= sum(shape) * out.gap + 1e-13  # the LP solution's certified gap bounds both
