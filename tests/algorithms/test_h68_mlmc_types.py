"""mlmc_expectation returns the same types on both sides of its enumeration/doubling switch.

Top levels ``j_max ≤ 16`` enumerate ``νᵀP^k f̄``; beyond, ``P^{2^j}`` is doubled. For a vector
``f̄`` the doubling branch returned ``E[X^{(j_max)}]`` as a 0-d array (``array(0.5)``) where the
enumeration returns a numpy scalar (``np.float64(0.5)``). Reference values: the 2-cycle from state
0 with ``f̄ = (1, 0)`` has ``E x_k = 1{k even}``, so every average over ``2^j ≥ 2`` terms is 1/2.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.average_reward import mlmc_expectation

CYCLE = np.array([[0.0, 1.0], [1.0, 0.0]])


@pytest.mark.parametrize("T_max", [2**16, 2**16 + 5, 2**17, 2**17 + 1, 2**40])
def test_scalar_results_on_both_branches(T_max):
    E_mlmc, E_avg = mlmc_expectation(CYCLE, np.array([1.0, 0.0]), np.array([1.0, 0.0]), T_max)
    for x in (E_mlmc, E_avg):
        assert isinstance(x, np.floating) and not isinstance(x, np.ndarray)
        assert x == 0.5


def test_vector_results_keep_their_shape_on_both_branches():
    f = np.array([[1.0, 2.0], [0.0, -2.0]])
    for T_max in (2**16, 2**17):
        E_mlmc, E_avg = mlmc_expectation(CYCLE, np.array([1.0, 0.0]), f, T_max)
        np.testing.assert_array_equal(E_avg, [0.5, 0.0])
        np.testing.assert_allclose(E_mlmc, [0.5, 0.0], rtol=0, atol=1e-15)
        assert E_avg.shape == E_mlmc.shape == (2,)
