"""Scalar arguments that used to be accepted silently or crash unrelatedly.

A fuzz of the public callables of ``rltheory.mdp``, ``rltheory.games`` and
``rltheory.algorithms`` replaced one scalar argument at a time by NaN, ±inf, -1.0, True,
"x" or 0. Each case below failed before its fix: the call returned (a NaN trace, a wrong
certificate, a silently ignored setting, a negative index read as "the last state") or
raised an error that did not name the argument (IndexError, OverflowError,
ZeroDivisionError, a ufunc TypeError, or a message naming a derived quantity such as
``StepSchedule.c`` or ``radius``). Now each raises ``ValueError`` naming the argument
and the value it got.
"""

from __future__ import annotations

import functools
import math
import re

import networkx as nx
import numpy as np
import pytest
from _argument_cases import called_names, case_params, check_base_call

import rltheory.algorithms as alg
import rltheory.games as games
import rltheory.mdp as mdp
from rltheory.games.zoo import matching_pennies
from rltheory.mdp import (
    ConstrainedMDP,
    EpisodeDataset,
    FiniteHorizonMDP,
    FiniteMDP,
    PreferenceDataset,
)
from rltheory.mdp.offline_data import sample_game_episodes, sample_preferences
from rltheory.mdp.utility import linear_utility

NAN, INF, NINF = math.nan, math.inf, -math.inf


# ---------------------------------------------------------------- small valid models
def _bandit(gamma: float | None = 0.5) -> FiniteMDP:
    return FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=gamma)


def _random(gamma: float | None, seed: int = 0) -> FiniteMDP:
    gen = np.random.default_rng(seed)
    return FiniteMDP(gen.dirichlet(np.ones(3), size=(3, 2)), gen.random((3, 2)), gamma=gamma)


def _cycle() -> FiniteMDP:
    return FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), gamma=0.5)


def _cmdp(gamma: float = 0.0, b: float = 0.25) -> ConstrainedMDP:
    return ConstrainedMDP(_bandit(gamma), np.array([[[0.0, 1.0]]]), np.array([b]))


def _fh() -> FiniteHorizonMDP:
    return FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=2)


_GP = np.ones((1, 1, 2, 2, 1))
_GR = np.stack([np.eye(2), np.eye(2)])[:, None, None]
_CANDIDATES = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]


@functools.cache
def _game_data(K: int = 40, seed: int = 0) -> EpisodeDataset:
    return sample_game_episodes(_GP, _GR, np.full((1, 1, 2, 2), 0.25), K, rng=seed)


@functools.cache
def _preferences() -> PreferenceDataset:
    return sample_preferences(_game_data(20, 0), _game_data(20, 1), _GR, rng=2)


def _bt_preferences() -> PreferenceDataset:
    a = EpisodeDataset(np.zeros((4, 2), int), np.ones((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    b = EpisodeDataset(np.zeros((4, 2), int), np.zeros((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    return PreferenceDataset(a, b, np.array([[1], [1], [1], [0]]))


def _smooth() -> alg.SmoothActionMDP:
    return alg.SmoothActionMDP(np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2))


def _sis() -> dict:
    net = alg.sis_network(nx.path_graph(2))
    return {"net": net, "thetas": [np.zeros(s) for s in net.theta_shapes()], "kappa": 1}


def _safe_problem() -> alg.SafeNetworkedProblem:
    net = alg.sis_network(nx.path_graph(2))
    R, C = np.asarray(net.R_local), np.array([[[0.0, 0.0], [1.0, 1.0]]] * 2)
    return alg.SafeNetworkedProblem(
        net,
        [linear_utility(R[i]) for i in range(2)],
        [linear_utility(C[i]) for i in range(2)],
        np.full(2, 0.3),
    )


# ---------------------------------------------------------------- one valid call per function
def _pi() -> np.ndarray:
    return np.full((1, 2), 0.5)


CALLS = {
    "policy_iteration": (mdp.policy_iteration, lambda: {"mdp": _random(0.8)}),
    "greedy": (mdp.greedy, lambda: {"Q": np.array([[0.0, 1.0], [1.0, 1.0]])}),
    "q_values": (mdp.q_values, lambda: {"mdp": _bandit(), "V": np.array([4.0])}),
    "random_mdp": (mdp.random_mdp, lambda: {"S": 3, "A": 2, "gamma": 0.9, "rng": 0}),
    "gridworld": (mdp.gridworld, lambda: {"size": 2}),
    "chain": (mdp.chain, lambda: {"n": 3}),
    "riverswim": (mdp.riverswim, lambda: {"n": 3}),
    "entropy_utility": (mdp.entropy_utility, lambda: {"S": 2, "A": 2}),
    "best_response": (
        games.best_response,
        lambda: {
            "game": games.ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), matching_pennies()[None], 0.5),
            "policy": np.array([0]),
            "player": 0,
        },
    ),
    "is_degenerate": (games.is_degenerate, lambda: {"A": np.eye(2), "B": np.eye(2)}),
    "lemke_howson": (
        games.lemke_howson,
        lambda: {"A": matching_pennies(), "B": -matching_pennies()},
    ),
    "nash_equilibria": (games.nash_equilibria, lambda: {"A": np.eye(2), "B": np.eye(2)[::-1]}),
    "shapley_value_iteration": (
        games.shapley_value_iteration,
        lambda: {
            "game": games.ZeroSumMarkovGame(
                np.ones((1, 2, 2, 1)), matching_pennies()[None] + 1.0, 0.5
            )
        },
    ),
    "solve_zero_sum": (games.solve_zero_sum, lambda: {"A": matching_pennies()}),
    "hybrid_actor_critic": (
        alg.hybrid_actor_critic,
        lambda: {
            "fh": _fh(),
            "features": np.eye(2).reshape(1, 2, 2),
            "offline": None,
            "iterations": 2,
            "n_online": 5,
            "eta": 1.0,
            "rng": 0,
        },
    ),
    "hybrid_npg": (
        alg.hybrid_npg,
        lambda: {
            "fh": _fh(),
            "features": np.eye(2).reshape(1, 2, 2),
            "offline": None,
            "iterations": 2,
            "n_online": 5,
            "eta": 1.0,
            "rng": 0,
        },
    ),
    "bradley_terry_mle": (alg.bradley_terry_mle, lambda: {"prefs": _bt_preferences()}),
    "interval_gap_bound": (
        alg.interval_gap_bound,
        lambda: {"data": _game_data(), "policy": _CANDIDATES[0]},
    ),
    "marlhf_equilibrium": (
        alg.marlhf_equilibrium,
        lambda: {"prefs": _preferences(), "P": _GP, "candidates": _CANDIDATES, "beta": 1.0},
    ),
    "soft_value_iteration": (alg.soft_value_iteration, lambda: {"mdp": _bandit(), "tau": 1.0}),
    "expected_td": (
        alg.expected_td,
        lambda: {
            "mdp": _cycle(),
            "pi": np.array([0, 0]),
            "Phi": np.eye(2),
            "step_size": 1.0,
            "iterations": 3,
        },
    ),
    "lstd": (
        alg.lstd,
        lambda: {"mdp": _cycle(), "pi": np.array([0, 0]), "Phi": np.eye(2), "steps": 10, "rng": 0},
    ),
    "lstd_estimate": (
        alg.lstd_estimate,
        lambda: {
            "phi": np.eye(2),
            "rewards": np.array([1.0, 0.0]),
            "phi_next": np.eye(2)[[1, 0]],
            "gamma": 0.5,
        },
    ),
    "rbf_features": (
        alg.rbf_features,
        lambda: {"coords": [[0.0], [1.0]], "centers": [[0.0]], "width": 1.0},
    ),
    "td_linear": (
        alg.td_linear,
        lambda: {
            "mdp": _cycle(),
            "pi": np.array([0, 0]),
            "Phi": np.eye(2),
            "steps": 5,
            "step_size": 0.1,
            "rng": 0,
        },
    ),
    "polynomial_step": (alg.polynomial_step, lambda: {"omega": 1.0}),
    "domo_vi": (alg.domo_vi, lambda: {"mdp": _bandit()}),
    "LSTDCritic": (alg.LSTDCritic, dict),
    "SmoothActionMDP": (
        alg.SmoothActionMDP,
        lambda: {"L": np.zeros((2, 2)), "K": np.eye(2), "r0": np.zeros(2), "r1": np.ones(2)},
    ),
    "StepSchedule": (alg.StepSchedule, lambda: {"c": 0.5}),
    "average_reward_actor_critic": (
        alg.average_reward_actor_critic,
        lambda: {
            "mdp": _random(None, 1),
            "steps": 5,
            "rng": 0,
            "record_every": 5,
            "optimal_gain": 0.5,
        },
    ),
    "differential_td": (
        alg.differential_td,
        lambda: {
            "mdp": _random(None, 1),
            "pi": np.full((3, 2), 0.5),
            "steps": 5,
            "rng": 0,
            "record_every": 5,
        },
    ),
    "mac_expected_terms": (
        alg.mac_expected_terms,
        lambda: {
            "mdp": _random(None, 1),
            "theta": np.zeros((3, 2)),
            "omega": np.zeros(3),
            "eta": 0.3,
        },
    ),
    "mac_sample_terms": (
        alg.mac_sample_terms,
        lambda: {
            "Phi": np.eye(3),
            "pi_s": np.array([0.5, 0.5]),
            "s": 0,
            "a": 1,
            "r": 0.5,
            "s2": 2,
            "omega": np.zeros(3),
            "eta": 0.3,
        },
    ),
    "mixing_step_sizes": (alg.mixing_step_sizes, lambda: {"tau_mix": 2.0}),
    "multilevel_actor_critic": (
        alg.multilevel_actor_critic,
        lambda: {
            "mdp": _random(None, 1),
            "iterations": 2,
            "T_max": 2,
            "rng": 0,
            "record_every": 1,
            "optimal_gain": 0.5,
        },
    ),
    "off_policy_dpg": (
        alg.off_policy_dpg,
        lambda: {"model": _smooth(), "steps": 5, "rng": 0, "record_every": 5},
    ),
    "general_utility_primal_dual": (
        alg.general_utility_primal_dual,
        lambda: {
            "mdp": _bandit(),
            "objective": linear_utility(np.array([[0.0, 1.0]])),
            "iterations": 2,
            "eta_theta": 1.0,
            "eta_mu": 1.0,
            "Lambda": 10.0,
            "reference": 2.0,
        },
    ),
    "lagrangian_policy_gradient": (
        alg.lagrangian_policy_gradient,
        lambda: {
            "cmdp": _cmdp(),
            "iterations": 2,
            "eta_theta": 1.0,
            "eta_lambda": 1.0,
            "Lambda": 10.0,
            "reference": 0.25,
        },
    ),
    "npg_primal_dual": (
        alg.npg_primal_dual,
        lambda: {"cmdp": _cmdp(0.5, 1.0), "iterations": 2, "reference": 1.0},
    ),
    "sample_npg_primal_dual": (
        alg.sample_npg_primal_dual,
        lambda: {
            "cmdp": _cmdp(0.5, 1.0),
            "iterations": 2,
            "rollouts": 2,
            "rng": 0,
            "reference": 1.0,
        },
    ),
    "two_stage_constrained_ac": (
        alg.two_stage_constrained_ac,
        lambda: {"cmdp": _cmdp(), "weights": [1.0]},
    ),
    "truncated_policy_gradient": (alg.truncated_policy_gradient, _sis),
    "truncation_error": (alg.truncation_error, _sis),
    "networked_primal_dual": (
        alg.networked_primal_dual,
        lambda: {
            "problem": _safe_problem(),
            "iterations": 2,
            "kappa": 1,
            "eta_theta": 1.0,
            "eta_mu": 1.0,
            "Lambda": 10.0,
        },
    ),
    "sis_network": (alg.sis_network, lambda: {"graph": nx.path_graph(2)}),
}

_NUM = [NAN, INF, NINF, True, "x"]  # not a finite real number
_NONNEG = [NAN, INF, NINF, -1.0, True, "x"]  # not a finite number >= 0
_INDEX = [NAN, INF, NINF, -1.0, True, "x"]  # not an integer index / count

CASES = [
    ("policy_iteration", "tie_tol", _NONNEG),
    ("greedy", "atol", [NAN, INF, True, "x"]),
    ("q_values", "gamma", [NAN, INF, NINF, -1.0, True, "x"]),
    ("random_mdp", "alpha", [INF]),
    ("gridworld", "rewards", [True, "x"]),
    ("gridworld", "step_reward", [True, "x"]),
    ("chain", "small", _NUM),
    ("chain", "large", _NUM),
    ("riverswim", "small", _NUM),
    ("riverswim", "large", _NUM),
    ("entropy_utility", "S", [*_INDEX, 0]),
    ("entropy_utility", "A", [*_INDEX, 0]),
    ("best_response", "player", [True]),
    ("is_degenerate", "tol", _NONNEG),
    ("lemke_howson", "max_pivots", [*_INDEX, 0]),
    ("nash_equilibria", "tol", _NONNEG),
    ("shapley_value_iteration", "tol", [INF, True]),
    ("solve_zero_sum", "tol", _NONNEG),
    ("solve_zero_sum", "max_iter", _INDEX),
    ("hybrid_actor_critic", "tol", [NAN, NINF, -1.0, True, "x"]),
    ("hybrid_npg", "tol", [NAN, NINF, -1.0, True, "x"]),
    ("hybrid_npg", "offline_weight", [INF]),
    ("bradley_terry_mle", "tol", _NONNEG),
    ("interval_gap_bound", "n_candidates", [*_INDEX, 0]),
    ("marlhf_equilibrium", "beta", [INF]),
    ("soft_value_iteration", "tol", [INF, True]),
    ("expected_td", "step_size", [INF, True]),
    ("lstd", "ridge", [INF, True]),
    ("lstd_estimate", "ridge", [INF, True]),
    ("rbf_features", "width", [INF, True]),
    ("td_linear", "step_size", [INF]),
    ("polynomial_step", "omega", [True]),
    ("domo_vi", "tol", [INF, True]),
    ("LSTDCritic", "ridge", [INF, True]),
    ("SmoothActionMDP", "c", [True, "x"]),
    ("StepSchedule", "c", [True]),
    ("StepSchedule", "t0", [True]),
    ("StepSchedule", "power", [True]),
    ("average_reward_actor_critic", "optimal_gain", _NUM),
    ("differential_td", "s0", _INDEX),
    ("mac_expected_terms", "eta", _NUM),
    ("mac_sample_terms", "s", _INDEX),
    ("mac_sample_terms", "a", _INDEX),
    ("mac_sample_terms", "s2", _INDEX),
    ("mac_sample_terms", "r", _NUM),
    ("mac_sample_terms", "eta", _NUM),
    ("mixing_step_sizes", "tau_mix", [INF, True]),
    ("mixing_step_sizes", "critic", [*_NONNEG, 0]),
    ("mixing_step_sizes", "actor", [*_NONNEG, 0]),
    ("multilevel_actor_critic", "actor_scale", [INF, True]),
    ("multilevel_actor_critic", "omega_radius", _NONNEG),
    ("multilevel_actor_critic", "optimal_gain", _NUM),
    ("off_policy_dpg", "noise", [True]),
    ("general_utility_primal_dual", "delta", [True]),
    ("general_utility_primal_dual", "reference", _NUM),
    ("lagrangian_policy_gradient", "delta", _NONNEG),
    ("lagrangian_policy_gradient", "reference", _NUM),
    ("npg_primal_dual", "reference", _NUM),
    ("sample_npg_primal_dual", "reference", _NUM),
    ("two_stage_constrained_ac", "tol", [INF, True]),
    ("truncated_policy_gradient", "kappa", _INDEX),
    ("truncation_error", "kappa", _INDEX),
    ("networked_primal_dual", "kappa", _INDEX),
    ("networked_primal_dual", "delta", [True]),
    ("sis_network", "infect", _NONNEG),
    ("sis_network", "recover", _NONNEG),
    ("sis_network", "treat", _NONNEG),
    ("sis_network", "treat_cost", _NUM),
]

PARAMS = case_params(CASES, lambda name, param, value: f"{name}-{param}={value!r}")


@pytest.mark.parametrize("name", called_names(CASES))
def test_base_call_is_valid(name):
    """The call every bad value is substituted into runs as is, without a warning, and returns a
    result (so a rejection below is due to the substituted value alone)."""
    check_base_call(CALLS, name)


@pytest.mark.parametrize(("name", "param", "value"), PARAMS)
def test_bad_scalar_is_rejected_by_name(name, param, value):
    fn, kwargs = CALLS[name]
    kw = kwargs()
    kw[param] = value
    # the message names the argument, then the value it got (not a derived quantity)
    pattern = rf"\b{re.escape(param)}\b.*got {re.escape(repr(value))}(?![\d.])"
    with pytest.raises(ValueError, match=pattern):
        fn(**kw)


def test_check_real_is_the_one_scalar_reader():
    """``check_real`` (which the bound modules' ``_pos`` now calls) reads 0-d real arrays like
    numbers, turns an int beyond the float range into inf (rejected), and rejects bools/0-d bools."""
    from rltheory._validate import check_real
    from rltheory.bounds._argcheck import _pos

    assert check_real(np.array(0.5), "x", low=0.0) == 0.5
    assert _pos(np.float32(2.0), "c") == 2.0
    with pytest.raises(ValueError, match=r"x must be a finite number; got 1000"):
        check_real(10**400, "x")
    with pytest.raises(ValueError, match=r"c must be a finite number > 0; got array\(True\)"):
        _pos(np.array(True), "c")
    with pytest.raises(ValueError, match=r"c must be a finite number >= 0; got -1"):
        _pos(-1, "c", allow_zero=True)
