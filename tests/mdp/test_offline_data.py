"""Offline datasets: sampling laws, coverage knob, empirical model, save/load, located errors."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.bounds.coverage import finite_horizon_occupancy
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP, FiniteMDP, evaluate_finite_horizon
from rltheory.mdp.offline_data import (
    EpisodeDataset,
    PreferenceDataset,
    TransitionDataset,
    adversarial_policy,
    behaviour_policy,
    empirical_model,
    load_dataset,
    sample_episodes,
    sample_game_episodes,
    sample_preferences,
    sample_transition_dataset,
    save_dataset,
    trajectory_returns,
)
from rltheory.mdp.sample import rollout
from rltheory.testing import finite_horizon_mdps, policies


def _fh(seed: int = 0, H: int = 3, S: int = 4, A: int = 3) -> FiniteHorizonMDP:
    rng = np.random.default_rng(seed)
    P = rng.random((H, S, A, S)) ** 2
    P /= P.sum(-1, keepdims=True)
    return FiniteHorizonMDP(P, rng.random((H, S, A)), mu=rng.dirichlet(np.ones(S)))


# ----------------------------------------------------------------------------- theorems
@settings(max_examples=15, deadline=None)
@given(fh=finite_horizon_mdps(max_horizon=3, max_states=3, max_actions=3), seed=st.integers(0, 2**16))
def test_counts_concentrate_on_behaviour_occupancy(fh, seed):
    # E[n_h(s,a)] = K d^{π_b}_h(s,a); Hoeffding + union over (h,s,a): with prob ≥ 1 − 1e-6,
    # |n/K − d| ≤ sqrt(ln(2 HSA/1e-6)/(2K)) simultaneously.
    rng = np.random.default_rng(seed)
    beh = rng.dirichlet(np.ones(fh.A), size=(fh.H, fh.S))
    K = 4000
    d = sample_episodes(fh, beh, K, rng=rng)
    m = empirical_model(d)
    occ = np.asarray(finite_horizon_occupancy(fh, beh))
    tol = math.sqrt(math.log(2 * fh.H * fh.S * fh.A / 1e-6) / (2 * K))
    assert np.max(np.abs(m.counts / K - occ)) <= tol
    assert np.all(m.counts.sum(axis=(1, 2)) == K)
    vis = m.counts > 0
    assert np.allclose(m.P.sum(-1)[vis], 1.0) and np.all(m.P.sum(-1)[~vis] == 0)
    assert np.allclose(m.behaviour.sum(-1)[m.counts.sum(-1) > 0], 1.0)


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    S=st.integers(1, 4),
    A=st.integers(1, 4),
    alpha=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_behaviour_policy_mixture_and_drop(data, S, A, alpha):
    target = data.draw(policies(S, A))
    other = data.draw(policies(S, A))
    pb = behaviour_policy(target, alpha, other=other)
    assert np.allclose(pb.sum(-1), 1.0)
    assert np.all(pb >= alpha * target - 1e-12)  # the target keeps weight α everywhere
    drop = np.zeros((S, A), dtype=bool)
    if A > 1 and alpha < 1:  # (α = 1 and a target row on action 0 leaves no mass: tested below)
        drop[:, 0] = True
        pu = behaviour_policy(target, alpha, drop=drop)  # uniform other keeps every row alive
        assert np.all(pu[:, 0] == 0) and np.allclose(pu.sum(-1), 1.0)
        # renormalisation is proportional on the kept actions
        raw = alpha * target[:, 1:] + (1 - alpha) / A
        assert np.allclose(pu[:, 1:], raw / raw.sum(-1, keepdims=True))


def test_behaviour_stepwise_mixture_bounds_concentrability():
    # Docstring claim: d^{π_b}_h ≥ α^{h+1} d^{π*}_h for π_b = α π* + (1 − α) π_o.
    fh = _fh(1)
    target = np.random.default_rng(2).integers(0, fh.A, size=(fh.H, fh.S))
    pb = behaviour_policy(target, 0.4, other=np.full((fh.H, fh.S, fh.A), 1 / fh.A))
    d_t = np.asarray(finite_horizon_occupancy(fh, target))
    d_b = np.asarray(finite_horizon_occupancy(fh, pb))
    for h in range(fh.H):
        assert np.all(d_b[h] >= 0.4 ** (h + 1) * d_t[h] - 1e-12)


# ----------------------------------------------------------------------------- reference values
def test_deterministic_chain_reference_trajectory():
    # Two states, action 1 moves 0 -> 1, action 0 stays; rewards r(s, a) = s + a/10.
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = P[1, 1, 1] = P[0, 1, 1] = 1.0
    R = np.array([[0.0, 0.1], [1.0, 1.1]])
    fh = FiniteHorizonMDP.stationary(P, R, H=3, mu=[1.0, 0.0])
    d = sample_episodes(fh, np.array([[1, 1], [0, 0], [0, 1]]), 2, rng=0)
    assert d.states.tolist() == [[0, 1, 1, 1]] * 2
    assert d.actions.tolist() == [[1, 0, 1]] * 2
    assert np.allclose(d.rewards, [[0.1, 1.0, 1.1]] * 2)
    assert np.allclose(trajectory_returns(d, fh.R)[:, 0], 2.2)


def test_adversarial_policy_reference():
    assert adversarial_policy(np.array([[3.0, 1.0, 2.0]])).tolist() == [[0.0, 1.0, 0.0]]


def test_empirical_model_reference():
    # episodes: (s0=0,a=1,r=1,s1=1) and (s0=0,a=1,r=0,s1=0): P̂_0(·|0,1) = (1/2, 1/2), r̂ = 1/2.
    d = EpisodeDataset(np.array([[0, 1], [0, 0]]), np.array([[1], [1]]), np.array([[1.0], [0.0]]), S=2, A=2)
    m = empirical_model(d)
    assert m.counts[0].tolist() == [[0, 2], [0, 0]]
    assert m.P[0, 0, 1].tolist() == [0.5, 0.5]
    assert m.R[0, 0, 0, 1] == 0.5 and m.behaviour[0, 0].tolist() == [0.0, 1.0]


# ----------------------------------------------------------------------------- consistency
def test_episode_returns_match_exact_value_and_rollout():
    # Stationary model and policy: sample_episodes and sample.rollout (γ = 1) both estimate
    # V^π_0(μ); each mean is within 5 standard errors of the exact value.
    rng = np.random.default_rng(3)
    S, A, H = 3, 2, 4
    P = rng.random((S, A, S))
    P /= P.sum(-1, keepdims=True)
    R = rng.random((S, A))
    pi = rng.dirichlet(np.ones(A), size=S)
    mu = np.array([0.2, 0.5, 0.3])
    fh = FiniteHorizonMDP.stationary(P, R, H, mu=mu)
    exact = float(np.asarray(evaluate_finite_horizon(fh, np.broadcast_to(pi, (H, S, A))))[0] @ mu)
    K = 20000
    g1 = sample_episodes(fh, pi, K, rng=4).rewards.sum(1)
    g2 = rollout(FiniteMDP(P, R, 0.5, mu), pi, H, K, rng=5).rewards.sum(1)
    for g in (g1, g2):
        assert abs(g.mean() - exact) <= 5 * g.std() / math.sqrt(K) + 1e-12


def test_game_sampler_with_dummy_player_equals_mdp_sampler():
    # A second player with one action leaves the MDP unchanged; the same seed gives the same data.
    fh = _fh(5)
    beh = np.random.default_rng(6).dirichlet(np.ones(fh.A), size=(fh.H, fh.S))
    d1 = sample_episodes(fh, beh, 50, rng=7)
    P = np.asarray(fh.P)[:, :, :, None, :]
    R = np.stack([np.asarray(fh.R)[..., None], np.zeros(np.asarray(fh.R).shape + (1,))])
    d2 = sample_game_episodes(P, R, beh[..., None], 50, rng=7, mu=np.asarray(fh.mu))
    assert np.array_equal(d1.states, d2.states)
    assert np.array_equal(d1.actions, d2.actions[..., 0]) and np.all(d2.actions[..., 1] == 0)
    assert np.array_equal(d1.rewards, d2.rewards[..., 0])
    m1, m2 = empirical_model(d1), empirical_model(d2)
    assert np.array_equal(m1.counts, m2.counts) and np.allclose(m1.P, m2.P)


def test_transition_dataset_law():
    rng = np.random.default_rng(8)
    P = rng.random((2, 2, 2))
    P /= P.sum(-1, keepdims=True)
    mdp = FiniteMDP(P, np.array([[0.2, 0.9], [0.5, 0.1]]), 0.9)
    nu = np.array([[0.1, 0.2], [0.3, 0.4]])
    N = 40000
    d = sample_transition_dataset(mdp, nu, N, rng=9, rewards="bernoulli")
    freq = np.bincount(d.states * 2 + d.actions, minlength=4).reshape(2, 2) / N
    tol = math.sqrt(math.log(2 * 4 / 1e-6) / (2 * N))
    assert np.max(np.abs(freq - nu)) <= tol
    sel = (d.states == 1) & (d.actions == 1)
    assert abs(d.next_states[sel].mean() - P[1, 1, 1]) <= 5 * math.sqrt(0.25 / sel.sum())
    assert set(np.unique(d.rewards)) <= {0.0, 1.0}


def test_preferences_follow_bradley_terry():
    # One-step bandit, 2 actions with returns 0 and 1: Pr(first ≻ second) = σ(1) when first plays 1.
    K = 20000
    first = EpisodeDataset(np.zeros((K, 2), int), np.ones((K, 1), int), np.zeros((K, 1)), S=1, A=2)
    second = EpisodeDataset(np.zeros((K, 2), int), np.zeros((K, 1), int), np.zeros((K, 1)), S=1, A=2)
    prefs = sample_preferences(first, second, np.array([[[0.0, 1.0]]]), rng=10)
    p = 1 / (1 + math.exp(-1.0))
    assert abs(prefs.labels.mean() - p) <= 5 * math.sqrt(p * (1 - p) / K)


@pytest.mark.parametrize("kind", ["episodes", "game", "transitions", "preferences"])
def test_save_load_round_trip(tmp_path, kind):
    fh = _fh(11)
    if kind == "episodes":
        d = sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 20, rng=0)
    elif kind == "game":
        P = np.ones((2, 1, 2, 3, 1))
        d = sample_game_episodes(P, np.zeros((2, 2, 1, 2, 3)), np.full((2, 1, 2, 3), 1 / 6), 7, rng=1)
    elif kind == "transitions":
        mdp = FiniteMDP(np.asarray(fh.P)[0], np.asarray(fh.R)[0], 0.9)
        d = sample_transition_dataset(mdp, np.full((fh.S, fh.A), 1 / (fh.S * fh.A)), 30, rng=2)
    else:
        a = sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 9, rng=3)
        b = sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 9, rng=4)
        d = sample_preferences(a, b, fh.R, rng=5)
    path = save_dataset(d, tmp_path / "data")
    assert path.name == "data.npz" and sorted(os.listdir(tmp_path)) == ["data.npz"]
    e = load_dataset(path)
    assert type(e) is type(d)
    parts = [("first", "second")] if kind == "preferences" else [()]
    if kind == "preferences":
        assert np.array_equal(e.labels, d.labels)
        pairs = [(d.first, e.first), (d.second, e.second)]
    else:
        pairs = [(d, e)]
    for x, y in pairs:
        for f in ("states", "actions", "rewards"):
            assert np.array_equal(getattr(x, f), getattr(y, f))
        assert (x.S, x.A) == (y.S, y.A)
    assert parts  # noqa: PT018 - keeps the parametrisation explicit


def test_save_is_atomic(tmp_path, monkeypatch):
    fh = _fh(12)
    d = sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 5, rng=0)
    path = save_dataset(d, tmp_path / "x.npz")
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(OSError, match="disk full"):
        save_dataset(sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 6, rng=1), path)
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["x.npz"]


# ----------------------------------------------------------------------------- validation
def _ok() -> dict:
    return dict(states=np.zeros((3, 3), int), actions=np.zeros((3, 2), int), rewards=np.zeros((3, 2)), S=2, A=2)


def test_episode_dataset_located_errors():
    bad = _ok()
    bad["states"][1, 2] = 5
    with pytest.raises(InvalidModelError, match=r"states\[k=1, h=2\] = 5 is not a state index in \[0, 2\)"):
        EpisodeDataset(**bad)
    bad = _ok()
    bad["actions"][2, 0] = -1
    with pytest.raises(InvalidModelError, match=r"actions\[k=2, h=0\] = -1 is not an action index in \[0, 2\)"):
        EpisodeDataset(**bad)
    with pytest.raises(InvalidModelError, match=r"empty.*K = 0"):
        EpisodeDataset(np.zeros((0, 3), int), np.zeros((0, 2), int), np.zeros((0, 2)), S=2, A=2)
    with pytest.raises(InvalidModelError, match=r"empty.*H = 0"):
        EpisodeDataset(np.zeros((3, 1), int), np.zeros((3, 0), int), np.zeros((3, 0)), S=2, A=2)
    bad = _ok()
    bad["actions"] = np.zeros((3, 3), int)
    with pytest.raises(InvalidModelError, match=r"actions must have shape \(3, 2\)"):
        EpisodeDataset(**bad)
    bad = _ok()
    bad["rewards"][0, 1] = np.nan
    with pytest.raises(InvalidModelError, match=r"rewards\[k=0, h=1\] = nan must be finite"):
        EpisodeDataset(**bad)
    bad = _ok()
    bad["states"] = bad["states"].astype(float)
    with pytest.raises(InvalidModelError, match="states must hold integer indices"):
        EpisodeDataset(**bad)
    d = EpisodeDataset(**_ok())
    with pytest.raises(InvalidModelError, match=r"wrong horizon: the dataset has H = 2 .* model has H = 4"):
        d.check_compatible(H=4)
    with pytest.raises(InvalidModelError, match=r"S = 2 states but the model has S = 3"):
        d.check_compatible(S=3)
    with pytest.raises(InvalidModelError, match=r"player-1 action index in \[0, 2\)"):
        EpisodeDataset(np.zeros((1, 2), int), np.array([[[0, 2]]]), np.zeros((1, 1, 2)), S=1, A=(2, 2))


def test_transition_and_preference_located_errors():
    with pytest.raises(InvalidModelError, match=r"next_states\[i=1\] = 3 is not a state index in \[0, 3\)"):
        TransitionDataset(np.zeros(2, int), np.zeros(2, int), np.zeros(2), np.array([0, 3]), S=3, A=1)
    with pytest.raises(InvalidModelError, match=r"empty \(N = 0"):
        TransitionDataset(np.zeros(0, int), np.zeros(0, int), np.zeros(0), np.zeros(0, int), S=3, A=1)
    with pytest.raises(InvalidModelError, match="rewards has length 1 but states has length 2"):
        TransitionDataset(np.zeros(2, int), np.zeros(2, int), np.zeros(1), np.zeros(2, int), S=3, A=1)
    a = EpisodeDataset(**_ok())
    with pytest.raises(InvalidModelError, match=r"labels\[k=1, i=0\] = 2 is not a 0/1 index"):
        PreferenceDataset(a, a, np.array([[0], [2], [1]]))
    b = EpisodeDataset(np.zeros((3, 2), int), np.zeros((3, 1), int), np.zeros((3, 1)), S=2, A=2)
    with pytest.raises(InvalidModelError, match="must have the same sizes"):
        PreferenceDataset(a, b, np.zeros((3, 1), int))


def test_sampler_and_knob_errors(tmp_path):
    fh = _fh(13)
    with pytest.raises(ValueError, match=r"behaviour must have shape \(H, S, A\)"):
        sample_episodes(fh, np.full((2, 2), 0.5), 3, rng=0)
    with pytest.raises(InvalidModelError, match="K must be an integer >= 1"):
        sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 0, rng=0)
    with pytest.raises(TypeError, match="rng must be"):
        sample_episodes(fh, np.full((fh.S, fh.A), 1 / fh.A), 3, rng=None)
    R2 = FiniteHorizonMDP(np.asarray(fh.P), 2.0 * np.asarray(fh.R) + 1.0)
    with pytest.raises(ValueError, match=r"Bernoulli rewards need mean rewards in \[0, 1\]"):
        sample_episodes(R2, np.full((fh.S, fh.A), 1 / fh.A), 3, rng=0, rewards="bernoulli")
    with pytest.raises(ValueError, match="alpha must be a number in"):
        behaviour_policy(np.eye(2), 1.5)
    with pytest.raises(ValueError, match=r"row \(1,\) has no mass left"):
        behaviour_policy(np.eye(2), 1.0, drop=np.array([[False, False], [False, True]]))
    with pytest.raises(InvalidModelError, match="no 'header' entry"):
        np.savez(tmp_path / "raw.npz", states=np.zeros(3))
        load_dataset(tmp_path / "raw.npz")
    d = EpisodeDataset(**_ok())
    p = save_dataset(d, tmp_path / "d.npz")
    with np.load(p) as z:
        arrs = {k: z[k] for k in z.files}
    arrs["states"][0, 0] = 9
    np.savez(tmp_path / "corrupt.npz", **arrs)
    with pytest.raises(InvalidModelError, match=r"corrupt\.npz: EpisodeDataset\.states\[k=0, h=0\] = 9"):
        load_dataset(tmp_path / "corrupt.npz")
    del arrs["rewards"]
    np.savez(tmp_path / "missing.npz", **arrs)
    with pytest.raises(InvalidModelError, match=r"lacks arrays \['rewards'\]"):
        load_dataset(tmp_path / "missing.npz")


def test_load_dataset_names_the_file_when_it_is_not_an_archive(tmp_path):
    # numpy's own errors named neither the file nor the format: a truncated archive gave
    # BadZipFile, an empty file EOFError, a text file "contains pickled (object) data"
    raw = save_dataset(EpisodeDataset(**_ok()), tmp_path / "d.npz").read_bytes()
    flipped = bytearray(raw)
    flipped[len(raw) // 2: len(raw) // 2 + 20] = bytes(20)  # a member's bytes: its CRC fails
    files = {"trunc.npz": raw[: len(raw) // 2], "empty.npz": b"", "text.npz": b"states,actions\n",
             "flip.npz": bytes(flipped)}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(InvalidModelError, match=rf"{name}: not a dataset archive written by save_dataset"):
            load_dataset(tmp_path / name)
    np.save(tmp_path / "one.npy", np.arange(3))
    with pytest.raises(InvalidModelError, match=r"one\.npy: not a dataset archive .* a single ndarray"):
        load_dataset(tmp_path / "one.npy")
    with pytest.raises(FileNotFoundError):
        load_dataset(tmp_path / "absent.npz")


def test_remaining_sampler_and_container_errors():
    fh = _fh(14)
    pol = np.full((fh.S, fh.A), 1 / fh.A)
    # behaviour_policy: the knob's other end and its mask
    with pytest.raises(ValueError, match="a deterministic target needs the number of actions"):
        behaviour_policy(np.array([0, 1]), 0.5)
    with pytest.raises(ValueError, match="other must be 'uniform' or a policy array; got 'greedy'"):
        behaviour_policy(np.eye(2), 0.5, other="greedy")
    with pytest.raises(ValueError, match=r"other has shape \(3, 2\) but target has shape \(2, 2\)"):
        behaviour_policy(np.eye(2), 0.5, other=np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match=r"drop must have the policy's shape \(2, 2\); got \(2,\)"):
        behaviour_policy(np.eye(2), 0.5, drop=np.array([True, False]))
    # single-agent sampler: model type and batch
    with pytest.raises(TypeError, match="sample_episodes needs a FiniteHorizonMDP; got FiniteMDP"):
        sample_episodes(FiniteMDP(np.asarray(fh.P)[0], np.asarray(fh.R)[0], 0.9), pol, 3, rng=0)
    batched = FiniteHorizonMDP(np.stack([np.asarray(fh.P)] * 2), np.stack([np.asarray(fh.R)] * 2))
    with pytest.raises(ValueError, match=r"needs a single model; got batch_shape=\(2,\)"):
        sample_episodes(batched, pol, 3, rng=0)
    # game sampler: shapes of P, R and the joint behaviour
    P = np.full((2, 3, 2, 2, 3), 1 / 3)
    R = np.zeros((2, 2, 3, 2, 2))
    beh = np.full((2, 3, 2, 2), 0.25)
    with pytest.raises(InvalidModelError, match=r"P must have shape \(H, S, A_1, \.\.\., A_n, S\); got \(3, 2, 3\)"):
        sample_game_episodes(np.full((3, 2, 3), 1 / 3), R, beh, 2, rng=0)
    with pytest.raises(InvalidModelError, match=r"P's last axis must have S = 3 entries; got shape \(2, 3, 2, 2, 4\)"):
        sample_game_episodes(np.full((2, 3, 2, 2, 4), 0.25), R, beh, 2, rng=0)
    with pytest.raises(InvalidModelError, match=r"R must have shape \(n, H, S, A_1, \.\.\., A_n\) = \(2, 2, 3, 2, 2\); got \(2, 3, 2, 2\)"):
        sample_game_episodes(P, R[0], beh, 2, rng=0)
    with pytest.raises(ValueError, match=r"behaviour must have shape \(H, S, A_1, \.\.\., A_n\) = \(2, 3, 2, 2\); got \(3, 2, 2\)"):
        sample_game_episodes(P, R, beh[0], 2, rng=0)
    # preference data: containers, returns, temperature
    a = EpisodeDataset(**_ok())
    with pytest.raises(InvalidModelError, match="PreferenceDataset.second must be an EpisodeDataset; got dict"):
        PreferenceDataset(a, _ok(), np.zeros(3, int))
    with pytest.raises(InvalidModelError, match=r"PreferenceDataset.labels must have shape \(K, n\) = \(3, 1\); got \(3, 2\)"):
        PreferenceDataset(a, a, np.zeros((3, 2), int))
    assert PreferenceDataset(a, a, np.array([0, 1, 1])).labels.shape == (3, 1)  # (K,) labels: one player
    with pytest.raises(InvalidModelError, match=r"R must have shape \(n, H, S, A_1, \.\.\., A_n\) = \(1, 2, 2, 2\); got \(1, 2, 2, 3\)"):
        trajectory_returns(a, np.zeros((2, 2, 3)))
    for scale in (0.0, math.inf, True):
        with pytest.raises(ValueError, match="scale must be a positive finite number"):
            sample_preferences(a, a, np.zeros((2, 2, 2)), rng=0, scale=scale)
    # transition data: dimensions and the sampling law's shape
    with pytest.raises(InvalidModelError, match=r"TransitionDataset.rewards must be one-dimensional \(N,\); got shape \(2, 1\)"):
        TransitionDataset(np.zeros(2, int), np.zeros(2, int), np.zeros((2, 1)), np.zeros(2, int), S=3, A=1)
    t = TransitionDataset(np.zeros(2, int), np.zeros(2, int), np.zeros(2), np.zeros(2, int), S=3, A=1)
    with pytest.raises(InvalidModelError, match="the dataset has S = 3 states but the model has S = 4"):
        t.check_compatible(S=4)
    with pytest.raises(InvalidModelError, match="the dataset has A = 1 actions but the model has A = 2"):
        t.check_compatible(A=2)
    mdp = FiniteMDP(np.asarray(fh.P)[0], np.asarray(fh.R)[0], 0.9)
    with pytest.raises(ValueError, match=r"nu must have shape \(S, A\) = \(4, 3\); got \(4,\)"):
        sample_transition_dataset(mdp, np.full(4, 0.25), 5, rng=0)


def test_episode_dataset_names_non_numeric_rewards():
    # A string entry failed with numpy's "could not convert string to float: np.str_('x')",
    # naming neither the dataset nor the field; a complex one lost its imaginary part.
    from rltheory.mdp.episodes import EpisodeDataset

    st_, ac = np.zeros((2, 3), dtype=int), np.zeros((2, 2), dtype=int)
    with pytest.raises(TypeError, match=r"EpisodeDataset.rewards must hold real numbers; got a string array"):
        EpisodeDataset(st_, ac, [[1.0, 2.0], [0.0, "x"]], 2, 2)
    with pytest.raises(TypeError, match=r"EpisodeDataset.rewards must hold real numbers; got a complex array"):
        EpisodeDataset(st_, ac, np.ones((2, 2)) * 1j, 2, 2)
    d = EpisodeDataset(st_, ac, [[1, 2], [0, 3]], 2, 2)  # integers are numbers
    assert d.rewards.dtype == np.float64 and d.rewards.tolist() == [[1.0, 2.0], [0.0, 3.0]]
