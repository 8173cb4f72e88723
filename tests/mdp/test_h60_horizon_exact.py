"""backward_induction and evaluate_finite_horizon against backward induction in exact rationals.

The float model's entries are read as exact fractions (``Fraction(float(x))``), and
``V_h = max_a [r_h + P_h V_{h+1}]`` / ``V^π_h = Σ_a π_h(a|s) [r_h + P_h V_{h+1}]`` is computed with
no rounding at all: an independent reference (the module's own brute force in test_horizon.py
evaluates policies with the same code it checks). Each float step adds at most a few ulps of
``H max|r|``, which fixes the tolerance ``8 H eps H max|r|``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import FiniteHorizonMDP
from rltheory.mdp.horizon import backward_induction, evaluate_finite_horizon


def _exact_values(P: np.ndarray, R: np.ndarray, pi: np.ndarray | None) -> list[list[Fraction]]:
    """``V_h`` for ``h = 0..H`` in exact arithmetic: optimal if ``pi`` is None, else ``V^π``."""
    H, S, A = P.shape[0], P.shape[1], P.shape[2]
    v = [Fraction(0)] * S
    out = [v]
    for h in range(H - 1, -1, -1):
        q = [
            [
                Fraction(float(R[h, s, a]))
                + sum(Fraction(float(P[h, s, a, t])) * v[t] for t in range(S))
                for a in range(A)
            ]
            for s in range(S)
        ]
        if pi is None:
            v = [max(row) for row in q]
        else:
            v = [sum(Fraction(float(pi[h, s, a])) * q[s][a] for a in range(A)) for s in range(S)]
        out.append(v)
    return out[::-1]


def _model(rng: np.random.Generator, dtype: str, scale: float) -> FiniteHorizonMDP:
    H, S, A = (int(x) for x in rng.integers(1, 5, size=3))
    P = rng.dirichlet(np.full(S, 0.5), size=(H, S, A)).astype(dtype)
    P = P / P.sum(-1, keepdims=True)
    # integer rewards times a power of ten: many equal rewards, values from 1e-30 to 1e30
    R = (rng.integers(-3, 4, size=(H, S, A)) * scale).astype(dtype)
    return FiniteHorizonMDP(P, R)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("scale", [1e-30, 1.0, 1e30])
def test_backward_induction_matches_exact_rational_backward_induction(dtype, scale):
    rng = np.random.default_rng(600 + int(np.log10(scale)))
    eps = float(np.finfo(dtype).eps)
    for _ in range(15):
        fh = _model(rng, dtype, scale)
        P, R = np.asarray(fh.P, dtype=np.float64), np.asarray(fh.R, dtype=np.float64)
        tol = 8 * fh.H * eps * fh.H * float(np.max(np.abs(R)))
        sol = backward_induction(fh)
        assert sol.V.dtype == np.dtype(dtype)
        exact = _exact_values(P, R, None)
        np.testing.assert_allclose(
            np.asarray(sol.V, dtype=np.float64), np.array(exact, dtype=float), rtol=0, atol=tol
        )
        # the greedy policy's exact value is the exact optimum, to the same round-off
        onehot = np.eye(fh.A)[np.asarray(sol.policy)]
        attained = _exact_values(P, R, onehot)
        np.testing.assert_allclose(
            np.array(attained, dtype=float), np.array(exact, dtype=float), rtol=0, atol=2 * tol
        )
        # evaluation of a random stochastic policy against its exact value
        pi = rng.dirichlet(np.ones(fh.A), size=(fh.H, fh.S)).astype(dtype)
        pi64 = pi.astype(np.float64)
        pi64 /= pi64.sum(-1, keepdims=True)  # the rows the evaluation uses (renormalised)
        v = evaluate_finite_horizon(fh, pi)
        want = np.array(_exact_values(P, R, pi64), dtype=float)
        np.testing.assert_allclose(np.asarray(v, dtype=np.float64), want, rtol=0, atol=4 * tol)


def test_duplicated_actions_tie_to_the_lowest_index():
    # actions 1 and 2 are copies of each other (equal P_h and r_h, so equal Q_h to the bit) and
    # beat action 0 in every state: the documented tie rule picks action 1 everywhere
    rng = np.random.default_rng(61)
    H, S = 4, 3
    P = rng.dirichlet(np.ones(S), size=(H, S, 2))
    R = np.stack([np.zeros((H, S)), np.ones((H, S))], axis=-1)
    P3 = np.concatenate([P[:, :, :1], P[:, :, 1:], P[:, :, 1:]], axis=2)
    R3 = np.concatenate([R[..., :1], R[..., 1:], R[..., 1:]], axis=2)
    sol = backward_induction(FiniteHorizonMDP(P3, R3))
    assert np.all(np.asarray(sol.policy) == 1)
    # V_h = H - h up to round-off of P's row sums (within an ulp of 1)
    np.testing.assert_allclose(
        np.asarray(sol.V)[:, 0], [4.0, 3.0, 2.0, 1.0, 0.0], rtol=0, atol=1e-14
    )
