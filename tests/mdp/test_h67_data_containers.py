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
