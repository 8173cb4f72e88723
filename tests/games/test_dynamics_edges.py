"""Learning dynamics outside the ranges of test_dynamics.py: numpy scalar arguments, exact
tie-breaking, steps and payoffs at the ends of the float range. Each test failed on the code
before its fix (see the commit that added it)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.bounds.games import hedge_gap_bound, hedge_regret_bound
from rltheory.games import (
    fictitious_play,
    hedge,
    ogda,
    optimistic_hedge,
    project_simplex,
    regret_matching,
)
from rltheory.testing import matrix_games

_ALL = [fictitious_play, regret_matching, hedge, optimistic_hedge, ogda]
_STEPPED = [hedge, optimistic_hedge, ogda]
_GAME = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -3.0], [-2.0, 3.0, 0.0]])


@pytest.mark.parametrize("f", _ALL)
def test_numpy_integer_horizon_is_a_horizon(f):
    # T = np.int64(40) (e.g. from np.arange or a config array) raised "T (number of rounds)
    # must be a positive integer; got np.int64(40)"
    ref = f(_GAME, 40)
    out = f(_GAME, np.int64(40))
    assert out.iterations == 40 and type(out.iterations) is int
    np.testing.assert_array_equal(out.trace["gap_avg"], ref.trace["gap_avg"])


@pytest.mark.parametrize("f", _STEPPED)
@pytest.mark.parametrize("eta", [np.float32(0.25), np.int64(1), np.float64(0.25)])
def test_numpy_real_step_is_a_step(f, eta):
    # eta = np.float32(0.25) or np.int64(1) raised "eta must be a positive finite number"
    ref = f(_GAME, 30, eta=float(eta))
    out = f(_GAME, 30, eta=eta)
    np.testing.assert_array_equal(out.x_last, ref.x_last)


@pytest.mark.parametrize("f", _STEPPED)
@pytest.mark.parametrize(
    "eta",
    [True, -1.0, 0.0, np.nan, np.inf, "0.1", pytest.param(10**400, id="1e400"), np.float32(-1.0)],
)
def test_bad_step_is_a_located_value_error(f, eta):
    # 10**400 raised a bare OverflowError from math.isfinite
    with pytest.raises(ValueError, match=r"eta must be a positive finite number; got"):
        f(_GAME, 5, eta=eta)


@pytest.mark.parametrize("f", _ALL)
@pytest.mark.parametrize("T", [0, -3, True, 2.0, np.float64(3.0), "5"])
def test_bad_horizon_is_a_located_value_error(f, T):
    with pytest.raises(ValueError, match=r"T \(number of rounds\) must be a positive integer; got"):
        f(_GAME, T)


def _exact_fictitious_play(A, T):
    """Fictitious play in rational arithmetic, ties to the lowest index: the average plays."""
    A = [[Fraction(float(a)) for a in row] for row in A]
    m, n = len(A), len(A[0])
    x, y = [Fraction(1, m)] * m, [Fraction(1, n)] * n
    sx, sy = list(x), list(y)
    for _ in range(T - 1):
        u = [sum(A[i][j] * sy[j] for j in range(n)) for i in range(m)]
        v = [sum(sx[i] * A[i][j] for i in range(m)) for j in range(n)]
        bi = u.index(max(u))  # list.index: the lowest index attaining the max
        bj = v.index(min(v))
        sx = [s + (i == bi) for i, s in enumerate(sx)]
        sy = [s + (j == bj) for j, s in enumerate(sy)]
    return np.array([float(s / T) for s in sx]), np.array([float(s / T) for s in sy])


@pytest.mark.parametrize(
    "A",
    [
        # ȳ_11 makes both rows' utilities equal in exact arithmetic; the old code formed
        # A ȳ_t from the rounded average (1/3 + counts)/t and played row 2 in round 12
        [[0.0, 1.0, 1.0], [1.0, -1.0, -1.0]],
        [[1.0, 1.0], [-1.0, 0.0], [1.0, 0.0]],
        [[-1.0, 1.0, 0.0], [-1.0, 1.0, 0.0], [1.0, 0.0, 1.0]],
        [[0.0, -1.0, 2.0], [-1.0, 1.0, -1.0], [0.0, 2.0, -2.0]],
        [[0.5, -0.25, 0.75], [0.25, 0.5, -0.5]],  # a binary grid other than the integers
    ],
)
def test_fictitious_play_breaks_exact_ties_to_the_lowest_index(A):
    A = np.array(A)
    T = 60
    x, y = _exact_fictitious_play(A, T)
    res = fictitious_play(A, T)
    # the averages of T plays, summed in floating point: within T ulps of the exact ones
    np.testing.assert_allclose(res.x, x, rtol=0, atol=T * 2.0**-52)
    np.testing.assert_allclose(res.y, y, rtol=0, atol=T * 2.0**-52)
    # and batched, with a row of another game beside it, the same plays
    both = fictitious_play(np.stack([A, A[::-1]]), T)
    np.testing.assert_array_equal(both.x[0], res.x)
    np.testing.assert_array_equal(both.y[0], res.y)


@pytest.mark.parametrize("plus", [False, True])
@pytest.mark.parametrize("c", [2.0**1022, 2.0**-1000, 2.0**-1070])
def test_regret_matching_is_scale_free_to_the_ends_of_the_float_range(plus, c):
    # x ∝ [R]_+ is invariant to the payoff scale, and c·A is exact for a power of two c
    # (3·2^-1070 is a subnormal multiple of 2^-1074), so the plays must be those of A. On
    # c = 2^1022 the old code's regrets u − ⟨x, u⟩ overflowed to ±inf within a few rounds and
    # every strategy (and gap) became NaN; on c = 2^-1070 subnormal products rounded.
    ref = regret_matching(_GAME, 60, plus=plus)
    out = regret_matching(_GAME * c, 60, plus=plus)
    for name in ("x", "y", "x_last", "y_last"):
        np.testing.assert_array_equal(getattr(out, name), getattr(ref, name))
    assert not np.any(np.isnan(out.trace["gap_avg"]))


@pytest.mark.parametrize("f", [hedge, optimistic_hedge])
def test_payoff_range_beyond_the_float_range(f):
    # 2^1022 · A has entries up to 3·2^1022 ≈ 1.3e308 of both signs: R = 6·2^1022 overflows.
    # The old code normalised by R = inf, played A/inf = 0 and stayed at the uniform
    # strategies with a reported step of 0. The normalised games are A/6 in both runs (exact
    # scalings), so the iterates must be those of A, and the step is ref.eta · 2^-1022
    # (a subnormal: rounded once, in both).
    c = 2.0**1022
    ref = f(_GAME, 60)
    out = f(_GAME * c, 60)
    for name in ("x", "y", "x_last", "y_last"):
        np.testing.assert_array_equal(getattr(out, name), getattr(ref, name))
    for k in (0, 1):
        assert out.eta[k] == ref.eta[k] / c and out.eta[k] > 0


# Payoffs of range 4 on four actions: A / R, the uniform first plays and every cumulative
# utility are dyadic with few bits, so all sums are exact and ties are exact ties.
_DYADIC = np.array(
    [[0.0, 1.0, -1.0, 2.0], [-2.0, 0.0, 1.0, 1.0], [1.0, -1.0, 0.0, -2.0], [2.0, 2.0, -2.0, 0.0]]
)


@pytest.mark.parametrize("f", [hedge, optimistic_hedge])
@pytest.mark.parametrize(
    ("dtype", "huge", "large"), [(np.float64, 1e308, 1e150), (np.float32, 1e300, 1e30)]
)
def test_step_beyond_the_float_range_is_the_large_step_limit(f, dtype, huge, large):
    # η R Σ u leaves the float range for η = 1e308 (float64) or 1e300 (float32, where η itself
    # is inf); the old softmax formed inf − inf and every strategy was NaN. The plays here are
    # 0, 1/2 or 1 after the uniform first round, so the cumulative utilities of A / 4 differ
    # by multiples of 1/16 or not at all (exactly), and already η = `large`
    # sends every non-maximiser's weight to exp(−1e28) = 0: both steps give the limit
    # (uniform on argmax of the cumulative utilities), the same plays bit for bit.
    A = _DYADIC.astype(dtype)
    ref = f(A, 40, eta=large)
    out = f(A, 40, eta=huge)
    for name in ("x", "y", "x_last", "y_last"):
        np.testing.assert_array_equal(getattr(out, name), getattr(ref, name))
    np.testing.assert_array_equal(out.trace["gap_avg"], ref.trace["gap_avg"])


@pytest.mark.parametrize("c", [2.0**600, 2.0**1020, 2.0**-600, 2.0**-1000, 2.0**-1070])
def test_ogda_default_step_follows_the_payoff_scale(c):
    # OGDA's default step is 1/(√8 ‖A‖_F), so η·(cA)y = η_A·Ay: on c·A (exact, c a power of
    # two; 3·2^-1070 is subnormal) the iterates must be those of A and η = η_A / c. The old
    # code formed ‖A‖_F from A·A, which is inf for c = 2^600 (step 0: the players never moved)
    # and 0 for c = 2^-600 (step 1/√8, ~10^180 times too small: they never moved either).
    ref = ogda(_GAME, 60)
    out = ogda(_GAME * c, 60)
    for name in ("x", "y", "x_last", "y_last"):
        np.testing.assert_array_equal(getattr(out, name), getattr(ref, name))
    with np.errstate(over="ignore"):
        want = ref.eta[0] / c  # inf for c = 2^-1070 (beyond the float range), as documented
    assert out.eta[0] == want


def _exact_projection(v):
    """Π_Δ(v) in rational arithmetic (the sort-based rule), as floats."""
    q = [Fraction(float(a)) for a in v]
    u = sorted(q, reverse=True)
    css, rho = Fraction(0), 0
    for j, uj in enumerate(u, start=1):
        css += uj
        if uj - (css - 1) / j > 0:
            rho, theta = j, (css - 1) / j
    assert rho >= 1
    return np.array([float(max(a - theta, 0)) for a in q])


@pytest.mark.parametrize(
    "v",
    [
        [1e17, 1e17],  # old: r = 0, θ = x/0, (inf, inf)
        [1e16 + 2, 1e16],  # old: (2, 0), off the simplex
        [1e300, 1e300, 0.0],
        [-1e20, -1e20, -1e20 - 3e4],
        [3e8, 3e8 + 0.5, 3e8 - 0.25],
        [1e308, -1e308],  # v − max v overflows to −inf: clamped, still (1, 0)
        [2.0**60 + 2.0**8, 2.0**60, 2.0**60 - 2.0**8],
    ],
)
def test_project_simplex_at_large_magnitudes(v):
    # Σ_{r≤j} u_r − 1 cancelled catastrophically once |v| ≳ 1/u; the projection is shift
    # invariant and is now computed on v − max v.
    z = project_simplex(np.array(v))
    np.testing.assert_allclose(z, _exact_projection(v), rtol=0, atol=4 * 2.0**-52)
    assert z.min() >= 0 and abs(z.sum() - 1.0) <= 4 * 2.0**-52


@pytest.mark.parametrize(
    ("dtype", "huge", "large"), [(np.float64, 1e308, 1e150), (np.float32, 1e300, 1e30)]
)
def test_ogda_step_beyond_the_float_range_is_the_large_step_limit(dtype, huge, large):
    # x̂ + η u overflowed to ±inf for η = 1e308 (η s = inf) and the projection returned zeros,
    # off the simplex (NaN once it subtracted max v). Utility differences of the dyadic game are multiples of 1/16 or
    # exactly 0, and x̂ ∈ [0, 1], so η = `large` already projects onto the maximisers of u:
    # both steps give the same plays bit for bit.
    A = _DYADIC.astype(dtype)
    ref = ogda(A, 40, eta=large)
    out = ogda(A, 40, eta=huge)
    for name in ("x", "y", "x_last", "y_last"):
        np.testing.assert_array_equal(getattr(out, name), getattr(ref, name))
    np.testing.assert_array_equal(out.trace["gap_avg"], ref.trace["gap_avg"])


@pytest.mark.parametrize("shape", [(1, 4), (3, 1), (1, 1)])
def test_hedge_gap_bound_takes_the_steps_hedge_reports_for_one_action(shape):
    # hedge's default step for a player with one action is √(8 ln 1/T)/R = 0; hedge_gap_bound
    # refused it ('eta must be a finite number > 0; got 0.0'), so the library's bound could not
    # be evaluated on a 1×n game with the library's own steps. A single action has regret 0
    # (ln 1/η = 0 for every η ≥ 0): its term is 0, and the bound holds at every iterate.
    A = np.random.default_rng(7).standard_normal(shape)
    T = 200
    res = hedge(A, T)
    t = np.arange(1, T + 1)
    R = float(np.ptp(A)) or 1.0
    b = hedge_gap_bound(t, *shape, res.eta[0], res.eta[1], R)
    want = (
        sum(
            (math.log(k) / float(e) + float(e) * t * R * R / 8.0) if k > 1 else 0.0
            for k, e in zip(shape, res.eta, strict=True)
        )
        / t
    )
    np.testing.assert_allclose(b, want, rtol=1e-15)
    assert np.all(res.trace["gap_avg"] <= b + 1e-9 * R) if shape != (1, 1) else np.all(b == 0.0)
    assert float(hedge_regret_bound(5, 1, 0.0, 1.0)) == 0.0


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((10, 2, 2, -1.0, 0.1, 1.0), r"eta_x must be a finite number > 0; got -1\.0"),
        ((10, 2, 2, 0.1, 0.0, 1.0), r"eta_y must be a finite number > 0; got 0\.0"),
        ((10, 2, 1, 0.1, -1.0, 1.0), r"eta_y must be a finite number >= 0; got -1\.0"),
        ((10, 2, 2, 0.1, np.nan, 1.0), r"eta_y must be a finite number > 0; got nan"),
    ],
)
def test_hedge_gap_bound_names_the_players_step(args, match):
    # both players' steps were checked as 'eta', so the message did not say which was bad
    with pytest.raises(ValueError, match=match):
        hedge_gap_bound(*args)


@pytest.mark.parametrize("plus", ["False", None, 0, 1, 2.0, np.array([True])])
def test_regret_matching_plus_must_be_a_bool(plus):
    # plus = "False" ran RM+ and plus = None or 0 ran RM, whatever the caller meant
    with pytest.raises(ValueError, match=r"plus must be True or False; got"):
        regret_matching(_GAME, 5, plus=plus)


def test_regret_matching_plus_takes_numpy_bools():
    for flag in (False, True):
        ref = regret_matching(_GAME, 30, plus=flag)
        out = regret_matching(_GAME, 30, plus=np.bool_(flag))
        np.testing.assert_array_equal(out.x, ref.x)
    # and the two rules differ on this game, so the flag is not ignored
    assert not np.array_equal(regret_matching(_GAME, 30, plus=True).x, regret_matching(_GAME, 30).x)


@given(matrix_games(max_actions=4, batch_shape=(2,)), st.sampled_from([-900, -600, 600, 900]))
@settings(max_examples=25, deadline=None)
def test_every_dynamic_is_scale_free_far_from_one(A, k):
    # Every dynamic here is invariant to a positive payoff scale (FP and RM by definition,
    # Hedge/OMWU/OGDA with their default steps ∝ 1/R or 1/‖A‖_F), and 2^k·A is exact with no
    # subnormal entry for these games, so the plays on 2^k·A must be those of A bit for bit
    # and the gaps 2^k times A's, but for the certificate's unscaled underflow term
    # η = 2(m + n + 6)·2^-1074 (matrix._gap_allowance; all of the gap when A = 0).
    # Before the fixes OGDA's step was 0 at 2^600 and 2^900 (‖A‖_F overflowed) and 1/√8 at
    # 2^-600 and 2^-900 (it underflowed).
    c = 2.0**k
    eta = 2 * (A.shape[-2] + A.shape[-1] + 6) * 2.0**-1074
    for f in _ALL:
        ref = f(A, 30)
        out = f(A * c, 30)
        for name in ("x", "y", "x_last", "y_last"):
            np.testing.assert_array_equal(getattr(out, name), getattr(ref, name))
        np.testing.assert_allclose(
            out.trace["gap_avg"] - eta, c * (ref.trace["gap_avg"] - eta), rtol=1e-12, atol=0
        )


@pytest.mark.parametrize("f", _ALL)
@pytest.mark.parametrize("batch", [(0,), (3, 0)])
def test_a_batch_of_no_games_gives_empty_results(f, batch):
    # ogda reshaped A*A to (..., -1), which numpy cannot do for size 0 ("cannot reshape array
    # of size 0 into shape (0,newaxis)"); the other dynamics already returned empty results
    res = f(np.zeros(batch + (2, 3)), 4)
    assert res.x.shape == batch + (2,) and res.y_last.shape == batch + (3,)
    assert res.trace["gap_avg"].shape == (4,) + batch
