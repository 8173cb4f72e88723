"""Offline Markov games: certified gaps (NE/CE/CCE), exact gaps, Bradley–Terry MLE, MARLHF, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.offline_games import (
    bradley_terry_mle,
    equilibrium_gap,
    gap_relaxation_equilibrium,
    interval_gap_bound,
    marlhf_equilibrium,
    pessimistic_equilibrium_vi,
    trajectory_features,
)
from rltheory.bounds.coverage import (
    feature_covariance,
    relative_condition_number,
    unilateral_concentrability,
)
from rltheory.bounds.offline import offline_game_gap_rate
from rltheory.errors import InvalidModelError
from rltheory.games import (
    MarkovGame,
    correlated_value_iteration,
    finite_horizon_nash_conv,
    nash_value_iteration,
)
from rltheory.mdp.offline_data import (
    EpisodeDataset,
    PreferenceDataset,
    sample_game_episodes,
    sample_preferences,
    trajectory_returns,
)


def _game(seed: int, S: int = 2, A1: int = 2, A2: int = 2, H: int = 2):
    rng = np.random.default_rng(seed)
    P = rng.random((S, A1, A2, S))
    P /= P.sum(-1, keepdims=True)
    R = rng.random((2, S, A1, A2))
    game = MarkovGame(P, R, None)
    PH = np.broadcast_to(P, (H,) + P.shape).copy()
    RH = np.broadcast_to(R[:, None], (2, H) + R.shape[1:]).copy()
    return game, PH, RH


def _uniform(H, S, A1, A2):
    return np.full((H, S, A1, A2), 1.0 / (A1 * A2))


# ----------------------------------------------------------------------------- theorems
@pytest.mark.parametrize("concept", ["nash", "cce", "ce"])
def test_certified_gap_holds_with_probability(concept):
    # Must show: the offline-game output's gap sits under its bound. Over 40 seeded datasets the
    # event {Gap(π̂) ≤ μ·Ĝ and V̲_i ≤ V_i^π̂ pointwise} must have frequency ≥ 1 − δ.
    game, P, R = _game(0)
    H, S = 2, 2
    delta, runs, ok = 0.1, 40, 0
    mu = np.full(S, 0.5)
    for seed in range(runs):
        d = sample_game_episodes(P, R, _uniform(H, S, 2, 2), 300, rng=seed, rewards="bernoulli")
        res = pessimistic_equilibrium_vi(d, concept=concept, delta=delta)
        gap = equilibrium_gap(P, R, res.policy, concept=concept, mu=mu)
        # true values of π̂ for each player (exact, by the games layer)
        from rltheory.games.general_sum import finite_horizon_values

        V = finite_horizon_values(game, res.policy)
        ok += gap <= float(mu @ res.gap_bound) + 1e-12 and bool(np.all(res.lower <= V + 1e-12))
    assert ok / runs >= 1 - delta


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), concept=st.sampled_from(["nash", "cce", "ce"]))
def test_exact_intervals_recover_equilibria(seed, concept):
    # With exact backups (no data noise) the recursion is equilibrium VI: pessimistic VI on a
    # huge deterministic-reward dataset has gap ≤ its bound, and both shrink with data.
    game, P, R = _game(seed % 97)
    d = sample_game_episodes(P, R, _uniform(2, 2, 2, 2), 20000, rng=seed)
    res = pessimistic_equilibrium_vi(d, concept=concept, delta=0.05)
    gap = equilibrium_gap(P, R, res.policy, concept=concept)
    assert gap <= float(np.mean(res.gap_bound)) + 1e-12
    assert float(np.mean(res.gap_bound)) < 1.2


def test_gap_relaxation_rate_bound_under_unilateral_coverage():
    # With π* (a Nash equilibrium) among the candidates and uniform data (C_uni finite),
    # NashConv(π̂) ≤ Ĝ(π̂) ≤ the unilateral-coverage rate of bounds.offline.
    game, P, R = _game(3)
    H, S = 2, 2
    ne = nash_value_iteration(game, H).policy
    rng = np.random.default_rng(0)
    cands = [ne] + [np.eye(4)[rng.integers(0, 4, size=(H, S))].reshape(H, S, 2, 2) for _ in range(5)]
    K, delta = 20000, 0.1
    beh = _uniform(H, S, 2, 2)
    d = sample_game_episodes(P, R, beh, K, rng=1, rewards="bernoulli")
    res = gap_relaxation_equilibrium(d, cands, delta=delta)
    gap = equilibrium_gap(P, R, res.policy)
    x, y = ne.sum(3), ne.sum(2)
    from rltheory.bounds.coverage import finite_horizon_occupancy
    from rltheory.mdp import FiniteHorizonMDP

    rho = np.asarray(finite_horizon_occupancy(FiniteHorizonMDP(P.reshape(H, S, 4, S), np.zeros((H, S, 4))), beh.reshape(H, S, 4)))
    C_uni = unilateral_concentrability(P, [x, y], rho.reshape(H, S, 2, 2))
    rate = offline_game_gap_rate(C_uni, S, (2, 2), H, K, delta, n_candidates=len(cands))
    assert gap <= res.candidate_bounds[res.candidate] + 1e-12
    assert res.candidate_bounds[res.candidate] <= res.candidate_bounds[0] + 1e-12 <= rate


def test_linear_selective_coverage_certifies_where_unilateral_concentrability_is_infinite():
    # Issue 8 item 4: additively separable payoffs r_i(a, b) = u_i(a) + v_i(b) are linear in
    # φ(a, b) = [e_a; e_b]. The data never play the deviations (1, 0), (0, 1), (0, 2) of the
    # equilibrium (0, 0), so C_uni = ∞ and the tabular certificate stays large, but the sampled
    # pairs connect every row and column, so the linear intervals pin every deviation's value.
    u1, v1 = np.array([0.5, 0.2, 0.1]), np.array([0.3, 0.1, 0.0])
    u2, v2 = np.array([0.2, 0.1, 0.0]), np.array([0.5, 0.3, 0.1])
    R = np.stack([u1[:, None] + v1[None, :], u2[:, None] + v2[None, :]])[:, None, None] / 1.0
    P = np.ones((1, 1, 3, 3, 1))
    beh = np.zeros((3, 3))
    for a, b in [(0, 0), (1, 1), (2, 2), (1, 2), (2, 0), (2, 1)]:
        beh[a, b] = 1 / 6
    beh = beh[None, None]
    pi_star = np.zeros((1, 1, 3, 3))
    pi_star[0, 0, 0, 0] = 1.0
    assert equilibrium_gap(P, R, pi_star) == 0.0
    e = np.eye(3)[[0]][None]
    assert unilateral_concentrability(P, [e, e], beh) == math.inf
    phi = np.concatenate([np.repeat(np.eye(3)[:, None, :], 3, 1), np.repeat(np.eye(3)[None, :, :], 3, 0)], axis=-1)
    feats = phi.reshape(1, 9, 6)
    # deviations' feature covariance is covered by the data's: finite relative condition number
    dev = np.zeros((3, 3))
    dev[1:, 0] = dev[0, 1:] = 0.25
    kappa = relative_condition_number(feature_covariance(phi, dev), feature_covariance(phi, beh[0, 0]))
    assert math.isfinite(kappa)
    gaps = []
    for K in (10_000, 160_000):
        d = sample_game_episodes(P, R, beh, K, rng=K, rewards="bernoulli")
        lin = interval_gap_bound(d, pi_star, features=feats, beta="self-normalized", ridge=1e-3)
        tab = interval_gap_bound(d, pi_star)
        # unvisited deviations keep the optimistic value 1: Ĝ ≥ Σ_i (1 − r_i(0, 0)) = 0.2 + 0.3
        assert tab.gap_bound[0] >= 0.5
        gaps.append(float(lin.gap_bound[0]))
    # the linear certificate vanishes at ≈ 1/√K (16× data: ≥ 3× smaller, up to the √log det factor)
    assert gaps[1] < gaps[0] / 3 and gaps[1] < 0.2


# ----------------------------------------------------------------------------- reference values
def test_equilibrium_gap_reference_values():
    # Prisoner's dilemma in [0, 1] units: C = 0, D = 1; r1 = [[0.6, 0], [1, 0.2]], r2 = r1ᵀ.
    # (C, C): each player gains 1 − 0.6 = 0.4 by defecting → NashConv 0.8; (D, D) is the NE.
    r1 = np.array([[0.6, 0.0], [1.0, 0.2]])
    R = np.stack([r1, r1.T])[:, None, None]
    P = np.ones((1, 1, 2, 2, 1))
    cc, dd = np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 2, 2))
    cc[0, 0, 0, 0] = dd[0, 0, 1, 1] = 1.0
    assert equilibrium_gap(P, R, cc) == pytest.approx(0.8)
    assert equilibrium_gap(P, R, dd) == 0.0
    # Chicken-style correlated device: 1/3 on (0,1), (1,0), (1,1) is a CE of
    # r1 = [[0, 7], [2, 6]]/7, r2 = r1ᵀ (Aumann 1974): CE gap 0, CCE gap 0.
    c1 = np.array([[0.0, 7.0], [2.0, 6.0]]) / 7.0
    Rc = np.stack([c1, c1.T])[:, None, None]
    mu = np.array([[0.0, 1.0], [1.0, 1.0]])[None, None] / 3.0
    assert equilibrium_gap(P, Rc, mu, concept="ce") == pytest.approx(0.0, abs=1e-12)
    assert equilibrium_gap(P, Rc, mu, concept="cce") == pytest.approx(0.0, abs=1e-12)


def test_bradley_terry_reference_closed_form():
    # N comparisons of the same two trajectories, k won by the first: Δθ̂ = log(k/(N−k)) as λ → 0.
    N, k = 50, 35
    a = EpisodeDataset(np.zeros((N, 2), int), np.ones((N, 1), int), np.zeros((N, 1)), S=1, A=2)
    b = EpisodeDataset(np.zeros((N, 2), int), np.zeros((N, 1), int), np.zeros((N, 1)), S=1, A=2)
    y = np.zeros((N, 1), int)
    y[:k] = 1
    fit = bradley_terry_mle(PreferenceDataset(a, b, y), ridge=1e-10)
    assert fit.converged
    assert float(fit.theta[0, 0, 0, 1] - fit.theta[0, 0, 0, 0]) == pytest.approx(math.log(k / (N - k)), abs=1e-6)


# ----------------------------------------------------------------------------- consistency
def test_exact_gap_agrees_with_games_layer():
    game, P, R = _game(5, A2=3)
    rng = np.random.default_rng(1)
    for _ in range(4):
        joint = rng.dirichlet(np.ones(6), size=(2, 2)).reshape(2, 2, 2, 3)
        x, y = rng.dirichlet(np.ones(2), size=(2, 2)), rng.dirichlet(np.ones(3), size=(2, 2))
        prod = x[..., :, None] * y[..., None, :]
        assert equilibrium_gap(P, R, prod) == pytest.approx(finite_horizon_nash_conv(game, prod), abs=1e-12)
        assert equilibrium_gap(P, R, joint, concept="cce") == pytest.approx(finite_horizon_nash_conv(game, joint), abs=1e-12)
        assert equilibrium_gap(P, R, joint, concept="ce") >= equilibrium_gap(P, R, joint, concept="cce") - 1e-12
    assert equilibrium_gap(P, R, nash_value_iteration(game, 2).policy) == pytest.approx(0.0, abs=1e-9)
    assert equilibrium_gap(P, R, correlated_value_iteration(game, 2).policy, concept="ce") == pytest.approx(0.0, abs=1e-7)


def test_tabular_intervals_equal_linear_one_hot_intervals():
    # H = 1: the Hoeffding radius √(ln(2/δ')/(2n)) is β/√n with β = √(ln(2/δ')/2); one-hot
    # features with λ = 0 give the same means, so the certificates coincide.
    game, P, R = _game(7, S=2, H=1)
    d = sample_game_episodes(P, R, _uniform(1, 2, 2, 2), 500, rng=3, rewards="bernoulli")
    delta = 0.1
    dprime = delta / (2 * 2 * 1 * 1 * 2 * 4)  # players·H·|Π|·2 functions·S·J
    beta = math.sqrt(math.log(2 / dprime) / 2)
    pol = _uniform(1, 2, 2, 2)
    tab = interval_gap_bound(d, pol, delta=delta)
    lin = interval_gap_bound(d, pol, delta=delta, features=_onehot_joint(2, 4), beta=beta, ridge=0.0)
    assert np.allclose(tab.lower, lin.lower) and np.allclose(tab.upper, lin.upper)
    assert np.allclose(tab.gap_bound, lin.gap_bound)


def _onehot_joint(S: int, J: int) -> np.ndarray:
    return np.eye(S * J).reshape(S, J, S * J)


def test_bradley_terry_recovers_rewards():
    # Must show: BT-MLE recovers rewards. Random H = 2 trajectories of a 2×2 game; the fitted
    # return differences of fresh pairs match the true ones, and the error shrinks ~ 1/√N.
    game, P, R = _game(11)
    beh = _uniform(2, 2, 2, 2)
    errs = []
    test1 = sample_game_episodes(P, R, beh, 500, rng=100)
    test2 = sample_game_episodes(P, R, beh, 500, rng=101)
    true = trajectory_returns(test1, R) - trajectory_returns(test2, R)
    X = trajectory_features(test1) - trajectory_features(test2)
    for N in (2000, 32000):
        t1 = sample_game_episodes(P, R, beh, N, rng=N)
        t2 = sample_game_episodes(P, R, beh, N, rng=N + 1)
        fit = bradley_terry_mle(sample_preferences(t1, t2, R, rng=N + 2, scale=1.0), ridge=1e-3)
        assert fit.converged
        est = X @ fit.theta.reshape(2, -1).T
        errs.append(float(np.sqrt(np.mean((est - true) ** 2))))
    assert errs[1] < 0.1 and errs[1] < errs[0] / 2.5  # 16× data: ≈ 4× smaller error (≥ 2.5× required)


def test_marlhf_prefers_certified_equilibrium():
    # Coordination game with equilibria (0,0), (1,1); uniform data cover every deviation.
    P = np.ones((1, 1, 2, 2, 1))
    R = np.stack([np.array([[0.8, 0.0], [0.0, 0.4]])] * 2)[:, None, None]
    beh = np.full((1, 1, 2, 2), 0.25)
    rng = np.random.default_rng(0)
    t1, t2 = sample_game_episodes(P, R, beh, 4000, rng=rng), sample_game_episodes(P, R, beh, 4000, rng=rng)
    prefs = sample_preferences(t1, t2, R, rng=rng, scale=5.0)
    cands = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]
    out = marlhf_equilibrium(prefs, P, cands, beta=3.0)
    assert out.candidate in (0, 3) and equilibrium_gap(P, R, out.policy) == 0.0
    assert np.all(out.gap_ucb[[1, 2]] > out.gap_ucb[out.candidate])


# ----------------------------------------------------------------------------- validation
def test_offline_games_located_errors():
    _, P, R = _game(0)
    d = sample_game_episodes(P, R, _uniform(2, 2, 2, 2), 20, rng=0)
    with pytest.raises(ValueError, match="concept must be one of"):
        pessimistic_equilibrium_vi(d, concept="qre")
    with pytest.raises(ValueError, match=r"policy must have shape \(H, S, A_1, \.\.\., A_n\) = \(2, 2, 2, 2\)"):
        interval_gap_bound(d, np.ones((1, 2, 2, 2)) / 4)
    bad = np.full((2, 2, 2, 2), 0.25)
    bad[1, 0] = 0.5
    with pytest.raises(ValueError, match=r"policy\[h=1, s=0\] must be a distribution"):
        equilibrium_gap(P, R, bad)
    single = EpisodeDataset(np.zeros((2, 3), int), np.zeros((2, 2), int), np.zeros((2, 2)), S=1, A=2)
    with pytest.raises(InvalidModelError, match="joint actions and one reward per player"):
        pessimistic_equilibrium_vi(single)
    hot = EpisodeDataset(d.states, d.actions, d.rewards * 3.0, d.S, d.A)
    with pytest.raises(InvalidModelError, match=r"rewards in \[0, 1\]; EpisodeDataset\.rewards\[k=\d+, h=\d+, i=\d\]"):
        pessimistic_equilibrium_vi(hot)
    with pytest.raises(ValueError, match="linear intervals need beta"):
        interval_gap_bound(d, _uniform(2, 2, 2, 2), features=np.ones((2, 4, 1)))
    with pytest.raises(ValueError, match="candidates must hold at least one"):
        gap_relaxation_equilibrium(d, [])
    prefs = sample_preferences(d, d, R, rng=0)
    corr = np.array([[0.5, 0.0], [0.0, 0.5]])[None, None]
    with pytest.raises(ValueError, match=r"candidates\[0\] must be a product policy"):
        marlhf_equilibrium(PreferenceDataset(d.subset([0]), d.subset([1]), prefs.labels[:1]),
                           np.ones((2, 2, 2, 2, 2)) / 2, [np.broadcast_to(corr, (2, 2, 2, 2))], beta=1.0)
    with pytest.raises(ValueError, match="ridge must be a finite number > 0"):
        bradley_terry_mle(prefs, ridge=0.0)


# ----------------------------------------------------------------------------- selective coverage (Zhang, Bai & Jiang 2023)
from rltheory.bounds.coverage import finite_horizon_occupancy  # noqa: E402
from rltheory.bounds.rates import fit_rate  # noqa: E402
from rltheory.bounds.selective_coverage import (  # noqa: E402
    selective_concentrability,
    selective_concentrability_bruteforce,
    selective_coverage_witness,
)
from rltheory.games import finite_horizon_values, solve_zero_sum  # noqa: E402
from rltheory.mdp import FiniteHorizonMDP  # noqa: E402


def _random_coverage_instance(seed: int):
    """Tiny game (H ≤ 3, S ≤ 2, A_i ≤ 2) with partially zero data; half with {0, ½, 1} rewards and
    deterministic moves so that range saturation and exact ties occur."""
    rng = np.random.default_rng(seed)
    H, S = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    A = tuple(int(a) for a in rng.integers(1, 3, size=2))
    if rng.random() < 0.5:
        P = np.eye(S)[rng.integers(0, S, size=(H, S) + A)]
        R = rng.integers(0, 3, size=(2, H, S) + A) / 2
    else:
        P = rng.dirichlet(np.ones(S), size=(H, S) + A)
        R = rng.random((2, H, S) + A)
    if rng.random() < 0.6:
        pols = [np.eye(a)[rng.integers(0, a, size=(H, S))] for a in A]
    else:
        pols = [rng.dirichlet(np.ones(a), size=(H, S)) for a in A]
    rho = rng.random((H, S) + A) * (rng.random((H, S) + A) < 0.6)
    mu = np.eye(S)[0] if rng.random() < 0.5 else rng.dirichlet(np.ones(S))
    return P, R, pols, rho, mu


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_selective_concentrability_below_unilateral_and_equals_bruteforce(seed):
    P, R, pols, rho, mu = _random_coverage_instance(seed)
    c_sel = selective_concentrability(P, R, pols, rho, mu)
    c_uni = unilateral_concentrability(P, pols, rho, mu)
    assert c_sel <= c_uni * (1 + 1e-12)
    brute = selective_concentrability_bruteforce(P, R, pols, rho, mu)
    assert c_sel == brute or math.isclose(c_sel, brute, rel_tol=1e-9)


def test_selective_concentrability_finite_where_unilateral_infinite_across_seeds():
    """Not vacuous: among fixed random tiny games some have C_sel < ∞ = C_uni (and DP = brute force there)."""
    found = 0
    for seed in range(200):
        P, R, pols, rho, mu = _random_coverage_instance(seed)
        c_sel = selective_concentrability(P, R, pols, rho, mu)
        if math.isfinite(c_sel) and math.isinf(unilateral_concentrability(P, pols, rho, mu)):
            found += 1
            assert math.isclose(c_sel, selective_concentrability_bruteforce(P, R, pols, rho, mu), rel_tol=1e-9)
    assert found >= 1


def test_selective_concentrability_equals_c_star_with_full_support_and_dominant_equilibrium():
    """Reference: with ρ > 0 everywhere, C_sel = max(C(π*), max over best responses C(BR)). In a one-shot
    game whose unique best responses are π* itself, C_sel = C(π*) = max d*/ρ; with uniform ρ over 2×2
    and π* = (0, 0): d* = 1 at (0, 0), ρ = 1/4, so C_sel = 4 while C_uni = 4 too (a = (1, 0) has d = 1)."""
    P = np.ones((1, 1, 2, 2, 1))
    R = np.zeros((2, 1, 1, 2, 2))
    R[:, 0, 0, 0, 0] = 1.0  # (0, 0) strictly dominant for both
    pi = [np.array([[[1.0, 0.0]]])] * 2
    rho = np.full((1, 1, 2, 2), 0.25)
    assert selective_concentrability(P, R, pi, rho) == pytest.approx(4.0)
    assert unilateral_concentrability(P, pi, rho) == pytest.approx(4.0)
    # an uncovered unilateral deviation whose reward is below the range is NOT harmless: C_sel = ∞
    R2 = R.copy()
    R2[:, 0, 0, 0, 0] = 0.5
    assert math.isinf(selective_concentrability(P, R2, pi, np.array([[[[1.0, 0.0], [0.0, 0.0]]]])))


def _witness_data_occupancy(g):
    H, S = 2, 2
    fh = FiniteHorizonMDP(g["P"].reshape(H, S, 4, S), np.zeros((H, S, 4)), g["mu"])
    return np.asarray(finite_horizon_occupancy(fh, g["behaviour"].reshape(H, S, 4))).reshape(H, S, 2, 2)


def test_selective_coverage_witness_finite_while_unilateral_infinite_and_certified_gap_vanishes():
    g = selective_coverage_witness(behaviour_weight=0.8)
    P, R, mu, nash = g["P"], g["R"], g["mu"], g["nash"]
    rho = _witness_data_occupancy(g)
    assert math.isinf(unilateral_concentrability(P, nash, rho, mu))
    # reference value: the equilibrium's own ratio at step 1, d = 1, ρ = w² (module docstring)
    assert selective_concentrability(P, R, nash, rho, mu) == pytest.approx(1 / 0.8**2, rel=1e-12)
    assert selective_concentrability_bruteforce(P, R, nash, rho, mu) == pytest.approx(1 / 0.8**2, rel=1e-12)
    pol = np.einsum("hsa,hsb->hsab", *nash)
    assert equilibrium_gap(P, R, pol, mu=mu) == 0.0
    Ns = np.array([500, 2000, 8000, 32000])
    certs = []
    for N in Ns:
        data = sample_game_episodes(P, R, g["behaviour"], int(N), rng=int(N), mu=mu)
        certs.append(float(interval_gap_bound(data, pol).gap_bound @ mu))
        out = pessimistic_equilibrium_vi(data)
        assert equilibrium_gap(P, R, out.policy, mu=mu) <= float(out.gap_bound @ mu) + 1e-12
    certs = np.array(certs)
    assert np.all(np.diff(certs) < 0) and certs[-1] < 0.15
    fit = fit_rate(Ns, certs, seed=0)
    assert fit.contains(-0.5), fit


def test_selective_concentrability_validation():
    P = np.ones((1, 1, 2, 2, 1))
    pi = [np.full((1, 1, 2), 0.5)] * 2
    rho = np.full((1, 1, 2, 2), 0.25)
    with pytest.raises(ValueError, match=r"rewards must lie in \[0, 1\].*R\[0, 0, 0, 0, 0\] = 2"):
        selective_concentrability(P, np.full((2, 1, 1, 2, 2), 2.0), pi, rho)
    with pytest.raises(ValueError, match="d_data must have shape"):
        selective_concentrability(P, np.zeros((2, 1, 1, 2, 2)), pi, rho[0])
    with pytest.raises(ValueError, match=r"policies\[1\]\[h=0, s=0\] must be a distribution"):
        selective_concentrability(P, np.zeros((2, 1, 1, 2, 2)), [pi[0], np.full((1, 1, 2), 0.7)], rho)
    with pytest.raises(ValueError, match="d_data must be finite and non-negative"):
        selective_concentrability(P, np.zeros((2, 1, 1, 2, 2)), pi, -rho)


# ----------------------------------------------------------------------------- zero-sum special case
def _minimax_values(P: np.ndarray, R1: np.ndarray, H: int) -> np.ndarray:
    """Exact finite-horizon minimax values V*_h(s) of the row player by backward induction of matrix games."""
    S = P.shape[0]
    V = np.zeros((H + 1, S))
    for h in range(H - 1, -1, -1):
        Q = R1 + np.tensordot(P, V[h + 1], axes=([3], [0]))  # [S, A, B]
        V[h] = np.asarray(solve_zero_sum(Q).value)
    return V


def test_zero_sum_pessimistic_nash_vi_matches_minimax_within_certificate():
    """Constant-sum game (r_2 = 1 − r_1) with every pair covered: the minimax value lies in the certified
    bracket [H − V̄_2^†, V̄_1^†], and |V_1^{π̂} − V*| ≤ NashConv(π̂) ≤ Ĝ(π̂) (the row player's value of
    any profile is within its NashConv of the game value)."""
    H, S = 2, 2
    game, PH, RH = _game(11, S=S, H=H)
    P = np.asarray(game.P)
    R1 = np.asarray(game.R)[0]
    RH[1] = 1.0 - RH[0]
    V_star = _minimax_values(P, R1, H)
    zs = MarkovGame(P, np.stack([R1, 1.0 - R1]), None)
    assert np.allclose(nash_value_iteration(zs, H).V[0], V_star, atol=1e-8)  # two solvers agree
    data = sample_game_episodes(PH, RH, _uniform(H, S, 2, 2), 60000, rng=5)
    out = pessimistic_equilibrium_vi(data, concept="nash", delta=0.1)
    coarse = pessimistic_equilibrium_vi(data.subset(np.arange(15000)), concept="nash", delta=0.1)
    # exact value of the learned profile, per start state
    for s in range(S):
        e = np.eye(S)[s]
        nc = equilibrium_gap(PH, RH, out.policy, mu=e)
        V1 = float(finite_horizon_values(zs, out.policy)[0, 0, s])
        assert nc <= out.gap_bound[s] + 1e-12
        assert abs(V1 - V_star[0, s]) <= nc + 1e-9
        assert H - out.upper[1, 0, s] - 1e-9 <= V_star[0, s] <= out.upper[0, 0, s] + 1e-9
        assert out.lower[0, 0, s] <= V1 + 1e-9
        assert out.gap_bound[s] < coarse.gap_bound[s]  # the certificate shrinks with N (≈ 1/√N)


def test_selective_coverage_experiment_passes_small_config():
    from rltheory.experiments import selective_coverage as exp  # noqa: PLC0415

    res = exp.run(exp.Config(sizes=(250, 1000, 4000, 16000), seeds=1))
    assert res.passed, [c.claim.name for c in res.checks if not c.passed]
    assert math.isinf(res.meta["C_uni"]) and res.meta["C_sel"] == pytest.approx(1 / 0.8**2)


@pytest.mark.parametrize("concept", ["ce", "cce"])
@pytest.mark.parametrize("scale", [1e-12, 1e6])
def test_stage_lp_is_invariant_to_a_common_payoff_scale(concept, scale):
    """One positive affine map of both confidence bounds leaves the stage LP's minimisers unchanged; the
    LP must return the same joint distribution at payoff size 1e-12 (HiGHS treats |entries| < 1e-9 as
    zero) and 1e6."""
    from rltheory.algorithms.offline_games import _stage_lp  # noqa: PLC0415

    rng = np.random.default_rng(3)
    lo = rng.random((2, 3, 3))
    hi = lo + 0.3 * rng.random((2, 3, 3))
    ref = _stage_lp(concept, lo, hi)
    out = _stage_lp(concept, scale * (lo + 2.0), scale * (hi + 2.0))
    np.testing.assert_allclose(out, ref, atol=1e-9)


@pytest.mark.parametrize("ridge", [1e-17, 1e-300])
def test_bradley_terry_closed_form_with_a_ridge_below_round_off(ridge):
    """k = 3 of N = 4 comparisons of the same two one-step trajectories won by the first: the
    return difference is log(k/(N − k)) = log 3 up to the ridge (log-likelihood stationarity),
    and the minimum-norm fit puts ±log(3)/2 on the two actions. The Hessian XᵀWX + λI at θ = 0
    is [[1, −1], [−1, 1]] + λI, which rounds to a singular matrix for λ < 1e-16: Newton's
    method stopped with numpy's bare LinAlgError("Singular matrix"), although any λ > 0 is a
    valid ridge and the problem is strictly convex."""
    a = EpisodeDataset(np.zeros((4, 2), int), np.ones((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    b = EpisodeDataset(np.zeros((4, 2), int), np.zeros((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    fit = bradley_terry_mle(PreferenceDataset(a, b, np.array([[1], [1], [1], [0]])), ridge=ridge)
    assert fit.converged
    np.testing.assert_allclose(fit.theta[0, 0, 0], [-0.5 * math.log(3.0), 0.5 * math.log(3.0)], atol=1e-12)


def test_bradley_terry_separable_labels_fit_to_the_stationary_point():
    """All N = 10⁶ comparisons won by the first trajectory (separable data): the minimiser has
    θ_1 = −θ_0 = t with N σ(−2t) = λ t (stationarity), t ≈ 18.2 for λ = 1e-11. Every σ(−z) the
    Newton steps need is below 1e-15; the form (1 + tanh(z/2))/2 − 1 rounded them to multiples of
    1.1e-16 (and the full-space Hessian N/4·[[1, −1], [−1, 1]] + λI to a singular matrix)."""
    from scipy.optimize import brentq
    from scipy.special import expit

    N, ridge = 10**6, 1e-11
    a = EpisodeDataset(np.zeros((N, 2), int), np.ones((N, 1), int), np.zeros((N, 1)), S=1, A=2)
    b = EpisodeDataset(np.zeros((N, 2), int), np.zeros((N, 1), int), np.zeros((N, 1)), S=1, A=2)
    fit = bradley_terry_mle(PreferenceDataset(a, b, np.ones((N, 1), int)), ridge=ridge)
    t = brentq(lambda t: N * expit(-2.0 * t) - ridge * t, 0.0, 100.0, xtol=1e-14)
    assert fit.converged
    # the decrement rule stops at an objective gap ≤ tol = 1e-12; with curvature 2Nσ(2t)σ(−2t)·4
    # ≈ 8λt along t, that leaves |t̂ − t| ≤ √(2·1e-12 / (8λt)) ≈ 1.2e-1; asserted much tighter
    # since Newton's last steps converge quadratically
    assert fit.theta[0, 0, 0, 1] == pytest.approx(t, abs=1e-4)
    assert fit.theta[0, 0, 0, 0] == pytest.approx(-t, abs=1e-4)


def test_gap_relaxation_equilibrium_checks_mu():
    """mu weighs the candidates' certificates μ·Ĝ; it is checked like equilibrium_gap's. Unchecked,
    mu of length 1 for S = 2 reached numpy's bare matmul error, mu = (nan, nan) made every bound
    NaN and "chose" candidate 0, and mu = (−1, 0) chose the candidate with the largest bound."""
    _, P, R = _game(0)
    d = sample_game_episodes(P, R, _uniform(2, 2, 2, 2), 20, rng=0)
    cands = [_uniform(2, 2, 2, 2), np.eye(4)[0].reshape(1, 1, 2, 2).repeat(2, 0).repeat(2, 1)]
    with pytest.raises(ValueError, match=r"mu must have shape \(S,\) = \(2,\)"):
        gap_relaxation_equilibrium(d, cands, mu=np.array([1.0]))
    with pytest.raises(InvalidModelError, match=r"mu must be finite; mu\(s=0\) = nan"):
        gap_relaxation_equilibrium(d, cands, mu=np.array([np.nan, np.nan]))
    with pytest.raises(InvalidModelError, match=r"mu must be non-negative; most negative entry mu\(s=0\) = -1"):
        gap_relaxation_equilibrium(d, cands, mu=np.array([-1.0, 0.0]))
    e0 = gap_relaxation_equilibrium(d, cands, mu=np.array([1.0, 0.0]))
    assert e0.candidate == int(np.argmin(e0.candidate_bounds))
    np.testing.assert_allclose(
        e0.candidate_bounds, [interval_gap_bound(d, c, n_candidates=2).gap_bound[0] for c in cands], rtol=1e-12
    )


@pytest.mark.parametrize("ridge", [1e-3, 1e-17])
def test_marlhf_gap_ucb_closed_form_with_a_tiny_ridge(ridge):
    """One state, one step, 2×2 actions; all four comparisons are (0, 0) against (1, 1), so
    X = 1·(e₀₀ − e₁₁)ᵀ stacked: Σ = XᵀX + λI has eigenvalue 8 + λ on v = (e₀₀ − e₁₁)/√2 and λ on
    its complement. Candidate (0, 0): player i's only deviation is to action 1, with
    Δ = e₁₀ − e₀₀ (player 2: e₀₁ − e₀₀), v·Δ = −1/√2 and ‖Δ − v(v·Δ)‖² = 3/2, so
    ‖Δ‖²_{Σ⁻¹} = 1/(2(8 + λ)) + 3/(2λ) and θ̂_i·Δ = −θ̂_i(0, 0) (θ̂ lies in span v). At
    λ = 1e-17 the formed gram rounds to the singular XᵀX: numpy's bare LinAlgError before."""
    K = 4
    a = EpisodeDataset(np.zeros((K, 2), int), np.zeros((K, 1, 2), int), np.zeros((K, 1, 2)), S=1, A=(2, 2))
    b = EpisodeDataset(np.zeros((K, 2), int), np.ones((K, 1, 2), int), np.zeros((K, 1, 2)), S=1, A=(2, 2))
    prefs = PreferenceDataset(a, b, np.array([[1, 1], [1, 1], [1, 0], [0, 1]]))
    P = np.ones((1, 1, 2, 2, 1))
    cands = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]
    out = marlhf_equilibrium(prefs, P, cands, beta=1.0, ridge=ridge)
    width = math.sqrt(1.0 / (2.0 * (8.0 + ridge)) + 1.5 / ridge)
    th = out.fit.theta[:, 0, 0]
    want = sum(max(0.0, -float(th[i, 0, 0]) + width) for i in range(2))
    assert out.gap_ucb[0] == pytest.approx(want, rel=1e-9)
    if ridge >= 1e-6:  # the formed gram is well conditioned: its inverse (the fit= path) agrees
        again = marlhf_equilibrium(prefs, P, cands, beta=1.0, fit=out.fit)
        np.testing.assert_allclose(again.gap_ucb, out.gap_ucb, rtol=1e-9)
