"""A single distribution that does not sum to 1 is reported without an empty location.

An unbatched ``mu`` summing to 1.2 read "each mu[:] must sum to 1 (atol=1e-08); worst row () sums
to 1.2": a "worst row" out of one, located at ``()``.
"""

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP


def _mdp(mu):
    return FiniteMDP(np.full((2, 1, 2), 0.5), np.zeros((2, 1)), 0.9, mu=mu)


def test_one_distribution_reads_as_it_sums():
    with pytest.raises(
        InvalidModelError, match=r"^each mu\[:\] must sum to 1 \(atol=1e-08\); it sums to 1\.2$"
    ):
        _mdp(np.array([0.6, 0.6]))


def test_batched_distributions_still_name_the_worst_row():
    P = np.full((3, 2, 1, 2), 0.5)
    mu = np.array([[0.5, 0.5], [0.6, 0.6], [0.5, 0.49]])
    with pytest.raises(InvalidModelError, match=r"worst row \(batch=\(1,\)\) sums to 1\.2"):
        FiniteMDP(P, np.zeros((3, 2, 1)), 0.9, mu=mu)
