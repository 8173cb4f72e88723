"""Edge cases of the tabular Q-learning family and its bound, found by a bug hunt outside the
ranges the other tests draw from (each test failed on the code before its fix)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms.q_learning import (
    constant_step,
    domo_vi,
    double_q_learning,
    linear_step,
    polynomial_step,
    q_learning,
    q_learning_replay,
    rescaled_linear_step,
    synchronous_q_learning,
    va_learning,
)
from rltheory.bounds import q_learning_bound
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP, policy_iteration
from rltheory.mdp.zoo import random_mdp

_QL = dict(alpha=0.1, gamma=0.5, initial_error=1.0, value_span=1.0)


@pytest.mark.parametrize(("n_pairs", "horizon", "delta"), [
    (1, 10**400, 0.1),          # T beyond the float range: 2.0 * n * T raised OverflowError
    (10**10, 10**300, 0.1),     # 2nT = 2e310 overflowed to inf: a vacuous bound of inf
    (4, 100, 1e-320),           # subnormal δ: 2nT/δ = inf although log(2nT/δ) = 743.5
], ids=["T=1e400", "nT=1e310", "delta=1e-320"])
def test_q_learning_bound_is_finite_where_only_2nT_over_delta_overflows(n_pairs, horizon, delta):
    # the bound is (1 − α(1−γ))^t e0 + γ sp √(α log(2nT/δ)/2)/(1−γ); its logarithm is a few hundred,
    # computed here from the exact big integer 2nT (math.log of an int does not overflow)
    log_term = math.log(2 * n_pairs * horizon) - math.log(delta)
    t = np.array([0.0, 5.0])
    want = 0.95**t * 1.0 + 0.5 * math.sqrt(0.1 * log_term / 2.0) / 0.5
    got = q_learning_bound(t, n_pairs=n_pairs, horizon=horizon, delta=delta, **_QL)
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_q_learning_bound_is_monotone_in_the_horizon_across_the_float_range():
    # non-decreasing in T (a union bound over more steps) on both sides of T = 1.8e308
    horizons = [10**k for k in (2, 300, 308, 309, 400, 4000)]
    vals = [float(q_learning_bound([3], n_pairs=6, horizon=h, delta=0.05, **_QL)[0]) for h in horizons]
    assert all(math.isfinite(v) for v in vals)
    assert all(a < b for a, b in zip(vals, vals[1:], strict=False))
    # ordinary sizes are unchanged to the bit: log(2nT/δ) as one quotient
    assert vals[0] == 0.95**3 + 0.5 * math.sqrt(0.1 * math.log(2.0 * 6 * 100 / 0.05) / 2.0) / 0.5


# ------------------------------------------------------------------------------ tables near the float range

def _learners(Qs: np.ndarray, c: float) -> dict:
    """Every learner on one seed; ``Q*``, ``Q0`` and the reward noise given in the units of ``c·r``."""
    kw = dict(rng=1, Q_star=c * Qs, reward_noise=0.5 * c)
    traj = dict(kw, steps=300, n_runs=4)
    return {
        "synchronous": lambda m: synchronous_q_learning(m, iterations=30, step_size=constant_step(0.7),
                                                        Q0=-c * np.ones(Qs.shape), **kw),
        "q_learning": lambda m: q_learning(m, step_size=constant_step(0.9), Q0=-c * np.ones(Qs.shape), **traj),
        "replay": lambda m: q_learning_replay(m, step_size=constant_step(0.9), replay_every=2, replay_updates=3,
                                              buffer_size=20, **traj),
        "double": lambda m: double_q_learning(m, step_size=constant_step(0.9), **traj),
        "va": lambda m: va_learning(m, step_size=constant_step(0.3), **traj),
    }


@pytest.mark.parametrize("name", ["synchronous", "q_learning", "replay", "double", "va"])
@pytest.mark.parametrize("k", [1000, 1021])
def test_learners_are_positively_homogeneous_up_to_the_float_range(name, k):
    # For fixed random draws every learner is positively homogeneous in (r, Q0, σ): max, argmax and the
    # step sizes commute with x -> c x, and c = 2^k is exact in floating point, so the run on c·r is
    # c times the run on r, to the bit, as long as the results are representable. Here max|Q*| = 2.2
    # and the tables reach 1.4·2^1021 = 3.4e308/2.4: within the float range. The old code formed
    # target − Q beyond it and returned NaN (replay, k = 1021).
    base = random_mdp(3, 2, gamma=0.9, rng=2)
    small = FiniteMDP(np.asarray(base.P), 2 * np.asarray(base.R) - 1, 0.9)
    c = 2.0**k
    big = FiniteMDP(np.asarray(base.P), np.asarray(small.R) * c, 0.9)
    Qs = np.asarray(policy_iteration(small).Q)
    a = _learners(Qs, 1.0)[name](small)
    b = _learners(Qs, c)[name](big)
    assert np.all(np.isfinite(b.Q))
    np.testing.assert_array_equal(b.Q, c * a.Q)
    for key in ("error", "value_bias"):
        np.testing.assert_array_equal(b.trace[key], c * a.trace[key])
    for key in a.extra or {}:
        np.testing.assert_array_equal(b.extra[key], c * a.extra[key])


def test_q_learning_from_an_opposite_start_near_the_float_range():
    # S = A = 1, γ = 0, r = 1e308, Q0 = −1e308, α = 1/2: Q_1 = (Q0 + r)/2 = 0, Q_2 = 5e307, Q_3 = 7.5e307
    # (exact in binary: halvings of 1e308). The old update Q + α(r − Q) formed r − Q0 = 2e308 = inf: NaN.
    mdp = FiniteMDP(np.ones((1, 1, 1)), np.array([[1e308]]), 0.0)
    res = q_learning(mdp, steps=3, step_size=constant_step(0.5), rng=0, Q0=[[-1e308]])
    assert res.Q[0, 0, 0] == 1e308 - 1e308 / 4
    # the trace: ‖Q_0 − Q*‖∞ = 2e308 is beyond the float range (inf), then 1e308, 5e307, 2.5e307
    np.testing.assert_array_equal(res.trace["error"][:, 0], [np.inf, 1e308, 5e307, 2.5e307])


def test_double_q_mean_of_two_tables_near_the_float_range():
    # S = 1, A = 2, γ = 0, r = (2^1023, −2^1023), α = 1: each table's entry is r(a) after its first update,
    # so once both tables have seen both actions Q = (Q_A + Q_B)/2 = r. The old mean formed Q_A + Q_B =
    # 2^1024 = inf.
    r = 2.0**1023
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[r, -r]]), 0.0)
    res = double_q_learning(mdp, steps=200, step_size=constant_step(1.0), rng=0)
    np.testing.assert_array_equal(res.extra["Q_A"][0, 0], [r, -r])
    np.testing.assert_array_equal(res.extra["Q_B"][0, 0], [r, -r])
    np.testing.assert_array_equal(res.Q[0, 0], [r, -r])
    assert res.trace["error"][-1, 0] == 0.0


# ------------------------------------------------------------------------------ step-size schedules


@pytest.mark.parametrize("rule", [lambda n: np.array([0.1, 0.2]), lambda n: [0.1], lambda n: np.full((2, 1), 0.1)],
                         ids=["two-steps", "list-of-one", "column"])
def test_schedules_returning_the_wrong_shape_raise_a_located_error(rule):
    # one step per count: a scalar for the synchronous sweep t, one per run for the trajectory learners
    # (double Q asks for the runs that update each table: 0 or 1 of them here). The old code raised
    # numpy's "only 0-dimensional arrays can be converted to Python scalars" or "non-broadcastable
    # output operand with shape (1,) ..." from inside the update.
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    with pytest.raises(ValueError, match=r"step_size must return one step per count; step_size\(0\) returned "
                                         r"shape \((1|2),"):
        synchronous_q_learning(mdp, iterations=3, step_size=rule, rng=0)
    if np.shape(rule(0)) == (1,):  # one step for the one run: fine for the trajectory learners
        return
    msg = r"step_size must return one step per count; step_size\(n\) for counts n of shape \((0|1),\) returned shape"
    for learner in (q_learning, double_q_learning, va_learning):
        with pytest.raises(ValueError, match=msg):
            learner(mdp, steps=3, step_size=rule, rng=0)
    with pytest.raises(ValueError, match=msg):
        q_learning_replay(mdp, steps=3, step_size=rule, rng=0, replay_every=1, replay_updates=1, buffer_size=2)


def test_schedules_may_return_a_scalar_or_one_step_per_run():
    # a schedule that ignores its argument (a plain float) broadcasts over the runs, as before
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    a = q_learning(mdp, steps=20, step_size=lambda n: 0.3, rng=4, n_runs=3).Q
    b = q_learning(mdp, steps=20, step_size=constant_step(0.3), rng=4, n_runs=3).Q
    np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------------ DoMo-VI


@pytest.mark.parametrize("n", [1, 2])
def test_domo_vi_bound_is_finite_from_any_start_for_value_iteration(n):
    # λ = 0, m = 1: Q_{k+1} = T^n Q_k, a γ^n-contraction from any start, so ‖Q* − Q_k‖∞ ≤ γ^{nk}‖Q* − Q_0‖∞
    # without T Q_0 ≥ Q_0 (the docstring's own round-off recursion says so: ε is not counted). The
    # trace reported +inf for k ≥ 1. S = 1, r = (1, 0), γ = 0.9: Q* = (10, 9); Q_0 = (8, 9.5) has
    # T Q_0 = (9.55, 8.55), not ≥ Q_0, and ‖Q* − Q_0‖∞ = 2.
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[1.0, 0.0]]), 0.9)
    with pytest.warns(ConvergenceWarning, match="iterations=6"):
        res = domo_vi(mdp, Q0=np.array([[8.0, 9.5]]), n_improve=n, m_eval=1, lam=0.0, iterations=6, tol=1e-300)
    rate = 2.0 * 0.9 ** (n * np.arange(7))
    bound, err = res.trace["bound"], res.trace["error"]
    assert np.all(np.isfinite(bound))
    assert np.all(err <= bound)
    # the rate plus a round-off allowance of relative 1e-12 of ‖Q*‖∞ = 10 (as in test_domo_roundoff.py)
    assert np.all(bound >= rate) and np.all(bound - rate <= 1e-12 * 10.0)
    np.testing.assert_allclose(res.Q, [[10.0, 9.0]], atol=2.0 * 0.9 ** (6 * n) + 1e-13)


# ------------------------------------------------------------------------------ the reference Q*


@pytest.mark.parametrize("bad", [np.full((3, 2), 1.0 + 2.0j), np.full((3, 2), "1.0")], ids=["complex", "string"])
def test_a_complex_or_string_reference_q_star_is_refused(bad):
    # the old np.asarray(Q_star, dtype=float) dropped the imaginary part (numpy only warns; the trace
    # was measured against Re Q_star) and parsed text as numbers; the library's rule for arrays is a
    # TypeError naming the argument (rltheory.backend.as_float)
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    msg = r"Q_star must hold real numbers; got a (complex|string) array"
    with pytest.raises(TypeError, match=msg):
        synchronous_q_learning(mdp, iterations=2, step_size=constant_step(0.5), rng=0, Q_star=bad)
    for learner in (q_learning, double_q_learning, va_learning):
        with pytest.raises(TypeError, match=msg):
            learner(mdp, steps=2, step_size=constant_step(0.5), rng=0, Q_star=bad)
    with pytest.raises(TypeError, match=msg):
        domo_vi(mdp, Q_star=bad)


def test_trace_of_a_float32_model_is_measured_against_the_float64_q_star():
    # deterministic transitions, α = 1: synchronous Q-learning is value iteration in float64 and reaches
    # Q* to rounding (γ^400 ≈ 5e-19); the samplers draw from the float64 row-normalised model. The
    # default reference was policy iteration on the float32 model, a float32 Q* 2.3e-6 off, and the
    # trace's error stalled at 2.3e-6 although the iterates were those of the float64 model to the bit.
    rng = np.random.default_rng(0)
    P = np.eye(4)[rng.integers(0, 4, size=(4, 2))]
    R = rng.random((4, 2)).astype(np.float32)
    m32 = FiniteMDP(P.astype(np.float32), R, 0.9)
    m64 = FiniteMDP(P, R.astype(np.float64), 0.9)
    a = synchronous_q_learning(m32, iterations=400, step_size=constant_step(1.0), rng=0)
    b = synchronous_q_learning(m64, iterations=400, step_size=constant_step(1.0), rng=0)
    np.testing.assert_array_equal(a.Q, b.Q)
    np.testing.assert_array_equal(a.trace["error"], b.trace["error"])
    assert a.trace["error"][-1] <= 1e-14 * 10.0  # ‖Q*‖∞ <= 10: rounding only
    q = q_learning(m32, steps=4000, step_size=constant_step(1.0), rng=0)
    assert q.trace["error"][-1, 0] <= 1e-14 * 10.0


@pytest.mark.parametrize(("factory", "call"), [(constant_step, r"constant_step\(0\.1\)"), (linear_step, r"linear_step\(\)"),
                                               (rescaled_linear_step, r"rescaled_linear_step\(gamma\)"),
                                               (polynomial_step, r"polynomial_step\(0\.8\)")],
                         ids=["constant", "linear", "rescaled", "polynomial"])
def test_a_schedule_factory_passed_uncalled_is_named(factory, call):
    # step_size=constant_step (not constant_step(0.1)) is callable, so it was called with the count and
    # failed inside the factory: "alpha must lie in (0, 1]; got 0", "gamma must lie in [0, 1); got
    # array([0.])", "omega must lie in (1/2, 1]; got 0", or numpy's "float() argument must be ... not
    # 'function'"
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    msg = rf"step_size must be a schedule n -> alpha_n; got the factory {factory.__name__} itself: call it, e.g. " \
          rf"step_size={call}"
    with pytest.raises(TypeError, match=msg):
        synchronous_q_learning(mdp, iterations=2, step_size=factory, rng=0)
    for learner in (q_learning, double_q_learning, va_learning):
        with pytest.raises(TypeError, match=msg):
            learner(mdp, steps=2, step_size=factory, rng=0)
    with pytest.raises(TypeError, match=msg):
        q_learning_replay(mdp, steps=2, step_size=factory, rng=0, replay_every=1, replay_updates=1, buffer_size=2)
    # bare numbers and arrays (unhashable) still get their own message
    for bare in (0.1, [0.1], np.array([0.1])):
        with pytest.raises(TypeError, match=r"step_size must be a callable n -> alpha_n"):
            q_learning(mdp, steps=2, step_size=bare, rng=0)


@pytest.mark.parametrize("alpha", [0.3, 0.5])
def test_va_learning_with_rewards_at_the_top_of_the_float_range(alpha):
    # S = 1, A = 2, γ = 0, r = ±1.25·2^1023: y − V(s) passes 2^1024 after a run of one action, so the old
    # update returned NaN; by positive homogeneity (exact for a power of two) the run is 2^1023 times
    # the run on r = ±1.25, whose V, A and Q stay below 2 in magnitude
    c = 2.0**1023
    one = va_learning(FiniteMDP(np.ones((1, 2, 1)), np.array([[1.25, -1.25]]), 0.0), steps=200,
                      step_size=constant_step(alpha), rng=0)
    big = va_learning(FiniteMDP(np.ones((1, 2, 1)), np.array([[1.25 * c, -1.25 * c]]), 0.0), steps=200,
                      step_size=constant_step(alpha), rng=0)
    assert np.all(np.isfinite(big.Q))
    np.testing.assert_array_equal(big.Q, c * one.Q)
    np.testing.assert_array_equal(big.extra["V"], c * one.extra["V"])
    np.testing.assert_array_equal(big.extra["A"], c * one.extra["A"])


def test_a_reward_noise_that_underflows_when_scaled_still_draws_its_samples():
    # rewards ±2^1023 make the learners run on inputs scaled by 2^-1024 (dac3fc5); σ = 5e-324 then
    # scales to 0, but the run must draw its noise as for any σ > 0, so that the generator's stream
    # (the synchronous transitions, double Q's table picks) is the one of the unscaled run: the same Q
    # as with σ = 1e-3 (drawn, and far below the rounding of entries of size 1e307)
    mdp = FiniteMDP(np.full((2, 2, 2), 0.5), np.array([[2.0**1023, 0.0], [0.0, -(2.0**1023)]]), 0.5)
    for run in (lambda s: synchronous_q_learning(mdp, iterations=5, step_size=constant_step(0.5), rng=3,
                                                 reward_noise=s).Q,
                lambda s: double_q_learning(mdp, steps=50, step_size=constant_step(0.5), rng=3, reward_noise=s).Q):
        np.testing.assert_array_equal(run(5e-324), run(1e-3))
        assert not np.array_equal(run(5e-324), run(0.0))  # the stream without noise draws differs


@pytest.mark.parametrize(("n", "m", "lam"), [(1, 1, 0.0), (1, 1, 1.0), (2, 2, 0.5)])
def test_domo_vi_near_the_top_of_the_float_range(n, m, lam):
    # S = 1, r = (2^1023, −2^1023), γ = 1/20: V* = r0/(1 − γ) = 9.46e307 and Q* = (V*, −r0 + γV*) =
    # (9.46e307, −8.52e307), both representable. From Q_0 = min r/(1 − γ) = −V*, T Q_0 − Q_0 = 2V* lies
    # beyond the float range: the old Retrace step formed inf − inf and returned Q = NaN, converged=False
    # (n = 1), and the bound was inf throughout (n = 2: ‖Q* − Q_0‖∞ = 2V*). DoMo-VI is positively
    # homogeneous in (r, Q_0, Q_ref) and now runs on these times 2^-1024 (exact).
    r0, g = Fraction(2) ** 1023, Fraction(1, 20)
    v = r0 / (1 - g)
    exact = [v, -r0 + g * v]
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[2.0**1023, -(2.0**1023)]]), 0.05)
    res = domo_vi(mdp, n_improve=n, m_eval=m, lam=lam)
    assert res.converged and np.all(np.isfinite(res.Q))
    err = max(abs(Fraction(float(res.Q[0, a])) - exact[a]) for a in range(2))
    assert err <= Fraction(float(res.trace["bound"][-1]))  # the certificate holds, finite
    assert res.trace["bound"][-1] <= 1e-12 * float(v)
    assert np.all(res.trace["error"] <= res.trace["bound"])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scaling_for_a_huge_start_keeps_ordinary_rewards_exact(dtype):
    # Q0 = 1e307, γ = 1/2 triggers the run on scaled inputs (M = 2e307 > 2^1000). α = 1 on deterministic
    # transitions is value iteration, Q_{t+1} = r + γ max_b Q_t(s', b), computed here directly in float64;
    # after 1100 sweeps 2^-1100·1e307 is below the rounding of Q* ~ 1. The first scaling (2^-1020, to
    # max |input| ~ 1) made float32 rewards 0 (Q → 0 instead of Q*) and put float64 rewards below 1/4
    # in the subnormal range; now c = 2^-21, just below 2^1000 for M, and float32 rewards are cast first.
    rng = np.random.default_rng(0)
    nxt = rng.integers(0, 4, size=(4, 2))
    R = rng.random((4, 2)).astype(dtype)
    mdp = FiniteMDP(np.eye(4)[nxt].astype(dtype), R, 0.5)
    res = synchronous_q_learning(mdp, iterations=1100, step_size=constant_step(1.0), rng=0, Q0=np.full((4, 2), 1e307),
                                 record_every=1100)
    Q = np.full((4, 2), 1e307)
    r64 = R.astype(np.float64)
    for _ in range(1100):
        Q = r64 + 0.5 * Q.max(-1)[nxt]
    assert np.abs(Q).max() < 2.0  # Q* in [0, 2]: the start has decayed away
    np.testing.assert_array_equal(res.Q, Q)
