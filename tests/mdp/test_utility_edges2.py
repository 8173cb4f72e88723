"""Edge cases of the general-utility layer beyond the ranges of test_utility.py: numpy scalars as
thresholds; complex and text tables refused by field."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import (
    FiniteMDP,
    kl_divergence,
    linear_utility,
    neg_kl_utility,
    occupancy_measure,
    quadratic_utility,
    shadow_reward,
    solve_general_utility,
)
from rltheory.mdp.utility import _scale
from rltheory.testing import exact_optimal_values


def _bandit() -> FiniteMDP:
    return FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)


@pytest.mark.parametrize("b", [np.int64(0), np.array(0.5), np.float32(0.5), 1])
def test_numpy_and_integer_thresholds_are_numbers(b):
    # one state, rewards (0, 1), constraint <r, d> <= b: the optimum puts min(b, 1) on action 1, so
    # F* = min(b, 1). np.int64(0) and the 0-d array were refused ("threshold must be a finite number").
    R = np.array([[0.0, 1.0]])
    sol = solve_general_utility(_bandit(), linear_utility(R), [(linear_utility(R), b)])
    want = min(float(b), 1.0)
    assert sol.value == pytest.approx(want, abs=1e-9)
    assert sol.kkt_residual <= 1e-7


def test_threshold_beyond_the_float_range_is_a_located_error():
    # an int beyond the float range crashed in np.isfinite with numpy's unlocated TypeError
    R = np.array([[0.0, 1.0]])
    with pytest.raises(
        ValueError, match=r"constraints\[0\] threshold must be a finite number; got 1000"
    ):
        solve_general_utility(_bandit(), linear_utility(R), [(linear_utility(R), 10**400)])


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda x: linear_utility(x), "r"),
        (lambda x: quadratic_utility(x, 1.0), "r"),
        (lambda x: quadratic_utility(np.zeros((1, 2)), 1.0, target=x), "target"),
        (lambda x: neg_kl_utility(x), "d_expert"),
        (lambda x: kl_divergence(x), "d_expert"),
        (lambda x: shadow_reward(linear_utility(np.zeros((1, 2))), x), "d"),
    ],
)
@pytest.mark.parametrize(
    "x, what", [(np.array([[0.5, 0.5 + 1j]]), "complex"), ([["a", "b"]], "string")]
)
def test_complex_or_text_tables_are_refused_by_field(make, field, x, what):
    # complex tables were cast to their real parts with only a ComplexWarning (linear_utility returned
    # a utility of r = (0.5, 0.5)); text raised numpy's unlocated "could not convert string to float"
    with pytest.raises(TypeError, match=rf"^{field} must hold real numbers; got a {what} array"):
        make(x)


def _model(seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(3), size=(3, 2)), rng.random((3, 2))


@pytest.mark.parametrize("scale", [1e-310, 1.7e308])
@pytest.mark.parametrize("gamma", [0.0, 0.9])
def test_linear_utility_at_the_ends_of_the_float_range_is_the_exact_optimum(scale, gamma):
    # max_d <r, d> = (1 − γ) μᵀV* (μ uniform), V* exact in rationals for the stored r. Rewards 1e-310
    # (subnormal) made the scale ρ = 2^-1030 and 1/ρ overflowed: cvxpy refused the program ("Problem data
    # contains NaN or Inf"); rewards 1.7e308 rounded ρ up to 2^1024: OverflowError in _scale.
    P, R0 = _model()
    R = scale * R0
    sol = solve_general_utility(FiniteMDP(P, R, gamma), linear_utility(R))
    want = float(
        (1 - Fraction(gamma)) * sum(exact_optimal_values(P, R, gamma)) / 3
    )  # (V* itself may overflow)
    assert sol.value == pytest.approx(want, rel=1e-9)
    assert sol.kkt_residual <= 1e-7


def test_kkt_certificate_checks_the_sign_conditions_at_huge_rewards():
    # rewards 1.7e308, gamma 0.9: the reduced gradient formed in the original units (ρν, ρ = 2^1023)
    # overflowed to NaN in every coordinate, so the sign conditions d >= 0, g <= 0, g ⊙ d = 0 were
    # skipped and only the flow residual was reported. A solve stopped at tolerance 1e-2 must be flagged,
    # as it is at unit scale.
    P, R0 = _model()
    for R in (R0, 1.7e308 * R0):
        loose = solve_general_utility(
            FiniteMDP(P, R, 0.9),
            linear_utility(R),
            solver="SCS",
            solver_options={"eps_abs": 1e-2, "eps_rel": 1e-2, "max_iters": 50},
        )
        assert loose.kkt_residual > 1e-4


def test_float32_expert_occupancy_is_judged_at_float32_precision():
    # A 5×6 float32 table normalised in float32 sums to 1 ± 1e-7 in float64; the 1e-8 check refused it
    # ("d_expert must be a non-negative table summing to 1; sums to 1.00000008917"). It is now judged at
    # float32's 16 eps and divided by its sum, so KL(d_E ‖ d_E) = 0 and -KL is maximised at d_E.
    rng = np.random.default_rng(0)
    tables = [rng.dirichlet(np.ones(30)).astype(np.float32).reshape(5, 6) for _ in range(20)]
    tables = [t / t.sum() for t in tables]
    assert (
        max(abs(float(t.astype(np.float64).sum()) - 1.0) for t in tables) > 1e-8
    )  # the case at hand
    for t in tables:
        dE = t.astype(np.float64) / t.astype(np.float64).sum()
        assert kl_divergence(t).value(dE) == pytest.approx(0.0, abs=1e-15)
        assert neg_kl_utility(t).value(dE) == pytest.approx(0.0, abs=1e-15)
    # a float32 table off by 1% is still refused, with the tolerance it was judged at
    with pytest.raises(
        ValueError, match=r"d_expert must be a non-negative table summing to 1 \(atol=1\.91e-06\)"
    ):
        neg_kl_utility(np.full((2, 3), 1 / 6, dtype=np.float32) * 1.01)


def _kl_ball_around_an_occupancy(seed: int):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(3), size=(3, 2))
    mdp = FiniteMDP(P, rng.random((3, 2)), 0.9)
    dE = np.asarray(occupancy_measure(mdp, rng.dirichlet(np.ones(2), size=3)))
    return mdp, dE


@pytest.mark.parametrize("seed", [0, 2, 4])
def test_kkt_certificate_is_not_claimed_when_slater_fails(seed):
    # KL(d ‖ d_E) ≤ 0 with d_E an occupancy: the feasible set is {d_E}, F* = ⟨r, d_E⟩ exactly, and no
    # multiplier exists (Slater fails). The old code certified the solver's point with kkt_residual 8.6e-9
    # (seed 0) while its value was 6.5e-7 above F*: a certificate below the error it certifies.
    mdp, dE = _kl_ball_around_an_occupancy(seed)
    R = np.asarray(mdp.R)
    sol = solve_general_utility(mdp, linear_utility(R), [(kl_divergence(dE), 0.0)])
    assert abs(sol.value - float(np.sum(R * dE))) <= sol.kkt_residual  # inf: nothing is claimed
    assert sol.slater_slack <= 1e-8


def test_slater_slack_of_a_proper_trust_region_keeps_the_certificate():
    # radius b = 0.05 around d_E: the largest slack is at d_E itself (KL(d ‖ d_E) ≥ 0 = KL(d_E ‖ d_E), and
    # d_E is an occupancy), ξ = 0.05 in the constraint's unit scale ρ (its power-of-two size), and the
    # KKT residual certifies the optimum as before
    mdp, dE = _kl_ball_around_an_occupancy(0)
    G = kl_divergence(dE)
    sol = solve_general_utility(mdp, linear_utility(mdp.R), [(G, 0.05)])
    assert sol.slater_slack == pytest.approx(0.05 / _scale(G, 3, 2, 0.05), abs=1e-8)
    assert sol.kkt_residual <= 1e-7
    # affine constraints need no strict feasibility: no slack is computed
    lin = solve_general_utility(
        mdp, linear_utility(mdp.R), [(linear_utility(np.ones((3, 2))), 1.0)]
    )
    assert lin.slater_slack == float("inf") and lin.kkt_residual <= 1e-7
