"""Arguments of Shapley's operator and value iteration: batches, dtype range, empty batches.

Each case was mishandled before (the error named in each test's docstring): the operator
broadcast ``V``'s batch against the game's without checking it, located an overflow on the
game's batch only, a float64 ``V`` beyond a float32 game's range was reported as the ``inf``
of the cast, and an empty batch failed in a numpy reduction.
"""

import numpy as np
import pytest

from rltheory.games.markov import MarkovGame, ZeroSumMarkovGame
from rltheory.games.shapley import shapley_operator, shapley_value_iteration
from rltheory.games.zoo import matching_pennies

MP = matching_pennies()[None]  # one state, value 0


def one_state(dtype=np.float64, scale=1.0, batch=()):
    P = np.ones(batch + (1, 2, 2, 1), dtype)
    return ZeroSumMarkovGame(P, np.broadcast_to(MP * scale, batch + MP.shape).astype(dtype), 0.9)


def test_operator_names_batches_that_do_not_broadcast():
    """Was numpy's 'operands could not be broadcast together with shapes (2,) (3,)'."""
    g = one_state(batch=(2,))
    with pytest.raises(
        ValueError, match=r"the batch shapes of the game \(2,\) and V \(3,\) do not"
    ):
        shapley_operator(g, np.zeros((3, 1)))


def test_operator_broadcasts_a_broader_batch_of_V():
    """A V batch (3, 1) against a game batch (2,): TV[k, j] is T_j applied to V[k]; one state,
    value 0 stage games: T V = 0 + γ V (matching pennies' value is 0)."""
    g = one_state(batch=(2,))
    V = np.array([1.0, 2.0, 4.0]).reshape(3, 1, 1)
    TV = np.asarray(shapley_operator(g, V).TV)
    assert TV.shape == (3, 2, 1)
    np.testing.assert_allclose(
        TV[:, :, 0], 0.9 * np.array([[1.0] * 2, [2.0] * 2, [4.0] * 2]), rtol=1e-12
    )


def test_operator_locates_an_overflow_in_a_batch_of_V():
    """An unbatched game with V batch (2,): the overflow check raised IndexError ('too many
    indices for array: array is 0-dimensional'); it now names the instance of the broadcast batch.
    Instance 1: max|R| + γ max|V| = 5e307 + 0.9·1e308 = 1.4e308 > 9e307, half the float64 maximum;
    instance 0 (max|V| = 1) is in range."""
    g = one_state(scale=5e307)
    V = np.array([[1.0], [1e308]])
    with pytest.raises(
        ValueError, match=r"at batch index \(1,\) \(max\|R\| = 5e\+307, max\|V\| = 1e\+308"
    ):
        shapley_operator(g, V)
    shapley_operator(g, np.array([[1.0], [2.0]]))  # in range: no error


@pytest.mark.parametrize("call", ["operator", "vi", "stage_games"])
def test_values_beyond_the_game_dtype_are_named(call):
    """A float64 V = 1e300 for a float32 game was reported as 'V must be finite; V(s=0) = inf',
    a value the caller never passed."""
    g = one_state(np.float32)
    field = "V0" if call == "vi" else "V"
    with pytest.raises(
        ValueError,
        match=rf"{field}\(s=0\) = 1e\+300 is beyond the range of the game's dtype float32",
    ):
        if call == "operator":
            shapley_operator(g, np.array([1e300]))
        elif call == "vi":
            shapley_value_iteration(g, V0=np.array([1e300]))
        else:
            g.stage_games(np.array([1e300]))


def test_value_iteration_refuses_an_empty_batch():
    """Was numpy's 'zero-size array to reduction operation maximum which has no identity'; the
    MDP solvers' message for the same input."""
    g = ZeroSumMarkovGame(np.ones((0, 1, 2, 2, 1)), np.ones((0, 1, 2, 2)), 0.5)
    with pytest.raises(
        ValueError, match=r"shapley_value_iteration: the batch is empty \(batch_shape \(0,\)\)"
    ):
        shapley_value_iteration(g)


def test_markov_game_checks_the_reward_shape_before_its_range():
    """R of shape (3, 2) (wrong: (2, 1, 2, 2) expected) with entries 1e300 in a float32 game was
    reported as 'R(a1=0, a2=0) = 1e+300 is beyond the range of P's dtype', axes R does not have."""
    P = np.ones((1, 2, 2, 1), np.float32)
    with pytest.raises(
        ValueError, match=r"R must have shape \(n, S, A_1, \.\.\., A_n\) = \(2, 1, 2, 2\)"
    ):
        MarkovGame(P, np.full((3, 2), 1e300), 0.5)
    with pytest.raises(
        ValueError, match=r"R\(i=1, s=0, a1=0, a2=1\) = 1e\+300 is beyond the range of P's dtype"
    ):
        R = np.zeros((2, 1, 2, 2))
        R[1, 0, 0, 1] = 1e300
        MarkovGame(P, R, 0.5)
