"""Policy mirror descent (KL / Euclidean, constant / geometric steps) and tabular MDPO."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rltheory.algorithms.policy_gradient import npg_step
from rltheory.algorithms.policy_mirror_descent import (
    geometric_step_sizes,
    mdpo_step,
    pmd_euclidean_step,
    pmd_kl_step,
    policy_mirror_descent,
    project_simplex,
)
from rltheory.backend import to_numpy
from rltheory.bounds.policy_optimization import (
    kl_to_policy,
    mismatch_coefficient,
    pmd_linear_bound,
    pmd_sublinear_bound,
)
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import (
    FiniteMDP,
    evaluate_policy,
    policy_iteration,
    policy_transition_matrix,
    state_occupancy,
)
from rltheory.mdp.zoo import random_mdp
from rltheory.testing import discounts, finite_mdps, policies


def _optimal(mdp):
    sol = policy_iteration(mdp)
    return sol.policy, np.asarray(sol.V)


@given(finite_mdps(max_states=5, max_actions=4), st.data())
def test_kl_pmd_step_is_npg_with_rescaled_step(mdp, data):
    pi = data.draw(policies(mdp.S, mdp.A))
    eta = data.draw(st.floats(0.01, 10.0))
    np.testing.assert_allclose(pmd_kl_step(mdp, pi, eta=eta), npg_step(mdp, pi, eta=(1 - mdp.gamma) * eta), atol=1e-12)


@given(finite_mdps(max_states=6, max_actions=4), st.data())
def test_pmd_steps_improve_every_state(mdp, data):
    pi = data.draw(policies(mdp.S, mdp.A))
    eta = data.draw(st.floats(1e-3, 20.0))
    V0 = np.asarray(evaluate_policy(mdp, pi))
    tol = 1e-9 * (1 + np.abs(V0).max())
    for step in (pmd_kl_step, pmd_euclidean_step):
        V1 = np.asarray(evaluate_policy(mdp, step(mdp, pi, eta=eta)))
        assert np.all(V1 >= V0 - tol), step.__name__


@given(st.integers(1, 6), st.integers(0, 2**31))
def test_simplex_projection_is_the_euclidean_nearest_point(A, seed):
    import array_api_compat.numpy as xp

    rng = np.random.default_rng(seed)
    y = rng.normal(size=(5, A)) * 3
    p = np.asarray(project_simplex(xp.asarray(y), xp))
    assert np.all(p >= 0) and np.allclose(p.sum(-1), 1)
    # KKT: p = max(y - theta, 0), and no other simplex point is closer (check random competitors)
    comp = rng.dirichlet(np.ones(A), size=(200, 5))
    assert np.all(((comp - y) ** 2).sum(-1) >= ((p - y) ** 2).sum(-1)[None, :] - 1e-12)


@settings(max_examples=25)
@given(finite_mdps(max_states=5, max_actions=4, gamma=discounts(0.0, 0.95)), st.floats(0.05, 10.0))
def test_pmd_sublinear_bound_at_every_iterate_kl_and_euclidean(mdp, eta):
    pi_star, V_star = _optimal(mdp)
    rho = np.asarray(mdp.initial_distribution())
    d_star = np.asarray(state_occupancy(mdp, pi_star, rho))
    pi0 = np.full((mdp.S, mdp.A), 1.0 / mdp.A)
    K = 30
    k = np.arange(1, K + 1)
    star = np.eye(mdp.A)[np.asarray(pi_star)]
    divs = {
        pmd_kl_step: float(kl_to_policy(mdp, pi_star, pi0, d_star)),
        pmd_euclidean_step: float(d_star @ (0.5 * ((star - pi0) ** 2).sum(-1))),
    }
    for update, D0 in divs.items():
        res = policy_mirror_descent(mdp, step_sizes=eta, iterations=K, update=update, V_star=V_star)
        bound = pmd_sublinear_bound(k, eta=eta, gamma=mdp.gamma, kl0=D0)
        assert np.all(res.trace["suboptimality"][1:] <= bound + 1e-9), update.__name__


_THIRDS = np.array([[1 / 3, 2 / 3], [2 / 3, 1 / 3]])


@settings(max_examples=25)
@given(finite_mdps(max_states=5, max_actions=4, gamma=discounts(0.1, 0.95)), st.floats(0.01, 2.0))
# every policy is optimal (r ≡ 1): the computed V*(ρ) − V^{π_0}(ρ) was −3.5e-16 and
# pmd_linear_bound refused it as gap0 (a hypothesis example under the dev profile: −1.4e-16)
@example(FiniteMDP(np.stack([_THIRDS, _THIRDS]), np.ones((2, 2)), gamma=0.5), 1.0)
def test_pmd_linear_rate_xiao_form_at_every_iterate(mdp, eta0):
    pi_star, _ = _optimal(mdp)
    rho = np.asarray(mdp.initial_distribution())
    d_star = np.asarray(state_occupancy(mdp, pi_star, rho))
    theta = float(mismatch_coefficient(mdp, pi_star, rho)) / (1 - mdp.gamma)
    q = 1 - 1 / theta
    pi0 = np.full((mdp.S, mdp.A), 1.0 / mdp.A)
    K = 25
    # V* from the driver (policy_iteration with its certified bound), not passed in: a V_star
    # passed in is taken as exact, and only then is suboptimality_bound certified (>= the exact gap)
    res = policy_mirror_descent(mdp, step_sizes=geometric_step_sizes(eta0, 1 / q), iterations=K, rho=d_star)
    gap = res.trace["suboptimality"]  # weighted by d*_rho
    # The theorem's Δ_0 is the exact initial gap, >= 0; the computed gap[0] is within round-off of
    # it and can be negative. suboptimality_bound[0] >= Δ_0 is certified, and the bound is
    # non-decreasing in gap0, so the theorem holds with it in place of Δ_0.
    gap0 = float(res.trace["suboptimality_bound"][0])
    assert gap0 >= 0.0
    bound = pmd_linear_bound(np.arange(K + 1), rate=q, eta0=eta0, gap0=gap0,
                             kl0=float(kl_to_policy(mdp, pi_star, pi0, d_star)))
    assert np.all(gap <= bound + 1e-9)


def _stationary(P_pi):
    # a stationary distribution of P_pi: the lazy chain (I + P)/2 has the same ones and is
    # aperiodic, so uniform @ lazy^(2^60) converges to one of them
    M = 0.5 * (np.eye(P_pi.shape[0]) + P_pi)
    for _ in range(60):
        M = M @ M
        M /= M.sum(-1, keepdims=True)
    return np.full(P_pi.shape[0], 1.0 / P_pi.shape[0]) @ M


@settings(max_examples=25)
@given(finite_mdps(max_states=5, max_actions=4, gamma=discounts(0.1, 0.95)), st.floats(0.01, 2.0))
# every policy is optimal (r ≡ 1): the computed initial gap was −3.7e-16 and refused as gap0
@example(FiniteMDP(np.stack([_THIRDS, _THIRDS]), np.ones((2, 2)), gamma=0.5), 1.0)
def test_pmd_linear_rate_lan_form_gamma_contraction(mdp, eta0):
    pi_star, V_star = _optimal(mdp)
    nu = _stationary(np.asarray(policy_transition_matrix(mdp, pi_star)))
    np.testing.assert_allclose(np.asarray(state_occupancy(mdp, pi_star, nu)), nu, atol=1e-9)
    pi0 = np.full((mdp.S, mdp.A), 1.0 / mdp.A)
    K = 25
    # as in the Xiao form: V* from the driver, and the certified initial gap as gap0
    res = policy_mirror_descent(mdp, step_sizes=geometric_step_sizes(eta0, 1 / mdp.gamma), iterations=K, rho=nu)
    gap = res.trace["suboptimality"]
    gap0 = float(res.trace["suboptimality_bound"][0])
    assert gap0 >= 0.0
    bound = pmd_linear_bound(np.arange(K + 1), rate=mdp.gamma, eta0=eta0, gap0=gap0,
                             kl0=float(kl_to_policy(mdp, pi_star, pi0, nu)))
    assert np.all(gap <= bound + 1e-9 * (1 + np.abs(V_star).max()))


def test_mdpo_inner_loop_approaches_exact_pmd():
    mdp = random_mdp(6, 3, gamma=0.9, rng=4)
    pi = np.full((6, 3), 1 / 3)
    exact = pmd_kl_step(mdp, pi, eta=0.5)
    # with KL proximity the MDPO surrogate's maximiser is the KL-PMD step (t_k = eta); gap shrinks with m
    gaps = [np.abs(mdpo_step(mdp, pi, eta=0.5, inner_steps=m, inner_lr=5.0) - exact).max() for m in (1, 10, 30, 100)]
    assert all(b < a for a, b in zip(gaps[:-1], gaps[1:], strict=True))
    assert gaps[-1] < 1e-12
    # MDPO as the update of the driver
    res = policy_mirror_descent(mdp, step_sizes=0.5, iterations=5,
                                update=functools.partial(mdpo_step, inner_steps=2000, inner_lr=5.0))
    ref = policy_mirror_descent(mdp, step_sizes=0.5, iterations=5)
    np.testing.assert_allclose(res.trace["suboptimality"], ref.trace["suboptimality"], atol=1e-7)


def test_mdpo_keeps_the_support_of_pi_like_kl_pmd():
    # KL(π_θ‖π) is infinite off the support of π: the surrogate's maximiser is the KL-PMD step on
    # that support. MDPO used to reject such a π, and so also failed one step after its own ascent
    # rounded a probability to 0 (advantages of size 1e9 with inner_lr = 1).
    mdp = random_mdp(6, 3, gamma=0.9, rng=4)
    pi = np.full((6, 3), 1 / 3)
    pi[0], pi[2] = [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]
    out = mdpo_step(mdp, pi, eta=0.5, inner_steps=2000, inner_lr=5.0)
    assert out[0, 2] == 0.0 and np.all(out[2] == [0.0, 0.0, 1.0])
    np.testing.assert_allclose(out, pmd_kl_step(mdp, pi, eta=0.5), atol=1e-12)
    big = FiniteMDP(mdp.P, 1e9 * mdp.R, gamma=0.9)
    # inner_lr = 1 is far too large for the KL term's curvature d(s)/eta at eta = 1e-9: its ascent ends
    # below its start, a row farther from the MDPO step than pi itself. This run used to pass with a
    # ConvergenceWarning; such a step is now a ValueError naming the state (helper-57, session 17:
    # test_h57_mdpo_overshoot.py), so the rounding-to-0 case below uses an inner_lr the ascent can take.
    with pytest.raises(ValueError, match="inner gradient ascent ended below its start .* in state s="):
        policy_mirror_descent(big, step_sizes=geometric_step_sizes(1e-9, 2.0), iterations=60,
                              update=functools.partial(mdpo_step, inner_steps=3))
    # eta = 1, inner_lr = 1e-4: the ascent itself rounds probabilities to 0 (advantages ~1e9), the next
    # steps take that support, and the run stays on the simplex, improving at every step
    res = policy_mirror_descent(big, step_sizes=1.0, iterations=10,
                                update=functools.partial(mdpo_step, inner_steps=3, inner_lr=1e-4))
    assert np.any(np.asarray(res.policy) == 0.0)
    np.testing.assert_allclose(np.asarray(res.policy).sum(-1), 1.0)
    assert np.all(np.diff(res.trace["suboptimality"]) <= 1e-6)  # every step improves (Xiao 2022, Lemma 5)


def test_huge_steps_reach_the_policy_iteration_values():
    # eta_k -> infinity: KL-PMD approaches Howard's policy iteration, which is exact after finitely many steps
    mdp = random_mdp(7, 3, gamma=0.9, rng=8)
    res = policy_mirror_descent(mdp, step_sizes=geometric_step_sizes(1e3, 10.0), iterations=30)
    assert res.trace["suboptimality_inf"][-1] < 1e-8


@pytest.mark.parametrize("size", [1e15, 1e17, 1e300])
def test_simplex_projection_of_huge_rows(size):
    # Π is shift-invariant: rows (y_1 + size, ..., y_n + size) project like (y_1, ..., y_n).
    # Before the max-shift, rows of size ≳ 1e16 lost the threshold's "− 1" and projected to 0.
    import array_api_compat.numpy as xp

    y = np.array([[0.5, 0.25, -3.0], [2.0, 0.0, -1.0]])
    big = np.array([[size, size, -size], [2 * size, 0.0, -size]])
    p = np.asarray(project_simplex(xp.asarray(y + size), xp))
    np.testing.assert_allclose(p, np.asarray(project_simplex(xp.asarray(y), xp)), atol=size * 2**-52)
    # gaps far beyond 1: all mass on the row maximum (split evenly over exact ties)
    np.testing.assert_array_equal(np.asarray(project_simplex(xp.asarray(big), xp)), [[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])


def test_euclidean_pmd_with_geometric_steps_past_1e16():
    # Xiao (2022)'s linear rate takes η_k = η_0 q^{-k}: at η_0 = 1, ratio 2, η_k passes 1e16 at
    # k = 54, where the projection used to return all-zero rows (an InvalidModelError).
    mdp = random_mdp(5, 3, gamma=0.9, rng=3)
    res = policy_mirror_descent(mdp, step_sizes=geometric_step_sizes(1.0, 2.0), iterations=80,
                                update=pmd_euclidean_step)
    np.testing.assert_allclose(np.asarray(res.policy).sum(-1), 1.0)
    assert res.trace["suboptimality_inf"][-1] <= 1e-12


def test_euclidean_pmd_one_state_reference():
    # S = 1, gamma = 0, r = (0, 1), pi = (1/2, 1/2), eta = 1/4: Proj((1/2, 3/4)) = (3/8, 5/8)
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    np.testing.assert_allclose(pmd_euclidean_step(mdp, np.full((1, 2), 0.5), eta=0.25), [[0.375, 0.625]])


def test_pmd_batched_equals_per_instance():
    mdp = random_mdp(5, 3, gamma=0.9, rng=2, batch_shape=(3,))
    for update in (pmd_kl_step, pmd_euclidean_step):
        b = policy_mirror_descent(mdp, step_sizes=geometric_step_sizes(0.1, 1.5), iterations=10, update=update)
        for i in range(3):
            s = policy_mirror_descent(mdp[i], step_sizes=geometric_step_sizes(0.1, 1.5), iterations=10, update=update)
            np.testing.assert_allclose(b.policy[i], s.policy, atol=1e-12)


def test_pmd_kernels_under_every_backend(xp):
    m = random_mdp(4, 3, gamma=0.9, rng=5)
    mdp = FiniteMDP(xp.asarray(np.asarray(m.P)), xp.asarray(np.asarray(m.R)), gamma=0.9)
    pi = xp.asarray(np.full((4, 3), 1 / 3))
    p0 = np.full((4, 3), 1 / 3)
    for step in (pmd_kl_step, pmd_euclidean_step):
        np.testing.assert_allclose(to_numpy(step(mdp, pi, eta=0.3)), step(m, p0, eta=0.3), atol=1e-12)
    np.testing.assert_allclose(
        to_numpy(mdpo_step(mdp, pi, eta=0.3, inner_steps=5)), mdpo_step(m, p0, eta=0.3, inner_steps=5), atol=1e-12
    )


def test_exact_drivers_under_every_backend(xp):
    # Every exact policy-optimisation driver on a batched model gives the numpy run's
    # policies and traces (host arrays; on a GPU the rows stay on the device until the end
    # and the wall times are CUDA-event times), with and without a tol test.
    from rltheory.algorithms import (
        entropy_regularized_npg,
        projected_policy_gradient,
        softmax_policy_gradient,
    )

    m = random_mdp(5, 3, gamma=0.8, rng=7, batch_shape=(3,))
    mdp = FiniteMDP(xp.asarray(np.asarray(m.P)), xp.asarray(np.asarray(m.R)), gamma=0.8)
    runs = {
        "softmax PG": lambda M, **k: softmax_policy_gradient(M, eta=2.0, iterations=12, **k),
        "entropy NPG": lambda M, **k: entropy_regularized_npg(M, eta=0.5, tau=0.2, iterations=12, **k),
        "projected PG": lambda M, **k: projected_policy_gradient(M, eta=0.2, iterations=12, **k),
        "PMD (KL)": lambda M, **k: policy_mirror_descent(M, step_sizes=1.0, iterations=12, **k),
        "PMD (Euclidean)": lambda M, **k: policy_mirror_descent(
            M, step_sizes=0.5, iterations=12, update=pmd_euclidean_step, **k),
    }
    outcomes = set()
    for name, run in runs.items():
        for kw in ({}, {"tol": 1e-2}):
            with warnings.catch_warnings():  # some runs reach the cap: same warning on both backends
                warnings.simplefilter("ignore", ConvergenceWarning)
                got, ref = run(mdp, **kw), run(m, **kw)
            assert got.iterations == ref.iterations and got.converged == ref.converged, (name, kw)
            outcomes.add(got.converged)
            np.testing.assert_allclose(to_numpy(got.policy), np.asarray(ref.policy), atol=1e-10, err_msg=name)
            assert set(got.trace.metrics) == set(ref.trace.metrics), name
            for k, v in ref.trace.metrics.items():
                assert type(got.trace[k]) is np.ndarray, (name, k)
                np.testing.assert_allclose(got.trace[k], v, atol=1e-10, err_msg=f"{name}: {k}")
            w = got.trace.wall_time
            assert w.shape == (got.iterations + 1,) and w[0] >= 0 and np.all(np.diff(w) >= 0), name
    assert outcomes == {None, True, False}  # no tol, tol met early, tol missed at the cap


def test_pmd_validation():
    mdp = random_mdp(3, 2, gamma=0.9, rng=0)
    with pytest.raises(ValueError, match="step_sizes must be a finite number > 0"):
        policy_mirror_descent(mdp, step_sizes=-1.0, iterations=2)
    with pytest.raises(ValueError, match=r"step_sizes\[1\] must be a finite number > 0"):
        policy_mirror_descent(mdp, step_sizes=[1.0, 0.0, 1.0], iterations=2)
    with pytest.raises(ValueError, match="step_sizes has 2 entries but iterations=5"):
        policy_mirror_descent(mdp, step_sizes=[1.0, 1.0], iterations=5)
    with pytest.raises(ValueError, match=r"step_sizes\(0\) must be a finite number > 0"):
        policy_mirror_descent(mdp, step_sizes=lambda k: -1.0, iterations=2)
    with pytest.raises(ValueError, match="ratio must be >= 1"):
        geometric_step_sizes(1.0, 0.5)
    with pytest.raises(ValueError, match="inner_steps must be an integer >= 0"):
        mdpo_step(mdp, np.full((3, 2), 0.5), eta=1.0, inner_steps=-2)
    with pytest.raises(ValueError, match="rate must lie in"):
        pmd_linear_bound(1, rate=1.0, eta0=1.0, gap0=1.0, kl0=1.0)


def _float32_model(seed):
    """A float32 model at γ = 0.999 and its float64 twin on the row-normalised stored P (the
    stochastic model the certificates are about)."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(3, 0.5), size=(3, 2)).astype(np.float32)
    R = (10.0 * rng.uniform(size=(3, 2))).astype(np.float32)
    P64 = P.astype(np.float64)
    return FiniteMDP(P, R, gamma=0.999), FiniteMDP(P64 / P64.sum(-1, keepdims=True), R.astype(np.float64), gamma=0.999)


@pytest.mark.parametrize("seed", [4, 12, 23])
def test_float32_stopping_rule_is_certified(seed):
    """On float32 models at γ = 0.999 the computed V^π and V* (both from float32 solves) are off by
    far more than tol = 1e-4: stopping on the computed suboptimality returned converged=True with
    the traced value −0.15 / −0.19 / −0.26 and a true V*(ρ) − V^π(ρ) (float64 on the same stored
    model) of 0.010 / 0.047 / 0.129. The stopping rule now uses suboptimality_bound, which covers
    the true suboptimality at every iterate; here tol is below its round-off floor, so the run
    reports converged=False with a warning naming the floor."""
    m32, m64 = _float32_model(seed)
    V_star = np.asarray(policy_iteration(m64).V)
    with pytest.warns(ConvergenceWarning, match="round-off floor"):
        res = policy_mirror_descent(m32, step_sizes=geometric_step_sizes(1.0, 2.0), iterations=40, tol=1e-4)
    assert res.converged is False
    pi = np.asarray(res.policy, dtype=np.float64)
    true = float(np.mean(V_star - np.asarray(evaluate_policy(m64, pi / pi.sum(-1, keepdims=True)))))
    assert res.trace["suboptimality_bound"][-1] >= true


def test_suboptimality_bound_covers_the_float64_truth_along_the_run():
    """Every iterate's suboptimality_bound >= the true V*(ρ) − V^{π_k}(ρ) (float64 reference on the
    stored float32 model), and a tol above the floor is certified honestly (converged=True)."""
    m32, m64 = _float32_model(3)
    V_star = np.asarray(policy_iteration(m64).V)
    pis = []

    def update(mdp, pi, *, eta):
        pis.append(np.asarray(pi, dtype=np.float64))
        return pmd_kl_step(mdp, pi, eta=eta)

    res = policy_mirror_descent(m32, step_sizes=geometric_step_sizes(1.0, 2.0), iterations=12, update=update)
    pis.append(np.asarray(res.policy, dtype=np.float64))
    for k, pi in enumerate(pis):
        true = float(np.mean(V_star - np.asarray(evaluate_policy(m64, pi / pi.sum(-1, keepdims=True)))))
        assert res.trace["suboptimality_bound"][k] >= true, k
    tol = 3.0 * float(res.trace["suboptimality_bound"][-1])
    ok = policy_mirror_descent(m32, step_sizes=geometric_step_sizes(1.0, 2.0), iterations=40, tol=tol)
    assert ok.converged is True and ok.trace["suboptimality_bound"][-1] <= tol
