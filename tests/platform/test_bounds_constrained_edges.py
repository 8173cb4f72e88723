"""Edge cases of the constrained-MDP bounds (``rltheory.bounds.constrained``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.bounds import constrained as con

_NPG_PD = {"gamma": 0.5, "eta1": 1.0, "eta2": 0.1, "Lambda": 4.0, "n_actions": 2}


@pytest.mark.parametrize("G", [[], np.zeros(0), np.zeros((1, 0))[0]])
def test_npg_pd_bounds_without_constraints_is_named(G):
    # cost_deviation=[] failed in numpy with "zero-size array to reduction operation maximum"
    with pytest.raises(
        ValueError,
        match=r"^cost_deviation must have one entry per constraint \(at least one\); got an empty array$",
    ):
        con.npg_pd_bounds([1, 2], cost_deviation=G, **_NPG_PD)


def test_truncation_envelope_at_huge_kappa_is_zero_without_a_warning():
    # c φ^(2κ) with κ = 1e308: 2κ overflowed with "overflow encountered in multiply"; the
    # envelope is the limit φ^inf = 0 (exact), and finite κ entries are unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = con.truncation_envelope([1.0, 1e308], phi=0.5, c=2.0)
    assert out.tolist() == [0.5, 0.0]
