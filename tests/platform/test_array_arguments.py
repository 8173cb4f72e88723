"""Array arguments that used to be accepted silently or crash unrelatedly.

A fuzz of the public callables of ``rltheory.mdp``, ``rltheory.games``, ``rltheory.algorithms``
and the array-taking ``rltheory.bounds`` functions replaced one array argument at a time by a
corrupted copy: one axis too short, an extra trailing axis, transposed, a scalar, empty, a NaN
or inf in the last entry, a negative entry / a row summing to 0.9 / an all-zero row
(distributions and stochastic policies), an out-of-range, negative or fractional index
(deterministic policies), and a Python list or float32 copy (which must be accepted). Each
case below failed before its fix: the call returned (a NaN value, an occupancy or expected
value of a non-distribution, a VI run from a NaN start), raised an error that did not name the
argument (a numpy broadcasting or matmul ``ValueError``, "cannot convert float NaN to integer",
a message naming ``pi`` for ``pi0``/``pi_old``/``behavior``), or rejected a valid list or
float32 input. Now each bad array raises a ``ValueError`` (or its subclass
``InvalidModelError``) naming the argument and, for a bad entry, its index and value.

A second round covers the linear-TD family (a NaN feature matrix or a weighting ``d`` off the
simplex gave a NaN or a silently reweighted fixed point, an all-zero ``d`` a ``LinAlgError``),
compatible features and mixtures of non-simplex policies, ``greedy``/``softmax_policy`` on NaN
or 0-d tables, concentrability coefficients of arrays that are not occupancies (and a
non-finite entry reported as "min entry 0.5"), arguments reported under another name
(``mu``/``nu`` for ``policy``, ``A`` for ``V``, ``pi`` for ``theta0``), and 0-d arrays that
raised ``IndexError``.

A third round covers ``equilibrium_gap`` (a NaN or inf in ``P``, ``R`` or ``policy`` gave a NaN
gap, ``P`` off the simplex and an unchecked ``mu`` were used as given, a 0-d ``P`` raised
``IndexError``), the correlated-equilibrium gaps (a bad ``mu`` entry located by its flat index,
a ``U``/``mu`` shape clash that named only ``mu``, a valid float32 ``mu`` rejected) and
``evaluate_finite_horizon`` (shape and action-index errors that did not name ``pi``).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from _argument_cases import called_names, case_params, check_base_call

import rltheory.algorithms as alg
import rltheory.bounds as bd
import rltheory.games as games
import rltheory.mdp as mdp
from rltheory.mdp import ConstrainedMDP, FiniteHorizonMDP, FiniteMDP
from rltheory.mdp.utility import linear_utility

S, A = 3, 2
_GEN = np.random.default_rng(0)
P3 = _GEN.dirichlet(np.ones(S), size=(S, A))
R3 = _GEN.random((S, A))
PI = np.array([[0.5, 0.5], [0.25, 0.75], [1.0, 0.0]])
PI_POS = PI * 0.9 + 0.05  # full support, rows sum to 1 (not exactly in float32)
DET = np.array([0, 1, 1])
V3 = np.array([1.0, 2.0, 3.0])
MU = np.array([0.2, 0.3, 0.5])
UNIFORM = np.full((S, A), 0.5)
PHI = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # S x k, full column rank
PENNIES = np.array([[1.0, -1.0], [-1.0, 1.0]])
MU_JOINT = np.array([[0.3, 0.3], [0.3, 0.1]])  # in float32 it sums to 1 + 3.7e-8
RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0]])  # 2 x 3, so a transpose is a wrong shape


def _m(gamma: float | None = 0.9) -> FiniteMDP:
    return FiniteMDP(P3, R3, gamma=gamma)


def _zero_sum() -> games.ZeroSumMarkovGame:
    return games.ZeroSumMarkovGame(np.ones((1, 2, 3, 1)), np.array([[[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]]]), 0.5)


def _step():
    return alg.constant_step(0.1)


# name -> (function, base keyword arguments, kind of each fuzzed array: "real", "prob" or ("det", n))
CALLS = {
    "value_iteration": (mdp.value_iteration, lambda: {"mdp": _m(), "V0": V3}),
    "policy_iteration": (mdp.policy_iteration, lambda: {"mdp": _m(), "pi0": DET}),
    "linear_program": (mdp.linear_program, lambda: {"mdp": _m(), "weights": MU}),
    "bellman_certificate": (mdp.bellman_certificate, lambda: {"mdp": _m(), "v": V3}),
    "expected_next": (mdp.expected_next, lambda: {"mdp": _m(), "V": V3}),
    "bellman_operator": (mdp.bellman_operator, lambda: {"mdp": _m(), "V": V3, "pi": PI}),
    "bellman_optimality_operator": (mdp.bellman_optimality_operator, lambda: {"mdp": _m(), "V": V3}),
    "expected_value": (mdp.expected_value, lambda: {"V": V3, "mu": MU}),
    "occupancy_measure": (mdp.occupancy_measure, lambda: {"mdp": _m(), "pi": PI, "mu": MU}),
    "performance_difference": (
        mdp.performance_difference,
        lambda: {"mdp": _m(), "pi_new": PI, "pi_old": DET, "mu": MU},
    ),
    "q_values": (mdp.q_values, lambda: {"mdp": _m(), "V": V3}),
    "state_occupancy": (mdp.state_occupancy, lambda: {"mdp": _m(), "pi": PI, "mu": MU}),
    "relative_value_iteration": (mdp.relative_value_iteration, lambda: {"mdp": _m(None), "v0": V3}),
    "average_policy_iteration": (mdp.average_policy_iteration, lambda: {"mdp": _m(None), "pi0": DET}),
    "average_linear_program": (mdp.average_linear_program, lambda: {"mdp": _m(None), "multichain": True, "weights": MU}),
    "bimatrix_nash_conv": (
        games.bimatrix_nash_conv,
        lambda: {"A": RPS, "B": -RPS, "x": np.array([0.5, 0.5]), "y": np.array([0.2, 0.3, 0.5])},
    ),
    "duality_gap": (
        games.duality_gap,
        lambda: {"A": RPS, "x": np.array([0.5, 0.5]), "y": np.array([0.2, 0.3, 0.5])},
    ),
    "entropy_npg_step": (alg.entropy_npg_step, lambda: {"mdp": _m(), "pi": PI_POS, "eta": 0.1, "tau": 1.0}),
    "entropy_regularized_npg": (
        alg.entropy_regularized_npg,
        lambda: {"mdp": _m(), "eta": 0.1, "tau": 1.0, "iterations": 3, "pi0": UNIFORM},
    ),
    "mdpo_step": (alg.mdpo_step, lambda: {"mdp": _m(), "pi": PI_POS, "eta": 1.0}),
    "natural_policy_gradient": (
        alg.natural_policy_gradient,
        lambda: {"mdp": _m(), "eta": 1.0, "iterations": 3, "pi0": UNIFORM, "V_star": V3},
    ),
    "policy_mirror_descent": (
        alg.policy_mirror_descent,
        lambda: {"mdp": _m(), "step_sizes": alg.geometric_step_sizes(1.0, 1.0), "iterations": 3, "pi0": UNIFORM},
    ),
    "projected_policy_gradient": (
        alg.projected_policy_gradient,
        lambda: {"mdp": _m(), "eta": 0.5, "iterations": 3, "pi0": UNIFORM, "V_star": V3},
    ),
    "regularized_values": (alg.regularized_values, lambda: {"mdp": _m(), "pi": PI_POS, "tau": 1.0}),
    "softmax_policy_gradient": (
        alg.softmax_policy_gradient,
        lambda: {"mdp": _m(), "eta": 1.0, "iterations": 3, "V_star": V3},
    ),
    "compatible_critic": (
        alg.compatible_critic,
        lambda: {
            "mdp": _m(),
            "pi": PI_POS,
            "psi": alg.compatible_features(np.stack([np.eye(2)] * S), PI_POS),
            "rho": MU,
        },
    ),
    "domo_vi": (
        alg.domo_vi,
        lambda: {"mdp": _m(), "behavior": PI, "Q0": R3, "Q_star": R3},
    ),
    "q_learning": (
        alg.q_learning,
        lambda: {"mdp": _m(), "steps": 10, "step_size": _step(), "rng": 0, "behavior": PI, "Q0": R3, "Q_star": R3},
    ),
    "double_q_learning": (
        alg.double_q_learning,
        lambda: {"mdp": _m(), "steps": 10, "step_size": _step(), "rng": 0, "behavior": PI, "Q_star": R3},
    ),
    "synchronous_q_learning": (
        alg.synchronous_q_learning,
        lambda: {"mdp": _m(), "iterations": 3, "step_size": _step(), "rng": 0, "Q0": R3, "Q_star": R3},
    ),
    "va_learning": (
        alg.va_learning,
        lambda: {"mdp": _m(), "steps": 10, "step_size": _step(), "rng": 0, "behavior": PI, "Q_star": R3},
    ),
    "improper_policy_gradient": (
        alg.improper_policy_gradient,
        lambda: {
            "mdp": _m(),
            "controllers": np.stack([PI, UNIFORM]),
            "eta": 1.0,
            "iterations": 3,
            "theta0": np.zeros(2),
            "V_star": V3,
        },
    ),
    "natural_actor_critic": (
        alg.natural_actor_critic,
        lambda: {
            "mdp": _m(),
            "features": np.stack([np.eye(2)] * S),
            "eta": 1.0,
            "iterations": 2,
            "theta0": np.zeros(2),
            "V_star": V3,
        },
    ),
    # Q / logits tables (..., S, A): S and A are free, so only the rank, emptiness and entries are checked
    "greedy": (mdp.greedy, lambda: {"Q": R3}),
    "adversarial_policy": (mdp.adversarial_policy, lambda: {"Q": R3}),
    "softmax_policy": (alg.softmax_policy, lambda: {"theta": R3}),
    # coverage and offline bounds: occupancies sum to 1 (per step h for (H, S, A) arrays)
    "single_policy_concentrability": (
        bd.single_policy_concentrability,
        lambda: {"d_target": np.array([0.5, 0.5, 0.0]), "d_data": np.array([0.25, 0.25, 0.5])},
    ),
    "all_policy_concentrability": (
        bd.all_policy_concentrability,
        lambda: {"model": FiniteHorizonMDP.stationary(P3, R3, H=2), "d_data": np.stack([PI / 3, PI / 3])},
    ),
    "unilateral_concentrability": (
        bd.unilateral_concentrability,
        lambda: {
            "P": np.ones((1, 1, 2, 2, 1)),
            "policies": [np.full((1, 1, 2), 0.5)] * 2,
            "d_data": np.full((1, 1, 2, 2), 0.25),
        },
    ),
    "discounted_concentrability": (
        bd.discounted_concentrability,
        lambda: {"mdp": _m(), "target": DET, "behaviour": PI},
    ),
    "feature_covariance": (
        bd.feature_covariance,
        lambda: {"features": np.eye(2).reshape(1, 2, 2), "d": np.array([[0.25, 0.75]])},
    ),
    "pessimism_suboptimality_bound": (
        bd.pessimism_suboptimality_bound,
        lambda: {"d_star": np.array([[[1.0, 0.0]]]), "bonus": np.array([[[0.1, 5.0]]])},
    ),
    "pevi_bound": (
        bd.pevi_bound,
        lambda: {
            "d_star": np.array([[[1.0, 0.0]]]),
            "features": np.eye(2).reshape(1, 2, 2),
            "Lambda": 4.0 * np.eye(2)[None],
            "beta": 1.0,
        },
    ),
    "elliptical_bonus": (
        bd.elliptical_bonus,
        lambda: {"features": np.eye(2).reshape(1, 2, 2), "Lambda": 4.0 * np.eye(2)[None], "beta": 2.0},
    ),
    "mismatch_coefficient": (bd.mismatch_coefficient, lambda: {"mdp": _m(), "pi_star": DET, "rho": MU, "mu": MU}),
    "kl_to_policy": (
        bd.kl_to_policy,
        lambda: {"mdp": _m(), "pi_star": DET, "pi0": UNIFORM, "weights": np.ones(S)},
    ),
    "span_contraction_coefficient": (bd.span_contraction_coefficient, lambda: {"P": P3[:, 0]}),
    "relative_condition_number": (
        bd.relative_condition_number,
        lambda: {"sigma_target": np.diag([0.5, 0.5]), "sigma_data": np.diag([0.25, 0.75])},
    ),
    # arguments reported under another name before (mu/nu, A, pi) or by a NaN cast
    "best_response": (games.best_response, lambda: {"game": _zero_sum(), "policy": np.array([[0.2, 0.3, 0.5]]), "player": 0}),
    "best_response_p1": (games.best_response, lambda: {"game": _zero_sum(), "policy": np.array([[0.5, 0.5]]), "player": 1}),
    "best_response_det": (games.best_response, lambda: {"game": _zero_sum(), "policy": np.array([2]), "player": 0}),
    "shapley_operator": (games.shapley_operator, lambda: {"game": _zero_sum(), "V": np.array([2.0])}),
    "shapley_value_iteration": (games.shapley_value_iteration, lambda: {"game": _zero_sum(), "V0": np.array([2.0])}),
    "soft_value_iteration": (alg.soft_value_iteration, lambda: {"mdp": _m(), "tau": 1.0, "Q0": R3}),
    "average_reward_gradient": (alg.average_reward_gradient, lambda: {"mdp": _m(None), "theta": R3}),
    "general_utility_primal_dual": (
        alg.general_utility_primal_dual,
        lambda: {
            "mdp": _m(),
            "objective": linear_utility(R3),
            "iterations": 2,
            "eta_theta": 1.0,
            "eta_mu": 1.0,
            "Lambda": 10.0,
            "theta0": np.zeros((S, A)),
        },
    ),
    "lagrangian_policy_gradient": (
        alg.lagrangian_policy_gradient,
        lambda: {
            "cmdp": ConstrainedMDP(_m(), np.stack([R3]), np.array([5.0])),
            "iterations": 2,
            "eta_theta": 1.0,
            "eta_lambda": 1.0,
            "Lambda": 10.0,
            "theta0": np.zeros((S, A)),
        },
    ),
    # 0-d and empty arrays (an IndexError before)
    "behaviour_policy": (mdp.behaviour_policy, lambda: {"target": PI, "alpha": 0.5}),
    "sample_episodes": (
        mdp.sample_episodes,
        lambda: {"fh": FiniteHorizonMDP.stationary(P3, R3, H=2), "behaviour": np.stack([PI, PI]), "K": 2, "rng": 0},
    ),
    "project_simplex_g": (games.project_simplex, lambda: {"v": np.array([0.5, 0.5, 2.0])}),
    "compatible_features": (alg.compatible_features, lambda: {"phi_sa": np.stack([np.eye(2)] * S), "pi": PI}),
    "mixture_policy": (
        alg.mixture_policy,
        lambda: {"controllers": np.stack([PI, UNIFORM]), "theta": np.array([0.0, 1.0])},
    ),
    # linear TD: features Phi (S, k) and a weighting d on the simplex
    "expected_td": (
        alg.expected_td,
        lambda: {"mdp": _m(), "pi": PI, "Phi": PHI, "step_size": 0.5, "iterations": 3, "d": MU},
    ),
    "lstd": (alg.lstd, lambda: {"mdp": _m(), "pi": PI, "Phi": PHI, "steps": 10, "rng": 0, "d": MU}),
    "lstd_estimate": (
        alg.lstd_estimate,
        lambda: {"phi": np.eye(2), "rewards": np.array([1.0, 0.0]), "phi_next": np.eye(2)[[1, 0]], "gamma": 0.5},
    ),
    "projected_fixed_point": (alg.projected_fixed_point, lambda: {"mdp": _m(), "pi": PI, "Phi": PHI, "d": MU}),
    "projection": (alg.projection, lambda: {"Phi": PHI, "d": MU, "V": V3}),
    "td_linear": (
        alg.td_linear,
        lambda: {"mdp": _m(), "pi": PI, "Phi": PHI, "steps": 5, "step_size": 0.1, "rng": 0, "d": MU},
    ),
    "weighted_norm": (alg.weighted_norm, lambda: {"x": V3, "d": MU}),
    # exact finite-horizon evaluation of a stochastic (H, S, A) or deterministic (H, S) policy
    "evaluate_finite_horizon": (
        mdp.evaluate_finite_horizon,
        lambda: {"fh": FiniteHorizonMDP.stationary(P3, R3, H=2), "pi": np.stack([PI, PI])},
    ),
    "evaluate_finite_horizon_det": (
        mdp.evaluate_finite_horizon,
        lambda: {"fh": FiniteHorizonMDP.stationary(P3, R3, H=2), "pi": np.stack([DET, DET])},
    ),
    # correlated-equilibrium gaps of a joint distribution mu[a1, a2] in matching pennies
    "ce_gap": (games.ce_gap, lambda: {"U": np.stack([PENNIES, -PENNIES]), "mu": MU_JOINT}),
    "cce_gap": (games.cce_gap, lambda: {"U": np.stack([PENNIES, -PENNIES]), "mu": MU_JOINT}),
    # exact equilibrium gap of a joint policy in a two-player Markov game (H=1, S=2, 2x2 actions)
    "equilibrium_gap": (
        alg.equilibrium_gap,
        lambda: {
            "P": np.full((1, 2, 2, 2, 2), 0.5),
            "R": np.stack([np.eye(2), 1.0 - np.eye(2)])[:, None, None].repeat(2, axis=2),
            "policy": np.full((1, 2, 2, 2), 0.25),
            "mu": np.array([0.25, 0.75]),
        },
    ),
}

# arguments whose entries are action indices (a corrupted entry is one index past the range)
_N_ACTIONS = {"pi": A, "pi0": A, "pi_old": A, "target": A, "pi_star": A, "policy": 3}


def _last(x: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(x.size - 1, x.shape))


def _corrupt(x: np.ndarray, how: str, arg: str) -> tuple[object, tuple[tuple[int, ...], str] | None]:
    """The corrupted value, and (index, value) where the message must locate the bad entry."""
    x = np.asarray(x)
    if how == "short_axis0":
        return x[:-1], None
    if how == "short_lastaxis":
        return x[..., :-1], None
    if how == "extra_axis_trailing":
        return np.stack([x, x], -1), None
    if how == "transposed":
        return np.swapaxes(x, -1, -2).copy(), None
    if how == "scalar":
        return x.reshape(-1)[0].copy(), None
    if how == "empty":
        return np.zeros((0,) + x.shape[1:], dtype=x.dtype), None
    if how in ("nan_last", "inf_last"):
        y = x.astype(float)
        y[_last(x)] = np.nan if how == "nan_last" else np.inf
        return y, (_last(x), "nan" if how == "nan_last" else "inf")
    if how == "negative":  # keep the row sum, make the last entry negative
        y = x.astype(float)
        i = _last(x)
        y[i[:-1] + (0,)] += y[i] + 0.2
        y[i] = -0.2
        return y, (i, "-0.2")
    if how == "rowsum_0.9":
        y = x.astype(float)
        y[(-1,) * (x.ndim - 1) if x.ndim > 1 else slice(None)] *= 0.9
        return y, None
    if how == "zero_row":
        y = x.astype(float)
        y[(-1,) * (x.ndim - 1) if x.ndim > 1 else slice(None)] = 0.0
        return y, None
    if how in ("index_eq_n", "index_neg"):
        y = x.copy()
        v = _N_ACTIONS[arg] if how == "index_eq_n" else -1
        y[_last(x)] = v
        return y, (_last(x), str(v))
    if how == "index_float":
        return np.full(x.shape, 0.5), None
    if how == "list":
        return x.tolist(), None
    if how == "float32":
        return x.astype(np.float32), None
    raise AssertionError(how)


CASES = [
    ("value_iteration", "V0", ['nan_last', 'inf_last']),
    ("policy_iteration", "pi0", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'index_eq_n', 'index_neg', 'index_float']),
    ("linear_program", "weights", ['short_axis0', 'extra_axis_trailing', 'empty', 'nan_last', 'inf_last', 'negative', 'float32']),
    ("bellman_certificate", "v", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("expected_next", "V", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("bellman_operator", "V", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("bellman_optimality_operator", "V", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("expected_value", "V", ['scalar', 'nan_last', 'inf_last']),
    ("expected_value", "mu", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("occupancy_measure", "mu", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("performance_difference", "pi_new", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("performance_difference", "pi_old", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'index_eq_n', 'index_neg', 'index_float']),
    ("performance_difference", "mu", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("q_values", "V", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("state_occupancy", "mu", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("relative_value_iteration", "v0", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("average_policy_iteration", "pi0", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'index_eq_n', 'index_neg']),
    ("average_linear_program", "weights", ['short_axis0', 'extra_axis_trailing', 'empty', 'nan_last', 'inf_last', 'negative', 'float32']),
    ("bimatrix_nash_conv", "x", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("bimatrix_nash_conv", "y", ['short_axis0', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("duality_gap", "A", ['scalar', 'empty', 'nan_last', 'inf_last']),
    ("duality_gap", "x", ['short_axis0', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row', 'list']),
    ("duality_gap", "y", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row', 'list']),
    ("entropy_npg_step", "pi", ['float32']),
    ("entropy_regularized_npg", "pi0", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("mdpo_step", "pi", ['float32']),
    ("natural_policy_gradient", "pi0", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("natural_policy_gradient", "V_star", ['nan_last', 'inf_last']),
    ("policy_mirror_descent", "pi0", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("projected_policy_gradient", "pi0", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("projected_policy_gradient", "V_star", ['nan_last', 'inf_last']),
    ("regularized_values", "pi", ['float32']),
    ("softmax_policy_gradient", "V_star", ['nan_last', 'inf_last']),
    ("compatible_critic", "pi", ['float32']),
    ("domo_vi", "behavior", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("domo_vi", "Q0", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("domo_vi", "Q_star", ['nan_last', 'inf_last']),
    ("q_learning", "behavior", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("q_learning", "Q0", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("q_learning", "Q_star", ['nan_last', 'inf_last']),
    ("double_q_learning", "behavior", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("double_q_learning", "Q_star", ['nan_last', 'inf_last']),
    ("synchronous_q_learning", "Q0", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("synchronous_q_learning", "Q_star", ['nan_last', 'inf_last']),
    ("va_learning", "behavior", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("va_learning", "Q_star", ['nan_last', 'inf_last']),
    ("improper_policy_gradient", "V_star", ['nan_last', 'inf_last']),
    ("natural_actor_critic", "V_star", ['nan_last', 'inf_last']),
    ("expected_td", "Phi", ['nan_last', 'inf_last']),
    ("expected_td", "d", ['nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("lstd", "Phi", ['nan_last', 'inf_last']),
    ("lstd", "d", ['nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("lstd_estimate", "phi", ['nan_last', 'inf_last']),
    ("lstd_estimate", "rewards", ['nan_last', 'inf_last']),
    ("lstd_estimate", "phi_next", ['nan_last', 'inf_last']),
    ("projected_fixed_point", "Phi", ['nan_last', 'inf_last']),
    ("projected_fixed_point", "d", ['nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("projection", "Phi", ['short_axis0', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'list']),
    ("projection", "d", ['scalar', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row', 'list']),
    ("projection", "V", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'list']),
    ("td_linear", "Phi", ['nan_last', 'inf_last']),
    ("td_linear", "d", ['nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("weighted_norm", "x", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("weighted_norm", "d", ['scalar', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("compatible_critic", "psi", ['nan_last', 'inf_last']),
    ("compatible_critic", "rho", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("compatible_features", "phi_sa", ['nan_last', 'inf_last']),
    ("compatible_features", "pi", ['nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("improper_policy_gradient", "controllers", ['empty']),
    ("improper_policy_gradient", "theta0", ['nan_last', 'inf_last']),
    ("mixture_policy", "controllers", ['short_lastaxis', 'transposed', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("mixture_policy", "theta", ['nan_last', 'inf_last']),
    ("natural_actor_critic", "features", ['nan_last', 'inf_last']),
    ("natural_actor_critic", "theta0", ['nan_last', 'inf_last']),
    ("greedy", "Q", ['scalar', 'empty', 'nan_last', 'inf_last']),
    ("adversarial_policy", "Q", ['scalar', 'empty', 'nan_last', 'inf_last']),
    ("softmax_policy", "theta", ['scalar', 'empty', 'nan_last', 'inf_last']),
    ("all_policy_concentrability", "d_data", ['inf_last', 'rowsum_0.9', 'zero_row']),
    ("discounted_concentrability", "target", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'index_eq_n', 'index_neg', 'index_float']),
    ("discounted_concentrability", "behaviour", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("feature_covariance", "features", ['nan_last', 'inf_last']),
    ("feature_covariance", "d", ['nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("single_policy_concentrability", "d_target", ['inf_last', 'rowsum_0.9', 'zero_row']),
    ("single_policy_concentrability", "d_data", ['inf_last', 'rowsum_0.9', 'zero_row']),
    ("unilateral_concentrability", "P", ['extra_axis_trailing', 'transposed', 'scalar', 'empty']),
    ("unilateral_concentrability", "d_data", ['inf_last']),
    ("pessimism_suboptimality_bound", "d_star", ['rowsum_0.9', 'zero_row']),
    ("pevi_bound", "d_star", ['rowsum_0.9', 'zero_row']),
    ("pevi_bound", "features", ['scalar', 'empty', 'nan_last', 'inf_last']),
    ("pevi_bound", "Lambda", ['empty', 'nan_last', 'inf_last']),
    ("elliptical_bonus", "features", ['scalar', 'empty', 'nan_last', 'inf_last']),
    ("elliptical_bonus", "Lambda", ['empty', 'nan_last', 'inf_last']),
    ("mismatch_coefficient", "pi_star", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'index_eq_n', 'index_neg', 'index_float']),
    ("mismatch_coefficient", "rho", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("mismatch_coefficient", "mu", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("kl_to_policy", "pi_star", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'index_eq_n', 'index_neg', 'index_float']),
    ("kl_to_policy", "pi0", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("kl_to_policy", "weights", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last']),
    ("span_contraction_coefficient", "P", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("relative_condition_number", "sigma_target", ['nan_last', 'inf_last']),
    ("relative_condition_number", "sigma_data", ['nan_last', 'inf_last']),
    ("best_response", "policy", ['nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("best_response_p1", "policy", ['nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("best_response_det", "policy", ['index_eq_n', 'index_neg']),
    ("shapley_operator", "V", ['nan_last', 'inf_last']),
    ("shapley_value_iteration", "V0", ['nan_last', 'inf_last']),
    ("soft_value_iteration", "Q0", ['nan_last', 'inf_last']),
    ("average_reward_gradient", "theta", ['nan_last', 'inf_last']),
    ("general_utility_primal_dual", "theta0", ['nan_last', 'inf_last']),
    ("lagrangian_policy_gradient", "theta0", ['nan_last', 'inf_last']),
    ("behaviour_policy", "target", ['scalar', 'empty']),
    ("sample_episodes", "behaviour", ['scalar']),
    ("project_simplex_g", "v", ['scalar', 'empty', 'nan_last', 'inf_last', 'list']),
    ("evaluate_finite_horizon", "pi", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty']),
    ("evaluate_finite_horizon_det", "pi", ['short_axis0', 'short_lastaxis', 'extra_axis_trailing', 'transposed', 'scalar', 'empty', 'index_eq_n', 'index_neg', 'index_float']),
    ("ce_gap", "U", ['short_lastaxis']),
    ("ce_gap", "mu", ['nan_last', 'inf_last', 'negative', 'float32']),
    ("cce_gap", "U", ['short_lastaxis']),
    ("cce_gap", "mu", ['nan_last', 'inf_last', 'negative', 'float32']),
    ("equilibrium_gap", "P", ['short_lastaxis', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
    ("equilibrium_gap", "R", ['nan_last', 'inf_last']),
    ("equilibrium_gap", "policy", ['nan_last', 'inf_last', 'negative']),
    ("equilibrium_gap", "mu", ['short_axis0', 'extra_axis_trailing', 'scalar', 'empty', 'nan_last', 'inf_last', 'negative', 'rowsum_0.9', 'zero_row']),
]

_VALID = ("list", "float32")  # corruptions that are valid input and must be accepted

PARAMS = case_params(CASES, lambda name, arg, how: f"{name}-{arg}-{how}")


@pytest.mark.parametrize("name", called_names(CASES))
def test_base_call_is_valid(name):
    """The call each corrupted array is substituted into runs as is, without a warning, and
    returns a result."""
    check_base_call(CALLS, name)


@pytest.mark.parametrize(("name", "arg", "how"), [p for p in PARAMS if p.values[2] not in _VALID])
def test_bad_array_is_rejected_by_name(name, arg, how):
    fn, kwargs = CALLS[name]
    kw = kwargs()
    kw[arg], where = _corrupt(kw[arg], how, arg)
    if where is None:  # a shape or simplex error: the message names the argument
        pattern = rf"\b{re.escape(arg)}\b"
    else:  # an entry error: the argument, the corrupted index and the value found there
        idx, value = where
        loc = r",? ?".join(rf"(?:[\w']+=)?{i}" for i in idx)
        pattern = rf"\b{re.escape(arg)}\({loc},?\) = {re.escape(value)}"
    with pytest.raises(ValueError, match=pattern):
        fn(**kw)


@pytest.mark.parametrize(("name", "arg", "how"), [p for p in PARAMS if p.values[2] in _VALID])
def test_list_and_float32_arrays_are_accepted(name, arg, how):
    """A list or a float32 copy of a valid array gives the float64 array's answer."""
    fn, kwargs = CALLS[name]
    kw = kwargs()
    ref = fn(**kw)
    kw[arg], _ = _corrupt(kw[arg], how, arg)
    out = fn(**kw)
    np.testing.assert_allclose(_numbers(out), _numbers(ref), rtol=1e-6, atol=1e-6)


def _numbers(out: object) -> np.ndarray:
    """The values a result carries: ``V`` (or ``gain``) of a solution, the arrays of a tuple."""
    for field in ("V", "gain"):
        if hasattr(out, field):
            return np.asarray(getattr(out, field), dtype=float)
    if isinstance(out, tuple):
        return np.concatenate([np.ravel(np.asarray(o, dtype=float)) for o in out])
    return np.asarray(out, dtype=float)
