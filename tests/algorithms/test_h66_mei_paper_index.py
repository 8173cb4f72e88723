"""Mei et al. (2020), Theorem 4, at every iterate in the paper's own indexing.

``V*(rho) - V^{pi_theta_t}(rho) <= 16 S ||d^{pi*}_rho/rho||^2 ||1/rho|| / (c^2 (1 - gamma)^6 t)`` for all
``t >= 1`` with ``theta_1`` the (arbitrary) initialisation, ``eta = (1 - gamma)^3/8``, rewards in
``[0, 1]``. Trace index ``k`` of ``softmax_policy_gradient`` is the paper's ``t = k + 1``
(``softmax_pg_bound``'s docstring), so the bound is checked at ``t = k + 1`` from ``k = 0`` on, with
``c`` the running minimum of ``optimal_action_prob`` up to ``k`` and ``pi*`` the trace's
``a* = greedy(Q*)`` (under ties it can differ from ``policy_iteration``'s policy). A check of the
theorem (passes on the current code): the suite's other test of Thm 4 compares trace index ``k``
with the looser ``t = k``.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.policy_gradient import softmax_policy_gradient
from rltheory.bounds.policy_optimization import mismatch_coefficient, softmax_pg_bound
from rltheory.mdp import FiniteMDP, policy_iteration
from rltheory.mdp.bellman import _q_values, greedy
from rltheory.testing import discounts, finite_mdps


@settings(max_examples=25, deadline=None)
@given(
    finite_mdps(min_actions=2, max_states=4, max_actions=3, gamma=discounts(0.0, 0.8)),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_mei_theorem_4_at_every_iterate_with_t_equal_k_plus_1(mdp, seed, binary):
    rng = np.random.default_rng(seed)
    R = np.asarray(mdp.R)
    R = (R > 0).astype(float) if binary else (R + 1.0) / 2.0  # rewards in [0, 1] (ties when binary)
    mdp = FiniteMDP(np.asarray(mdp.P), R, gamma=mdp.gamma)
    g = mdp.gamma
    rho = rng.dirichlet(np.ones(mdp.S))
    rho = np.maximum(rho, 1e-3)
    rho /= rho.sum()
    theta1 = 2.0 * rng.normal(size=(mdp.S, mdp.A))
    T = 80
    res = softmax_policy_gradient(mdp, eta=(1 - g) ** 3 / 8, iterations=T, rho=rho, theta0=theta1)
    sol = policy_iteration(mdp)
    a_star = greedy(
        _q_values(mdp, sol.V)
    )  # the trace's a* (under ties it can differ from sol.policy)
    c = np.minimum.accumulate(res.trace["optimal_action_prob"])
    k = np.arange(T + 1)
    bound = softmax_pg_bound(
        k + 1,
        gamma=g,
        n_states=mdp.S,
        c=c,
        mismatch=float(mismatch_coefficient(mdp, a_star, rho)),
        inv_rho=1 / rho.min(),
    )
    # 1e-12: round-off of the computed gap (values at most 1/(1 - gamma) = 5, a few hundred ulps)
    assert np.all(res.trace["suboptimality"] <= bound + 1e-12)
