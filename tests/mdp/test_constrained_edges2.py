"""Edge cases of the CMDP layer beyond the ranges of test_constrained.py: argument types located by
field, values and multipliers beyond the float range, the infeasibility diagnosis at any scale."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.errors import SolverError
from rltheory.mdp import ConstrainedMDP, FiniteMDP, dual_function, lagrangian, solve_cmdp
from rltheory.testing import exact_optimal_values, exact_policy_values


def _bandit(gamma: float = 0.5, R=(0.0, 1.0)) -> FiniteMDP:
    return FiniteMDP(np.ones((1, 2, 1)), np.array([R], dtype=float), gamma)


@pytest.mark.parametrize(
    "field, C, b",
    [
        ("C", np.array([[[0.0, 1.0 + 1j]]]), np.array([1.0])),
        ("C", [[["a", "b"]]], np.array([1.0])),
        ("b", np.array([[[0.0, 1.0]]]), np.array([1.0 + 0j])),
        ("b", np.array([[[0.0, 1.0]]]), ["x"]),
    ],
)
def test_complex_or_text_costs_and_thresholds_name_their_field(field, C, b):
    # the type error said "input must hold real numbers" for either field
    with pytest.raises(TypeError, match=rf"^{field} must hold real numbers"):
        ConstrainedMDP(_bandit(), C, b)


@pytest.mark.parametrize("lam, what", [(np.array([1.0 + 2j]), "complex"), (["a"], "string")])
@pytest.mark.parametrize("fn", ["dual_function", "lagrangian"])
def test_complex_or_text_multipliers_are_refused_by_name(fn, lam, what):
    # λ = 1 + 2j was cast to 1.0 with only a ComplexWarning (D(1) = 1 returned); text raised numpy's
    # unlocated "could not convert string to float"
    cmdp = ConstrainedMDP(_bandit(), np.array([[[0.0, 1.0]]]), np.array([1.0]))
    call = {
        "dual_function": lambda: dual_function(cmdp, lam),
        "lagrangian": lambda: lagrangian(cmdp, np.array([[0.5, 0.5]]), lam),
    }[fn]
    with pytest.raises(TypeError, match=rf"^lam must hold real numbers; got a {what} array"):
        call()


def test_value_beyond_the_float_range_is_a_located_error():
    # one state, gamma = 0.999, rewards (0, 1e307), cost 1 on action 1 with b = 500: action 1 is played
    # half the time, V* = 0.5 · 1e307/(1 − γ) = 5e309 > 1.8e308. The old code returned value = inf,
    # duals = inf and duality_gap = nan with overflow warnings.
    cmdp = ConstrainedMDP(_bandit(0.999, (0.0, 1e307)), np.array([[[0.0, 1.0]]]), np.array([500.0]))
    with np.errstate(
        over="raise", invalid="raise"
    ):  # the located error comes first, not a floating-point warning
        with pytest.raises(
            ValueError,
            match=r"^solve_cmdp: the optimal value V_R\(μ\) left the float64 range: "
            r"max\|R\| = 1e\+307 at gamma = 0\.999.*= inf\. .*divide R by a power of 2",
        ):
            solve_cmdp(cmdp)
    # R / 2^6 is in range: the remedy the message gives works (V* = 5e309 / 64)
    small = ConstrainedMDP(_bandit(0.999, (0.0, 1e307 / 64)), cmdp.C, cmdp.b)
    assert solve_cmdp(small).value == pytest.approx(0.5 * 1e307 / 64 / (1 - 0.999), rel=1e-9)


def test_multiplier_beyond_the_float_range_is_a_located_error():
    # rewards (0, 1), costs (0, 1e-310) with b = 0.5e-310 at gamma = 0: p* = 1/2 and λ* = ∂V*/∂b = 1e310,
    # beyond the float range; the old code reported duals = [inf] and dual_value = inf
    cmdp = ConstrainedMDP(_bandit(0.0), np.array([[[0.0, 1e-310]]]), np.array([0.5e-310]))
    with np.errstate(over="raise", invalid="raise"):
        with pytest.raises(
            ValueError,
            match=r"the multiplier λ\[0\] = ∂V\*/∂b\[0\] = inf left the float64 range.*"
            r"max\|C0\| = 1e-310, b\[0\] = 5e-311; .*multiplied by a power of 2",
        ):
            solve_cmdp(cmdp)


def test_multiplier_in_range_does_not_overflow_on_the_way():
    # gamma = 0, one state, rewards (0, 1e307, 0), costs (0, 1, 1e10), b = 1/2: play action 1 w.p. 1/2,
    # V* = 5e306, λ* = 1e307 (each unit of budget buys 1e307 of reward), D(λ*) = V*. The constraint's
    # scale is 1e10, and the marginal times the reward scale (1e317) overflowed: λ was reported inf.
    # (dual_function cannot check it here: its Lagrangian reward R − λC is −1e317 on action 2.)
    mdp = FiniteMDP(np.ones((1, 3, 1)), np.array([[0.0, 1e307, 0.0]]), 0.0)
    cmdp = ConstrainedMDP(mdp, np.array([[[0.0, 1.0, 1e10]]]), np.array([0.5]))
    with np.errstate(over="raise", invalid="raise"):
        sol = solve_cmdp(cmdp)
    assert sol.value == pytest.approx(5e306, rel=1e-12)
    assert float(sol.duals[0]) == pytest.approx(1e307, rel=1e-12)
    assert sol.dual_value == pytest.approx(5e306, rel=1e-12)
    assert lagrangian(cmdp, np.asarray(sol.policy), sol.duals) == pytest.approx(5e306, rel=1e-12)


@pytest.mark.parametrize(
    "cost, b, shown",
    [
        # 1000 · 1e307 = 890.03 · 2^1020 (2^1020 the power of two of 1e307)
        (
            1e307,
            1e308,
            r"min_π V_C0\(μ\) = 890\.03·2\^1020 \(beyond the float range\) > b\[0\] = 1e\+308",
        ),
        (1e300, 1e302, r"min_π V_C0\(μ\) = 1e\+303 > b\[0\] = 1e\+302"),
    ],
)
def test_infeasibility_diagnosis_at_huge_costs(cost, b, shown):
    # every action costs `cost` at gamma = 0.999: min_π V_C = 1000 · cost > b. At cost 1e307 that minimum
    # (1e310) is beyond the float range, and the diagnosis failed inside policy_iteration with
    # "policy_iteration: the values of this model left the float64 range: max|R| = 1e+307" (a ValueError
    # naming the wrong function and field) instead of the SolverError with HiGHS's status.
    cmdp = ConstrainedMDP(_bandit(0.999), np.full((1, 1, 2), cost), np.array([b]))
    with pytest.raises(
        SolverError, match=r"the CMDP is infeasible \(HiGHS status 2.*" + shown
    ) as info:
        solve_cmdp(cmdp)
    assert info.value.status == 2


def test_dual_function_names_a_lagrangian_reward_beyond_the_float_range():
    # rewards (0, 1e307, 0), costs (0, 1, 1e10), lam = 1e307: R − λC = −1e317 on action 2. The old code
    # failed in the model check of the Lagrangian MDP with "R must be finite; R(s=0, a=2) = -inf" (a field
    # the caller did not pass) after an overflow warning.
    mdp = FiniteMDP(np.ones((1, 3, 1)), np.array([[0.0, 1e307, 0.0]]), 0.0)
    cmdp = ConstrainedMDP(mdp, np.array([[[0.0, 1.0, 1e10]]]), np.array([0.5]))
    with np.errstate(over="raise", invalid="raise"):
        with pytest.raises(
            ValueError,
            match=r"^dual_function: the Lagrangian reward R - lamᵀC leaves the float64 range "
            r"at \(s=0, a=2\) \(R = 0, C\[:, 0, 2\] = \[10000000000\.0\], lam = \[1e\+307\]\)",
        ):
            dual_function(cmdp, np.array([1e307]))
    # R and lam divided by 2^40 as the message says are in range: D = max_a (R − λC)(a)/2^40 + λb/2^40 = λb/2^40
    half = ConstrainedMDP(mdp.replace(R=np.asarray(mdp.R) / 2**40), cmdp.C, cmdp.b)
    assert dual_function(half, np.array([1e307 / 2**40]))[0] == pytest.approx(
        0.5 * 1e307 / 2**40, rel=1e-12
    )


@pytest.mark.parametrize("seed, gamma", [(4, 1 - 1e-10), (6, 1 - 1e-12), (12, 1 - 1e-12)])
def test_discount_close_to_one_is_solved_not_declared_infeasible_or_unbounded(seed, gamma):
    # Random 3×2 CMDPs whose exact least cost min_π V_C(μ) is 51%, 41% and 50% of b (exact rational V*):
    # feasible with a wide margin. With q ~ 1/(1−γ) the flow rows cancel below HiGHS's absolute tolerances
    # and the old code raised "HiGHS failed on the CMDP LP (status 3): The problem is unbounded" (seed 4)
    # or "the CMDP is infeasible (HiGHS status 2 ...): each constraint is satisfiable alone, but not all at
    # once" (seeds 6, 12; one constraint). The returned policy's exact cost and value (rationals) agree.
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(3), size=(3, 2))
    R, C = rng.random((3, 2)), rng.random((1, 3, 2))
    b = rng.uniform(0.2, 0.8) / (1 - gamma)
    assert -sum(exact_optimal_values(P, -C[0], gamma)) / 3 < Fraction(b) / 2 * Fraction(21, 20)
    sol = solve_cmdp(ConstrainedMDP(FiniteMDP(P, R, gamma), C, np.array([b])))
    pi = np.asarray(sol.policy)
    cost = sum(exact_policy_values(P, C[0], gamma, pi)) / 3
    value = sum(exact_policy_values(P, R, gamma, pi)) / 3
    assert cost <= Fraction(b) * (1 + Fraction(1, 10**12))
    assert abs(Fraction(float(sol.costs[0])) - cost) <= cost / 10**12
    assert abs(Fraction(sol.value) - value) <= value / 10**12
    assert float(sol.duals[0]) >= 0.0
