"""Average-reward certificates count round-off: RVI's Odoni bounds, unichain PI's and the LP's gap.

The models are the probe's random ones (seeded), in float32 or float64 and at reward scales up to
1e6. The reference gain is computed independently and more accurately: every deterministic policy's
stationary distribution in float64 on the row-normalised arrays (the model the certificates are
about), ``g* = max_π μ_πᵀ r_π``.
"""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.errors import ConvergenceWarning
from rltheory.mdp import (
    FiniteMDP,
    average_linear_program,
    average_policy_iteration,
    relative_value_iteration,
)
from rltheory.testing import exact_solve


def _probe_model(seed: int, dtype: type, scale: float) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    S, A = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    P = rng.dirichlet(np.ones(S), size=(S, A))
    R = rng.uniform(size=(S, A))
    P, R = P.astype(dtype), (R * scale).astype(dtype)
    P = (P / P.sum(-1, keepdims=True)).astype(dtype)
    return FiniteMDP(P, R, gamma=None)


def _reference_gains(mdp: FiniteMDP) -> tuple[float, dict[tuple[int, ...], float]]:
    """``g*`` and every deterministic policy's gain, exactly (fractions) on the row-normalised
    stored arrays (P > 0, so every chain is unichain): ``μᵀ(I − P_π) = 0``, ``Σ μ = 1``."""
    P = np.asarray(mdp.P)
    R = np.asarray(mdp.R)
    S, A = R.shape
    Pf = [[[Fraction(float(x)) for x in P[s, a]] for a in range(A)] for s in range(S)]
    Pf = [[[x / sum(row) for x in row] for row in Ps] for Ps in Pf]
    gains = {}
    for pi in itertools.product(range(A), repeat=S):
        M = [[Fraction(int(i == j)) - Pf[j][pi[j]][i] for j in range(S)] for i in range(S)]
        M[-1] = [Fraction(1)] * S
        mu = exact_solve(M, [Fraction(0)] * (S - 1) + [Fraction(1)])
        gains[pi] = sum(m * Fraction(float(R[s, pi[s]])) for s, m in enumerate(mu))
    return max(gains.values()), gains


def _policy(res) -> tuple[int, ...]:
    return tuple(int(a) for a in np.asarray(res.policy))


def test_rvi_bound_counts_roundoff_of_the_computed_odoni_bounds():
    # float32, S = 3, A = 1, rewards ~1e6, tol 1e-6: the computed T h − h reached a rounding fixed
    # point with sp(Δ) = 0, and RVI returned converged=True, bound 0 while |gain − g*| = 0.0015.
    # The bound now adds the round-off of the computed Δ; tol is below that floor, so the run
    # stops unconverged with a warning naming the floor, and its bound still holds.
    mdp = _probe_model(2, np.float32, 1e6)
    g_star, gains = _reference_gains(mdp)
    with pytest.warns(ConvergenceWarning, match="round-off floor"):
        res = relative_value_iteration(mdp, tol=1e-6, max_iter=5000)
    assert not res.converged and res.iterations < 5000
    bound = Fraction(float(res.bound))
    assert abs(Fraction(float(res.gain)) - g_star) <= bound / 2
    assert g_star - gains[_policy(res)] <= bound


@pytest.mark.parametrize("seed, dtype, scale", [(s, np.float32, (1.0, 100.0, 1e6)[s % 3]) for s in range(12)]
                         + [(s, np.float64, (1.0, 1e6, 1e9)[s % 3]) for s in range(12)])
def test_rvi_bound_holds_on_random_models(seed, dtype, scale):
    mdp = _probe_model(seed, dtype, scale)
    g_star, gains = _reference_gains(mdp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = relative_value_iteration(mdp, tol=1e-12 * scale, max_iter=5000)
    bound = Fraction(float(res.bound))
    assert abs(Fraction(float(res.gain)) - g_star) <= bound / 2
    assert g_star - gains[_policy(res)] <= bound


@pytest.mark.parametrize(
    "solver, seed, dtype, scale",
    [
        # PI: the Odoni gap max_s (T h − h)(s) − g of the computed h and g was 0 while |g − g*| was
        # 0.0015 (float32, S = 3, A = 1, rewards ~1e6) and 2.1e-17 (float64, S = 3, A = 2, unit
        # rewards): the computed gain is not exact
        (average_policy_iteration, 2, np.float32, 1e6),
        (average_policy_iteration, 0, np.float64, 1.0),
        # LP: the gap max(T h − h) − gain of the LP's duals was −0.55 (negative) with
        # |gain − g*| = 0.357 (float32, S = 2, A = 2), and 0 with error 5.5e-11 (float64, rewards 1e6)
        (average_linear_program, 6, np.float32, 1.0),
        (average_linear_program, 1, np.float64, 1e6),
    ],
    ids=["pi-float32", "pi-float64", "lp-float32", "lp-float64"],
)
def test_unichain_gain_bound_counts_roundoff(solver, seed, dtype, scale):
    # Both now bracket g* and g^π by min_s (T^π h − h)(s) and max_s (T h − h)(s) of the returned
    # policy's bias with their round-off (average._policy_gap): the bound is > 0 and covers the error.
    mdp = _probe_model(seed, dtype, scale)
    g_star, gains = _reference_gains(mdp)
    res = solver(mdp)
    bound = Fraction(float(res.bound))
    assert res.converged and bound > 0
    assert abs(Fraction(float(res.gain)) - g_star) <= bound
    assert g_star - gains[_policy(res)] <= bound


@pytest.mark.parametrize("seed", range(40))
def test_linear_program_solves_float32_models(seed):
    # float32 rows of P summed to 1 only to ~1e-8 once cast to float64, above HiGHS's feasibility
    # tolerance: 13 of these 40 valid models raised SolverError ("infeasible"). The LP is now built
    # from the row-normalised P/σ; its answer agrees with policy iteration's certificate.
    mdp = _probe_model(seed, np.float32, (1.0, 100.0, 1e6)[seed % 3])
    g_star, gains = _reference_gains(mdp)
    res = average_linear_program(mdp)
    bound = Fraction(float(res.bound))
    assert abs(Fraction(float(res.gain)) - g_star) <= bound
    assert g_star - gains[_policy(res)] <= bound
