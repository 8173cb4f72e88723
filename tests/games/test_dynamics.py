"""Learning dynamics: exploitability under the theorems' bounds at every iterate, backends."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.backend import to_numpy
from rltheory.bounds.games import (
    hedge_gap_bound,
    optimistic_first_round,
    optimistic_gap_bound,
    regret_matching_gap_bound,
)
from rltheory.errors import InvalidModelError
from rltheory.games import (
    duality_gap,
    fictitious_play,
    hedge,
    ogda,
    optimistic_hedge,
    project_simplex,
    regret_matching,
    solve_zero_sum,
)
from rltheory.games.zoo import rock_paper_scissors
from rltheory.testing import matrix_games

T = 300


def _range(A):
    r = float(np.max(A) - np.min(A))
    return r if r > 0 else 1.0


@given(matrix_games(max_actions=4))
@settings(max_examples=15)
def test_hedge_under_bound_every_iterate(A):
    m, n = A.shape
    res = hedge(A, T)
    t = np.arange(1, T + 1)
    ex, ey = float(res.eta[0]), float(res.eta[1])
    # a player with one action has zero regret; its term is dropped (ln 1 = 0, η = 0)
    b = (
        sum(
            (math.log(k) / e + e * t * _range(A) ** 2 / 8.0) if k > 1 else 0.0
            for k, e in ((m, ex), (n, ey))
        )
        / t
    )
    if m > 1 and n > 1:
        np.testing.assert_allclose(b, hedge_gap_bound(t, m, n, ex, ey, _range(A)))
    assert np.all(res.trace["gap_avg"] <= b + 1e-9 * _range(A))


@given(matrix_games(max_actions=4), st.booleans())
@settings(max_examples=15)
def test_regret_matching_under_bound_every_iterate(A, plus):
    m, n = A.shape
    res = regret_matching(A, T, plus=plus)
    b = regret_matching_gap_bound(np.arange(1, T + 1), m, n, _range(A))
    assert np.all(res.trace["gap_avg"] <= b + 1e-12)


@given(matrix_games(max_actions=4))
@settings(max_examples=15)
def test_optimistic_methods_under_one_over_t_bound(A):
    # Changed on purpose (helper-56): the bound asserted here was (D_x + D_y)/(ηt), which the RVU
    # argument (Syrgkanis et al. 2015, Props. 5 and 7) does not give for rltheory's dynamics:
    # their round 1 is played uniform with no prediction, and that round's error ρ² stays in
    # the sum. At η = 1/R on A = [[1, 0]] OMWU exceeds (D_x + D_y)/(ηt) by 0.3%
    # (test_h56_optimistic_constants.py). The theorem's bound [(D_x + D_y)/η + η ρ²]/t is
    # asserted instead, with OGDA's exact D = (1 − 1/k)/2 in place of the former 1/2.
    m, n = A.shape
    t = np.arange(1, T + 1)
    om = optimistic_hedge(A, T)
    b = optimistic_gap_bound(
        t, math.log(m), math.log(n), float(om.eta[0]), first_round=optimistic_first_round(A)
    )
    assert np.all(om.trace["gap_avg"] <= b + 1e-9 * _range(A))
    og = ogda(A, T)
    b = optimistic_gap_bound(
        t,
        (1.0 - 1.0 / m) / 2.0,
        (1.0 - 1.0 / n) / 2.0,
        float(og.eta[0]),
        first_round=optimistic_first_round(A, euclidean=True),
    )
    assert np.all(og.trace["gap_avg"] <= b + 1e-9 * _range(A))


def test_trace_matches_duality_gap_of_averages():
    A = np.random.default_rng(0).standard_normal((3, 4))
    res = regret_matching(A, 50)
    assert res.trace["gap_avg"][-1] == pytest.approx(float(duality_gap(A, res.x, res.y)), abs=1e-12)
    assert res.trace["gap_last"][-1] == pytest.approx(
        float(duality_gap(A, res.x_last, res.y_last)), abs=1e-12
    )


def test_omwu_last_iterate_converges_on_rps_hedge_does_not():
    # RPS has a unique (interior) equilibrium: OMWU's last iterate converges linearly (Wei et
    # al. 2021, for η ≤ 1/(8R) as restated by Cai et al. 2025; here η = 0.2 > 1/48, an
    # observation beyond that step) while plain Hedge's last iterate cycles away from it.
    A = rock_paper_scissors((1.0, 2.0, 3.0))
    om = optimistic_hedge(A, 1000, eta=0.2)
    assert om.trace["gap_last"][-1] <= 1e-8
    assert om.trace["gap_last"][-1] < om.trace["gap_last"][500] < om.trace["gap_last"][100]
    hd = hedge(A, 1000, eta=0.2)
    assert hd.trace["gap_last"][-1] > 0.1


def test_average_iterates_approach_minimax_strategies():
    A = rock_paper_scissors((1.0, 2.0, 3.0))
    v, x, y = solve_zero_sum(A)
    res = optimistic_hedge(A, 3000)
    np.testing.assert_allclose(res.x, x, atol=5e-3)
    fp = fictitious_play(A, 3000)
    assert fp.trace["gap_avg"][-1] < 0.1 < fp.trace["gap_avg"][10]


def test_backends_agree(xp):
    A = np.random.default_rng(1).standard_normal((2, 3, 3))
    for f in (fictitious_play, regret_matching, hedge, optimistic_hedge, ogda):
        ref = f(A, 40)
        out = f(xp.asarray(A), 40)
        np.testing.assert_allclose(to_numpy(out.x), ref.x, atol=1e-12)
        np.testing.assert_allclose(out.trace["gap_avg"], ref.trace["gap_avg"], atol=1e-12)


@pytest.mark.parametrize("f", [optimistic_hedge, ogda])
def test_float32_runs_are_not_rejected_by_their_own_iterates(f):
    """Bug found here: the driver scored every round with the public ``duality_gap``, which
    validates ``x`` and ``y``; a float32 run of OMWU or OGDA drifts by ~5e-6 off the simplex
    within 2000 rounds and was aborted with "each y[:] must sum to 1". The trace now uses the
    unchecked kernel and matches the float64 run to float32 accuracy."""
    A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.3]])
    ref = f(A, 2000)
    out = f(A.astype(np.float32), 2000)
    assert out.x.dtype == np.float32
    np.testing.assert_allclose(out.x, ref.x, atol=1e-3)
    np.testing.assert_allclose(out.trace["gap_avg"][-1], ref.trace["gap_avg"][-1], atol=1e-3)


@given(st.integers(0, 2**31), st.integers(1, 6))
@settings(max_examples=30)
def test_project_simplex_is_the_euclidean_projection(seed, k):
    rng = np.random.default_rng(seed)
    v = rng.normal(0, 2, k)
    z = project_simplex(v)
    assert z.min() >= 0 and z.sum() == pytest.approx(1.0)
    # KKT: v − z = θ on the support, ≤ θ off it
    theta = (v - z)[z > 0]
    assert np.ptp(theta) <= 1e-12 and np.all((v - z)[z == 0] <= theta[0] + 1e-12)


def test_invalid_arguments():
    with pytest.raises(ValueError, match="positive integer"):
        hedge(np.eye(2), 0)
    with pytest.raises(ValueError, match="eta must be a positive"):
        optimistic_hedge(np.eye(2), 10, eta=-1.0)
    with pytest.raises(InvalidModelError, match="finite"):
        ogda(np.array([[np.inf, 0.0]]), 10)


# Integer payoffs with an asymmetric equilibrium: the uniform start is not a fixed point.
_INT_GAME = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -3.0], [-2.0, 3.0, 0.0]])


@pytest.mark.parametrize("f", [hedge, optimistic_hedge])
@pytest.mark.parametrize("c", [1e-310, 1e-320])
def test_subnormal_payoff_range_gives_the_unscaled_iterates(f, c):
    """Bug found here: with a subnormal payoff range R the default step √(8 ln m/T)/R (OMWU:
    1/(√2 R)) overflowed to inf and inf·0 made every strategy NaN. Hedge and OMWU now run
    on A/R with the finite step η R. For integer payoffs c·A is exact in subnormal
    arithmetic (multiples of 2⁻¹⁰⁷⁴) and c·a / (c·R₀) rounds to the same a/R₀, so the
    iterates equal the unscaled game's bit for bit; the step on c·A, √(8 ln m/T)/(c R₀),
    is beyond the float range and is reported as inf."""
    A = _INT_GAME
    ref = f(A, 60)
    out = f(A * c, 60)
    for name in ("x", "y", "x_last", "y_last"):
        np.testing.assert_array_equal(getattr(out, name), getattr(ref, name))
    assert np.all(np.isfinite(out.x_last)) and out.x_last.sum() == pytest.approx(1.0)
    assert np.isposinf(out.eta[0]) and np.isposinf(out.eta[1])
    # the gaps scale with c; each is a max/min of sums of (m + n) products rounded to
    # multiples of 2⁻¹⁰⁷⁴ (subnormal spacing), and the certificate adds the underflow
    # allowance 2(m + n + 6)·2⁻¹⁰⁷⁴ (matrix._gap_allowance; c times ref's is 0)
    s = 2.0**-1074
    np.testing.assert_allclose(
        out.trace["gap_avg"], c * ref.trace["gap_avg"] + 2 * (3 + 3 + 6) * s, rtol=0, atol=16 * s
    )


@pytest.mark.parametrize("f", [hedge, optimistic_hedge])
@pytest.mark.parametrize("c", [1e-12, 1e300])
def test_payoff_scale_leaves_default_iterates_unchanged(f, c):
    # The default steps are 1/R times a scale-free constant, so scaling A by c changes the
    # steps by 1/c and the iterates not at all (up to the rounding of c·A).
    ref = f(_INT_GAME, 60)
    out = f(_INT_GAME * c, 60)
    np.testing.assert_allclose(out.x_last, ref.x_last, rtol=1e-12, atol=0)
    np.testing.assert_allclose(out.y_last, ref.y_last, rtol=1e-12, atol=0)
    np.testing.assert_allclose(out.eta[0], ref.eta[0] / c, rtol=1e-15)
    np.testing.assert_allclose(out.trace["gap_avg"], c * ref.trace["gap_avg"], rtol=1e-12, atol=0)


def test_explicit_step_on_a_subnormal_game_is_the_scaled_step():
    # Step η/c on c·A is step η on A: exp((η/c) Σ c A y) = exp(η Σ A y). The subnormal
    # entries keep ~45 of 53 bits, hence the 1e-10 relative tolerance.
    c, eta = 1e-310, 0.01  # η/c = 1e308, just inside the float range
    for f in (hedge, optimistic_hedge):
        ref = f(_INT_GAME, 60, eta=eta)
        out = f(_INT_GAME * c, 60, eta=eta / c)
        np.testing.assert_allclose(out.x_last, ref.x_last, rtol=1e-10)
        np.testing.assert_allclose(out.y_last, ref.y_last, rtol=1e-10)
