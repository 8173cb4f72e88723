"""DoMo-VI's trace bound counts the round-off of the computed iterates and of the reference."""

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms import domo_vi
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP
from rltheory.mdp.zoo import random_mdp
from rltheory.testing import exact_solve


def _exact_error(mdp: FiniteMDP, Q: np.ndarray) -> float:
    """``‖Q − Q*‖∞`` with ``Q*`` of the row-normalised model ``P/σ`` in exact rational arithmetic:
    ``V* = max_π V^π`` componentwise over the ``A^S`` deterministic policies (an optimal one attains it)."""
    P, R = np.asarray(mdp.P, dtype=np.float64), np.asarray(mdp.R, dtype=np.float64)
    S, A = R.shape
    g = Fraction(float(mdp.gamma))
    Pf = [[[Fraction(float(x)) for x in P[s, a]] for a in range(A)] for s in range(S)]
    Pf = [[[x / sum(row) for x in row] for row in rows] for rows in Pf]
    Rf = [[Fraction(float(x)) for x in R[s]] for s in range(S)]
    V = None
    for pol in itertools.product(range(A), repeat=S):
        M = [[(i == j) - g * Pf[i][pol[i]][j] for j in range(S)] for i in range(S)]
        Vp = exact_solve(M, [Rf[i][pol[i]] for i in range(S)])
        V = Vp if V is None else [max(x, y) for x, y in zip(V, Vp, strict=True)]
    Qs = [[Rf[s][a] + g * sum(Pf[s][a][t] * V[t] for t in range(S)) for a in range(A)] for s in range(S)]
    return float(max(abs(Fraction(float(Q[s, a])) - Qs[s][a]) for s in range(S) for a in range(A)))


@pytest.mark.parametrize(
    ("dtype", "scale", "seed", "n", "m", "lam"),
    [(np.float64, 1.0, 3, 1, 1, 0.0), (np.float64, 1e6, 5, 1, 1, 0.0), (np.float64, 1.0, 2, 2, 1, 1.0),
     (np.float32, 1e6, 0, 1, 1, 0.0), (np.float32, 1.0, 1, 3, 2, 0.5)],
)
def test_domo_vi_bound_covers_the_true_error_of_the_computed_iterates(dtype, scale, seed, n, m, lam):
    # Bug found here: the trace's bound was γ^{nk}‖Q_ref − Q_0‖∞, the exact-arithmetic rate, which
    # falls below what the computed iterates reach: ‖Q_k − Q*‖∞ (exact Q*, rational arithmetic) was
    # 6.4e-15 against a bound of 2.1e-15 (first case) and 7.5e-9 against 2.7e-9 (rewards 1e6); on a
    # float32 model the iterates converged to the fixed point of the stored P, whose rows miss 1 by
    # ~1e-7, with error 1.13 against a bound of 2.5e-9 (fourth case). The bound now adds the
    # accumulated round-off of the iterates (and the reference's certified error) and the iterates
    # use the row-normalised P/σ in float64.
    base = random_mdp(3, 2, gamma=0.9, rng=seed)
    mdp = FiniteMDP(np.asarray(base.P, dtype), np.asarray(base.R, dtype) * dtype(scale), 0.9)
    mu = np.random.default_rng(seed).dirichlet(np.ones(2), size=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tol 1e-300 may run to the cap: the rounding floor is the point
        res = domo_vi(mdp, behavior=mu, n_improve=n, m_eval=m, lam=lam, iterations=400, tol=1e-300)
    bound = res.trace["bound"]
    assert _exact_error(mdp, res.Q) <= bound[-1]
    assert np.all(res.trace["error"] <= bound)  # the measured error too (the reference's error is counted)
    # the allowance above the rate is a round-off floor, not a vacuous bound: relative 1e-11 of
    # ‖Q*‖∞ ~ 10·scale (a run that stops at a rounding fixed point may still have the rate above it)
    assert bound[-1] - 0.9 ** (n * res.iterations) * bound[0] <= 1e-11 * 10.0 * scale


def test_domo_vi_bound_is_the_exact_rate_plus_a_round_off_floor():
    # One state, r = (1, 0), γ = 0.9: Q* = (10, 9), Q_0 = 0 satisfies T Q_0 ≥ Q_0; the rate part of
    # the bound is γ^{2k}·10 (n = 2), and the round-off allowance above it stays below 1e-11
    # (relative 1e-12 of ‖Q*‖∞; the error itself falls much faster than the rate)
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[1.0, 0.0]]), 0.9)
    with pytest.warns(ConvergenceWarning, match="iterations=8"):
        res = domo_vi(mdp, n_improve=2, m_eval=2, lam=1.0, iterations=8, tol=1e-300)
    rate = 10.0 * 0.81 ** np.arange(9)
    assert np.all(res.trace["bound"] >= rate)
    assert np.all(res.trace["bound"] - rate <= 1e-11)
    assert np.all(res.trace["error"] <= res.trace["bound"])
