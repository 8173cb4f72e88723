"""Certificates of the exact discounted solvers near the underflow threshold.

The round-off allowance of :class:`rltheory.mdp.discounted._Roundoff` is relative (Higham's
``γ_n``), except for its underflow term: a product with a subnormal result errs by up to half the
subnormal spacing, absolutely. Without that term every allowance rounded to 0 on models whose
rewards are subnormal-sized, and VI, MPI, PI and the LP certified bound 0 for values a few
spacings off ``V*``. The reference here is exact: ``V*`` is the componentwise maximum of the
rational values of all deterministic policies (an optimal deterministic policy exists and
dominates every other, Puterman 1994, Thm 6.2.10), for the stored ``P`` with its rows normalised —
the model every certificate of rltheory is about.
"""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp import (
    FiniteMDP,
    average_linear_program,
    linear_program,
    modified_policy_iteration,
    policy_iteration,
    value_iteration,
)
from rltheory.mdp.average import average_policy_iteration, relative_value_iteration
from rltheory.testing import exact_optimal_values, exact_solve


def _models(dtype: type, scale: float, n: int) -> list[FiniteMDP]:
    rng = np.random.default_rng(20261126)
    out = []
    while len(out) < n:
        S, A = int(rng.integers(1, 4)), int(rng.integers(1, 3))
        P = rng.dirichlet(np.ones(S), size=(S, A)).astype(dtype)
        P /= P.sum(-1, keepdims=True)
        R = (rng.random((S, A)) * scale).astype(dtype)
        out.append(FiniteMDP(P, R, gamma=float(rng.choice([0.3, 0.5, 0.9]))))
    return out


SOLVERS = {
    "vi": lambda m: value_iteration(m, tol=1e-300),
    "mpi": lambda m: modified_policy_iteration(m, tol=1e-300),
    "pi": policy_iteration,
    "lp": linear_program,
}


@pytest.mark.parametrize("dtype, scale", [(np.float32, 1e-40), (np.float64, 1e-310)])
@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_certificates_count_underflow(dtype: type, scale: float, solver: str) -> None:
    # rewards of subnormal size: before the underflow term, 94 of 160 such models (both dtypes)
    # got bound 0 from VI while V was up to 3.8e-45 off V* (float32)
    violations = []
    for i, mdp in enumerate(_models(dtype, scale, 12)):
        P, R = np.asarray(mdp.P), np.asarray(mdp.R)
        v_star = exact_optimal_values(P, R, float(mdp.gamma))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tol 1e-300 is below the floor: converged=False is expected
            res = SOLVERS[solver](mdp)
        V = np.asarray(res.V, dtype=np.float64)
        err = max(abs(Fraction(float(a)) - b) for a, b in zip(V, v_star, strict=True))
        if err > Fraction(float(res.bound)):
            violations.append((i, float(err), float(res.bound)))
    assert not violations, f"{solver}: ‖V − V*‖∞ above the certified bound (model, error, bound): {violations}"


def test_underflow_term_leaves_ordinary_scales_unchanged() -> None:
    # η = 2(S + 2)s is ~1e-322 in float64: a unit-scale certificate is the same number
    mdp = _models(np.float64, 1.0, 1)[0]
    res = value_iteration(mdp, tol=1e-8)
    assert res.converged and 0.0 < float(res.bound) <= 1e-8


def _exact_gain(P: np.ndarray, R: np.ndarray, d: tuple[int, ...]) -> Fraction:
    """``μ_π·r_π`` of the deterministic policy ``d`` on the row-normalised stored ``P`` (unichain)."""
    S = R.shape[0]
    rows = [[Fraction(float(P[s, d[s], j])) for j in range(S)] for s in range(S)]
    rows = [[x / sum(row) for x in row] for row in rows]
    M = [[rows[j][i] - (1 if i == j else 0) for j in range(S)] for i in range(S)]
    M[-1] = [Fraction(1)] * S  # μᵀ(P − I) = 0 with one equation replaced by Σμ = 1
    mu = exact_solve(M, [Fraction(0)] * (S - 1) + [Fraction(1)])
    return sum((m * Fraction(float(R[s, d[s]])) for s, m in enumerate(mu)), Fraction(0))


@pytest.mark.parametrize("dtype, scale", [(np.float32, 1e-40), (np.float64, 1e-310)])
def test_average_reward_certificates_count_underflow(dtype: type, scale: float) -> None:
    # RVI's Odoni bounds and unichain PI's gap use the same allowance at γ = 1: before the
    # underflow term they certified 0 with |g − g*| up to 3.1e-46 (float32 rewards ~1e-40)
    rng = np.random.default_rng(7)
    violations = []
    for i in range(12):
        S, A = int(rng.integers(1, 4)), int(rng.integers(1, 3))
        P = (rng.dirichlet(np.ones(S), size=(S, A)) + 0.05).astype(dtype)  # positive: unichain
        P /= P.sum(-1, keepdims=True)
        R = (rng.random((S, A)) * scale).astype(dtype)
        mdp = FiniteMDP(P, R, gamma=None)
        g_star = max(_exact_gain(P, R, d) for d in itertools.product(range(A), repeat=S))
        for name, res in (("rvi", _quiet(relative_value_iteration, mdp, tol=1e-300)),
                          ("pi", _quiet(average_policy_iteration, mdp))):
            err = max(abs(Fraction(float(g)) - g_star) for g in np.asarray(res.gain, dtype=np.float64).ravel())
            if err > Fraction(float(res.bound)):
                violations.append((name, i, float(err), float(res.bound)))
    assert not violations, f"|g − g*| above the certified bound (solver, model, error, bound): {violations}"


def _quiet(fn, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - test helper
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tol 1e-300 is below the floor: converged=False is expected
        return fn(*args, **kwargs)


def test_vi_sweep_error_counts_underflow() -> None:
    # bounds.vi_sweep_error (the a-priori error of one sweep, for span_stopping_iterations) had no
    # underflow term: with float32 rewards ~1e-40 it returned ~1e-47 while a computed sweep is off
    # by up to half a subnormal spacing (7e-46) per product
    from rltheory.bounds import vi_sweep_error
    from rltheory.mdp import bellman_optimality_operator

    worst_ratio = Fraction(0)
    for mdp in _models(np.float32, 1e-40, 12):
        P, R, g = np.asarray(mdp.P), np.asarray(mdp.R), Fraction(float(mdp.gamma))
        v = np.zeros(mdp.S, dtype=np.float32)
        for _ in range(5):
            v = np.asarray(bellman_optimality_operator(mdp, v))
        Tv = np.asarray(bellman_optimality_operator(mdp, v))
        for s in range(mdp.S):
            exact = max(
                Fraction(float(R[s, a])) + g * sum(Fraction(float(p)) * Fraction(float(x)) for p, x in zip(P[s, a], v, strict=True))
                / sum(Fraction(float(p)) for p in P[s, a])
                for a in range(mdp.A)
            )
            worst_ratio = max(worst_ratio, abs(Fraction(float(Tv[s])) - exact) / Fraction(vi_sweep_error(mdp)))
    assert 0 < worst_ratio <= 1


def _multichain_model(seed: int, dtype: type, scale: float) -> FiniteMDP:
    """A random multichain model (deterministic rows, state 0 absorbing) with rewards of size ``scale``."""
    rng = np.random.default_rng(seed)
    S, A = int(rng.integers(2, 5)), int(rng.integers(1, 3))
    P = rng.random((S, A, S))
    det = rng.random((S, A)) < 0.5
    P = np.where(det[..., None], np.eye(S)[rng.integers(0, S, size=(S, A))], P / P.sum(-1, keepdims=True))
    P[0] = 0.0
    P[0, :, 0] = 1.0
    return FiniteMDP(P.astype(dtype), (rng.random((S, A)) * scale).astype(dtype), None)


@pytest.mark.parametrize("dtype, scale", [(np.float32, 1e-40), (np.float64, 1e-310)])
def test_multichain_lp_residual_counts_underflow(dtype: type, scale: float) -> None:
    # The multichain LP's residual: primal infeasibilities of (g, h) and |Σα g − Σ r x| (α uniform),
    # exact for the row-normalised model. Before the underflow terms it was 0 for residuals up to
    # 3.1e-46 (18 of 120 probes; multichain PI's residual likewise for 36)
    bad = []
    for seed in range(10):
        mdp = _multichain_model(seed, dtype, scale)
        res = _quiet(average_linear_program, mdp, multichain=True)
        P, R = np.asarray(mdp.P), np.asarray(mdp.R)
        S, A = R.shape
        Pf = [[[Fraction(float(p)) for p in P[s, a]] for a in range(A)] for s in range(S)]
        Pf = [[[p / sum(row) for p in row] for row in rows] for rows in Pf]
        Rf = [[Fraction(float(r)) for r in row] for row in R]
        g = [Fraction(float(v)) for v in np.asarray(res.gain)]
        h = [Fraction(float(v)) for v in np.asarray(res.bias)]
        x = np.asarray(res.occupancy)
        inf1 = max(sum(Pf[s][a][j] * g[j] for j in range(S)) - g[s] for s in range(S) for a in range(A))
        inf2 = max(Rf[s][a] + sum(Pf[s][a][j] * h[j] for j in range(S)) - h[s] - g[s]
                   for s in range(S) for a in range(A))
        gap = abs(sum(g) / S - sum(Rf[s][a] * Fraction(float(x[s, a])) for s in range(S) for a in range(A)))
        exact = max(inf1, inf2, Fraction(0), gap)
        if exact > Fraction(float(res.bound)):
            bad.append((seed, float(exact), float(res.bound)))
    assert not bad, f"multichain LP residual below the exact one (model, exact, certified): {bad}"
