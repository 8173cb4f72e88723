"""Empty batches and undiscounted games are refused by the routine the caller named (helper-89, session 18).

``exploitability`` and ``best_response`` of a zero-sum Markov game with an empty batch (the
game's, or a policy's broadcast against it) raised ``policy_iteration: the batch is empty``,
naming an internal solver the caller never called. They now name themselves and the batch.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.games.exploit import best_response, exploitability, nash_conv
from rltheory.games.markov import MarkovGame
from rltheory.games.zoo import random_zero_sum_markov_game


def test_exploitability_names_itself_on_an_empty_game_batch() -> None:
    g = random_zero_sum_markov_game(0, 3, 2, 2, 0.9, batch_shape=(0,))
    z = np.zeros((0, 3), dtype=int)
    with pytest.raises(
        ValueError, match=r"^exploitability: the batch is empty \(batch_shape \(0,\)"
    ):
        exploitability(g, z, z)


def test_exploitability_names_itself_when_a_policy_batch_is_empty() -> None:
    g = random_zero_sum_markov_game(1, 2, 2, 3, 0.5)  # unbatched game, mu with batch (0,)
    with pytest.raises(
        ValueError, match=r"^exploitability: the batch is empty \(batch_shape \(0,\)"
    ):
        exploitability(g, np.zeros((0, 2), dtype=int), np.array([0, 2]))


@pytest.mark.parametrize("player", [0, 1])
def test_best_response_names_itself_on_an_empty_batch(player: int) -> None:
    g = random_zero_sum_markov_game(2, 3, 2, 2, 0.9, batch_shape=(2, 0))
    with pytest.raises(
        ValueError, match=r"^best_response: the batch is empty \(batch_shape \(2, 0\)"
    ):
        best_response(g, np.zeros((2, 0, 3), dtype=int), player=player)


def test_nonempty_batches_are_unchanged() -> None:
    # the check refuses only empty batches: a batch of 2 still gives one gap per game, and
    # a pure (matching) pair in one-state games has the gap of the direct computation
    g = random_zero_sum_markov_game(3, 1, 2, 2, 0.0, batch_shape=(2,))
    mu, nu = np.zeros((2, 1), dtype=int), np.zeros((2, 1), dtype=int)
    gap = exploitability(g, mu, nu).gap
    R = np.asarray(g.R)[:, 0]  # (2, A, B), γ = 0: gap = max_a R[a, 0] − min_b R[0, b]
    np.testing.assert_allclose(gap, R[:, :, 0].max(-1) - R[:, 0, :].min(-1), rtol=0, atol=1e-15)


# An undiscounted general-sum game (gamma=None) was refused with "this routine needs a
# discounted game", naming no routine; best_response and nash_conv now name themselves.
def _undiscounted_dilemma() -> MarkovGame:
    U = np.array([[[3.0, 0.0], [5.0, 1.0]], [[3.0, 5.0], [0.0, 1.0]]])
    return MarkovGame(np.ones((1, 2, 2, 1)), U[:, None], None)


def test_best_response_names_itself_on_an_undiscounted_game() -> None:
    with pytest.raises(ValueError, match=r"^best_response needs a discounted game .*gamma=None"):
        best_response(_undiscounted_dilemma(), [np.array([0]), np.array([0])], player=0)


def test_nash_conv_names_itself_on_an_undiscounted_game() -> None:
    with pytest.raises(ValueError, match=r"^nash_conv needs a discounted game .*gamma=None"):
        nash_conv(_undiscounted_dilemma(), [np.array([0]), np.array([0])])


def test_discounted_general_sum_is_unchanged() -> None:
    # prisoner's dilemma at γ = 0.9, both cooperating: each gains (5 − 3)/(1 − 0.9) = 20
    g = MarkovGame(np.ones((1, 2, 2, 1)), _undiscounted_dilemma().R, 0.9)
    assert float(nash_conv(g, [np.array([0]), np.array([0])])) == pytest.approx(40.0, rel=1e-14)
    assert best_response(g, [np.array([0]), np.array([0])], player=1).V.tolist() == pytest.approx(
        [50.0], rel=1e-14
    )
