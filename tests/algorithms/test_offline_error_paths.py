"""Error paths and rarely taken branches of the offline learners.

Modules: ``rltheory.algorithms._offline_common`` (feature checks), ``.offline`` (PEVI, linear
FQI), ``.offline_discounted``, ``.conservative`` (CQL), ``.marlhf`` and ``.offline_games``.
Each raise is reached through the public function a user calls and its message is pinned
to the field, index or value it must name; functional branches are checked against closed
forms computed by hand in the comments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.algorithms.marlhf import bradley_terry_mle, marlhf_equilibrium
from rltheory.algorithms.offline import (
    certainty_equivalence,
    conservative_evaluation,
    cql,
    lcb_vi_discounted,
    pevi,
)
from rltheory.algorithms.offline_games import (
    equilibrium_gap,
    interval_gap_bound,
    pessimistic_equilibrium_vi,
)
from rltheory.errors import ConvergenceWarning, InvalidModelError
from rltheory.mdp.offline_data import (
    EmpiricalModel,
    EpisodeDataset,
    PreferenceDataset,
    empirical_model,
    sample_game_episodes,
    sample_preferences,
)


def _bandit_data() -> EpisodeDataset:
    """One state, two actions, H = 2; every (h, a) seen twice with reward 1/2."""
    actions = np.array([[0, 1], [1, 0], [0, 0], [1, 1]])
    return EpisodeDataset(np.zeros((4, 3), int), actions, np.full((4, 2), 0.5), S=1, A=2)


def _coordination_game() -> tuple[np.ndarray, np.ndarray]:
    """One-state, one-step 2x2 coordination game (both players paid 1 on the diagonal)."""
    P = np.ones((1, 1, 2, 2, 1))
    R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    return P, R


def _uniform_joint(H: int = 1, S: int = 1, *actions: int) -> np.ndarray:
    shape = (H, S) + (actions or (2, 2))
    return np.full(shape, 1.0 / np.prod(shape[2:]))


# --------------------------------------------------------------------------- _offline_common
class TestFeatures:
    """``_features``: a non-finite feature is located in the array the user passed."""

    def test_stationary_features_name_the_index_of_the_given_array(self):
        # Bug fixed: (S, A, d) features were broadcast to (H, S, A, d) before the check, so the
        # message named the 4-index features[0, 0, 1, 1] of an array the user never built.
        phi = np.eye(2).reshape(1, 2, 2)
        phi[0, 1, 1] = np.nan
        with pytest.raises(ValueError, match=r"features must be finite; features\[0, 1, 1\] = nan"):
            pevi(_bandit_data(), phi, beta=1.0)

    def test_per_step_features_name_the_step(self):
        phi = np.broadcast_to(np.eye(2).reshape(1, 1, 2, 2), (2, 1, 2, 2)).copy()
        phi[1, 0, 1, 0] = np.inf
        with pytest.raises(ValueError, match=r"features must be finite; features\[1, 0, 1, 0\] = inf"):
            certainty_equivalence(_bandit_data(), features=phi)


# --------------------------------------------------------------------------- offline (PEVI / FQI)
class TestLinearOffline:
    """``pevi`` / linear ``certainty_equivalence`` argument checks and the default β."""

    @pytest.mark.parametrize("ridge", [-1.0, float("nan"), float("inf"), True])
    def test_ridge_must_be_finite_and_non_negative(self, ridge):
        with pytest.raises(ValueError, match=rf"ridge must be a finite number >= 0; got {ridge!r}"):
            certainty_equivalence(_bandit_data(), features=np.eye(2).reshape(1, 2, 2), ridge=ridge)

    def test_overflowing_gram_matrix_is_an_error(self):
        # features of size 1e200: Λ_0 overflowed to inf, Λ⁻¹ = 0, and pevi returned V = 0 with zero bonuses
        # (the recursion runs backwards, so the last step h = H − 1 = 1 is the first to be formed)
        with pytest.raises(ValueError, match=r"Λ_1 = Σ φφᵀ \+ ridge·I overflows at step h=1; .*max \|features\| = 1e\+200"):
            pevi(_bandit_data(), 1e200 * np.eye(2).reshape(1, 2, 2), beta=1.0)

    def test_unknown_beta_string(self):
        with pytest.raises(ValueError, match=r"beta must be a number, None or 'self-normalized'; got 'foo'"):
            pevi(_bandit_data(), np.eye(2).reshape(1, 2, 2), beta="foo")

    @pytest.mark.parametrize(("split", "ridge"), [(False, 1.0), (True, 0.0)])
    def test_self_normalized_needs_split_and_ridge(self, split, ridge):
        msg = rf"beta='self-normalized' needs split=True and ridge > 0 .*got split={split}, ridge={ridge}"
        with pytest.raises(ValueError, match=msg):
            pevi(_bandit_data(), np.eye(2).reshape(1, 2, 2), beta="self-normalized", split=split, ridge=ridge)

    @pytest.mark.parametrize("c", [1.0, 2.5])
    def test_default_beta_is_the_papers_radius(self, c):
        # beta=None is β = c·d·H·√ln(2dHK/δ) (Jin, Yang & Wang 2021, Thm 4.4); here d = 2,
        # H = 2, K = 4, δ = 0.1, so β = c·4·√ln(320).
        data, phi = _bandit_data(), np.eye(2).reshape(1, 2, 2)
        beta = c * 2 * 2 * math.sqrt(math.log(2 * 2 * 2 * 4 / 0.1))
        default = pevi(data, phi, delta=0.1, c=c)
        explicit = pevi(data, phi, beta=beta, delta=0.1)
        np.testing.assert_array_equal(default.bonus, explicit.bonus)
        np.testing.assert_array_equal(default.Q, explicit.Q)
        # one-hot features, ridge 1, n = 2 samples per (h, a): Γ = β/√(n + λ) = β/√3 everywhere
        np.testing.assert_allclose(default.bonus, np.full((2, 1, 2), beta / math.sqrt(3.0)), rtol=1e-14)


class TestDiscountedOffline:
    """``lcb_vi_discounted`` takes i.i.d. transitions, not episodes."""

    def test_needs_a_transition_dataset(self):
        with pytest.raises(TypeError, match=r"lcb_vi_discounted needs a TransitionDataset; got EpisodeDataset"):
            lcb_vi_discounted(_bandit_data(), 0.5)


# --------------------------------------------------------------------------- conservative (CQL)
def _exact_model() -> EmpiricalModel:
    """H = 2, one state, two actions; r_0 = (1, 0), r_1 = (1/2, 1/4); π_b = (1/4, 3/4)."""
    counts = np.ones((2, 1, 2), dtype=np.int64)
    P = np.ones((2, 1, 2, 1))
    R = np.array([[[[1.0, 0.0]], [[0.5, 0.25]]]])
    beh = np.broadcast_to(np.array([0.25, 0.75]), (2, 1, 2)).copy()
    return EmpiricalModel(counts, P, R, beh, (2,))


class TestConservative:
    """CQL's model and policy checks; the (S, A) policy branch against the closed form."""

    def test_joint_action_model_is_rejected(self):
        P, R = _coordination_game()
        m = empirical_model(sample_game_episodes(P, R, _uniform_joint(), 8, rng=0))
        with pytest.raises(InvalidModelError, match=r"cql is single-agent; the model has joint actions \(2, 2\)"):
            cql(m, alpha=1.0)

    def test_wrong_type(self):
        with pytest.raises(TypeError, match=r"cql needs an EpisodeDataset or EmpiricalModel; got list"):
            cql([1, 2], alpha=1.0)

    def test_stationary_policy_matches_the_closed_form(self):
        # V̂^π = V^π − α Σ_{h'≥h} D_CQL with D_CQL = Σ_a π²/π_b − 1 = 1/4/(1/4) + 1/4/(3/4) − 1 = 1/3
        # for π = (1/2, 1/2), α = 1: V^π_1 = 3/8, V^π_0 = 1/2 + 3/8, so V̂_1 = 1/24, V̂_0 = 5/24.
        V = conservative_evaluation(_exact_model(), np.array([[0.5, 0.5]]), alpha=1.0)
        np.testing.assert_allclose(V, [[5 / 24], [1 / 24], [0.0]], rtol=0, atol=1e-15)

    @pytest.mark.parametrize(
        ("policy", "msg"),
        [
            (np.array([[[0.5, 0.5]], [[1.5, -0.5]]]), r"policy\[h=1, s=0\] must be a distribution over the 2 actions; got \[1\.5, -0\.5\]"),
            (np.array([[0.6, 0.6]]), r"policy\[s=0\] must be a distribution over the 2 actions; got \[0\.6, 0\.6\]"),
            # NaN passed the old check and came back as NaN values
            (np.array([[np.nan, 1.0]]), r"policy\[s=0\] must be a distribution over the 2 actions; got \[nan, 1\.0\]"),
        ],
    )
    def test_non_distribution_rows_are_located(self, policy, msg):
        # The old message was "must be a stochastic (H, S, A) = (2, 1, 2) array; got shape (2, 1, 2)":
        # the right shape reported as the fault, no row, no value.
        with pytest.raises(ValueError, match=msg):
            conservative_evaluation(_exact_model(), policy, alpha=1.0)

    def test_wrong_shape(self):
        with pytest.raises(ValueError, match=r"policy must have shape \(H, S, A\) = \(2, 1, 2\) or \(S, A\) = \(1, 2\); got \(3, 1, 2\)"):
            conservative_evaluation(_exact_model(), np.full((3, 1, 2), 0.5), alpha=1.0)


# --------------------------------------------------------------------------- marlhf
def _one_step_preferences() -> PreferenceDataset:
    """Four comparisons of action 1 against action 0 (one state, one step), won 3 of 4."""
    a = EpisodeDataset(np.zeros((4, 2), int), np.ones((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    b = EpisodeDataset(np.zeros((4, 2), int), np.zeros((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    return PreferenceDataset(a, b, np.array([[1], [1], [1], [0]]))


def _game_preferences(actions: tuple[int, ...] = (2, 2)):
    n = len(actions)
    P = np.ones((1, 1) + actions + (1,))
    R = np.zeros((n, 1, 1) + actions)
    beh = np.full((1, 1) + actions, 1.0 / np.prod(actions))
    t1, t2 = (sample_game_episodes(P, R, beh, 6, rng=s) for s in (0, 1))
    return sample_preferences(t1, t2, R, rng=2), P


class TestBradleyTerry:
    """``bradley_terry_mle`` checks and the iteration-cap branch."""

    def test_needs_preferences(self):
        with pytest.raises(TypeError, match=r"bradley_terry_mle needs a PreferenceDataset; got EpisodeDataset"):
            bradley_terry_mle(_bandit_data())

    @pytest.mark.parametrize("max_iter", [0, 2.0, True])
    def test_max_iter_must_be_a_positive_integer(self, max_iter):
        with pytest.raises(ValueError, match=rf"max_iter must be a positive integer; got {max_iter!r}"):
            bradley_terry_mle(_one_step_preferences(), max_iter=max_iter)

    def test_iteration_cap_warns_and_returns_one_newton_step(self):
        # From θ = 0 (p = 1/2), one Newton step is θ_1 = (XᵀX/4 + λI)^{-1} Xᵀ(y − 1/2).
        prefs, ridge = _one_step_preferences(), 1e-3
        with pytest.warns(ConvergenceWarning, match=r"reached max_iter=1 with decrement .* > tol=1e-12"):
            fit = bradley_terry_mle(prefs, ridge=ridge, max_iter=1)
        assert not fit.converged and fit.iterations == 1
        X = np.tile([-1.0, 1.0], (4, 1))  # ψ(first) − ψ(second) over (a=0, a=1)
        y = np.array([1.0, 1.0, 1.0, 0.0])
        theta1 = np.linalg.solve(X.T @ X / 4 + ridge * np.eye(2), X.T @ (y - 0.5))
        np.testing.assert_allclose(fit.theta.reshape(-1), theta1, rtol=1e-12)


class TestMARLHF:
    """``marlhf_equilibrium`` argument checks."""

    def test_needs_preferences(self):
        # Used to fail with AttributeError: 'EpisodeDataset' object has no attribute 'first'.
        P, R = _coordination_game()
        d = sample_game_episodes(P, R, _uniform_joint(), 4, rng=0)
        with pytest.raises(TypeError, match=r"marlhf_equilibrium needs a PreferenceDataset; got EpisodeDataset"):
            marlhf_equilibrium(d, P, [_uniform_joint()], beta=1.0)

    @pytest.mark.parametrize("beta", [-1.0, float("nan"), True])
    def test_beta(self, beta):
        prefs, P = _game_preferences()
        with pytest.raises(ValueError, match=rf"beta must be a number >= 0; got {beta!r}"):
            marlhf_equilibrium(prefs, P, [_uniform_joint()], beta=beta)

    def test_kernel_shape(self):
        prefs, P = _game_preferences()
        with pytest.raises(ValueError, match=r"P must have shape \(H, S, A_1, \.\.\., A_n, S\) = \(1, 1, 2, 2, 1\); got \(1, 2, 2, 1\)"):
            marlhf_equilibrium(prefs, P[0], [_uniform_joint()], beta=1.0)

    def test_two_players_only_names_the_count(self):
        prefs, P = _game_preferences((2, 2, 2))
        with pytest.raises(ValueError, match=r"handles two players; got n = 3 \(action shape \(2, 2, 2\)\)"):
            marlhf_equilibrium(prefs, P, [_uniform_joint(1, 1, 2, 2, 2)], beta=1.0)


# --------------------------------------------------------------------------- offline_games
def _game_data(K: int = 40, behaviour: np.ndarray | None = None) -> EpisodeDataset:
    P, R = _coordination_game()
    return sample_game_episodes(P, R, _uniform_joint() if behaviour is None else behaviour, K, rng=0)


class TestOfflineGames:
    """Interval estimation / equilibrium learners: data, δ, β, ridge and concept checks."""

    @pytest.mark.parametrize("delta", [0, 1.5, True])
    def test_delta(self, delta):
        with pytest.raises(ValueError, match=rf"delta must be a probability in \(0, 1\); got {delta!r}"):
            interval_gap_bound(_game_data(), _uniform_joint(), delta=delta)

    def test_needs_an_episode_dataset(self):
        with pytest.raises(TypeError, match=r"pessimistic_equilibrium_vi needs an EpisodeDataset of joint actions; got dict"):
            pessimistic_equilibrium_vi({})

    def test_singular_gram_matrix_names_the_step(self):
        # Only the joint action (0, 0) is ever played, so with one-hot joint features and
        # λ = 0, Λ_0 = diag(K, 0, 0, 0) is singular.
        beh = np.zeros((1, 1, 2, 2))
        beh[0, 0, 0, 0] = 1.0
        with pytest.raises(ValueError, match=r"Λ_0 is singular at step h=0; use ridge > 0"):
            interval_gap_bound(_game_data(10, beh), _uniform_joint(), features=np.eye(4)[None], beta=1.0, ridge=0.0)

    def test_overflowing_gram_matrix_is_an_error(self):
        # Features of size 1e200 overflow Λ_0 to inf; Λ⁻¹ then came out as 0, so every radius
        # and the "certified" gap bound were silently 0.
        with pytest.raises(ValueError, match=r"Λ_0 = Σ φφᵀ \+ ridge·I overflows at step h=0; .*max \|features\| = 1e\+200"):
            interval_gap_bound(_game_data(), _uniform_joint(), features=1e200 * np.eye(4)[None], beta=1.0)

    def test_unknown_beta_string_is_named(self):
        # The old message blamed split/ridge: "beta='self-normalized' needs split=True and ridge > 0".
        with pytest.raises(ValueError, match=r"beta must be a finite number >= 0 or 'self-normalized'; got 'foo'"):
            interval_gap_bound(_game_data(), _uniform_joint(), features=np.eye(4)[None], beta="foo")

    @pytest.mark.parametrize("beta", [-1.0, float("nan"), float("inf")])
    def test_beta_must_be_a_finite_radius(self, beta):
        # β = −1 used to be accepted: the intervals flipped (lower 0.66 > upper 0.31) and the
        # "certified" gap bound came out as 0.
        with pytest.raises(ValueError, match=rf"beta must be a finite number >= 0 or 'self-normalized'; got {beta!r}"):
            interval_gap_bound(_game_data(), _uniform_joint(), features=np.eye(4)[None], beta=beta)

    def test_ridge_must_be_non_negative(self):
        with pytest.raises(ValueError, match=r"ridge must be a finite number >= 0; got -1\.0"):
            interval_gap_bound(_game_data(), _uniform_joint(), features=np.eye(4)[None], beta=1.0, ridge=-1.0)

    def test_self_normalized_needs_split(self):
        with pytest.raises(ValueError, match=r"beta='self-normalized' needs split=True and ridge > 0; got split=False, ridge=1\.0"):
            pessimistic_equilibrium_vi(_game_data(), concept="cce", features=np.eye(4)[None], beta="self-normalized", split=False)

    def test_exact_gap_reward_shape(self):
        P, R = _coordination_game()
        with pytest.raises(ValueError, match=r"R must have shape \(n, H, S, A_1, \.\.\., A_n\) = \(2, 1, 1, 2, 2\); got \(1, 1, 2, 2\)"):
            equilibrium_gap(P, R[0], _uniform_joint())

    def test_nash_concept_needs_two_players(self):
        P = np.ones((1, 1, 2, 2, 2, 1))
        R = np.zeros((3, 1, 1, 2, 2, 2))
        d = sample_game_episodes(P, R, _uniform_joint(1, 1, 2, 2, 2), 8, rng=0)
        with pytest.raises(ValueError, match=r"concept='nash' handles two players; got 3 \(use 'cce' or 'ce'\)"):
            pessimistic_equilibrium_vi(d, concept="nash")



# --------------------------------------------------------------------------- numpy scalars, default folds
class TestNumpyScalarArguments:
    """Settings given as numpy scalars (e.g. read from an array) are the same settings as floats."""

    @pytest.mark.parametrize("delta", [np.float32(0.25), np.array(0.25)])
    def test_lcb_vi_and_pevi_accept_numpy_delta(self, delta):
        # Bug fixed: the offline learners' delta check took only Python int/float, so
        # delta=np.float32(0.25) raised "delta must be a probability in (0, 1)".
        from rltheory.algorithms.offline import lcb_vi

        d = _bandit_data()
        assert np.array_equal(lcb_vi(d, delta=delta).V, lcb_vi(d, delta=0.25).V)
        phi = np.eye(2).reshape(1, 2, 2)
        assert np.array_equal(pevi(d, phi, delta=delta).V, pevi(d, phi, delta=0.25).V)

    def test_pevi_accepts_numpy_beta_and_ridge(self):
        # Bug fixed: beta=np.int64(1) / ridge=np.float32(1) raised "must be a finite number >= 0".
        d, phi = _bandit_data(), np.eye(2).reshape(1, 2, 2)
        ref = pevi(d, phi, beta=1.0, ridge=1.0)
        got = pevi(d, phi, beta=np.int64(1), ridge=np.float32(1.0))
        assert np.array_equal(got.Q, ref.Q) and np.array_equal(got.bonus, ref.bonus)

    def test_numpy_scalars_still_validated(self):
        d, phi = _bandit_data(), np.eye(2).reshape(1, 2, 2)
        with pytest.raises(ValueError, match=r"delta must be a probability in \(0, 1\); got np.float32\(1.0\)"):
            pevi(d, phi, beta=1.0, delta=np.float32(1.0))
        with pytest.raises(ValueError, match=r"beta must be a finite number >= 0; got np.float64\(-1.0\)"):
            pevi(d, phi, beta=np.float64(-1.0))
        with pytest.raises(ValueError, match=r"delta must be a probability in \(0, 1\); got True"):
            pevi(d, phi, beta=1.0, delta=True)

    def test_lcb_vi_discounted_accepts_numpy_gamma_delta_iterations(self):
        # Bug fixed: gamma=np.float32(0.5) and iterations=np.int64(2) were rejected as invalid.
        from rltheory.mdp.offline_data import TransitionDataset

        t = TransitionDataset(np.zeros(4, int), np.zeros(4, int), np.ones(4), np.zeros(4, int), S=1, A=1)
        ref = lcb_vi_discounted(t, 0.5, delta=0.25, iterations=2)
        got = lcb_vi_discounted(t, np.float32(0.5), delta=np.float32(0.25), iterations=np.int64(2))
        assert got.iterations == 2 and np.array_equal(got.V, ref.V)

    def test_offline_games_accept_numpy_delta(self):
        # Bug fixed: offline_games' own delta check rejected np.float32(0.25).
        P, R = _coordination_game()
        d = sample_game_episodes(P, R, _uniform_joint(), 40, rng=0)
        ref = pessimistic_equilibrium_vi(d, concept="cce", delta=0.25)
        got = pessimistic_equilibrium_vi(d, concept="cce", delta=np.float32(0.25))
        assert np.array_equal(got.policy, ref.policy)


class TestDiscountedDefaultFolds:
    """The default fold count ``⌈ln N/(1 − γ)⌉`` is capped at ``N``."""

    @pytest.mark.parametrize(("N", "gamma"), [(1, 0.5), (10, 0.9), (10, 0.999)])
    def test_default_folds_capped_at_n_and_pessimistic(self, N, gamma):
        # Bug fixed: with few tuples (⌈ln N/(1 − γ)⌉ > N, e.g. N = 10, γ = 0.9 gives 24) the
        # *default* raised "iterations must be an integer in [1, N = 10]; got None".
        # One state, one action, reward 1: V^π = 1/(1 − γ) for the only policy, and the
        # result must be a lower bound on it (pessimism) with T = N folds of one tuple each.
        from rltheory.mdp.offline_data import TransitionDataset

        t = TransitionDataset(np.zeros(N, int), np.zeros(N, int), np.ones(N), np.zeros(N, int), S=1, A=1)
        res = lcb_vi_discounted(t, gamma)
        assert res.iterations == N and res.counts.shape == (N, 1, 1)
        assert np.all(res.counts == 1)
        assert 0.0 <= res.V[0] <= 1.0 / (1.0 - gamma)


class TestHybridNumpyScalars:
    """``hybrid_npg`` settings given as numpy scalars give the same run as Python numbers (same seed)."""

    def test_numpy_scalars_same_run_as_python_numbers(self):
        # Bug fixed: eta=np.float32(1.0), iterations=np.int64(3), n_online=np.int64(4) and
        # ridge=np.float32(1.0) were each rejected ("must be a finite number > 0" / "an integer >= 0").
        from rltheory.algorithms.offline import hybrid_npg
        from rltheory.mdp import FiniteHorizonMDP

        g = np.random.default_rng(3)
        fh = FiniteHorizonMDP(g.dirichlet(np.ones(2), size=(2, 2, 2)), g.uniform(0, 1, (2, 2, 2)), mu=np.ones(2) / 2)
        phi = np.eye(4).reshape(2, 2, 4)
        ref = hybrid_npg(fh, phi, None, iterations=3, n_online=4, eta=1.0, ridge=1.0, rng=7)
        got = hybrid_npg(fh, phi, None, iterations=np.int64(3), n_online=np.int64(4), eta=np.float32(1.0),
                         ridge=np.float32(1.0), offline_weight=np.float64(1.0), rng=7)
        assert got.iterations == ref.iterations
        np.testing.assert_allclose(got.policy, ref.policy, rtol=1e-6)  # eta=1 exactly in float32
