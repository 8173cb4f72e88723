"""Complex or text policies and Q tables are refused by the argument's own name.

``as_float`` names the field it is given; the policy and action-table readers did not pass
theirs, so ``as_stochastic_policy(m, pi, field="behaviour")`` with a complex ``pi`` said
"input must hold real numbers" and the caller could not tell which argument was wrong.
"""

import numpy as np
import pytest

from rltheory.mdp import zoo
from rltheory.mdp.bellman import as_stochastic_policy, greedy


@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        (np.array([[1 + 0j, 0.0], [0.5, 0.5]]), "complex"),
        (np.array([["1", "0"], ["0.5", "0.5"]]), "string"),
    ],
)
def test_policy_errors_name_the_field(bad, kind):
    m = zoo.two_state()
    with pytest.raises(TypeError, match=rf"^behaviour must hold real numbers; got a {kind} array"):
        as_stochastic_policy(m, bad, field="behaviour")
    with pytest.raises(TypeError, match=rf"^pi must hold real numbers; got a {kind} array"):
        as_stochastic_policy(m, bad)


def test_q_table_errors_name_the_field():
    with pytest.raises(TypeError, match=r"^Q must hold real numbers; got a complex array"):
        greedy(np.array([[1 + 0j, 0.0], [0.0, 1.0]]))


def test_real_policies_are_unchanged():
    m = zoo.two_state()
    pi = np.array([[0.25, 0.75], [1.0, 0.0]])
    np.testing.assert_array_equal(np.asarray(as_stochastic_policy(m, pi, field="behaviour")), pi)


@pytest.mark.parametrize("tol", [np.float32(1e-6), np.array(1e-6), np.float64(1e-6)])
def test_numpy_tolerances_are_numbers(tol):
    # check_tolerance refused np.float32(1e-6) and np.array(1e-6) ("tol must be a positive finite
    # number; got np.float32(1e-06)") while every check_real argument takes them (helper-40)
    from rltheory.mdp import value_iteration

    m = zoo.two_state()
    a = value_iteration(m, tol=tol)
    b = value_iteration(m, tol=float(tol))
    np.testing.assert_array_equal(np.asarray(a.V), np.asarray(b.V))
    assert a.iterations == b.iterations


@pytest.mark.parametrize(
    "tol",
    [
        True,
        np.bool_(True),
        np.array(True),
        "1e-6",
        0.0,
        -1e-6,
        np.nan,
        np.inf,
        pytest.param(10**400, id="1e400"),
    ],
)
def test_bad_tolerances_are_named(tol):
    from rltheory.mdp import value_iteration

    with pytest.raises(ValueError, match=r"^tol must be a positive finite number; got"):
        value_iteration(zoo.two_state(), tol=tol)


@pytest.mark.parametrize(
    ("rho", "message"),
    [
        (["0.5", "0.5"], r"^rho must hold real numbers; got a string array"),
        ([0.5 + 0j, 0.5], r"^rho must hold real numbers; got a complex array"),
        ([0.5, None], r"^rho must hold real numbers; rho\[1\] = None"),
    ],
)
def test_distribution_lists_are_not_parsed(rho, message):
    # lists were read with np.asarray(x, dtype=np.float64): text parsed as numbers, so
    # compatible_critic(m, pi, psi, rho=["0.5", "0.5"]) ran (reported by helper-46)
    from rltheory._validate import as_distribution

    with pytest.raises(TypeError, match=message):
        as_distribution(rho, "rho", 2, np)


def test_real_distribution_lists_are_read_as_before():
    from rltheory._validate import as_distribution, as_real_array

    np.testing.assert_array_equal(as_distribution([1, 0], "rho", 2, np), [1.0, 0.0])
    assert as_distribution([1, 0], "rho", 2, np).dtype == np.float64
    np.testing.assert_array_equal(as_real_array([[1, 2.5]], "V", (2,), ("s",), np), [[1.0, 2.5]])


def test_object_arrays_of_text_are_not_parsed():
    # as_float cast object arrays with astype: FiniteMDP(P, np.array([['4']], dtype=object), ...)
    # built a model with R = 4 (reported by helper-47)
    from rltheory.mdp import FiniteMDP

    P = np.ones((1, 1, 1))
    with pytest.raises(TypeError, match=r"^R must hold real numbers; R\[0, 0\] = '4'"):
        FiniteMDP(P, np.array([["4"]], dtype=object), gamma=0.5)
    with pytest.raises(TypeError, match=r"^R must hold real numbers; R\[0, 0\] = \(1\+0j\)"):
        FiniteMDP(P, np.array([[1 + 0j]], dtype=object), gamma=0.5)
    m = FiniteMDP(
        P, np.array([[4]], dtype=object), gamma=0.5
    )  # numbers in an object array: as before
    assert np.asarray(m.R).dtype == np.float64 and float(np.asarray(m.R)[0, 0]) == 4.0
