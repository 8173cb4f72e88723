r"""KKT certificate and Newton refinement of a general-utility program's solution.

For ``max_{d ∈ 𝒟} F(d)`` s.t. ``G_i(d) ≤ b_i`` with flow equalities ``M d = c``, :func:`_certify`
measures how far a primal-dual point ``(d, ν, λ)`` is from the KKT conditions
``d ≥ 0, g ≤ 0, g ⊙ d = 0, λ_i (G_i(d) − b_i) = 0`` (``g`` the reduced gradient; Boyd &
Vandenberghe 2004, §5.5.3), the sign conditions by the natural residual ``|min(d, −g)|``
(Facchinei & Pang 2003, §1.5.3); :func:`_polish` refines a solver's point by Newton steps on the
KKT system of its active set in log-occupancy coordinates. Both serve
:func:`rltheory.mdp.solve_general_utility`, which documents the scales they work in.

References
----------
Boyd, S. & Vandenberghe, L. (2004). *Convex Optimization*. §5.5.3 (KKT conditions).
Facchinei, F. & Pang, J.-S. (2003). *Finite-Dimensional Variational Inequalities and
Complementarity Problems*. §1.5.3 (natural residual).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .utility_dual import _dual_bound, _over
from .utility_functions import OccupancyFunction


def _certify(
    x: np.ndarray,
    nu: np.ndarray,
    lam: np.ndarray,
    cons: list,
    objective: OccupancyFunction,
    M: np.ndarray,
    c: np.ndarray,
    S: int,
    A: int,
    rho: float,
    rhos: Sequence[float],
) -> dict[str, Any]:
    """Policy, values and the KKT residual of a primal-dual point of the solved program.

    The program was solved for ``F/ρ`` and ``G_i/ρ_i ≤ b_i/ρ_i``: ``x`` is ``d[S*A]``, ``nu`` and ``lam``
    are that program's multipliers of the flow equalities and of the ``G_i`` (``lam`` clipped at 0);
    the multipliers are scaled back to the original units, and the residual is measured in the
    solved (unit) scale.

    Besides the sign, flow and constraint residuals, ``kkt_residual`` is at least the weighted
    violations ``w = |⟨ν, M d − c⟩| + Σ_i |λ_i (G_i(d) − b_i)|/ρ_i`` (``d = max(x, 0)``; ``inf`` if not
    finite). For concave ``F``, convex ``G_i``, ``λ ≥ 0`` and the optimum ``d*``, exactly
    ``(F(d) − F*)/ρ = ⟨g, d − d*⟩ + Σ_i λ_i ((G_i(d) − b_i) + D_i)/ρ_i + ⟨ν, M d − c⟩`` where the ``G_i``
    are active (``g`` the reduced gradient, ``D_i ≥ 0`` the Bregman divergence of ``G_i`` between
    ``d*`` and ``d``, second order; a concave ``F`` adds its own): ``w`` is the first-order value error
    that the unweighted violations miss when the multipliers are large (a KL trust region just
    above the Slater cut-off read a residual 30–300× below the value error without it). Those parts are
    first order only; the residual also contains the weak-duality gap ``(ub − F(d)/ρ)⁺`` with ``ub`` from
    :func:`~rltheory.mdp.utility_dual._dual_bound`, an exact bound on the shortfall ``(F* − F(d))/ρ``
    (returned as ``value_bound = ρ·ub``)."""
    x = np.clip(np.asarray(x, dtype=float), 0.0, None)
    D = x.reshape(S, A)
    mass = D.sum(-1)
    visited = mass > 1e-9
    pi = np.where(visited[:, None], D / np.where(visited, mass, 1.0)[:, None], 1.0 / A)
    rhos = np.asarray(rhos, dtype=float)  # one per constraint
    lam_u = np.maximum(np.asarray(lam, dtype=float), 0.0)  # the solved program's multipliers
    with np.errstate(
        over="ignore", invalid="ignore"
    ):  # (reported as computed; the certificate is below)
        lam = np.ldexp(
            lam_u, math.frexp(rho)[1] - np.frexp(rhos)[1]
        )  # λ ρ/ρ_i, no intermediate overflow
        gvals = np.array([G.value(D) for G, _ in cons])
        grad = objective.gradient(D)
        gradG = [np.asarray(G.gradient(D), dtype=float) for G, _ in cons]
        lgrad = _lagrangian_reward(np.asarray(grad, dtype=float), lam, gradG)
        # reduced gradient in the solved (unit) scale, optimal iff g <= 0 and g ⊙ d = 0 (g = −s/ρ). Formed
        # in the original units (ρν with ρ = 2^1023 for rewards 1.7e308) it overflowed to NaN in every
        # coordinate, so no sign condition was checked, and for subnormal rewards it lost bits
        Mnu = M.T @ np.asarray(nu, dtype=float).reshape(-1)

        def reduced(gf: Any, gG: list[np.ndarray]) -> np.ndarray:
            # (a zero multiplier adds nothing, and a pair a domain forbids is −inf, as in the
            # Lagrangian reward: its sign is free, the domain's own multiplier takes it up)
            gf = np.asarray(gf, dtype=float).reshape(-1)
            forbidden = gf == -np.inf
            for gi in gG:
                forbidden |= np.asarray(gi, dtype=float).reshape(-1) == np.inf
            terms = (
                lam_u[i] * gG[i].reshape(-1) / rhos[i] for i in range(len(cons)) if lam_u[i] != 0
            )
            return np.where(forbidden, -np.inf, gf / rho - sum(terms, np.zeros(S * A)) - Mnu)

        g = reduced(grad, gradG)
    fin = np.isfinite(g)
    bs = np.array([float(b) for _, b in cons])
    viol = (gvals - bs) / rhos
    parts = [
        # natural (min-map) residual of the sign conditions d >= 0, g <= 0, g ⊙ d = 0: it stays
        # small where a solver leaves d(s,a) at its own noise level (1e-13, say) while a log
        # gradient there (entropy, KL) is off by a large amount that moves nothing
        np.max(np.abs(np.minimum(x[fin], -g[fin])), initial=0.0),
        _missing_mass(x, g, reduced, objective, cons, S, A),
        np.max(np.abs(M @ x - c), initial=0.0),
        np.max(viol, initial=0.0),
        np.max(np.abs(lam_u * viol), initial=0.0),
    ]
    with np.errstate(over="ignore", invalid="ignore"):  # (weighted violations: docstring)
        w = abs(float(np.dot(np.asarray(nu, dtype=float).reshape(-1), M @ x - c)))
        w += float(np.sum(np.abs(lam_u * viol)))
    parts.append(w if math.isfinite(w) else math.inf)
    # weak-duality gap: F*/ρ ≤ ub for any multipliers, so F* − F(d) ≤ ρ·(ub − F(d)/ρ) exactly
    ub = _dual_bound(x, nu, lam_u, cons, objective, M, c, S, A, rho, rhos)
    value = float(objective.value(D))
    parts.append(max(ub - _over(value, rho), 0.0) if math.isfinite(ub) else math.inf)
    return dict(
        occupancy=D,
        policy=pi,
        value=value,
        value_bound=float(ub * rho) if math.isfinite(ub) else math.inf,
        constraint_values=gvals,
        duals=lam,
        shadow_reward=grad,
        lagrangian_reward=lgrad,
        kkt_residual=float(max(parts)),
    )


def _missing_mass(
    x: np.ndarray,
    g: np.ndarray,
    reduced: Any,
    objective: OccupancyFunction,
    cons: list,
    S: int,
    A: int,
) -> float:
    """Natural residual of the pairs at ``d = 0`` where ``g = +inf`` (a log gradient at 0: entropy, −KL).

    ``min(d, −g)`` is ``−inf`` there, and these pairs were left out, so a point with ``d(s,a) = 0``
    where the optimum has ``1.1e-10`` (−KL to a target with an entry 1e-10) read a residual 5.6e-17
    while its value was 1.1e-10 off (3.6e-12 in the solved scale). ``g_j`` decreases in ``d_j``
    (``F`` concave, ``G_i`` convex, ``λ ≥ 0``); the residual of pair ``j`` is the root ``t*`` of
    ``g_j(d + t e_j) = 0`` (the distance of ``d_j`` from the one-pair complementarity solution, which
    the min-map measures elsewhere), bracketed by bisection in ``log₂ t ∈ [−1074, 0]`` (the upper end
    is returned; 1 if ``g_j`` is still positive at ``t = 1``). Cost: 64 gradient evaluations per pair.
    """
    worst = 0.0
    for j in np.flatnonzero((x == 0) & (g == np.inf)):

        def gj(t: float, j: int = int(j)) -> float:
            z = x.copy()
            z[j] = t
            D = z.reshape(S, A)
            return float(
                reduced(objective.gradient(D), [np.asarray(G.gradient(D), float) for G, _ in cons])[
                    j
                ]
            )

        if gj(1.0) > 0:
            return 1.0
        lo, hi = -1074.0, 0.0
        if not gj(2.0**lo) > 0:  # the root is below the smallest float
            continue
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            if gj(2.0**mid) > 0:
                lo = mid
            else:
                hi = mid
        worst = max(worst, 2.0**hi)
    return worst


def _lagrangian_reward(grad: np.ndarray, lam: np.ndarray, gradG: list[np.ndarray]) -> np.ndarray:
    """``∇F − Σ_i λ_i ∇G_i`` with ``−inf`` on the pairs the domains forbid and ``0·∞ = 0``.

    A concave ``F`` with ``∂F/∂d(s,a) = −inf``, or a convex ``G_i`` with ``+inf``, is ``∓inf`` as soon as
    ``d(s,a)`` grows (a one-sided derivative of a function finite on a segment is finite), so the pair
    is outside the feasible set whatever ``λ``: its reward is ``−inf``. Elsewhere a multiplier 0 adds
    nothing. Formed as written, an inactive KL constraint (``λ = 0``) whose target has a zero gave
    ``0·inf = nan`` there, and an entropy objective under an active one ``inf − inf = nan``.
    """
    forbidden = grad == -np.inf
    out = grad.copy()
    for li, gi in zip(lam, gradG, strict=True):
        forbidden |= gi == np.inf
        if li != 0:
            out = out - li * gi
    return np.where(forbidden, -np.inf, out)


def _polish(
    x: np.ndarray,
    nu: np.ndarray,
    lam: np.ndarray,
    cons: list,
    objective: OccupancyFunction,
    M: np.ndarray,
    c: np.ndarray,
    S: int,
    A: int,
    rho: float,
    rhos: Sequence[float],
    *,
    steps: int = 12,
    delta: float = 1e-4,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Newton refinement of a solver's point on its active set, in log-occupancy coordinates.

    The active set is read off the natural residual: a pair is *positive* where ``d ≥ −g`` (``g``
    the reduced gradient of :func:`solve_general_utility`, solved scale) and ``d > 0``, else it is
    fixed at 0 (as are pairs where ``g`` is not finite); a constraint is *active* where
    ``λ ≥ −(G − b)`` and ``λ > 0``, else its multiplier is fixed at 0. On that set the KKT
    conditions are the square system

        g_P(d) = 0,   M d = c,   G_i(d) = b_i (i active)

    in ``(u_P, ν, λ_active)`` with ``d_P = exp(u_P)``. Log coordinates make a log-gradient term
    ``λ log d`` (KL, entropy) contribute ``λ`` to the Jacobian however small ``d`` is, where its
    derivative in ``d`` is ``λ/d`` (1.4e8 at ``d = 3e-10``, ``λ = 0.04``: an absolute error of 1e-12
    in ``d``, the interior-point solver's precision, is 1.8e-4 in ``g``). The Jacobian of ``g_P`` is
    by central differences in ``u`` (exact for those terms; error ``O(δ²)`` else), the rest analytic;
    steps are least-squares solutions (``M`` has a redundant row for average reward), halved until
    the largest equation residual decreases; at most ``steps`` of them, stopping once it is 1e-14
    (the equations are in the solved, unit scale). Returns the refined ``(x, ν, λ)`` in the solved scale,
    or ``None`` when no step decreases it; the caller keeps the refined point only where its KKT
    residual (which also checks the signs ``g ≤ 0`` on the zero pairs, ``λ ≥ 0``, ``G ≤ b``) is smaller.
    Cost per step: ``2|P|`` gradient evaluations and a least-squares solve of size ``|P| + rows(M)``."""
    rhos = np.asarray(rhos, dtype=float)
    bs = np.array([float(b) for _, b in cons])
    x = np.asarray(x, dtype=float)
    n, m = x.size, len(cons)

    def grads(z: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        D = z.reshape(S, A)
        with np.errstate(all="ignore"):
            return (
                np.asarray(objective.gradient(D), dtype=float).reshape(-1) / rho,
                [
                    np.asarray(G.gradient(D), dtype=float).reshape(-1) / r
                    for (G, _), r in zip(cons, rhos, strict=True)
                ],
            )

    gF, gG = grads(np.clip(x, 0.0, None))
    with np.errstate(all="ignore"):
        g = gF - sum((lam[i] * gG[i] for i in range(m)), np.zeros(n)) - M.T @ nu
        viol = np.array(
            [
                (G.value(np.clip(x, 0.0, None).reshape(S, A)) - b) / r
                for (G, b), r in zip(cons, rhos, strict=True)
            ]
        )
    pos = np.isfinite(g) & (x > 0) & (x >= -g)
    act = [i for i in range(m) if lam[i] > 0 and lam[i] >= -viol[i]]
    if not pos.any():
        return None
    P = np.flatnonzero(pos)
    k, p = len(act), P.size

    def residual(
        u: np.ndarray, nu: np.ndarray, la: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        z = np.zeros(n)
        z[P] = np.exp(u)
        gF, gG = grads(z)
        with np.errstate(all="ignore"):  # (inf − inf off P, where h is not used)
            h = gF - sum((la[j] * gG[i] for j, i in enumerate(act)), np.zeros(n))
            Gv = [(cons[i][0].value(z.reshape(S, A)) - bs[i]) / rhos[i] for i in act]
        e = np.concatenate([h[P] - M.T[P] @ nu, M @ z - c, Gv])
        return (z, e) if np.all(np.isfinite(e)) else None

    u, la = np.log(x[P]), lam[act].astype(float)
    nu = np.asarray(nu, dtype=float).copy()
    cur = residual(u, nu, la)
    if cur is None:
        return None
    improved = False
    for _ in range(steps):
        z, e = cur
        err = float(np.max(np.abs(e)))
        if err <= 1e-14:  # the unit-scale equations are at round-off level
            break
        J = np.zeros((e.size, p + nu.size + k))
        for col, j in enumerate(P):  # ∂h_P/∂u_j by central differences in log d_j
            zp, zm = z.copy(), z.copy()
            zp[j] *= math.exp(delta)
            zm[j] *= math.exp(-delta)
            (fp, Gp), (fm, Gm) = grads(zp), grads(zm)
            with np.errstate(all="ignore"):  # (only the rows in P are used)
                hp = fp - sum((la[a] * Gp[i] for a, i in enumerate(act)), np.zeros(n))
                hm = fm - sum((la[a] * Gm[i] for a, i in enumerate(act)), np.zeros(n))
            J[:p, col] = (hp[P] - hm[P]) / (2 * delta)
        gF, gG = grads(z)
        J[:p, p : p + nu.size] = -M.T[P]
        for a, i in enumerate(act):
            J[:p, p + nu.size + a] = -gG[i][P]
            J[p + M.shape[0] + a, :p] = gG[i][P] * z[P]
        J[p : p + M.shape[0], :p] = M[:, P] * z[P]
        if not np.all(np.isfinite(J)):
            return None
        step = np.linalg.lstsq(J, -e, rcond=None)[0]
        t = 1.0
        while t > 1e-6:
            du = t * step[:p]
            if np.max(np.abs(du), initial=0.0) <= 30.0:  # keep exp(u) representable
                new = residual(u + du, nu + t * step[p : p + nu.size], la + t * step[p + nu.size :])
                if new is not None and float(np.max(np.abs(new[1]))) < err:
                    break
            t /= 2
        else:
            break
        u, nu, la = u + t * step[:p], nu + t * step[p : p + nu.size], la + t * step[p + nu.size :]
        cur, improved = new, True
    if not improved:
        return None
    lam_out = np.zeros(m)
    lam_out[act] = la
    return cur[0], nu, lam_out
