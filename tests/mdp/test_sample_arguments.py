"""rltheory.mdp.sample and rltheory.mdp.episodes: arguments of the wrong kind are named."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp.sample import rollout
from rltheory.mdp.zoo import two_state


@pytest.mark.parametrize(
    ("mu", "what"),
    [
        (["0.5", "0.5"], "a string array"),
        (np.array([0.5 + 0j, 0.5]), "a complex array"),
        (np.array([0.5 + 1j, 0.5]), "a complex array"),
        (np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"), "dtype datetime64"),
    ],
)
def test_rollout_refuses_a_start_distribution_of_text_complex_or_dates(mu, what):
    # old: ['0.5', '0.5'] was parsed and sampled, a complex mu lost its imaginary part with only a
    # ComplexWarning (so 0.5 + 1j passed as 0.5), and dates were read as numbers
    with pytest.raises(TypeError, match=rf"mu must hold real numbers; got {what}"):
        rollout(two_state(), [0, 0], 2, 3, rng=0, mu=mu)


def test_rollout_takes_the_same_start_distribution_as_a_model():
    # a boolean mu is a 0/1 vector, as FiniteMDP reads it: the same draws as mu = [0.0, 1.0]
    ref = rollout(two_state(), [1, 0], 3, 4, rng=5, mu=[0.0, 1.0])
    got = rollout(two_state(), [1, 0], 3, 4, rng=5, mu=np.array([False, True]))
    np.testing.assert_array_equal(got.states, ref.states)


def test_discounted_returns_take_a_zero_dimensional_discount():
    # old: np.array(0.5) was refused ('gamma must be a number in [0, 1]; got array(0.5)') although
    # the library's other discounts accept 0-d arrays; the returns are r_0 + r_1/2 + r_2/4
    tr = rollout(two_state(), [1, 0], 3, 2, rng=0, mu=[0.0, 1.0])
    want = tr.rewards @ np.array([1.0, 0.5, 0.25])
    np.testing.assert_array_equal(tr.discounted_returns(np.array(0.5)), want)
    np.testing.assert_array_equal(tr.discounted_returns(np.float32(0.5)), want)
    for bad in (True, np.array([0.5]), "0.5", 1.5, float("nan"), np.array(0.5 + 0j)):
        with pytest.raises(ValueError, match=r"gamma must be a number in \[0, 1\]; got"):
            tr.discounted_returns(bad)


@pytest.mark.parametrize("bad", ["x", None, np.zeros((2, 3))])
def test_empirical_model_names_a_non_dataset(bad):
    # old: AttributeError "'str' object has no attribute 'H'" (an array: no attribute 'H' either)
    from rltheory.mdp.episodes import empirical_model

    with pytest.raises(TypeError, match=r"empirical_model needs an EpisodeDataset; got "):
        empirical_model(bad)


def test_empirical_model_refuses_a_kernel_beyond_the_cap_before_any_work():
    # old: np.bincount of H·S·J·S = 4e10 cells (MemoryError '... 298 GiB ...'), and for
    # A = (2^40, 2^40) numpy's 'invalid dims' from ravel_multi_index; now located, instantly
    from rltheory.mdp.episodes import MAX_MODEL_ENTRIES, EpisodeDataset, empirical_model

    assert MAX_MODEL_ENTRIES == 2**27
    d = EpisodeDataset(np.zeros((1, 3), int), np.zeros((1, 2), int), np.zeros((1, 2)), S=10**5, A=2)
    with pytest.raises(
        ValueError,
        match=r"H·S·J·S = 2·100000·2·100000 = 4e\+10 entries \(J = A = 2\), above "
        r"MAX_MODEL_ENTRIES = 134217728 \(rltheory\.mdp\.episodes\.MAX_MODEL_ENTRIES\)",
    ):
        empirical_model(d)
    big = 2**40
    g = EpisodeDataset(
        np.zeros((1, 2), int), np.zeros((1, 1, 2), int), np.zeros((1, 1, 2)), S=1, A=(big, big)
    )
    with pytest.raises(
        ValueError, match=rf"\(J = {big}·{big} = {big * big}\), above MAX_MODEL_ENTRIES"
    ):
        empirical_model(g)


def test_empirical_model_at_the_cap_is_built(monkeypatch):
    # H·S·J·S = 1·4·2·4 = 32 under a cap of 32: built (one visit (s=0, a=1) -> s'=3); a cap of 31 refuses
    from rltheory.mdp import episodes

    d = episodes.EpisodeDataset(np.array([[0, 3]]), np.array([[1]]), np.array([[0.25]]), S=4, A=2)
    monkeypatch.setattr(episodes, "MAX_MODEL_ENTRIES", 32)
    m = episodes.empirical_model(d)
    assert m.P.shape == (1, 4, 2, 4) and m.P[0, 0, 1, 3] == 1.0 and m.P.sum() == 1.0
    monkeypatch.setattr(episodes, "MAX_MODEL_ENTRIES", 31)
    with pytest.raises(
        ValueError, match=r"= 32 entries \(J = A = 2\), above MAX_MODEL_ENTRIES = 31"
    ):
        episodes.empirical_model(d)
