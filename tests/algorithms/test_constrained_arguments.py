"""Arguments of the constrained drivers refused by name (complex, text, wrong shape), and the
step function's own policy errors not dressed as range errors.

Regressions: two_stage_constrained_ac(weights=[1+1j]) raised numpy's "float() argument must be ... not
'complex'", weights=["a"] "could not convert string to float", and weights=[[1.0]] (shape (1, 1)) was
accepted through a reshape; theta0 complex lost its imaginary part with only a ComplexWarning
(lagrangian_policy_gradient, general_utility_primal_dual); npg_pd_step's pi likewise; fosp_residual
raised numpy's unlocated cast errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms import (
    fosp_residual,
    general_utility_primal_dual,
    lagrangian_policy_gradient,
    npg_pd_step,
    two_stage_constrained_ac,
)
from rltheory.mdp import ConstrainedMDP, FiniteMDP, linear_utility


def _cmdp():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=(3, 2))
    return ConstrainedMDP(
        FiniteMDP(P, rng.random((3, 2)), 0.9), rng.random((1, 3, 2)), np.array([8.0])
    )


@pytest.mark.parametrize(
    "weights, err, msg",
    [
        ([1 + 1j], TypeError, r"^weights must hold real numbers; got a complex array"),
        (["a"], TypeError, r"^weights must hold real numbers; got a string array"),
        (
            [[1.0]],
            ValueError,
            r"^weights must be 1 finite non-negative numbers .*; got shape \(1, 1\)",
        ),
        ([-1.0], ValueError, r"^weights must be 1 finite .*; weights\[0\] = -1\.0"),
        ([True], ValueError, r"^weights must be 1 finite .*; got booleans"),
    ],
)
def test_two_stage_weights_are_refused_by_name(weights, err, msg):
    with pytest.raises(err, match=msg):
        two_stage_constrained_ac(_cmdp(), weights=weights)


@pytest.mark.parametrize(
    "theta0, err, msg",
    [
        (np.zeros((3, 2)) + 1j, TypeError, r"^theta0 must hold real numbers; got a complex array"),
        ([["a", "b"]] * 3, TypeError, r"^theta0 must hold real numbers; got a string array"),
        (
            np.zeros((2, 2)),
            ValueError,
            r"^theta0 must have shape \(S, A\) = \(3, 2\); got \(2, 2\)",
        ),
    ],
)
@pytest.mark.parametrize("driver", ["lagrangian_policy_gradient", "general_utility_primal_dual"])
def test_theta0_is_refused_by_name(driver, theta0, err, msg):
    cmdp = _cmdp()
    call = {
        "lagrangian_policy_gradient": lambda: lagrangian_policy_gradient(
            cmdp,
            iterations=1,
            eta_theta=0.1,
            eta_lambda=0.1,
            Lambda=1.0,
            theta0=theta0,
            reference=1.0,
        ),
        "general_utility_primal_dual": lambda: general_utility_primal_dual(
            cmdp.mdp,
            linear_utility(cmdp.mdp.R),
            iterations=1,
            eta_theta=0.1,
            eta_mu=0.1,
            Lambda=1.0,
            theta0=theta0,
            reference=1.0,
        ),
    }[driver]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the old code's ComplexWarning is an error here too)
        with pytest.raises(err, match=msg):
            call()


def test_npg_pd_step_policy_errors_are_its_own():
    cmdp = _cmdp()
    kw = dict(eta1=1.0, eta2=1.0, Lambda=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match=r"^pi must hold real numbers; got a complex array"):
            npg_pd_step(cmdp, np.full((3, 2), 0.5) + 0j, np.zeros(1), **kw)
    # a row that is not a distribution: the policy check's message, without the range-error note
    with pytest.raises(ValueError, match=r"^each pi\[s, :\] must sum to 1.*sums to 1\.4$"):
        npg_pd_step(cmdp, np.full((3, 2), 0.7), np.zeros(1), **kw)
    # a deterministic policy is one-hot encoded: the same step as its stochastic form
    a, b = (
        npg_pd_step(cmdp, np.array([0, 1, 0]), np.zeros(1), **kw),
        npg_pd_step(cmdp, np.eye(2)[[0, 1, 0]], np.zeros(1), **kw),
    )
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize(
    "field, args",
    [
        ("grad_theta", (["a"], [1.0], [0.0])),
        ("grad_theta", ([1j], [1.0], [0.0])),
        ("mu", ([0.0], [1 + 0j], [0.0])),
        ("G_minus_b", ([0.0], [1.0], ["x"])),
    ],
)
def test_fosp_residual_arguments_are_refused_by_name(field, args):
    with pytest.raises(TypeError, match=rf"^{field} must hold real numbers"):
        fosp_residual(*args, eta_mu=1.0, Lambda=1.0)


@pytest.mark.parametrize(
    "which, msg",
    [
        ("objective", r"^the objective must be concave or affine to maximise; 'kl' is convex"),
        (
            "constraint",
            r"^constraints\[0\] \('entropy'\) must be convex or affine for G <= b; it is concave",
        ),
    ],
)
def test_general_utility_pd_checks_curvature_even_with_a_reference(which, msg):
    # with reference given, solve_general_utility (which checks curvature) never ran: a convex objective
    # (KL(d || d_E)) or a concave constraint (entropy >= ... written as G <= b) was run as if the
    # method's guarantee (concave F, convex G_i; Ying et al. 2023) applied
    from rltheory.mdp import entropy_utility, kl_divergence

    mdp = _cmdp().mdp
    lin = linear_utility(mdp.R)
    kl = kl_divergence(np.full((3, 2), 1 / 6))
    objective, constraints = (
        (kl, []) if which == "objective" else (lin, [(entropy_utility(3, 2), 1.0)])
    )
    with pytest.raises(ValueError, match=msg):
        general_utility_primal_dual(
            mdp,
            objective,
            constraints,
            iterations=1,
            eta_theta=0.1,
            eta_mu=0.1,
            Lambda=1.0,
            reference=0.0,
        )
