"""Policy iteration near γ = 1 in float32: its switches decided on accurate advantages.

``Q − V`` carries the rounding of ``V`` (``ε‖V‖∞ ~ ε·max|r|/(1−γ)``) in every entry, and the
default tie tolerance ``64ε‖Q‖∞`` built on it was 7.6 for rewards in ``[0, 1]`` in float32 at
γ = 1 − 2⁻²⁰: policy iteration stopped at policies up to 7 % below ``V*`` (11 of these 30
models; 5 of 30 at γ = 0.9999), ``converged=True`` within a bound of about 10 %. Near γ = 1 it
now switches on the flow-form advantages corrected for ``V``'s rounding
(``bellman._corrected_advantages``). References: ``V*`` and ``V^π`` of the stored float32
model in exact rational arithmetic.
"""

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP, policy_iteration
from rltheory.testing import exact_optimal_values, exact_policy_values


def _models(dtype, gamma):
    for seed in range(30):
        rng = np.random.default_rng(seed)
        P = rng.dirichlet(np.full(4, 0.5), size=(4, 2)).astype(dtype)
        R = rng.uniform(0.0, 1.0, size=(4, 2)).astype(dtype)
        yield seed, P.astype(np.float64), R.astype(np.float64), FiniteMDP(P, R, gamma=gamma)


@pytest.mark.parametrize(
    ("dtype", "gamma"),
    [(np.float32, 0.9999), (np.float32, 1.0 - 2.0**-20), (np.float64, 1.0 - 1e-12)],
)
def test_policy_iteration_finds_the_optimal_policy_near_gamma_one(dtype, gamma):
    for seed, P, R, mdp in _models(dtype, gamma):
        g = float(mdp.gamma)
        sol = policy_iteration(mdp)
        assert sol.converged
        v_star = exact_optimal_values(P, R, g)
        pi = np.zeros((4, 2))
        pi[np.arange(4), np.asarray(sol.policy)] = 1.0
        v_pi = exact_policy_values(P, R, g, pi)
        # optimal exactly (no ties in these models), and the certificate holds
        loss = max(float(a - b) for a, b in zip(v_star, v_pi, strict=True))
        assert loss == 0.0, (seed, loss, float(sol.bound))
        err = max(
            abs(v - Fraction(float(x))) for v, x in zip(v_star, np.asarray(sol.V), strict=True)
        )
        assert err <= Fraction(float(sol.bound)), (seed, float(err), float(sol.bound))
