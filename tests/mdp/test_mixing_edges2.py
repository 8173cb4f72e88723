"""Edge cases of rltheory.mdp.mixing / structure beyond the earlier rounds: numpy scalars as
arguments, empty batches, exact ties of d(t) with ε (checked in rational arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import (
    FiniteMDP,
    chain_structure,
    classify_mdp,
    limiting_matrix,
    mixing_time,
    stationary_distribution,
    tv_distances,
)


def test_numpy_scalars_and_0d_arrays_as_arguments():
    # np.float32 / 0-d array eps, numpy atol and numpy max_policies were refused as out of range
    P = np.array([[0.75, 0.25], [0.25, 0.75]])  # d(t) = 2^{-t}/2: t_mix(1/4) = 1, t_mix(0.01) = 6
    for eps, t in ((np.float32(0.25), 1), (np.array(0.01), 6), (np.float16(0.01), 6)):
        assert int(mixing_time(P, eps)) == t
    for bad in (True, np.bool_(True), "0.25", np.array([0.25]), np.float32(1.0)):
        with pytest.raises(ValueError, match="eps must lie in"):
            mixing_time(P, bad)
    T = np.array([[1.0, 0.0], [1e-3, 1 - 1e-3]])
    assert chain_structure(T, atol=np.float32(0.01)).recurrent_classes == ((0,), (1,))
    assert chain_structure(T, atol=np.array(0)).transient == (1,)
    mdp = FiniteMDP(np.repeat(T[:, None, :], 2, axis=1), np.zeros((2, 2)), None)  # both actions follow T
    st = classify_mdp(mdp, max_policies=np.int64(4), atol=np.float64(0.01))
    assert st.unichain is False and st.closed_classes == ((0,), (1,))
    assert classify_mdp(mdp, max_policies=np.uint8(4)).unichain is True
    for bad in (np.bool_(True), 0.5, np.int64(0)):
        with pytest.raises(ValueError, match="max_policies must be a positive integer"):
            classify_mdp(mdp, max_policies=bad)


def test_empty_batches_give_empty_results(xp):
    # limiting_matrix, tv_distances and mixing_time crashed with numpy's 'need at least one array to
    # stack' on a batch of shape (0, S, S); stationary_distribution already returned shape (0, S)
    P = xp.asarray(np.zeros((0, 3, 3)))
    assert tuple(limiting_matrix(P).shape) == (0, 3, 3)
    assert tuple(tv_distances(P, 4).shape) == (0, 5)
    assert tuple(mixing_time(P).shape) == (0,)
    assert tuple(stationary_distribution(P).shape) == (0, 3)
    assert tuple(mixing_time(xp.asarray(np.zeros((2, 0, 2, 2)))).shape) == (2, 0)
