"""Improper natural policy gradient near a vertex of the simplex of mixture weights.

Reference: the natural step ``η F⁺∇V/(1−γ)`` computed in exact rational arithmetic from the same
mixture weights the library uses (``softmax(θ_0)`` in float64, read as exact fractions), with
``F = Σ_{s,a} d(s) ∂π(a|s)∂π(a|s)ᵀ/π(a|s)``, ``(1−γ)∇V = Σ_{s,a} d(s) ∂π(a|s) Q(s, a)`` and
``∂π/∂θ_m = w_m (K_m − π)``. The Fisher matrix's only null direction is ``(1, …, 1)`` (the shift of
the logits), orthogonal to ``∇V``, so ``F⁺∇ = (F + 11ᵀ)^{-1}∇``.
"""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest

from rltheory.algorithms.actor_critic import improper_policy_gradient
from rltheory.algorithms.soft import softmax
from rltheory.mdp import FiniteMDP
from rltheory.testing import exact_solve

# dyadic model (exact in float64): 3 states, 2 actions, γ = 3/4
P = np.array(
    [
        [[0.5, 0.25, 0.25], [0.125, 0.375, 0.5]],
        [[0.25, 0.5, 0.25], [0.75, 0.125, 0.125]],
        [[0.375, 0.375, 0.25], [0.25, 0.25, 0.5]],
    ]
)
R = np.array([[0.25, 1.0], [0.75, 0.0], [0.5, 0.875]])
GAMMA = 0.75
# two deterministic controllers and a stochastic one
K = np.array(
    [
        [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]],
        [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]],
        [[0.25, 0.75], [0.5, 0.5], [0.875, 0.125]],
    ]
)


def _exact_natural_step(w_float: np.ndarray, eta: float) -> list[Fr]:
    S, A, M = 3, 2, 3
    g = Fr(GAMMA)
    tot = sum(Fr(float(x)) for x in w_float)
    w = [Fr(float(x)) / tot for x in w_float]
    k = [[[Fr(float(K[m, s, a])) for a in range(A)] for s in range(S)] for m in range(M)]
    pi = [[sum(w[m] * k[m][s][a] for m in range(M)) for a in range(A)] for s in range(S)]
    Pp = [
        [sum(pi[s][a] * Fr(float(P[s, a, t])) for a in range(A)) for t in range(S)]
        for s in range(S)
    ]
    r = [sum(pi[s][a] * Fr(float(R[s, a])) for a in range(A)) for s in range(S)]
    eye = [[Fr(int(i == j)) for j in range(S)] for i in range(S)]
    V = exact_solve([[eye[i][j] - g * Pp[i][j] for j in range(S)] for i in range(S)], r)
    rho = [Fr(1, 3)] * S
    dd = exact_solve([[eye[i][j] - g * Pp[j][i] for j in range(S)] for i in range(S)], rho)
    d = [(1 - g) * x for x in dd]
    Q = [
        [
            Fr(float(R[s, a])) + g * sum(Fr(float(P[s, a, t])) * V[t] for t in range(S))
            for a in range(A)
        ]
        for s in range(S)
    ]
    dpi = [[[w[m] * (k[m][s][a] - pi[s][a]) for a in range(A)] for s in range(S)] for m in range(M)]
    pairs = [(s, a) for s in range(S) for a in range(A) if pi[s][a] > 0]
    grad = [sum(d[s] * dpi[m][s][a] * Q[s][a] for s, a in pairs) for m in range(M)]
    F = [
        [sum(d[s] * dpi[m][s][a] * dpi[n][s][a] / pi[s][a] for s, a in pairs) + 1 for n in range(M)]
        for m in range(M)
    ]
    u = exact_solve(F, grad)
    return [Fr(eta) * x / (1 - g) for x in u]


@pytest.mark.parametrize("b", [0.0, 20.0, 40.0, 100.0, 300.0, 700.0])
def test_natural_step_near_a_vertex_is_the_exact_fisher_step(b):
    # theta_0 = (0, -b, -b): controller 0 has weight 1 - 2e^{-b}. The scores w_m (K_m - pi)/pi
    # used K_m - pi formed by cancellation and were cut at an absolute level eps, so the step
    # came out wrong from b ~ 30 (8% off), as (-11.7, -16.2, 27.9) at b = 40 and as 0 from
    # b = 100, while the exact step tends to a finite limit (here about (-0.21, 2.0, -1.8))
    theta0 = np.array([0.0, -b, -b])
    mdp = FiniteMDP(P, R, gamma=GAMMA)
    res = improper_policy_gradient(mdp, K, eta=1.0, iterations=1, theta0=theta0)
    ref = np.array([float(x) for x in _exact_natural_step(np.asarray(softmax(theta0, np)), 1.0)])
    step = res.theta - theta0
    # theta0 = -b entries carry ulp(b) of absolute rounding in theta_0 + step
    tol = 1e-12 * float(np.max(np.abs(ref))) + 4 * np.spacing(b)
    np.testing.assert_allclose(step, ref, rtol=0, atol=tol)
    assert abs(float(np.sum(ref))) < 1e-15 * float(np.max(np.abs(ref)))  # min-norm: no logit shift


def test_a_step_whose_logits_overflow_is_a_located_error():
    # eta = 1e308: theta_1 = ±inf, then a NaN mixture failed in evaluate_policy with
    # 'pi must be finite; pi(s=0, a=0) = nan', naming neither the step nor eta
    mdp = FiniteMDP(P, R, gamma=GAMMA)
    with pytest.raises(ValueError, match=r"at iteration t=1 \(eta=1e\+308.*theta\[\d\] = -?inf"):
        improper_policy_gradient(mdp, K, eta=1e308, iterations=2)
