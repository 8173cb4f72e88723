r"""Correlated and coarse correlated equilibria of n-player normal-form games.

A normal-form game has payoffs ``U[i, a_1, ..., a_n]`` for players
``i = 0..n−1``. A distribution ``μ`` over joint actions is a

* **correlated equilibrium (CE)** iff no player gains by remapping a
  recommendation: for every ``i`` and ``a_i ≠ a_i'``
  ``Σ_{a_{−i}} μ(a_i, a_{−i}) [U_i(a_i', a_{−i}) − U_i(a_i, a_{−i})] ≤ 0``
  (Aumann 1974; the LP form is Papadimitriou & Roughgarden 2008, §2);
* **coarse correlated equilibrium (CCE)** iff no player gains by ignoring the
  recommendation: for every ``i`` and ``a_i'``
  ``Σ_a μ(a) [U_i(a_i', a_{−i}) − U_i(a)] ≤ 0`` (Hannan 1957; Moulin & Vial 1978).

Every Nash equilibrium (as a product distribution) is a CE and every CE is a
CCE: ``Nash ⊆ CE ⊆ CCE``. Both sets are polytopes, so the max-welfare point is an
LP (HiGHS here) and the max-entropy CE a convex program (cvxpy). All routines are
host-only.

References
----------
Aumann, R. J. (1974). Subjectivity and correlation in randomized strategies. J. Math. Econ. 1.
Hannan, J. (1957). Approximation to Bayes risk in repeated play. Contributions to the Theory
of Games III.
Moulin, H. & Vial, J.-P. (1978). Strategically zero-sum games. Int. J. Game Theory 7.
Papadimitriou, C. H. & Roughgarden, T. (2008). Computing correlated equilibria in
multi-player games. J. ACM 55(3), §2 (the CE linear program).
Ortiz, L. E., Schapire, R. E. & Kakade, S. M. (2007). Maximum entropy correlated
equilibria. AISTATS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import higham_gamma, highs_linprog, subnormal_spacing, unit_range
from .._validate import _renormalised, _source_atol, _where, check_finite
from ..backend import _rectangular, as_float, require_host
from ..errors import InvalidModelError, SolverError

__all__ = [
    "CorrelatedEquilibrium",
    "as_normal_form",
    "ce_constraints",
    "cce_constraints",
    "ce_gap",
    "cce_gap",
    "max_welfare_ce",
    "max_welfare_cce",
    "max_entropy_ce",
]


def as_normal_form(U: Any) -> np.ndarray:
    """Validate payoffs ``U[i, a_1, ..., a_n]`` (n = U.shape[0] players, host array).

    Raises
    ------
    InvalidModelError
        ``U.ndim != U.shape[0] + 1``, an empty action set, or a non-finite payoff.
    TypeError
        Text or complex payoffs (a cast would parse the text or drop the imaginary parts), or a
        device array.
    ValueError
        A ragged list of payoffs ("U must be a rectangular array of numbers ...").
    """
    if isinstance(U, (list, tuple)):  # a ragged list: named here, not numpy's unlocated error
        U = _rectangular(U, "U")
    U = require_host(U, "normal-form equilibrium solvers")
    U = np.asarray(as_float(U, np, field="U"), dtype=np.float64)  # text and complex refused
    if U.ndim < 2 or U.ndim != U.shape[0] + 1:
        raise InvalidModelError(
            f"U must have shape (n, A_1, ..., A_n) with one payoff table per player; got shape {U.shape}"
        )
    if min(U.shape[1:]) < 1:
        raise InvalidModelError(f"U needs at least one action per player; got shape {U.shape}")
    check_finite(U, "U", ("i",) + tuple(f"a{k + 1}" for k in range(U.shape[0])))
    return U


def _deviation_gains(U: np.ndarray, i: int) -> np.ndarray:
    """``D[a_i, a_i', rest] = U_i(a_i', rest) − U_i(a_i, rest)`` with player i's axis first.

    A gain beyond the float range (payoffs of both signs near ``±1.8e308``) is ``±inf``, the only
    float bound of it, without numpy's overflow warning.
    """
    Ui = np.moveaxis(U[i], i, 0)
    with np.errstate(over="ignore"):
        return Ui[None, :, ...] - Ui[:, None, ...]


def ce_constraints(U: Any) -> np.ndarray:
    r"""CE incentive matrix ``G`` (rows ``(i, a_i, a_i')``, ``a_i ≠ a_i'``): μ is a CE iff ``G vec(μ) ≤ 0``.

    ``G[(i, a_i, a_i'), a] = 1[a_i(a) = a_i] · (U_i(a_i', a_{−i}) − U_i(a))``; ``vec`` is
    C-order flattening of ``μ[a_1, ..., a_n]``. An entry whose gain is beyond the float range
    is ``±inf`` (:func:`ce_gap` and the solvers scale such payoffs first).
    """
    U = as_normal_form(U)
    n, shape = U.shape[0], U.shape[1:]
    rows = []
    for i in range(n):
        Ai = shape[i]
        D = _deviation_gains(U, i)  # (Ai, Ai', rest)
        G = np.zeros((Ai, Ai) + (Ai,) + D.shape[2:])
        for ai in range(Ai):
            G[ai, :, ai] = D[ai]
        G = np.moveaxis(G, 2, 2 + i)  # joint-action layout
        keep = ~np.eye(Ai, dtype=bool)
        rows.append(G[keep].reshape(Ai * (Ai - 1), int(np.prod(shape))))
    return np.concatenate(rows, axis=0)


def cce_constraints(U: Any) -> np.ndarray:
    r"""CCE incentive matrix ``G`` (rows ``(i, a_i')``): μ is a CCE iff ``G vec(μ) ≤ 0``.

    ``G[(i, a_i'), a] = U_i(a_i', a_{−i}) − U_i(a)``. Each row is the sum over ``a_i`` of the
    CE rows ``(i, a_i, a_i')``, hence CE ⊆ CCE. An entry beyond the float range is ``±inf``.
    """
    U = as_normal_form(U)
    n = U.shape[0]
    rows = []
    for i in range(n):
        D = _deviation_gains(U, i)  # (Ai, Ai', rest)
        G = np.moveaxis(np.swapaxes(D, 0, 1), 1, 1 + i)  # (Ai', joint a)
        rows.append(G.reshape(G.shape[0], int(np.prod(U.shape[1:]))))
    return np.concatenate(rows, axis=0)


def _as_joint(U: np.ndarray, mu: Any) -> np.ndarray:
    """``mu[a_1, ..., a_n]`` checked as a distribution over joint actions, flattened (C order).

    A float32 ``mu`` is judged at float32's row-sum tolerance and renormalised in float64.
    """
    if isinstance(mu, (list, tuple)):  # a ragged list: named here, not numpy's unlocated error
        mu = _rectangular(mu, "mu")
    mu = require_host(mu, "correlated equilibrium checks")
    mu = as_float(mu, np, field="mu")  # text and complex refused; a float32 mu stays float32 here
    atol = _source_atol(mu, np)
    mu = np.asarray(mu, dtype=np.float64)
    if mu.shape != U.shape[1:]:
        raise ValueError(
            f"mu must have the joint-action shape {U.shape[1:]} of U (shape {U.shape}); got {mu.shape}"
        )
    names = tuple(f"a{k + 1}" for k in range(mu.ndim))
    check_finite(mu, "mu", names)
    if np.any(mu < -atol):
        idx = tuple(int(i) for i in np.unravel_index(np.argmin(mu), mu.shape))
        raise InvalidModelError(
            f"mu must be non-negative; most negative entry mu{_where(idx, names)} = {mu[idx]:.6g}"
        )
    flat = mu.reshape(-1)
    total = float(np.sum(flat))
    if abs(total - 1.0) > atol * (1.0 + flat.size**0.5):
        raise InvalidModelError(
            f"mu must sum to 1 over the joint actions (atol={atol:g}); it sums to {total:.12g}"
        )
    return _renormalised(flat, atol, np)


def _certified_worst(G: np.ndarray, mu: np.ndarray, c: np.ndarray | None = None) -> float:
    r"""``max(0, max_r (G vec μ)_r)`` for the exact differences of ``U`` and ``μ/Σμ``, bounded above.

    Each computed row ``(Gμ)_r`` gets its round-off allowance ``e_r``, and the result is
    ``max(0, max_r((Gμ)_r + e_r))``, rounded upwards: never below the exact largest violation
    of the normalised ``μ̂ = μ/σ``. With ``u`` the unit roundoff, ``γ_k = ku/(1 − ku)`` (Higham
    2002, Lemma 3.1, eq. (3.4)), ``g_r = max_k |G_rk|`` (each stored entry is one rounded
    difference of payoffs, within ``u`` of the exact one, so the exact entries are at most
    ``g_r(1 + 2u)``), ``l ≥ Σ|μ_k|``, ``d ≥ |σ − 1|`` (the computed sum's distance from 1 plus
    ``γ_K l``) and ``L = l/(1 − d) ≥ ‖μ̂‖₁``: ``e_r = g_r(1 + 2u)((γ_K(1 + u) + u) l + d L)``.
    Rows are scaled by their own ``g_r``, so one player's payoffs of size 1e9 do not swamp
    another's of size 1e-12 (the same Higham ``γ`` plus stored-sum defect as
    :func:`rltheory.games.matrix._gap_allowance`). Underflow, which the relative model leaves out
    (a product with a subnormal result errs by up to half the subnormal spacing ``s``, Higham
    2002, eq. (2.8)), adds ``η = 2(K + 4)s`` to every row: ``K`` products per row, counted four
    times over with the few of the allowance. Without it, payoffs ~1e-310 gave CE/CCE gaps below
    the exact ones in 182 of 400 probes (exact rational reference).

    ``c`` (one power of two per row, default 1) says that row ``r`` of ``G`` belongs to payoffs
    divided by ``c_r`` (:func:`_scaled_payoffs`): the row's bound is multiplied back by ``c_r``,
    ``inf`` (without an overflow warning) where that leaves the float range.
    """
    if not G.shape[0]:
        return 0.0
    K = G.shape[1]
    u = float(np.finfo(np.float64).eps) / 2.0
    gK = higham_gamma(K, u)
    l1 = float(np.sum(np.abs(mu))) / (1.0 - gK)
    d = abs(float(np.sum(mu)) - 1.0) + gK * l1
    if d >= 0.5:  # not reachable for a validated distribution (its sum is within 1e-8 of 1)
        return math.inf
    g = np.max(np.abs(G), axis=1) * (1.0 + 2.0 * u)
    eta = 2.0 * (K + 4) * subnormal_spacing(np.float64, np)
    e = g * ((gK * (1.0 + u) + u) * l1 + d * l1 / (1.0 - d)) + eta
    bound = (G @ mu + e) * (1.0 + 8.0 * u)
    if np.any(np.isnan(bound)):  # not reachable for finite G and mu; a NaN must not read as 0
        return math.nan
    if c is not None:
        lim = float(np.finfo(np.float64).max) / c
        bound = np.where(bound > lim, math.inf, np.clip(bound, -lim, lim) * c)
    return max(0.0, float(np.max(bound)))


def _scaled_payoffs(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""``(U', c)``: ``U'_i = U_i/c_i`` with ``c_i = 4`` for a player with a payoff beyond a quarter of
    the float range, else 1.

    Player ``i``'s incentive rows only involve ``U_i``, and a positive factor on ``U_i`` leaves its
    CE/CCE constraints unchanged and multiplies their gains by it. On ``U`` itself a difference
    ``U_i(a_i', a_{−i}) − U_i(a)`` of payoffs ``±1e308`` overflowed to ``±inf``, the product with a zero
    probability was NaN, and the gap of a distribution that is no CE (exact gain 2e308) read 0.
    The division is exact (a power of two) except for entries below ``2^-1020``, whose rounding
    (at most ``s/2`` each, ``s`` the subnormal spacing) the underflow term of
    :func:`_certified_worst` covers.
    """
    big = np.max(np.abs(U.reshape(U.shape[0], -1)), axis=1) > float(np.finfo(np.float64).max) / 4.0
    c = np.where(big, 4.0, 1.0)
    return U / c.reshape((-1,) + (1,) * (U.ndim - 1)), c


def _row_scales(U: np.ndarray, c: np.ndarray, coarse: bool) -> np.ndarray:
    """Each incentive row's player scale ``c_i`` (rows ordered by player, as the constraint builders do)."""
    counts = [a if coarse else a * (a - 1) for a in U.shape[1:]]
    return np.repeat(c, counts)


def _gap(U: np.ndarray, mu: np.ndarray, coarse: bool) -> float:
    """The certified CE (``coarse=False``) or CCE gap of the flat distribution ``mu``, at any payoff size."""
    Us, c = _scaled_payoffs(U)
    G = cce_constraints(Us) if coarse else ce_constraints(Us)
    return _certified_worst(G, mu, _row_scales(U, c, coarse))


def ce_gap(U: Any, mu: Any) -> float:
    r"""Largest gain from a recommendation swap, ``max_{i, a_i, a_i'} (G vec μ)``, clipped below at 0.

    Zero iff ``μ`` is a CE. (Per-recommendation gains; a player's total swap-regret is
    the sum over ``a_i`` of the best swap, bounded by ``A_i`` times this.) The computed rows
    carry their round-off allowance (:func:`_certified_worst`, about ``K·u`` times the row's
    payoff differences, ``K`` joint actions): the value returned is never below the exact gap of
    ``μ/Σμ``, so it is tiny but not 0 where a constraint is tight. (The computed gain alone was
    0 for LP solutions whose exact gain was positive.)

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[[1.0, -1.0], [-1.0, 1.0]], [[-1.0, 1.0], [1.0, -1.0]]])
    >>> bool(ce_gap(U, np.full((2, 2), 0.25)) <= 1e-14)
    True
    """
    U = as_normal_form(U)
    return _gap(U, _as_joint(U, mu), coarse=False)


def cce_gap(U: Any, mu: Any) -> float:
    r"""Largest gain from ignoring the recommendation, ``max_{i, a_i'} (G vec μ)``, clipped at 0.

    With the round-off allowance of :func:`ce_gap`: never below the exact gap of ``μ/Σμ``.
    """
    U = as_normal_form(U)
    return _gap(U, _as_joint(U, mu), coarse=True)


@dataclass(frozen=True, eq=False)
class CorrelatedEquilibrium:
    """A correlated distribution ``distribution[a_1, ..., a_n]`` with its certificate.

    Attributes
    ----------
    distribution : numpy array
    payoffs : numpy array, shape (n,)
        ``E_μ[U_i]`` for each player.
    welfare : float
        ``Σ_i E_μ[U_i]``.
    gap : float
        Largest incentive constraint violation (``ce_gap`` or ``cce_gap``), ≥ 0, with its
        round-off allowance: never below the exact violation of ``distribution``.
    """

    distribution: np.ndarray
    payoffs: np.ndarray
    welfare: float
    gap: float


def _row_normalised(G: np.ndarray) -> np.ndarray:
    """Each incentive row ``G_r`` divided by its largest ``|entry|`` (all-zero rows kept).

    ``G_r μ ≤ 0`` is unchanged by a positive factor per row, so the polytope is the same; the
    solver's absolute tolerances (feasibility ``1e-7``, entries below ``1e-9`` dropped) then hold
    every player's constraints to the same relative accuracy. One common map of all payoffs is
    not enough: with player 1's payoffs of size 1e-12 and player 2's of size 1e9, player 1's rows
    fell below the solver's resolution and the "CE" returned let player 1 gain 1.46 (its own
    payoff range) by a swap.
    """
    scale = np.max(np.abs(G), axis=1, initial=0.0)
    return G / np.where(scale > 0.0, scale, 1.0)[:, None]


def _finish(U: np.ndarray, mu: np.ndarray, coarse: bool) -> CorrelatedEquilibrium:
    mu = np.clip(mu, 0.0, None)
    mu /= mu.sum()
    Us, c = _scaled_payoffs(U)  # E_μ U_i = c_i E_μ U'_i: in range wherever the exact payoff is
    with np.errstate(over="ignore"):
        pay = (Us.reshape(U.shape[0], -1) @ mu) * c
    return CorrelatedEquilibrium(
        distribution=mu.reshape(U.shape[1:]),
        payoffs=pay,
        welfare=float(sum(pay.tolist())),  # Python floats: inf beyond the range, without a warning
        gap=_gap(U, mu, coarse),
    )


def _highs_chain(c: np.ndarray, **kwargs: Any) -> Any:
    """``linprog`` by :func:`rltheory._numerics.highs_linprog` (tolerances ``1e-10``, entries down to
    ``1e-12`` kept, interior point on numerical trouble), then HiGHS at its defaults, then without
    presolve, until one reports success; the last result otherwise.

    On incentive rows with entries of ``1e-10`` next to entries of 1 (small integer payoffs plus
    ``1e-9`` noise) HiGHS at its defaults called the welfare LP of a 3×3 game, whose feasible set
    is a polytope in the simplex, unbounded (the same from the dual simplex and interior point),
    and the tight solve is the one that keeps those entries. Each fallback is the setting the
    solvers used before, so no LP that solved fails now.
    """
    from scipy.optimize import linprog  # noqa: PLC0415

    res = highs_linprog(c, **kwargs)
    for options in ({}, {"presolve": False}):
        if res.status == 0:
            break
        res = linprog(c, method="highs", options=options, **kwargs)
    return res


def _max_welfare(U: np.ndarray, coarse: bool, what: str) -> CorrelatedEquilibrium:
    Us, c = _scaled_payoffs(U)
    # the same welfare maximisers, with an objective of size one: one common factor for all players
    # (welfare weights stay equal), then one common affine map
    (Un,) = unit_range(U / float(np.max(c)))
    # the same CE/CCE set, every row of size one (per-player factors keep each player's polytope)
    Gn = _row_normalised(cce_constraints(Us) if coarse else ce_constraints(Us))
    K = Gn.shape[1]
    cost = -Un.reshape(Un.shape[0], -1).sum(0)
    A_ub, b_ub = (Gn, np.zeros(Gn.shape[0])) if Gn.shape[0] else (None, None)
    res = _highs_chain(
        cost, A_ub=A_ub, b_ub=b_ub, A_eq=np.ones((1, K)), b_eq=[1.0], bounds=(0, None)
    )
    if res.status != 0:
        raise SolverError(f"{what}: HiGHS failed: {res.message}", status=res.status)
    return _finish(U, res.x, coarse)


def max_welfare_ce(U: Any) -> CorrelatedEquilibrium:
    r"""Correlated equilibrium maximising welfare: ``max_μ Σ_i E_μ U_i`` s.t. CE constraints.

    LP over the ``Π_i A_i`` joint-action probabilities with ``Σ_i A_i(A_i − 1)`` incentive
    constraints (Papadimitriou & Roughgarden 2008, §2), solved by HiGHS. Host-only.

    Examples
    --------
    Chicken (Aumann 1974): the welfare-optimal CE puts 1/2 on (swerve, swerve) and 1/4 on
    each asymmetric outcome, paying 5.25 to each player — more than any Nash equilibrium's 4.67.

    >>> from rltheory.games.zoo import chicken
    >>> ce = max_welfare_ce(chicken())
    >>> round(ce.welfare, 9), ce.gap <= 1e-9
    (10.5, True)
    """
    return _max_welfare(as_normal_form(U), False, "max_welfare_ce")


def max_welfare_cce(U: Any) -> CorrelatedEquilibrium:
    r"""Coarse correlated equilibrium maximising welfare (LP with ``Σ_i A_i`` constraints)."""
    return _max_welfare(as_normal_form(U), True, "max_welfare_cce")


# The max-entropy CE (support LP, dual Newton, KKT active set) lives in its own module; it
# is re-exported here so that every name stays importable from this module. The import sits
# below the definitions it uses (correlated_entropy imports them from this module).
from .correlated_entropy import max_entropy_ce  # noqa: E402
