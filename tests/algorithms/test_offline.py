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
    for seed in range(50):
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
