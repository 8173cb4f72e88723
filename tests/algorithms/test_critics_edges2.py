"""Edge cases of the linear critics, second round: values at the ends of the float range, TD matrices
singular to rounding for an off-policy weighting, feature maps at extreme widths and ranges, and
inputs that are not real arrays. Each test is checked against a closed form or exact rational
arithmetic and fails on the code before its fix."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms.critics import (
    projected_fixed_point,
    td_linear,
    weighted_norm,
)
from rltheory.bounds.policy_optimization import td_fixed_point_bound
from rltheory.mdp import FiniteMDP


def _cycle(r: float, gamma: float = 0.5) -> FiniteMDP:
    """Deterministic 2-cycle 0 -> 1 -> 0 with rewards (r, 0): V = (r, γr)/(1 − γ²), d = (1/2, 1/2)."""
    return FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[r], [0.0]]), gamma=gamma)


# ------------------------------------------------------------------------------ weighted norms at the float range


@pytest.mark.parametrize("r", [1e-300, 1e-200, 1e200, 1e300])
def test_fixed_point_errors_scale_with_the_rewards(r):
    # Constant feature, γ = 1/2: V = (4r/3, 2r/3), θ* = r (A = (1 − γ), b = r/2), and the D-projection
    # of V is its mean r too, so error = projection_error = ‖(r/3, −r/3)‖_D = r/3 exactly in the reals.
    # The norm squared the differences: 0 below |x| ~ 1e-154 (and the TvR bound computed from it, 0,
    # was below the exact error r/3) and inf above 1e154.
    fp = projected_fixed_point(_cycle(r), np.array([0, 0]), np.ones((2, 1)))
    exact = float(Fraction(r) / 3)
    assert fp.error == pytest.approx(exact, rel=1e-14)
    assert fp.projection_error == pytest.approx(exact, rel=1e-14)
    assert float(td_fixed_point_bound(fp.projection_error, gamma=0.5, lam=0.0)) >= exact
    x = np.array([r, -r / 2])  # ‖x‖_D with d = (1/4, 3/4): r·√(1/4 + 3/16) = r·√7/4
    assert float(weighted_norm(x, np.array([0.25, 0.75]))) == pytest.approx(r * np.sqrt(7) / 4, rel=1e-14)


def test_td_linear_errors_do_not_overflow_at_large_values():
    # θ_0 = 0 with a constant feature: the first recorded error is ‖Φθ*‖_D = θ* = r (see above), finite.
    r = 1e200
    res = td_linear(_cycle(r), np.array([0, 0]), np.ones((2, 1)), steps=2, step_size=0.5, rng=0)
    assert res.trace["error"][0, 0] == pytest.approx(r, rel=1e-14)
    assert np.all(np.isfinite(res.trace["error"]))
