"""Offline data containers: bad labels are named (helper 67's bug hunt)."""

import numpy as np
import pytest

from rltheory.mdp.episodes import EpisodeDataset
from rltheory.mdp.preference_data import PreferenceDataset


def _halves():
    a = EpisodeDataset(np.zeros((3, 2), int), np.ones((3, 1), int), np.zeros((3, 1)), S=1, A=2)
    b = EpisodeDataset(np.zeros((3, 2), int), np.zeros((3, 1), int), np.zeros((3, 1)), S=1, A=2)
    return a, b


def test_ragged_preference_labels_are_named():
    # numpy's 'setting an array element with a sequence. The requested array has an
    # inhomogeneous shape ...' named neither the dataset nor the field
    a, b = _halves()
    with pytest.raises(
        ValueError,
        match=r"PreferenceDataset\.labels must be a rectangular array of numbers; got a ragged",
    ):
        PreferenceDataset(a, b, [[1], [0, 1], [1]])
    # rectangular lists, tuples and arrays are read as before (one player: (K,) or (K, 1))
    for y in ([1, 0, 1], ((1,), (0,), (1,)), np.array([True, False, True])):
        d = PreferenceDataset(a, b, y)
        assert d.labels.tolist() == [[1], [0], [1]] and not d.labels.flags.writeable


def _old_sampler(mdp, nu, n, rng):
    """The former draw, written out: every u against every CDF entry (the reference values)."""
    from rltheory.mdp.sample import _cdf, _draw

    gen = np.random.default_rng(rng)
    v = np.asarray(nu, dtype=np.float64)
    flat = _draw(np.broadcast_to(_cdf(v.reshape(1, -1)), (n, v.size)), gen.random(n))
    s, a = flat // mdp.A, flat % mdp.A
    s2 = _draw(_cdf(np.asarray(mdp.P))[s, a], gen.random(n))
    return s, a, np.asarray(mdp.R)[s, a], s2


def test_transition_sampler_keeps_its_draws_in_bounded_memory():
    import tracemalloc

    from rltheory.mdp.transition_data import sample_transition_dataset
    from rltheory.mdp.zoo import garnet

    # the same dataset for a seed as the former all-pairs comparison (ties at CDF steps included:
    # zero-probability pairs in nu and in P)
    for seed, (S, A, b) in enumerate([(1, 1, 1), (5, 3, 2), (40, 4, 3), (200, 2, 200)]):
        mdp = garnet(S, A, b, gamma=0.9, rng=seed)
        nu = np.random.default_rng(seed).dirichlet(np.full(S * A, 0.3)).reshape(S, A)
        nu[0, 0] = 0.0 if S * A > 1 else 1.0
        nu /= nu.sum()
        d = sample_transition_dataset(mdp, nu, 3000, rng=seed)
        for got, want in zip(
            (d.states, d.actions, d.rewards, d.next_states),
            _old_sampler(mdp, nu, 3000, seed),
            strict=True,
        ):
            np.testing.assert_array_equal(got, want)
    # scratch memory O(N + S·A·S), not O(N·S·A): N = 40000 draws on S = 400, A = 5 compared every
    # u with all 2000 pairs (an 80 MB boolean) and copied 40000 successor CDFs (128 MB); the model's
    # own CDF is 6.4 MB
    mdp = garnet(400, 5, 3, gamma=0.9, rng=0)
    nu = np.full((400, 5), 1.0 / 2000)
    tracemalloc.start()
    try:
        sample_transition_dataset(mdp, nu, 40_000, rng=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6, peak
