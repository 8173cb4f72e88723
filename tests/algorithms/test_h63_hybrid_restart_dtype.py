"""hybrid_npg's restart distributions are checked in their own float dtype."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.offline import hybrid_npg
from rltheory.mdp import FiniteHorizonMDP


def _model() -> FiniteHorizonMDP:
    return FiniteHorizonMDP.stationary(np.full((7, 2, 7), 1 / 7), np.zeros((7, 2)), H=2)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_uniform_restart_of_any_float_dtype_is_accepted(dtype):
    # float16 1/7 = 0.1428: the row sums to 0.99976, within check_probability's float16 tolerance;
    # as_float cast it to float64 first and it was refused ('restart[h, :] must sum to 1 (atol=1e-08)')
    nu = np.full((2, 7), 1 / 7, dtype=dtype)
    res = hybrid_npg(
        _model(), np.ones((7, 2, 1)), None, iterations=2, n_online=4, eta=1.0, rng=0, restart=nu
    )
    # zero rewards: every policy is optimal, suboptimality 0 at every iterate
    np.testing.assert_array_equal(res.trace["suboptimality"], np.zeros(3))
    assert res.trace["online_samples"][-1] > 0


def test_a_restart_row_off_the_simplex_is_still_refused():
    nu = np.full((2, 7), 1 / 7, dtype=np.float16)
    nu[1, 0] = 0.5
    with pytest.raises(ValueError, match=r"restart\[h, :\] must sum to 1.*\(h=1\)"):
        hybrid_npg(
            _model(), np.ones((7, 2, 1)), None, iterations=1, n_online=4, eta=1.0, rng=0, restart=nu
        )
