"""independent_npg names a game it cannot run.

A batch of two games failed after a full round with numpy's 'only 0-dimensional arrays can be
converted to Python scalars' (the exploitability of a batch is an array), and a MarkovGame with
"'MarkovGame' object has no attribute 'A'".
"""

import numpy as np
import pytest

from rltheory.experiments.markov_games import independent_npg
from rltheory.games.zoo import random_zero_sum_markov_game


def test_batched_game_is_refused():
    g = random_zero_sum_markov_game(0, 3, 2, 2, 0.9, batch_shape=(2,))
    with pytest.raises(ValueError, match=r"independent_npg runs one game; got batch_shape=\(2,\)"):
        independent_npg(g, 3, 0.5)


def test_general_sum_game_is_refused():
    g = random_zero_sum_markov_game(0, 3, 2, 2, 0.9).as_markov_game()
    with pytest.raises(
        TypeError, match="independent_npg expects a ZeroSumMarkovGame; got MarkovGame"
    ):
        independent_npg(g, 3, 0.5)


def test_one_game_of_the_batch_runs_as_the_single_game():
    """Consistency: indexing the batch gives the same curve as the game built on its own."""
    batch = random_zero_sum_markov_game(0, 3, 2, 2, 0.9, batch_shape=(2,))
    single = type(batch)(np.asarray(batch.P)[1], np.asarray(batch.R)[1], 0.9)
    np.testing.assert_array_equal(
        independent_npg(batch[1], 4, 0.5), independent_npg(single, 4, 0.5)
    )
