"""Game zoo arguments: the weights and the shape tuples are checked entry by entry, by name.

Before, ``rock_paper_scissors(('1', '1', '1'))`` parsed the text and ``(True, 1, 1)`` read True as 1
(both returned the standard game), ``rock_paper_scissors(1.0)``, ``random_matrix_games(0, 3, 2, 2)``,
``batch_shape=3`` and ``actions=3`` failed with Python's "'float' object is not iterable" naming no
argument, and ``(1 + 0j, 1, 1)`` with float()'s message.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.games.zoo import (
    cooperative_markov_game,
    random_matrix_games,
    random_zero_sum_markov_game,
    rock_paper_scissors,
)


@pytest.mark.parametrize(
    "weights, where",
    [
        (("1", "1", "1"), r"weights\[0\]"),
        ((True, 1, 1), r"weights\[0\]"),
        ((1 + 0j, 1, 1), r"weights\[0\]"),
        ((1, 2, -3), r"weights\[2\]"),
        ((1, np.nan, 1), r"weights\[1\]"),
        ((1, 1, np.inf), r"weights\[2\]"),
    ],
)
def test_weights_entries_are_positive_finite_numbers(weights, where):
    with pytest.raises(ValueError, match=rf"^{where} must be a finite number > 0; got "):
        rock_paper_scissors(weights)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: rock_paper_scissors(1.0), "weights"),
        (lambda: rock_paper_scissors("abc"), "weights"),
        (lambda: random_matrix_games(0, 3, 2, 2), "shape"),
        (lambda: random_zero_sum_markov_game(0, 2, 2, 2, 0.9, batch_shape=3), "batch_shape"),
        (lambda: cooperative_markov_game(0, 2, 3, 0.9), "actions"),
    ],
)
def test_a_bare_number_or_text_for_a_tuple_is_a_located_type_error(call, name):
    with pytest.raises(TypeError, match=rf"^{name} must be a tuple of numbers; got "):
        call()


def test_lists_arrays_and_numpy_numbers_are_accepted():
    # weighted RPS (a, b, c) = (1, 2, 3): A = [[0, -b, a], [b, 0, -c], [-a, c, 0]]
    A = [[0.0, -2.0, 1.0], [2.0, 0.0, -3.0], [-1.0, 3.0, 0.0]]
    assert rock_paper_scissors([1, 2, 3]).tolist() == A
    assert rock_paper_scissors(np.array([1.0, 2.0, 3.0])).tolist() == A
    assert rock_paper_scissors((np.float32(1), np.int64(2), 3)).tolist() == A
    assert random_matrix_games(0, [2], 3, 4).shape == (2, 3, 4)
    assert cooperative_markov_game(0, 2, [2, 3], 0.9).actions == (2, 3)
