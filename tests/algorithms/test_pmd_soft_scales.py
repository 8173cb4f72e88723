"""Scale and range: KL policy mirror descent past the dtype's range and with probabilities that
round to 0; the soft reference Q*_τ (and the traces measured against it) at small reward scales."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from rltheory.algorithms.policy_gradient import softmax_policy_gradient
from rltheory.algorithms.policy_mirror_descent import (
    geometric_step_sizes,
    pmd_kl_step,
    policy_mirror_descent,
)
from rltheory.algorithms.soft import soft_reference, soft_value_iteration
from rltheory.mdp import FiniteMDP, evaluate_policy, policy_iteration
from rltheory.mdp.zoo import random_mdp


def _stay_or_move(dtype):
    """State 0: stay (reward 0.6) or move to state 1 (reward 0); state 1: stay for 1 or for 0.

    γ = 0.9: V*(1) = 1/(1−γ) = 10 and moving is optimal at state 0 (γ·10 = 9 > 0.6/(1−γ) = 6),
    so V* = (9, 10). Under the uniform π_0, V(1) = 5, Q(0, move) = 4.5 and
    V(0) = (0.3 + 2.25)/(1 − 0.45) = 4.636..., Q(0, stay) = 0.6 + 0.9 V(0) = 4.77 > 4.5: the
    first step favours staying by 0.27.
    """
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = 1.0
    P[1, :, 1] = 1.0
    return FiniteMDP(P.astype(dtype), np.array([[0.6, 0.0], [1.0, 0.0]], dtype=dtype), gamma=0.9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kl_pmd_recovers_an_action_whose_probability_rounded_to_zero(dtype):
    # η_k = 10^4·10^k: after step 0, π_1(move|0) ∝ exp(−10^4·0.27) = e^{−2700} > 0 exactly, and
    # step 1 (η = 10^5, Q^{π_1}(0, move) − Q^{π_1}(0, stay) = 9 − 6 = 3) makes moving near-certain:
    # exact PMD is optimal from k = 2. The driver fed the rounded π_1 (with a 0) back to the step,
    # which keeps zeros as outside the support: the run stayed at suboptimality (3 + 0)/2 = 1.5.
    mdp = _stay_or_move(dtype)
    res = policy_mirror_descent(mdp, step_sizes=geometric_step_sizes(1e4, 10.0), iterations=6)
    sub = res.trace["suboptimality"]
    eps = float(np.finfo(dtype).eps)
    tol = 8 * eps * 10 / (1 - 0.9)  # round-off of V* − V^π at ‖V‖∞ = 10
    assert abs(sub[1] - 1.5) <= tol  # π_1: stay at 0 with probability 1 − e^{−2700}
    assert np.all(np.abs(sub[2:]) <= tol), sub
    assert np.argmax(np.asarray(res.policy), axis=-1).tolist() == [1, 0]


def test_kl_pmd_step_past_the_float32_range_is_the_greedy_step():
    # η·Q^π overflowed float32 (η = 1e39 > 3.4e38): ∞ − ∞ = NaN in every entry. For η → ∞ the KL
    # step is the greedy (policy-improvement) step: stay at 0 (4.77 > 4.5), reward 1 at 1.
    mdp = _stay_or_move(np.float32)
    pi = np.asarray(pmd_kl_step(mdp, np.full((2, 2), 0.5, dtype=np.float32), eta=1e39))
    assert pi.dtype == np.float32
    np.testing.assert_array_equal(pi, [[1.0, 0.0], [1.0, 0.0]])


def _float32_model(seed, S, A, scale):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(S, 0.5), size=(S, A)).astype(np.float32)
    R = (scale * rng.uniform(size=(S, A))).astype(np.float32)
    P64 = P.astype(np.float64)
    m64 = FiniteMDP(P64 / P64.sum(-1, keepdims=True), R.astype(np.float64), gamma=0.999)
    return FiniteMDP(P, R, gamma=0.999), m64


@pytest.mark.parametrize(
    ("seed", "S", "A", "scale", "iterations"),
    [
        # η_k = 2^k passes 3.4e38/‖Q‖∞ at k ≈ 117: the step returned NaN and the run raised
        # InvalidModelError("pi must be finite") there
        (0, 3, 2, 10.0, 200),
        # no overflow, but a probability rounded to 0 early: the run ended at a deterministic
        # policy 1.09e6 below optimal (true V*(ρ) − V^π(ρ), float64 on the stored model)
        (47, 5, 3, 1e4, 90),
    ],
)
def test_kl_pmd_on_float32_with_doubling_steps_reaches_the_optimum(seed, S, A, scale, iterations):
    m32, m64 = _float32_model(seed, S, A, scale)
    V_star = np.asarray(policy_iteration(m64).V)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # converged=None (no tol): nothing to warn; keep it quiet anyway
        res = policy_mirror_descent(m32, step_sizes=geometric_step_sizes(1.0, 2.0), iterations=iterations)
    pi = np.asarray(res.policy, dtype=np.float64)
    assert np.all(np.isfinite(pi))
    true = float(np.mean(V_star - np.asarray(evaluate_policy(m64, pi / pi.sum(-1, keepdims=True)))))
    assert true <= float(res.trace["suboptimality_bound"][-1])
    # the last policy is deterministic and optimal: its true gap is 0 up to the float64 evaluation
    assert true <= 64 * np.finfo(np.float64).eps * np.abs(V_star).max() / (1 - 0.999)


# --------------------------------------------------------------------------- soft reference scale
_SCALE = 2.0**-30  # exact in binary: scaling rewards and τ by it scales every computed value exactly


def test_entropy_pg_trace_is_scale_free():
    # Rewards and τ scaled by 2^-30 and η by 2^30: every policy is bit-identical to the unscaled
    # run's and V_τ^π scales exactly, so the traced V*_τ(ρ) − V_τ^π(ρ) must scale too, up to the
    # two references' certified errors. The reference was solved to 1e-12 absolute, i.e. 1e-3 of
    # the unscaled units: the scaled trace was off by 9.7e-4 (the final gap is 0.0174).
    base = random_mdp(5, 3, gamma=0.9, rng=0)
    small = FiniteMDP(base.P, _SCALE * base.R, gamma=0.9)
    tau = 0.1
    r1 = softmax_policy_gradient(base, eta=1.0, tau=tau, iterations=50)
    r2 = softmax_policy_gradient(small, eta=1.0 / _SCALE, tau=tau * _SCALE, iterations=50)
    np.testing.assert_array_equal(np.asarray(r1.theta), np.asarray(r2.theta))
    # |V*_τ − V| ≤ ‖Q − Q*_τ‖∞ (log-sum-exp is 1-Lipschitz), so the traces differ by at most the sum
    # of the two references' bounds (in unscaled units), plus the rounding of two ρ-weighted sums
    b1 = float(soft_reference(base, tau=tau).bound)
    b2 = float(soft_reference(small, tau=tau * _SCALE).bound) / _SCALE
    q_bar = (1 + tau * math.log(3)) / (1 - 0.9)
    diff = np.max(np.abs(r1.trace["suboptimality"] - r2.trace["suboptimality"] / _SCALE))
    assert diff <= b1 + b2 + 16 * np.finfo(np.float64).eps * q_bar
    assert b2 <= 2e-12 * q_bar  # the reference is as accurate, relative to the scale, as unscaled


@pytest.mark.parametrize("exponent", [-30, -200, -1000])
def test_soft_reference_accuracy_is_relative_to_the_value_scale(exponent):
    # Q*_τ(c·r, c·τ) = c·Q*_τ(r, τ), exactly representable for c = 2^e (no underflow here): the
    # reference for the scaled model must be within its own bound of c times the unscaled one, and
    # that bound must be as small relative to q̄ = (‖r‖∞ + τ log|A|)/(1−γ) as at unit scale (it was
    # 1e-12 absolute: 1e-12/q̄ ≈ 1e-4 relative at 2^-30, and the whole Q*_τ at 2^-200).
    c = 2.0**exponent
    base = random_mdp(4, 3, gamma=0.95, rng=5)
    tau = 0.2
    ref = soft_reference(base, tau=tau)
    sol = soft_reference(FiniteMDP(base.P, c * base.R, gamma=0.95), tau=c * tau)
    assert sol.converged
    err = float(np.max(np.abs(np.asarray(sol.Q) - c * np.asarray(ref.Q))))
    assert err <= float(sol.bound) + c * float(ref.bound)
    q_bar = (float(np.max(np.abs(base.R))) + tau * math.log(3)) / (1 - 0.95)
    assert float(sol.bound) <= 2e-12 * q_bar * c


def _one_state_q_star(r, gamma, tau):
    # one state: (1 − γ)V* = τ log Σ_a exp(r_a/τ) and Q*(a) = r_a + γV*, in float64 at unit scale
    r = np.asarray(r, dtype=np.float64)
    m = float(np.max(r))
    v = (m + tau * math.log(float(np.sum(np.exp((r - m) / tau))))) / (1.0 - gamma)
    return r + gamma * v


@pytest.mark.parametrize(("dtype", "exponent"), [(np.float64, -1045), (np.float32, -139)])
def test_soft_certificate_covers_subnormal_values(dtype, exponent):
    # With a target relative to the scale the iterates can be subnormal, where rounding is absolute
    # (up to half the subnormal spacing per product), not relative: the certificate now adds it.
    # One state, rewards (0.25, 1)·2^e, τ = 0.5·2^e, γ = 0.9: Q* = 2^e·Q*(unit scale). Without
    # that term soft VI (tol = 1e-12·2^e) certified bound 0 at error 2.5e-323 (float64) and
    # 8.6e-45 (float32), and soft_reference's bound 1.27882e-41 was below its error 1.27940e-41
    # (float32).
    c = 2.0**exponent
    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=dtype), (np.array([[0.25, 1.0]]) * c).astype(dtype), gamma=0.9)
    tau = float(dtype(0.5 * c))
    q_star = _one_state_q_star([0.25, 1.0], 0.9, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tol below the round-off floor is reported, not an error
        sols = [soft_value_iteration(mdp, tau=tau, tol=max(1e-12 * c, 5e-324)), soft_reference(mdp, tau=tau)]
    for sol in sols:
        q = np.asarray(sol.Q, dtype=np.float64)[0] / c  # exact: c is a power of 2 and q/c is normal
        err = float(np.max(np.abs(q - q_star))) * c
        assert err <= float(sol.bound) + c * 4 * np.finfo(np.float64).eps * float(np.max(q_star))
