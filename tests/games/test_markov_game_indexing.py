"""ZeroSumMarkovGame indexes its batch axes as FiniteMDP does, on every array namespace.

Its own ``__getitem__`` pinned the model axes with trailing full slices: array_api_strict games
could not be indexed at all (``g[1]`` raised strict's IndexError), and an index with more entries
than batch axes failed inside numpy without naming the batch shape.
"""

import array_api_strict as xs
import numpy as np
import pytest

from rltheory.games.markov import ZeroSumMarkovGame


def _game(xp=np):
    rng = np.random.default_rng(0)
    P = rng.random((2, 3, 2, 2, 2, 2))
    P /= P.sum(-1, keepdims=True)
    R = rng.random((2, 3, 2, 2, 2))
    return ZeroSumMarkovGame(xp.asarray(P), xp.asarray(R), 0.9), P, R


@pytest.mark.parametrize("xp", [np, xs], ids=["numpy", "array_api_strict"])
@pytest.mark.parametrize(
    "index, take",
    [
        (1, lambda a: a[1]),
        ((1, 2), lambda a: a[1, 2]),
        ((Ellipsis, 0), lambda a: a[:, 0]),
        (slice(0, 1), lambda a: a[0:1]),
        (True, lambda a: a[None]),
    ],
    ids=["int", "pair", "ellipsis", "slice", "bool"],
)
def test_batch_indexing_matches_numpy(xp, index, take):
    g, P, R = _game(xp)
    sub = g[index]
    np.testing.assert_array_equal(np.asarray(sub.P), take(P))
    np.testing.assert_array_equal(np.asarray(sub.R), take(R))
    assert sub.gamma == g.gamma


def test_integer_array_index_on_strict_arrays():
    g, P, _ = _game(xs)
    sub = g[xs.asarray([1, 0])]
    np.testing.assert_array_equal(np.asarray(sub.P), P[[1, 0]])


def test_an_index_reaching_the_model_axes_is_refused_with_the_batch_shape():
    g, _, _ = _game()
    with pytest.raises(
        IndexError, match=r"index \(0, 0, 0\) addresses 3 axes but batch_shape is \(2, 3\)"
    ):
        g[0, 0, 0]
