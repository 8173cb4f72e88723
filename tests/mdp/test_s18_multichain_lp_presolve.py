"""The multichain average-reward LP is solved where HiGHS's presolve misjudges it twice.

Regression (helper-87's open item): on this 5-state model (found among 400 stress models; two
transitions of 1e-7) HiGHS called the multichain LP *unbounded* and, with the implied row
``Σx = 1`` stated (b880fb9), ended at model status *Unknown* with both methods and both drop
settings, so ``average_linear_program(multichain=True)`` raised ``SolverError``. Without presolve
(``_numerics.highs_linprog(presolve=False)``, the last retry) it is solved; reference: multichain
policy iteration.
"""

from __future__ import annotations

import numpy as np

from rltheory.mdp import FiniteMDP
from rltheory.mdp.average import average_linear_program, average_policy_iteration

P = np.array(
    [
        [
            [1e-07, 0.0, 0.29284436760889365, 0.0, 0.7071555323911064],
            [0.0, 0.0, 1.0, 0.0, 0.0],
            [0.0, 0.39153312454707573, 0.08726087833744156, 0.5212059971154827, 0.0],
        ],
        [
            [0.0, 0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 0.44437047260731016, 0.14361844172727417, 0.4120110856654155],
            [0.0, 1.0, 0.0, 0.0, 0.0],
        ],
        [[0.0, 0.0, 0.0, 0.0, 1.0], [0.0, 1e-07, 0.9999999, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]],
        [
            [0.0, 1.0, 0.0, 0.0, 0.0],
            [0.5516089767796625, 0.0, 0.0, 0.4483910232203376, 0.0],
            [0.0, 0.43028305747269613, 0.0, 0.0, 0.569716942527304],
        ],
        [
            [0.26279511942517836, 0.3886957636510672, 0.0, 0.3485091169237545, 0.0],
            [0.0, 0.0, 0.6715437744009024, 0.0, 0.32845622559909765],
            [0.0, 0.0, 0.3060844852388499, 0.4050797631022641, 0.288835751658886],
        ],
    ]
)
R = np.array(
    [
        [0.011175479231657959, 0.02548858793739195, 0.3633598642568272],
        [0.13256655398177242, 0.15892326723119643, 0.9110486737458242],
        [0.8775860195051012, 0.4948868143667925, 0.1659820472061152],
        [0.2817776453649605, 0.7207210921899806, 0.8426795081750199],
        [0.319571089457397, 0.8348554654378737, 0.24867267121071457],
    ]
)


def test_multichain_lp_solves_the_model_its_presolve_misjudges():
    mdp = FiniteMDP(P, R, gamma=None)
    res = average_linear_program(mdp, multichain=True)
    ref = average_policy_iteration(mdp, multichain=True)
    assert res.converged
    np.testing.assert_array_equal(res.policy, ref.policy)
    np.testing.assert_allclose(res.gain, ref.gain, rtol=16 * 2.0**-53, atol=0)
    assert float(res.bound) <= 64 * 2.0**-53
