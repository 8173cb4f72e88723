"""The multichain average-reward LP is never unbounded: ``Σ_{s,a} x(s, a) = 1`` is implied by its rows
(Puterman 1994, §9.3) and the objective ``Σ r x`` depends on ``x`` only.

HiGHS's presolve nevertheless declared it *unbounded* when a transition had probability 1e-7, and
``average_linear_program(multichain=True)`` raised ``SolverError`` on communicating models that the
unichain LP and policy iteration solve. On that verdict the LP is now re-solved with the implied row
stated, and the gains are read from its duals.
"""

import numpy as np
import pytest

from rltheory.errors import SolverError
from rltheory.mdp import FiniteMDP
from rltheory.mdp.average import (
    average_linear_program,
    average_policy_iteration,
    relative_value_iteration,
)
from rltheory.mdp.average_pi import _centered

U = 2.0**-53


def _door_model(p):
    # communicating: state 0 --a0--> 1 (reward 0.8), a1: 0 w.p. 3/4, 1 w.p. 1/4 (reward 0.8);
    # state 1 --a0--> 0 w.p. p, else stays (reward 0.4), a1: uniform (reward 0.7)
    P = np.array([[[0.0, 1.0], [0.75, 0.25]], [[p, 1.0 - p], [0.5, 0.5]]])
    R = np.array([[0.8, 0.8], [0.4, 0.7]])
    return FiniteMDP(P, R, gamma=None)


@pytest.mark.parametrize("p", [1e-7, 3e-7])
def test_multichain_lp_solves_a_model_with_a_rare_transition(p):
    # Exact: the policy (1, 1) has the chain [[3/4, 1/4], [1/2, 1/2]] with stationary law (2/3, 1/3)
    # and gain 0.8·2/3 + 0.7·1/3 = 23/30; (0, 1) has the law (1/3, 2/3) and gain 2.2/3, and a0 at
    # state 1 stays there w.p. 1 − p (gain 0.4 + O(p)), so g* = 23/30 at both states (communicating).
    # Old code: SolverError "The problem is unbounded"
    mdp = _door_model(p)
    res = average_linear_program(mdp, multichain=True)
    g_star = 23.0 / 30.0
    assert res.converged
    np.testing.assert_array_equal(res.policy, [1, 1])
    np.testing.assert_allclose(res.gain, [g_star, g_star], rtol=8 * U, atol=0)
    # the LP's (g, h) solve the optimality equations: its certified residual is at round-off level
    assert float(res.bound) <= 64 * U
    # the duals themselves: g* + h(s) ≥ r(s, a) + (P h)(s, a), with equality at the policy's actions
    x = np.asarray(mdp.R) + _centered(np, np.asarray(mdp.P), np.asarray(res.bias)) - g_star
    assert np.max(x) <= 64 * U
    np.testing.assert_allclose(x[[0, 1], [1, 1]], 0.0, atol=64 * U)
    # consistency with the other solvers on the same model
    pi = average_policy_iteration(mdp, multichain=True)
    np.testing.assert_allclose(pi.gain, res.gain, rtol=16 * U, atol=0)
    uni = average_linear_program(mdp)
    assert float(uni.gain) == pytest.approx(g_star, rel=16 * U, abs=0)
    rvi = relative_value_iteration(mdp, tol=1e-12)
    assert abs(float(rvi.gain) - g_star) <= float(rvi.bound) / 2


def test_multichain_lp_rare_transition_in_a_batch_and_in_float32():
    # the same model in a batch beside a plain one, and its float32 copy (the LP is solved for the
    # row-normalised float64 copy of P; the gain is evaluated in float32)
    P = np.stack([np.asarray(_door_model(1e-7).P), np.asarray(_door_model(0.25).P)])
    R = np.broadcast_to(np.asarray(_door_model(1e-7).R), (2, 2, 2))
    res = average_linear_program(FiniteMDP(P, R, gamma=None), multichain=True)
    assert res.converged
    np.testing.assert_allclose(res.gain, np.full((2, 2), 23.0 / 30.0), rtol=16 * U, atol=0)
    res32 = average_linear_program(
        FiniteMDP(P[0].astype(np.float32), R[0].astype(np.float32), gamma=None), multichain=True
    )
    assert res32.gain.dtype == np.float32
    np.testing.assert_allclose(res32.gain, [23.0 / 30.0] * 2, rtol=2e-6, atol=0)
    assert res32.converged


def test_multichain_lp_failure_after_the_retry_names_both_verdicts(monkeypatch):
    # if the re-solve fails too, the error says that the LP was retried and why
    from rltheory.mdp import average as avg
    from rltheory.mdp import average_lp_residual as avg_lp

    calls = []
    real = avg.highs_linprog

    def fake(c, **kw):
        res = real(c, **kw)
        calls.append(res.status)
        if len(calls) >= 2:  # (both re-solves: with the row stated, then without presolve, fcf24b0)
            res.status, res.message = 2, "The problem is infeasible. (fake)"
        return res

    monkeypatch.setattr(avg, "highs_linprog", fake)
    monkeypatch.setattr(avg_lp, "highs_linprog", fake)  # (the re-solve lives there)
    with pytest.raises(SolverError, match=r"implied row Σx = 1 .*unbounded.*infeasible\. \(fake\)"):
        average_linear_program(_door_model(1e-7), multichain=True)
    assert calls[0] == 3 and len(calls) == 3
