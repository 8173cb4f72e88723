"""Iteration counts and action counts of the contraction and regret bounds.

* ``shapley_error_bound`` bounds ``‖V_k − V*‖∞`` for whole ``k`` only: ``k = 2.5`` gave
  ``0.177`` (``γ^k`` at ``γ = 1/2``), a bound on no iterate; now a located ``ValueError`` as
  :func:`~rltheory.bounds.vi_error_bound` (the same theorem) gives.
* ``vi_error_bound``'s messages name the first bad entry: a long ``k`` was printed by numpy's
  elided repr, which hides the entry.
* ``regret_matching_gap_bound`` with an action count beyond the float range raised a bare
  ``OverflowError`` (``math.sqrt(10**400)``); its bound is ``inf`` (0 for a constant game).
"""

import numpy as np
import pytest

from rltheory.bounds.games import regret_matching_gap_bound, shapley_error_bound
from rltheory.bounds.mdp import vi_error_bound


@pytest.mark.parametrize(
    ("k", "where"),
    [
        (2.5, r"got 2\.5$"),
        ([0, 1.5], r"k\[1\] = 1\.5$"),
        ([[1, 2], [3, 0.5]], r"k\[1, 1\] = 0\.5$"),
    ],
)
def test_shapley_error_bound_refuses_fractional_iteration_counts(k, where):
    with pytest.raises(ValueError, match=rf"^k must hold integers \(iteration counts\); {where}"):
        shapley_error_bound(k, 0.5, 1.0)


def test_shapley_error_bound_agrees_with_vi_error_bound_on_whole_counts():
    # Shapley's operator and the Bellman optimality operator are both γ-contractions: the same bound
    k = np.arange(0, 40)
    for g in (0.0, 0.5, 0.99):
        assert np.array_equal(shapley_error_bound(k, g, 3.0), vi_error_bound(k, g, 3.0))
    assert shapley_error_bound(np.array([2.0]), 0.5, 4.0).tolist() == [1.0]  # integral floats pass


def test_vi_error_bound_names_the_bad_entry_of_a_long_k():
    k = np.arange(2000.0)
    k[1500] = 0.5
    with pytest.raises(
        ValueError, match=r"(?s)^k must hold finite integers; got array\(.*\) \(k\[1500\] = 0\.5\)$"
    ):
        vi_error_bound(k, 0.5, 1.0)
    k = np.arange(2000)
    k[1700] = -3
    with pytest.raises(
        ValueError, match=r"^k must be non-negative; got min k = -3 \(k\[1700\] = -3\)$"
    ):
        vi_error_bound(k, 0.5, 1.0)


def test_regret_matching_bound_for_an_action_count_beyond_the_float_range():
    assert regret_matching_gap_bound(100, 10**400, 9, 2.0) == np.inf
    assert regret_matching_gap_bound(100, 4, 10**400, 2.0) == np.inf
    assert regret_matching_gap_bound([1, 4], 10**400, 9, 0.0).tolist() == [0.0, 0.0]
    assert regret_matching_gap_bound(100, 4, 9, 2.0) == 1.0  # R (√m + √n)/√t = 2·5/10
