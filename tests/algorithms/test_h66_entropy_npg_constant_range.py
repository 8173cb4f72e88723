"""Cen et al.'s ``C_1`` stays finite where ``log pi*_tau`` leaves the float range.

``C_1 = ||Q*_tau - Q_tau^(0)|| + 2 tau (1 - eta tau/(1 - gamma)) ||log pi*_tau - log pi^(0)||`` (Cen et al. 2022,
Thm 1). One state, two actions, ``r = (0, c)``, uniform ``pi^(0)``: ``Q*_tau = r + gamma V*_tau`` with
``V*_tau = tau log(sum_a exp(r_a/tau))/(1 - gamma)``, ``log pi*_tau = log softmax(r/tau)`` and
``V_tau^(0) = (mean(r) + tau log 2)/(1 - gamma)``; evaluated in mpmath at 50 digits. With ``c = 1e300`` and
``tau = 1e-20`` the log-policy is ``-1e320`` (beyond float64) while ``tau`` times it is ``1e300``: the old
code returned ``C_1 = inf``.
"""

import mpmath as mp
import numpy as np
import pytest

from rltheory.bounds.policy_constants import entropy_npg_constant
from rltheory.mdp import FiniteMDP


def _exact_c1(c, tau, gamma, eta):
    mp.mp.dps = 50
    c, tau, g, eta = (mp.mpf(x) for x in (c, tau, gamma, eta))
    r = [mp.mpf(0), c]
    m = max(r)
    lse = m + tau * mp.log(sum(mp.exp((x - m) / tau) for x in r))  # tau log sum exp(r/tau)
    v_star = lse / (1 - g)
    v0 = (sum(r) / 2 + tau * mp.log(2)) / (1 - g)
    q_err = g * abs(v_star - v0)  # Q*_tau - Q^(0) = gamma (V*_tau - V^(0)) on both actions
    tau_log_err = max(
        abs((x - lse) - tau * mp.log(mp.mpf(1) / 2)) for x in r
    )  # tau |log pi* - log pi0|
    return q_err + 2 * (1 - eta * tau / (1 - g)) * tau_log_err


@pytest.mark.parametrize(("c", "tau"), [(1e300, 1e-20), (1.0, 0.1), (1.0, 1e-300)])
def test_c1_against_the_one_state_closed_form(c, tau):
    gamma = 0.5
    eta = 0.25 / tau  # half of Theorem 1's largest step (1 - gamma)/tau
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, c]]), gamma=gamma)
    got = float(entropy_npg_constant(mdp, eta=eta, tau=tau))
    exact = _exact_c1(c, tau, gamma, eta)
    # the reference Q*_tau is certified to about 1e-12 relative to the values (soft_reference's target)
    assert abs(mp.mpf(got) - exact) <= 1e-11 * exact
