"""Generative-model counts at the int64 limit, and their frequencies against ``P`` (chi-square)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rltheory.mdp import FiniteMDP
from rltheory.mdp.sample import empirical_mdp, sample_transitions
from rltheory.mdp.zoo import two_state


@pytest.mark.parametrize("call", [sample_transitions, empirical_mdp])
@pytest.mark.parametrize("n", [2**63, 2**70])
def test_a_count_beyond_int64_is_a_located_error(call, n):
    # Generator.multinomial raised OverflowError "Python int too large to convert to C long"
    with pytest.raises(
        ValueError, match=r"n_per_pair must be at most 2\*\*63 - 1 = 9223372036854775807 "
    ):
        call(two_state(), n, rng=0)


def test_the_largest_int64_count_is_drawn_exactly():
    # every row sums to n; a deterministic row P(0|0, 0) = 1 puts all n on state 0
    n = 2**63 - 1
    N = sample_transitions(two_state(), n, rng=0)
    assert N.dtype == np.int64 and np.all(N.sum(-1) == n) and N[0, 0, 0] == n


def test_float32_counts_fit_the_normalised_rows_at_the_one_in_a_thousand_level():
    # rows of a float32 model miss 1 by ~1e-7; draws follow P/σ. Pearson's statistic per row,
    # df = 3, must stay below its 0.999 quantile / 8 rows (Bonferroni: family level 1e-3)
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(4), size=(4, 2)).astype(np.float32)
    mdp = FiniteMDP(P, np.zeros((4, 2), dtype=np.float32), gamma=0.9)
    n = 200_000
    N = sample_transitions(mdp, n, rng=1)
    Pn = np.asarray(P, dtype=np.float64)
    Pn /= Pn.sum(-1, keepdims=True)
    chi2 = ((N - n * Pn) ** 2 / (n * Pn)).sum(-1)
    assert np.all(chi2 < stats.chi2.ppf(1 - 1e-3 / 8, df=3))
