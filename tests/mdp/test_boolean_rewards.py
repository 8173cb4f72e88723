"""Observed rewards are numbers: boolean reward arrays are refused by the datasets.

``EpisodeDataset(states, actions, np.array([[True]]), S=1, A=1).rewards`` was ``[[1.0]]``
(reported by helper-44): a mask passed by mistake became rewards without a word.
"""

import numpy as np
import pytest

from rltheory.mdp import EpisodeDataset
from rltheory.mdp.transition_data import TransitionDataset


@pytest.mark.parametrize("rewards", [np.array([[True]]), [[True]], [[np.bool_(False)]]])
def test_episode_dataset_refuses_boolean_rewards(rewards):
    with pytest.raises(
        TypeError, match=r"^EpisodeDataset\.rewards must hold real numbers; got booleans"
    ):
        EpisodeDataset(np.zeros((1, 2), int), np.array([[0]]), rewards, S=1, A=1)


def test_transition_dataset_refuses_boolean_rewards():
    with pytest.raises(
        TypeError, match=r"^TransitionDataset\.rewards must hold real numbers; got booleans"
    ):
        TransitionDataset([0], [0], np.array([True]), [0], S=1, A=1)


def test_numeric_rewards_are_kept():
    d = EpisodeDataset(np.zeros((1, 2), int), np.array([[0]]), np.array([[1.0]]), S=1, A=1)
    assert np.asarray(d.rewards).tolist() == [[1.0]]
    d = EpisodeDataset(
        np.zeros((1, 2), int), np.array([[0]]), np.array([[True]]).astype(float), S=1, A=1
    )
    assert np.asarray(d.rewards).tolist() == [[1.0]]
