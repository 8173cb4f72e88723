"""Edges of the Markov-game layer found by brute force: located errors for bad policies and
arguments, and certificates that never fall below the exact quantity they bound.

Exact references are rational (``fractions.Fraction`` of the stored floats): values of a fixed
policy pair solve ``(I − γP_π)V = r_π`` exactly, and a best response's value is the statewise
maximum over the deterministic stationary policies of the induced MDP (finitely many; one of
them is optimal, Puterman 1994, Thm 6.2.10).
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

from rltheory.games import (
    MarkovGame,
    ZeroSumMarkovGame,
    best_response,
    evaluate_policy_pair,
    exploitability,
    nash_conv,
    shapley_operator,
    shapley_value_iteration,
)
from rltheory.games.general_sum import (
    correlated_value_iteration,
    finite_horizon_nash_conv,
    finite_horizon_values,
    nash_value_iteration,
)
from rltheory.games.zoo import (
    battle_of_the_sexes,
    cooperative_markov_game,
    matching_pennies,
    prisoners_dilemma,
    random_zero_sum_markov_game,
    rock_paper_scissors,
)


def _repeated_dilemma() -> MarkovGame:
    return MarkovGame(np.ones((1, 2, 2, 1)), prisoners_dilemma()[:, None], None)


# --------------------------------------------------------------------------- general_sum
@pytest.mark.parametrize("fn", [finite_horizon_values, finite_horizon_nash_conv])
@pytest.mark.parametrize(
    "policy, match",
    [
        # every entry 0.5: each pol[h, s] sums to 2. finite_horizon_values returned V_0 = 13.5 for
        # it (three times the uniform policy's 4.5) and finite_horizon_nash_conv blamed P
        (np.full((2, 1, 2, 2), 0.5), r"each policy\[h, s, \.\.\.\] must sum to 1 .* worst row \(h=0, s=0\) sums to 2"),
        # a negative entry with the right sums was accepted as a policy
        (np.array([[[[1.5, -0.5], [0.0, 0.0]]]]), r"policy must be non-negative; .*policy\(h=0, s=0, a1=0, a2=1\) = -0\.5"),
        # NaN: finite_horizon_values returned NaN values, finite_horizon_nash_conv blamed P
        (np.array([[[[np.nan, 0.5], [0.25, 0.25]]]]), r"policy must be finite; policy\(h=0, s=0, a1=0, a2=0\) = nan"),
    ],
)
def test_finite_horizon_policy_must_be_on_the_simplex(fn, policy, match):
    with pytest.raises(ValueError, match=match):
        fn(_repeated_dilemma(), policy)


@pytest.mark.parametrize("fn", [finite_horizon_values, finite_horizon_nash_conv])
@pytest.mark.parametrize("policy", [np.full((1, 1, 2, 2), "0.25"), np.full((1, 1, 2, 2), 0.25 + 1j)])
def test_finite_horizon_policy_refuses_text_and_complex(fn, policy):
    # text was parsed into numbers and a complex policy lost its imaginary part with a warning only
    with pytest.raises(TypeError, match="policy must hold real numbers"):
        fn(_repeated_dilemma(), policy)


def test_finite_horizon_values_of_a_valid_policy_are_exact():
    # Repeated dilemma, H = 2, both players mix uniformly: the stage payoff is (3 + 0 + 5 + 1)/4 =
    # 9/4 to each player, so V_0 = 2·9/4 = 9/2 and V_1 = 9/4 (exact in binary).
    V = finite_horizon_values(_repeated_dilemma(), np.full((2, 1, 2, 2), 0.25))
    assert V[:, :, 0].tolist() == [[4.5, 2.25, 0.0], [4.5, 2.25, 0.0]]
    # against a uniform opponent defecting pays (5 + 1)/2 = 3 per step and the policy 9/4, so each
    # player's best response gains 2·(3 − 9/4) = 3/2 and NashConv is 3
    assert Fraction(finite_horizon_nash_conv(_repeated_dilemma(), np.full((2, 1, 2, 2), 0.25))) == 3


# --------------------------------------------------------------------------- shapley
def test_shapley_settings_may_be_numpy_scalars():
    # A float32 game's own certificate is a np.float32 (not a Python float) and sizes computed with
    # numpy are np.int64: tol=np.float32(1e-4) raised "tol must be a positive number" and
    # max_iter=np.int64(500) "max_iter must be a positive integer or None". One state, rewards
    # matching pennies + 1: V* = 1/(1 − 0.5) = 2.
    g = ZeroSumMarkovGame(
        np.ones((1, 2, 2, 1), dtype=np.float32), (matching_pennies()[None] + 1).astype(np.float32), 0.5
    )
    res = shapley_value_iteration(g, tol=np.float32(1e-4), max_iter=np.int64(500))
    assert res.converged and abs(float(res.V[0]) - 2.0) <= float(res.bound) <= 1e-4
    for tol in (True, np.float32(-1.0), np.float64(np.nan), "1e-4"):
        with pytest.raises(ValueError, match="tol must be a positive number"):
            shapley_value_iteration(g, tol=tol)
    for max_iter in (np.True_, np.int64(0), np.float64(3.0)):
        with pytest.raises(ValueError, match="max_iter must be a positive integer or None"):
            shapley_value_iteration(g, max_iter=max_iter)


@pytest.mark.parametrize(
    "scale, gamma, dtype",
    [
        # V* = 5e307/(1 − 0.9) = 5e308 is beyond float64: OverflowError "cannot convert float infinity
        # to integer" (the a-priori sweep count of γ/(1−γ)·‖TV_0 − V_0‖ = inf)
        (1e308, 0.9, np.float64),
        # V* = 0.85e308/(1 − 0.5) = 1.7e308, but Q = r + γPV reaches 2.55e308: "A must be finite;
        # A(batch=(0,), i=0, j=0) = inf", naming an array the caller never passed
        (1.7e308, 0.5, np.float64),
        # the same in float32 (largest 3.4e38): V* = 5e38
        (1e38, 0.9, np.float32),
    ],
)
def test_shapley_refuses_values_beyond_the_float_range(scale, gamma, dtype):
    # one state, R = scale·(matching pennies + 1)/2 (entries scale and 0): val R = scale/2
    R = ((matching_pennies()[None] + 1.0) / 2.0 * scale).astype(dtype)
    g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1), dtype=dtype), R, gamma)
    with pytest.raises(ValueError, match=r"values and stage payoffs can reach M = .* beyond a quarter of the largest"):
        shapley_value_iteration(g)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # first bound: honestly inf
def test_shapley_a_priori_sweep_count_does_not_overflow():
    # Two states that swap every step, matching pennies in each (V* = 0), γ = 0.99 and
    # V_0 = (1e307, −1e307): ‖TV_0 − V_0‖∞ = 1.99e307 and the default cap's
    # γ/(1−γ)·‖TV_0 − V_0‖∞ = 1.97e309 overflowed (OverflowError "cannot convert float infinity to
    # integer") although every iterate is in range (‖V_k‖∞ = 0.99^k·1e307). The count is now
    # taken in logarithms: log(1.97e309/1e303)/(−log 0.99) = 1443 sweeps at tol = 1e303.
    P = np.zeros((2, 2, 2, 2))
    P[0, ..., 1] = P[1, ..., 0] = 1.0
    g = ZeroSumMarkovGame(P, np.stack([matching_pennies()] * 2), 0.99)
    res = shapley_value_iteration(g, V0=np.array([1e307, -1e307]), tol=1e303)
    assert res.converged and np.max(np.abs(np.asarray(res.V))) <= float(res.bound) <= 1e303


# --------------------------------------------------------------------------- exploit
def test_exploitability_is_never_negative():
    # V^{μ,BR} ≤ V* ≤ V^{BR,ν} statewise (Shapley 1953), so the exact gap is ≥ 0 at every state. The
    # two best-response values were subtracted unclipped, and round-off made the gap negative at
    # 16 of the first 40 random 3-state games' Shapley equilibria (down to −2.9e-15 per state).
    # nash_conv already clipped each player's gain at 0.
    for seed in range(12):
        g = random_zero_sum_markov_game(np.random.default_rng(seed), 3, 2, 2, 0.9)
        ex = exploitability(g, *shapley_value_iteration(g, tol=1e-12).policies)
        assert float(ex.gap) >= 0.0 and np.all(np.asarray(ex.per_state) >= 0.0), seed
        assert float(ex.gap) <= 1e-12
    # One state, A = [[1, 3], [2, 1]], γ = 1/2, no saddle: x = (1/3, 2/3), y = (2/3, 1/3), value
    # (1·1 − 3·2)/(1 + 1 − 3 − 2) = 5/3 (Owen 1995, §II.4). With the stored x = (fl(1/3), 1 − fl(1/3)),
    # y likewise, the exact gap is (max_a (Ay)_a − min_b (xᵀA)_b)/(1 − γ) ≥ 0 (one state, P = 1);
    # computed −4.4e-16 before.
    A = np.array([[1.0, 3.0], [2.0, 1.0]])
    x, y = np.array([[1 / 3, 1 - 1 / 3]]), np.array([[2 / 3, 1 - 2 / 3]])
    ex = exploitability(ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), A[None], 0.5), x, y)
    xf = [Fraction(v) / sum(map(Fraction, x[0])) for v in x[0]]
    yf = [Fraction(v) / sum(map(Fraction, y[0])) for v in y[0]]
    Ay = [sum(Fraction(A[a, b]) * yf[b] for b in range(2)) for a in range(2)]
    xA = [sum(xf[a] * Fraction(A[a, b]) for a in range(2)) for b in range(2)]
    exact = (max(Ay) - min(xA)) * 2
    assert exact >= 0 and Fraction(float(ex.gap)) >= 0
    assert abs(Fraction(float(ex.gap)) - exact) <= Fraction(2, 2**50)
    # zero at the zoo's equilibria: matching pennies (value 0, uniform/uniform; Osborne &
    # Rubinstein 1994, ch. 3), and weighted RPS (1, 2, 3) at x = y = (3, 1, 2)/6 (A x = 0)
    pennies = ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), matching_pennies()[None], 0.9)
    assert float(exploitability(pennies, np.full((1, 2), 0.5), np.full((1, 2), 0.5)).gap) == 0.0
    rps = ZeroSumMarkovGame(np.ones((1, 3, 3, 1)), rock_paper_scissors((1.0, 2.0, 3.0))[None], 0.9)
    x = np.array([[3.0, 1.0, 2.0]]) / 6
    assert 0.0 <= float(exploitability(rps, x, x).gap) <= 1e-14


# --------------------------------------------------------------------------- zoo
def test_markov_game_builders_name_a_bad_size():
    # numpy's "negative dimensions are not allowed" / "'float' object cannot be interpreted as an
    # integer" reached the user, and actions=() an error about P's shape
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"batch_shape\[1\] must be an integer >= 0; got -1"):
        random_zero_sum_markov_game(rng, 2, 2, 2, 0.5, batch_shape=(3, -1))
    with pytest.raises(ValueError, match=r"S must be a positive integer; got 2.5"):
        cooperative_markov_game(rng, 2.5, (2, 2), 0.5)
    with pytest.raises(ValueError, match=r"actions\[1\] must be a positive integer; got -1"):
        cooperative_markov_game(rng, 2, (2, -1), 0.5)
    with pytest.raises(ValueError, match=r"actions must give one action count per player \(at least one\); got \(\)"):
        cooperative_markov_game(rng, 2, (), 0.5)
    # numpy integers are sizes too
    g = cooperative_markov_game(rng, np.int64(2), (np.int64(2), 3), 0.5)
    assert (g.S, g.actions) == (2, (2, 3))
    assert random_zero_sum_markov_game(rng, 2, 1, 3, 0.5, batch_shape=(np.int64(2), 0)).batch_shape == (2, 0)


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e308), (np.float32, 1e38)])
def test_exploitability_refuses_values_beyond_the_float_range(dtype, scale):
    # One state, R = scale·(matching pennies + 1)/2 (entries scale and 0), γ = 0.9: every value of
    # the uniform pair is 10·scale/2 = 5·scale, beyond the dtype's range. exploitability and
    # nash_conv returned NaN (inf − inf of the two best-response values, with RuntimeWarnings only)
    # although the pair is the equilibrium (exact gap 0).
    R = ((matching_pennies()[None] + 1.0) / 2.0 * scale).astype(dtype)
    g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1), dtype=dtype), R, 0.9)
    half = np.full((1, 2), 0.5)
    with pytest.raises(ValueError, match=r"exploitability: the values can reach max\|R\|/\(1-gamma\) = .* beyond half"):
        exploitability(g, half, half)
    with pytest.raises(ValueError, match=r"nash_conv: the values can reach max\|R\|/\(1-gamma\) = .* beyond half"):
        nash_conv(g.as_markov_game(), [half, half])
    # in range (values 5·scale/16 ≤ half the largest number), the equilibrium's gap is 0
    g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1), dtype=dtype), R / 16, 0.9)
    assert float(exploitability(g, half, half).gap) == 0.0
    assert float(nash_conv(g.as_markov_game(), [half, half])) == 0.0


# --------------------------------------------------------------------------- markov
def test_stage_games_and_policy_batches_are_checked():
    g = random_zero_sum_markov_game(np.random.default_rng(0), 3, 2, 2, 0.9, batch_shape=(2,))
    # numpy's "matmul: Input operand 1 has a mismatch in its core dimension 0 ..." reached the user
    with pytest.raises(ValueError, match=re.escape("V must have shape (..., S) = (..., 3); got (4,)")):
        g.stage_games(np.zeros(4))
    # a NaN value gave NaN stage games without a word
    with pytest.raises(ValueError, match=re.escape("V must be finite; V(s=1) = nan")):
        g.stage_games(np.array([0.0, np.nan, 0.0]))
    # policies whose batch does not broadcast with the game's: numpy's "operands could not be
    # broadcast together with shapes (2,3,2,2,3) (3,3,1,2,1)"
    pure = np.zeros((3, 3), dtype=int)
    with pytest.raises(ValueError, match=re.escape("batch shapes of the game (2,) and nu (3,) do not broadcast")):
        exploitability(g, pure, pure)
    with pytest.raises(ValueError, match=re.escape("batch shapes of the game (2,) and mu (3,) do not broadcast")):
        evaluate_policy_pair(g, pure, pure[:2])
    one = g[0]
    with pytest.raises(ValueError, match=re.escape("batch shapes of the game (), mu (3,) and nu (2,) do not broadcast")):
        evaluate_policy_pair(one, pure, pure[:2])
    with pytest.raises(ValueError, match=re.escape("batch shapes of the game (), mu (3,) and nu (2,) do not broadcast")):
        exploitability(one, pure, pure[:2])
    # broadcasting batches still work: an unbatched game against two column policies
    V = np.asarray(evaluate_policy_pair(one, pure[0], pure[:2]))
    assert V.shape == (2, 3) and np.array_equal(V[0], V[1])


def test_shapley_operator_refuses_stage_payoffs_beyond_the_float_range():
    # R entries ±1e308, γ = 0.9, V = 1.7e308: Q = r + γV reaches 2.5e308 and the stage solver
    # reported "A must be finite; A(batch=(0,), i=0, j=0) = inf", an array the caller never passed
    g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), matching_pennies()[None] * 1e308, 0.9)
    with pytest.raises(ValueError, match=r"shapley_operator: the stage payoffs can reach M = max\|R\| \+ gamma\*max\|V\| = "):
        shapley_operator(g, np.array([1.7e308]))
    # in range (R entries ±1e307, stage payoffs up to 1.9e307): T V = val(R + γV) = 0 + 0.9·1e307
    # (matching pennies has value 0), up to the rounding of payoffs of size 1e307
    g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), matching_pennies()[None] * 1e307, 0.9)
    step = shapley_operator(g, np.array([1e307]))
    assert abs(float(step.TV[0]) - 9e306) <= 1e-12 * 1e307


@pytest.mark.parametrize("fn", ["nash", "correlated", "values"])
def test_finite_horizon_values_beyond_the_float_range_are_located(fn):
    # Repeated battle of the sexes with payoffs (2, 1)·1e308/2 = (1e308, 5e307), H = 3: always
    # coordinating on (0, 0) pays player 0 3e308, beyond float64; Lemke-Howson's and the welfare
    # CE's stage equilibria here are pure coordinations, whose values reach 2e308 at h = 1. nash_value_iteration raised
    # Lemke-Howson's "A must be finite; A(i=0, j=0) = inf" and correlated_value_iteration "U must be
    # finite; U(i=0, a1=0, a2=0) = inf" (arrays the caller never passed); finite_horizon_values
    # returned inf without a word.
    g = MarkovGame(np.ones((1, 2, 2, 1)), battle_of_the_sexes()[:, None] / 2 * 1e308, None)
    # V_2 is the last stage's equilibrium value (up to 1e308), so Q at h = 1 is the first to overflow
    match = r"Q_\{i,h\}\(s, a\) = R_i\(s, a\) \+ sum_s' P V_\{i,h\+1\}\(s'\) overflow at h=1: Q\(i=\d, s=0, a1=\d, a2=\d\) = inf"
    with pytest.raises(ValueError, match=match):
        if fn == "nash":
            nash_value_iteration(g, 3)
        elif fn == "correlated":
            correlated_value_iteration(g, 3)
        else:
            pure = np.zeros((3, 1, 2, 2))
            pure[:, 0, 0, 0] = 1.0
            finite_horizon_values(g, pure)
    # H = 1 is in range: the stage game itself, equilibrium values at most 1e308
    assert np.all(np.isfinite(nash_value_iteration(g, 1).V))


def test_rewards_beyond_the_models_dtype_are_named():
    # Rewards are stored in P's dtype. A float64 reward of 1e300 in a float32 game became inf in
    # the cast and was reported as "R must be finite; R(s=0, a=0, b=1) = inf", a value the caller
    # never passed; now the message gives the value and the dtype it does not fit.
    P = np.ones((1, 2, 2, 1), dtype=np.float32)
    R = np.zeros((1, 2, 2))
    R[0, 0, 1] = 1e300
    with pytest.raises(ValueError, match=r"R\(s=0, a=0, b=1\) = 1e\+300 is beyond the range of P's dtype float32"):
        ZeroSumMarkovGame(P, R, 0.9)
    U = np.zeros((2, 1, 2, 2))
    U[1, 0, 1, 0] = -1e39
    with pytest.raises(ValueError, match=r"R\(i=1, s=0, a1=1, a2=0\) = -1e\+39 is beyond the range of P's dtype float32"):
        MarkovGame(P, U, 0.9)
    # a non-finite reward is still reported as such, and values in range are stored in float32
    R[0, 0, 1] = np.nan
    with pytest.raises(ValueError, match=r"R must be finite; R\(s=0, a=0, b=1\) = nan"):
        ZeroSumMarkovGame(P, R, 0.9)
    R[0, 0, 1] = 1e30
    assert ZeroSumMarkovGame(P, R, 0.9).R.dtype == np.float32


def test_random_game_builders_take_a_generator_or_a_seed():
    # The MDP zoo takes a Generator or an int seed (never the global RNG); the game builders crashed
    # with "AttributeError: 'int' object has no attribute 'exponential'" (None and strings likewise).
    from rltheory.games.zoo import random_bimatrix_game, random_matrix_games

    calls = [
        (random_zero_sum_markov_game, (3, 2, 2, 0.9)),
        (random_matrix_games, ((2,), 2, 2)),
        (random_bimatrix_game, (2, 3)),
        (cooperative_markov_game, (2, (2, 2), 0.9)),
    ]
    for fn, args in calls:
        a, b = fn(7, *args), fn(np.random.default_rng(7), *args)  # a seed is default_rng(seed)
        a, b = (x if isinstance(x, np.ndarray) else np.asarray(x.R) for x in (a, b))
        assert np.array_equal(a, b), fn.__name__
        for bad in (None, "7", 1.5, True):
            with pytest.raises(TypeError, match=r"rng must be a numpy.random.Generator or an int seed"):
                fn(bad, *args)
        with pytest.raises(ValueError, match=r"rng must be a numpy.random.Generator or an int seed >= 0; got -1"):
            fn(-1, *args)


def test_indexing_a_batch_of_games_addresses_only_the_batch_axes():
    # g[..., 0] indexed the last axis of P and R (the successor state s' of P, the column action b
    # of R), so a batch of two 2-state games with uniform kernels came back as one unbatched game
    # built from P(s' = 0 | ·) and R(·, b = 0) reinterpreted as (S, A, B, S) and (S, A, B).
    P = np.full((2, 2, 2, 2, 2), 0.5)
    R = np.arange(16.0).reshape(2, 2, 2, 2)
    last = ZeroSumMarkovGame(P, R, 0.5)[..., 1]
    assert last.batch_shape == () and np.array_equal(last.R, R[1]) and np.array_equal(last.P, P[1])
    # with a batched mu, mu[..., 1] (its state axis) raised "each mu[:] must sum to 1 ... sums to 0.75"
    mu = np.array([[1.0, 0.0], [0.25, 0.75]])
    g = ZeroSumMarkovGame(P, R, 0.5, mu)
    last = g[..., 1]
    assert last.batch_shape == () and np.array_equal(last.R, R[1]) and np.array_equal(last.mu, mu[1])
    assert g[None, ...].batch_shape == (1, 2) and np.array_equal(g[None, ...].R, R[None])
    with pytest.raises(IndexError):
        g[0, 1]  # more indices than batch axes


def test_finite_horizon_nash_conv_takes_a_float32_policy():
    # A float32 policy's rows sum to 1 only to float32 rounding (here 1 − 3.0e-8 in float64). The
    # induced MDPs built from it were refused: "each P[h, s, a, :] must sum to 1 (atol=1e-08); worst
    # row (h=0, s=0, a=1) sums to 0.999999970198". Such rows are now judged at float32's tolerance
    # and renormalised, as stationary policies are (rltheory._validate.as_policy_array).
    rng = np.random.default_rng(3)
    W = rng.exponential(size=(3, 3, 3, 3))
    g = MarkovGame(W / W.sum(-1, keepdims=True), rng.normal(size=(2, 3, 3, 3)), None)
    eq = correlated_value_iteration(g, 4)
    p32 = eq.policy.astype(np.float32)
    assert 0.0 <= finite_horizon_nash_conv(g, p32) <= 1e-5  # a CE perturbed by float32 rounding
    V = finite_horizon_values(g, p32)
    np.testing.assert_allclose(V, eq.V, rtol=0, atol=1e-5 * np.abs(eq.V).max())


def test_a_float32_joint_policy_is_evaluated():
    # Uniform over 10 x 10 joint actions in float32: each entry fl32(0.01) = 0.0099999998, a row sum
    # of 1 − 2.2e-8, within float32's rounding and accepted by check_joint, but the one-action chain
    # evaluate builds from it was refused ("each P[s, a, :] must sum to 1 (atol=1e-08); worst row
    # (batch=(0,), s=0, a=0) sums to 0.999999977648"), in nash_conv too. The joint policy is now
    # judged at float32's tolerance and renormalised, as per-player policies are. One state, P = 1:
    # V_i = mean(R_i)/(1 − γ) and the best response earns max_a mean_b R_i/(1 − γ).
    R = np.random.default_rng(0).normal(size=(2, 1, 10, 10))
    g = MarkovGame(np.ones((1, 10, 10, 1)), R, 0.9)
    joint = np.full((1, 10, 10), 0.01, dtype=np.float32)
    V = np.asarray(g.evaluate(joint))
    np.testing.assert_allclose(V[:, 0], R.mean(axis=(2, 3))[:, 0] / 0.1, rtol=1e-12, atol=1e-12)
    gain = R[0, 0].mean(axis=1).max() - R[0, 0].mean() + R[1, 0].mean(axis=0).max() - R[1, 0].mean()
    assert float(nash_conv(g, joint)) == pytest.approx(gain / 0.1, rel=1e-12)


def test_a_joint_policy_within_tolerance_is_evaluated():
    # check_joint accepts a row of K joint actions whose sum is within 1e-8·(1 + √K) of 1 (1.1e-7 for
    # K = 100), but the chain evaluate builds has one row per state, judged at 1e-8·(1 + √S): a
    # float64 joint summing to 1 − 5e-8 was accepted and then refused as "each P[s, a, :] must sum
    # to 1 (atol=1e-08); worst row (batch=(0,), s=0, a=0) sums to 0.99999995". Accepted rows are now
    # divided by their sums, so the chain is stochastic to rounding.
    R = np.random.default_rng(0).normal(size=(2, 1, 10, 10))
    g = MarkovGame(np.ones((1, 10, 10, 1)), R, 0.9)
    joint = np.full((1, 10, 10), 0.01)
    joint[0, 0, 0] -= 5e-8
    w = joint / joint.sum()
    V = np.asarray(g.evaluate(joint))
    np.testing.assert_allclose(V[:, 0], (R[:, 0] * w[0]).sum(axis=(1, 2)) / 0.1, rtol=1e-12, atol=1e-12)
    assert float(nash_conv(g, joint)) >= 0.0
    with pytest.raises(ValueError, match=r"each pi\[s, \.\.\.\] must sum to 1"):
        g.evaluate(np.full((1, 10, 10), 0.0101))  # a row summing to 1.01 is still refused


def test_a_finite_horizon_policy_within_tolerance_is_evaluated():
    # The same for Markov policies: policy[h, s] over 100 joint actions summing to 1 − 5e-8 passed
    # the policy check and the induced finite-horizon MDPs were refused ("each P[h, s, a, :] must
    # sum to 1 (atol=1e-08) ... sums to 0.99999995").
    R = np.random.default_rng(0).normal(size=(2, 1, 10, 10))
    g = MarkovGame(np.ones((1, 10, 10, 1)), R, None)
    pol = np.full((2, 1, 10, 10), 0.01)
    pol[:, 0, 0, 0] -= 5e-8
    w = pol[0, 0] / pol[0, 0].sum()
    stage = (R[:, 0] * w).sum(axis=(1, 2))
    np.testing.assert_allclose(finite_horizon_values(g, pol)[:, 0, 0], 2 * stage, rtol=1e-12, atol=1e-12)
    # coarse deviations against the other player's marginal, over H = 2 identical steps
    x, y = w.sum(axis=1), w.sum(axis=0)
    gain = 2 * ((R[0, 0] @ y).max() - stage[0]) + 2 * ((x @ R[1, 0]).max() - stage[1])
    assert finite_horizon_nash_conv(g, pol) == pytest.approx(gain, rel=1e-12)


def test_a_policy_within_tolerance_induces_an_mdp():
    # A column policy over B = 100 actions summing to 1 − 5e-8 passes the policy check (tolerance
    # 1e-8·(1 + √B)), but the row player's induced MDP P_ν = Σ_b ν(b|s) P(·|s, a, b) was refused at
    # 1e-8·(1 + √S): exploitability, evaluate_policy_pair and best_response raised "each P[s, a, :]
    # must sum to 1 (atol=1e-08); worst row (s=0, a=0) sums to 0.99999995". One state, P = 1.
    R = np.random.default_rng(0).normal(size=(1, 2, 100))
    g = ZeroSumMarkovGame(np.ones((1, 2, 100, 1)), R, 0.9)
    nu = np.full((1, 100), 0.01)
    nu[0, 0] -= 5e-8
    mu = np.full((1, 2), 0.5)
    w = nu[0] / nu[0].sum()
    np.testing.assert_allclose(evaluate_policy_pair(g, mu, nu)[0], (R[0] @ w).mean() / 0.1, rtol=1e-12)
    exact_gap = ((R[0] @ w).max() - (mu[0] @ R[0]).min()) / 0.1  # V^{BR,ν} − V^{μ,BR}
    assert float(exploitability(g, mu, nu).gap) == pytest.approx(exact_gap, rel=1e-12)
    assert float(best_response(g, nu, player=0).V[0]) == pytest.approx((R[0] @ w).max() / 0.1, rel=1e-12)
