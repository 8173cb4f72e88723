r"""Bounds on the optimum of a general-utility program: weak duality above, a feasible point below.

For ``max F(d)`` s.t. ``M d = c``, ``d ≥ 0``, ``G_i(d) ≤ b_i`` (``F`` concave, ``G_i`` convex), every
feasible ``d`` lies in the simplex ``Δ = {d ≥ 0, Σ d = 1}`` (the flow equalities sum to ``Σ d = 1``
for normalised discounted occupancies and contain it for average reward). For any multipliers
``ν`` and ``λ ≥ 0`` the Lagrangian ``L(d) = F(d) − Σ_i λ_i (G_i(d) − b_i) − ⟨ν, M d − c⟩`` is concave
and at least ``F`` on the feasible set, so (weak duality, Boyd & Vandenberghe 2004, §5.1.3)

    F* ≤ max_{d ∈ Δ} L(d) ≤ L(d̂) + max_j ∂_j L(d̂) − ⟨∇L(d̂), d̂⟩   for any d̂ ≥ 0 in the domain,

the second step by concavity (``L(d) ≤ L(d̂) + ⟨∇L(d̂), d − d̂⟩``; the linear part is largest at a
vertex of ``Δ``: the Frank–Wolfe gap, Jaggi 2013, §2). The bound needs no optimality of ``(d̂, ν, λ)``
and no constraint qualification; it equals ``F*`` at a KKT point, and :func:`_dual_bound` chooses
``d̂`` by diagonal Newton steps on ``L`` over ``Δ`` in log-occupancy coordinates (one step is exact
when ``L`` is a linear function plus a multiple of ``Σ d log d``: entropy, KL). Used by
:func:`rltheory.mdp.utility_kkt._certify`. Below, :func:`_feasible_value` evaluates ``F`` at an
occupancy that meets every constraint (``F* ≥`` its value), for
:func:`rltheory.mdp.solve_general_utility`'s ``value_lower_bound``.

References
----------
Boyd, S. & Vandenberghe, L. (2004). *Convex Optimization*. §5.1.3 (weak duality).
Jaggi, M. (2013). Revisiting Frank–Wolfe: projection-free sparse convex optimization. ICML. §2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..backend import to_numpy
from .bellman import occupancy_measure
from .model import FiniteMDP
from .utility_functions import OccupancyFunction

_FLOOR = 2.0**-1000  # stand-in for d̂(s,a) = 0 on an allowed pair (a log gradient is +inf at 0)


def _over(v: float | np.ndarray, r: float) -> float | np.ndarray:
    """``v / r`` for a power of two ``r`` as two exact factors (``1/r`` overflows for subnormal ``r``)."""
    k = math.frexp(float(r))[1] - 1
    h = -k // 2
    return v * 2.0**h * 2.0 ** (-k - h)


def _log_step(
    u: np.ndarray, g: np.ndarray, kappa: np.ndarray, newton: np.ndarray, tau: float
) -> np.ndarray:
    """``u + (g − τ)/κ`` on the ``newton`` pairs (each move clipped to ±700), ``u`` elsewhere."""
    v = u.copy()
    v[newton] = u[newton] + np.clip((g[newton] - tau) / kappa[newton], -700.0, 700.0)
    return v


def _dual_bound(
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
    steps: int = 8,
    delta: float = 1e-4,
) -> float:
    r"""Upper bound on ``F*/ρ`` for the program solved in unit scale (``F/ρ``, ``G_i/ρ_i ≤ b_i/ρ_i``).

    ``x`` is a point ``d[S*A]`` (the solver's; clipped at 0), ``nu`` and ``lam`` are any multipliers of
    the flow equalities and of the ``G_i`` in that scale (``lam`` clipped at 0). The bound of the module
    docstring is evaluated at ``d̂ = x`` and at up to ``steps`` Newton iterates

        log d̂_j ← log d̂_j + (∂_j L(d̂) − τ)/κ_j,    κ_j = −∂(∂_j L)/∂ log d_j,

    ``κ`` by central differences in ``log d`` (all pairs at once), ``τ`` by bisection so that
    ``Σ d̂ = 1``; pairs with ``κ_j`` at round-off level keep their mass. The smallest bound is returned,
    plus an allowance for rounding: ``(SA + m + rows(M) + 4)·ε`` times the sum of the magnitudes of the
    terms added (``ε`` the float64 epsilon), so that the bound holds for the computed values of ``F``,
    ``G_i`` and their gradients. Pairs that a domain forbids (``∂F = −inf`` or ``∂G_i = +inf``, as in
    the KKT residual) are held at 0 in ``d̂`` and left out of the maximum. ``inf`` when no iterate gives
    a finite bound. Cost: ``steps`` times four gradient evaluations and two values of each function.
    """
    rhos = np.asarray(rhos, dtype=float)
    bs = np.array([float(b) for _, b in cons])
    lam = np.maximum(np.asarray(lam, dtype=float), 0.0)
    nu = np.asarray(nu, dtype=float).reshape(-1)
    act = [i for i in range(len(cons)) if lam[i] != 0]
    n = S * A
    with np.errstate(all="ignore"):
        Mnu = M.T @ nu
        nuc = float(nu @ c)
        mag_nuc = float(np.abs(nu) @ np.abs(c))
        mag_Mnu = np.abs(M.T) @ np.abs(nu)
    if not (math.isfinite(nuc) and np.all(np.isfinite(Mnu))):
        return math.inf
    x = np.clip(np.asarray(x, dtype=float).reshape(-1), 0.0, None)
    with np.errstate(all="ignore"):
        gF0 = np.asarray(objective.gradient(x.reshape(S, A)), dtype=float).reshape(-1)
        forbidden = gF0 == -np.inf
        for G, _ in cons:
            forbidden |= np.asarray(G.gradient(x.reshape(S, A)), dtype=float).reshape(-1) == np.inf
    allowed = ~forbidden
    if not allowed.any():
        return math.inf
    slack = (n + len(cons) + M.shape[0] + 4) * np.finfo(float).eps

    def evaluate(dh: np.ndarray) -> tuple[float, np.ndarray]:
        """The bound at ``d̂`` (``inf`` if not finite) and the reduced gradient on the allowed pairs."""
        D = dh.reshape(S, A)
        with np.errstate(all="ignore"):
            gF = _over(np.asarray(objective.gradient(D), dtype=float).reshape(-1)[allowed], rho)
            g = gF - Mnu[allowed]
            Fv = _over(float(objective.value(D)), rho)
            base = Fv - float(gF @ dh[allowed])
            mag = abs(Fv) + float(np.abs(gF) @ dh[allowed])
            row = np.abs(gF) + mag_Mnu[allowed]
            for i in act:
                G = cons[i][0]
                gG = _over(np.asarray(G.gradient(D), dtype=float).reshape(-1)[allowed], rhos[i])
                Gv, bv = _over(float(G.value(D)), rhos[i]), _over(bs[i], rhos[i])
                g = g - lam[i] * gG
                base -= lam[i] * ((Gv - bv) - float(gG @ dh[allowed]))
                mag += lam[i] * (abs(Gv) + abs(bv) + float(np.abs(gG) @ dh[allowed]))
                row = row + lam[i] * np.abs(gG)
            j = int(np.argmax(g))
            ub = base + nuc + float(g[j])
            ub += slack * (mag + mag_nuc + float(np.max(row)))  # (any pair may be the true max)
        return (ub if math.isfinite(ub) and np.all(np.isfinite(g)) else math.inf), g

    dh = np.where(allowed, x, 0.0)
    best, g = evaluate(dh)
    u = np.log(np.where(dh[allowed] > 0, dh[allowed], _FLOOR))
    for _ in range(steps):
        dh = np.zeros(n)
        dh[allowed] = np.exp(u)
        _, g = evaluate(dh)
        if not np.all(np.isfinite(g)):
            break
        up, dn = dh.copy(), dh.copy()
        up[allowed] *= math.exp(delta)
        dn[allowed] *= math.exp(-delta)
        kappa = -(evaluate(up)[1] - evaluate(dn)[1]) / (2 * delta)
        newton = np.isfinite(kappa) & (kappa > 1e-12 * (1.0 + np.abs(g)))
        if not newton.any():
            break
        fixed = float(np.sum(np.exp(u[~newton])))
        if fixed >= 1.0:
            break

        def trial(tau: float) -> np.ndarray:
            return _log_step(u, g, kappa, newton, tau)  # noqa: B023 (used within this iteration)

        lo, hi = float(np.min(g[newton])) - 1.0, float(np.max(g[newton])) + 1.0
        while float(np.sum(np.exp(trial(lo)[newton]))) < 1.0 - fixed and lo > -1e300:
            lo = 2 * lo - hi  # mass grows as τ falls
        while float(np.sum(np.exp(trial(hi)[newton]))) > 1.0 - fixed and hi < 1e300:
            hi = 2 * hi - lo
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:  # adjacent floats
                break
            if float(np.sum(np.exp(trial(mid)[newton]))) > 1.0 - fixed:
                lo = mid
            else:
                hi = mid
        u = trial(0.5 * (lo + hi))
        dh = np.zeros(n)
        dh[allowed] = np.exp(u)
        ub, _ = evaluate(dh)
        if not ub < best:
            best = min(best, ub)
            break
        best = ub
    return float(best)


def _feasible_value(
    mdp: FiniteMDP,
    points: Sequence[np.ndarray | None],
    cons: list,
    objective: OccupancyFunction,
) -> float:
    r"""``F`` at an occupancy that meets every constraint: a lower bound on ``F*`` (``−inf`` if none found).

    Discounted models only (``−inf`` for average reward). Each of ``points`` (``d[S, A]`` or ``d[S*A]``:
    the solver's answer, then a strictly feasible point such as the Slater program's) is replaced by
    the occupancy ``d^π`` of its policy ``π(a|s) ∝ d(s, a)`` (the flow equalities hold to the rounding
    of one linear solve), with ``π = 0`` on the pairs a domain forbids (``∂F = −inf`` or ``∂G_i = +inf``;
    a solver's ``1e-13`` there is outside the KL's support). The first is used if it meets every
    ``G_i ≤ b_i − m_i``, ``m_i`` a rounding margin; else it is mixed with the first later one ``s`` that
    meets the violated ones strictly, at ``θ = max_i (G_i(a) − b_i + m_i)/(G_i(a) − G_i(s))`` (convexity
    gives ``G_i((1−θ)a + θs) ≤ b_i − m_i``; the mixture is checked, and is an occupancy as the flow
    equalities are linear). The margins, and the allowance subtracted from ``F``, cover the occupancy's
    rounding ``‖δd‖₁ ≤ c = 4(SA + S)·ε·(1 + γ)/(1 − γ)`` (the condition number of ``I − γP_π``) times the
    largest finite gradient, plus ``(SA + 4)·ε`` times the magnitudes summed.
    """
    if mdp.gamma is None:
        return -math.inf
    S, A = mdp.S, mdp.A
    eps = float(np.finfo(float).eps)
    c_occ = 4 * (S * A + S) * eps * (1 + float(mdp.gamma)) / (1 - float(mdp.gamma))

    def allowance(f: OccupancyFunction, x: np.ndarray, b: float = 0.0) -> float:
        with np.errstate(all="ignore"):
            g = np.asarray(f.gradient(x), dtype=float)
            fin = np.isfinite(g)
            mag = abs(float(f.value(x))) + abs(b) + float(np.sum(np.abs(g[fin]) * x[fin]))
        return c_occ * float(np.max(np.abs(g[fin]), initial=0.0)) + (S * A + 4) * eps * mag

    def repaired(x: np.ndarray) -> np.ndarray | None:
        x = np.clip(np.asarray(x, dtype=float).reshape(S, A), 0.0, None)
        with np.errstate(all="ignore"):
            bad = np.asarray(objective.gradient(x), dtype=float) == -np.inf
            for G, _ in cons:
                bad |= np.asarray(G.gradient(x), dtype=float) == np.inf
        x = np.where(bad, 0.0, x)
        mass = x.sum(-1, keepdims=True)
        pi = np.where(mass > 0, x / np.where(mass > 0, mass, 1.0), np.where(bad, 0.0, 1.0))
        rows = pi.sum(-1, keepdims=True)
        if np.any(rows <= 0):
            return None
        d = np.asarray(to_numpy(occupancy_measure(mdp, pi / rows)), dtype=float)
        return d if np.all(np.isfinite(d)) else None

    def excess(x: np.ndarray) -> np.ndarray:  # G_i(x) − b_i + m_i
        return np.array([float(G.value(x)) - float(b) + allowance(G, x, float(b)) for G, b in cons])

    def value(x: np.ndarray) -> float:
        v = float(objective.value(x)) - allowance(objective, x)
        return v if math.isfinite(v) else -math.inf

    cands = [c for c in (repaired(p) for p in points if p is not None) if c is not None]
    if not cands:
        return -math.inf
    a, ea = cands[0], excess(cands[0])
    if np.all(ea <= 0):
        return value(a)
    over = ea > 0
    for s in cands[1:]:
        es = excess(s)
        if not np.all(es[over] < 0):
            continue
        theta = float(np.max(ea[over] / (ea[over] - es[over])))
        mix = (1.0 - theta) * a + theta * s
        if np.all(excess(mix) <= 0):
            return value(mix)
    return -math.inf
