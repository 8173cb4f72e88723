"""Coverage coefficients at their floor C ≥ 1 and the rates that take them (helper-82).

Every coefficient of a target occupancy against a data occupancy is ≥ 1
(``max_x t(x)/d(x) ≥ Σ t/Σ d = 1``); floating-point occupancies sum to 1 only to their dtype's
tolerance, so a computed coefficient can fall just below 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.bounds import (
    all_policy_concentrability,
    discounted_concentrability,
    empirical_bernstein_radius,
    feature_covariance,
    hoeffding_radius,
    lcb_vi_rate,
    offline_game_gap_rate,
    pessimism_suboptimality_bound,
    relative_condition_number,
    single_policy_concentrability,
)
from rltheory.mdp import FiniteHorizonMDP, FiniteMDP

# two float32 occupancies one ulp apart, each a valid float32 law (sums 1 − 5.2e-8 and 1 + 4.1e-8)
T32 = np.array([0.6720976233482361, 0.28466862440109253, 0.04323370009660721], dtype=np.float32)
D32 = np.nextafter(T32, np.float32(1.0))


class TestConcentrabilityFloor:
    def test_single_policy_coefficient_of_float32_laws_is_one(self):
        # Bug fixed: the ratio max t/d = 0.99999994 (every entry of d one ulp above t's) was returned,
        # below the C* ≥ 1 of the definition, and lcb_vi_rate refused it.
        assert float(np.max(T32.astype(np.float64) / D32)) < 1.0  # the raw ratio is below 1
        C = single_policy_concentrability(T32, D32)
        assert C == 1.0
        # the pipeline coefficient -> rate works and gives the C* = 1 rate H(H+1)√(S C* ln(2HSA/δ)/K) = 2√(ln(60)/100)
        assert lcb_vi_rate(C, 1, 3, 1, 100, 0.1) == pytest.approx(
            2 * math.sqrt(math.log(60.0) / 100), rel=1e-14
        )

    def test_floor_keeps_coefficients_above_one(self):
        # closed form: t = (1/2, 1/2, 0), d = (1/4, 1/4, 1/2): C = 2 (the floor changes nothing above 1)
        assert (
            single_policy_concentrability(np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5]))
            == 2.0
        )
        assert single_policy_concentrability(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == math.inf

    def test_all_policy_and_discounted_coefficients_are_at_least_one(self):
        # one state, one action: every occupancy is 1 and C_all = C* = 1 exactly; in float32 the data
        # occupancy 1 + eps32 (accepted) gave a ratio 1/(1 + eps) < 1
        fh = FiniteHorizonMDP.stationary(
            np.ones((1, 1, 1), dtype=np.float32), np.zeros((1, 1), dtype=np.float32), H=1
        )
        d = np.array([[[1.0 + np.finfo(np.float32).eps]]], dtype=np.float32)
        assert all_policy_concentrability(fh, d) == 1.0
        mdp = FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), gamma=0.5)
        # target action 0, behaviour uniform: d* = (1, 0), d_b = (1/2, 1/2): C = 2
        assert discounted_concentrability(mdp, np.array([0]), np.array([[0.5, 0.5]])) == 2.0


class TestLcbViRateCoefficient:
    # C* = 1, S = A = H = 2, K = 100: H(H+1)√(S ln(2HSA/δ)/⌊K/H⌋)
    RATE1 = 2 * 3 * math.sqrt(2 * math.log(2 * 2 * 2 * 2 / 0.1) / 50)

    @pytest.mark.parametrize(
        "C",
        [
            # 0.99999988, the reported value, as float32
            np.float32(1.0) - np.finfo(np.float32).eps,
            np.array(np.float32(1.0) - np.finfo(np.float32).eps),  # as a 0-d float32 array
            np.float32(1.0 - 3e-6),  # within float32's slack 2·16·eps = 3.8e-6
            1.0 - 1e-9,  # a Python float within float64's slack 2e-8 (refused before: slack 1e-12)
        ],
    )
    def test_rounding_below_one_reads_as_one(self, C):
        # Bug fixed: each raised 'C_star must be >= 1'; now exactly the C* = 1 rate
        assert lcb_vi_rate(C, 2, 2, 2, 100, 0.1) == pytest.approx(self.RATE1, rel=1e-15)

    def test_value_just_below_one_is_not_a_smaller_rate(self):
        # Bug fixed: 1 − 1e-13 passed the old check and gave a rate below the C* = 1 one (C* < 1 is
        # no coefficient); it is now read as 1
        assert lcb_vi_rate(1.0 - 1e-13, 2, 2, 2, 100, 0.1) == lcb_vi_rate(1.0, 2, 2, 2, 100, 0.1)

    @pytest.mark.parametrize(
        ("C", "slack", "dtype"),
        [
            # the float32 value passed as a Python float is judged at float64's slack
            (0.99999988, "2e-08", "float64"),
            (np.float32(0.99999), "3.8e-06", "float32"),
            (np.float64(0.5), "2e-08", "float64"),
        ],
    )
    def test_values_below_the_slack_are_refused_with_it(self, C, slack, dtype):
        with pytest.raises(
            ValueError,
            match=rf"C_star must be >= 1 \(a concentrability coefficient\); got .* \(values down to 1 - {slack}, "
            rf"the rounding of {dtype} occupancies, count as 1\)",
        ):
            lcb_vi_rate(C, 2, 2, 2, 100, 0.1)

    @pytest.mark.parametrize("C", [math.nan, True, "1", None, np.array([1.0]), -math.inf])
    def test_non_coefficients_are_refused(self, C):
        with pytest.raises(ValueError, match=r"C_star must be >= 1"):
            lcb_vi_rate(C, 2, 2, 2, 100, 0.1)

    def test_infinite_coefficient_is_infinite_rate(self):
        assert lcb_vi_rate(np.float32(np.inf), 2, 2, 2, 100, 0.1) == math.inf


class TestLcbViRateSupport:
    """The C*-form rate bounds 2 Σ_h E_{d*}[Γ_h] by Cauchy–Schwarz over the pairs d*_h charges."""

    @staticmethod
    def _data_bound(A: int, K: int, delta: float) -> float:
        # H = S = 1, comparator uniform over A actions, data uniform (ρ = 1/A, so C* = 1), counts at the
        # smallest the count event allows, n = ⌈K ρ/2⌉; LCB-VI's Hoeffding bonus with δ' = δ/(HSA)
        n = math.ceil(K / A / 2)
        bonus = hoeffding_radius(np.full((1, 1, A), n), 1.0, delta / A)
        return pessimism_suboptimality_bound(np.full((1, 1, A), 1.0 / A), bonus)

    def test_stochastic_comparator_needs_support_sa(self):
        # Bug fixed: the rate took M = S always, valid only for a deterministic comparator; here
        # 2 Σ d* Γ = 2 √(ln 80/26) = 0.821 exceeds the M = S rate 2 √(ln 80/100) = 0.419.
        A, K, delta = 4, 100, 0.1
        data = self._data_bound(A, K, delta)
        assert data == pytest.approx(2 * math.sqrt(math.log(80.0) / 26), rel=1e-14)
        assert data > lcb_vi_rate(1.0, 1, A, 1, K, delta)  # the default (deterministic) form
        rate = lcb_vi_rate(1.0, 1, A, 1, K, delta, support=A)  # M = S A = 4: 2 √(4 ln 80/100)
        assert rate == pytest.approx(2 * math.sqrt(4 * math.log(80.0) / 100), rel=1e-14)
        assert data <= rate

    def test_deterministic_comparator_default(self):
        # the same data, comparator on action 0 only: 2 Γ(0) = 2 √(ln 80/26) ≤ 2 √(C* ln 80/100) with
        # C* = 1/(1/4) = 4 and M = S = 1 (the default)
        bonus = hoeffding_radius(np.full((1, 1, 4), 13), 1.0, 0.1 / 4)
        d_star = np.array([[[1.0, 0.0, 0.0, 0.0]]])
        C = single_policy_concentrability(d_star, np.full((1, 1, 4), 0.25))
        assert C == 4.0
        assert pessimism_suboptimality_bound(d_star, bonus) <= lcb_vi_rate(C, 1, 4, 1, 100, 0.1)
        assert lcb_vi_rate(C, 1, 4, 1, 100, 0.1) == lcb_vi_rate(C, 1, 4, 1, 100, 0.1, support=1)

    @pytest.mark.parametrize("M", [0, -1, True, 2.0, "4", np.array(4)])
    def test_bad_support_is_refused(self, M):
        with pytest.raises(ValueError, match=r"support must be a positive integer .*; got"):
            lcb_vi_rate(1.0, 1, 4, 1, 100, 0.1, support=M)


class TestFeatureCovarianceWeightsDtype:
    def _law(self) -> np.ndarray:
        # a float32 law over 21 pairs whose float32 normalisation leaves the sum 1 − 6.9e-8
        rng = np.random.default_rng(0)
        rng.random((7, 3))
        d = rng.random((7, 3)).astype(np.float32)
        d /= d.sum()
        assert abs(float(d.astype(np.float64).sum()) - 1.0) > 1e-8  # beyond float64's tolerance
        return d

    def test_float32_weights_with_float64_features(self):
        # Bug fixed: the weights were cast to the features' float64 and then refused ('d must sum to 1
        # over all its entries; it sums to 0.999999931082'); they are judged in float32 now.
        d = self._law()
        phi = np.eye(21).reshape(7, 3, 21)  # one-hot: Σ_d = diag(d) exactly
        sigma = feature_covariance(phi, d)
        assert sigma.dtype == np.float64
        np.testing.assert_array_equal(np.diag(sigma), d.reshape(-1).astype(np.float64))
        # one-hot consistency: κ(Σ_target, Σ_d) = C(target, d) (uniform target)
        target = np.full((7, 3), 1 / 21)
        kappa = relative_condition_number(feature_covariance(phi, target), sigma)
        assert kappa == pytest.approx(single_policy_concentrability(target, d), rel=1e-12)

    def test_float64_weights_keep_float64_tolerance(self):
        d = self._law().astype(np.float64)
        with pytest.raises(
            ValueError, match=r"d must sum to 1 over all its entries; it sums to 0\.99999993"
        ):
            feature_covariance(np.eye(21).reshape(7, 3, 21), d)
        # with float32 features the same weights are judged in float32 (as before)
        assert (
            feature_covariance(np.eye(21, dtype=np.float32).reshape(7, 3, 21), d).dtype
            == np.float32
        )


class TestRelativeConditionNumberMixedDtypes:
    """Each covariance is judged at its own dtype's rounding; the algebra runs in the promoted dtype."""

    @staticmethod
    def _rank3() -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(0)
        X = rng.standard_normal((3, 5))
        Y = rng.standard_normal((2, 3))
        return X.T @ X / 3, (Y @ X).T @ (
            Y @ X
        )  # Σ_data of rank 3 in R^5; Σ_target inside its range

    def test_float32_data_against_float64_target(self):
        # Bug fixed: Σ_data was cast to the target's float64 and its float32 rounding (eigenvalue
        # -1.1e-8 of an exactly rank-3 matrix) refused as 'not positive semidefinite'
        D, T_in = self._rank3()
        ref = relative_condition_number(T_in, D)  # all float64
        got = relative_condition_number(T_in, D.astype(np.float32))
        assert got == pytest.approx(ref, rel=1e-6)  # float32 rounding of Σ_data
        # the identity has mass outside range(Σ_data): ∞ in every dtype combination
        assert relative_condition_number(np.eye(5), D.astype(np.float32)) == math.inf

    def test_float64_data_against_float32_target(self):
        # Bug fixed: Σ_data = diag(1, 1e-9) given in float64 was cast to the float32 target's dtype and
        # its eigenvalue 1e-9 cut at float32's 2·eps = 2.4e-7: κ = ∞; exactly κ = 1e9 (the float64 answer)
        D = np.diag([1.0, 1e-9])
        assert relative_condition_number(np.eye(2), D) == pytest.approx(1e9, rel=1e-12)
        assert relative_condition_number(np.eye(2, dtype=np.float32), D) == pytest.approx(
            1e9, rel=1e-12
        )
        # float32 data keep float32's cut (documented): 1e-9 relative is rounding noise there
        assert relative_condition_number(np.eye(2), D.astype(np.float32)) == math.inf


class TestOfflineGameGapRateActions:
    @pytest.mark.parametrize("actions", [2, None, "22", {2, 3}, np.array(2)])
    def test_non_sequences_are_refused_by_name(self, actions):
        # Bug fixed: tuple(actions) raised "'int' object is not iterable" (no argument named) for 2 and
        # None, and a set {2, 2} would have dropped a player
        with pytest.raises(
            TypeError, match=r"actions must be a sequence \(tuple, list or 1-d array\)"
        ):
            offline_game_gap_rate(1.0, 1, actions, 1, 100, 0.1)

    def test_sequences_agree(self):
        # 2 n H (H+1) √(S J C ι/⌊K/H⌋) with n = 2, J = 4, ι = ln(4·2·1·1·4/0.1) = ln 320
        want = 2 * 2 * 1 * 2 * math.sqrt(4 * math.log(320.0) / 100)
        for acts in ((2, 2), [2, 2], np.array([2, 2])):
            assert offline_game_gap_rate(1.0, 1, acts, 1, 100, 0.1) == pytest.approx(
                want, rel=1e-14
            )


def test_rates_and_radii_are_monotone_in_samples_and_confidence():
    # Stated monotonicity: every radius and rate is non-increasing in the sample size (n, K) and in δ
    # (−ln δ grows as δ shrinks), non-decreasing in the coverage coefficient; radii never exceed B.
    rng = np.random.default_rng(82)
    for _ in range(400):
        C = 1.0 + float(rng.exponential(3.0))
        S, A, H = (int(v) for v in rng.integers(1, 6, 3))
        K = int(rng.integers(1, 5000))
        d = float(rng.uniform(1e-6, 0.9))
        r = lcb_vi_rate(C, S, A, H, K, d)
        assert lcb_vi_rate(C, S, A, H, K + 1, d) <= r <= lcb_vi_rate(C * 1.1, S, A, H, K, d)
        assert lcb_vi_rate(C, S, A, H, K, d * 1.1) <= r
        g = offline_game_gap_rate(C, S, (A, 2), H, K, d)
        assert offline_game_gap_rate(C, S, (A, 2), H, K + 1, d) <= g
        assert offline_game_gap_rate(C, S, (A, 2), H, K, d * 1.1) <= g
        n, B = float(rng.integers(0, 100)), float(rng.uniform(0.0, 5.0))
        v = float(rng.uniform(0.0, B * B / 4))
        h = float(hoeffding_radius(n, B, d))
        assert float(hoeffding_radius(n + 1, B, d)) <= h <= B
        assert float(hoeffding_radius(n, B, d * 1.1)) <= h
        e = float(empirical_bernstein_radius(n, v, B, d))
        assert float(empirical_bernstein_radius(n + 1, v, B, d)) <= e <= B
        assert float(empirical_bernstein_radius(n, v, B, d * 1.1)) <= e
