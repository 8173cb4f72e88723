"""Dataset index lists refuse a bool among ints (helper-83's open item).

Regression: ``EpisodeDataset([[True, 0, 1]], ...)`` became the int array ``[[1, 0, 1]]`` (numpy
reads True as 1 in a mixed list), while an all-bool array was refused as "must hold integer
indices; got dtype bool". A bool anywhere in a list of indices is now refused, located.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp.offline_data import EpisodeDataset


def test_a_bool_among_integer_indices_is_refused_and_located():
    with pytest.raises(InvalidModelError, match=r"EpisodeDataset\.states\[0, 0\] is the bool True"):
        EpisodeDataset([[True, 0, 1]], [[1, 0]], [[0.5, 1.0]], S=2, A=2)
    with pytest.raises(
        InvalidModelError, match=r"EpisodeDataset\.actions\[0, 1\] is the bool False"
    ):
        EpisodeDataset([[0, 1, 1]], [[1, np.False_]], [[0.5, 1.0]], S=2, A=2)


def test_integer_lists_are_read_as_before():
    d = EpisodeDataset([[0, 1, 1]], [[1, 0]], [[0.5, 1.0]], S=2, A=2)
    np.testing.assert_array_equal(d.states, [[0, 1, 1]])
    np.testing.assert_array_equal(d.actions, [[1, 0]])
