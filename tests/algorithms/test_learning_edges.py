"""Edge cases of the value learners: ill-conditioned and rank-deficient features, extreme γ, λ ∈ {0, 1},
degenerate models (one state, one action, deterministic) against closed forms, and argument validation."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.critics import (
    expected_td,
    lstd,
    lstd_estimate,
    projected_fixed_point,
    projection,
    random_features,
    rbf_features,
    state_action_features,
    td_linear,
    tile_features,
)
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
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP, evaluate_policy
from rltheory.mdp.zoo import random_mdp

# ------------------------------------------------------------------------------ projected fixed point


@pytest.mark.parametrize("gamma", [0.9, 0.99])
@pytest.mark.parametrize("eps", [1e-6, 1e-8])
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_fixed_point_depends_only_on_the_span_of_nearly_collinear_features(gamma, eps, lam):
    # Φθ* = Π_D T^(λ) Φθ* depends on Φ only through span Φ, and span{b0, b1, b0 + εb2} = span{b0, b1, b2}.
    # cond(√DΦ) ≈ 1/ε, so a backward-stable solve gives values within ~cond·ε_mach/(1−γ) of the
    # well-conditioned basis. Solving Aθ = b directly (cond(A) ≈ cond(√DΦ)²/(1−γ)) was off by 2e-5
    # (ε = 1e-6) and by 36% of max|V^π| or raised "Singular matrix" (ε = 1e-8).
    mdp = random_mdp(6, 2, gamma=gamma, rng=0)
    pi = np.full((6, 2), 0.5)
    B = random_features(6, 3, rng=1)
    F = np.column_stack([B[:, 0], B[:, 1], B[:, 0] + eps * B[:, 2]])
    ref = projected_fixed_point(mdp, pi, B, lam=lam)
    got = projected_fixed_point(mdp, pi, F, lam=lam)
    scale = float(np.abs(np.asarray(ref.V)).max())
    tol = 100 * np.finfo(float).eps / eps / (1 - gamma) * scale
    np.testing.assert_allclose(np.asarray(got.values), np.asarray(ref.values), rtol=0, atol=tol)
    assert abs(got.projection_error - ref.projection_error) <= tol
    assert abs(got.error - ref.error) <= tol
    # θ reproduces the values in the coordinates of Φ
    np.testing.assert_allclose(F @ np.asarray(got.theta), np.asarray(got.values), rtol=0, atol=tol)
    if lam == 1.0:  # λ = 1: the fixed point is the D-projection of V^π (Tsitsiklis & Van Roy 1997, Thm 1)
        assert abs(got.error - got.projection_error) <= tol


def test_rank_deficient_features_raise_a_located_error():
    # A column that is a combination of the others makes A singular; documented: LinAlgError. A direct
    # LU solve raised only when a pivot happened to round to 0 exactly, and otherwise returned a θ.
    mdp = random_mdp(5, 2, gamma=0.9, rng=0)
    pi = np.full((5, 2), 0.5)
    B = random_features(5, 2, rng=0)
    F = np.column_stack([B, 0.3 * B[:, 0] + 0.7 * B[:, 1]])
    with pytest.raises(np.linalg.LinAlgError, match=r"numerical rank 2 < k=3 .*column j=\d is, to rounding, a "
                                                    r"combination of columns \[\d, \d\]"):
        projected_fixed_point(mdp, pi, F)
    with pytest.raises(np.linalg.LinAlgError, match="k=6 columns but only S=5 states"):
        projected_fixed_point(mdp, pi, np.ones((5, 6)))
    # a transient state gets d = 0, so its one-hot column vanishes on the support of d
    P = np.zeros((3, 1, 3))
    P[0, 0, 1] = P[1, 0, 2] = P[2, 0, 1] = 1.0
    chain = FiniteMDP(P, np.ones((3, 1)), 0.5)
    with pytest.raises(np.linalg.LinAlgError, match="column j=0 of Phi vanishes on every state with d"):
        projected_fixed_point(chain, np.zeros(3, int), np.eye(3))
    with pytest.raises(np.linalg.LinAlgError, match=r"batch=\(1,\) has numerical rank 1 < k=2"):
        Phi = np.ones((2, 3, 2))
        Phi[0, :, 1] = [0.0, 1.0, 2.0]
        projection(Phi, np.full((2, 3), 1 / 3), np.zeros((2, 3)))


def test_one_hot_features_with_a_rarely_visited_state_stay_exact():
    # column equilibration: d(s) = 1e-40 is a small weight, not a rank deficiency; one-hot features
    # reproduce V^π for any weighting with full support (V^π = 1/(1 − γ) = 2 here)
    P = np.zeros((3, 1, 3))
    P[0, 0, 1] = P[1, 0, 2] = P[2, 0, 1] = 1.0
    chain = FiniteMDP(P, np.ones((3, 1)), 0.5)
    fp = projected_fixed_point(chain, np.zeros(3, int), np.eye(3), d=np.array([1e-40, 0.5, 0.5 - 1e-40]))
    np.testing.assert_allclose(np.asarray(fp.values), [2.0, 2.0, 2.0], rtol=1e-14)


def test_projection_is_least_squares_in_the_weighted_norm():
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(3, 5, 2))
    d = rng.dirichlet(np.ones(5), size=3)
    V = rng.normal(size=(3, 5))
    got = projection(Phi, d, V)
    for i in range(3):
        sw = np.sqrt(d[i])
        w = np.linalg.lstsq(sw[:, None] * Phi[i], sw * V[i], rcond=None)[0]
        np.testing.assert_allclose(got[i], Phi[i] @ w, atol=1e-13)


@pytest.mark.parametrize("gamma", [0.0, 1e-8, 0.999, 0.99999])
def test_lambda_one_fixed_point_is_the_monte_carlo_regression(gamma):
    # λ = 1: A = ΦᵀDΦ and b = ΦᵀDV^π, so θ* is the D-weighted least-squares fit of V^π
    mdp = random_mdp(6, 2, gamma=gamma, rng=2)
    pi = np.full((6, 2), 0.5)
    Phi = random_features(6, 3, rng=3)
    fp = projected_fixed_point(mdp, pi, Phi, lam=1.0)
    d, V = np.asarray(fp.d), np.asarray(evaluate_policy(mdp, pi))
    sw = np.sqrt(d)
    theta = np.linalg.lstsq(sw[:, None] * Phi, sw * V, rcond=None)[0]
    np.testing.assert_allclose(np.asarray(fp.theta), theta, rtol=1e-9 / (1 - gamma) * 1e-3 + 1e-12)
    assert abs(fp.error - fp.projection_error) <= 1e-12 / (1 - gamma) * np.abs(V).max()


@pytest.mark.parametrize("eps", [1e-6, 1e-8])
@pytest.mark.parametrize("lam", [0.0, 0.7, 1.0])
def test_lstd_values_depend_only_on_the_span_of_nearly_collinear_features(eps, lam):
    # On the same transitions, LSTD(λ) with Φ = [b0, b1, b0 + εb2] and with B = [b0, b1, b2] solves the
    # same projected sample equation (same span), so Φθ̂ = Bθ̂_B. The fixed point it is compared with
    # must agree too. A direct solve of Âθ = b̂ (cond ≈ cond(φ)²) was off by 1% (ε = 1e-6) and by
    # 20-40% (ε = 1e-8) of max|V̂|.
    mdp = random_mdp(6, 2, gamma=0.9, rng=0)
    pi = np.full((6, 2), 0.5)
    B = random_features(6, 3, rng=1)
    F = np.column_stack([B[:, 0], B[:, 1], B[:, 0] + eps * B[:, 2]])
    th_b, fp_b = lstd(mdp, pi, B, steps=3000, rng=5, lam=lam)
    th_f, fp_f = lstd(mdp, pi, F, steps=3000, rng=5, lam=lam)
    vb = B @ th_b
    tol = 100 * np.finfo(float).eps / eps / (1 - 0.9) * np.abs(vb).max()
    np.testing.assert_allclose(F @ th_f, vb, rtol=0, atol=tol)
    np.testing.assert_allclose(np.asarray(fp_f.values), np.asarray(fp_b.values), rtol=0, atol=tol)
    # the returned (Â, b̂) are the estimator's, in the coordinates of φ: Âθ̂ = b̂ up to cond(Â)·ε
    s = np.random.default_rng(0).integers(0, 6, size=40)
    th, A, b = lstd_estimate(F[s[:-1]], np.ones(39), F[s[1:]], gamma=0.5, lam=lam)
    np.testing.assert_allclose(F[s[:-1]] @ (A @ th), F[s[:-1]] @ b, atol=1e-6)


def test_lstd_rank_deficient_sample_raises_a_located_error():
    F = np.eye(3)[[0, 1, 0, 1]]  # feature 2 is never visited
    with pytest.raises(np.linalg.LinAlgError, match="column j=2 of phi vanishes on every sampled transition"):
        lstd_estimate(F, np.ones(4), F[[1, 0, 1, 0]], gamma=0.5)
    with pytest.raises(np.linalg.LinAlgError, match="k=3 columns but only n=2 transitions"):
        lstd_estimate(np.ones((2, 3)), np.ones(2), np.ones((2, 3)), gamma=0.5)
    with pytest.raises(np.linalg.LinAlgError, match="numerical rank 1 < k=2"):
        lstd_estimate(np.ones((4, 2)), np.ones(4), np.ones((4, 2)), gamma=0.5)
    # a ridge keeps the estimator defined (Tikhonov, in the coordinates of φ): feature 2 gets θ = 0
    th, _, _ = lstd_estimate(F, np.ones(4), F[[1, 0, 1, 0]], gamma=0.5, ridge=1e-3)
    assert th[2] == 0.0 and np.all(np.isfinite(th))


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.99, 0.99999])
def test_lstd_one_is_monte_carlo_regression_bootstrapped_at_the_end(gamma):
    # λ = 1: z_t = Σ_{i≤t} γ^{t−i} φ_i, so b̂ = (1/n) Σ_i φ_i G_i with the truncated returns
    # G_i = Σ_{t=i}^{n−1} γ^{t−i} r_t, and Â telescopes to (1/n) Σ_i φ_i (φ_i − γ^{n−i} φ_n)ᵀ: θ̂ is the
    # least-squares fit of the returns bootstrapped with γ^{n−i} φ_nᵀθ̂ at the end of the trajectory.
    rng = np.random.default_rng(0)
    n, k = 200, 3
    phi = rng.normal(size=(n + 1, k))
    r = rng.normal(size=n)
    theta, _, _ = lstd_estimate(phi[:-1], r, phi[1:], gamma=gamma, lam=1.0)
    G = np.array([sum(gamma ** (t - i) * r[t] for t in range(i, n)) for i in range(n)])
    w = gamma ** (n - np.arange(n))
    X = phi[:-1]
    ref = np.linalg.solve(X.T @ (X - w[:, None] * phi[n][None, :]), X.T @ G)
    np.testing.assert_allclose(theta, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


# ------------------------------------------------------------------------------ Q-learning family, closed forms

def _one_state(r: float, gamma: float, A: int = 1) -> FiniteMDP:
    return FiniteMDP(np.ones((1, A, 1)), np.full((1, A), r), gamma)


@pytest.mark.parametrize("gamma", [0.0, 1e-8, 0.5, 0.999, 0.99999])
def test_q_learning_on_one_state_one_action_follows_the_closed_form(gamma):
    # S = A = 1, reward r, constant step α: Q_{t+1} = (1 − α) Q_t + α (r + γ Q_t) from Q_0 = 0, so
    # Q_T = r (1 − (1 − α(1 − γ))^T) / (1 − γ). Every learner does the same update here.
    r, a, T = 2.0, 0.3, 50
    closed = r * (1 - (1 - a * (1 - gamma)) ** T) / (1 - gamma)
    mdp = _one_state(r, gamma)
    tol = 1e-13 * T / (1 - gamma) * r
    assert abs(synchronous_q_learning(mdp, iterations=T, step_size=constant_step(a), rng=0).Q[0, 0] - closed) <= tol
    assert abs(q_learning(mdp, steps=T, step_size=constant_step(a), rng=0).Q[0, 0, 0] - closed) <= tol
    rep = q_learning_replay(mdp, steps=T, step_size=constant_step(a), rng=0, replay_every=1, replay_updates=0,
                            buffer_size=3)
    assert abs(rep.Q[0, 0, 0] - closed) <= tol
    # VA-learning, documented update with y = r + γ(V + A): (V, A) ← (V + α(y − V), A + α(y − V − A))
    V = A = 0.0
    for _ in range(T):
        y = r + gamma * (V + A)
        V, A = V + a * (y - V), A + a * (y - V - A)
    va = va_learning(mdp, steps=T, step_size=constant_step(a), rng=0)
    assert abs(va.Q[0, 0, 0] - (V + A)) <= tol
    # DoMo-VI from Q_0 = min r/(1−γ) = Q*: one step, no move
    dm = domo_vi(mdp)
    assert dm.converged and dm.iterations == 1 and abs(dm.Q[0, 0] - r / (1 - gamma)) <= tol


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.9])
def test_double_q_on_one_state_with_two_tied_actions_is_exact_with_alpha_one(gamma):
    # S = 1, A = 2, equal rewards r: Q* = r/(1 − γ) for both actions. With α = 1 the picked entry
    # becomes r + γ·(the other table at an entry), so from 0 every entry is r Σ_{i<k} γ^i for its
    # update depth k: never above Q*, and within γ^k Q* of it once k is large.
    r = 1.0
    mdp = _one_state(r, gamma, A=2)
    res = double_q_learning(mdp, steps=400, step_size=constant_step(1.0), rng=3)
    QA, QB = res.extra["Q_A"][0, 0], res.extra["Q_B"][0, 0]
    cap = r / (1 - gamma)
    assert np.all(QA <= cap + 1e-12) and np.all(QB <= cap + 1e-12)
    if gamma < 0.9:  # 400 steps: depth ≫ log(1e-12)/log γ, so the tables have reached Q*
        np.testing.assert_allclose(res.Q[0, 0], [cap, cap], rtol=1e-12)


def test_domo_vi_bound_is_reported_only_for_a_certified_start():
    # S = 1, A = 2, r = (1, 0), γ = 0.9: Q* = (10, 9). From Q_0 = (8, 9.5), T Q_0 = (9.55, 8.55) is not
    # ≥ Q_0; the greedy policy picks the worse action 1 and five Retrace(1) steps pull Q toward
    # Q^π = (1, 0): ‖Q* − Q_1‖∞ = 5.52 > γ‖Q* − Q_0‖∞ = 1.8, which the trace used to report as its bound.
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[1.0, 0.0]]), 0.9)
    with pytest.warns(ConvergenceWarning, match="iterations=5"):
        res = domo_vi(mdp, Q0=np.array([[8.0, 9.5]]), n_improve=1, m_eval=5, lam=1.0, iterations=5)
    err, bound = res.trace["error"], res.trace["bound"]
    assert err[1] > 0.9 * err[0]  # the γ^{nk} rate fails from this start
    assert np.all(err <= bound) and np.all(np.isinf(bound[1:]))
    # from the default start min(r)/(1 − γ) (T Q_0 ≥ Q_0) the bound is finite and holds
    with pytest.warns(ConvergenceWarning, match="iterations=5"):
        res = domo_vi(mdp, n_improve=1, m_eval=5, lam=1.0, iterations=5)
    assert np.all(np.isfinite(res.trace["bound"]))
    np.testing.assert_allclose(res.trace["bound"], 10.0 * 0.9 ** np.arange(6))
    assert np.all(res.trace["error"] <= res.trace["bound"] + 1e-12)


def test_seeds_make_runs_reproducible_and_generators_advance():
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    pi = np.full((3, 2), 0.5)
    for run in (
        lambda rng: double_q_learning(mdp, steps=50, step_size=linear_step(), rng=rng, reward_noise=0.1).Q,
        lambda rng: va_learning(mdp, steps=50, step_size=constant_step(0.3), rng=rng).Q,
        lambda rng: q_learning_replay(mdp, steps=50, step_size=linear_step(), rng=rng, replay_every=2,
                                      replay_updates=3, buffer_size=10).Q,
        lambda rng: synchronous_q_learning(mdp, iterations=5, step_size=linear_step(), rng=rng,
                                           reward_noise=0.1).Q,
        lambda rng: td_linear(mdp, pi, np.eye(3), steps=50, step_size=0.1, rng=rng).theta,
        lambda rng: lstd(mdp, pi, np.eye(3), steps=50, rng=rng)[0],
    ):
        np.testing.assert_array_equal(run(7), run(np.random.default_rng(7)))
        gen = np.random.default_rng(7)
        first, second = run(gen), run(gen)
        assert not np.array_equal(first, second)  # the generator moved on


# ------------------------------------------------------------------------------ argument validation

@pytest.mark.parametrize("bad", [np.nan, -0.1, 1.5, np.inf])
def test_step_size_schedules_returning_bad_steps_raise(bad):
    # a schedule returning NaN used to turn Q into NaN silently; steps outside [0, 1] leave the
    # convex-combination update the convergence theorems are about
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    rule = lambda n: bad + 0.0 * np.asarray(n, dtype=float)  # noqa: E731
    msg = r"step_size must return steps in \[0, 1\]; step_size\(0(\.0)?\) = "
    with pytest.raises(ValueError, match=msg):
        synchronous_q_learning(mdp, iterations=3, step_size=rule, rng=0)
    for learner in (q_learning, double_q_learning, va_learning):
        with pytest.raises(ValueError, match=msg):
            learner(mdp, steps=3, step_size=rule, rng=0)
    with pytest.raises(ValueError, match=msg):
        q_learning_replay(mdp, steps=3, step_size=rule, rng=0, replay_every=1, replay_updates=1, buffer_size=2)
    if not bad >= 0 or not np.isfinite(bad):
        with pytest.raises(ValueError, match=r"step_size must return finite steps >= 0; step_size\(0\) = "):
            td_linear(mdp, np.full((3, 2), 0.5), np.eye(3), steps=3, step_size=lambda t: bad, rng=0)


def test_bare_number_step_size_and_bad_seeds_are_named():
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    pi = np.full((3, 2), 0.5)
    with pytest.raises(TypeError, match=r"step_size must be a callable n -> alpha_n .*got float 0\.5"):
        q_learning(mdp, steps=3, step_size=0.5, rng=0)
    with pytest.raises(TypeError, match=r"step_size must be a callable n -> alpha_n .*got float 0\.5"):
        synchronous_q_learning(mdp, iterations=3, step_size=0.5, rng=0)
    for bad in (True, 1.5, "a"):
        with pytest.raises(TypeError, match="rng must be a numpy.random.Generator or an int seed"):
            td_linear(mdp, pi, np.eye(3), steps=3, step_size=0.1, rng=bad)
        with pytest.raises(TypeError, match="rng must be a numpy.random.Generator or an int seed"):
            lstd(mdp, pi, np.eye(3), steps=3, rng=bad)
        with pytest.raises(TypeError, match="rng must be a numpy.random.Generator or an int seed"):
            random_features(3, 2, rng=bad)


def test_numpy_scalar_arguments_are_accepted_like_floats():
    # np.float32(0.5) used to be rejected with "alpha must lie in (0, 1]; got np.float32(0.5)"
    f32 = np.float32
    assert float(constant_step(f32(0.5))(3)) == 0.5
    assert float(constant_step(np.int64(1))(3)) == 1.0
    assert float(polynomial_step(f32(1.0))(1)) == 0.5
    assert float(rescaled_linear_step(f32(0.5))(2)) == 0.5
    assert float(rescaled_linear_step(0.5, alpha0=f32(0.5))(0)) == 0.5
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    pi = np.full((3, 2), 0.5)
    np.testing.assert_allclose(np.asarray(projected_fixed_point(mdp, pi, np.eye(3), lam=f32(0.5)).theta),
                               np.asarray(projected_fixed_point(mdp, pi, np.eye(3), lam=0.5).theta))
    e1 = expected_td(mdp, pi, np.eye(3), step_size=f32(0.5), iterations=3)["error"]
    np.testing.assert_allclose(e1, expected_td(mdp, pi, np.eye(3), step_size=0.5, iterations=3)["error"])
    F = np.eye(2)[[0, 1, 0]]
    np.testing.assert_allclose(lstd_estimate(F, np.ones(3), F[[1, 0, 1]], gamma=f32(0.5), lam=f32(0.5))[0],
                               lstd_estimate(F, np.ones(3), F[[1, 0, 1]], gamma=0.5, lam=0.5)[0])
    np.testing.assert_allclose(domo_vi(mdp, lam=f32(0.5), tol=f32(1e-6)).Q, domo_vi(mdp, lam=0.5, tol=1e-6).Q)
    np.testing.assert_allclose(rbf_features([[0.0]], [[1.0]], width=f32(1.0)), [[np.exp(-0.5), 1.0]])


def test_feature_maps_and_lstd_reject_bad_inputs_with_located_errors():
    with pytest.raises(ValueError, match=r"coords must be finite; coords\(s=1, i=0\) = nan"):
        rbf_features([[0.0], [np.nan]], [[0.0]], width=1.0)
    with pytest.raises(ValueError, match=r"centers must be finite; centers\(m=0, i=0\) = inf"):
        rbf_features([[0.0]], [[np.inf]], width=1.0)
    with pytest.raises(ValueError, match=r"coords must be finite; coords\(s=0, i=0\) = nan"):
        tile_features([[np.nan]], low=[0.0], high=[1.0], n_tiles=2, n_tilings=1)
    with pytest.raises(ValueError, match=r"high must be finite; high\(i=0\) = inf"):
        tile_features([[0.5]], low=[0.0], high=[np.inf], n_tiles=2, n_tilings=1)
    with pytest.raises(ValueError, match=r"low must be a scalar or have shape \(2,\) like coords' k; got \(3,\)"):
        tile_features([[0.5, 0.5]], low=[0.0, 0.0, 0.0], high=[1.0, 1.0], n_tiles=2, n_tilings=1)
    with pytest.raises(ValueError, match=r"phi must be finite; phi\(s=0, j=0\) = nan"):
        state_action_features([[np.nan]], 2)
    with pytest.raises(ValueError, match="gamma must lie in"):
        lstd_estimate(np.eye(2), np.ones(2), np.eye(2), gamma=False)
    with pytest.raises(ValueError, match="at least one transition; got n=0"):
        lstd_estimate(np.zeros((0, 2)), np.zeros(0), np.zeros((0, 2)), gamma=0.5)
