"""marlhf_equilibrium returns the policy it certified, as its own array.

A float32 candidate whose rows sum to 1 − 1.2e-7 (within float32's row tolerance) is accepted and
its rows are divided by their sums before its gap UCB is computed; the result's ``policy`` was
nevertheless the float64 copy of the candidate as given, rows 1 − 1.2e-7, which
``equilibrium_gap`` (float64's 1e-8 rule) refused: "policy[h=0, s=0] must be a distribution".
The returned policy is now the normalised one, and its exact gap is that of the candidate. A
float64 candidate came back as the caller's own array (``np.asarray``), so editing it afterwards
changed the result; it is now a copy.
"""

from __future__ import annotations

import numpy as np

from rltheory.algorithms.marlhf import marlhf_equilibrium
from rltheory.algorithms.offline_games import equilibrium_gap
from rltheory.mdp.offline_data import sample_game_episodes, sample_preferences


def _prefs():
    # a coordination game (one state, one step); uniform behaviour
    P = np.ones((1, 1, 2, 2, 1))
    R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    t1, t2 = (sample_game_episodes(P, R, np.full((1, 1, 2, 2), 0.25), 300, rng=s) for s in (0, 1))
    return P, R, sample_preferences(t1, t2, R, rng=2)


def test_float32_candidate_is_returned_as_the_certified_normalised_policy():
    P, R, prefs = _prefs()
    u32 = np.full((1, 1, 2, 2), 0.25, dtype=np.float32) / np.float32(1.0000001)
    assert abs(float(u32.sum(dtype=np.float64)) - 1.0) > 1e-8  # off at float64's rule
    for beta in (0.0, 0.5):
        res = marlhf_equilibrium(prefs, P, [u32], beta=beta)
        assert res.policy.dtype == np.float64
        assert abs(float(res.policy.sum()) - 1.0) <= 4e-16
        # uniform play in this game: against a uniform opponent every action pays 1/2, the
        # uniform value, so no deviation gains (gap 0); the candidate as given has the same gap
        assert abs(equilibrium_gap(P, R, res.policy)) <= 1e-12
        assert abs(equilibrium_gap(P, R, res.policy) - equilibrium_gap(P, R, u32)) <= 1e-6


def test_returned_policy_is_not_the_callers_array():
    P, _, prefs = _prefs()
    cand = np.eye(4)[0].reshape(1, 1, 2, 2)
    res = marlhf_equilibrium(prefs, P, [cand], beta=0.0)
    np.testing.assert_array_equal(res.policy, cand)
    cand[...] = 0.25  # the caller's later edit does not change the result
    assert res.policy[0, 0, 0, 0] == 1.0
