"""offline_game_gap_rate refuses C_uni below 1, as lcb_vi_rate refuses C_star below 1.

Regression (helper-82's open item): C_uni = 0 returned 0.0, a claim that NashConv <= 0, and any
C_uni in (0, 1) returned a rate below the C_uni = 1 rate. For a data law rho_h that sums to 1 per
step (which the rate's derivation uses) max d/rho >= sum d/sum rho = 1, so such values only come
from unnormalised weights. Values below 1 by their dtype's rounding still count as exactly 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.bounds.offline_rates import offline_game_gap_rate


@pytest.mark.parametrize("C", [0.0, 0.5, 1.0 - 1e-6, np.float64(0.9)])
def test_coverage_below_one_is_refused(C):
    with pytest.raises(ValueError, match=r"C_uni must be >= 1 \(a concentrability coefficient\)"):
        offline_game_gap_rate(C, 1, (1, 1), 1, 100, 0.5)


def test_rounding_below_one_counts_as_one_and_inf_stays_inf():
    one = offline_game_gap_rate(1.0, 1, (1, 1), 1, 100, 0.5)
    assert one == pytest.approx(8.0 * math.sqrt(math.log(16.0) / 100), rel=1e-14)
    assert offline_game_gap_rate(1.0 - 1e-9, 1, (1, 1), 1, 100, 0.5) == one
    assert offline_game_gap_rate(np.float32(0.99999988), 1, (1, 1), 1, 100, 0.5) == one
    assert offline_game_gap_rate(math.inf, 1, (1, 1), 1, 100, 0.5) == math.inf
