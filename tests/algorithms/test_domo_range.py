"""DoMo-VI refuses models whose ``Q*`` leaves the float range, as the exact discounted solvers do.

Regression: with rewards 1e308 at γ = 0.9 (``Q* ≈ 1e309``, beyond float64) ``domo_vi`` ran its 100
iterations on the scaled inputs, warned ``ConvergenceWarning`` and returned ``Q = inf`` with a finite
trace bound (3e304); with a finite reference ``Q_star`` the bound was ``inf``. Now the located
``ValueError`` of :func:`rltheory.mdp.bellman._check_in_range` (see tests/mdp/test_solver_range.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms import domo_vi
from rltheory.mdp import FiniteMDP, policy_iteration

P2 = np.full((2, 2, 2), 0.5)
R2 = np.array([[1e308, 0.0], [0.0, 1e308]])
SETTINGS = [{}, {"n_improve": 2, "m_eval": 2, "lam": 0.5}, {"lam": 0.0}]


@pytest.mark.parametrize("kw", SETTINGS)
@pytest.mark.parametrize("start", ["default", "Q0", "Q_star"])
def test_q_star_beyond_the_float_range_is_refused(kw, start):
    starts = {"Q0": {"Q0": np.zeros((2, 2))}, "Q_star": {"Q_star": np.zeros((2, 2))}}
    extra = starts.get(start, {})
    with (
        pytest.raises(
            ValueError,
            match=r"domo_vi: Q(\*|_\d+) left the float64 range: max\|R\| = 1e\+308 at gamma = 0.9",
        ),
        warnings.catch_warnings(),
    ):
        # the located error, not a ConvergenceWarning or a numpy warning first
        warnings.simplefilter("error")
        domo_vi(FiniteMDP(P2, R2, 0.9), **kw, **extra)


def test_the_batch_index_of_the_instance_beyond_the_range_is_named():
    batch = FiniteMDP(np.stack([P2, P2]), np.stack([R2 * 1e-10, R2]), 0.9)
    with pytest.raises(ValueError, match=r"left the float64 range \(batch index \(1,\)\)"):
        domo_vi(batch)


@pytest.mark.parametrize("kw", SETTINGS)
def test_q_star_inside_the_range_is_solved(kw):
    # R / 64: the optimal policy earns 1e308/64 at every step, so V* = 1.5625e306/(1 − 0.9) = 1.5625e307 and
    # Q*(s, a) = r(s, a) + 0.9 V* (in range); DoMo-VI agrees with policy iteration to rounding
    mdp = FiniteMDP(P2, R2 / 64, 0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = domo_vi(mdp, tol=1e294, iterations=1000, **kw)
    assert res.converged and np.all(np.isfinite(res.Q))
    np.testing.assert_allclose(res.Q, policy_iteration(mdp).Q, rtol=1e-12)
    np.testing.assert_allclose(res.Q.max(-1), 1.5625e307, rtol=1e-12)
