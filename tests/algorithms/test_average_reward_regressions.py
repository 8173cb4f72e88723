"""Regression tests for the average-reward actor-critics (rltheory.algorithms.average_reward)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rltheory.algorithms.average_reward import (
    SmoothActionMDP,
    StepSchedule,
    average_reward_actor_critic,
    average_reward_gradient,
    differential_td,
    dpg_gradient,
    mac_expected_terms,
    mlmc_combine,
    mlmc_expectation,
    multilevel_actor_critic,
    off_policy_dpg,
)
from rltheory.bounds.average_reward import mac_rate, markov_average_bias
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP
from rltheory.mdp.average import average_policy_iteration


def _stay_or_switch() -> FiniteMDP:
    """Two states; action 0 stays, action 1 switches; reward 1 for staying in state 1.

    Communicating, and every softmax policy is irreducible, but the deterministic policy
    "always stay" has two recurrent classes {0}, {1}. g* = 1 (stay in state 1 forever).
    """
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = P[0, 1, 1] = P[1, 1, 0] = 1.0
    return FiniteMDP(P, np.array([[0.0, 0.0], [1.0, 0.0]]), None)


def test_actor_critics_compute_g_star_of_a_communicating_model() -> None:
    """Without optimal_gain, unichain policy iteration raised InvalidModelError ('the model is
    multichain') on this communicating model; g* = 1 is now found (= multichain PI)."""
    mdp = _stay_or_switch()
    g_pi = np.asarray(average_policy_iteration(mdp, multichain=True).gain)
    np.testing.assert_allclose(g_pi, [1.0, 1.0], atol=1e-12)
    ac = average_reward_actor_critic(mdp, steps=200, rng=0, record_every=50)
    mac = multilevel_actor_critic(mdp, iterations=40, T_max=8, rng=0, record_every=10)
    for res in (ac, mac):
        assert res.optimal_gain == pytest.approx(1.0, abs=1e-12)
        # g* − g^{π_t} ≥ 0 for every policy (up to the solvers' round-off)
        assert np.all(np.asarray(res.trace["gain_gap"]) >= -1e-12)


def test_actor_critics_refuse_a_state_dependent_optimal_gain() -> None:
    """State 0: stay (reward 1) or leave for the absorbing state 1 (reward 0): g* = (1, 0) depends
    on the state, so there is no single g* to measure the gap against; optimal_gain must be given."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = P[1, 0, 1] = P[1, 1, 1] = 1.0
    mdp = FiniteMDP(P, np.array([[1.0, 0.0], [0.0, 0.0]]), None)
    with pytest.raises(
        ValueError,
        match=r"optimal gain depends on the state \(g\*\(s=1\) = 0\.0, g\*\(s=0\) = 1\.0\).*pass optimal_gain",
    ):
        average_reward_actor_critic(mdp, steps=10, rng=0)
    with pytest.raises(ValueError, match=r"optimal gain depends on the state"):
        multilevel_actor_critic(mdp, iterations=3, T_max=4, rng=0)
    res = average_reward_actor_critic(mdp, steps=10, rng=0, optimal_gain=0.0)
    assert res.optimal_gain == 0.0


def _bad_from(t0: int, value: object):
    """A step-size callable that returns 0.1 before ``t0`` and ``value`` from then on."""
    return lambda t: 0.1 if t < t0 else value


@pytest.mark.parametrize(
    ("value", "err", "msg"),
    [
        (-0.1, ValueError, r"must be a finite step size > 0; got -0\.1"),
        (0.0, ValueError, r"must be a finite step size > 0; got 0\.0"),
        (float("nan"), ValueError, r"must be a finite step size > 0; got nan"),
        (np.float64("inf"), ValueError, r"must be a finite step size > 0; got np\.float64\(inf\)"),
        (True, TypeError, r"must return a number \(the step size\); got True"),
        (None, TypeError, r"must return a number \(the step size\); got None"),
    ],
)
def test_step_size_callables_are_checked_where_they_are_used(value, err, msg) -> None:
    """A callable step size other than StepSchedule was used unchecked: a negative or zero step ran
    silently and a NaN one turned the iterates into NaN; each algorithm now names the schedule and t."""
    mdp = _stay_or_switch()
    pi = np.full((2, 2), 0.5)
    bad = _bad_from(3, value)
    with pytest.raises(err, match=r"alpha\(t=3\) " + msg):
        differential_td(mdp, pi, steps=10, rng=0, alpha=bad)
    with pytest.raises(err, match=r"beta\(t=3\) " + msg):
        differential_td(mdp, pi, steps=10, rng=0, beta=bad)
    with pytest.raises(err, match=r"actor_step\(t=3\) " + msg):
        average_reward_actor_critic(mdp, steps=10, rng=0, actor_step=bad, optimal_gain=1.0)
    with pytest.raises(err, match=r"critic_step\(t=3\) " + msg):
        average_reward_actor_critic(mdp, steps=10, rng=0, critic_step=bad, optimal_gain=1.0)
    with pytest.raises(err, match=r"gain_step\(t=3\) " + msg):
        multilevel_actor_critic(mdp, iterations=10, T_max=4, rng=0, gain_step=bad, optimal_gain=1.0)
    with pytest.raises(err, match=r"critic_step\(t=3\) " + msg):
        multilevel_actor_critic(
            mdp, iterations=10, T_max=4, rng=0, critic_step=bad, optimal_gain=1.0
        )
    model = SmoothActionMDP(np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2))
    with pytest.raises(err, match=r"actor_step\(t=3\) " + msg):
        off_policy_dpg(model, steps=10, rng=0, actor_step=bad)


def test_off_policy_dpg_needs_callable_steps() -> None:
    """off_policy_dpg(critic_step=0.05) failed inside the loop ('float' object is not callable)."""
    model = SmoothActionMDP(np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2))
    with pytest.raises(
        TypeError,
        match=r"critic_step must be a StepSchedule \(a callable t -> step size\); got 0\.05",
    ):
        off_policy_dpg(model, steps=10, rng=0, critic_step=0.05)


def test_valid_callable_steps_equal_step_schedules() -> None:
    """A plain callable with the same values as a StepSchedule gives the identical run."""
    mdp = _stay_or_switch()
    a = average_reward_actor_critic(
        mdp, steps=300, rng=4, actor_step=StepSchedule(0.2, t0=10.0, power=0.6), optimal_gain=1.0
    )
    b = average_reward_actor_critic(
        mdp, steps=300, rng=4, actor_step=lambda t: 0.2 / (1.0 + t / 10.0) ** 0.6, optimal_gain=1.0
    )
    np.testing.assert_array_equal(a.theta, b.theta)


def test_arrays_of_strings_or_bools_are_refused() -> None:
    """np.asarray(x, dtype=float) parsed theta0=[["1", "2"], ...] as numbers and ran, and read
    bool logits, samples and weights as 0/1; each array argument now names itself."""
    mdp = _stay_or_switch()
    strings = [["1", "2"], ["0", "0"]]
    bools = np.ones((2, 2), dtype=bool)
    with pytest.raises(
        TypeError, match=r"theta0 must hold real numbers; got an array of dtype str"
    ):
        average_reward_actor_critic(mdp, steps=5, rng=0, theta0=strings, optimal_gain=1.0)
    with pytest.raises(
        TypeError, match=r"theta0 must hold real numbers; got an array of dtype bool"
    ):
        multilevel_actor_critic(mdp, iterations=2, T_max=2, rng=0, theta0=bools, optimal_gain=1.0)
    with pytest.raises(
        TypeError, match=r"theta must hold real numbers; got an array of dtype bool"
    ):
        average_reward_gradient(mdp, bools)
    with pytest.raises(
        TypeError, match=r"theta must hold real numbers; got an array of dtype complex128"
    ):
        mac_expected_terms(mdp, np.zeros((2, 2), dtype=complex), np.zeros(2), 0.0)
    with pytest.raises(TypeError, match=r"omega must hold real numbers; got an array of dtype str"):
        mac_expected_terms(mdp, np.zeros((2, 2)), ["0", "1"], 0.0)
    with pytest.raises(TypeError, match=r"x must hold real numbers; got an array of dtype bool"):
        mlmc_combine(np.array([True, False, True, True]), 2, 8)
    with pytest.raises(TypeError, match=r"fbar must hold real numbers; got an array of dtype str"):
        mlmc_expectation(np.eye(2), [1.0, 0.0], ["1", "2"], 4)
    with pytest.raises(
        TypeError, match=r"features must hold real numbers; got an array of dtype str"
    ):
        differential_td(mdp, np.full((2, 2), 0.5), steps=5, rng=0, features=[["1"], ["0"]])
    with pytest.raises(
        TypeError, match=r"SmoothActionMDP.K must hold real numbers; got an array of dtype bool"
    ):
        SmoothActionMDP(np.zeros((2, 2)), np.eye(2, dtype=bool), np.zeros(2), np.ones(2))
    model = SmoothActionMDP(np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2))
    with pytest.raises(
        TypeError, match=r"theta0 must hold real numbers; got an array of dtype bool"
    ):
        off_policy_dpg(model, steps=5, rng=0, theta0=[True, False])
    with pytest.raises(TypeError, match=r"theta must hold real numbers; got an array of dtype str"):
        dpg_gradient(model, ["0", "1"])


def test_indicator_features_may_be_bools() -> None:
    """Bool (indicator) features are the same features as 0/1 floats."""
    mdp = _stay_or_switch()
    pi = np.full((2, 2), 0.5)
    Phi = np.array([[True, False], [True, True]])
    a = differential_td(mdp, pi, steps=200, rng=3, features=Phi)
    b = differential_td(mdp, pi, steps=200, rng=3, features=Phi.astype(float))
    np.testing.assert_array_equal(a.w, b.w)


def test_mlmc_expectation_needs_a_chain_and_a_start_law() -> None:
    """A P_pi whose rows do not sum to 1, or a nu that is not a distribution, returned numbers that
    are the expectation of no chain (2·I gave 3.75 for T_max = 4); now located InvalidModelErrors."""
    with pytest.raises(
        InvalidModelError, match=r"each P_pi\[s, :\] must sum to 1 .*worst row \(s=1\) sums to 0\.5"
    ):
        mlmc_expectation(np.array([[1.0, 0.0], [0.25, 0.25]]), [1.0, 0.0], np.ones(2), 4)
    with pytest.raises(
        InvalidModelError,
        match=r"P_pi must be non-negative; most negative entry P_pi\(s=0, s'=1\) = -0\.5",
    ):
        mlmc_expectation(np.array([[1.5, -0.5], [0.0, 1.0]]), [1.0, 0.0], np.ones(2), 4)
    with pytest.raises(InvalidModelError, match=r"each nu must sum to 1 .*sums to 5"):
        mlmc_expectation(np.eye(2), [5.0, 0.0], np.ones(2), 4)
    # a bool permutation matrix is a chain: the swap from state 0 alternates 0, 1, 0, 1
    E, Etr = mlmc_expectation(np.array([[False, True], [True, False]]), [1.0, 0.0], np.eye(2), 4)
    np.testing.assert_allclose(Etr, [0.5, 0.5], atol=1e-15)
    np.testing.assert_allclose(E, [0.5, 0.5], atol=1e-15)


@pytest.mark.parametrize("t", [-1, -2.5, float("nan"), True])
def test_step_schedule_needs_a_time_at_least_zero(t) -> None:
    """StepSchedule(0.5, t0=1, power=0.5)(-1) raised ZeroDivisionError, (-2.5) a TypeError from a
    complex power and (nan) returned nan; the schedule is defined for t >= 0 only."""
    with pytest.raises(ValueError, match=r"StepSchedule is defined for times t >= 0; got t = "):
        StepSchedule(0.5, t0=1.0, power=0.5)(t)


def test_step_schedule_reference_values() -> None:
    """α_t = c / (1 + t/t0)^p: 0.5/(1 + 3)^0.5 = 0.25; numpy integer times are times."""
    assert StepSchedule(0.5, t0=1.0, power=0.5)(3) == 0.25
    assert StepSchedule(0.5, t0=1.0, power=0.5)(np.int64(3)) == 0.25
    assert StepSchedule(0.5)(10**6) == 0.5


# ------------------------------------------------------------ rltheory.bounds.average_reward
@pytest.mark.parametrize(
    ("tv", "where"),
    [
        ([True, False], "tv[0] = True (bool)"),
        ([1.0, True], "tv[1] = True (bool)"),  # numpy stores [1.0, True] as floats
        (["1.0", "0.5"], "tv[0] = '1.0' (str)"),
        ([1.0, "0.5"], "tv[1] = '0.5' (str)"),
        (np.array([1.0, 0.5 + 1j]), "got an array of dtype complex128, tv[0] = (1+0j) (complex)"),
    ],
)
def test_markov_average_bias_tv_must_hold_numbers(tv, where) -> None:
    """tv=[True, False] was read as distances 1, 0, tv=["1.0", "0.5"] parsed, and a complex tv lost
    its imaginary part with only a ComplexWarning; each returned a bound. The first entry that is
    not a real number is named."""
    with pytest.raises(TypeError, match=rf"^tv must hold real numbers; {re.escape(where)}$"):
        markov_average_bias([2], tv, 1.0)


@pytest.mark.parametrize(
    ("T", "where"),
    [
        (True, "got True (bool)"),
        (["4"], "T[0] = '4' (str)"),
        (np.array([4 + 0j]), "got an array of dtype complex128, T[0] = (4+0j) (complex)"),
        (4 + 0j, "got (4+0j) (complex)"),
    ],
)
def test_mac_rate_T_must_hold_numbers(T, where) -> None:
    """mac_rate(True) was the rate at T = 1 and mac_rate(["4"]) the rate at T = 4."""
    with pytest.raises(TypeError, match=rf"^T must hold real numbers; {re.escape(where)}$"):
        mac_rate(T)


def test_bound_reference_values_with_numpy_inputs() -> None:
    """(1/N)Σ_(k<N) d(k) for d = (1, 1/2, 1/4): N = 2 → 3/4, N = 3 → 7/12; C√τ log2(T_max)/√T = 1·2·2/2 = 2."""
    np.testing.assert_allclose(
        markov_average_bias(np.array([2, 3]), np.array([1.0, 0.5, 0.25]), 1.0), [0.75, 7 / 12]
    )
    assert float(mac_rate(np.int64(4), tau_mix=4.0, T_max=4)[()]) == 2.0
    assert float(mac_rate(4, tau_mix=4.0, T_max=4)) == 2.0


def test_smooth_action_mdp_takes_a_0d_array_cost() -> None:
    """SmoothActionMDP(..., c=np.array(0.5)) was refused as 'c must be >= 0; got array(0.5)'; a 0-d
    real array is the number (as check_real reads it), and the model equals the one with c = 0.5."""
    args = (np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2))
    a, b = SmoothActionMDP(*args, np.array(0.5)), SmoothActionMDP(*args, 0.5)
    assert a.c == 0.5 and type(a.c) is float
    np.testing.assert_array_equal(dpg_gradient(a, [0.3, -0.2])[0], dpg_gradient(b, [0.3, -0.2])[0])
    for bad in (True, np.array(True), "0.5", -0.5):
        with pytest.raises(InvalidModelError, match=r"SmoothActionMDP\.c must be >= 0; got "):
            SmoothActionMDP(*args, bad)
    with pytest.raises(InvalidModelError, match=r"SmoothActionMDP\.c must be finite; got inf"):
        SmoothActionMDP(*args, float("inf"))
