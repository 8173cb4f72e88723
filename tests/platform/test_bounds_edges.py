"""rltheory.bounds at the edges of its inputs: the limits γ → 0 and γ → 1, huge T, zero and
infinite constants, states the data never reach. Every answer is a number with its source
(closed form, brute force over policies, the definition) or a located error — never a silent
NaN, a negative bound or a division warning."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory import bounds as B
from rltheory.algorithms.soft import regularized_values, soft_reference
from rltheory.mdp import FiniteMDP

# ------------------------------------------------------------------ constants from a model


def _block_mdp(rng: np.random.Generator, S: int, A: int, k: int, gamma: float) -> FiniteMDP:
    """States ``[0, k)`` form a closed class holding ``μ``; states ``[k, S)`` are never reached."""
    P = np.zeros((S, A, S))
    P[:k, :, :k] = rng.random((k, A, k)) + 1e-3
    P[k:, :, :] = rng.random((S - k, A, S)) + 1e-3
    P /= P.sum(-1, keepdims=True)
    mu = np.zeros(S)
    mu[:k] = rng.random(k) + 0.1
    return FiniteMDP(P, np.zeros((S, A)), gamma, mu / mu.sum())


def _brute_max_occupancy(mdp: FiniteMDP) -> np.ndarray:
    """``sup_π d^π(s, a)`` over the deterministic stationary policies (the sup of an MDP value
    with reward ``1{s, a}`` is attained there), occupancies by a direct linear solve."""
    P, g, mu = np.asarray(mdp.P), float(mdp.gamma), np.asarray(mdp.initial_distribution())
    S, A = mdp.S, mdp.A
    sup = np.zeros((S, A))
    for pol in itertools.product(range(A), repeat=S):
        pi = np.eye(A)[list(pol)]
        Ppi = np.einsum("sat,sa->st", P, pi)
        d = (1.0 - g) * np.linalg.solve((np.eye(S) - g * Ppi).T, mu)
        sup = np.maximum(sup, d[:, None] * pi)
    return sup


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    S=st.integers(2, 5),
    A=st.integers(1, 3),
    gamma=st.sampled_from([1e-8, 0.3, 0.9, 0.999, 0.99999]),
    data=st.data(),
)
def test_unreachable_pairs_have_zero_sup_occupancy_and_need_no_coverage(seed, S, A, gamma, data):
    # Munos (2007): C_all is finite iff the data cover every pair some policy reaches. The
    # batched policy iteration left ±1e-17 of round-off on unreachable pairs (even negative
    # occupancies), and C_all was inf for data that cover every reachable pair.
    k = data.draw(st.integers(1, S - 1))
    rng = np.random.default_rng(seed)
    mdp = _block_mdp(rng, S, A, k, gamma)
    sup = np.asarray(B.max_occupancy(mdp))
    assert np.all(sup[k:] == 0.0) and np.all(sup >= 0.0)
    np.testing.assert_allclose(sup, _brute_max_occupancy(mdp), rtol=1e-8, atol=1e-12)
    cover = np.zeros((S, A))
    cover[:k] = rng.random((k, A)) + 0.01
    cover /= cover.sum()
    c_all = B.all_policy_concentrability(mdp, cover)
    ref = float(np.max(sup[:k] / cover[:k]))
    assert math.isfinite(c_all) and c_all == pytest.approx(ref, rel=1e-12)
    # a reachable pair the data miss: inf, without a warning (data mass on unreachable pairs is harmless)
    hole = cover.copy()
    hole[0, 0] = 0.0
    hole[k:] = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert B.all_policy_concentrability(mdp, hole / hole.sum()) == math.inf


def test_kl_to_policy_ignores_an_infinite_kl_at_a_state_of_weight_zero():
    # D_0 = Σ_s ν(s) KL(π*(·|s) ‖ π_0(·|s)); π_0 misses π*'s action at s=0 (KL = inf) but
    # ν(0) = 0, so D_0 = KL(δ_0 ‖ uniform) at the two other states = 2 log 2 (was NaN: 0·inf).
    mdp = FiniteMDP(np.ones((3, 2, 3)) / 3.0, np.zeros((3, 2)), 0.5)
    pi0 = np.array([[0.0, 1.0], [0.5, 0.5], [0.5, 0.5]])
    got = float(B.kl_to_policy(mdp, np.zeros(3, dtype=int), pi0, np.array([0.0, 1.0, 1.0])))
    assert got == pytest.approx(2.0 * math.log(2.0), rel=1e-15)
    assert float(B.kl_to_policy(mdp, np.zeros(3, dtype=int), pi0, np.ones(3))) == math.inf


def test_entropy_npg_constant_rejects_steps_outside_theorem_1():
    # Cen et al. (2022), Thm 1 needs η ≤ (1−γ)/τ; beyond it 1 − ητ/(1−γ) < 0 and C_1 came out
    # negative (-60.79 for this one-state model with η = 10, τ = 1, γ = 1/2, π_0 = (0.9, 0.1)).
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), 0.5)
    with pytest.raises(
        ValueError, match=r"Theorem 1 needs eta <= \(1 - gamma\)/tau = 0\.5; got eta=10\.0"
    ):
        B.entropy_npg_constant(mdp, eta=10.0, tau=1.0, pi0=np.array([[0.9, 0.1]]))
    with pytest.raises(ValueError, match=r"needs a discounted model; got gamma=None"):
        B.entropy_npg_constant(
            FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), None), eta=0.5, tau=1.0
        )


def test_entropy_npg_constant_of_soft_policy_iteration_from_a_policy_with_zeros():
    # η = (1−γ)/τ: the log-policy term has weight 0, so C_1 = ‖Q*_τ − Q_τ^{(0)}‖∞ even though
    # log π^{(0)} = -inf somewhere (was NaN: 0·inf); with a smaller η it is inf.
    P = np.array([[[0.5, 0.5], [1.0, 0.0]], [[0.0, 1.0], [0.3, 0.7]]])
    mdp = FiniteMDP(P, np.array([[1.0, 0.0], [0.2, 0.6]]), 0.5)
    pi0 = np.array([[1.0, 0.0], [0.5, 0.5]])
    soft = soft_reference(mdp, tau=1.0)
    _, Q0 = regularized_values(mdp, pi0, tau=1.0)
    ref = float(np.max(np.abs(np.asarray(soft.Q) - np.asarray(Q0))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(
            B.entropy_npg_constant(mdp, eta=0.5, tau=1.0, pi0=pi0, soft=soft)
        ) == pytest.approx(ref, rel=1e-12)
        assert float(B.entropy_npg_constant(mdp, eta=0.25, tau=1.0, pi0=pi0, soft=soft)) == math.inf


def test_concentrability_of_a_subnormal_data_weight_is_inf_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (
            B.single_policy_concentrability(np.array([0.5, 0.5]), np.array([1.0 - 1e-320, 1e-320]))
            == math.inf
        )


# ------------------------------------------------------------------ limits of the bound formulas


def test_mlmc_expected_samples_is_exact_for_every_power_of_two_minus_one():
    # E[N] = j_max + 2^{-j_max}, j_max = ⌊log₂ T_max⌋ = T_max.bit_length() − 1 (Dorfman & Levy 2022,
    # Lemma 3.1). For T_max = 2^k − 1, j_max = k − 1; float log2 rounded to k for k ≥ 49 (53.0 for
    # k = 53 instead of 52 + 2^-52).
    for k in range(1, 70):
        assert B.mlmc_expected_samples(2**k - 1) == (k - 1) + 2.0 ** (-(k - 1))
        assert B.mlmc_expected_samples(2**k) == k + 2.0 ** (-k)


def test_mixing_time_eps_bound_at_a_subnormal_eps():
    # ⌈log₂(1/ε)⌉ t_mix with ε = 2^-1074: 1074 t_mix (1/ε overflowed: OverflowError before)
    assert B.mixing_time_eps_bound(10, 5e-324) == 10740
    assert B.mixing_time_eps_bound(10, np.float32(0.25)) == 20


def test_linear_rates_with_an_infinite_constant_stay_infinite_at_huge_t():
    # C·q^k with C = inf is inf at every k; q^k underflowing to 0 gave inf·0 = NaN.
    assert float(B.pmd_linear_bound(1e300, rate=0.5, eta0=1.0, gap0=1.0, kl0=math.inf)) == math.inf
    q, lp = B.entropy_npg_bound([1, 1e6], eta=0.5, tau=1.0, gamma=0.5, C1=math.inf)
    assert q.tolist() == [math.inf, math.inf] and lp.tolist() == [math.inf, math.inf]
    # and finite constants give 0 there, not NaN
    q, lp = B.entropy_npg_bound(1e300, eta=0.5, tau=1.0, gamma=0.5, C1=1.0)
    assert float(q) == 0.0 and float(lp) == 0.0


def test_entropy_npg_bound_is_never_negative_at_the_edge_of_the_step_range():
    # η τ within the 1e-12 tolerance above 1 − γ: the factor 1 − ητ is clipped at 0 (was
    # (-1e-13)^(t-1): a negative bound -1.998e-13 at t = 2).
    q, lp = B.entropy_npg_bound([1, 2, 3, 4], eta=1.0 + 1e-13, tau=1.0, gamma=0.0, C1=1.0)
    assert np.all(q >= 0) and np.all(lp >= 0)
    assert lp.tolist() == [2.0, 0.0, 0.0, 0.0]


def test_bounds_accept_numpy_scalars_like_python_numbers():
    assert float(B.npg_bound(10, eta=1.0, gamma=0.5, n_actions=np.int64(2))) == pytest.approx(
        math.log(2) / 10 + 0.4
    )
    assert float(B.td_fixed_point_bound(1.0, gamma=0.5, lam=np.float32(0.5))) == pytest.approx(
        1.0 / math.sqrt(1.0 - (0.25 / 0.75) ** 2)
    )
    assert B.rvi_asymptotic_rate(np.array([[0.0, 1.0], [1.0, 0.0]]), np.float32(0.5)) == 0.0
    assert B.elliptical_bonus(
        np.eye(2).reshape(1, 2, 2), 4.0 * np.eye(2)[None], np.array(2.0)
    ).tolist() == [[[1.0, 1.0]]]
    assert B.vanishing_discount_bound(0.5, np.int64(2)) == 1.0
    assert B.markov_average_bias([2], [1.0, 0.5], np.float32(2.0)).tolist() == [1.5]
    assert float(B.mac_rate(4, tau_mix=np.float32(4.0), T_max=4, C=np.float32(0.5))) == 1.0
    assert B.vi_stopping_threshold(np.int64(1), 0.5) == 0.5
    # γ/(1−γ) = 1: certificates 4, 2, 1, 0.5 are first < 1 at k = 3, after k + 1 = 4 evaluations
    assert B.span_stopping_iterations(0.5, np.int64(1), 4.0) == 4


def test_relative_condition_number_rank_cut_is_relative_on_both_sides():
    # κ = sup xᵀΣ_t x / xᵀΣ_d x = max_i t_i/d_i for diagonal matrices: 100 for diag(1, 1e-9) vs
    # diag(1, 1e-11); the default rtol = 1e-10 cuts 1e-11 as rank-deficient (documented): inf.
    t, d = np.diag([1.0, 1e-9]), np.diag([1.0, 1e-11])
    assert B.relative_condition_number(t, d) == math.inf
    assert B.relative_condition_number(t, d, rtol=1e-13) == pytest.approx(100.0, rel=1e-12)


# ------------------------------------------------------------------ monotonicity the theorems imply

_gammas = st.one_of(
    st.floats(0.0, 0.999999), st.sampled_from([0.0, 1e-300, 1e-8, 1 - 1e-9, 1 - 2**-52])
)
_times = st.one_of(st.floats(1.0, 1e12), st.sampled_from([1.0, 2.0, 1e300]))


@settings(max_examples=200, deadline=None)
@given(g1=_gammas, g2=_gammas, t1=_times, t2=_times, A=st.integers(1, 50))
def test_sublinear_bounds_are_monotone_in_t_and_in_the_horizon(g1, g2, t1, t2, A):
    (ga, gb), (ta, tb) = sorted((g1, g2)), sorted((t1, t2))
    for f in (
        lambda t, g: B.npg_bound(t, eta=1.0, gamma=g, n_actions=A),
        lambda t, g: B.pmd_sublinear_bound(t, eta=0.5, gamma=g, kl0=math.log(A)),
        lambda t, g: B.softmax_pg_bound(
            t, gamma=g, n_states=3, c=1.0 / A, mismatch=1.5, inv_rho=3.0
        ),
        # the union bound covers t <= horizon only (t > horizon is refused): a horizon above every drawn t
        # (whole iteration counts only: the statement is about iterations, lead, session 18)
        lambda t, g: B.q_learning_bound(
            math.floor(t),
            alpha=0.1,
            gamma=g,
            initial_error=2.0,
            value_span=1.0,
            n_pairs=A,
            horizon=10**301,
            delta=0.1,
        ),
    ):
        vals = [float(f(t, g)) for t in (ta, tb) for g in (ga, gb)]
        assert all(v >= 0 and not math.isnan(v) for v in vals)
        assert vals[2] <= vals[0] and vals[3] <= vals[1]  # non-increasing in t
        assert vals[0] <= vals[1] and vals[2] <= vals[3]  # non-decreasing in 1/(1 − γ)
    assert float(B.td_fixed_point_bound(1.0, gamma=ga)) <= float(
        B.tvr_fixed_point_bound(1.0, gamma=ga)
    )
    assert float(B.td_fixed_point_bound(1.0, gamma=ga)) <= float(
        B.td_fixed_point_bound(1.0, gamma=gb)
    )


@settings(max_examples=200, deadline=None)
@given(g1=_gammas, g2=_gammas, tol=st.floats(1e-300, 1e3), span0=st.floats(0.0, 1e300))
def test_iteration_counts_are_monotone_in_gamma(g1, g2, tol, span0):
    ga, gb = sorted((g1, g2))
    assert B.span_stopping_iterations(ga, tol, span0) <= B.span_stopping_iterations(gb, tol, span0)
    assert B.span_stopping_iterations(ga, tol, span0) <= B.span_stopping_iterations(
        ga, tol / 2, span0
    )
    assert B.pi_iteration_bound(3, 2, ga) <= B.pi_iteration_bound(3, 2, gb)
    if ga > 0:
        assert B.vi_iterations_to_threshold(tol, ga, span0) <= B.vi_iterations_to_threshold(
            tol, gb, span0
        )


def test_iteration_counts_beyond_the_float_range_of_their_products():
    # γ/(1−γ)·sp_0 overflows for sp_0 = 1.8e299, γ = 1 − 1e-9 (OverflowError before); the count
    # grows by log(1e9)/log(1/γ) when sp_0 grows by 1e9 from a value whose product is finite.
    g = 1.0 - 1e-9
    lo, hi = (
        B.span_stopping_iterations(g, 1.0, 1.8e290),
        B.span_stopping_iterations(g, 1.0, 1.8e299),
    )
    assert abs((hi - lo) - math.log(1e9) / -math.log(g)) <= 1.0
    # ε(1−γ)/(2γ) underflows to 0 for ε = 5e-324, γ = 1 − 2^-52 (math domain error before):
    # k = ⌊log(2γ d_0/(ε(1−γ)))/log(1/γ)⌋ + 1 with the logarithms taken term by term
    g, eps = 1.0 - 2.0**-52, 5e-324
    k = B.vi_iterations_to_threshold(eps, g, 1.0)
    x = (math.log(2.0 * g) - math.log(eps) - math.log1p(-g)) / -math.log(g)
    assert k == math.floor(x) + 1


@pytest.mark.parametrize("gamma", [0.0, 0.5, 1.0 - 2.0**-53])
def test_vi_error_bound_at_python_integers_beyond_the_float_range(gamma):
    # Bug found here: k = 10**400 made numpy build an object array whose float cast raised
    # OverflowError. γ^k e0 → 0 as k → ∞ for every γ in [0, 1) (already 0.0 in float at
    # k = 1e20 for γ ≤ 1 − 2^-53), and the other entries keep their exact values (0^0 = 1).
    assert B.vi_error_bound(10**400, gamma, 2.0).tolist() == 0.0
    out = B.vi_error_bound([0, 10**400, 2**70], gamma, 2.0)
    assert out.tolist() == [2.0, 0.0, B.vi_error_bound(2.0**70, gamma, 2.0).item()]
    assert B.vi_error_bound([[10**400], [1]], gamma, [2.0, 4.0]).tolist() == [
        [0.0, 0.0],
        [2.0 * gamma, 4.0 * gamma],
    ]


def test_vi_error_bound_rejects_bad_entries_beside_huge_integers():
    with pytest.raises(ValueError, match=r"k must be non-negative; got min k = -1000000000"):
        B.vi_error_bound([5, -(10**400)], 0.5, 1.0)
    with pytest.raises(ValueError, match=r"k must hold finite integers; got \[1000"):
        B.vi_error_bound([10**400, 1.5], 0.5, 1.0)
    with pytest.raises(TypeError, match=r"^k must hold real numbers; k\[1\] = None \(NoneType\)$"):
        B.vi_error_bound([10**400, None], 0.5, 1.0)  # not a number: the entry named
    assert B.vi_error_bound([10**400, 2.0], 0.5, 1.0).tolist() == [0.0, 0.25]


# ------------------------------------------------------------ check_bound at bounds <= 0


def test_check_bound_ratio_of_negative_bounds():
    # Bug found here: measured −1 against bound −2 violates the bound, yet worst_ratio was
    # m/b = 0.5 ("loose"); the ratio is now b/m = 2 where both are negative (> 1 iff m > b).
    c = B.check_bound([-1.0], [-2.0])
    assert not c.holds and c.worst_ratio == 2.0
    # met with slack (|b|/|m| = 2/3) and met exactly (ratio 1); the old worst was 1.5 at index 0
    c = B.check_bound([-3.0, -2.0], [-2.0, -2.0])
    assert c.holds and c.worst_ratio == 1.0 and c.argmax == (1,)
    # a non-negative measurement exceeds a negative bound: inf (before: 0/−1 and 1/−1 read
    # −0.0 and −1 while holds was False)
    c = B.check_bound([0.0, 1.0, -5.0], [-1.0, -1.0, -1.0])
    assert not c.holds and math.isinf(c.worst_ratio) and c.argmax == (0,)
    # zero bounds as before: exceeded -> inf, met -> 0
    assert B.check_bound([-1.0, 0.0], [0.0, 0.0]).worst_ratio == 0.0


def test_check_bound_rtol_loosens_a_negative_bound():
    # Bug found here: the allowance was bound·(1 + rtol), which tightens a negative bound, so
    # measured == bound == −2 failed at the default rtol = 1e-12 (excess +2e-12).
    assert B.check_bound([-2.0], [-2.0]).holds
    assert B.check_bound([-2.0 + 1e-12], [-2.0]).holds  # within rtol·|b| = 2e-12
    assert not B.check_bound([-2.0 + 1e-11], [-2.0]).holds
    assert B.check_bound([-2.0 + 1e-11], [-2.0], rtol=1e-11).holds
    assert B.check_bound([-2.0], [-2.0]).worst_excess == 2.0 * (1.0 - 1e-12) - 2.0


_finite = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)


@given(m=st.lists(_finite, min_size=1, max_size=4), data=st.data())
@settings(max_examples=200, deadline=None)
def test_check_bound_worst_ratio_exceeds_one_exactly_when_the_bound_fails(m, data):
    b = data.draw(st.lists(_finite, min_size=len(m), max_size=len(m)))
    c = B.check_bound(m, b, rtol=0.0)
    assert c.holds == all(x <= y for x, y in zip(m, b, strict=True))
    assert (c.worst_ratio <= 1.0) == c.holds


@pytest.mark.parametrize(
    ("t", "where"),
    [
        (10**400, "got an integer"),
        ([1, 10**400], "t[1] is an integer"),
        ([[2], [-(10**400)]], "t[1, 0] is an integer"),
    ],
)
def test_time_arguments_beyond_the_float_range_get_a_located_error(t, where):
    # numpy's float cast of a Python int beyond ~1.8e308 raised a bare OverflowError naming neither
    # the argument nor the entry; such a t is rejected as t = inf is ("t must be >= 1")
    import re  # noqa: PLC0415

    with pytest.raises(
        ValueError,
        match=rf"t must be >= 1 and finite as a float; {re.escape(where)} beyond the float range",
    ):
        B.hedge_regret_bound(t, 3, 0.1, 1.0)
    with pytest.raises(ValueError, match=r"T must be >= 1 and finite as a float; got an integer"):
        B.npg_bound(10**400, eta=1.0, gamma=0.9, n_actions=3)
    # large but representable: unchanged
    assert B.hedge_regret_bound([1, 2**70], 3, 0.1, 1.0).shape == (2,)
