"""FiniteMDP / FiniteHorizonMDP validation: every broken invariant raises with its location.

Each case corrupts one entry of a valid model and checks that the message names the
field, the rule, the index and the value (STYLE.md "Errors").
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP, FiniteMDP
from rltheory.testing import finite_mdps, transition_kernels


def _valid(S: int = 3, A: int = 2, batch: tuple[int, ...] = (), seed: int = 0):
    rng = np.random.default_rng(seed)
    P = rng.random(batch + (S, A, S)) + 0.1
    P /= P.sum(-1, keepdims=True)
    return P, rng.random(batch + (S, A))


# ---- shapes ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "P_shape, R_shape, match",
    [
        ((3, 3), (3, 2), r"P must have shape \(\.\.\., S, A, S\); got shape \(3, 3\)"),
        (
            (3, 2, 4),
            (3, 2),
            r"matching first and last state axes; got \(3, 2, 4\) \(S=3 but last axis 4\)",
        ),
        ((0, 2, 0), (0, 2), r"at least one state and one action; got shape \(0, 2, 0\)"),
        ((3, 0, 3), (3, 0), r"at least one state and one action; got shape \(3, 0, 3\)"),
        (
            (3, 2, 3),
            (3, 3),
            r"R must have shape \(3, 2\) \(…, S, A\) or that of P \(3, 2, 3\); got \(3, 3\)",
        ),
        ((3, 2, 3), (3,), r"R must have shape \(3, 2\).*got \(3,\)"),
        (
            (3, 2, 3),
            (3, 2, 2),
            r"R given per transition must have the shape of P \(3, 2, 3\); got \(3, 2, 2\)",
        ),
        ((4, 3, 2, 3), (5, 3, 2), r"R must have shape \(4, 3, 2\).*got \(5, 3, 2\)"),
    ],
)
def test_wrong_shapes(P_shape, R_shape, match):
    P = np.zeros(P_shape)
    if P.size:
        P[..., 0] = 1.0
    with pytest.raises(InvalidModelError, match=match):
        FiniteMDP(P, np.zeros(R_shape), 0.9)


# ---- non-finite entries ------------------------------------------------------------------
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_P_is_located(bad):
    P, R = _valid()
    P[1, 0, 2] = bad
    with pytest.raises(InvalidModelError, match=rf"P must be finite; P\(s=1, a=0, s'=2\) = {bad}"):
        FiniteMDP(P, R, 0.9)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_R_is_located(bad):
    P, R = _valid()
    R[2, 1] = bad
    with pytest.raises(InvalidModelError, match=rf"R must be finite; R\(s=2, a=1\) = {bad}"):
        FiniteMDP(P, R, 0.9)


def test_nonfinite_R_batched_is_located():
    P, R = _valid(batch=(4,))
    R[2, 1, 0] = np.inf
    with pytest.raises(
        InvalidModelError, match=r"R must be finite; R\(batch=\(2,\), s=1, a=0\) = inf"
    ):
        FiniteMDP(P, R, 0.9)


def test_nonfinite_per_transition_R_is_located():
    P, _ = _valid()
    R3 = np.zeros_like(P)
    R3[0, 1, 2] = np.nan
    with pytest.raises(InvalidModelError, match=r"R must be finite; R\(s=0, a=1, s'=2\) = nan"):
        FiniteMDP(P, R3, 0.9)


def test_nonfinite_mu_is_located():
    P, R = _valid()
    with pytest.raises(InvalidModelError, match=r"mu must be finite; mu\(s=2\) = nan"):
        FiniteMDP(P, R, 0.9, np.array([0.5, 0.5, np.nan]))


# ---- probabilities -----------------------------------------------------------------------
def test_complex_and_string_inputs_are_rejected_by_field():
    # a cast dropped the imaginary part (numpy only warned) or parsed text as numbers
    P, R = np.full((2, 2, 2), 0.5), np.zeros((2, 2))
    with pytest.raises(TypeError, match="P must hold real numbers; got a complex array"):
        FiniteMDP(P + 1e-3j, R, gamma=0.9)
    with pytest.raises(TypeError, match="R must hold real numbers; got a complex array"):
        FiniteMDP(P, R.astype(complex), gamma=0.9)
    with pytest.raises(TypeError, match="R must hold real numbers; got a string array"):
        FiniteHorizonMDP.stationary(P, np.array([["0", "1"], ["1", "0"]]), H=3)
    with pytest.raises(TypeError, match="mu must hold real numbers; got a complex array"):
        FiniteMDP(P, R, gamma=0.9, mu=np.array([0.5, 0.5 + 1j]))


def test_negative_probability_is_located():
    P, R = _valid()
    P[2, 1] = [0.6, -0.1, 0.5]
    with pytest.raises(
        InvalidModelError,
        match=r"P must be non-negative; most negative entry P\(s=2, a=1, s'=1\) = -0.1",
    ):
        FiniteMDP(P, R, 0.9)


def test_row_sum_reports_worst_row_and_its_sum():
    P, R = _valid(S=4, A=3)
    P[1, 2] *= 0.95  # sums to 0.95
    P[3, 0] *= 0.7  # the worst row: sums to 0.7
    with pytest.raises(
        InvalidModelError,
        match=r"each P\[s, a, :\] must sum to 1 .*worst row \(s=3, a=0\) sums to 0\.7\b",
    ):
        FiniteMDP(P, R, 0.9)


def test_row_sum_batched_reports_batch_index():
    P, R = _valid(batch=(2, 3))
    P[1, 2, 0, 1] *= 1.25
    with pytest.raises(
        InvalidModelError, match=r"worst row \(batch=\(1, 2\), s=0, a=1\) sums to 1\.25"
    ):
        FiniteMDP(P, R, 0.9)


def test_negative_probability_batched_reports_batch_index():
    P, R = _valid(batch=(3,))
    P[2, 0, 1] = [1.5, -0.5, 0.0]
    with pytest.raises(InvalidModelError, match=r"P\(batch=\(2,\), s=0, a=1, s'=1\) = -0.5"):
        FiniteMDP(P, R, 0.9)


def test_row_sum_tolerance_is_tight():
    # A deviation of 1e-6 is far above the stated tolerance 1e-8·(1+√S): rejected, never renormalised.
    P, R = _valid()
    P[0, 0, 0] += 1e-6
    with pytest.raises(InvalidModelError, match=r"worst row \(s=0, a=0\) sums to 1\.000001"):
        FiniteMDP(P, R, 0.9)
    P[0, 0, 0] -= 1e-6 - 1e-10  # within tolerance: accepted and kept as given
    assert float(FiniteMDP(P, R, 0.9).P[0, 0, 0]) == P[0, 0, 0]


# ---- discount ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "gamma, match",
    [
        (1.0, r"gamma must lie in \[0, 1\); got 1\.0"),
        (1.5, r"gamma must lie in \[0, 1\); got 1\.5"),
        (-0.1, r"gamma must lie in \[0, 1\); got -0\.1"),
        (float("nan"), r"gamma must lie in \[0, 1\); got nan"),
        (True, r"gamma must be a number in \[0, 1\); got True"),
        ("0.9", r"gamma must be a number in \[0, 1\); got '0\.9'"),
        (np.array([0.9]), r"gamma must be a number in \[0, 1\)"),
        (np.array(True), r"gamma must be a number in \[0, 1\); got array\(True\)"),
        (np.array(1.5), r"gamma must lie in \[0, 1\); got 1\.5"),
    ],
)
def test_invalid_gamma(gamma, match):
    P, R = _valid()
    with pytest.raises(InvalidModelError, match=match):
        FiniteMDP(P, R, gamma)


def test_gamma_accepts_zero_numpy_scalars_and_none():
    P, R = _valid()
    assert FiniteMDP(P, R, 0).gamma == 0.0
    assert FiniteMDP(P, R, np.float32(0.5)).gamma == 0.5
    assert FiniteMDP(P, R, None).average_reward
    # a 0-d real array, as every check_real argument accepts (it was refused as "must be a number")
    m = FiniteMDP(P, R, np.array(0.5))
    assert m.gamma == 0.5 and isinstance(m.gamma, float)


# ---- initial distribution ----------------------------------------------------------------
@pytest.mark.parametrize(
    "mu, match",
    [
        (
            np.ones(4) / 4,
            r"mu must have shape \(S,\) = \(3,\) or batch \+ \(S,\) = \(3,\); got \(4,\)",
        ),
        (np.ones((2, 3)) / 3, r"mu must have shape .*got \(2, 3\)"),
        (
            np.array([0.5, 0.7, -0.2]),
            r"mu must be non-negative; most negative entry mu\(s=2\) = -0\.2",
        ),
        (np.array([0.5, 0.4, 0.0]), r"each mu\[:\] must sum to 1 .*sums to 0\.9"),
    ],
)
def test_invalid_mu(mu, match):
    P, R = _valid()
    with pytest.raises(InvalidModelError, match=match):
        FiniteMDP(P, R, 0.9, mu)


def test_batched_mu():
    P, R = _valid(batch=(2,))
    mu = np.array([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])
    mdp = FiniteMDP(P, R, 0.9, mu)
    np.testing.assert_array_equal(mdp.initial_distribution(), mu)
    np.testing.assert_array_equal(mdp[1].initial_distribution(), mu[1])
    with pytest.raises(
        InvalidModelError, match=r"mu must have shape .*batch \+ \(S,\) = \(2, 3\); got \(3, 3\)"
    ):
        FiniteMDP(P, R, 0.9, np.ones((3, 3)) / 3)
    bad = mu.copy()
    bad[1] = [0.2, 0.3, 0.4]
    with pytest.raises(InvalidModelError, match=r"worst row \(batch=\(1,\)\) sums to 0\.9"):
        FiniteMDP(P, R, 0.9, bad)


# ---- per-transition rewards --------------------------------------------------------------
def test_per_transition_reward_is_reduced():
    # r(s, a) = Σ_s' P(s'|s, a) R(s, a, s'); e.g. row P[0, 1] = (0.25, 0.75), R = (4, -8): 1 − 6 = −5.
    P = np.array([[[1.0, 0.0], [0.25, 0.75]], [[0.5, 0.5], [0.0, 1.0]]])
    R3 = np.array([[[2.0, 100.0], [4.0, -8.0]], [[1.0, 3.0], [7.0, 9.0]]])
    mdp = FiniteMDP(P, R3, 0.9)
    np.testing.assert_allclose(mdp.R, [[2.0, -5.0], [2.0, 9.0]], rtol=0, atol=1e-15)


@settings(max_examples=30)
@given(st.data())
def test_per_transition_reward_reduction_batched(data):
    S, A = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3))
    P = data.draw(transition_kernels(S, A, batch_shape=(2,)))
    R3 = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).normal(size=P.shape)
    mdp = FiniteMDP(P, R3, 0.5)
    np.testing.assert_allclose(mdp.R, (P * R3).sum(-1), rtol=0, atol=1e-12)
    assert mdp.R.shape == (2, S, A)


# ---- frozen, re-validated, indexing --------------------------------------------------------
def test_frozen_and_replace_revalidates():
    P, R = _valid()
    mdp = FiniteMDP(P, R, 0.9)
    with pytest.raises(AttributeError):
        mdp.gamma = 0.5
    assert mdp.replace(gamma=0.5).gamma == 0.5
    with pytest.raises(InvalidModelError, match=r"gamma must lie in \[0, 1\); got 2\.0"):
        mdp.replace(gamma=2.0)


def test_integer_inputs_become_float64():
    P = np.zeros((2, 1, 2), dtype=np.int64)
    P[:, 0, 1] = 1
    mdp = FiniteMDP(P, np.ones((2, 1), dtype=np.int32), 0.5)
    assert mdp.P.dtype == np.float64 and mdp.R.dtype == np.float64


def test_indexing_batch():
    P, R = _valid(batch=(2, 3))
    mdp = FiniteMDP(P, R, 0.9)
    assert mdp.batch_shape == (2, 3) and mdp[1].batch_shape == (3,)
    np.testing.assert_array_equal(mdp[1, 2].P, P[1, 2])
    with pytest.raises(IndexError, match="cannot be indexed"):
        FiniteMDP(P[0, 0], R[0, 0], 0.9)[0]


def test_indexing_addresses_the_batch_axes_only():
    # Bug found here: mdp[..., 1] indexed the last axis of P (s') and of R (a), which returned a
    # different model whenever it validated (e.g. uniform kernels); an index longer than the batch
    # cut into the model axes the same way. The index now applies to the batch axes only.
    rng = np.random.default_rng(3)
    P = np.full((4, 5, 3, 2, 3), 1.0 / 3)  # uniform kernels: P[..., 1] is a valid (S, A) "model"
    R = rng.random((4, 5, 3, 2))
    mu = rng.dirichlet(np.ones(3), size=(4, 5))
    mdp = FiniteMDP(P, R, 0.9, mu)
    sub = mdp[..., 1]
    assert sub.batch_shape == (4,) and (sub.S, sub.A) == (3, 2)
    np.testing.assert_array_equal(sub.R, R[:, 1])
    np.testing.assert_array_equal(sub.initial_distribution(), mu[:, 1])
    np.testing.assert_array_equal(mdp[2, ...].R, R[2])
    with pytest.raises(IndexError, match="too many indices"):
        mdp[0, 1, 2]


@settings(max_examples=20)
@given(finite_mdps(batch_shape=(2,)))
def test_strategy_models_are_valid_and_revalidate(mdp):
    again = FiniteMDP(mdp.P, mdp.R, mdp.gamma, mdp.mu)
    np.testing.assert_array_equal(again.P, mdp.P)
    assert again.batch_shape == (2,)


# ---- finite horizon ------------------------------------------------------------------------
def test_finite_horizon_row_sum_names_step():
    P = np.ones((3, 2, 2, 2)) / 2
    P[2, 1, 0] = [0.3, 0.3]
    with pytest.raises(
        InvalidModelError,
        match=r"P\[h, s, a, :\] must sum to 1 .*worst row \(h=2, s=1, a=0\) sums to 0\.6",
    ):
        FiniteHorizonMDP(P, np.zeros((3, 2, 2)))


def test_finite_horizon_nonfinite_reward_names_step():
    R = np.zeros((3, 2, 2))
    R[1, 0, 1] = np.nan
    with pytest.raises(InvalidModelError, match=r"R must be finite; R\(h=1, s=0, a=1\) = nan"):
        FiniteHorizonMDP(np.ones((3, 2, 2, 2)) / 2, R)


def test_finite_horizon_shapes_and_stationary_arguments():
    with pytest.raises(InvalidModelError, match=r"P must have shape \(\.\.\., H, S, A, S\)"):
        FiniteHorizonMDP(np.ones((2, 2, 2)) / 2, np.zeros((2, 2)))
    with pytest.raises(
        InvalidModelError, match=r"H, S, A >= 1 and matching state axes; got \(3, 2, 2, 3\)"
    ):
        FiniteHorizonMDP(np.ones((3, 2, 2, 3)) / 3, np.zeros((3, 2, 2)))
    for H in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match=rf"H must be a positive integer; got {H!r}"):
            FiniteHorizonMDP.stationary(np.ones((2, 1, 2)) / 2, np.zeros((2, 1)), H)
    fh = FiniteHorizonMDP.stationary(np.ones((2, 1, 2)) / 2, np.ones((2, 1, 2)), 4)
    assert fh.H == 4 and fh.R.shape == (4, 2, 1)
    np.testing.assert_array_equal(fh.R, np.ones((4, 2, 1)))


def test_finite_horizon_indexing_selects_batch_instances():
    # FiniteHorizonMDP had no __getitem__ (TypeError "'FiniteHorizonMDP' object is not
    # subscriptable") while FiniteMDP[i] selects instances; it now selects along the batch axes
    from rltheory.mdp import backward_induction

    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(3), size=(4, 5, 2, 3, 2))  # batch (4, 5), H = 2, S = 3, A = 2
    R = rng.random((4, 5, 2, 3, 2))
    mu = rng.dirichlet(np.ones(3), size=(4, 5))
    fh = FiniteHorizonMDP(P, R, mu)
    sub = fh[1, 2]
    assert sub.batch_shape == () and (sub.H, sub.S, sub.A) == (2, 3, 2)
    np.testing.assert_array_equal(sub.P, P[1, 2])
    np.testing.assert_array_equal(sub.R, R[1, 2])
    np.testing.assert_array_equal(sub.initial_distribution(), mu[1, 2])
    assert fh[1].batch_shape == (5,) and fh[np.array([True, False, True, False])].batch_shape == (
        2,
        5,
    )
    # consistency: solving one selected instance = selecting it from the batched solution
    whole, one = backward_induction(fh), backward_induction(fh[3, 4])
    np.testing.assert_array_equal(one.V, whole.V[3, 4])
    np.testing.assert_array_equal(one.policy, whole.policy[3, 4])
    np.testing.assert_array_equal(one.value, whole.value[3, 4])
    # a shared mu (S,) stays shared
    assert FiniteHorizonMDP(P, R, mu[0, 0])[2].mu.shape == (3,)


def test_finite_horizon_indexing_addresses_the_batch_axes_only():
    # uniform kernels: P[..., 1] would be a valid (H, S, A) "model"; an Ellipsis must select along
    # the last batch axis, and an index that reaches the model axes (h, s, a, s') is refused
    P = np.full((4, 5, 2, 3, 2, 3), 1.0 / 3)
    R = np.random.default_rng(6).random((4, 5, 2, 3, 2))
    fh = FiniteHorizonMDP(P, R)
    sub = fh[..., 1]
    assert sub.batch_shape == (4,) and (sub.H, sub.S, sub.A) == (2, 3, 2)
    np.testing.assert_array_equal(sub.R, R[:, 1])
    np.testing.assert_array_equal(fh[2, ...].R, R[2])
    with pytest.raises(
        IndexError,
        match=r"too many indices for the batch axes of this FiniteHorizonMDP: index \(0, 1, 2\) addresses 3 "
        r"axes but batch_shape is \(4, 5\) \(2 axes\); the model axes \(H, S, A, S'\) cannot be indexed",
    ):
        fh[0, 1, 2]
    with pytest.raises(
        IndexError, match=r"index \(<bool array of shape \(4, 5, 2\)>,\) addresses 3 axes"
    ):
        fh[np.ones((4, 5, 2), dtype=bool)]
    with pytest.raises(
        IndexError, match="a single \\(unbatched\\) FiniteHorizonMDP cannot be indexed"
    ):
        fh[0, 0][0]


def test_indexing_beyond_the_batch_is_located():
    # FiniteMDP: the same located refusal (it was numpy's bare "too many indices for array")
    P, R = _valid(batch=(2, 3))
    with pytest.raises(
        IndexError,
        match=r"index \(0, 1, 2\) addresses 3 axes but batch_shape is \(2, 3\).*"
        r"model axes \(S, A, S'\) cannot be indexed",
    ):
        FiniteMDP(P, R, 0.9)[0, 1, 2]
