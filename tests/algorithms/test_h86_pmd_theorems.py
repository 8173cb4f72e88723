"""PMD and NPG rates asserted at every iterate, with the problem constants computed by the library.

* Xiao (2022), Thm 10 form of :func:`pmd_linear_bound`: ``ν = d^{π*}_ρ``, ``q = 1 − 1/ϑ_ρ`` with
  ``ϑ_ρ = ‖d^{π*}_ρ/ρ‖∞/(1−γ)`` and steps ``η_{k+1} = η_k/q`` (derived in its docstring);
* Xiao (2022), Thm 8 (:func:`pmd_sublinear_bound`) from a random ``π_0`` with ``D_0`` of
  :func:`kl_to_policy` weighted by ``d^{π*}_ρ`` and rewards of span 3 (``reward_span``);
* NPG with step ``η`` is KL-PMD with step ``η/(1−γ)`` (same iterates), so :func:`npg_bound` and
  :func:`pmd_sublinear_bound` coincide there.
"""

import numpy as np
import pytest

from rltheory.algorithms import natural_policy_gradient, policy_mirror_descent
from rltheory.algorithms.policy_mirror_descent import geometric_step_sizes
from rltheory.bounds.policy_optimization import (
    kl_to_policy,
    mismatch_coefficient,
    npg_bound,
    pmd_linear_bound,
    pmd_sublinear_bound,
)
from rltheory.mdp import FiniteMDP, evaluate_policy, policy_iteration
from rltheory.mdp.bellman import state_occupancy


def _case(seed):
    rng = np.random.default_rng(seed)
    S, A, g = 2 + seed % 3, 2 + seed % 2, [0.5, 0.8, 0.9][seed % 3]
    m = FiniteMDP(
        rng.dirichlet(0.5 * np.ones(S), size=(S, A)), rng.uniform(-1.0, 2.0, size=(S, A)), gamma=g
    )
    rho = rng.dirichlet(np.ones(S))
    pi0 = rng.dirichlet(np.ones(A), size=S)
    sol = policy_iteration(m)
    pst = np.asarray(sol.policy)
    d = np.asarray(state_occupancy(m, np.eye(A)[pst], rho))
    return m, rho, pi0, pst, np.asarray(sol.V), d


def _slack(m, res):
    # the traced suboptimality is computed: allow its certified round-off (bound - computed)
    return np.asarray(res.trace["suboptimality_bound"]) - np.asarray(res.trace["suboptimality"])


@pytest.mark.parametrize("seed", range(6))
def test_pmd_linear_rate_in_xiaos_form_holds_at_every_iterate(seed):
    m, rho, pi0, pst, V_star, d = _case(seed)
    g = float(m.gamma)
    theta = float(mismatch_coefficient(m, pst, rho=rho)) / (1.0 - g)
    q = 1.0 - 1.0 / theta
    eta0 = 0.3
    res = policy_mirror_descent(
        m, step_sizes=geometric_step_sizes(eta0, 1.0 / q), iterations=40, rho=d, pi0=pi0
    )
    sub = np.asarray(res.trace["suboptimality"])
    gap0 = float(d @ (V_star - np.asarray(evaluate_policy(m, pi0))))
    bound = pmd_linear_bound(
        np.arange(41), rate=q, eta0=eta0, gap0=gap0, kl0=kl_to_policy(m, pst, pi0, d)
    )
    assert np.all(sub - _slack(m, res) <= bound), np.max(sub / bound)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("eta", [0.2, 5.0])
def test_pmd_and_npg_sublinear_rates_hold_at_every_iterate_from_a_random_start(seed, eta):
    m, rho, pi0, pst, _, d = _case(seed)
    g = float(m.gamma)
    span = float(np.ptp(np.asarray(m.R)))
    kl0 = kl_to_policy(m, pst, pi0, d)
    k = np.arange(1, 51)
    pmd = policy_mirror_descent(m, step_sizes=eta, iterations=50, rho=rho, pi0=pi0)
    sub = np.asarray(pmd.trace["suboptimality"])
    b_pmd = pmd_sublinear_bound(k, eta=eta, gamma=g, kl0=kl0, reward_span=span)
    assert np.all(sub[1:] - _slack(m, pmd)[1:] <= b_pmd)
    # NPG with step eta (1 - gamma) takes the same steps exp(eta A) and has the same bound
    npg = natural_policy_gradient(m, eta=eta * (1.0 - g), iterations=50, rho=rho, pi0=pi0)
    b_npg = npg_bound(k, eta=eta * (1.0 - g), gamma=g, kl0=kl0, reward_span=span)
    np.testing.assert_allclose(b_npg, b_pmd, rtol=1e-14)
    np.testing.assert_allclose(
        np.asarray(npg.trace["suboptimality"]), sub, rtol=0, atol=1e-9 * span / (1.0 - g)
    )
