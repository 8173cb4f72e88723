"""Offline RL: LCB-VI, PEVI, certainty equivalence, CQL — guarantees, reference values, consistency, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.offline import (
    certainty_equivalence,
    conservative_evaluation,
    cql,
    lcb_vi,
    pevi,
)
from rltheory.bounds.coverage import finite_horizon_occupancy, single_policy_concentrability
from rltheory.bounds.offline import (
    lcb_vi_rate,
    pessimism_suboptimality_bound,
    pevi_bound,
)
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP, backward_induction, evaluate_finite_horizon
from rltheory.mdp.offline_data import (
    EmpiricalModel,
    EpisodeDataset,
    behaviour_policy,
    empirical_model,
    sample_episodes,
)
from rltheory.testing import finite_horizon_mdps, policies


def _instance(seed: int, H: int = 3, S: int = 3, A: int = 2) -> FiniteHorizonMDP:
    rng = np.random.default_rng(seed)
    P = rng.random((H, S, A, S))
    P /= P.sum(-1, keepdims=True)
    return FiniteHorizonMDP(P, rng.random((H, S, A)), mu=np.full(S, 1.0 / S))


def _value(fh: FiniteHorizonMDP, pi: np.ndarray) -> np.ndarray:
    return np.asarray(evaluate_finite_horizon(fh, pi))


def _onehot(S: int, A: int) -> np.ndarray:
    return np.eye(S * A).reshape(S, A, S * A)


# ----------------------------------------------------------------------------- theorems
@pytest.mark.parametrize("bonus", ["hoeffding", "bernstein"])
def test_lcb_lower_bound_and_suboptimality_hold_with_probability(bonus):
    # Must show: LCB values are valid lower bounds of V^π̂ with the stated probability.
    # Over 200 seeded datasets (partial coverage: behaviour mixes π* with uniform at α = 0.5),
    # the event {V̂_h ≤ V^π̂_h ∀h,s} ∩ {SubOpt ≤ 2 Σ_h E_π*[Γ_h]} must have frequency ≥ 1 − δ.
    fh = _instance(0, H=3, S=4, A=3)
    sol = backward_induction(fh)
    mu = np.asarray(fh.initial_distribution())
    d_star = np.asarray(finite_horizon_occupancy(fh, sol.policy))
    beh = behaviour_policy(np.asarray(sol.policy), 0.5, other=np.full((3, 4, 3), 1 / 3))
    delta, runs, ok = 0.1, 200, 0
    for seed in range(runs):
        d = sample_episodes(fh, beh, 150, rng=seed, rewards="bernoulli")
        res = lcb_vi(d, bonus=bonus, delta=delta)
        V = _value(fh, res.policy)
        lower = bool(np.all(res.V <= V + 1e-12))
        sub = float(np.asarray(sol.V)[0] @ mu - V[0] @ mu)
        ok += lower and sub <= pessimism_suboptimality_bound(d_star, res.bonus) + 1e-12
    assert ok / runs >= 1 - delta


@settings(max_examples=20, deadline=None)
@given(fh=finite_horizon_mdps(max_horizon=3, max_states=3, max_actions=3), seed=st.integers(0, 2**16), data=st.data())
def test_lcb_and_pevi_pessimism_property(fh, seed, data):
    # On random models and behaviours, with δ = 1e-3 the confidence event (probability ≥ 0.999)
    # makes V̂ a pointwise lower bound of V^π̂ for LCB-VI (split) ...
    beh = data.draw(policies(fh.S, fh.A, batch_shape=(fh.H,)))
    d = sample_episodes(fh, beh, 60, rng=seed, rewards="bernoulli")
    for bonus in ("hoeffding", "bernstein"):
        res = lcb_vi(d, bonus=bonus, delta=1e-3)
        assert np.all(res.V <= _value(fh, res.policy) + 1e-12)
        assert np.all(res.V[:-1] <= (fh.H - np.arange(fh.H))[:, None] + 1e-12)
    # PEVI with the explicit self-normalised radius (split data) on the one-hot linear MDP
    pv = pevi(d, _onehot(fh.S, fh.A), beta="self-normalized", ridge=1.0, delta=1e-3, split=True)
    assert np.all(pv.V <= _value(fh, pv.policy) + 1e-12)
    # ... and the pessimism bound dominates the suboptimality against the optimal policy.
    sol = backward_induction(fh)
    mu = np.asarray(fh.initial_distribution())
    res = lcb_vi(d, delta=1e-3)
    sub = float((np.asarray(sol.V)[0] - _value(fh, res.policy)[0]) @ mu)
    assert sub <= pessimism_suboptimality_bound(finite_horizon_occupancy(fh, sol.policy), res.bonus) + 1e-12


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_full_coverage_every_method_converges_to_optimal(seed):
    # Must show: full coverage and N → ∞ — every method returns π*. Instances 0, 1, 3 have an
    # action gap ≥ 0.049 at every (h, s); with K = 1e5 uniform-behaviour episodes every
    # estimation error (≤ the bonuses, ~1e-2) is below half the gap.
    fh = _instance(seed)
    sol = backward_induction(fh)
    Qs = np.sort(np.asarray(sol.Q), -1)
    assert np.min(Qs[..., -1] - Qs[..., -2]) > 0.04
    d = sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 100_000, rng=seed, rewards="bernoulli")
    results = [
        certainty_equivalence(d),
        certainty_equivalence(d, features=_onehot(fh.S, fh.A), ridge=1e-6),
        lcb_vi(d),
        lcb_vi(d, bonus="bernstein"),
        pevi(d, _onehot(fh.S, fh.A), beta=1.0),
        cql(d, alpha=0.01),
    ]
    for res in results:
        assert np.array_equal(res.policy, np.asarray(sol.policy)), res.method
    # and the data-dependent guarantee shrinks: SubOpt bound at K = 1e5 is below 0.5
    d_star = finite_horizon_occupancy(fh, sol.policy)
    assert pessimism_suboptimality_bound(d_star, results[2].bonus) < 0.5


def test_lcb_rate_form_dominates_data_dependent_bound_under_coverage():
    # The C*-form H(H+1)√(S C* ι/⌊K/H⌋) bounds 2Σ_h E_π*[Γ_h] once n_h ≥ K_h ρ_h / 2 on supp d*.
    fh = _instance(4, H=2, S=3, A=2)
    sol = backward_induction(fh)
    beh = behaviour_policy(np.asarray(sol.policy), 0.6, other=np.full((2, 3, 2), 0.5))
    d_star = np.asarray(finite_horizon_occupancy(fh, sol.policy))
    rho = np.asarray(finite_horizon_occupancy(fh, beh))
    C = single_policy_concentrability(d_star, rho)
    K, delta = 4000, 0.1
    d = sample_episodes(fh, beh, K, rng=1, rewards="bernoulli")
    res = lcb_vi(d, delta=delta)
    supp = d_star > 0
    assert np.all(res.counts[supp] >= (K // 2) * rho[supp] / 2)  # the count event (checked)
    assert pessimism_suboptimality_bound(d_star, res.bonus) <= lcb_vi_rate(C, 3, 2, 2, K, delta)


@settings(max_examples=30, deadline=None)
@given(fh=finite_horizon_mdps(max_horizon=3, max_states=3, max_actions=3), data=st.data(), alpha=st.sampled_from([0.0, 0.1, 2.0]))
def test_cql_underestimates_in_the_population_model(fh, data, alpha):
    # Kumar et al. (2020) Thm 3.2 without sampling error: V̂^π ≤ V^π for every α ≥ 0 whenever the
    # behaviour covers π's actions (here the behaviour has full support).
    beh = np.clip(data.draw(policies(fh.S, fh.A, batch_shape=(fh.H,))), 0.05, None)
    beh /= beh.sum(-1, keepdims=True)
    pi = data.draw(policies(fh.S, fh.A, batch_shape=(fh.H,)))
    occ = np.asarray(finite_horizon_occupancy(fh, beh))
    m = EmpiricalModel(occ, np.asarray(fh.P), np.asarray(fh.R)[None], beh, (fh.A,))
    Vhat = conservative_evaluation(m, pi, alpha=alpha)
    V = _value(fh, pi)
    reach = occ.sum(-1) > 0
    assert np.all(Vhat[:-1][reach] <= V[:-1][reach] + 1e-10)
    if alpha == 0.0:
        assert np.allclose(Vhat[:-1][reach], V[:-1][reach])


# ----------------------------------------------------------------------------- reference values
def test_lcb_bandit_reference_value():
    # H = 1, one state; action 0: 100 samples of reward 0.5; action 1: one sample of reward 1.
    # Hoeffding: Q̂(0) = 0.5 − √(ln(2·1·1·2/δ)/(2·100)), Q̂(1) = max(0, 1 − √(ln(4/δ)/2)) = 0.
    a = np.array([[0]] * 100 + [[1]])
    r = np.array([[0.5]] * 100 + [[1.0]])
    d = EpisodeDataset(np.zeros((101, 2), int), a, r, S=1, A=2)
    res = lcb_vi(d, delta=0.1)
    assert res.Q[0, 0, 0] == pytest.approx(0.5 - math.sqrt(math.log(40.0) / 200.0), abs=1e-14)
    assert res.Q[0, 0, 1] == 0.0 and res.policy.tolist() == [[0]]
    # PEVI with one-hot features, λ = 1, β = 1: ŵ = Σ y/(n + 1), Γ = 1/√(n + 1).
    pv = pevi(d, _onehot(1, 2), beta=1.0, ridge=1.0)
    assert pv.Q[0, 0, 0] == pytest.approx(50.0 / 101.0 - 1.0 / math.sqrt(101.0), abs=1e-12)
    assert pv.Q[0, 0, 1] == 0.0
    # CQL: π̂_b = (100/101, 1/101); values B − α(1/π̂_b − 1).
    cq = cql(d, alpha=0.01)
    assert cq.Q[0, 0, 0] == pytest.approx(0.5 - 0.01 * (101 / 100 - 1), abs=1e-14)
    assert cq.Q[0, 0, 1] == pytest.approx(1.0 - 0.01 * 100, abs=1e-14)


def test_pevi_bound_reference():
    # One-hot features, Λ = diag(4, 1), β = 2, π* puts mass 1 on pair 0: bound 2·2·(1/2) = 2.
    assert pevi_bound(np.array([[[1.0, 0.0]]]), _onehot(1, 2), np.diag([4.0, 1.0])[None], 2.0) == 2.0


# ----------------------------------------------------------------------------- consistency
@settings(max_examples=15, deadline=None)
@given(fh=finite_horizon_mdps(max_horizon=3, max_states=3, max_actions=3), seed=st.integers(0, 2**16), beta=st.sampled_from([0.0, 0.3, 2.0]))
def test_pevi_one_hot_equals_tabular_lcb_with_matching_bonus(fh, seed, beta):
    # Must show: PEVI with one-hot features (λ = 0) = LCB-VI without splitting and Γ = β/√n.
    d = sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 400, rng=seed, rewards="bernoulli")
    counts = empirical_model(d).counts
    if np.any(counts == 0):  # λ = 0 needs every pair seen (use a full-support dataset)
        d = EpisodeDataset(
            np.concatenate([d.states, _cover(fh)[0]]), np.concatenate([d.actions, _cover(fh)[1]]),
            np.concatenate([d.rewards, np.zeros_like(_cover(fh)[1], dtype=float)]), fh.S, fh.A,
        )
        counts = empirical_model(d).counts
    pv = pevi(d, _onehot(fh.S, fh.A), beta=beta, ridge=0.0)
    lc = lcb_vi(d, bonus=beta / np.sqrt(counts), split=False)
    assert np.allclose(pv.Q, lc.Q, atol=1e-9) and np.allclose(pv.V, lc.V, atol=1e-9)
    assert np.allclose(pv.bonus, lc.bonus, atol=1e-12)
    top = np.sort(lc.Q, -1)
    clear = (top[..., -1] - top[..., -2] > 1e-7) if fh.A > 1 else np.ones((fh.H, fh.S), bool)
    assert np.array_equal(pv.policy[clear], lc.policy[clear])


def _cover(fh: FiniteHorizonMDP) -> tuple[np.ndarray, np.ndarray]:
    """Episodes visiting every (h, s, a): state s and action a at every step (valid indices only)."""
    rows_s, rows_a = [], []
    for s in range(fh.S):
        for a in range(fh.A):
            rows_s.append([s] * (fh.H + 1))
            rows_a.append([a] * fh.H)
    return np.array(rows_s), np.array(rows_a)


def test_certainty_equivalence_equals_backward_induction_on_empirical_model():
    fh = _instance(7)
    d = sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 3000, rng=2, rewards="bernoulli")
    m = empirical_model(d)
    assert np.all(m.counts > 0)
    emp = FiniteHorizonMDP(m.P, m.R[0], mu=np.asarray(fh.mu))
    sol = backward_induction(emp)
    ce = certainty_equivalence(d)
    assert np.allclose(ce.Q, np.asarray(sol.Q)) and np.array_equal(ce.policy, np.asarray(sol.policy))
    lin = certainty_equivalence(d, features=_onehot(fh.S, fh.A), ridge=0.0)
    assert np.allclose(lin.Q, ce.Q)
    assert np.array_equal(cql(d, alpha=0.0).policy, ce.policy)


def test_pessimism_beats_greedy_on_adversarial_coverage():
    # C14: an adversarial-coverage bandit where greedy fails and pessimism does not. Action 0
    # (mean 0.6) is well covered; 20 trap actions (mean 0.3) are each seen about once.
    rng = np.random.default_rng(0)
    A = 21
    R = np.full((1, 1, A), 0.3)
    R[0, 0, 0] = 0.6
    fh = FiniteHorizonMDP(np.ones((1, 1, A, 1)), R)
    beh = np.full((1, 1, A), 0.3 / 20)
    beh[0, 0, 0] = 0.7
    greedy_loss, lcb_loss = [], []
    for _ in range(50):
        d = sample_episodes(fh, beh, 60, rng=rng, rewards="bernoulli")
        greedy_loss.append(0.6 - R[0, 0, certainty_equivalence(d).policy[0, 0]])
        lcb_loss.append(0.6 - R[0, 0, lcb_vi(d).policy[0, 0]])
    assert np.mean(lcb_loss) == 0.0 and np.mean(greedy_loss) > 0.15


# ----------------------------------------------------------------------------- validation
def test_offline_methods_located_errors():
    d = EpisodeDataset(np.zeros((2, 2), int), np.zeros((2, 1), int), np.array([[0.5], [1.5]]), S=1, A=1)
    with pytest.raises(InvalidModelError, match=r"rewards in \[0, 1\].*rewards\[k=1, h=0\] = 1\.5"):
        lcb_vi(d)
    with pytest.raises(InvalidModelError, match=r"rewards\[k=1, h=0\]"):
        pevi(d, np.ones((1, 1, 1)), beta=1.0)
    ok = EpisodeDataset(np.zeros((2, 2), int), np.zeros((2, 1), int), np.array([[0.5], [1.0]]), S=1, A=2)
    with pytest.raises(ValueError, match="bonus must be 'hoeffding', 'bernstein'"):
        lcb_vi(ok, bonus="ucb")
    with pytest.raises(ValueError, match=r"\(H, S, A\) = \(1, 1, 2\) array"):
        lcb_vi(ok, bonus=np.ones((2, 2)))
    with pytest.raises(ValueError, match="delta must be a probability"):
        lcb_vi(ok, delta=0.0)
    with pytest.raises(ValueError, match=r"Λ_0 = Σ φφᵀ \+ 0\.0·I is singular at step h=0"):
        pevi(ok, _onehot(1, 2), beta=1.0, ridge=0.0)
    with pytest.raises(ValueError, match=r"features must have shape \(S, A, d\)"):
        pevi(ok, np.ones((3, 2, 2)), beta=1.0)
    with pytest.raises(ValueError, match="beta must be a finite number >= 0"):
        pevi(ok, _onehot(1, 2), beta=-1.0)
    with pytest.raises(ValueError, match="alpha must be a finite number >= 0"):
        cql(ok, alpha=-0.1)
    game = EpisodeDataset(np.zeros((1, 2), int), np.zeros((1, 1, 2), int), np.zeros((1, 1, 2)), S=1, A=(1, 1))
    with pytest.raises(InvalidModelError, match="single-agent"):
        certainty_equivalence(game)
    with pytest.raises(TypeError, match="needs an EpisodeDataset"):
        lcb_vi(np.zeros(3))
    m = empirical_model(ok)
    with pytest.raises(ValueError, match=r"policy\[h=0, s=0, a=1\] = 1 > 0 but the behaviour never takes"):
        conservative_evaluation(m, np.array([[[0.0, 1.0]]]), alpha=1.0)


# ----------------------------------------------------------------------------- coverage coefficients
from itertools import product  # noqa: E402

from rltheory.algorithms.offline import hybrid_actor_critic, hybrid_npg  # noqa: E402
from rltheory.bounds.coverage import (  # noqa: E402
    all_policy_concentrability,
    discounted_concentrability,
    feature_covariance,
    max_occupancy,
    relative_condition_number,
    unilateral_concentrability,
)
from rltheory.bounds.offline import empirical_bernstein_radius, hoeffding_radius, pevi_beta  # noqa: E402
from rltheory.mdp import FiniteMDP, occupancy_measure  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(fh=finite_horizon_mdps(max_horizon=3, max_states=3, max_actions=3), data=st.data())
def test_concentrability_is_one_on_own_occupancy_and_ordered(fh, data):
    # Must show: C^{π*} = 1 when μ = d^{π*}; and 1 ≤ C^π ≤ C_all for any data distribution.
    pi = data.draw(policies(fh.S, fh.A, batch_shape=(fh.H,)))
    d = np.asarray(finite_horizon_occupancy(fh, pi))
    assert single_policy_concentrability(d, d) == pytest.approx(1.0, abs=1e-12)
    beh = np.clip(data.draw(policies(fh.S, fh.A, batch_shape=(fh.H,))), 0.1, None)
    beh /= beh.sum(-1, keepdims=True)
    rho = np.asarray(finite_horizon_occupancy(fh, beh))
    c = single_policy_concentrability(d, rho)
    assert 1.0 - 1e-9 <= c <= all_policy_concentrability(fh, rho) * (1 + 1e-9)
    # one-hot features: the relative condition number of the per-step covariances is C^π
    phi = np.eye(fh.S * fh.A).reshape(fh.S, fh.A, -1)
    kappa = relative_condition_number(feature_covariance(phi, d), feature_covariance(phi, rho))
    assert kappa == pytest.approx(c, rel=1e-8)


def test_max_occupancy_matches_brute_force_over_deterministic_policies():
    fh = _instance(9, H=3, S=3, A=2)
    best = np.zeros((3, 3, 2))
    for choice in product(range(2), repeat=9):
        d = np.asarray(finite_horizon_occupancy(fh, np.array(choice).reshape(3, 3)))
        best = np.maximum(best, d.sum(-1, keepdims=True))
    assert np.allclose(np.asarray(max_occupancy(fh)), np.broadcast_to(best, (3, 3, 2)), atol=1e-12)
    rng = np.random.default_rng(1)
    P = rng.random((3, 2, 3))
    P /= P.sum(-1, keepdims=True)
    mdp = FiniteMDP(P, np.zeros((3, 2)), 0.7)
    best = np.zeros((3, 2))
    for choice in product(range(2), repeat=3):
        best = np.maximum(best, np.asarray(occupancy_measure(mdp, np.array(choice))))
    assert np.allclose(np.asarray(max_occupancy(mdp)), best, atol=1e-10)
    # discounted C* of a policy against itself
    assert discounted_concentrability(mdp, np.array([0, 1, 0]), np.array([0, 1, 0])) == pytest.approx(1.0)


def test_unilateral_concentrability_brute_force_and_reference():
    # Reference: one-shot 2×2 game, π* = (0, 0); the data put 1/2 on (0,0) and 1/4 on (1,0), (0,1):
    # deviations reach (1,0) and (0,1) with probability 1 → C_uni = 1/(1/4) = 4; C* = 2.
    P = np.ones((1, 1, 2, 2, 1))
    e = np.eye(2)[[0]][None]
    rho = np.array([[0.5, 0.25], [0.25, 0.0]])[None, None]
    assert unilateral_concentrability(P, [e, e], rho) == 4.0
    d_star = np.zeros((1, 1, 2, 2))
    d_star[0, 0, 0, 0] = 1
    assert single_policy_concentrability(d_star, rho) == 2.0
    # Markov game: the DP equals brute force over player-1 deterministic deviations
    rng = np.random.default_rng(2)
    H, S = 2, 2
    Pm = rng.random((H, S, 2, 2, S))
    Pm /= Pm.sum(-1, keepdims=True)
    y = rng.dirichlet(np.ones(2), size=(H, S))
    x = rng.dirichlet(np.ones(2), size=(H, S))
    rho = rng.dirichlet(np.ones(8), size=H).reshape(H, S, 2, 2)
    from rltheory.mdp import FiniteHorizonMDP as FH

    worst = 0.0
    for choice in product(range(2), repeat=H * S):
        dev = np.eye(2)[np.array(choice).reshape(H, S)]
        joint = (dev[..., :, None] * y[..., None, :]).reshape(H, S, 4)
        occ = np.asarray(finite_horizon_occupancy(FH(Pm.reshape(H, S, 4, S), np.zeros((H, S, 4))), joint))
        worst = max(worst, single_policy_concentrability(occ.reshape(H, S, 2, 2), rho))
    for choice in product(range(2), repeat=H * S):
        dev = np.eye(2)[np.array(choice).reshape(H, S)]
        joint = (x[..., :, None] * dev[..., None, :]).reshape(H, S, 4)
        occ = np.asarray(finite_horizon_occupancy(FH(Pm.reshape(H, S, 4, S), np.zeros((H, S, 4))), joint))
        worst = max(worst, single_policy_concentrability(occ.reshape(H, S, 2, 2), rho))
    assert unilateral_concentrability(Pm, [x, y], rho) == pytest.approx(worst, rel=1e-12)


def test_relative_condition_number_reference_and_null_space():
    # Σ_data = diag(1/4, 3/4), Σ_target = diag(1/2, 1/2): κ = max(2, 2/3) = 2.
    assert relative_condition_number(np.diag([0.5, 0.5]), np.diag([0.25, 0.75])) == pytest.approx(2.0)
    # target mass outside range(Σ_data): unbounded; inside the range: finite
    assert relative_condition_number(np.diag([0.0, 1.0]), np.diag([1.0, 0.0])) == math.inf
    assert relative_condition_number(np.diag([1.0, 0.0]), np.diag([0.5, 0.0])) == pytest.approx(2.0)


def test_confidence_radii_cover_with_stated_probability():
    # Hoeffding and empirical-Bernstein radii on Bernoulli(0.3) means: miss rate ≤ δ over 4000 draws.
    rng = np.random.default_rng(0)
    n, delta = 30, 0.1
    x = rng.random((4000, n)) < 0.3
    mean, var = x.mean(1), x.var(1, ddof=1)
    assert np.mean(np.abs(mean - 0.3) > hoeffding_radius(n, 1.0, delta)) <= delta
    assert np.mean(np.abs(mean - 0.3) > empirical_bernstein_radius(np.full(4000, n), var, 1.0, delta)) <= delta
    # reference values
    assert float(hoeffding_radius(8, 2.0, 0.5)) == pytest.approx(2.0 * math.sqrt(math.log(4.0) / 16.0))
    assert pevi_beta(2, 3, 100, 0.1, c=0.5) == pytest.approx(0.5 * 6 * math.sqrt(math.log(12000.0)))


def test_coverage_and_bound_argument_errors():
    with pytest.raises(ValueError, match=r"d_target has shape \(2,\) but d_data has shape \(3,\)"):
        single_policy_concentrability(np.ones(2) / 2, np.ones(3) / 3)
    with pytest.raises(ValueError, match="must be finite and non-negative"):
        single_policy_concentrability(np.array([1.0, -0.5]), np.ones(2))
    with pytest.raises(ValueError, match="square"):
        relative_condition_number(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match=r"d_data must have shape \(H, S, A_1, \.\.\., A_n\)"):
        unilateral_concentrability(np.ones((1, 1, 2, 2, 1)), [np.ones((1, 1, 2)) / 2] * 2, np.ones((1, 1, 2)))
    with pytest.raises(ValueError, match="delta must be a probability"):
        hoeffding_radius(3, 1.0, 1.5)
    with pytest.raises(ValueError, match="C_star must be >= 1"):
        lcb_vi_rate(0.5, 2, 2, 2, 10, 0.1)


# ----------------------------------------------------------------------------- hybrid methods
def _lock(H: int = 5, A: int = 3) -> tuple[FiniteHorizonMDP, np.ndarray]:
    from rltheory.experiments.hnpg_hybrid import combination_lock

    return combination_lock(H, A, 3)


def test_hybrid_methods_with_covering_offline_data_converge_faster_than_npg():
    # P16/P15: with offline data covering π*, HNPG and the hybrid actor-critic converge with
    # fewer online samples than on-policy NPG (same budget, same restarts).
    fh, digits = _lock()
    pi_star = np.asarray(backward_induction(fh).policy)
    beh = behaviour_policy(pi_star, 0.7, other=np.full((fh.H, 2, fh.A), 1 / fh.A))
    off = sample_episodes(fh, beh, 150, rng=0)
    phi = np.eye(2 * fh.A).reshape(2, fh.A, -1)
    kw = dict(iterations=25, n_online=30, eta=5.0, restart=np.full((fh.H, 2), 0.5), rng=1)
    npg = hybrid_npg(fh, phi, None, **kw).trace["suboptimality"]
    hnpg = hybrid_npg(fh, phi, off, **kw).trace["suboptimality"]
    hac = hybrid_actor_critic(fh, phi, off, **kw).trace["suboptimality"]
    first = lambda y: int(np.flatnonzero(y <= 0.05)[0]) if np.any(y <= 0.05) else 10**9  # noqa: E731
    assert first(hnpg) < first(npg) and first(hac) < first(npg)
    assert hnpg[-1] <= 0.05 and hac[-1] <= 0.05


def test_hybrid_npg_without_offline_data_and_tol_reporting():
    fh, _ = _lock(H=3, A=2)
    phi = np.eye(4).reshape(2, 2, 4)
    res = hybrid_npg(fh, phi, None, iterations=40, n_online=40, eta=5.0, rng=0, restart=np.full((3, 2), 0.5), tol=1e-3)
    assert res.converged and res.trace["suboptimality"][-1] <= 1e-3
    steps = np.diff(res.trace["online_samples"])  # restarts at uniform h0: 1..H transitions per episode
    assert np.all((steps >= 40) & (steps <= 40 * 3))
    plain = hybrid_npg(fh, phi, None, iterations=2, n_online=10, eta=1.0, rng=0)
    assert np.all(np.diff(plain.trace["online_samples"]) == 10 * 3)
    from rltheory.errors import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="suboptimality above tol"):
        bad = hybrid_npg(fh, phi, None, iterations=1, n_online=5, eta=0.1, rng=0, tol=1e-6)
    assert bad.converged is False
    with pytest.raises(ValueError, match="eta must be a finite number > 0"):
        hybrid_npg(fh, phi, None, iterations=1, n_online=5, eta=0.0, rng=0)
    wrong = EpisodeDataset(np.zeros((2, 5), int), np.zeros((2, 4), int), np.zeros((2, 4)), S=2, A=2)
    with pytest.raises(InvalidModelError, match="wrong horizon: the dataset has H = 4 .* model has H = 3"):
        hybrid_npg(fh, phi, wrong, iterations=1, n_online=5, eta=1.0, rng=0)


# ----------------------------------------------------------------------------- discounted VI-LCB
from rltheory.algorithms.offline import lcb_vi_discounted  # noqa: E402
from rltheory.mdp import evaluate_policy, policy_iteration  # noqa: E402
from rltheory.mdp.offline_data import TransitionDataset, sample_transition_dataset  # noqa: E402


def _discounted(seed: int = 0) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    P = rng.random((4, 3, 4))
    P /= P.sum(-1, keepdims=True)
    return FiniteMDP(P, rng.random((4, 3)), 0.8)


def test_discounted_lcb_lower_bound_with_probability_and_convergence():
    # Over 100 seeded datasets V_T ≤ V^{π_T} pointwise in at least 1 − δ of them; with full
    # coverage and N = 10^6 the policy is optimal.
    mdp = _discounted()
    nu = np.full((4, 3), 1 / 12)
    ok = 0
    for seed in range(100):
        d = sample_transition_dataset(mdp, nu, 2000, rng=seed, rewards="bernoulli")
        res = lcb_vi_discounted(d, 0.8, delta=0.1)
        ok += bool(np.all(res.V <= np.asarray(evaluate_policy(mdp, res.policy)) + 1e-12))
    assert ok >= 90
    d = sample_transition_dataset(mdp, nu, 1_000_000, rng=1, rewards="bernoulli")
    res = lcb_vi_discounted(d, 0.8)
    assert np.array_equal(res.policy, np.asarray(policy_iteration(mdp).policy))
    assert res.iterations == math.ceil(math.log(1_000_000) / 0.2) and len(res.trace) == res.iterations


def test_discounted_lcb_reference_and_errors():
    # One state, γ = 0: a single fold (T = 1) gives Q = r̂ − √(ln(2·1·2/δ)/(2n)).
    d = TransitionDataset(np.zeros(50, int), np.zeros(50, int), np.full(50, 0.5), np.zeros(50, int), S=1, A=2)
    res = lcb_vi_discounted(d, 0.0, delta=0.1, iterations=1)
    assert res.Q[0, 0] == pytest.approx(0.5 - math.sqrt(math.log(40.0) / 100.0))
    assert res.Q[0, 1] == 0.0 and res.V[0] == res.Q[0, 0]
    with pytest.raises(ValueError, match=r"iterations must be an integer in \[1, N = 50\]"):
        lcb_vi_discounted(d, 0.5, iterations=51)
    with pytest.raises(ValueError, match=r"gamma must be a number in \[0, 1\)"):
        lcb_vi_discounted(d, 1.0)
    bad = TransitionDataset(np.zeros(2, int), np.zeros(2, int), np.array([0.0, 2.0]), np.zeros(2, int), S=1, A=1)
    with pytest.raises(InvalidModelError, match=r"rewards\[i=1\] = 2"):
        lcb_vi_discounted(bad, 0.5)


# ----------------------------------------------------------------------------- NPG rate with a critic error term
from rltheory.algorithms._policy_opt import multiplicative_update  # noqa: E402
from rltheory.bounds.offline import hybrid_npg_bound  # noqa: E402


def _running_average(sub):
    s = np.asarray(sub)
    return np.cumsum(s[:-1]) / np.arange(1, s.size)


@settings(max_examples=15, deadline=None)
@given(fh=finite_horizon_mdps(max_horizon=3, max_states=3, max_actions=3), seed=st.integers(0, 2**31 - 1),
       hybrid=st.booleans(), eta=st.sampled_from([0.3, 1.0, 5.0]))
def test_hybrid_npg_running_average_below_bound_with_measured_critic_term(fh, seed, hybrid, eta):
    # Theorem (hybrid_npg_bound): holds for every run and any critic — here a noisy fitted one.
    feats = np.eye(fh.S * fh.A).reshape(fh.S, fh.A, -1)
    off = sample_episodes(fh, np.full((fh.H, fh.S, fh.A), 1.0 / fh.A), 20, rng=seed) if hybrid else None
    learner = hybrid_npg if seed % 2 else hybrid_actor_critic
    res = learner(fh, feats, off, iterations=12, n_online=4, eta=eta, rng=seed)
    bound = hybrid_npg_bound(fh.H, fh.A, eta, res.trace["critic_term"][1:])
    assert np.all(_running_average(res.trace["suboptimality"]) <= bound + 1e-10)


@settings(max_examples=15, deadline=None)
@given(fh=finite_horizon_mdps(max_horizon=4, max_states=3, max_actions=3), eta=st.sampled_from([0.1, 1.0, 10.0]))
def test_exact_critic_npg_meets_finite_horizon_rate(fh, eta):
    # Consistency: exact Q^{π_t} gives E_t = 0 and the rate H ln A/(ηT) + H(H+1)/(2T)
    # (finite-horizon form of Agarwal et al. 2021, Thm 16), checked on an independent exact-critic loop.
    P, R = np.asarray(fh.P), np.asarray(fh.R)
    mu = np.asarray(fh.initial_distribution())
    v_star = float(np.asarray(evaluate_finite_horizon(fh, np.asarray(backward_induction(fh).policy)))[0] @ mu)
    pi = np.full((fh.H, fh.S, fh.A), 1.0 / fh.A)
    sub = []
    for _ in range(30):
        V = np.zeros((fh.H + 1, fh.S))
        Q = np.zeros((fh.H, fh.S, fh.A))
        for h in range(fh.H - 1, -1, -1):
            Q[h] = R[h] + P[h] @ V[h + 1]
            V[h] = np.sum(pi[h] * Q[h], -1)
        sub.append(v_star - float(V[0] @ mu))
        pi = np.stack([multiplicative_update(pi[h], eta * Q[h], np) for h in range(fh.H)])
    avg = np.cumsum(sub) / np.arange(1, len(sub) + 1)
    assert np.all(avg <= hybrid_npg_bound(fh.H, fh.A, eta, np.zeros(len(sub))) + 1e-10)


def test_hybrid_npg_bound_reference_and_validation():
    # H = 3, A = 4, η = 2, E = (0.5, 0.1): T = 1 → 3 ln 4/2 + 6 + 0.5; T = 2 → (3 ln 4/2 + 6 + 0.6)/2
    b = hybrid_npg_bound(3, 4, 2.0, [0.5, 0.1])
    assert b.tolist() == pytest.approx([1.5 * math.log(4) + 6.5, (1.5 * math.log(4) + 6.6) / 2], rel=1e-14)
    with pytest.raises(ValueError, match="eta must be a positive finite number"):
        hybrid_npg_bound(3, 4, 0.0, [0.1])
    with pytest.raises(ValueError, match="critic_terms must be a non-empty finite array"):
        hybrid_npg_bound(3, 4, 1.0, [])
    with pytest.raises(ValueError, match="A must be a positive integer"):
        hybrid_npg_bound(3, 0, 1.0, [0.1])
