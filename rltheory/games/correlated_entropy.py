r"""Maximum-entropy correlated equilibrium of n-player normal-form games.

:func:`max_entropy_ce` maximises the entropy ``−Σ_a μ(a) log μ(a)`` over the CE polytope of
:mod:`rltheory.games.correlated` (whose constraints, payoff scaling and certified gap it
uses): a convex program solved by cvxpy on the joint actions some CE uses (one support LP),
then refined to round-off by Newton's method on the smooth dual and accepted only where the
KKT conditions hold. Host-only. Re-exported by :mod:`rltheory.games.correlated`.

References
----------
Ortiz, L. E., Schapire, R. E. & Kakade, S. M. (2007). Maximum entropy correlated
equilibria. AISTATS.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import SolverError
from .correlated import (
    CorrelatedEquilibrium,
    _finish,
    _highs_chain,
    _row_normalised,
    _scaled_payoffs,
    as_normal_form,
    ce_constraints,
)

__all__ = ["max_entropy_ce"]


def _ce_support(Gn: np.ndarray) -> np.ndarray:
    r"""The joint actions some CE plays with positive probability (mask, shape ``(K,)``).

    One LP over the homogeneous cone ``{ν ≥ 0 : G ν ≤ 0}`` (the CEs up to scale):
    ``max Σ_a z_a`` s.t. ``0 ≤ z_a ≤ 1``, ``z_a ≤ ν_a``. The cone is convex and closed under
    scaling, so one ``ν`` is positive on every joint action any CE uses, scaled until those
    entries are ``≥ 1``: at the optimum ``z`` is the indicator of that maximal support (an
    entry ``> 1/2`` is in it). Solved by :func:`rltheory.games.correlated._highs_chain` (tight
    tolerances first, then HiGHS at its defaults, then without presolve): with
    ``linprog``'s defaults HiGHS stopped with model status *Unknown* (scipy status 4) on the
    cone of a 2×2×3 game of integers in ``{0, 1, 2}`` plus ``1e-9`` noise, which is feasible
    (``z = ν = 0``), and :func:`max_entropy_ce` raised :class:`~rltheory.errors.SolverError`.
    """
    R, K = Gn.shape
    if not R:
        return np.ones(K, dtype=bool)
    c = np.concatenate([np.zeros(K), -np.ones(K)])
    A_ub = np.block([[-np.eye(K), np.eye(K)], [Gn, np.zeros((R, K))]])
    bounds = [(0.0, None)] * K + [(0.0, 1.0)] * K
    res = _highs_chain(c, A_ub=A_ub, b_ub=np.zeros(K + R), bounds=bounds)
    if res.status != 0:
        raise SolverError(
            f"max_entropy_ce: HiGHS failed on the support LP: {res.message}", status=res.status
        )
    return res.x[K:] > 0.5


def _dual_newton(G: np.ndarray, mu0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""``(μ_λ, λ)``: the max-entropy point of ``{μ > 0 : Σμ = 1, G μ = 0}`` by Newton on its dual.

    The maximiser is the exponential family ``μ_λ(a) = exp(−(Gᵀλ)_a) / Z(λ)``, where ``λ``
    minimises the smooth convex dual ``f(λ) = log Σ_a exp(−(Gᵀλ)_a)``, with ``∇f = −G μ_λ`` and
    ``∇²f = G (diag μ_λ − μ_λ μ_λᵀ) Gᵀ`` (Ortiz, Schapire & Kakade 2007). The steps are
    least-squares Newton steps (rows of ``G`` may be dependent) with an Armijo backtracking
    search on ``f`` (a full step that halves ``‖G μ_λ‖∞`` is taken as it is: near the optimum
    ``f`` is flat below its round-off), from the least-squares fit of ``log μ0``; the iteration
    stops when a step decreases neither ``f`` nor ``‖G μ_λ‖∞`` (round-off reached).
    """
    K = G.shape[1]
    if not G.shape[0]:
        return np.full(K, 1.0 / K), np.zeros(0)
    M = np.concatenate([G.T, np.ones((K, 1))], axis=1)
    lam = np.linalg.lstsq(M, -np.log(np.clip(mu0, 1e-300, None)), rcond=None)[0][:-1]

    def dist(lam: np.ndarray) -> tuple[np.ndarray, float, float]:
        theta = -(G.T @ lam)
        top = float(np.max(theta))
        w = np.exp(theta - top)
        z = float(np.sum(w))
        mu = w / z
        return mu, top + math.log(z), float(np.max(np.abs(G @ mu)))

    mu, f, res = dist(lam)
    for _ in range(100):
        g = G @ mu
        H = (G * mu) @ G.T - np.outer(g, g)
        d = np.linalg.lstsq(H, g, rcond=None)[0]
        t = 1.0
        mu_t, f_t, res_t = dist(lam + d)
        # near the optimum f is flat below its round-off: a full step that halves the
        # gradient is taken without the Armijo test
        while res_t > 0.5 * res and f_t > f - 1e-4 * t * float(g @ d) and t > 1e-10:
            t /= 2.0
            mu_t, f_t, res_t = dist(lam + t * d)
        if not (res_t < res or f_t < f):
            break
        lam, mu, f, res = lam + t * d, mu_t, f_t, res_t
    return mu, lam


def _dual_bounded(G: np.ndarray) -> np.ndarray:
    r"""``μ_λ`` at the minimiser of the dual ``f(λ) = log Σ_a exp(−(Gᵀλ)_a)`` over ``λ ≥ 0``.

    L-BFGS-B from ``λ = 0`` (``scipy.optimize.minimize``): a start for :func:`_entropy_kkt` where
    Clarabel's point is too rough to guess the active rows from. On a 3x3x3x3 game Clarabel
    returned 0 on joint actions where the maximiser has mass 5.5e-33 (within its tolerance),
    and the active set read from it left Newton far from the optimum.
    """
    from scipy.optimize import minimize  # noqa: PLC0415

    def dist(lam: np.ndarray) -> tuple[np.ndarray, float]:
        theta = -(G.T @ lam)
        top = float(np.max(theta))
        w = np.exp(theta - top)
        z = float(np.sum(w))
        return w / z, top + math.log(z)

    def fun(lam: np.ndarray) -> tuple[float, np.ndarray]:
        mu, f = dist(lam)
        return f, -(G @ mu)

    R = G.shape[0]
    res = minimize(
        fun,
        np.zeros(R),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * R,
        options={"maxiter": 10_000, "ftol": 1e-15, "gtol": 1e-12},
    )
    return dist(res.x)[0]


def _entropy_kkt(G: np.ndarray, mu0: np.ndarray) -> np.ndarray | None:
    r"""The max-entropy CE on its support to round-off, from an approximate one ``mu0``, or None.

    KKT conditions of ``max H(μ)`` s.t. ``Gμ ≤ 0``, ``Σμ = 1`` (all ``μ > 0`` on the support):
    ``log μ = −Gᵀλ − log Z`` with ``λ ≥ 0``, ``Gμ ≤ 0`` and ``λ_r (Gμ)_r = 0``; they are
    sufficient (concave objective, linear constraints), so a point meeting them is the unique
    maximiser. Active-set search from ``mu0``: the rows within ``1e-6`` of tight (rows scaled to
    a largest entry of 1) are equalities, :func:`_dual_newton` solves them, a violated inactive
    row is added and a row whose multiplier must be negative dropped, until the conditions hold:
    ``Gμ ≤ 16 K u`` on every row and a non-negative ``λ`` (``scipy.optimize.nnls``) fits
    ``log μ`` within ``1e-12(1 + max|log μ|)`` (accepted fits measured ~1e-15). None when no
    active set passes within ``R + 1`` tries, or when Newton's point has an entry that underflowed
    to 0 (its multipliers diverge: on a 2×3 game of integers plus ``1e-12`` noise, where incentive
    rows of size ``1e-13`` pin joint actions to 0, ``log 0`` reached ``nnls``, which raised numpy's
    unlocated "array must not contain infs or NaNs").
    """
    from scipy.optimize import nnls  # noqa: PLC0415

    R, K = G.shape
    eps = 16.0 * K * float(np.finfo(np.float64).eps)
    active = G @ mu0 >= -1e-6
    for _ in range(R + 1):
        mu, lam = _dual_newton(G[active], mu0)
        slack = G @ mu
        if np.any(slack[~active] > eps):
            active[int(np.argmax(np.where(active, -np.inf, slack)))] = True
            continue
        if np.any(slack[active] > eps):  # Newton did not reach the active rows
            return None
        if not np.all(mu > 0.0):  # mass below the float range: no log-linear fit, no KKT point
            return None
        rows = np.flatnonzero(active)
        logmu = np.log(mu)
        M = np.concatenate([G[rows].T, np.ones((K, 1)), -np.ones((K, 1))], axis=1)
        _, resid = nnls(M, -logmu)
        if resid <= 1e-12 * (1.0 + float(np.max(np.abs(logmu)))):
            return mu
        if not rows.size:
            return None
        active[rows[int(np.argmin(lam))]] = False
    return None


def max_entropy_ce(U: Any, *, solver: str = "CLARABEL") -> CorrelatedEquilibrium:
    r"""Maximum-entropy correlated equilibrium: ``max_μ −Σ_a μ(a) log μ(a)`` s.t. CE constraints.

    The CE polytope is convex and the entropy strictly concave, so the maximiser is unique
    (Ortiz, Schapire & Kakade 2007). Solved with cvxpy's exponential-cone interface
    (default solver Clarabel). Host-only.

    Notes
    -----
    The entropy program is solved on the joint actions some CE uses (:func:`_ce_support`, one
    LP); every CE is zero on the others, so the maximiser is the same. Where the CE polytope
    lies in a face of the simplex (a dominated action, or a unique CE) the full program has no
    strictly feasible point, and Clarabel stalled: on a 2x3x2 game with a unique CE on 4 of
    the 12 joint actions it stopped "optimal_inaccurate" with 4.3e-4 on a joint action no CE uses
    and a CE gap of 2.7e-6.

    Accuracy: Clarabel alone stops at its default tolerances where the entropy is flat, within
    about ``1e-6`` of the maximiser (one player with three actions and constant payoffs gave
    ``max |μ − 1/3| = 4.8e-7``). Its answer is therefore refined on the support by Newton's
    method on the smooth dual: the maximiser is ``μ(a) ∝ exp(−(Gᵀλ)_a)`` with multipliers
    ``λ ≥ 0`` on the tight incentive rows (Ortiz, Schapire & Kakade 2007), and the refined point
    is returned only if it meets the KKT conditions (every row ``Gμ ≤ 16 K u`` on rows scaled to
    a largest entry of 1, and a non-negative ``λ`` fitting ``log μ``; the conditions are
    sufficient, so it is the maximiser up to round-off, e.g. exactly ``1/3`` above). Where the
    active set read from Clarabel's point fails (it can put 0 where the maximiser has mass
    ``1e-13``), the dual is first minimised over ``λ ≥ 0`` by L-BFGS-B and Newton started there.
    Where that fails too, Clarabel's answer is returned. The ``gap`` is certified either way.

    Raises
    ------
    SolverError
        cvxpy reports a status other than optimal.

    Examples
    --------
    In matching pennies the only CE is uniform:

    >>> import numpy as np
    >>> U = np.array([[[1.0, -1.0], [-1.0, 1.0]], [[-1.0, 1.0], [1.0, -1.0]]])
    >>> np.round(max_entropy_ce(U).distribution, 6).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    import cvxpy as cp  # noqa: PLC0415

    U = as_normal_form(U)
    # the same polytope, in units the solver's tolerances fit
    Gn = _row_normalised(ce_constraints(_scaled_payoffs(U)[0]))
    K = Gn.shape[1]
    # every CE is 0 off the support: the program there has a strictly feasible point
    support = _ce_support(Gn)
    Gs = Gn[:, support]
    mu = cp.Variable(int(support.sum()), nonneg=True)
    cons = [cp.sum(mu) == 1] + ([Gs @ mu <= 0] if Gs.shape[0] else [])
    prob = cp.Problem(cp.Maximize(cp.sum(cp.entr(mu))), cons)
    try:
        prob.solve(solver=solver)
    except cp.error.SolverError as exc:  # unknown solver, or one that cannot take exponential cones
        raise SolverError(
            f"max_entropy_ce: cvxpy solver {solver!r} failed: {exc}", status="solver_error"
        ) from exc
    if prob.status not in ("optimal", "optimal_inaccurate") or mu.value is None:
        raise SolverError(f"max_entropy_ce: cvxpy status {prob.status}", status=prob.status)
    mu0 = np.clip(np.asarray(mu.value, dtype=float), 0.0, None)
    mu0 /= mu0.sum()
    full = np.zeros(K)
    full[support] = mu0
    exact = _entropy_kkt(Gs, mu0)  # Newton on the dual, to round-off
    if exact is None:  # Clarabel's point too rough to start from: solve the dual first
        exact = _entropy_kkt(Gs, _dual_bounded(Gs))
    if exact is not None:
        full[support] = exact
    return _finish(U, full, coarse=False)
