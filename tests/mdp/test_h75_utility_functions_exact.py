"""Values and shadow rewards of the built-in utilities against 50-digit references (mpmath).

Each case is a valid input the docstrings promise to handle: expert occupancies with subnormal
entries, expert tables within the sum tolerance of 1, and float32 occupancies.
"""

import mpmath as mp
import numpy as np
import pytest

from rltheory.mdp import FiniteMDP
from rltheory.mdp.utility import solve_general_utility
from rltheory.mdp.utility_functions import (
    OccupancyFunction,
    entropy_utility,
    kl_divergence,
    linear_utility,
    neg_kl_utility,
    quadratic_utility,
    shadow_reward,
)

mp.mp.dps = 50


def _kl_exact(d, q):
    """KL(d ‖ q) = Σ d log(d/q) over d > 0, in 50 digits, of the given floats."""
    return sum(
        mp.mpf(float(x)) * mp.log(mp.mpf(float(x)) / mp.mpf(float(y)))
        for x, y in zip(np.ravel(d), np.ravel(q), strict=True)
        if x > 0
    )


def _entropy_exact(p):
    return -sum(mp.mpf(float(x)) * mp.log(mp.mpf(float(x))) for x in np.ravel(p) if x > 0)


@pytest.mark.parametrize("tiny", [1e-320, 5e-324, 1e-310, 2.0**-1030])
def test_kl_with_a_subnormal_expert_entry_is_finite_and_exact(tiny):
    # d_E = (1 − tiny, tiny) is a valid expert occupancy (its sum rounds to 1); at d = (1/2, 1/2)
    # KL = ½ log(½/(1 − tiny)) + ½ log(½/tiny), 367.7 at tiny = 1e-320. The quotient ½/tiny overflowed
    # and the value and the gradient log(d/d_E) + 1 read inf
    dE = np.array([[1.0 - tiny, tiny]])
    d = np.array([[0.5, 0.5]])
    exact = _kl_exact(d, dE)
    G, F = kl_divergence(dE), neg_kl_utility(dE)
    assert np.isfinite(G.value(d))
    assert G.value(d) == pytest.approx(float(exact), rel=4e-16)
    assert F.value(d) == pytest.approx(-float(exact), rel=4e-16)
    grad_exact = [float(mp.log(mp.mpf(0.5) / mp.mpf(q)) + 1) for q in dE.ravel()]
    np.testing.assert_allclose(G.gradient(d).ravel(), grad_exact, rtol=4e-16, atol=4e-16)
    np.testing.assert_allclose(
        F.gradient(d).ravel(), [-g for g in grad_exact], rtol=4e-16, atol=4e-16
    )


@pytest.mark.parametrize("excess", [9e-9, 5e-9, 1e-12])
def test_kl_is_never_negative_for_an_expert_table_within_the_sum_tolerance(excess):
    # Gibbs's inequality KL(d ‖ d_E) >= 0 for distributions d, d_E. A list d_E summing to 1 + excess
    # (accepted: within atol 1e-8) was used as given, so at d = d_E / Σ d_E the value was −excess
    # (−9e-9). The table is the distribution it is within round-off of: d_E / Σ d_E
    dE = [[0.25 + excess / 2, 0.25], [0.3, 0.2 + excess / 2]]
    s = float(np.sum(dE))
    G, F = kl_divergence(dE), neg_kl_utility(dE)
    d = np.asarray(dE) / s
    assert G.value(d) >= 0.0
    assert G.value(d) == pytest.approx(0.0, abs=1e-15)
    assert F.value(d) <= 0.0
    rng = np.random.default_rng(7)
    for _ in range(20):
        x = rng.dirichlet(np.ones(4)).reshape(2, 2)
        assert G.value(x) >= 0.0
        assert G.value(x) == pytest.approx(float(_kl_exact(x, np.asarray(dE) / s)), rel=1e-13)


@pytest.mark.parametrize("kind", ["state_action", "state"])
def test_entropy_of_a_float32_occupancy_is_exact_in_float64(kind):
    # the entropy of the float32 numbers given, to double precision: summed in float32 it was
    # 3.9e-7 below the 50-digit value on this 4×5 table
    rng = np.random.default_rng(0)
    d = rng.random((4, 5)).astype(np.float32)
    d /= d.sum()
    H = entropy_utility(4, 5, kind=kind)
    p = d.astype(np.float64).sum(-1) if kind == "state" else d
    assert H.value(d) == pytest.approx(float(_entropy_exact(p)), rel=1e-15)
    np.testing.assert_array_equal(H.gradient(d), H.gradient(d.astype(np.float64)))


def test_kl_of_a_float32_occupancy_is_exact_in_float64():
    rng = np.random.default_rng(1)
    dE = rng.dirichlet(np.ones(6)).reshape(2, 3)
    d = rng.dirichlet(np.ones(6)).reshape(2, 3).astype(np.float32)
    G = kl_divergence(dE)
    assert G.value(d) == pytest.approx(float(_kl_exact(d, dE)), rel=1e-14)
    np.testing.assert_array_equal(G.gradient(d), G.gradient(d.astype(np.float64)))


@pytest.mark.parametrize("make", [kl_divergence, neg_kl_utility])
def test_a_negative_expert_entry_is_named_by_its_pair(make):
    # a table summing to 1 with d_E(1, 0) = −0.1 read "...; sums to 1, min -0.1" (no location)
    bad = [[0.4, 0.3], [-0.1, 0.4]]
    with pytest.raises(ValueError, match=r"d_expert\[s=1, a=0\] = -0\.1 < 0"):
        make(bad)


def _parts():
    f = linear_utility(np.ones((2, 2)))
    return f.expression, f.value, f.gradient


@pytest.mark.parametrize(
    "curvature, shape, err, match",
    [
        ("Concave", (2, 2), ValueError, r"'r\+H': curvature must be .*; got 'Concave'"),
        ("concav", (2, 2), ValueError, r"curvature must be .*; got 'concav'"),
        ("concave", (2,), ValueError, r"shape must be a pair \(S, A\); got \(2,\)"),
        ("concave", (2, 0), ValueError, r"shape\[1\] \(A\) must be an integer >= 1; got 0"),
        ("concave", (2.0, 2), ValueError, r"shape\[0\] \(S\) must be an integer >= 1; got 2\.0"),
    ],
)
def test_occupancy_function_is_checked_at_construction(curvature, shape, err, match):
    # a misspelt curvature was accepted and only solve_general_utility caught it later; the
    # networked primal-dual problem never looks at it
    with pytest.raises(err, match=match):
        OccupancyFunction("r+H", curvature, *_parts(), shape)


def test_occupancy_function_shape_is_normalised_to_a_tuple():
    # a list shape [2, 2] never compared equal to the model's (S, A) = (2, 2): solve_general_utility
    # refused it with "has shape [2, 2]; the model has (S, A) = (2, 2)"
    f = OccupancyFunction("lin", "affine", *_parts(), [np.int64(2), 2])
    assert f.shape == (2, 2) and type(f.shape[0]) is int
    mdp = FiniteMDP(np.full((2, 2, 2), 0.5), np.ones((2, 2)), gamma=0.5)
    assert solve_general_utility(mdp, f).value == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(TypeError, match="'lin': gradient must be callable; got ndarray"):
        OccupancyFunction("lin", "affine", f.expression, f.value, np.ones((2, 2)), (2, 2))


def _builtins():
    q = np.full((2, 2), 0.25)
    return [
        entropy_utility(2, 2),
        entropy_utility(2, 2, kind="state"),
        kl_divergence(q),
        neg_kl_utility(q),
        linear_utility(np.ones((2, 2))),
        quadratic_utility(np.ones((2, 2)), 1.0),
    ]


@pytest.mark.parametrize("i", range(6))
@pytest.mark.parametrize("shape", [(3, 2, 2), (4, 1), (4,)])
def test_builtin_values_and_gradients_refuse_other_shapes(i, shape):
    # a batch d[3, 2, 2] of uniform tables gave the entropy 3 log 4 (the batch summed) and the KL the
    # value of its first table; a transposed d[4, 1] gave the state entropy of the wrong marginal
    F = _builtins()[i]
    d = np.full(shape, 0.25)
    for what in ("value", "gradient"):
        with pytest.raises(
            ValueError,
            match=rf"{F.name} {what}: d must have shape \(S, A\) = \(2, 2\); got \({shape[0]},",
        ):
            getattr(F, what)(d)


@pytest.mark.parametrize("i", range(6))
def test_builtin_values_and_gradients_take_nested_lists_as_tables(i):
    F = _builtins()[i]
    d = [[0.1, 0.2], [0.3, 0.4]]
    assert F.value(d) == F.value(np.array(d))
    np.testing.assert_array_equal(F.gradient(d), F.gradient(np.array(d)))


@pytest.mark.parametrize("i", range(6))
def test_shadow_reward_refuses_a_negative_occupancy_and_reads_round_off_as_zero(i):
    # d(1, 0) = −0.1 gave the entropy's shadow reward +inf there and the linear one r, silently
    F = _builtins()[i]
    with pytest.raises(ValueError, match=r"d must be an occupancy .*; d\[s=1, a=0\] = -0\.1$"):
        shadow_reward(F, [[0.4, 0.3], [-0.1, 0.4]])
    noisy = np.array([[0.5, 0.5], [-1e-17, 0.0]])
    np.testing.assert_array_equal(shadow_reward(F, noisy), F.gradient(noisy))
