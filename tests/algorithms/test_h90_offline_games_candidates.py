"""gap_relaxation_equilibrium's candidate list: any iterable, and low-precision candidates.

* A generator of candidates failed with Python's bare "object of type 'generator' has no len()"
  (marlhf_equilibrium accepts any iterable); now it is read as a list and gives the same choice.
* A float32 candidate whose rows sum to 1 − 1.2e-7 passes the float32 row-sum rule under its own
  name ``candidates[j]``, but its float64 copy was handed to interval_gap_bound, which judged it
  at float64's 1e-8 and refused it as ``policy[h=0, s=0]``. Its rows are now divided by their
  sums (as marlhf_equilibrium does), so it gives the certificate of the normalised policy.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.offline_games import gap_relaxation_equilibrium, interval_gap_bound
from rltheory.mdp.offline_data import sample_game_episodes


def _data():
    # a coordination game, one state, one step: (0, 0) and (1, 1) pay both players 1
    P = np.ones((1, 1, 2, 2, 1))
    R = np.stack([np.eye(2), np.eye(2)])[:, None, None]
    return sample_game_episodes(P, R, np.full((1, 1, 2, 2), 0.25), 400, rng=3)


def test_generator_of_candidates_is_a_list_of_candidates():
    d = _data()
    cands = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]
    ref = gap_relaxation_equilibrium(d, cands)
    res = gap_relaxation_equilibrium(d, (c for c in cands))
    assert res.candidate == ref.candidate
    np.testing.assert_array_equal(res.candidate_bounds, ref.candidate_bounds)


def test_non_iterable_candidates_are_a_type_error():
    with pytest.raises(TypeError, match="candidates must be a list of joint policies"):
        gap_relaxation_equilibrium(_data(), 3)


def test_float32_candidate_within_float32_tolerance_is_accepted_and_normalised():
    d = _data()
    uniform32 = np.full((1, 1, 2, 2), 0.25, dtype=np.float32) / np.float32(1.0000001)
    assert abs(float(uniform32.sum(dtype=np.float64)) - 1.0) > 1e-8  # off at float64's rule
    res = gap_relaxation_equilibrium(d, [uniform32, np.eye(4)[0].reshape(1, 1, 2, 2)])
    # the uniform candidate's certificate is that of the exactly uniform policy (the union
    # bound over the same two candidates): the normalisation is a relative change of 1.2e-7
    exact = interval_gap_bound(d, np.full((1, 1, 2, 2), 0.25), n_candidates=2)
    assert abs(res.candidate_bounds[0] - exact.gap_bound[0]) <= 1e-12
    # the coordinated pure profile (0, 0) has the smaller certified gap (uniform play leaves
    # each player a deviation gain of 0.5) and is chosen
    assert res.candidate == 1
