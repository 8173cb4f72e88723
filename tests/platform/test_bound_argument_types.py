"""The shared bound-argument readers (``rltheory.bounds._argcheck``) take numbers only.

``_times``, ``_nonneg`` and ``_constant`` read arrays with ``np.asarray(x, dtype=float)``, which
parsed text (``t=["4"]`` was the time 4), read bools as 1/0 (``mac_rate([True, 4])`` was the
rate at T = 1 and 4, because numpy stores ``[True, 4]`` as integers) and dropped imaginary parts
with only a ``ComplexWarning``: every bound function built on them returned a number. Each such
argument is now a ``TypeError`` naming the argument and the first bad entry, in every bound
module that uses the readers; valid inputs give the same floats as before.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from rltheory.bounds import average_reward as ar
from rltheory.bounds import constrained as con
from rltheory.bounds import games as gm
from rltheory.bounds import policy_optimization as po
from rltheory.bounds import td_q_learning as tq

_NPG_PD = {"gamma": 0.5, "eta1": 1.0, "eta2": 0.1, "Lambda": 4.0, "n_actions": 2}
_QL = {
    "alpha": 0.1,
    "gamma": 0.5,
    "initial_error": 1.0,
    "value_span": 1.0,
    "n_pairs": 4,
    "horizon": 10,
    "delta": 0.1,
}

# (bound function, name of the argument read, call with that argument replaced by x)
CALLS = [
    (ar.mac_rate, "T", lambda x: ar.mac_rate(x, tau_mix=4.0, T_max=4)),
    (ar.markov_average_bias, "tv", lambda x: ar.markov_average_bias([1], x, 1.0)),
    (con.npg_pd_bounds, "t", lambda x: con.npg_pd_bounds(x, **_NPG_PD, cost_deviation=1.0)),
    (
        con.npg_pd_bounds,
        "cost_deviation",
        lambda x: con.npg_pd_bounds([1, 2], **_NPG_PD, cost_deviation=x),
    ),
    (
        con.npg_pd_bounds,
        "cost_span",
        lambda x: con.npg_pd_bounds([1, 2], **_NPG_PD, cost_deviation=1.0, cost_span=x),
    ),
    (con.fosp_rate, "T", lambda x: con.fosp_rate(x)),
    (con.truncation_envelope, "kappa", lambda x: con.truncation_envelope(x, phi=0.5)),
    (gm.hedge_regret_bound, "t", lambda x: gm.hedge_regret_bound(x, 2, 0.1, 1.0)),
    (gm.hedge_tuned_regret, "T", lambda x: gm.hedge_tuned_regret(x, 2, 1.0)),
    (gm.regret_matching_gap_bound, "t", lambda x: gm.regret_matching_gap_bound(x, 2, 2, 1.0)),
    (gm.optimistic_gap_bound, "t", lambda x: gm.optimistic_gap_bound(x, 0.5, 0.5, 0.1)),
    (gm.shapley_error_bound, "k", lambda x: gm.shapley_error_bound(x, 0.5, 1.0)),
    (gm.shapley_error_bound, "initial_error", lambda x: gm.shapley_error_bound(1, 0.5, x)),
    (tq.td_fixed_point_bound, "projection_error", lambda x: tq.td_fixed_point_bound(x, gamma=0.5)),
    (
        tq.tvr_fixed_point_bound,
        "projection_error",
        lambda x: tq.tvr_fixed_point_bound(x, gamma=0.5),
    ),
    (tq.q_learning_bound, "t", lambda x: tq.q_learning_bound(x, **_QL)),
    (
        tq.q_learning_bound,
        "value_span",
        lambda x: tq.q_learning_bound([1], **_QL | {"value_span": x}),
    ),
    (po.npg_bound, "T", lambda x: po.npg_bound(x, eta=1.0, gamma=0.5, n_actions=2)),
    (po.npg_bound, "kl0", lambda x: po.npg_bound(4, eta=1.0, gamma=0.5, kl0=x)),
    (
        po.projected_pg_bound,
        "mismatch",
        lambda x: po.projected_pg_bound(4, gamma=0.5, n_states=2, n_actions=2, mismatch=x),
    ),
    (
        po.pmd_linear_bound,
        "gap0",
        lambda x: po.pmd_linear_bound(2, rate=0.5, eta0=1.0, gap0=x, kl0=0.0),
    ),
]
_IDS = [f"{c[0].__name__}-{c[1]}" for c in CALLS]

# (bad value, where the message locates it); every entry but the bad one is a valid 1
BAD = [
    ([True, 1], "{n}[0] = True (bool)"),  # numpy stores [True, 1] as integers
    ([1, False], "{n}[1] = False (bool)"),
    (True, "got True (bool)"),
    (np.bool_(True), "got True (bool)"),
    (["4"], "{n}[0] = '4' (str)"),
    ([1, "4"], "{n}[1] = '4' (str)"),  # numpy stores [1, "4"] as strings
    ("4", "got '4' (str)"),
    ([1, 1 + 0j], "{n}[1] = (1+0j) (complex)"),
    (1 + 2j, "got (1+2j) (complex)"),
    (np.array([1 + 0j, 1]), "got an array of dtype complex128, {n}[0] = (1+0j) (complex)"),
    (np.array([[True], [True]]), "got an array of dtype bool, {n}[0, 0] = True (bool)"),
    ([None, 1], "{n}[0] = None (NoneType)"),
    (None, "got None (NoneType)"),
]


@pytest.mark.parametrize(("fn", "name", "call"), CALLS, ids=_IDS)
@pytest.mark.parametrize(("x", "where"), BAD, ids=[repr(b[0]) for b in BAD])
def test_a_non_number_is_a_located_type_error(fn, name, call, x, where):
    if x is None and fn is po.npg_bound and name == "kl0":
        pytest.skip("kl0=None means 'use n_actions' (documented)")
    with pytest.raises(
        TypeError, match=rf"^{name} must hold real numbers; {re.escape(where.format(n=name))}$"
    ):
        call(x)


@pytest.mark.parametrize(("fn", "name", "call"), CALLS, ids=_IDS)
def test_numbers_of_every_real_type_give_the_float_answer(fn, name, call):
    # consistency: Python ints, numpy integers (signed, unsigned), float32 and 0-d arrays holding
    # the value 1 read exactly as the float 1.0 does (the readers cast with float64 as before)
    def value(x):
        out = call(x)
        return np.asarray(out.gap if fn is con.npg_pd_bounds else out, dtype=float)

    ref = value([1.0])
    for x in (
        1,
        np.int64(1),
        np.uint8(1),
        np.float32(1.0),
        np.array(1.0),
        [1],
        [np.int32(1)],
        [np.float32(1.0)],
        [np.array(1.0)],
        (np.uint64(1),),
    ):
        if fn is ar.markov_average_bias and np.ndim(x) == 0:
            continue  # tv is a 1-D sequence of distances
        got = value(x)
        np.testing.assert_array_equal(got.reshape(-1), ref.reshape(-1))


def test_ragged_argument_is_named():
    with pytest.raises(
        ValueError, match=r"^t must be a rectangular array of numbers; got a ragged sequence"
    ):
        gm.hedge_regret_bound([[1, 2], [3]], 2, 0.1, 1.0)


@pytest.mark.parametrize(
    ("x", "where"),
    [(10**400, "got an integer"), ([1.0, -(10**400)], "kappa[1] is an integer")],
)
def test_nonneg_integer_beyond_the_float_range_is_named(x, where):
    # numpy's float cast raised a bare OverflowError ("int too large to convert to float")
    with pytest.raises(
        ValueError, match=rf"^kappa must be >= 0 and finite as a float; {re.escape(where)} beyond"
    ):
        con.truncation_envelope(x, phi=0.5)


def test_large_representable_integers_are_still_read():
    # 2**70 does not fit int64 (numpy makes an object array): read as the float 2**70, as before
    np.testing.assert_array_equal(
        gm.hedge_regret_bound([2**70], 2, 0.1, 1.0),
        gm.hedge_regret_bound([float(2**70)], 2, 0.1, 1.0),
    )
    assert math.isfinite(float(con.truncation_envelope(2**70, phi=0.5)))


@pytest.mark.parametrize(
    ("N", "where"), [([True, 2], "N[0] = True (bool)"), ([2, "3"], "N[1] = '3' (str)")]
)
def test_markov_average_bias_lengths_with_a_bool_or_text_are_named(N, where):
    # [True, 2] is an int64 array to numpy, so the dtype check passed it as the lengths (1, 2)
    with pytest.raises(
        ValueError,
        match=rf"^N must be integers in \[1, len\(tv\)=3\]; got .* \({re.escape(where)}\)$",
    ):
        ar.markov_average_bias(N, [1.0, 0.5, 0.25], 1.0)
