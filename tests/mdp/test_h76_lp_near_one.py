"""The discounted LP near γ = 1: its policy checked by policy improvement, ``converged`` truthful.

HiGHS meets the LP (solved for ``u = (1−γ)V/max|r|``) to absolute tolerances of ``1e-10``, so the
advantages that choose the LP's greedy policy are known only to about ``1e-10/(1−γ)`` of
``max|r|/(1−γ)``. At γ = 1 − 10⁻⁹ the LP returned the policy "action 0 everywhere" on these
models, 5e7–2.3e8 below ``V*`` (``V* ~ 1e9``), with ``converged=True`` (its bound of ~9e8
covered the loss). ``linear_program`` now checks its policy by policy iteration from it (exact
evaluation) and returns the checked policy with that certificate. References: ``V*`` and
``V^π`` in exact rational arithmetic (``rltheory.testing``).
"""

import functools
import warnings
from fractions import Fraction

import numpy as np
import pytest

import rltheory.mdp.discounted as discounted
from rltheory.errors import ConvergenceWarning, SolverError
from rltheory.mdp import FiniteMDP, linear_program, policy_iteration
from rltheory.testing import exact_optimal_values, exact_policy_values

G = 1.0 - 1e-9


def _model(seed, gamma=G):
    """Random 4-state, 2-action model (Dirichlet rows, rewards uniform in [0, 1])."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(4), size=(4, 2))
    R = rng.uniform(0.0, 1.0, size=(4, 2))
    return P, R, FiniteMDP(P, R, gamma=gamma)


def _one_hot(pi):
    out = np.zeros((len(pi), 2))
    out[np.arange(len(pi)), pi] = 1.0
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lp_policy_is_optimal_and_certified_near_gamma_one(seed):
    P, R, mdp = _model(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        lp = linear_program(mdp)
    v_star = exact_optimal_values(P, R, G)
    v_pi = exact_policy_values(P, R, G, _one_hot(np.asarray(lp.policy)))
    # the policy is optimal (exactly: the models have no ties), as policy iteration's is
    assert v_pi == v_star, [float(a - b) for a, b in zip(v_star, v_pi, strict=True)]
    np.testing.assert_array_equal(lp.policy, policy_iteration(mdp).policy)
    # converged=True only with a certificate that holds: ‖V − V*‖∞ ≤ bound (V* − V^π = 0 here)
    bound = Fraction(float(lp.bound))
    assert lp.converged
    assert max(abs(Fraction(float(x)) - y) for x, y in zip(lp.V, v_star, strict=True)) <= bound
    # the bound is policy iteration's round-off certificate, not HiGHS's 1e-10/(1−γ)² scale
    assert float(lp.bound) <= 1e-6 / (1.0 - G)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lp_occupancy_is_the_optimal_one_near_gamma_one(seed):
    # d* = the normalised occupancy of an optimal policy from w (uniform): the flow constraints
    # Σ_a d(s', a) = (1−γ)w(s') + γ Σ P(s'|s, a)d(s, a), d ≥ 0, and strong duality
    # (1−γ)wᵀV* = rᵀd* (Puterman 1994, §6.9). HiGHS's duals belonged to its wrong policy.
    P, R, mdp = _model(seed)
    lp = linear_program(mdp)
    d = np.asarray(lp.occupancy)
    w = np.full(4, 0.25)
    assert np.all(d >= 0.0) and abs(d.sum() - 1.0) <= 1e-12
    flow = d.sum(-1) - (1.0 - G) * w - G * np.einsum("sap,sa->p", P, d)
    assert np.max(np.abs(flow)) <= 1e-12
    v_star = exact_optimal_values(P, R, G)
    lhs = (1 - Fraction(G)) * sum(Fraction(0.25) * v for v in v_star)
    assert abs(float(lhs) - float(np.sum(d * R))) <= 1e-12
    # d(s, a) > 0 only on the policy's actions
    off = np.ones((4, 2), dtype=bool)
    off[np.arange(4), np.asarray(lp.policy)] = False
    assert np.all(d[off] == 0.0)


def test_an_unfinished_check_is_reported(monkeypatch):
    # the policy-improvement check capped at one evaluation cannot finish from the LP's wrong
    # policy: converged=False and a ConvergenceWarning naming linear_program
    monkeypatch.setattr(
        discounted, "policy_iteration", functools.partial(policy_iteration, max_iter=1)
    )
    _, _, mdp = _model(0)
    with pytest.warns(
        ConvergenceWarning, match=r"linear_program: the policy-improvement check of the LP's policy"
    ):
        lp = linear_program(mdp)
    assert not lp.converged and lp.iterations == 1


def test_lp_result_is_unchanged_where_the_lp_was_accurate():
    # γ = 0.9: the LP's policy passes the check in one evaluation; its duals are HiGHS's
    P, R, mdp = _model(5, gamma=0.9)
    lp, pi = linear_program(mdp), policy_iteration(mdp)
    assert lp.converged and lp.iterations == 1
    np.testing.assert_array_equal(lp.policy, pi.policy)
    np.testing.assert_array_equal(lp.V, pi.V)
    assert float(lp.bound) == float(pi.bound)


@pytest.mark.parametrize(("seed", "gamma"), [(3, G), (0, 1.0 - 1e-12), (3, 1.0 - 1e-12)])
def test_lp_solves_where_highs_failed_on_the_scaled_form(seed, gamma):
    # HiGHS ended with status 4 on the LP for u = (1−γ)V/max|r| (rows summing to 1 − γ, right-hand
    # sides of size 1 − γ): SolverError. The same LP in relative values V = k/(1−γ) + h solves, and
    # the checked policy is optimal (exact rational reference) with its certificate
    P, R, mdp = _model(seed, gamma=gamma)
    lp = linear_program(mdp)
    g = float(mdp.gamma)
    v_star = exact_optimal_values(P, R, g)
    assert exact_policy_values(P, R, g, _one_hot(np.asarray(lp.policy))) == v_star
    assert lp.converged
    err = max(abs(Fraction(float(x)) - y) for x, y in zip(lp.V, v_star, strict=True))
    assert err <= Fraction(float(lp.bound))
    d = np.asarray(lp.occupancy)
    assert np.all(d >= 0.0) and abs(d.sum() - 1.0) <= 1e-12


def test_relative_value_form_agrees_with_the_scaled_form(monkeypatch):
    # γ = 0.999, where both forms solve: the u-form made to fail (status 4) on every instance of
    # a batch, the relative-value form gives the same policy and V (policy iteration's check) and
    # the same duals d* to HiGHS's tolerances
    rng = np.random.default_rng(11)
    P = rng.dirichlet(np.ones(5), size=(3, 5, 3))
    R = rng.uniform(0.0, 1.0, size=(3, 5, 3))
    mdp = FiniteMDP(P, R, gamma=0.999)
    ref = linear_program(mdp)
    real = discounted.highs_linprog

    def scaled_form_fails(c, **kwargs):
        res = real(c, **kwargs)
        if c.shape[0] == 5 and c[0] != 1.0:  # the u-form's objective is w (uniform 0.2)
            res.status, res.message = 4, "numerical difficulties (forced by the test)"
        return res

    monkeypatch.setattr(discounted, "highs_linprog", scaled_form_fails)
    rel = linear_program(mdp)
    np.testing.assert_array_equal(rel.policy, ref.policy)
    np.testing.assert_array_equal(rel.V, ref.V)
    np.testing.assert_allclose(rel.occupancy, ref.occupancy, rtol=0, atol=1e-9)
    # and where both fail, the error names both
    monkeypatch.setattr(
        discounted,
        "highs_linprog",
        lambda c, **kw: type("R", (), {"status": 4, "message": "forced"})(),
    )
    with pytest.raises(
        SolverError,
        match=r"HiGHS failed on the LP \(batch index \(0,\)\): forced; on its relative-value form: forced",
    ):
        linear_program(mdp)
