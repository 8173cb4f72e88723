"""The Lagrangian reward of a general-utility solution on pairs that a KL domain forbids.

``lagrangian_reward = ∇F(d*) − Σ_i λ_i ∇G_i(d*)`` is documented as a reward for which ``d*`` is an
optimal occupancy of the ordinary MDP. Where a KL target has a zero the pair is outside the feasible
set (``KL = +inf`` once ``d`` puts mass there) and its reward is ``−inf``; the remaining pairs are
checked against an independent LP (scipy's HiGHS) over the flow polytope with those pairs at 0.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import linprog

from rltheory.mdp import FiniteMDP
from rltheory.mdp._occupancy_lp import occupancy_constraints
from rltheory.mdp.utility import (
    entropy_utility,
    kl_divergence,
    linear_utility,
    neg_kl_utility,
    solve_general_utility,
)


def _model():
    # two states, action a moves to state a; mu uniform, gamma 1/2
    P = np.zeros((2, 2, 2))
    P[:, 0, 0] = 1.0
    P[:, 1, 1] = 1.0
    return FiniteMDP(P, np.array([[1.0, 0.0], [0.5, 0.2]]), gamma=0.5, mu=np.array([0.5, 0.5]))


DE = np.array([[0.5, 0.0], [0.3, 0.2]])  # forbids pair (0, 1)
DE_POS = np.array([[0.4, 0.1], [0.3, 0.2]])


def _cases(mdp):
    return {
        # inactive constraint, multiplier exactly 0: 0·inf was nan at (0, 1)
        "entropy, inactive KL": (entropy_utility(2, 2), [(kl_divergence(DE), 10.0)]),
        # active constraint: ∇H(0) − λ ∇KL = inf − inf was nan at (0, 1)
        "entropy, active KL": (entropy_utility(2, 2), [(kl_divergence(DE), 0.08)]),
        # objective forbids (0, 1), a constraint whose target is positive there: −inf − λ(−inf)
        "neg KL, active KL": (neg_kl_utility(DE), [(kl_divergence(DE_POS), 0.2112)]),
        "linear, active KL": (linear_utility(mdp.R), [(kl_divergence(DE), 0.1)]),
    }


@pytest.mark.parametrize(
    "case", ["entropy, inactive KL", "entropy, active KL", "neg KL, active KL", "linear, active KL"]
)
def test_forbidden_pairs_get_minus_infinity_and_d_star_is_optimal_for_the_rest(case):
    mdp = _model()
    F, cons = _cases(mdp)[case]
    with warnings.catch_warnings():
        # the Newton refinement formed inf − inf off its active set and numpy warned about it
        warnings.simplefilter("error", RuntimeWarning)
        sol = solve_general_utility(mdp, F, cons)
    assert sol.kkt_residual <= 1e-7
    lr = sol.lagrangian_reward
    assert not np.any(np.isnan(lr)), lr
    assert lr[0, 1] == -np.inf
    free = np.isfinite(lr).ravel()
    assert free.sum() == 3
    # the LP over occupancies that put no mass on (0, 1), with the finite rewards: its optimum is
    # attained by d* (first-order optimality); values to the certificate's accuracy
    M, c = occupancy_constraints(mdp, "test")
    r = np.where(free, lr.ravel(), 0.0)
    bounds = [(0, None) if f else (0, 0) for f in free]
    lp = linprog(-r, A_eq=M, b_eq=c, bounds=bounds, method="highs")
    assert lp.status == 0
    d = sol.occupancy.ravel()
    assert d[~free].max() <= 1e-9
    scale = max(1.0, np.abs(r).max())
    assert r @ d == pytest.approx(-lp.fun, abs=1e-6 * scale)
