"""Certificates of the exact policy-optimisation drivers at adversarial scales, against exact rationals.

Each certificate is an upper bound on an exact quantity of the model it is about (the stored ``P``
with its rows normalised, the policy with its rows normalised): ``evaluation_bound ≥ ‖V_t − V^{π_t}‖∞``
and ``suboptimality_bound ≥ V*(ρ) − V^{π_t}(ρ)``. The references are rational
(:func:`rltheory.testing.exact_policy_values`); ``V*`` is the best of the deterministic policies.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms._policy_opt import evaluation_error
from rltheory.algorithms.policy_gradient import (
    natural_policy_gradient,
    projected_policy_gradient,
    softmax_policy_gradient,
)
from rltheory.algorithms.policy_mirror_descent import pmd_euclidean_step, policy_mirror_descent
from rltheory.mdp import FiniteMDP, evaluate_policy
from rltheory.mdp.discounted import _Roundoff
from rltheory.testing import exact_optimal_values, exact_policy_values


def _exact_gap(P: np.ndarray, R: np.ndarray, gamma: float, pi: np.ndarray) -> Fraction:
    """``V*(ρ) − V^π(ρ)`` for the uniform ``ρ`` (every driver's default ``μ``)."""
    v_star = exact_optimal_values(P, R, gamma)
    v = exact_policy_values(P, R, gamma, pi)
    return sum((x - y for x, y in zip(v_star, v, strict=True)), Fraction(0)) / len(v)


# A one-state float32 model with subnormal rewards (float32's smallest normal number is 1.2e-38);
# the bit patterns make the rewards exact: (6.8385e-41, 2.9190e-41, 4.5489e-41).
_SUBNORMAL_R = np.array([[48801, 20831, 32462]], dtype=np.int32).view(np.float32)
_ONE_STATE_P = np.ones((1, 3, 1), dtype=np.float32)


def test_evaluation_error_counts_underflow() -> None:
    # The uniform policy's value is (r1 + r2 + r3)/3/(1 − γ) = 9.5376e-41; computed in float32 it is
    # 1.9e-45 (one subnormal spacing, 1.4e-45, and more) off, while every relative round-off term
    # of the certificate is ~u·1e-40 = 6e-48 and rounds to 0: the old bound was 0.
    mdp = FiniteMDP(_ONE_STATE_P, _SUBNORMAL_R, 0.5)
    pi = np.full((1, 3), 1.0 / 3.0, dtype=np.float32)
    V = evaluate_policy(mdp, pi)
    exact = exact_policy_values(_ONE_STATE_P, _SUBNORMAL_R, 0.5, pi)[0]
    err = abs(Fraction(float(V[0])) - exact)
    assert err > 0
    bound = float(evaluation_error(mdp, pi, V, _Roundoff(mdp)))
    assert Fraction(bound) >= err


_DRIVERS = {
    "npg": functools.partial(natural_policy_gradient, eta=1.0),
    "softmax_pg": functools.partial(softmax_policy_gradient, eta=1.0),
    "projected_pg": functools.partial(projected_policy_gradient, eta=1.0),
    "pmd_kl": functools.partial(policy_mirror_descent, step_sizes=1.0),
    "pmd_euclidean": functools.partial(policy_mirror_descent, step_sizes=1.0, update=pmd_euclidean_step),
}


@pytest.mark.parametrize("name", sorted(_DRIVERS))
@pytest.mark.parametrize("batch", [1, 8])
def test_suboptimality_bound_covers_the_exact_gap_at_subnormal_rewards(name: str, batch: int) -> None:
    # At the uniform π_0 the exact gap is (r1 − V^π)/1 = 4.1393e-41; the computed one is a few
    # subnormal spacings lower and the old certificate added nothing to it (bound 4.1392e-41,
    # true/bound 1.00004). batch=8 runs NPG's warm evaluator (WarmEvaluator._allowance).
    P = np.broadcast_to(_ONE_STATE_P, (batch,) + _ONE_STATE_P.shape)
    R = np.broadcast_to(_SUBNORMAL_R, (batch,) + _SUBNORMAL_R.shape)
    mdp = FiniteMDP(P if batch > 1 else P[0], R if batch > 1 else R[0], 0.5)
    res = _DRIVERS[name](mdp, iterations=0)
    pi = np.asarray(res.policy, dtype=np.float64).reshape(batch, 1, 3)
    bound = np.asarray(res.trace["suboptimality_bound"][-1], dtype=np.float64).reshape(batch)
    for i in range(batch):
        gap = _exact_gap(_ONE_STATE_P[:, :, :].astype(np.float64), _SUBNORMAL_R.astype(np.float64), 0.5, pi[i])
        assert gap > 0
        assert Fraction(float(bound[i])) >= gap, (name, i, float(gap), float(bound[i]))


@pytest.mark.parametrize("batch", [1, 8])
def test_npg_evaluation_bound_counts_underflow(batch: int) -> None:
    # V_star passed in exactly (V* = r1/(1 − γ) = 2·r1, exact in float32), so the computed
    # suboptimality is exactly V* − V_0 (a difference in the subnormal range is exact) and gives
    # the evaluated V_0. Its exact error (1.9e-45) was certified 0 by the residual's old
    # round-off allowance (batch=8: the warm evaluator; 1: its LU path, the same allowance).
    P = np.broadcast_to(_ONE_STATE_P, (batch,) + _ONE_STATE_P.shape)
    R = np.broadcast_to(_SUBNORMAL_R, (batch,) + _SUBNORMAL_R.shape)
    v_star = np.float32(2.0) * _SUBNORMAL_R[:, :1].reshape(1)
    mdp = FiniteMDP(P if batch > 1 else P[0], R if batch > 1 else R[0], 0.5)
    res = natural_policy_gradient(mdp, eta=1.0, iterations=0,
                                  V_star=np.broadcast_to(v_star, mdp.batch_shape + (1,)))
    sub = np.asarray(res.trace["suboptimality"][0], dtype=np.float64).reshape(batch)
    ev = np.asarray(res.trace["evaluation_bound"][0], dtype=np.float64).reshape(batch)
    pi = np.full((1, 3), 1.0 / 3.0)
    exact = exact_policy_values(_ONE_STATE_P, _SUBNORMAL_R, 0.5, pi)[0]
    for i in range(batch):
        V0 = Fraction(float(v_star[0])) - Fraction(float(sub[i]))
        assert abs(V0 - exact) > 0
        assert Fraction(float(ev[i])) >= abs(V0 - exact), (i, float(abs(V0 - exact)), float(ev[i]))


def test_tol_may_be_a_numpy_scalar() -> None:
    # A float32 model's certificate is a np.float32, which is not a Python float: tol=np.float32(...)
    # raised "tol must be None or a number >= 0". Bools and negative values are still refused.
    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=np.float32), np.array([[0.0, 1.0]], dtype=np.float32), 0.5)
    res = natural_policy_gradient(mdp, eta=10.0, iterations=50, tol=np.float32(1e-3))
    assert res.converged is True
    for bad in (True, np.float32(-1.0), "1e-3"):
        with pytest.raises(ValueError, match="tol must be None or a number >= 0"):
            natural_policy_gradient(mdp, eta=1.0, iterations=1, tol=bad)
