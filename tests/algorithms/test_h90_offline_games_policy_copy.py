"""interval_gap_bound and gap_relaxation_equilibrium return their own copy of the policy.

``GameOfflineResult.policy`` was the caller's float64 array itself (``_policy_array`` does not
copy), so editing the candidate after the call changed the frozen result: the certificate
``gap_bound`` then described another policy. A float32 policy given to interval_gap_bound directly
(rows 1 − 1.2e-7, within float32's tolerance) is normalised as gap_relaxation_equilibrium's
candidates are, so its result feeds equilibrium_gap (float64's 1e-8 rule) without an error.
"""

from __future__ import annotations

import numpy as np

from rltheory.algorithms.offline_games import (
    equilibrium_gap,
    gap_relaxation_equilibrium,
    interval_gap_bound,
)
from rltheory.mdp.offline_data import sample_game_episodes

P = np.ones((1, 1, 2, 2, 1))
R = np.stack([np.eye(2), np.eye(2)])[:, None, None]


def _data():
    return sample_game_episodes(P, R, np.full((1, 1, 2, 2), 0.25), 200, rng=0)


def test_results_do_not_alias_the_callers_policy():
    d = _data()
    for run in (
        lambda c: interval_gap_bound(d, c),
        lambda c: gap_relaxation_equilibrium(d, [c]),
    ):
        cand = np.eye(4)[0].reshape(1, 1, 2, 2)
        res = run(cand)
        cand[...] = 0.25
        assert res.policy[0, 0, 0, 0] == 1.0


def test_float32_policy_result_is_normalised():
    u32 = np.full((1, 1, 2, 2), 0.25, dtype=np.float32) / np.float32(1.0000001)
    res = interval_gap_bound(_data(), u32)
    assert abs(float(res.policy.sum()) - 1.0) <= 4e-16
    # uniform play in the coordination game: no deviation gains
    assert abs(equilibrium_gap(P, R, res.policy)) <= 1e-12
