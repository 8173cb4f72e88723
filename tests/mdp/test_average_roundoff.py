"""Average-reward certificates count round-off: RVI's Odoni bounds, unichain PI's and the LP's gap.

The models are the probe's random ones (seeded), in float32 or float64 and at reward scales up to
1e6. The reference gain is computed independently and more accurately: every deterministic policy's
stationary distribution in float64 on the row-normalised arrays (the model the certificates are
about), ``g* = max_π μ_πᵀ r_π``.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from rltheory.errors import ConvergenceWarning
from rltheory.mdp import (
    FiniteMDP,
    relative_value_iteration,
)


def _probe_model(seed: int, dtype: type, scale: float) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    S, A = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    P = rng.dirichlet(np.ones(S), size=(S, A))
    R = rng.uniform(size=(S, A))
    P, R = P.astype(dtype), (R * scale).astype(dtype)
    P = (P / P.sum(-1, keepdims=True)).astype(dtype)
    return FiniteMDP(P, R, gamma=None)


def _reference_gains(mdp: FiniteMDP) -> tuple[float, dict[tuple[int, ...], float]]:
    """``g*`` and every deterministic policy's gain, float64 on the row-normalised model (P > 0)."""
    P = np.asarray(mdp.P, dtype=np.float64)
    P = P / P.sum(-1, keepdims=True)
    R = np.asarray(mdp.R, dtype=np.float64)
    S, A = R.shape
    gains = {}
    for pi in itertools.product(range(A), repeat=S):
        Ppi = P[np.arange(S), list(pi)]
        M = np.eye(S) - Ppi.T
        M[-1] = 1.0
        mu = np.linalg.solve(M, np.r_[np.zeros(S - 1), 1.0])
        gains[pi] = float(mu @ R[np.arange(S), list(pi)])
    return max(gains.values()), gains


def _policy(res) -> tuple[int, ...]:
    return tuple(int(a) for a in np.asarray(res.policy))


def test_rvi_bound_counts_roundoff_of_the_computed_odoni_bounds():
    # float32, S = 3, A = 1, rewards ~1e6, tol 1e-6: the computed T h − h reached a rounding fixed
    # point with sp(Δ) = 0, and RVI returned converged=True, bound 0 while |gain − g*| = 0.0015.
    # The bound now adds the round-off of the computed Δ; tol is below that floor, so the run
    # stops unconverged with a warning naming the floor, and its bound still holds.
    mdp = _probe_model(2, np.float32, 1e6)
    g_star, gains = _reference_gains(mdp)
    with pytest.warns(ConvergenceWarning, match="round-off floor"):
        res = relative_value_iteration(mdp, tol=1e-6, max_iter=5000)
    assert not res.converged and res.iterations < 5000
    bound = float(res.bound)
    assert abs(float(res.gain) - g_star) <= bound / 2
    assert g_star - gains[_policy(res)] <= bound


@pytest.mark.parametrize("seed, dtype, scale", [(s, np.float32, (1.0, 100.0, 1e6)[s % 3]) for s in range(12)]
                         + [(s, np.float64, (1.0, 1e6, 1e9)[s % 3]) for s in range(12)])
def test_rvi_bound_holds_on_random_models(seed, dtype, scale):
    mdp = _probe_model(seed, dtype, scale)
    g_star, gains = _reference_gains(mdp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = relative_value_iteration(mdp, tol=1e-12 * scale, max_iter=5000)
    bound = float(res.bound)
    assert abs(float(res.gain) - g_star) <= bound / 2
    assert g_star - gains[_policy(res)] <= bound
