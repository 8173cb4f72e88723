"""Offline Markov games at the edges: overflowing rewards in the exact gap, extreme confidence levels."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms.offline_games import (
    equilibrium_gap,
    gap_relaxation_equilibrium,
    interval_gap_bound,
    pessimistic_equilibrium_vi,
)
from rltheory.mdp.offline_data import EpisodeDataset, sample_game_episodes


# ----------------------------------------------------------------------------- exact gap, huge rewards
def test_equilibrium_gap_with_rewards_near_the_float_maximum_is_not_nan():
    """H = 2 steps of rewards 1e308: every value is 2e308 (beyond the float range) but the gap is
    representable. Constant rewards: the gap of any profile is 0; the recursion formed inf − inf
    and returned NaN."""
    P = np.ones((2, 1, 2, 2, 1))
    R = np.full((2, 2, 1, 2, 2), 1e308)
    cc = np.zeros((2, 1, 2, 2))
    cc[:, 0, 0, 0] = 1.0
    assert equilibrium_gap(P, R, cc) == 0.0
    assert equilibrium_gap(P, R, cc, concept="ce") == 0.0


def test_equilibrium_gap_near_the_float_maximum_matches_exact_arithmetic():
    """Player 1 gains r(1, 0) − r(0, 0) = 1.2e308 − 1e308 per step by deviating from (0, 0) in both
    steps; player 2 gains nothing. Exact gap (rational arithmetic on the stored floats):
    2 (fl(1.2e308) − fl(1e308)); the float recursion handles values ≤ 2.4e308 / 2^1024 after its
    scaling, so its error is a few ulps of 2.4e308 (bounded here by 8 eps · H · max R)."""
    P = np.ones((2, 1, 2, 2, 1))
    R = np.full((2, 2, 1, 2, 2), 1e308)
    R[0, :, 0, 1, 0] = 1.2e308
    cc = np.zeros((2, 1, 2, 2))
    cc[:, 0, 0, 0] = 1.0
    exact = 2 * (Fraction(1.2e308) - Fraction(1e308))
    for concept in ("nash", "cce", "ce"):
        got = equilibrium_gap(P, R, cc, concept=concept)
        assert math.isfinite(got)
        assert abs(Fraction(got) - exact) <= Fraction(8 * np.finfo(float).eps * 2 * 1.2e308)


def test_equilibrium_gap_scales_exactly_with_a_power_of_two():
    """Gap(2^k R) = 2^k Gap(R) bit for bit (the recursion only adds, multiplies and maxes), from
    2^-1000 to 2^1000 (H = 3 steps of rewards ≤ 1: values ≤ 3·2^1000, inside the range)."""
    rng = np.random.default_rng(7)
    H, S = 3, 2
    P = rng.dirichlet(np.ones(S), size=(H, S, 2, 3))
    R = rng.random((2, H, S, 2, 3))
    x = rng.dirichlet(np.ones(2), size=(H, S))
    y = rng.dirichlet(np.ones(3), size=(H, S))
    pol = x[..., :, None] * y[..., None, :]
    base = equilibrium_gap(P, R, pol)
    assert base > 0
    for k in (-1000, -300, 300, 1000):
        assert equilibrium_gap(P, np.ldexp(R, k), pol) == math.ldexp(base, k)


# ----------------------------------------------------------------------------- extreme confidence levels
def _coordination_data(K: int) -> EpisodeDataset:
    """One-shot 2×2 coordination game (both players get 1 at (0, 0) and (1, 1), else 0), K episodes
    cycling through the four joint actions: n = K/4 samples of each, deterministic rewards."""
    a = np.stack(np.divmod(np.arange(K) % 4, 2), axis=-1)[:, None, :]  # [K, 1, 2]
    r = np.repeat((a[..., :1] == a[..., 1:]).astype(np.float64), 2, axis=-1)
    return EpisodeDataset(np.zeros((K, 2), dtype=np.int64), a, r, S=1, A=(2, 2))


def test_hoeffding_intervals_at_the_smallest_positive_delta():
    """δ = 5e-324 is a probability in (0, 1); the per-interval level δ' = δ/(2 n H |Π| S J) = δ/16
    underflows to 0 and the old code raised 'delta must be a probability in (0, 1); got 0.0' for a
    δ the caller never passed. The radius is B √(ln(2/δ')/(2n)) with ln(2/δ') = ln 2 + ln 16 − ln δ."""
    d = _coordination_data(8000)
    pol = np.eye(4)[0].reshape(1, 1, 2, 2)  # coordinated (0, 0), both players' reward 1
    res = interval_gap_bound(d, pol, delta=5e-324)
    n = 2000.0
    assert np.all(res.counts == 2000)
    L = math.log(2.0) + math.log(16) - math.log(5e-324)
    radius = math.sqrt(L / (2.0 * n))
    assert 0.0 < radius < 1.0
    # deterministic rewards: the empirical mean of (0, 0) is exactly 1
    np.testing.assert_allclose(res.lower[:, 0, 0], 1.0 - radius, rtol=1e-13)
    # a smaller δ never tightens the certificate
    b = [float(interval_gap_bound(d, pol, delta=dl).gap_bound[0]) for dl in (0.1, 1e-300, 5e-324)]
    assert b[0] <= b[1] <= b[2] <= 2.0


def test_self_normalized_beta_when_one_over_delta_overflows():
    """Linear intervals, β = 'self-normalized': β = ½B√(2 ln(1/δ') + ln det Λ − d ln λ) + √(λd)·B.
    With δ = 1e-310, 1/δ' overflowed to inf, so β = inf and a zero feature vector got the radius
    inf·0 = NaN: NaN bounds and a NaN certificate. ln(1/δ') = ln(2 n H |Π|) − ln δ is finite."""
    d = _coordination_data(400)
    pol = np.eye(4)[0].reshape(1, 1, 2, 2)
    feats = np.eye(4).reshape(1, 4, 4)
    feats[0, 3] = 0.0  # joint action (1, 1) has φ = 0: its fitted value and radius are 0
    res = interval_gap_bound(d, pol, delta=1e-310, features=feats, beta="self-normalized")
    assert np.all(np.isfinite(res.lower)) and np.all(np.isfinite(res.upper))
    assert np.isfinite(res.gap_bound).all()
    # (0, 0) is the equilibrium of the coordination game: true values 1, gap 0 ≤ Ĝ ≤ 2
    assert np.all(res.lower[:, 0, 0] <= 1.0) and np.all(res.upper[:, 0, 0] >= 1.0)
    assert 0.0 <= res.gap_bound[0] <= 2.0


@pytest.mark.parametrize("delta", [5e-324, 1e-320])
def test_self_normalized_beta_at_subnormal_delta_does_not_divide_by_zero(delta):
    """δ = 5e-324: δ' = δ/4 rounds to 0 and 1.0/δ' raised ZeroDivisionError."""
    d = _coordination_data(400)
    pol = np.eye(4)[0].reshape(1, 1, 2, 2)
    res = interval_gap_bound(d, pol, delta=delta, features=np.eye(4).reshape(1, 4, 4), beta="self-normalized")
    assert np.isfinite(res.gap_bound).all() and 0.0 <= res.gap_bound[0] <= 2.0


def test_astronomical_candidate_count_is_a_union_bound_not_an_overflow():
    """n_candidates = 10^400 is a valid (if vacuous) union bound; δ/(… · 10^400) raised
    OverflowError ('int too large to convert to float'). ln(2/δ') = ln 2 + ln(16·10^400) − ln δ."""
    d = _coordination_data(8000)
    pol = np.eye(4)[0].reshape(1, 1, 2, 2)
    res = interval_gap_bound(d, pol, n_candidates=10**400)
    n = 2000.0
    L = math.log(2.0) + math.log(16) + 400 * math.log(10) - math.log(0.1)
    np.testing.assert_allclose(res.lower[:, 0, 0], max(0.0, 1.0 - math.sqrt(L / (2.0 * n))), rtol=1e-13)


# ----------------------------------------------------------------------------- candidate checks
def test_gap_relaxation_names_the_bad_candidate():
    """A NaN entry in candidates[2], or candidates[1] of the wrong shape, was reported as
    'policy must be finite; policy(h=0, ...)' / 'policy must have shape ...': no candidate index."""
    d = _coordination_data(40)
    c = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]
    bad = c[2].copy()
    bad[0, 0, 1, 1] = np.nan
    with pytest.raises(ValueError, match=r"candidates\[2\] must be finite; candidates\[2\]\(h=0, s=0, a1=1, a2=1\) = nan"):
        gap_relaxation_equilibrium(d, [c[0], c[1], bad])
    with pytest.raises(ValueError, match=r"candidates\[1\] must have shape \(H, S, A_1, \.\.\., A_n\) = \(1, 1, 2, 2\); got \(1, 1, 2, 3\)"):
        gap_relaxation_equilibrium(d, [c[0], np.full((1, 1, 2, 3), 1 / 6)])
    neg = np.array([[[[1.5, -0.5], [0.0, 0.0]]]])
    with pytest.raises(ValueError, match=r"candidates\[3\] must be non-negative; most negative entry candidates\[3\]\(h=0, s=0, a1=0, a2=1\)"):
        gap_relaxation_equilibrium(d, c[:3] + [neg])
    assert gap_relaxation_equilibrium(d, c).candidate in (0, 3)


@pytest.mark.parametrize("split", ["False", 0, None, 1.0])
def test_split_must_be_a_bool(split):
    """split='False' is truthy and split the data (the opposite of what was asked); 0 / None / 1.0
    were read as booleans too."""
    d = _coordination_data(40)
    pol = np.eye(4)[0].reshape(1, 1, 2, 2)
    assert interval_gap_bound(d, pol, split=np.bool_(False)).gap_bound.shape == (1,)
    with pytest.raises(ValueError, match="split must be True or False; got "):
        interval_gap_bound(d, pol, split=split)
    with pytest.raises(ValueError, match="split must be True or False; got "):
        pessimistic_equilibrium_vi(d, split=split)


# ----------------------------------------------------------------------------- CCE stage objective
def _exact_cce(P: np.ndarray, R: np.ndarray, K: int, seed: int):
    """pessimistic_equilibrium_vi with exact intervals: deterministic transitions, mean rewards,
    one-hot joint features with β = 0 (Q̲ = Q̄ = the fitted mean = the exact backup; ridge 1e-12
    only keeps Λ invertible at unvisited states, which no policy reaches)."""
    H, S = P.shape[:2]
    shape = P.shape[2:-1]
    J = int(np.prod(shape))
    d = sample_game_episodes(P, R, np.full((H, S) + shape, 1.0 / J), K, rng=seed)  # K < 8192
    feats = np.eye(S * J).reshape(S, J, S * J)
    return pessimistic_equilibrium_vi(d, concept="cce", features=feats, beta=0.0, ridge=1e-12, split=False)


def test_exact_cce_recursion_returns_a_cce_in_a_one_shot_game():
    """r1 = [[0.54, 0.94], [0.82, 0]], r2 = [[0.86, 0.03], [0.73, 0.18]] (rows: player 1). With exact
    intervals the stage problem is min_σ Σ_i max(0, dev_i(σ) − σ·r_i), whose value is 0 at every
    CCE (e.g. the pure Nash equilibrium (1, 0): player 1 gets 0.82 ≥ 0.54, player 2 gets 0.73 ≥
    0.18). The old LP minimised the plain sum Σ_i (dev_i − σ·r_i), where a negative term of one
    player pays for a profitable deviation of the other: it returned a correlated σ that is not a
    CCE (CCE gap > 0) although the docstring promises gap 0 with exact intervals."""
    r1 = np.array([[0.54, 0.94], [0.82, 0.0]])
    r2 = np.array([[0.86, 0.03], [0.73, 0.18]])
    R = np.stack([r1, r2])[:, None, None]
    P = np.ones((1, 1, 2, 2, 1))
    res = _exact_cce(P, R, 4000, 0)
    # HiGHS returns a vertex of the unit-scaled LP: the gap is round-off (≤ 1e-15 observed)
    assert equilibrium_gap(P, R, res.policy, concept="cce") <= 1e-9
    assert res.gap_bound[0] <= 1e-9


def test_exact_cce_recursion_has_zero_gap_on_random_games():
    """The Notes' claim (exact intervals: CCE value iteration, gap 0) on 30 seeded random games,
    H ≤ 3, S ≤ 2, two or three players with 1–2 actions, deterministic transitions."""
    rng = np.random.default_rng(2)
    for t in range(30):
        H, S, n = int(rng.integers(1, 4)), int(rng.integers(1, 3)), 2 + t % 2
        shape = tuple(int(a) for a in rng.integers(1, 3, size=n))
        P = np.eye(S)[rng.integers(0, S, size=(H, S) + shape)]
        R = rng.random((n, H, S) + shape)
        res = _exact_cce(P, R, 3000, t)
        assert equilibrium_gap(P, R, res.policy, concept="cce") <= 1e-9, (t, H, S, shape)
