"""Ragged Python lists are refused by name: numpy's own error ("setting an array element with a
sequence. The requested array has an inhomogeneous shape ...") named neither the argument nor
the rule. Each reader now raises ``ValueError`` "<field> must be a rectangular array of numbers;
got a ragged sequence ..." (the form of rltheory.bounds._argcheck._real_entries)."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory._validate import as_action_table, as_distribution, as_policy_array, as_real_array
from rltheory.algorithms.marlhf import marlhf_equilibrium
from rltheory.backend import as_float
from rltheory.games.correlated import cce_gap, ce_gap, max_welfare_ce
from rltheory.mdp import FiniteMDP
from rltheory.mdp.offline_data import sample_game_episodes, sample_preferences
from rltheory.mdp.structure import chain_structure
from rltheory.mdp.transition_data import TransitionDataset, sample_transition_dataset

RAGGED = [[1.0], [0.5, 0.5]]


def _msg(field: str) -> str:
    return rf"^{field} must be a rectangular array of numbers; got a ragged sequence [(\[]"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: as_float(RAGGED, np, field="R"), "R"),
        (lambda: as_float(tuple(RAGGED), field="R"), "R"),
        (lambda: as_real_array(RAGGED, "rho", (2,), ("s",), np), "rho"),
        (lambda: as_distribution([0.5, [0.5]], "rho", 2, np), "rho"),
        (lambda: as_action_table(RAGGED, "Q"), "Q"),
        (lambda: as_policy_array(RAGGED, 2, 2, np, np.float64, field="behaviour"), "behaviour"),
        (lambda: chain_structure(RAGGED), "P"),
    ],
)
def test_shared_readers_name_a_ragged_list(call, field):
    with pytest.raises(ValueError, match=_msg(field)):
        call()


def test_rectangular_lists_read_as_before():
    # the same float64 arrays as numpy's cast of the list
    assert as_real_array([[1, 2], [3, 4]], "x", (2,), ("s",), np).tolist() == [
        [1.0, 2.0],
        [3.0, 4.0],
    ]
    assert chain_structure([[0.0, 1.0], [1.0, 0.0]]).periods == (2,)


@pytest.mark.parametrize("f", ["states", "actions", "rewards", "next_states"])
def test_transition_dataset_names_a_ragged_field(f):
    kw = dict(states=[0, 1], actions=[0, 0], rewards=[0.0, 1.0], next_states=[1, 0])
    kw[f] = [0, [1]]
    with pytest.raises(ValueError, match=_msg(rf"TransitionDataset\.{f}")):
        TransitionDataset(S=2, A=1, **kw)


def test_sample_transition_dataset_names_a_ragged_nu():
    mdp = FiniteMDP(np.full((2, 1, 2), 0.5), np.zeros((2, 1)), gamma=0.5)
    with pytest.raises(ValueError, match=_msg("nu")):
        sample_transition_dataset(mdp, [[1.0], []], 3, rng=0)
    with pytest.raises(ValueError, match=_msg("nu")):
        sample_transition_dataset(mdp, ([1.0], []), 3, rng=0)


def test_correlated_readers_name_ragged_payoffs_and_mu():
    U = [[[1.0, 0.0], [0.0]], [[0.0, 1.0], [1.0, 0.0]]]
    mu = [[0.5, 0.0], [0.0, 0.5]]
    with pytest.raises(ValueError, match=_msg("U")):
        ce_gap(U, mu)
    with pytest.raises(ValueError, match=_msg("U")):
        max_welfare_ce(U)
    good = [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]]
    with pytest.raises(ValueError, match=_msg("mu")):
        cce_gap(good, [[0.5, 0.0], [0.5]])
    assert ce_gap(good, mu) <= 1e-15  # a coordination game's diagonal mix is a CE


def test_marlhf_names_ragged_p_mu_and_candidates():
    H, S, A1, A2 = 1, 2, 2, 2
    rng = np.random.default_rng(0)
    P = rng.random((H, S, A1, A2, S))
    P /= P.sum(-1, keepdims=True)
    R = rng.random((2, H, S, A1, A2))
    beh = np.full((H, S, A1, A2), 0.25)
    t1, t2 = (sample_game_episodes(P, R, beh, 2, rng=k) for k in (1, 2))
    prefs = sample_preferences(t1, t2, R, rng=3)
    ragged_P = P.tolist()
    ragged_P[0][1][1][1] = [0.5]
    with pytest.raises(ValueError, match=_msg("P")):
        marlhf_equilibrium(prefs, ragged_P, [beh], beta=0.0)
    with pytest.raises(ValueError, match=_msg("mu")):
        marlhf_equilibrium(prefs, P, [beh], mu=[0.5, [0.5]], beta=0.0)
    cand = beh.tolist()
    cand[0][0][1] = [0.25]
    with pytest.raises(ValueError, match=_msg(r"candidates\[1\]")):
        marlhf_equilibrium(prefs, P, [beh, cand], beta=0.0)


def test_bimatrix_solvers_and_episode_datasets_name_a_ragged_argument():
    # these readers went through to_numpy/np.asarray before the shared check and raised numpy's
    # "inhomogeneous shape" error (reported by helper-54)
    import rltheory.games as g
    from rltheory.mdp import EpisodeDataset

    ragged = [[1.0], [0.5, 0.5]]
    with pytest.raises(
        ValueError, match=r"^A must be a rectangular array of numbers; got a ragged sequence"
    ):
        g.nash_equilibria(ragged, [[1.0, 1.0], [0.5, 0.5]])
    with pytest.raises(ValueError, match=r"^B must be a rectangular array of numbers"):
        g.lemke_howson([[1.0, 1.0], [0.5, 0.5]], ragged)
    with pytest.raises(
        ValueError, match=r"^EpisodeDataset\.states must be a rectangular array of numbers"
    ):
        EpisodeDataset([[0, 1], [0]], [[0, 0], [0, 0]], [[1.0, 1.0], [1.0, 1.0]], S=2, A=1)
    with pytest.raises(
        ValueError, match=r"^EpisodeDataset\.rewards must be a rectangular array of numbers"
    ):
        EpisodeDataset(np.zeros((1, 2), int), np.zeros((1, 1), int), [[1.0], [1.0, 2.0]], S=2, A=1)
