"""Offline learners and bounds outside the ranges the other tests draw from (second round).

Covers ``rltheory.bounds.offline`` (confidence radii, PEVI's β, the rates, the elliptical
bonus), ``rltheory.algorithms.offline`` (LCB-VI, PEVI, certainty equivalence),
``.offline_discounted`` and ``.conservative``: subnormal failure probabilities, values at
the edge of the float range, mismatched shapes and non-boolean switches. Each test names
the old behaviour it pins down; reference values are closed forms derived in the comments.
"""

from __future__ import annotations

import math
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms.offline import (
    certainty_equivalence,
    conservative_evaluation,
    cql,
    lcb_vi,
    lcb_vi_discounted,
    pevi,
)
from rltheory.bounds.offline import (
    elliptical_bonus,
    empirical_bernstein_radius,
    hoeffding_radius,
    hybrid_npg_bound,
    lcb_vi_rate,
    offline_game_gap_rate,
    pessimism_suboptimality_bound,
    pevi_beta,
)
from rltheory.mdp.offline_data import EpisodeDataset, TransitionDataset, empirical_model

TINY = 1e-320  # subnormal: 2/δ overflows to inf, δ/(HSA) underflows towards 0


def _bandit_data() -> EpisodeDataset:
    """One state, two actions, H = 2; every (h, a) seen twice with reward 1/2.

    With sample splitting step 0 sees episodes 0, 2 (actions 0, 0) and step 1 episodes 1, 3
    (actions 0, 1).
    """
    actions = np.array([[0, 1], [1, 0], [0, 0], [1, 1]])
    return EpisodeDataset(np.zeros((4, 3), int), actions, np.full((4, 2), 0.5), S=1, A=2)


# --------------------------------------------------------------------------- subnormal δ
class TestSubnormalDelta:
    """``ln(c/δ)`` is computed as ``ln c − ln δ``: finite (≤ 746 + ln c) for every δ in (0, 1)."""

    def test_hoeffding_radius(self):
        # Bug fixed: ln(2/δ) = ln(inf) made the radius inf, capped to B = 1 (and 0·inf = NaN for B = 0).
        L = math.log(2.0) - math.log(TINY)
        assert float(hoeffding_radius(10**6, 1.0, TINY)) == pytest.approx(math.sqrt(L / 2e6), rel=1e-13)
        assert float(hoeffding_radius(5, 0.0, TINY)) == 0.0

    def test_empirical_bernstein_radius(self):
        L = math.log(4.0) - math.log(TINY)
        want = math.sqrt(2 * 0.1 * L / 1e6) + 7 * L / (3 * (1e6 - 1))
        assert float(empirical_bernstein_radius(10**6, 0.1, 1.0, TINY)) == pytest.approx(want, rel=1e-13)
        assert float(empirical_bernstein_radius(5, 0.0, 0.0, TINY)) == 0.0

    def test_pevi_beta_and_rates_are_finite(self):
        # Bug fixed: all three returned inf at ξ = δ = 1e-320.
        assert pevi_beta(2, 3, 100, TINY) == pytest.approx(6 * math.sqrt(math.log(1200) - math.log(TINY)), rel=1e-13)
        assert lcb_vi_rate(1.0, 1, 1, 1, 100, TINY) == pytest.approx(
            2 * math.sqrt((math.log(2) - math.log(TINY)) / 100), rel=1e-13
        )
        assert offline_game_gap_rate(1.0, 1, (1, 1), 1, 100, TINY) == pytest.approx(
            8 * math.sqrt((math.log(8) - math.log(TINY)) / 100), rel=1e-13
        )

    def test_lcb_vi_at_the_smallest_delta(self):
        # Bug fixed: δ' = 5e-324/(HSA) = 0 and lcb_vi raised "delta must be a probability in (0, 1); got 0.0"
        # for the δ the user passed (5e-324). ι = ln(2HSA) − ln δ; step 1 (B = 1) has n = 1 at each action.
        res = lcb_vi(_bandit_data(), delta=5e-324)
        iota = math.log(2 * 2 * 1 * 2) - math.log(5e-324)
        assert res.bonus[1, 0, 0] == pytest.approx(min(1.0, math.sqrt(iota / 2)), rel=1e-13)
        # step 0 (B = 2): n(a=0) = 2, radius 2 √(ι/4) > 2 is capped at 2; a = 1 unvisited gets 2
        assert res.bonus[0].tolist() == [[2.0, 2.0]]
        assert np.all(res.V == 0.0)

    def test_lcb_vi_bernstein_value_is_not_nan(self):
        # Bug fixed: with δ = 1e-320 the Bernstein radius was 0·inf = NaN where V_n = 0 and n ≥ 2
        # (step 0, action 0), so V̂_0 = NaN. Now the radius is capped at B = 2 and Q̂ = clip(1 − 2) = 0.
        res = lcb_vi(_bandit_data(), bonus="bernstein", delta=TINY)
        assert np.all(np.isfinite(res.bonus)) and np.all(np.isfinite(res.V))
        assert res.bonus[0, 0, 0] == 2.0 and res.V[0, 0] == 0.0

    def test_pevi_default_beta_at_a_subnormal_delta(self):
        # Bug fixed: the default β = c d H √ln(2dHK/ξ) was inf and pevi raised "beta must be a finite number".
        d, phi = _bandit_data(), np.eye(2).reshape(1, 2, 2)
        beta = pevi_beta(2, 2, 4, TINY)
        assert math.isfinite(beta)
        np.testing.assert_array_equal(pevi(d, phi, delta=TINY).bonus, pevi(d, phi, beta=beta, delta=TINY).bonus)

    def test_lcb_vi_discounted_at_a_subnormal_delta(self):
        # One state and action, reward 1, γ = 0, N = 10^4: T = ⌈ln 10^4⌉ = 10 folds of 1000 tuples;
        # b = √((ln 2 + ln 10 − ln δ)/2000) ≈ 0.61 and V = 1 − b. Bug fixed: b was V_max = 1 and V = 0.
        N = 10**4
        t = TransitionDataset(np.zeros(N, int), np.zeros(N, int), np.ones(N), np.zeros(N, int), S=1, A=1)
        res = lcb_vi_discounted(t, 0.0, delta=TINY)
        b = math.sqrt((math.log(2) + math.log(10) - math.log(TINY)) / 2000)
        assert res.iterations == 10
        assert res.bonus[0, 0] == pytest.approx(b, rel=1e-13)
        assert res.V[0] == pytest.approx(1 - b, rel=1e-13)


# --------------------------------------------------------------------------- elliptical bonus
class TestEllipticalBonusSteps:
    """Per-step features ``(H, S, A, d)`` must have as many steps as ``Λ``."""

    def test_more_feature_steps_than_lambda(self):
        # Bug fixed: only out[0] was written and out[1], out[2] were np.empty's uninitialised memory.
        with pytest.raises(ValueError, match=r"per-step features \(H, S, A, d\) must have Lambda's H = 1 steps; "
                                             r"got features of shape \(3, 1, 2, 2\)"):
            elliptical_bonus(np.ones((3, 1, 2, 2)), np.eye(2)[None], 1.0)

    def test_fewer_feature_steps_than_lambda(self):
        # Bug fixed: IndexError 'index 2 is out of bounds for axis 0 with size 2'.
        with pytest.raises(ValueError, match=r"must have Lambda's H = 3 steps; got features of shape \(2, 1, 2, 2\)"):
            elliptical_bonus(np.ones((2, 1, 2, 2)), np.stack([np.eye(2)] * 3), 1.0)

    def test_matching_steps_reference(self):
        # φ_h = (1, 0), (0, 1) one-hot; Λ_0 = 4I, Λ_1 = diag(1, 9): Γ = β‖φ‖_{Λ⁻¹} = 2·(1/2, 1/2), 2·(1, 1/3)
        phi = np.broadcast_to(np.eye(2).reshape(1, 1, 2, 2), (2, 1, 2, 2))
        L = np.stack([4.0 * np.eye(2), np.diag([1.0, 9.0])])
        np.testing.assert_allclose(elliptical_bonus(phi, L, 2.0), [[[1.0, 1.0]], [[2.0, 2.0 / 3.0]]], rtol=1e-15)


# --------------------------------------------------------------------------- split switch
class TestSplitIsABool:
    """``split`` is ``True`` or ``False`` (the rule of ``pessimistic_equilibrium_vi``'s ``split``)."""

    @pytest.mark.parametrize("split", ["False", None, 0, 1.0, "no"])
    def test_lcb_vi_and_pevi_refuse_other_values(self, split):
        # Bug fixed: bool(split) ran split='False' (truthy) with splitting and None / 0 without, silently.
        d, phi = _bandit_data(), np.eye(2).reshape(1, 2, 2)
        with pytest.raises(ValueError, match=rf"split must be True or False; got {re.escape(repr(split))}"):
            lcb_vi(d, split=split)
        with pytest.raises(ValueError, match=rf"split must be True or False; got {re.escape(repr(split))}"):
            pevi(d, phi, beta=1.0, split=split)

    @pytest.mark.parametrize("flag", [True, False])
    def test_numpy_bools_are_the_same_switch(self, flag):
        d, phi = _bandit_data(), np.eye(2).reshape(1, 2, 2)
        np.testing.assert_array_equal(lcb_vi(d, split=np.bool_(flag)).Q, lcb_vi(d, split=flag).Q)
        np.testing.assert_array_equal(pevi(d, phi, beta=1.0, split=np.bool_(flag)).Q, pevi(d, phi, beta=1.0, split=flag).Q)


# --------------------------------------------------------------------------- given bonus
class TestGivenBonus:
    """A bonus array given to ``lcb_vi`` is checked entry by entry, with the entry named."""

    def test_nan_entry_is_located(self):
        # Bug fixed: the message said only "got shape (2, 1, 2)" - the right shape - for a NaN entry.
        b = np.ones((2, 1, 2))
        b[1, 0, 1] = np.nan
        with pytest.raises(ValueError, match=r"bonus must be finite; bonus\(h=1, s=0, a=1\) = nan"):
            lcb_vi(_bandit_data(), bonus=b)

    def test_negative_entry_is_located(self):
        b = np.ones((2, 1, 2))
        b[0, 0, 1] = -0.5
        with pytest.raises(ValueError, match=r"a given bonus must be non-negative; bonus\(h=0, s=0, a=1\) = -0\.5"):
            lcb_vi(_bandit_data(), bonus=b)

    def test_complex_bonus_is_refused(self):
        # Bug fixed: the imaginary part was dropped (ComplexWarning) and LCB-VI ran with bonus 0.
        with pytest.raises(TypeError, match=r"bonus must hold real numbers; got a complex array"):
            lcb_vi(_bandit_data(), bonus=np.full((2, 1, 2), 1j))

    def test_bytes_bonus_is_refused(self):
        # Bug fixed: numpy's "could not convert string to float: b'hoeffding'".
        with pytest.raises(TypeError, match=r"bonus must hold real numbers"):
            lcb_vi(_bandit_data(), bonus=b"hoeffding")

    def test_given_bonus_reference(self):
        # Γ = 1/4 on visited pairs: step 1 means 1/2 → Q̂_1 = 1/4 (both actions); step 0 targets
        # 1/2 + 1/4 at a = 0 (n = 2) → Q̂_0 = 1/2, a = 1 unvisited → 0, recorded bonus H − h = 2.
        res = lcb_vi(_bandit_data(), bonus=np.full((2, 1, 2), 0.25))
        assert res.Q.tolist() == [[[0.5, 0.0]], [[0.25, 0.25]]]
        assert res.bonus.tolist() == [[[0.25, 2.0]], [[0.25, 0.25]]]


# --------------------------------------------------------------------------- float range
def _huge(H: int, K: int = 2, r: float = 1e308) -> EpisodeDataset:
    """One state, one action, K episodes of H steps with reward ``r`` at every step."""
    return EpisodeDataset(np.zeros((K, H + 1), int), np.zeros((K, H), int), np.full((K, H), r), S=1, A=1)


class TestCertaintyEquivalenceRange:
    """Certainty equivalence takes any finite rewards: exact means near the float range, else a located error."""

    def test_mean_of_huge_targets_is_exact(self):
        # Bug fixed: the mean of two targets 1e308 was (1e308 + 1e308)/2 = inf/2 = inf; V̂_0 = 1e308 exactly.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res = certainty_equivalence(_huge(1))
        assert res.V.tolist() == [[1e308], [0.0]]
        # mixed signs: (1e308 + 1e308 − 1e308)/3, where the running sum overflows
        d = EpisodeDataset(np.zeros((3, 2), int), np.zeros((3, 1), int), np.array([[1e308], [1e308], [-1e308]]), S=1, A=1)
        assert certainty_equivalence(d).V[0, 0] == pytest.approx(1e308 / 3, rel=1e-15)

    def test_values_beyond_the_float_range_are_located(self):
        # Bug fixed: V̂_0 = 1e308 + 1e308 = inf returned silently (with an overflow warning).
        with pytest.raises(ValueError, match=r"certainty_equivalence: the target r \+ V̂_1\(s'\) at step h=0 exceeds the "
                                             r"float range \(episode k=0: rewards\[k=0, h=0\] = 1e\+308, V̂_1\(s'=0\) = 1e\+308\); "
                                             r"values scale with the rewards"):
            certainty_equivalence(_huge(2))

    def test_linear_fit_beyond_the_float_range_is_located(self):
        # Bug fixed: Σ φ y = 2e308 overflowed and fitted Q iteration returned V̂_0 = inf.
        with pytest.raises(ValueError, match=r"the least-squares fit φᵀŵ_0 at step h=0 exceeds the float range "
                                             r"\(max \|r \+ V̂_1\(s'\)\| = 1e\+308\)"):
            certainty_equivalence(_huge(1), features=np.ones((1, 1, 1)), ridge=1.0)

    def test_tiny_rewards_are_exact(self):
        # subnormal rewards: means of equal values are exact, V̂_0 = H r
        res = certainty_equivalence(_huge(2, r=1e-310))
        assert res.V[:, 0].tolist() == [2e-310, 1e-310, 0.0]


def test_pevi_self_normalized_radius_at_a_subnormal_delta():
    # Bug fixed: β_h = (H−h)/2 √(2 ln(H/δ) + ln det(Λ_h/λ)) + √(λd)(H−h) had ln(H/δ) = ln(inf) at δ = 1e-320,
    # so every bonus was inf and Q̂ = 0. One-hot features, λ = 1, split data: step 1 sees n = (1, 1), so
    # Λ_1 = 2I, ln det(Λ_1/λ) = 2 ln 2 and Γ_1 = β_1/√2 with β_1 = ½√(2(ln 2 − ln δ) + 2 ln 2) + √2.
    res = pevi(_bandit_data(), np.eye(2).reshape(1, 2, 2), beta="self-normalized", ridge=1.0, delta=TINY, split=True)
    beta1 = 0.5 * math.sqrt(2 * (math.log(2) - math.log(TINY)) + 2 * math.log(2)) + math.sqrt(2)
    np.testing.assert_allclose(res.bonus[1], [[beta1 / math.sqrt(2)] * 2], rtol=1e-13)
    assert np.all(np.isfinite(res.bonus))


# --------------------------------------------------------------------------- CQL range
class TestConservativeRange:
    """CQL values beyond the float range are a located error, not ``−inf``."""

    def test_cql_huge_alpha(self):
        # π̂_b = (1/2, 1/2), r = 0.1 at both steps, α = 1e308: Q̂_1 = 0.1 − α, Q̂_0 = 0.1 + Q̂_1 − α ≈ −2e308.
        # Bug fixed: V̂_0 = −inf returned with an overflow warning.
        with pytest.raises(ValueError, match=r"cql: Q̂_0\(s=0, a=0\) = B̂ − α·penalty exceeds the float range "
                                             r"\(B̂ = -1e\+308, α·penalty = 1e\+308\)"):
            cql(_bandit_data(), alpha=1e308)
        # just inside the range: V̂_1 = 0.5 − α, V̂_0 = 0.5 + V̂_1 − α = 1 − 2α (= −2α in floats)
        res = cql(_bandit_data(), alpha=2.0**1022)
        assert res.V[:, 0].tolist() == [-(2.0**1023), -(2.0**1022), 0.0]

    def test_conservative_evaluation_huge_alpha(self):
        m = empirical_model(_bandit_data())
        with pytest.raises(ValueError, match=r"conservative_evaluation: π·Q̂_0\(s=0, a=0\) = B̂ − α·penalty exceeds "
                                             r"the float range"):
            conservative_evaluation(m, np.array([[1.0, 0.0]]), alpha=1e308)

    def test_cql_huge_rewards(self):
        # rewards 1e308 at both steps of one state and action: V̂_0 = 2e308 is beyond the range
        with pytest.raises(ValueError, match=r"cql: Q̂_0\(s=0, a=0\) = B̂ − α·penalty exceeds the float range \(B̂ = inf"):
            cql(_huge(2), alpha=0.0)
        assert cql(_huge(1), alpha=0.0).V.tolist() == [[1e308], [0.0]]


# --------------------------------------------------------------------------- rates: arguments and range
class TestRateArguments:
    """The coverage coefficient is a real number; sizes are Python ints of any size."""

    @pytest.mark.parametrize("C", ["2", True, None, 2 + 0j])
    def test_lcb_vi_rate_refuses_non_numbers(self, C):
        # Bug fixed: float(C_star) parsed '2' and read True as 1 (returning a rate); None and complex
        # raised float()'s TypeError.
        with pytest.raises(ValueError, match=rf"C_star must be >= 1 \(a concentrability coefficient\); got {re.escape(repr(C))}"):
            lcb_vi_rate(C, 1, 1, 1, 100, 0.1)

    @pytest.mark.parametrize("C", ["1", True, None, 1j])
    def test_offline_game_gap_rate_refuses_non_numbers(self, C):
        # (">= 1" since C_uni in [0, 1) is refused too, as lcb_vi_rate refuses C_star < 1)
        with pytest.raises(ValueError, match=rf"C_uni must be >= 1 .*; got {re.escape(repr(C))}"):
            offline_game_gap_rate(C, 1, (1, 1), 1, 100, 0.1)

    def test_large_coverage_gives_the_finite_rate(self):
        # Bug fixed: S C* = 10 · 1e308 overflowed and the rate was inf; exact 2 √(10 · 1e308 · ln 200 / 100)
        want = 2 * math.sqrt(1e307 * math.log(200.0))
        assert lcb_vi_rate(1e308, 10, 1, 1, 100, 0.1) == pytest.approx(want, rel=1e-13)

    def test_python_ints_beyond_the_float_range(self):
        # Bug fixed: each raised OverflowError 'int too large to convert to float'. References in log space:
        # lcb_vi_rate(1, S=1, A=1, H=1, K=10^400, 0.1) = 2 √(ln 20 / 10^400);
        # pevi_beta(1, 1, 10^400, 0.1) = √(ln(2 · 10^400) − ln 0.1);
        # offline_game_gap_rate(1, 1, (1, 1), 1, 10^400, 0.1) = 2·2·2 √(ln 80 / 10^400).
        tiny = math.exp(-200 * math.log(10))
        assert lcb_vi_rate(1.0, 1, 1, 1, 10**400, 0.1) == pytest.approx(2 * math.sqrt(math.log(20)) * tiny, rel=1e-12)
        assert pevi_beta(1, 1, 10**400, 0.1) == pytest.approx(math.sqrt(math.log(2) + 401 * math.log(10)), rel=1e-13)
        assert offline_game_gap_rate(1.0, 1, (1, 1), 1, 10**400, 0.1) == pytest.approx(
            8 * math.sqrt(math.log(80)) * tiny, rel=1e-12
        )
        # H(H + 1) = 10^400 (H = 10^200 steps, K = 10^401): 10^400 √((ln(2·10^200) + ln 10)/10^201) ≈ 6.8e300
        want = math.exp(400 * math.log(10) + 0.5 * (math.log(math.log(2e200) + math.log(10)) - 201 * math.log(10)))
        assert lcb_vi_rate(1.0, 1, 1, 10**200, 10**401, 0.1) == pytest.approx(want, rel=1e-12)
        # sizes whose rate itself is beyond the range: inf, as for C* = inf
        assert lcb_vi_rate(1.0, 10**700, 1, 1, 10, 0.1) == math.inf
        assert pevi_beta(10**200, 10**200, 1, 0.1) == math.inf


class TestBoundArraysHoldRealNumbers:
    """Array arguments of the offline bounds refuse text and complex entries (TypeError naming the argument)."""

    @pytest.mark.parametrize(
        ("call", "msg"),
        [
            # Bug fixed: the text "10" was parsed as the count 10 and a radius returned
            (lambda: hoeffding_radius("10", 1.0, 0.1), r"n must hold real numbers; got a string array"),
            # Bug fixed: complex entries lost their imaginary part with only a ComplexWarning
            (lambda: hoeffding_radius(10, 1.0 + 1j, 0.1), r"value_range must hold real numbers; got a complex array"),
            (lambda: empirical_bernstein_radius(10, np.array([0.1j]), 1.0, 0.1),
             r"variance must hold real numbers; got a complex array"),
            (lambda: pessimism_suboptimality_bound(np.ones((1, 1, 1)), np.array([[["0.5"]]])),
             r"bonus must hold real numbers; got a string array"),
            (lambda: elliptical_bonus(np.ones((1, 1, 1)) + 0j, np.eye(1)[None], 1.0),
             r"features must hold real numbers; got a complex array"),
            (lambda: elliptical_bonus(np.ones((1, 1, 1)), np.eye(1)[None] * 1j, 1.0),
             r"Lambda must hold real numbers; got a complex array"),
            (lambda: hybrid_npg_bound(1, 2, 1.0, ["0.0"]), r"critic_terms must hold real numbers; got a string array"),
        ],
    )
    def test_text_and_complex_are_refused(self, call, msg):
        with pytest.raises(TypeError, match=msg):
            call()

    def test_real_arguments_unchanged(self):
        # float32 and integer inputs are read as float64 as before: B √(ln(2/δ)/(2n)) at n = 3, δ = 0.1
        want = math.sqrt(math.log(20.0) / 6.0)
        assert float(hoeffding_radius(np.int32(3), np.float32(1.0), 0.1)) == pytest.approx(want, rel=1e-15)


class TestLearnerArraysHoldRealNumbers:
    """Features and policies given to the offline learners refuse text and complex entries."""

    def test_pevi_features(self):
        # Bug fixed: complex features lost their imaginary part (ComplexWarning) and text features were
        # parsed; PEVI ran on either.
        d = _bandit_data()
        with pytest.raises(TypeError, match=r"features must hold real numbers; got a complex array"):
            pevi(d, np.eye(2).reshape(1, 2, 2) + 1j, beta=1.0)
        with pytest.raises(TypeError, match=r"features must hold real numbers; got a string array"):
            pevi(d, np.array([[["1", "0"], ["0", "1"]]]), beta=1.0)

    def test_conservative_evaluation_policy(self):
        m = empirical_model(_bandit_data())
        with pytest.raises(TypeError, match=r"policy must hold real numbers; got a string array"):
            conservative_evaluation(m, np.array([["0.5", "0.5"]]), alpha=1.0)
        with pytest.raises(TypeError, match=r"policy must hold real numbers; got a complex array"):
            conservative_evaluation(m, np.array([[0.5 + 1j, 0.5]]), alpha=1.0)
        # real policies as before: π = (1/2, 1/2), α = 1, π̂_b = (1/2, 1/2) at both steps gives D_CQL = 0, so
        # V̂ = V^π = (1, 1/2, 0)
        assert conservative_evaluation(m, [[0.5, 0.5]], alpha=1.0)[:, 0].tolist() == [1.0, 0.5, 0.0]


def test_bounds_take_zero_dimensional_arrays_like_the_learners():
    # Bug fixed: the bounds' own checks took only Python/numpy scalars, so hoeffding_radius(10, 1, np.array(0.1))
    # raised "delta must be a probability in (0, 1); got array(0.1)" although lcb_vi(delta=np.array(0.1)) runs
    # (pevi_beta's xi and c and hybrid_npg_bound's eta likewise).
    assert float(hoeffding_radius(10, 1.0, np.array(0.1))) == float(hoeffding_radius(10, 1.0, 0.1))
    assert float(empirical_bernstein_radius(10, 0.1, 1.0, np.array(0.1))) == float(empirical_bernstein_radius(10, 0.1, 1.0, 0.1))
    assert pevi_beta(2, 3, 100, np.array(0.1), c=np.array(2.0)) == pevi_beta(2, 3, 100, 0.1, c=2.0)
    assert lcb_vi_rate(np.array(2.0), 1, 1, 1, 100, np.array(0.1)) == lcb_vi_rate(2.0, 1, 1, 1, 100, 0.1)
    np.testing.assert_array_equal(hybrid_npg_bound(1, 2, np.array(1.0), [0.0]), hybrid_npg_bound(1, 2, 1.0, [0.0]))
    with pytest.raises(ValueError, match=r"delta must be a probability in \(0, 1\); got array\(1\.5\)"):
        hoeffding_radius(10, 1.0, np.array(1.5))
    with pytest.raises(ValueError, match=r"delta must be a probability in \(0, 1\); got True"):
        hoeffding_radius(10, 1.0, True)


def test_bernstein_radius_refuses_a_negative_variance():
    # Bug fixed: V_n = −5 was clipped to 0, so the radius silently shrank to its variance-free part
    # 7 B ln(4/δ)/(3(n − 1)); a sample variance is never negative (np.var is >= 0).
    with pytest.raises(ValueError, match=r"variance must be a sample variance >= 0 where n >= 2; variance\[1\] = -5\.0"):
        empirical_bernstein_radius(np.array([10, 10]), np.array([0.1, -5.0]), 1.0, 0.1)
    # n < 2 ignores the variance (radius B), as for NaN
    assert float(empirical_bernstein_radius(1, -5.0, 1.0, 0.1)) == 1.0


def test_bernstein_bonus_uses_the_exact_sample_variance():
    # Bug fixed: the sample variance was one-pass (Σ y² − n ȳ²)/(n − 1), which cancels for targets near 0.9
    # with spread 1e-6 (V_n ≈ 9.0e-14 against Σ y² ≈ 810): here it gave 8.87e-14, 1.7% below the exact V_n,
    # so the Bernstein bonus fell below the radius √(2 V_n ln(4/δ')/n) + 7 B ln(4/δ')/(3(n − 1)) of the
    # exact V_n (by ~1e-8 relative; other seeds err upwards). H = S = A = 1, B = 1.
    n = 1000
    r = 0.9 + np.random.default_rng(12).random(n) * 1e-6
    d = EpisodeDataset(np.zeros((n, 2), int), np.zeros((n, 1), int), r[:, None], S=1, A=1)
    res = lcb_vi(d, bonus="bernstein", delta=0.1)
    ys = [Fraction(float(x)) for x in r]
    mu = sum(ys) / n
    var = float(sum((y - mu) ** 2 for y in ys) / (n - 1))
    L = math.log(4.0) - math.log(0.1)
    want = math.sqrt(2 * var * L / n) + 7 * L / (3 * (n - 1))
    assert res.bonus[0, 0, 0] >= want * (1 - 4e-16)
    assert res.bonus[0, 0, 0] == pytest.approx(want, rel=1e-14)


def test_hybrid_npg_bound_at_python_ints_beyond_the_float_range():
    # Bug fixed: H = 10^400 raised OverflowError 'int too large to convert to float' (H ln A); the bound
    # H ln A/(ηT) + H(H + 1)/(2T) + ... is beyond the range: inf. A = 10^400 actions: 2 · 400 ln 10 + 3 at T = 1.
    assert hybrid_npg_bound(10**400, 1, 1.0, [0.0, 1.0]).tolist() == [math.inf, math.inf]
    assert hybrid_npg_bound(2, 10**400, 1.0, [0.0]).tolist() == pytest.approx([800 * math.log(10) + 3], rel=1e-14)


def test_features_of_dimension_zero_are_refused():
    # Bug fixed: d = 0 raised numpy's "cannot reshape array of size 0 into shape (0)" (pevi, linear
    # certainty equivalence) and IndexError "index 0 is out of bounds" (elliptical_bonus).
    phi = np.ones((1, 2, 0))
    with pytest.raises(ValueError, match=r"features must have at least one dimension \(d >= 1\); got shape \(1, 2, 0\)"):
        pevi(_bandit_data(), phi, beta=1.0)
    with pytest.raises(ValueError, match=r"features must have at least one dimension \(d >= 1\)"):
        certainty_equivalence(_bandit_data(), features=phi)
    with pytest.raises(ValueError, match=r"features must have shape \(S, A, d\) or \(H, S, A, d\) with S, A, d >= 1; "
                                         r"got \(1, 2, 0\)"):
        elliptical_bonus(phi, np.zeros((1, 0, 0)), 1.0)


def test_pevi_subnormal_ridge_on_an_unspanned_feature_is_located():
    # Bug fixed: split data leave step 0's action 1 unseen, so Λ_0 = diag(2, λ) with λ = 1e-320; Λ_0⁻¹ = 1/λ
    # overflowed, inf·0 = NaN in φᵀΛ⁻¹φ, and pevi returned V̂_0 = NaN with NaN bonuses.
    with pytest.raises(ValueError, match=r"φᵀΛ_0⁻¹φ at step h=0 is not finite \(first at s=0, a=0\): Λ_0's smallest "
                                         r"eigenvalue 1e-320 \(ridge = 9\.99989e-321 .*\) is too small to invert"):
        pevi(_bandit_data(), np.eye(2).reshape(1, 2, 2), beta="self-normalized", split=True, ridge=1e-320)
    # a small normal ridge is fine: Γ_0(a=1) = β_0/√λ is finite
    res = pevi(_bandit_data(), np.eye(2).reshape(1, 2, 2), beta="self-normalized", split=True, ridge=1e-300)
    assert np.all(np.isfinite(res.bonus)) and np.all(np.isfinite(res.V))


def test_elliptical_bonus_of_a_subnormal_eigenvalue_is_located():
    # Bug fixed: Λ = diag(2, 1e-320) passes the positive-definiteness check but LAPACK's solve returned NaN,
    # so elliptical_bonus returned NaN bonuses (and pevi_bound failed on its own 'bonus must be finite').
    with pytest.raises(ValueError, match=r"Lambda\[0\] is too ill-conditioned to invert in floating point \(smallest "
                                         r"eigenvalue 1e-320\)"):
        elliptical_bonus(np.eye(2).reshape(1, 2, 2), np.diag([2.0, 1e-320])[None], 1.0)
    # Λ = diag(2, 1e-300): Γ = (1/√2, 1e150)
    np.testing.assert_allclose(
        elliptical_bonus(np.eye(2).reshape(1, 2, 2), np.diag([2.0, 1e-300])[None], 1.0), [[[2**-0.5, 1e150]]], rtol=1e-15
    )
