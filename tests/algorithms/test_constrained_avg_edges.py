"""Constrained and average-reward algorithms and bounds outside the ranges the main tests draw from:
cost scales far from 1, extreme but finite bound arguments, located errors."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.constrained import slater_slack
from rltheory.mdp import FiniteMDP
from rltheory.mdp.constrained import ConstrainedMDP, evaluate_cmdp


def _slater_model(seed: int) -> tuple[FiniteMDP, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    S, A = 3, 2
    mdp = FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), 0.9)
    return mdp, rng.random((1, S, A)), np.array([4.5])


# ------------------------------------------------------------------ slater_slack at small cost scales
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("scale", [1e-12, 1e-9])
def test_slater_slack_lp_is_scale_invariant(seed, scale):
    """ξ(ρC, ρb) = ρ ξ(C, b) exactly (the slack is positively homogeneous). A constraint stated twice
    takes the m > 1 LP path; its ξ must equal the m = 1 policy-iteration value (exact at any scale).
    Before the fix the LP ran at the costs' own scale with HiGHS's absolute tolerances and 1e-12
    entry drop: at ρ = 1e-12 it returned ξ/(ρ ξ_1) = 5.7, 2.3, 4.3 (seeds 1-3) and, for seed 0
    (ξ_1 = -1.73, Slater fails), a positive ξ: Slater's condition "held" for a model where it fails."""
    mdp, C, b = _slater_model(seed)
    xi1, _ = slater_slack(ConstrainedMDP(mdp, C, b))  # m = 1: policy iteration
    xi1_scaled, _ = slater_slack(ConstrainedMDP(mdp, scale * C, scale * b))
    assert xi1_scaled == pytest.approx(scale * xi1, rel=1e-12)
    twice = ConstrainedMDP(mdp, np.concatenate([scale * C, scale * C]), np.concatenate([scale * b, scale * b]))
    xi2, pi2 = slater_slack(twice)
    assert xi2 == pytest.approx(scale * xi1, rel=1e-9)
    assert (xi2 > 0) == (xi1 > 0)
    # the returned policy attains the slack: min_i (b_i − V_{c_i}^π) = ξ
    _, costs = evaluate_cmdp(twice, pi2)
    assert float(np.min(scale * b[0] - np.asarray(costs))) == pytest.approx(xi2, rel=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_slater_slack_with_constraints_of_different_scales(seed):
    """Constraint 2 = 1e-12 × constraint 1: min(x, 1e-12 x) is x for x < 0 and 1e-12 x for x > 0, so
    ξ = ξ_1 if ξ_1 < 0 else 1e-12 ξ_1 (both monotone in x, maximised by the same policy)."""
    mdp, C, b = _slater_model(seed)
    xi1, _ = slater_slack(ConstrainedMDP(mdp, C, b))
    mixed = ConstrainedMDP(mdp, np.concatenate([C, 1e-12 * C]), np.concatenate([b, 1e-12 * b]))
    xi, pi = slater_slack(mixed)
    expected = xi1 if xi1 < 0 else 1e-12 * xi1
    assert xi == pytest.approx(expected, rel=1e-9)
    _, costs = evaluate_cmdp(mixed, pi)
    assert float(np.min(np.asarray(mixed.b) - np.asarray(costs))) == pytest.approx(expected, rel=1e-9)
