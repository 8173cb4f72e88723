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
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import rltheory.algorithms as alg
import rltheory.games as games
import rltheory.mdp as mdp
from rltheory.mdp import FiniteMDP

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
RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0]])  # 2 x 3, so a transpose is a wrong shape


def _m(gamma: float | None = 0.9) -> FiniteMDP:
    return FiniteMDP(P3, R3, gamma=gamma)


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
    "average_linear_program": (mdp.average_linear_program, lambda: {"mdp": _m(None), "weights": MU}),
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
        lambda: {"mdp": _m(), "controllers": np.stack([PI, UNIFORM]), "eta": 1.0, "iterations": 3, "V_star": V3},
    ),
    "natural_actor_critic": (
        alg.natural_actor_critic,
        lambda: {"mdp": _m(), "features": np.stack([np.eye(2)] * S), "eta": 1.0, "iterations": 2, "V_star": V3},
    ),
}

# arguments whose entries are action indices (a corrupted entry is one index past the range)
_N_ACTIONS = {"pi0": A, "pi_old": A}


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
]

_VALID = ("list", "float32")  # corruptions that are valid input and must be accepted

PARAMS = [
    pytest.param(name, arg, how, id=f"{name}-{arg}-{how}")
    for name, arg, hows in CASES
    for how in hows
]


@pytest.mark.parametrize("name", sorted({name for name, _, _ in CASES}))
def test_base_call_is_valid(name):
    """The call each corrupted array is substituted into runs as is and returns a result."""
    fn, kwargs = CALLS[name]
    assert fn(**kwargs()) is not None


@pytest.mark.parametrize(("name", "arg", "how"), [p for p in PARAMS if p.values[2] not in _VALID])
def test_bad_array_is_rejected_by_name(name, arg, how):
    fn, kwargs = CALLS[name]
    kw = kwargs()
    kw[arg], where = _corrupt(kw[arg], how, arg)
    if where is None:  # a shape or simplex error: the message names the argument
        pattern = rf"\b{re.escape(arg)}\b"
    else:  # an entry error: the argument, the corrupted index and the value found there
        idx, value = where
        loc = r",? ?".join(rf"(?:\w+=)?{i}" for i in idx)
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
