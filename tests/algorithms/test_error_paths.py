"""Error paths and rarely taken branches of rltheory.algorithms, reached through the public API.

Each raise is pinned by the located part of its message (field, index, value); each
functional branch is checked against an independent reference (a closed form, an
exact solution of the library's exact layer, or a second public route to the same
quantity).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms import (
    ExactCritic,
    LSTDCritic,
    TDCritic,
    compatible_features,
    improper_policy_gradient,
    mixture_policy,
    natural_policy_gradient,
    policy_mirror_descent,
    projected_policy_gradient,
    softmax_gradient,
    softmax_linear_policy,
    softmax_policy_gradient,
)
from rltheory.algorithms.average_reward import (
    SmoothActionMDP,
    StepSchedule,
    average_reward_actor_critic,
    average_reward_gradient,
    differential_td,
    multilevel_actor_critic,
    off_policy_dpg,
)
from rltheory.algorithms.constrained import (
    general_utility_primal_dual,
    lagrangian_policy_gradient,
    npg_primal_dual,
    two_stage_calibrated,
)
from rltheory.algorithms.critics import compatible_critic, lstd, lstd_estimate
from rltheory.algorithms.domo import domo_vi
from rltheory.algorithms.features import rbf_features, state_action_features, tile_features
from rltheory.algorithms.hybrid import hybrid_actor_critic, hybrid_npg
from rltheory.algorithms.networked import NetworkedMDP, joint_policy, sis_network
from rltheory.algorithms.networked_pd import SafeNetworkedProblem, networked_primal_dual
from rltheory.algorithms.policy_mirror_descent import pmd_kl_step
from rltheory.algorithms.q_learning import (
    constant_step,
    q_learning,
    rescaled_linear_step,
    synchronous_q_learning,
)
from rltheory.algorithms.soft import (
    regularized_values,
    soft_bellman_operator,
    soft_value_iteration,
)
from rltheory.algorithms.td_fixed_point import expected_td, projected_fixed_point
from rltheory.errors import ConvergenceWarning, InvalidModelError
from rltheory.mdp import ConstrainedMDP, FiniteHorizonMDP, FiniteMDP, evaluate_policy, solve_cmdp
from rltheory.mdp.utility import linear_utility


def _bandit(gamma: float | None = 0.5) -> FiniteMDP:
    """One state, two actions with rewards (0, 1)."""
    return FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=gamma)


def _random_mdp(seed: int, S: int = 3, A: int = 2, gamma: float | None = 0.8) -> FiniteMDP:
    gen = np.random.default_rng(seed)
    return FiniteMDP(gen.dirichlet(np.ones(S), size=(S, A)), gen.random((S, A)), gamma=gamma)


# ----------------------------------------------------------------------------- _policy_opt
class TestPolicyOptCommon:
    """Shared argument checks and the iteration cap of the exact policy-optimisation drivers."""

    def test_rho_of_the_wrong_length(self):
        with pytest.raises(ValueError, match=r"rho must have shape \(\.\.\., S\) = \(\.\.\., 1\); got \(3,\)"):
            natural_policy_gradient(_bandit(), eta=1.0, iterations=1, rho=np.ones(3) / 3)

    def test_pi0_not_broadcastable_to_the_batch(self):
        P = np.broadcast_to(np.ones((1, 2, 1)), (2, 1, 2, 1))
        mdp = FiniteMDP(P, np.zeros((2, 1, 2)), gamma=0.5)
        with pytest.raises(ValueError, match=r"pi0 must broadcast to \(2, 1, 2\); got \(3, 1, 2\)"):
            projected_policy_gradient(mdp, eta=1.0, iterations=1, pi0=np.full((3, 1, 2), 0.5))

    def test_cap_with_tol_warns_and_reports_not_converged(self):
        # projected gradient from uniform with eta = 0.1 on the bandit (gamma = 0): pi(1) = 0.5 + 0.05 after one
        # step, so the gap 1 - pi(1) = 0.45 > tol at the cap (the stop is on the certified gap, which is
        # 0.45 up to its round-off allowance of ~1e-16).
        with pytest.warns(ConvergenceWarning, match=r"projected_policy_gradient reached iterations=1 with "
                                                      r"certified suboptimality 0\.45 > tol=1e-06") as rec:
            res = projected_policy_gradient(_bandit(0.0), eta=0.1, iterations=1, tol=1e-6)
        assert res.converged is False
        assert res.iterations == 1
        np.testing.assert_allclose(res.trace["suboptimality"], [0.5, 0.45], rtol=0, atol=1e-15)
        assert rec[0].filename == __file__  # the warning points at the caller


# ------------------------------------------------------------------------------ _q_common / q_learning
class TestQLearning:
    """The rng and Q_star arguments of the Q-learning family, the noisy synchronous target, step rules."""

    def test_generator_is_used_as_given(self):
        mdp = _random_mdp(0)
        a = q_learning(mdp, steps=50, step_size=constant_step(0.5), rng=7)
        b = q_learning(mdp, steps=50, step_size=constant_step(0.5), rng=np.random.default_rng(7))
        np.testing.assert_array_equal(a.Q, b.Q)
        gen = np.random.default_rng(7)
        q_learning(mdp, steps=50, step_size=constant_step(0.5), rng=gen)
        c = q_learning(mdp, steps=50, step_size=constant_step(0.5), rng=gen)  # the generator moved on
        assert not np.array_equal(a.Q, c.Q)

    def test_q_star_of_the_wrong_shape(self):
        with pytest.raises(ValueError, match=r"Q_star must have shape \(1, 2\); got \(2, 2\)"):
            q_learning(_bandit(), steps=2, step_size=constant_step(0.5), rng=0, Q_star=np.zeros((2, 2)))

    def test_reward_noise_has_the_requested_variance(self):
        # gamma = 0, alpha = 1: Q_t(s, a) = r(s, a) + sigma * xi_t exactly, so the traced error |Q_t - Q*| is
        # sigma |xi_t| with xi_t ~ N(0, 1); 400 instances x 10 sweeps = 4000 draws of xi^2 (mean 1, sd sqrt(2)).
        n_inst, T, sigma = 400, 10, 0.3
        P = np.ones((n_inst, 1, 1, 1))
        mdp = FiniteMDP(P, np.full((n_inst, 1, 1), 2.0), gamma=0.0)
        res = synchronous_q_learning(mdp, iterations=T, step_size=constant_step(1.0), rng=3, reward_noise=sigma)
        xi2 = (res.trace["error"][1:] / sigma) ** 2
        n = xi2.size
        assert abs(xi2.mean() - 1.0) < 5 * math.sqrt(2.0 / n)
        noiseless = synchronous_q_learning(mdp, iterations=T, step_size=constant_step(1.0), rng=3)
        np.testing.assert_array_equal(noiseless.Q, 2.0)

    def test_rescaled_linear_step_rejects_gamma_one(self):
        with pytest.raises(ValueError, match=r"gamma must lie in \[0, 1\); got 1\.0"):
            rescaled_linear_step(1.0)

    def test_rescaled_linear_step_rejects_a_bool(self):
        with pytest.raises(ValueError, match=r"gamma must lie in \[0, 1\); got False"):
            rescaled_linear_step(False)

    @pytest.mark.parametrize("alpha0", [0.0, -0.5, 1.5, True, float("nan")])
    def test_rescaled_linear_step_rejects_bad_alpha0(self, alpha0):
        with pytest.raises(ValueError, match=r"alpha0 must lie in \(0, 1\]; got "):
            rescaled_linear_step(0.9, alpha0=alpha0)


# ------------------------------------------------------------------------------ actor_critic
class TestActorCritic:
    """Shape checks of the softmax-linear and mixture policies, critic settings, the exact critic's fit."""

    def test_softmax_linear_policy_shape_mismatch(self):
        with pytest.raises(ValueError, match=r"disagree: \(1, 2, 2\) vs \(3,\)"):
            softmax_linear_policy(np.eye(2)[None], np.zeros(3))

    def test_exact_critic_fit_is_the_advantage_with_tabular_features(self):
        # Tabular features: psi^T w* = A^pi on the support of d (every state here: rho > 0).
        mdp = _random_mdp(1)
        S, A = mdp.S, mdp.A
        phi = np.eye(S * A).reshape(S, A, S * A)
        pi = np.random.default_rng(2).dirichlet(np.ones(A), size=S)
        rho = np.full(S, 1.0 / S)
        w = ExactCritic().fit(mdp, pi, phi, rho, np.random.default_rng(0), np.zeros(S * A))
        V = np.asarray(evaluate_policy(mdp, pi))
        adv = np.asarray(mdp.R) + mdp.gamma * np.asarray(mdp.P) @ V - V[:, None]
        np.testing.assert_allclose(compatible_features(phi, pi) @ w, adv, rtol=0, atol=1e-12)

    def test_lstd_critic_rejects_negative_ridge(self):
        with pytest.raises(ValueError, match=r"ridge must be >= 0; got -1\.0"):
            LSTDCritic(ridge=-1.0)

    def test_td_critic_rejects_zero_samples(self):
        with pytest.raises(ValueError, match=r"samples must be an integer >= 1; got 0"):
            TDCritic(samples=0)

    def test_mixture_policy_shape_mismatch(self):
        K = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
        with pytest.raises(ValueError, match=r"disagree: \(2, 1, 2\) vs \(3,\)"):
            mixture_policy(K, np.zeros(3))

    def test_improper_policy_gradient_theta0_shape(self):
        K = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
        with pytest.raises(ValueError, match=r"theta0 must have shape \(2,\); got \(3,\)"):
            improper_policy_gradient(_bandit(), K, eta=1.0, iterations=1, theta0=np.zeros(3))


# ------------------------------------------------------------------------------ average_reward
class TestAverageReward:
    """Model and argument checks of the average-reward learners; the discounted-model and projection branches."""

    def test_non_finite_mdp(self):
        with pytest.raises(TypeError, match=r"average_reward_gradient needs a FiniteMDP; got ndarray"):
            average_reward_gradient(np.ones((1, 2, 1)), np.zeros((1, 2)))

    def test_batched_model(self):
        mdp = FiniteMDP(np.ones((2, 1, 2, 1)), np.zeros((2, 1, 2)), gamma=None)
        with pytest.raises(ValueError, match=r"differential_td needs a single model; got batch_shape=\(2,\)"):
            differential_td(mdp, np.full((1, 2), 0.5), steps=1, rng=0)

    def test_non_finite_features_are_located(self):
        Phi = np.ones((2, 2))
        Phi[1, 0] = np.nan
        mdp = _random_mdp(0, S=2, gamma=None)
        with pytest.raises(ValueError, match=r"features must be finite; features\[1, 0\] = nan"):
            differential_td(mdp, np.full((2, 2), 0.5), steps=1, rng=0, features=Phi)

    def test_one_hot_features_equal_the_tabular_default(self):
        # Phi = I is exactly what features=None uses, so the two runs consume the same draws and agree.
        mdp = _random_mdp(4, S=3, gamma=None)
        pi = np.full((3, 2), 0.5)
        a = differential_td(mdp, pi, steps=300, rng=5)
        b = differential_td(mdp, pi, steps=300, rng=5, features=np.eye(3))
        np.testing.assert_array_equal(a.w, b.w)
        assert a.eta == b.eta

    @pytest.mark.parametrize(("kw", "msg"), [({"c": 0.0}, r"StepSchedule\.c must be a finite number > 0; got 0\.0"),
                                             ({"c": 1.0, "t0": math.inf}, r"StepSchedule\.t0 .*; got inf")])
    def test_step_schedule_rejects(self, kw, msg):
        with pytest.raises(ValueError, match=msg):
            StepSchedule(**kw)

    def test_gradient_of_a_discounted_model_is_the_average_reward_one(self):
        # Bandit-like model with two states that mix uniformly: J(uniform) = 1/2 and
        # dJ/dtheta[s, a] = mu(s) pi(a|s) (r(s, a) - 1/2) = 1/2 * 1/2 * (+-1/2) (the docstring's closed form);
        # gamma is ignored.
        P = np.full((2, 2, 2), 0.5)
        R = np.array([[0.0, 1.0], [0.0, 1.0]])
        grad, J = average_reward_gradient(FiniteMDP(P, R, gamma=0.9), np.zeros((2, 2)))
        assert J == pytest.approx(0.5, abs=1e-14)
        np.testing.assert_allclose(grad, [[-0.125, 0.125], [-0.125, 0.125]], rtol=0, atol=1e-14)

    def test_gradient_theta_shape(self):
        with pytest.raises(ValueError, match=r"theta must have shape \(S, A\) = \(1, 2\); got \(1, 3\)"):
            average_reward_gradient(_bandit(None), np.zeros((1, 3)))

    def test_optimal_gain_of_a_discounted_model(self):
        # g* of the bandit is max_a r(a) = 1 whatever gamma says.
        res = average_reward_actor_critic(_bandit(0.9), steps=5, rng=0, record_every=5)
        assert res.optimal_gain == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(res.trace["gain_gap"], 1.0 - res.trace["gain"], rtol=0, atol=1e-15)

    def test_mac_rejects_non_positive_actor_scale(self):
        with pytest.raises(ValueError, match=r"actor_scale must be > 0; got 0\.0"):
            multilevel_actor_critic(_bandit(None), iterations=1, T_max=4, rng=0, actor_scale=0.0)

    def test_mac_critic_projection(self):
        # The projection keeps ||omega|| <= R_omega; without it the same run leaves the ball (so the check bites).
        mdp = _random_mdp(6, S=3, gamma=None)
        kw = {"iterations": 60, "T_max": 8, "rng": 1, "critic_step": StepSchedule(0.5), "record_every": 60}
        free = multilevel_actor_critic(mdp, **kw)
        radius = 0.5 * float(np.linalg.norm(free.omega))
        assert radius > 0
        held = multilevel_actor_critic(mdp, omega_radius=radius, **kw)
        assert np.linalg.norm(held.omega) <= radius * (1 + 1e-12)

    @pytest.mark.parametrize("field", ["L", "r1"])
    def test_smooth_action_mdp_non_finite_is_located(self, field):
        kw = {"L": np.zeros((2, 2)), "K": np.eye(2), "r0": np.zeros(2), "r1": np.ones(2)}
        bad = kw[field].copy()
        bad.flat[-1] = np.inf
        kw[field] = bad
        where = r"\(s=1, s'=1\)" if field == "L" else r"\(s=1\)"
        with pytest.raises(InvalidModelError, match=rf"SmoothActionMDP\.{field} must be finite; "
                                                      rf"SmoothActionMDP\.{field}{where} = inf"):
            SmoothActionMDP(**kw)

    def test_smooth_action_mdp_negative_c(self):
        with pytest.raises(InvalidModelError, match=r"SmoothActionMDP\.c must be >= 0; got -0\.5"):
            SmoothActionMDP(np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2), c=-0.5)

    def test_off_policy_dpg_checks(self):
        model = SmoothActionMDP(np.zeros((2, 2)), np.eye(2), np.zeros(2), np.ones(2))
        with pytest.raises(TypeError, match=r"off_policy_dpg needs a SmoothActionMDP; got FiniteMDP"):
            off_policy_dpg(_bandit(None), steps=1, rng=0)
        with pytest.raises(ValueError, match=r"noise must be a finite number >= 0; got -1\.0"):
            off_policy_dpg(model, steps=1, rng=0, noise=-1.0)
        with pytest.raises(ValueError, match=r"theta0 must have shape \(S,\) = \(2,\); got \(3,\)"):
            off_policy_dpg(model, steps=1, rng=0, theta0=np.zeros(3))


# ------------------------------------------------------------------------------ constrained
def _cmdp(b: float = 0.25, c0: float = 0.0) -> ConstrainedMDP:
    """Bandit with gamma = 0, reward (0, 1) and cost (c0, 1) <= b."""
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    return ConstrainedMDP(mdp, np.array([[[c0, 1.0]]]), np.array([b]))


class TestConstrained:
    """Given Lambda / reference, utility and theta0 checks, and the calibrated two-stage bisection."""

    def test_explicit_lambda_and_reference_reproduce_the_defaults(self):
        # Passing the default Slater radius and the LP optimum explicitly gives the default run; another
        # reference shifts every gap by the difference; a tiny radius caps the duals.
        cmdp = ConstrainedMDP(_random_mdp(3), np.random.default_rng(4).random((1, 3, 2)), np.array([2.0]))
        base = npg_primal_dual(cmdp, iterations=5)
        ref = float(solve_cmdp(cmdp).value)
        given = npg_primal_dual(cmdp, iterations=5, Lambda=base.Lambda, reference=ref)
        assert given.Lambda == base.Lambda and given.reference == ref == base.reference
        for k in ("gap", "avg_gap", "violation", "lam_norm"):
            np.testing.assert_array_equal(given.trace[k], base.trace[k])
        shifted = npg_primal_dual(cmdp, iterations=5, Lambda=base.Lambda, reference=ref + 1.0)
        np.testing.assert_allclose(shifted.trace["gap"], base.trace["gap"] + 1.0, rtol=0, atol=1e-12)
        tight = npg_primal_dual(cmdp, iterations=5, Lambda=1e-3)
        assert tight.Lambda == 1e-3 and np.all(tight.duals <= 1e-3)
        with pytest.raises(ValueError, match=r"Lambda must be a finite number > 0; got -1\.0"):
            npg_primal_dual(cmdp, iterations=1, Lambda=-1.0)

    def test_utility_checks(self):
        mdp = _bandit()
        ok = linear_utility(np.zeros((1, 2)))
        wrong = linear_utility(np.zeros((2, 2)))
        kw = {"iterations": 1, "eta_theta": 1.0, "eta_mu": 1.0, "Lambda": 1.0}
        with pytest.raises(ValueError, match=r"objective has shape \(2, 2\); the model has \(S, A\) = \(1, 2\)"):
            general_utility_primal_dual(mdp, wrong, **kw)
        with pytest.raises(TypeError, match=r"constraints\[1\] must be a pair \(OccupancyFunction, threshold\)"):
            general_utility_primal_dual(mdp, ok, [(ok, 1.0), ok], **kw)
        with pytest.raises(ValueError, match=r"constraints\[0\] has shape \(2, 2\); the model has"):
            general_utility_primal_dual(mdp, ok, [(wrong, 1.0)], **kw)
        with pytest.raises(ValueError, match=r"theta0 must have shape \(S, A\) = \(1, 2\); got \(2, 2\)"):
            general_utility_primal_dual(mdp, ok, reference=0.0, theta0=np.zeros((2, 2)), **kw)

    @pytest.mark.parametrize(("mdp", "got"), [(_bandit(None), r"gamma=None"),
                                              (FiniteMDP(np.ones((2, 1, 2, 1)), np.zeros((2, 1, 2)), 0.5),
                                               r"batch_shape=\(2,\)"),
                                              (np.ones((1, 2, 1)), r"ndarray")])
    def test_general_utility_needs_a_single_discounted_model(self, mdp, got):
        with pytest.raises(ValueError, match=rf"general_utility_primal_dual needs a single discounted FiniteMDP; "
                                             rf"got .*{got}"):
            general_utility_primal_dual(mdp, linear_utility(np.zeros((1, 2))), iterations=1, eta_theta=1.0,
                                        eta_mu=1.0, Lambda=1.0)

    def test_lagrangian_pg_theta0_shape(self):
        with pytest.raises(ValueError, match=r"theta0 must have shape \(S, A\) = \(1, 2\); got \(3,\)"):
            lagrangian_policy_gradient(_cmdp(), iterations=1, eta_theta=1.0, eta_lambda=1.0, Lambda=1.0,
                                       reference=0.0, theta0=np.zeros(3))

    def test_two_stage_calibrated_finds_the_closed_form_weight(self):
        # gamma = 0, one state: stage 1 gives pi_1 ∝ exp(-c/tau), stage 2 pi ∝ pi_1 exp(r/w), so
        # V_c = pi(1) = sigmoid(1/w - 1/tau) <= b  <=>  w >= 1/(logit(b) + 1/tau) = w*. The bisection on
        # [0, w_max] returns hi_w with lo_w = hi_w - w_max 2^-n infeasible.
        tau, b, n = 0.1, 0.25, 30
        w_star = 1.0 / (math.log(b / (1 - b)) + 1.0 / tau)
        res = two_stage_calibrated(_cmdp(b), tau=tau, w_max=1.0, bisections=n)
        w = float(res.weights[0])
        assert w_star <= w <= w_star + 2.0**-n
        assert res.costs[0] <= b

    def test_two_stage_calibrated_infeasible_at_w_max(self):
        # cost (0.5, 1) > b = 0.25 for every policy: no weight helps.
        with pytest.raises(ValueError, match=r"with weight 1\.0 still violates the constraints \(costs \[0\.5\d*\], "
                                             r"b \[0\.25\]\)"):
            two_stage_calibrated(_cmdp(0.25, c0=0.5), tau=0.1, w_max=1.0)


# ------------------------------------------------------------------------------ critics / td_fixed_point / features
def _cycle() -> FiniteMDP:
    """Deterministic 2-cycle 0 -> 1 -> 0 with rewards (1, 0), gamma = 1/2: V = (4/3, 2/3)."""
    return FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), gamma=0.5)


class TestCritics:
    """LSTD(lambda) argument checks and its eligibility-trace branch; compatible critic and fixed-point checks."""

    @pytest.mark.parametrize(("kw", "msg"), [({"gamma": 1.0}, r"gamma must lie in \[0, 1\); got 1\.0"),
                                             ({"gamma": 0.5, "lam": 1.5}, r"lam must lie in \[0, 1\]; got 1\.5"),
                                             ({"gamma": 0.5, "ridge": -1.0}, r"ridge must be >= 0; got -1\.0")])
    def test_lstd_estimate_rejects(self, kw, msg):
        with pytest.raises(ValueError, match=msg):
            lstd_estimate(np.eye(2), np.zeros(2), np.eye(2), **kw)

    def test_lstd_lambda_traces_match_their_definition(self):
        # z_t = sum_{k<=t} (gamma lam)^(t-k) phi_k, so A = Z^T (F0 - gamma F1)/n and b = Z^T r/n with Z = W F0,
        # W[t, k] = (gamma lam)^(t-k) for k <= t.
        gen = np.random.default_rng(8)
        n, d, gamma, lam = 12, 3, 0.7, 0.6
        f0, f1, r = gen.normal(size=(n, d)), gen.normal(size=(n, d)), gen.normal(size=n)
        t = np.arange(n)
        W = np.where(t[:, None] >= t[None, :], (gamma * lam) ** np.clip(t[:, None] - t[None, :], 0, None), 0.0)
        Z = W @ f0
        theta, A, b = lstd_estimate(f0, r, f1, gamma=gamma, lam=lam)
        np.testing.assert_allclose(A, Z.T @ (f0 - gamma * f1) / n, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(b, Z.T @ r / n, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(A @ theta, b, rtol=1e-10, atol=1e-12)

    @pytest.mark.parametrize("lam", [0.5, 1.0])
    def test_lstd_lambda_is_exact_on_a_deterministic_chain(self, lam):
        # The Bellman equation holds on every transition of a deterministic chain, so V solves A theta = b.
        theta, fp = lstd(_cycle(), np.array([0, 0]), np.eye(2), steps=9, rng=0, lam=lam)
        np.testing.assert_allclose(theta, [4 / 3, 2 / 3], rtol=0, atol=1e-12)
        np.testing.assert_allclose(fp.values, [4 / 3, 2 / 3], rtol=0, atol=1e-12)

    def test_compatible_critic_psi_shape(self):
        with pytest.raises(ValueError, match=r"psi must have shape \(S, A, d\) = \(1, 2, d\); got \(2, 2, 2\)"):
            compatible_critic(_bandit(), np.full((1, 2), 0.5), np.zeros((2, 2, 2)))

    @pytest.mark.parametrize(("mdp", "got"), [(_bandit(None), r"gamma=None"), (np.ones(2), r"ndarray")])
    def test_fixed_point_needs_a_single_discounted_model(self, mdp, got):
        with pytest.raises(ValueError, match=rf"projected_fixed_point needs a single discounted FiniteMDP; "
                                             rf"got .*{got}"):
            projected_fixed_point(mdp, np.array([0]), np.eye(1))

    def test_fixed_point_with_a_given_weighting(self):
        # One-hot features: Phi theta* = V^pi for every positive weighting d.
        mdp = _random_mdp(9)
        pi = np.full((3, 2), 0.5)
        d = np.array([0.2, 0.3, 0.5])
        fp = projected_fixed_point(mdp, pi, np.eye(3), d=d, lam=0.3)
        np.testing.assert_array_equal(fp.d, d)
        np.testing.assert_allclose(fp.values, np.asarray(evaluate_policy(mdp, pi)), rtol=0, atol=1e-12)
        assert fp.error < 1e-12
        with pytest.raises(ValueError, match=r"d must have shape \(3,\); got \(2,\)"):
            projected_fixed_point(mdp, pi, np.eye(3), d=np.array([0.5, 0.5]))

    def test_expected_td_step_size(self):
        with pytest.raises(ValueError, match=r"step_size must be > 0; got 0\.0"):
            expected_td(_cycle(), np.array([0, 0]), np.eye(2), step_size=0.0, iterations=1)


class TestFeatures:
    """Shape and width checks of the feature maps."""

    def test_rbf_dimension_mismatch(self):
        with pytest.raises(ValueError, match=r"must agree in k; got \(2, 1\) and \(1, 2\)"):
            rbf_features([[0.0], [1.0]], [[0.0, 0.0]], width=1.0)

    def test_rbf_width(self):
        with pytest.raises(ValueError, match=r"width must be > 0; got 0\.0"):
            rbf_features([[0.0]], [[0.0]], width=0.0)

    def test_tile_coords_shape(self):
        with pytest.raises(ValueError, match=r"coords must have shape \(S, k\); got \(3,\)"):
            tile_features([0.0, 0.5, 1.0], low=[0.0], high=[1.0], n_tiles=2, n_tilings=1)

    def test_state_action_phi_shape(self):
        with pytest.raises(ValueError, match=r"phi must have shape \(S, d\); got \(3,\)"):
            state_action_features([1.0, 2.0, 3.0], 2)


# ------------------------------------------------------------------------------ domo
def test_domo_vi_tol():
    """domo_vi rejects a non-positive tolerance."""
    with pytest.raises(ValueError, match=r"tol must be > 0; got 0\.0"):
        domo_vi(_bandit(), tol=0.0)


# ------------------------------------------------------------------------------ hybrid
class TestHybrid:
    """Argument checks and the restart branch (steps no episode reaches) of the hybrid methods."""

    _fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[1.0, 1.0]]), H=2)
    _phi = np.eye(2).reshape(1, 2, 2)

    @pytest.mark.parametrize(("model", "got"), [
        (_bandit(), r"FiniteMDP"),
        (FiniteHorizonMDP.stationary(np.ones((2, 1, 2, 1)), np.ones((2, 1, 2)), H=2), r"batch_shape=\(2,\)"),
    ])
    def test_needs_a_single_finite_horizon_model(self, model, got):
        with pytest.raises(TypeError, match=rf"need a single \(unbatched\) FiniteHorizonMDP .*; got {got}"):
            hybrid_npg(model, self._phi, None, iterations=1, n_online=1, eta=1.0, rng=0)

    def test_iterations_and_offline_weight(self):
        with pytest.raises(ValueError, match=r"n_online must be an integer >= 0; got -1"):
            hybrid_actor_critic(self._fh, self._phi, None, iterations=1, n_online=-1, eta=1.0, rng=0)
        with pytest.raises(ValueError, match=r"offline_weight must be a number >= 0; got -0\.5"):
            hybrid_npg(self._fh, self._phi, None, iterations=1, n_online=1, eta=1.0, rng=0, offline_weight=-0.5)

    @pytest.mark.parametrize(("restart", "match"), [
        (np.ones((1, 1)), r"hybrid_npg: restart must have shape \(H, S\) = \(2, 1\); got \(1, 1\)"),
        (np.array([[1.0], [0.5]]), r"restart\[h, :\].*h=1"),
    ])
    def test_restart_is_checked(self, restart, match):
        with pytest.raises(ValueError, match=match):
            hybrid_npg(self._fh, self._phi, None, iterations=1, n_online=1, eta=1.0, rng=0, restart=restart)

    @pytest.mark.parametrize(("seed", "h0"), [(0, 1), (1, 0)])
    def test_restart_closed_form(self, seed, h0):
        # H = 2, one state, rewards 1, tabular features, ridge 1, one restarted episode per iteration.
        # Start at h0 = 1: step 0 has no data, so Q0 = 0 and pi_0 stays uniform; step 1 sees one (a, r = 1):
        # Q1(a) = 1/(1 + 1) = 1/2. Start at h0 = 0: additionally Q0(a') = (1 + V1)/2 with
        # V1 = sum_a pi(a) Q1(a) = 1/4 under the uniform pi, i.e. 5/8. Then pi_h ∝ exp(eta Q_h).
        eta = 2.0
        res = hybrid_npg(self._fh, self._phi, None, iterations=1, n_online=1, eta=eta, rng=seed,
                         restart=np.ones((2, 1)))
        assert res.trace["online_samples"][1] == 2 - h0
        np.testing.assert_allclose(np.sort(res.Q[1, 0]), [0.0, 0.5], rtol=0, atol=1e-15)
        np.testing.assert_allclose(np.sort(res.Q[0, 0]), [0.0, 0.625 if h0 == 0 else 0.0], rtol=0, atol=1e-15)
        for h in range(2):
            w = np.exp(eta * res.Q[h, 0])
            np.testing.assert_allclose(res.policy[h, 0], w / w.sum(), rtol=1e-14, atol=0)


# ------------------------------------------------------------------------------ networked / networked_pd
def _sis_parts(n: int = 2) -> tuple[nx.Graph, tuple, np.ndarray]:
    net = sis_network(nx.path_graph(n))
    return net.graph, net.P_local, np.asarray(net.R_local)


class TestNetworked:
    """NetworkedMDP invariants, the product initial law of given local laws, repr, theta checks."""

    def test_directed_graph(self):
        _, P, R = _sis_parts()
        with pytest.raises(InvalidModelError, match=r"graph must be an undirected networkx\.Graph; got DiGraph"):
            NetworkedMDP(nx.DiGraph(nx.path_graph(2)), P, R, 0.8)

    def test_policy_radius(self):
        g, P, R = _sis_parts()
        with pytest.raises(InvalidModelError, match=r"policy_radius must be a non-negative integer; got -1"):
            NetworkedMDP(g, P, R, 0.8, policy_radius=-1)

    def test_one_kernel_per_agent(self):
        g, P, R = _sis_parts()
        with pytest.raises(InvalidModelError, match=r"P_local must hold one kernel per agent \(n=2\); got 1"):
            NetworkedMDP(g, P[:1], R, 0.8)

    def test_mu_local_checks(self):
        g, P, R = _sis_parts()
        with pytest.raises(InvalidModelError, match=r"mu_local must have shape \(n, S_l\) = \(2, 2\); got \(2, 3\)"):
            NetworkedMDP(g, P, R, 0.8, mu_local=np.full((2, 3), 1 / 3))
        bad = np.array([[0.5, 0.5], [0.7, 0.7]])
        with pytest.raises(InvalidModelError, match=r"mu_local\[i, :\].*i=1"):
            NetworkedMDP(g, P, R, 0.8, mu_local=bad)

    def test_product_initial_distribution(self):
        # mu(s) = prod_i mu_i(s_i) with agent 0 most significant: the Kronecker product of the local laws.
        net = sis_network(nx.path_graph(3))
        mu = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]])
        net = net.replace(mu_local=mu)
        np.testing.assert_allclose(net.initial_distribution(), np.kron(np.kron(mu[0], mu[1]), mu[2]),
                                   rtol=1e-15, atol=0)

    def test_repr(self):
        net = sis_network(nx.path_graph(3), gamma=0.8, policy_radius=1)
        assert repr(net) == "NetworkedMDP(n=3, S_l=2, A_l=2, gamma=0.8, policy_radius=1)"

    def test_thetas_one_per_agent(self):
        net = sis_network(nx.path_graph(3))
        with pytest.raises(ValueError, match=r"thetas must hold one array per agent \(n=3\); got 2"):
            joint_policy(net, [np.zeros((2, 2))] * 2)

    def test_safe_problem_needs_a_networked_mdp(self):
        f = linear_utility(np.zeros((2, 2)))
        with pytest.raises(TypeError, match=r"net must be a NetworkedMDP; got FiniteMDP"):
            SafeNetworkedProblem(_bandit(), (f,), (f,), np.zeros(1))

    def test_primal_dual_needs_a_safe_problem(self):
        with pytest.raises(TypeError, match=r"problem must be a SafeNetworkedProblem; got NetworkedMDP"):
            networked_primal_dual(sis_network(nx.path_graph(2)), iterations=1, kappa=1, eta_theta=1.0,
                                  eta_mu=1.0, Lambda=1.0)


# ------------------------------------------------------------------------------ policy_gradient / PMD
class TestPolicyGradient:
    """Logit checks, a given theta0, the default soft solution, and sequences of PMD step sizes."""

    def test_non_finite_theta_is_located(self):
        theta = np.zeros((3, 2))
        theta[2, 1] = np.nan
        with pytest.raises(ValueError, match=r"theta must be finite; theta\(s=2, a=1\) = nan"):
            softmax_gradient(_random_mdp(0), theta)
        theta0 = np.zeros((2, 3, 2))
        theta0[1, 0, 1] = -np.inf
        with pytest.raises(ValueError, match=r"theta0 must be finite; theta0\(batch=\(1,\), s=0, a=1\) = -inf"):
            softmax_policy_gradient(_random_mdp(0), eta=1.0, iterations=1, theta0=theta0)

    def test_given_theta0_is_the_start(self):
        # One step from theta0 is theta0 + eta * (the exact gradient at theta0).
        mdp = _random_mdp(2)
        theta0 = np.random.default_rng(3).normal(size=(3, 2))
        res = softmax_policy_gradient(mdp, eta=0.7, iterations=1, theta0=theta0)
        np.testing.assert_allclose(res.theta, theta0 + 0.7 * np.asarray(softmax_gradient(mdp, theta0)),
                                   rtol=1e-13, atol=1e-14)

    def test_entropy_regularised_gap_uses_the_soft_optimum(self):
        # Bandit, gamma = 0, tau = 1/2: V*_tau = tau log(1 + e^(1/tau)) and, at uniform pi,
        # V_tau = 1/2 + tau log 2, so the first traced gap is their difference.
        tau = 0.5
        res = softmax_policy_gradient(_bandit(0.0), eta=1.0, iterations=3, tau=tau)
        want = tau * math.log(1 + math.exp(1 / tau)) - (0.5 + tau * math.log(2))
        assert res.trace["suboptimality"][0] == pytest.approx(want, rel=1e-12)
        assert np.all(np.diff(res.trace["suboptimality"]) < 0)

    def test_pmd_step_size_sequence(self):
        # A sequence of steps is applied in order (and its last entry repeated for the final record).
        mdp = _random_mdp(5)
        steps = [0.5, 2.0, 1.0]
        res = policy_mirror_descent(mdp, step_sizes=steps, iterations=3)
        pi = np.full((3, 2), 0.5)
        for eta in steps:
            pi = np.asarray(pmd_kl_step(mdp, pi, eta=eta))
        np.testing.assert_allclose(res.policy, pi, rtol=1e-13, atol=1e-15)
        np.testing.assert_array_equal(res.trace["step_size"], [0.5, 2.0, 1.0, 1.0])


# ------------------------------------------------------------------------------ soft
class TestSoft:
    """Shape and setting checks of the entropy-regularised evaluation and soft value iteration."""

    def test_regularized_values_policy_batch(self):
        with pytest.raises(ValueError, match=r"pi must have shape batch_shape \+ \(S, A\) = \(1, 2\) .*; "
                                             r"got \(3, 1, 2\)"):
            regularized_values(_bandit(), np.full((3, 1, 2), 0.5), tau=1.0)

    def test_soft_bellman_q_shape(self):
        with pytest.raises(ValueError, match=r"Q must have shape \(\.\.\., S, A\) = \(\.\.\., 1, 2\); got \(1, 3\)"):
            soft_bellman_operator(_bandit(), np.zeros((1, 3)), tau=1.0)

    @pytest.mark.parametrize(("kw", "msg"), [({"tol": 0.0}, r"tol must be > 0; got 0\.0"),
                                             ({"max_iter": 0}, r"max_iter must be a positive integer; got 0"),
                                             ({"Q0": np.zeros((2, 2))}, r"Q0 must have shape \(1, 2\); got \(2, 2\)")])
    def test_soft_value_iteration_rejects(self, kw, msg):
        with pytest.raises(ValueError, match=msg):
            soft_value_iteration(_bandit(), tau=1.0, **kw)
