"""backward_induction's value Σ_s μ(s) V_0(s) at the edge of the float range."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.mdp import FiniteHorizonMDP
from rltheory.mdp.horizon import backward_induction


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_value_is_a_convex_combination_of_v0_at_the_float_maximum(xp, dtype):
    # Two absorbing states paying the largest float each, H = 1: V_0 = (M, M), so every
    # distribution mu gives the exact value M. mu = (0.5, 0.5 + 1e-9) is accepted (row sums
    # 1 ± 1e-8), and the float sum 0.5 M + (0.5 + 1e-9) M was inf with an overflow warning.
    dt = getattr(xp, dtype)
    M = float(np.finfo(dtype).max)
    P = xp.asarray(np.array([[[1.0, 0.0]], [[0.0, 1.0]]]), dtype=dt)
    R = xp.asarray(np.array([[M], [M]]), dtype=dt)
    eps = 1e-9 if dtype == "float64" else 1e-7
    cases = (None, np.array([0.5, 0.5 + eps]), np.array([0.3, 0.7]))
    for mu in cases:
        mu_x = None if mu is None else xp.asarray(mu, dtype=dt)
        fh = FiniteHorizonMDP.stationary(P, R, H=1, mu=mu_x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sol = backward_induction(fh)
        assert float(sol.V[0, 0]) == M and float(sol.V[0, 1]) == M
        assert float(sol.value) == M, (mu, float(sol.value))


def test_batched_values_stay_within_their_own_v0():
    # A batch (2, 3) of one-step models with V_0 = (M, M) in instance [1, 2] only: the value of
    # each instance lies in [min V_0, max V_0] of that instance and equals Σ μ V_0 elsewhere.
    M = float(np.finfo(np.float64).max)
    rng = np.random.default_rng(60)
    P = np.broadcast_to(np.array([[[1.0, 0.0]], [[0.0, 1.0]]]), (2, 3, 1, 2, 1, 2))
    R = rng.uniform(-1.0, 1.0, size=(2, 3, 1, 2, 1))
    R[1, 2] = M
    mu = np.broadcast_to(np.array([0.5, 0.5 + 1e-9]), (2, 3, 2))
    sol = backward_induction(FiniteHorizonMDP(P, R, mu))
    assert sol.value.shape == (2, 3)
    assert float(sol.value[1, 2]) == M
    with np.errstate(over="ignore"):  # (instance [1, 2]'s float sum is inf; replaced below)
        want = (mu * R[..., 0, :, 0]).sum(-1)
    want[1, 2] = M
    np.testing.assert_allclose(sol.value, want, rtol=1e-15)
