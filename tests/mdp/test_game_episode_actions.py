"""sample_game_episodes records the joint actions it sampled.

Regression: the joint indices were split into players' actions by ``np.unravel_index`` on the
``(K, H)`` index array, for which numpy 2.4.6 returns wrong coordinates (e.g. ``K = 40000``,
``H = 1``): the recorded actions no longer matched the sampled rewards, and the counts of a
uniform behaviour policy came out 10301/2034/17442/10223 instead of ~10000 each.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp.offline_data import _joint_actions, sample_game_episodes


@pytest.mark.parametrize("K, H", [(40000, 1), (3000, 3)])
def test_recorded_actions_reproduce_the_mean_rewards(K: int, H: int) -> None:
    # mean rewards are deterministic functions of (h, s, a_1, a_2): every recorded reward must be
    # R[i, h, s, a_1, a_2] at the recorded state and actions, exactly
    S, acts = 1, (2, 2)
    P = np.ones((H, S) + acts + (S,))
    R = np.arange(2 * H * S * 4, dtype=float).reshape((2, H, S) + acts)  # all entries distinct
    beh = np.full((H, S) + acts, 0.25)
    d = sample_game_episodes(P, R, beh, K, rng=0)
    a1, a2 = d.actions[..., 0], d.actions[..., 1]
    h = np.broadcast_to(np.arange(H), (K, H))
    s = d.states[:, :H]
    for i in range(2):
        np.testing.assert_array_equal(d.rewards[..., i], R[i, h, s, a1, a2])
    counts = np.bincount((2 * a1 + a2).ravel(), minlength=4)
    # uniform over 4 joint actions: each count within 5 standard deviations of K H / 4
    assert np.all(np.abs(counts - K * H / 4) <= 5 * np.sqrt(K * H * 0.25 * 0.75)), counts


def test_joint_actions_is_the_c_order_inverse_of_the_joint_index() -> None:
    acts = (3, 1, 4, 2)
    ja = np.arange(24).reshape(6, 4)
    out = _joint_actions(ja, acts)
    assert out.shape == (6, 4, 4)
    np.testing.assert_array_equal(np.ravel_multi_index(tuple(np.moveaxis(out, -1, 0)), acts), ja)
