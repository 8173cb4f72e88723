"""Round-off in the games' certificates: the computed gap and Shapley's sweep error.

References are exact: the duality gap of the returned strategies (normalised onto the
simplex) in rationals (``fractions.Fraction`` of the stored floats), and the one-state game's
value ``val(R)/(1 − γ)`` in closed form (pure saddle, or ``(ad − bc)/(a + d − b − c)`` for a
2×2 game without one; Owen 1995, §II.4), also in rationals.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.errors import ConvergenceWarning
from rltheory.games import solve_zero_sum
from rltheory.games.markov import ZeroSumMarkovGame
from rltheory.games.shapley import shapley_value_iteration


def _exact_payoffs(A, x, y):
    """Exact ``(Ay, xᵀA)`` of ``(x/Σx, y/Σy)`` in rationals."""
    A = [[Fraction(float(a)) for a in row] for row in np.asarray(A)]
    x = [Fraction(float(v)) for v in np.asarray(x)]
    y = [Fraction(float(v)) for v in np.asarray(y)]
    sx, sy = sum(x), sum(y)
    x, y = [v / sx for v in x], [v / sy for v in y]
    Ay = [sum(a * b for a, b in zip(row, y, strict=True)) for row in A]
    xA = [sum(x[i] * A[i][j] for i in range(len(x))) for j in range(len(y))]
    return Ay, xA


def _probe_game(seed: int, dtype, scales):
    # the probe's generator: m, n in 1..4, payoffs of size 1..1e9, every fifth on a coarse grid
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sc = scales[seed % 3]
    A = (rng.uniform(-1, 1, size=(m, n)) * sc + (seed % 2) * 3 * sc).astype(dtype)
    if seed % 5 == 0:
        A = (np.round(rng.uniform(-3, 3, size=(m, n))) * sc / 3).astype(dtype)
    return A


@pytest.mark.parametrize(
    "dtype, seed, scales",
    [
        # float32, 2×3, payoffs ~100: computed gap 0, exact gap 1.9e-6
        (np.float32, 1, (1.0, 100.0, 1e6)),
        # float32, 4×3: computed gap −3e-8, value 3e-8 outside [min xᵀA, max Ay]
        (np.float32, 0, (1.0, 100.0, 1e6)),
        # float64, 2×4: computed gap 0, exact gap 1.2e-16
        (np.float64, 9, (1.0, 1e6, 1e9)),
    ],
)
def test_zero_sum_gap_covers_exact_gap_and_value_error(dtype, seed, scales):
    """gap ≥ 0, gap ≥ exact gap of the returned strategies, and |value − v(A)| ≤ gap.

    ``v(A) ∈ [min_j (xᵀA)_j, max_i (Ay)_i]`` (exact, weak duality), so ``|value − v(A)|`` is at
    most the distance of ``value`` to that interval plus its width (the exact gap).
    """
    A = _probe_game(seed, dtype, scales)
    sol = solve_zero_sum(A)
    gap = Fraction(float(np.asarray(sol.gap, dtype=np.float64)))
    Ay, xA = _exact_payoffs(A, sol.x, sol.y)
    exact_gap = max(Ay) - min(xA)
    value = Fraction(float(np.asarray(sol.value, dtype=np.float64)))
    value_err = max(value - max(Ay), min(xA) - value, Fraction(0)) + exact_gap
    assert gap >= 0
    assert exact_gap <= gap
    assert value_err <= gap


def _one_state_game(seed: int, dtype, scale: float, gamma: float):
    """The probe's one-state game and its exact value ``val(R)/(1 − γ)`` (rational)."""
    rng = np.random.default_rng(1000 + seed)
    A, B = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    R = (rng.uniform(-1, 1, size=(1, A, B)) * scale + scale).astype(dtype)
    M = [[Fraction(float(v)) for v in row] for row in R[0]]
    lower = max(min(row) for row in M)
    upper = min(max(M[i][j] for i in range(A)) for j in range(B))
    if lower == upper:  # pure saddle
        val = lower
    else:  # 2×2 without a saddle: (ad − bc)/(a + d − b − c)
        (a, b), (c, d) = M
        val = (a * d - b * c) / (a + d - b - c)
    game = ZeroSumMarkovGame(np.ones((1, A, B, 1), dtype=dtype), R, gamma)
    return game, M, val


@pytest.mark.parametrize(
    "seed, gamma, scale, tol",
    [
        # float32, 2×2, γ 0.9, rewards ~1: ‖V − V*‖ = 1.6e-5 against bound 6.9e-6 (2.3×)
        (18, 0.9, 1.0, 1e-6),
        # float32, 2×2, γ 0.99, rewards ~100: policy loss 0.0097 against policy_bound 0
        (1, 0.99, 100.0, 1e-4),
    ],
)
def test_shapley_float32_certificates_cover_round_off(seed, gamma, scale, tol):
    """Float32 one-state games: ‖V − V*‖∞ ≤ bound and each policy's loss ≤ policy_bound.

    ``V* = val(R)/(1 − γ)`` exactly; the policies' loss at the one state is
    ``max(val − min_b (xᵀR)_b, max_a (Ry)_a − val)/(1 − γ)`` (each player's exploitability).
    """
    game, M, val = _one_state_game(seed, np.float32, scale, gamma)
    g = Fraction(gamma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tol below the float32 floor ends converged=False
        res = shapley_value_iteration(game, tol=tol * scale, max_iter=3000)
    V_star = val / (1 - g)
    err = abs(Fraction(float(np.asarray(res.V, dtype=np.float64)[0])) - V_star)
    assert err <= Fraction(float(np.asarray(res.bound, dtype=np.float64)))
    x, y = res.policies
    Ay, xA = _exact_payoffs(M, np.asarray(x)[0], np.asarray(y)[0])
    loss = max(val - min(xA), max(Ay) - val) / (1 - g)
    assert loss <= Fraction(float(np.asarray(res.policy_bound, dtype=np.float64)))


def test_shapley_float32_bound_counts_the_row_sum_defect():
    """A stored P whose rows sum to σ = 1 + 30·eps (float32; accepted, within 32·eps) certifies
    the stochastic model P/σ, as the MDP solvers do (``mdp.discounted._Roundoff``).

    One state, R = 100·[[2, −1], [−3, 4]] + 100 = [[300, 0], [−200, 500]]: no saddle, so
    val R = (300·500 − 0·(−200))/(300 + 500 − 0 + 200) = 150 and V* = 150/(1 − 0.99) = 15000.
    The stored model's fixed point is ~15000·(1 + 0.99·30·eps/0.01) ≈ 15005.3. Before the sweep
    error counted the row-sum defect (one ulp of the stage payoffs only), VI stopped at its cap
    with |V − V*| = 5.19 and bound 2.84.
    """
    R = (np.array([[2.0, -1.0], [-3.0, 4.0]]) * 100 + 100).astype(np.float32)
    P = np.full((1, 2, 2, 1), 1 + 30 * np.finfo(np.float32).eps, dtype=np.float32)
    game = ZeroSumMarkovGame(P, R[None], 0.99)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tol 1e-2 is below the floor here: converged=False
        res = shapley_value_iteration(game, tol=1e-2)
    g = Fraction(0.99)
    val = Fraction(150)
    err = abs(Fraction(float(res.V[0])) - val / (1 - g))
    assert err <= Fraction(float(res.bound))
    M = [[Fraction(float(v)) for v in row] for row in R]
    x, y = res.policies
    Ay, xA = _exact_payoffs(M, np.asarray(x)[0], np.asarray(y)[0])
    loss = max(val - min(xA), max(Ay) - val) / (1 - g)
    assert loss <= Fraction(float(res.policy_bound))


def test_shapley_warns_with_the_round_off_floor():
    """A tol below ρ/(1 − γ) ends converged=False with a warning naming the floor."""
    R = (np.array([[2.0, -1.0], [-3.0, 4.0]]) * 100 + 100).astype(np.float32)
    game = ZeroSumMarkovGame(np.ones((1, 2, 2, 1), dtype=np.float32), R[None], 0.99)
    with pytest.warns(ConvergenceWarning, match=r"round-off floor rho/\(1-gamma\) = .* exceeds tol=1e-06"):
        res = shapley_value_iteration(game, tol=1e-6)
    assert not res.converged and float(res.bound) > 1e-6


def _exact_nash_conv(A, B, x, y):
    """Exact NashConv of ``(x/Σx, y/Σy)`` in rationals."""
    Ay, _ = _exact_payoffs(A, x, y)
    _, xB = _exact_payoffs(B, x, y)
    xs = [Fraction(float(v)) for v in np.asarray(x)]
    ys = [Fraction(float(v)) for v in np.asarray(y)]
    xs, ys = [v / sum(xs) for v in xs], [v / sum(ys) for v in ys]
    return (max(Ay) - sum(a * b for a, b in zip(xs, Ay, strict=True))
            + max(xB) - sum(a * b for a, b in zip(xB, ys, strict=True)))


@pytest.mark.parametrize("scale", [1e-8, 1.0, 1e8])
def test_bimatrix_nash_conv_covers_the_exact_nash_conv(scale):
    """Lemke–Howson equilibria of general-sum games with payoffs of size 1e-8..1e8 (some shifted
    by 300 times their spread). The computed NashConv alone was below the exact one of the
    returned strategies (1.19e-7 vs 1.27e-7 at payoffs ~6.6e8) and negative for exact
    equilibria; with its allowance it is >= the exact value and still tiny, and so is the
    stage gap of Nash value iteration, which reports the same quantity."""
    from rltheory.games import lemke_howson
    from rltheory.games.bimatrix import bimatrix_nash_conv

    for seed in range(40):
        rng = np.random.default_rng(seed)
        m, n = (int(k) for k in rng.integers(2, 5, 2))
        A = rng.normal(size=(m, n)) * scale + (seed % 3 == 0) * 300.0 * scale
        B = rng.normal(size=(m, n)) * scale
        x, y = lemke_howson(A, B)
        got = bimatrix_nash_conv(A, B, x, y)
        assert Fraction(got) >= _exact_nash_conv(A, B, x, y), seed
        assert got <= 1e-12 * max(np.abs(A).max(), np.abs(B).max())


def _exact_incentive_rows(U, mu, coarse):
    """Exact ``G vec(μ/Σμ)`` rows of a two-player game in rationals (CE or CCE constraints)."""
    A1, A2 = U.shape[1:]
    u = [[[Fraction(float(U[i, a, b])) for b in range(A2)] for a in range(A1)] for i in range(2)]
    w = [[Fraction(float(mu[a, b])) for b in range(A2)] for a in range(A1)]
    tot = sum(sum(r) for r in w)
    w = [[v / tot for v in r] for r in w]
    rows = []
    if coarse:
        rows += [sum(w[a][b] * (u[0][d][b] - u[0][a][b]) for a in range(A1) for b in range(A2)) for d in range(A1)]
        rows += [sum(w[a][b] * (u[1][a][d] - u[1][a][b]) for a in range(A1) for b in range(A2)) for d in range(A2)]
    else:
        rows += [sum(w[a][b] * (u[0][d][b] - u[0][a][b]) for b in range(A2))
                 for a in range(A1) for d in range(A1) if d != a]
        rows += [sum(w[a][b] * (u[1][a][d] - u[1][a][b]) for a in range(A1))
                 for b in range(A2) for d in range(A2) if d != b]
    return rows


@pytest.mark.parametrize("coarse", [False, True])
def test_correlated_gap_covers_the_exact_incentive_violation(coarse):
    """Welfare-maximising CE/CCE of 2- and 3-action two-player games with payoffs of size ~1e-8
    (half of them shifted by 1e4 times their spread). The LP's vertex makes constraints tight,
    and the computed gap was 0 (or below the exact gap: 1.0e-25 vs 2.3e-25) while the exact gain
    of a swap under the returned distribution was positive. The gap, ce_gap and cce_gap now
    carry the round-off allowance: each is >= the exact largest violation (clipped at 0)."""
    from rltheory.games import cce_gap, ce_gap, max_welfare_cce, max_welfare_ce

    solve, gap = (max_welfare_cce, cce_gap) if coarse else (max_welfare_ce, ce_gap)
    for seed in range(30):
        rng = np.random.default_rng(seed)
        shape = tuple(int(k) for k in rng.integers(2, 4, 2))
        sc = 1e-8 * (1.0 + rng.uniform())
        U = rng.normal(size=(2,) + shape) * sc + (seed % 2) * sc * 1e4
        eq = solve(U)
        exact = max([Fraction(0)] + _exact_incentive_rows(U, eq.distribution, coarse))
        assert Fraction(eq.gap) >= exact, seed
        assert Fraction(gap(U, eq.distribution)) >= exact, seed
        assert eq.gap <= 1e-12 * np.abs(U).max()
