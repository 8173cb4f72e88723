"""Single-agent offline learners on a one-player game dataset (``A = (A_1,)``).

``EpisodeDataset(..., A=(2,))`` holds actions and rewards of shape ``[K, H, 1]`` with
``n_players == 1``; lcb_vi, pevi and certainty_equivalence accepted it and then failed inside
``bincount`` with numpy's "object too deep for desired array" (the ``[K, 1]`` actions broadcast
against the ``[K]`` states), and a reward outside [0, 1] failed with "too many values to unpack"
while the located message was built. They now read it as the single-agent dataset it is: the
results equal those on the same episodes given with ``A = 2``, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.offline import certainty_equivalence, lcb_vi, pevi
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP
from rltheory.mdp.offline_data import EpisodeDataset, sample_episodes


def _pair(seed: int) -> tuple[EpisodeDataset, EpisodeDataset]:
    rng = np.random.default_rng(seed)
    H, S, A = 2, 3, 2
    fh = FiniteHorizonMDP(rng.dirichlet(np.ones(S), size=(H, S, A)), rng.uniform(size=(H, S, A)))
    d = sample_episodes(fh, np.full((H, S, A), 0.5), 60, rng=rng, rewards="bernoulli")
    game = EpisodeDataset(d.states, d.actions[..., None], d.rewards[..., None], S=S, A=(A,))
    assert game.n_players == 1 and game.actions.shape == (60, H, 1)
    return d, game


@pytest.mark.parametrize("seed", [0, 1])
def test_one_player_game_dataset_gives_the_single_agent_results(seed):
    d, game = _pair(seed)
    phi = np.eye(6).reshape(3, 2, 6)
    for method in (
        lambda x: lcb_vi(x),
        lambda x: lcb_vi(x, bonus="bernstein", split=False),
        lambda x: certainty_equivalence(x),
        lambda x: pevi(x, phi, ridge=1.0),
    ):
        a, b = method(d), method(game)
        for field in ("policy", "Q", "V", "bonus", "counts"):
            np.testing.assert_array_equal(getattr(b, field), getattr(a, field))


def test_one_player_game_dataset_reward_outside_unit_interval_is_located():
    game = EpisodeDataset(
        np.zeros((2, 2), int), np.zeros((2, 1, 1), int), np.array([[[0.5]], [[1.5]]]), S=1, A=(2,)
    )
    with pytest.raises(InvalidModelError, match=r"rewards\[k=1, h=0\] = 1\.5"):
        lcb_vi(game)
