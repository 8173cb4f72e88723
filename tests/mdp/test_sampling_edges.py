"""Samplers and offline datasets outside the hypothesis ranges: rounding negatives in
validated models, overflowing returns, located errors for bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP, empirical_mdp, rollout, sample_transitions, two_state
from rltheory.mdp.offline_data import EpisodeDataset, sample_preferences, trajectory_returns


def _rounding_negative_model() -> FiniteMDP:
    # check_probability accepts entries >= -atol (atol = 1e-8): -1e-10 is a valid rounding entry
    P = np.array(
        [
            [[0.5 + 1e-10, -1e-10, 0.5]],
            [[0.0, 0.0, 1.0]],
            [[-1e-10, 1.0 + 1e-10, 0.0]],
        ]
    )
    return FiniteMDP(P, np.zeros((3, 1)), 0.9)


def test_rounding_negative_probabilities_are_never_drawn_by_the_generative_model():
    # Generator.multinomial rejected the -1e-10 entry ("pvals < 0, pvals > 1 or pvals contains
    # NaNs"), so sample_transitions and empirical_mdp crashed on a model FiniteMDP accepts.
    mdp = _rounding_negative_model()
    n = 100_000
    N = sample_transitions(mdp, n, rng=0)
    np.testing.assert_array_equal(N.sum(-1), n)
    assert N[0, 0, 1] == 0 and N[2, 0, 0] == 0 and N[2, 0, 2] == 0
    assert N[1, 0, 2] == n and N[2, 0, 1] == n
    # Hoeffding: Pr(|N/n − 1/2| ≥ t) ≤ 2 exp(−2 n t²) = 1e-6 at t = √(ln(2e6)/(2n)) ≈ 0.0085
    t = math.sqrt(math.log(2e6) / (2 * n))
    assert abs(N[0, 0, 0] / n - 0.5) < t
    P_hat = np.asarray(empirical_mdp(mdp, n, rng=0).P)
    np.testing.assert_array_equal(P_hat, N / n)  # same seed, same counts


def test_rounding_negative_probabilities_are_never_drawn_in_rollouts():
    mdp = _rounding_negative_model()
    tr = rollout(mdp, [0, 0, 0], 20, 500, rng=1, mu=[1.0, 0.0, 0.0])
    s, s2 = tr.states[:, :-1], tr.states[:, 1:]
    assert not np.any((s == 0) & (s2 == 1))  # P(1|0) = -1e-10
    assert not np.any((s == 2) & (s2 != 1))  # P(0|2) = -1e-10, P(2|2) = 0


def test_rollout_names_the_bad_entry_of_mu():
    # the message used to repeat the whole vector without saying which entry broke the rule
    with pytest.raises(ValueError, match=r"shape \(2,\); entry mu\[1\] = -0\.1 is not a finite number >= 0"):
        rollout(two_state(), [0, 0], 3, 2, rng=0, mu=[1.1, -0.1])
    with pytest.raises(ValueError, match=r"shape \(2,\); entry mu\[0\] = nan"):
        rollout(two_state(), [0, 0], 3, 2, rng=0, mu=[math.nan, 1.0])
    with pytest.raises(ValueError, match=r"shape \(2,\); its entries sum to 1\.1, not 1"):
        rollout(two_state(), [0, 0], 3, 2, rng=0, mu=[0.5, 0.6])


def _episodes(actions: np.ndarray) -> EpisodeDataset:
    K, H = actions.shape
    return EpisodeDataset(np.zeros((K, H + 1), int), actions, np.zeros((K, H)), S=1, A=2)


def test_preferences_between_equal_episodes_are_fair_coins_when_returns_overflow():
    # r = 1e308 at every step: R(τ) = R(τ') = inf for H = 2, and inf − inf = NaN made every label
    # 0 (σ(NaN) < u is False). The difference Σ_h (r_h(τ) − r_h(τ')) = 0 gives Bernoulli(1/2).
    K = 4000
    d = _episodes(np.zeros((K, 2), int))
    R = np.full((2, 1, 2), 1e308)
    y = sample_preferences(d, d, R, rng=3).labels[:, 0]
    # Hoeffding, false-alarm probability 1e-6: |Σ y − K/2| < √(K ln(2e6)/2) ≈ 170
    assert abs(int(y.sum()) - K / 2) < math.sqrt(K * math.log(2e6) / 2)
    # a strictly better trajectory whose return is +inf wins with probability σ(+inf) = 1
    worse = np.full((2, 1, 2), 1e308)
    worse[..., 1] = -1e308
    better = _episodes(np.zeros((K, 2), int))
    y = sample_preferences(better, _episodes(np.ones((K, 2), int)), worse, rng=4).labels
    assert np.all(y == 1)


def test_preference_inputs_raise_located_errors():
    a, b = _episodes(np.zeros((3, 1), int)), _episodes(np.zeros((2, 1), int))
    # K = 3 against K = 2 used to fail in numpy ("operands could not be broadcast together")
    with pytest.raises(InvalidModelError, match=r"sample_preferences: first \(K=3, .*\) and second \(K=2, .*\) must have the same sizes"):
        sample_preferences(a, b, np.zeros((1, 1, 2)), rng=0)
    # a NaN reward used to make every label 0 silently
    R = np.zeros((1, 1, 2))
    R[0, 0, 1] = math.nan
    with pytest.raises(InvalidModelError, match=r"R\[i=0, h=0, s=0, a1=1\] = nan must be finite"):
        trajectory_returns(a, R)
    with pytest.raises(InvalidModelError, match=r"R\[i=0, h=0, s=0, a1=1\] = nan must be finite"):
        sample_preferences(a, a, R, rng=0)


def test_subset_validates_the_selection():
    d = _episodes(np.array([[0], [1], [1]]))
    assert d.subset([2, 0, 0]).actions[:, 0].tolist() == [1, 0, 0]
    assert d.subset(np.array([True, False, True])).K == 2
    assert d.subset([-1]).actions.tolist() == [[1]]
    # an index out of range used to escape as numpy's IndexError, a scalar as a shape error
    with pytest.raises(InvalidModelError, match=r"episodes\[1\] = 5 is not an episode index in \[-3, 3\)"):
        d.subset([0, 5])
    with pytest.raises(InvalidModelError, match=r"1-D array of episode indices or a boolean mask; got shape \(\)"):
        d.subset(1)
    with pytest.raises(InvalidModelError, match=r"boolean mask must have length K = 3; got 2"):
        d.subset([True, False])
    with pytest.raises(InvalidModelError, match=r"integer indices or booleans; got dtype float64"):
        d.subset([0.0, 1.0])
    with pytest.raises(InvalidModelError, match=r"is empty"):  # was: numpy IndexError (float dtype)
        d.subset([])


def test_numpy_integer_scalars_are_numbers():
    # np.int64(1) was refused with "must be a number in [0, 1]; got np.int64(1)"
    from rltheory.mdp.offline_data import behaviour_policy

    np.testing.assert_array_equal(behaviour_policy([[1.0, 0.0]], np.int64(1)), [[1.0, 0.0]])
    np.testing.assert_array_equal(behaviour_policy([[1.0, 0.0]], np.int64(0)), [[0.5, 0.5]])
    tr = rollout(two_state(), [1, 0], 3, 2, rng=0, mu=[0.0, 1.0])
    np.testing.assert_array_equal(tr.discounted_returns(np.int64(1)), tr.rewards.sum(1))
    np.testing.assert_array_equal(tr.discounted_returns(np.int64(0)), tr.rewards[:, 0])
    with pytest.raises(ValueError, match=r"alpha must be a number in \[0, 1\]; got np.int64\(2\)"):
        behaviour_policy([[1.0, 0.0]], np.int64(2))
