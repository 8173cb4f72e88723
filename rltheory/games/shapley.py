r"""Shapley value iteration for zero-sum Markov games, with certified stopping.

Shapley's operator maps ``V[..., S]`` to the values of the stage games

    ``(T V)(s) = val[ Q_V(s, ·, ·) ]``,  ``Q_V(s, a, b) = r(s, a, b) + γ Σ_s' P(s'|s, a, b) V(s')``,

where ``val`` is the minimax value of a matrix game. Because ``|val M − val M'| ≤
max|M − M'|``, ``T`` is a γ-contraction in ``‖·‖∞`` whose fixed point is the game's
value ``V*`` (Shapley 1953, Theorem 1), so value iteration ``V_{k+1} = T V_k``
converges geometrically, ``‖V_k − V*‖∞ ≤ γ^k ‖V_0 − V*‖∞``, and the a-posteriori bound

    ``‖V_{k+1} − V*‖∞ ≤ γ/(1−γ) ‖V_{k+1} − V_k‖∞``

certifies the stopping point. Each sweep solves the ``S`` stage games of every
game in the batch with ONE call of the batched kernel
:func:`~rltheory.games.matrix.solve_zero_sum`.

References
----------
Shapley, L. S. (1953). Stochastic games. PNAS 39(10), 1095–1100, Theorem 1 and §3.
Filar, J. & Vrieze, K. (1997). *Competitive Markov Decision Processes*, §4.3 (Shapley's
theorem), Thm 4.3.2.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import contraction_steps
from .._validate import check_finite, check_tolerance
from ..backend import to_numpy
from ..errors import ConvergenceWarning
from ..mdp.bellman import evaluate_policy
from ..mdp.discounted import _Roundoff
from ..mdp.model import FiniteMDP
from ..trace import Trace, TraceRecorder
from .markov import ZeroSumMarkovGame, _values_in_dtype, check_batches
from .matrix import solve_zero_sum

__all__ = [
    "ShapleyStep",
    "ShapleyResult",
    "shapley_operator",
    "shapley_value_iteration",
    "evaluate_policy_pair",
]


@dataclass(frozen=True, eq=False)
class ShapleyStep:
    """One application of Shapley's operator: ``TV`` and the stage-game solutions.

    ``x[..., S, A]`` and ``y[..., S, B]`` are maximin/minimax strategies of the computed stage
    games ``Q̃_V(s)`` and ``gap[..., S]`` their duality-gap certificates: ``|TV − val Q̃_V| ≤ gap``
    (the rounding of ``Q̃_V`` is not included; :func:`shapley_operator`, Notes).
    """

    TV: Any
    x: Any
    y: Any
    gap: Any


def _check_game(game: Any, name: str) -> ZeroSumMarkovGame:
    if not isinstance(game, ZeroSumMarkovGame):
        raise TypeError(f"{name} expects a ZeroSumMarkovGame; got {type(game).__name__}")
    return game


def shapley_operator(game: ZeroSumMarkovGame, V: Any) -> ShapleyStep:
    r"""``(T V)(s) = max_{x ∈ Δ_A} min_{y ∈ Δ_B} xᵀ Q_V(s) y`` for every state (one batched solve).

    Parameters
    ----------
    game : ZeroSumMarkovGame
    V : array, shape (..., S)

    Returns
    -------
    ShapleyStep

    Raises
    ------
    ValueError
        ``V`` not of shape ``(..., S)`` with a batch that broadcasts against the game's, not
        finite, or beyond the game's dtype (the entry located); or stage payoffs that can reach
        ``max|r| + γ‖V‖∞`` above half the dtype's largest number (they would overflow).

    Notes
    -----
    γ-contraction in ``‖·‖∞`` and monotone (Shapley 1953, Thm 1). The stage games
    ``Q̃ = fl(r + γPV)`` are solved by :func:`~rltheory.games.matrix.solve_zero_sum` (the batched
    simplex kernel, HiGHS where its computed gap exceeds ``1e-9·range``); ``gap`` bounds
    ``|TV(s) − val Q̃(s)|`` and includes the solve's round-off allowance, about
    ``(A + B + 6)·u·max|Q̃|``, so it is not bounded by ``1e-9·max(1, range)`` (a stage game
    ``1e9 + O(1e-3)`` has gap ``4e-6``). It does not count the rounding of ``Q̃`` itself: against
    the exact ``(TV)(s)`` add ``e(V) = a·max|r| + γ(a + δ)‖V‖∞`` (see
    :func:`shapley_value_iteration`, which does; 40 states with ``|V| ~ 1e6`` and ``PV(0) ≈ 0``:
    ``|TV(0) − (TV)(0)| = 5e-12``, ``gap = 6e-26``).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.games.zoo import matching_pennies
    >>> g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), matching_pennies()[None], 0.5)
    >>> float(shapley_operator(g, np.array([2.0])).TV[0])   # 0 + 0.5 · 2
    1.0
    """
    game = _check_game(game, "shapley_operator")
    V = _values_in_dtype(game, V, "V")
    if tuple(V.shape[-1:]) != (game.S,):
        raise ValueError(f"V must have shape (..., S) = (..., {game.S}); got {tuple(V.shape)}")
    check_batches([("the game", game.batch_shape), ("V", tuple(V.shape[:-1]))])
    check_finite(V, "V", ("s",))
    _check_range(game, V, sweeps=False)
    return _shapley_operator(game, V)


def _shapley_operator(game: ZeroSumMarkovGame, V: Any) -> ShapleyStep:
    """:func:`shapley_operator` on a validated ``V`` (the value-iteration loop)."""
    sol = solve_zero_sum(game._stage_games(V))
    return ShapleyStep(sol.value, sol.x, sol.y, sol.gap)


@dataclass(frozen=True, eq=False)
class ShapleyResult:
    """Result of :func:`shapley_value_iteration`.

    Attributes
    ----------
    V : array, shape (..., S)
        Value estimate, ``‖V − V*‖∞ ≤ bound``.
    policies : tuple (x[..., S, A], y[..., S, B])
        Stationary maximin/minimax policies: solutions of the stage games at ``V``.
    iterations : int
    converged : bool
    bound : array, shape (...)
        ``(γ(1+2u)‖V − V_prev‖∞ + ρ)/(1−γ)`` (a-posteriori bound on ``‖V − V*‖∞``), where ``ρ``
        bounds the error of the computed sweep ``V = T̃ V_prev`` against the exact ``T V_prev``:
        the stage games' largest duality gap (round-off included) plus the rounding
        ``e(V_prev) = a·max|r| + γ(a + δ)‖V_prev‖∞`` of ``Q = r + γPV_prev`` (``a = γ_{S+2}``,
        ``δ`` the row-sum defect of the stored ``P``; :class:`rltheory.mdp.discounted._Roundoff`).
    policy_bound : array, shape (...)
        Certified exploitability of ``policies`` at every state:
        ``V^{BR,y} − V^{x,BR} ≤ 2((1+2u)‖T̃V − V‖∞ + max_s gap_s + e(V))/(1−γ)``.
    trace : Trace
        ``delta`` (``‖V_{k+1} − V_k‖∞``), ``bound`` and ``stage_gap`` per sweep.
    """

    V: Any
    policies: tuple[Any, Any]
    iterations: int
    converged: bool
    bound: Any
    policy_bound: Any
    trace: Trace


def shapley_value_iteration(
    game: ZeroSumMarkovGame, *, tol: float = 1e-8, max_iter: int | None = None, V0: Any = None
) -> ShapleyResult:
    r"""Shapley value iteration ``V_{k+1} = T V_k`` until ``(γ‖V_{k+1} − V_k‖∞ + ρ_k)/(1−γ) ≤ tol``.

    Parameters
    ----------
    game : ZeroSumMarkovGame
        Possibly batched; all games are swept together.
    tol : float, default 1e-8
        Target for the certified error ``‖V − V*‖∞`` (any real number > 0, numpy scalars included).
    max_iter : int, optional
        Sweep cap; default is the a-priori count
        ``⌈log(tol(1−γ)/(2γ‖TV_0 − V_0‖∞)) / log γ⌉ + 2``: the contraction part of the bound
        reaches ``tol/2``, enough whenever the round-off floor ``ρ/(1−γ)`` (Notes) is at most
        ``tol/2``. A floor above ``tol`` stops the sweeps early; one between ``tol/2`` and
        ``tol`` may need a larger ``max_iter``.
    V0 : array (..., S), optional
        Initial values (zeros).

    Returns
    -------
    ShapleyResult
        ``.V``, ``.policies = (x, y)``, ``.trace`` plus the certificates.

    Raises
    ------
    ValueError
        Bad ``tol``, ``max_iter`` or ``V0`` (an entry beyond the game's dtype located), an empty
        batch; or a game whose values and stage payoffs can reach
        ``max(max|r| + γ‖V_0‖∞, max|r|/(1−γ))`` above a quarter of the dtype's largest number, where
        the sweeps would overflow (the message names the instance and the bound; values scale with
        ``r``, so the game can be solved with ``r`` divided by a power of 2).

    Warns
    -----
    ConvergenceWarning
        ``max_iter`` reached before the stopping rule held (``converged=False``).

    Notes
    -----
    Shapley (1953, Thm 1): ``T`` is a γ-contraction, so ``‖V_k − V*‖∞ ≤ γ^k‖V_0 − V*‖∞``
    and ``‖V_{k+1} − V*‖∞ ≤ γ/(1−γ)‖V_{k+1} − V_k‖∞`` for the exact operator. The computed
    sweep ``V_{k+1} = T̃ V_k`` differs from ``T V_k`` by at most ``ρ_k`` = the largest stage-game
    duality gap (``|value − val Q̃| ≤ gap``, round-off of the stage solve included) plus the
    worst-case rounding ``e(V_k) = a·max|r| + γ(a + δ)‖V_k‖∞`` of the computed stage payoffs
    ``Q̃ = r + γPV_k`` (``|val Q̃ − val Q| ≤ max|Q̃ − Q|``; ``a = γ_{S+2}`` for sums of ``S + 1``
    terms, Higham 2002, Lemma 3.1; ``δ`` the row-sum defect of the stored ``P``, whose
    stochastic ``P/σ`` is the model certified — the MDP solvers'
    :class:`rltheory.mdp.discounted._Roundoff`), and then
    ``‖V_{k+1} − V*‖∞ ≤ ρ_k + γ‖V_k − V*‖∞`` gives the certified
    ``bound = (γ(1+2u)‖V_{k+1} − V_k‖∞ + ρ_k)/(1−γ)`` (``2u``: the rounding of the computed
    difference). Its floor ``ρ/(1−γ)`` is the attainable accuracy: a ``tol`` below it (e.g.
    ``1e-8`` with payoffs of size ``1e9``, or float32 at γ close to 1) stops once the
    contraction part is at ``ρ`` and ends with ``converged=False`` and a warning naming the
    floor, rather than a bound that round-off has made false (without ``ρ``, ``δ = 0`` at a
    floating-point fixed point certified ``bound = 0`` while ``‖V − V*‖∞`` was 1e-3; with one
    ulp of the stage payoffs for ``ρ``, a float32 one-state game had ``‖V − V*‖∞`` 2.3 times
    its bound, and a float32 policy with loss 0.0097 had ``policy_bound = 0``). After
    stopping, the stage games at the returned ``V`` are solved once more; their strategies
    ``(x, y)`` satisfy ``‖V^{x,BR} − V‖∞, ‖V^{BR,y} − V‖∞ ≤ (‖TV − V‖∞ + max gap + e(V))/(1−γ)``
    (the operator ``W ↦ min_ν T^{x,ν} W`` is a γ-contraction with fixed point ``V^{x,BR}`` and
    moves ``V`` by at most ``‖TV − V‖∞ + gap + e(V)``), which gives ``policy_bound``. Cost per sweep: one
    batched matrix-game solve over ``S × batch`` stage games plus ``O(S²AB)``.

    References
    ----------
    Shapley (1953), Theorem 1; Filar & Vrieze (1997), Thm 4.3.2.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.games.zoo import matching_pennies
    >>> g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), matching_pennies()[None] + 1.0, 0.9)
    >>> res = shapley_value_iteration(g)
    >>> round(float(res.V[0]), 6), res.converged          # value 1/(1 − 0.9)
    (10.0, True)
    """
    game = _check_game(game, "shapley_value_iteration")
    if 0 in game.batch_shape:  # numpy's reductions failed on it ("zero-size array to reduction")
        raise ValueError(
            f"shapley_value_iteration: the batch is empty (batch_shape {game.batch_shape}); there is "
            f"nothing to solve"
        )
    # numbers.Real / numbers.Integral: numpy scalars too (a float32 game's own bound is a
    # np.float32, a size computed with numpy a np.int64); bools (np.bool_ is not Integral) refused
    if isinstance(tol, bool) or not (isinstance(tol, numbers.Real) and tol > 0):
        raise ValueError(f"tol must be a positive number; got {tol!r}")
    tol = check_tolerance(float(tol))  # finite
    if max_iter is not None and (
        isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1
    ):
        raise ValueError(f"max_iter must be a positive integer or None; got {max_iter!r}")
    max_iter = None if max_iter is None else int(max_iter)
    xp, g = game.xp, game.gamma
    V = (
        xp.zeros(game.batch_shape + (game.S,), dtype=game.dtype, device=game.P.device)
        if V0 is None
        else _values_in_dtype(game, V0, "V0")
    )
    if tuple(V.shape) != game.batch_shape + (game.S,):
        raise ValueError(f"V0 must have shape {game.batch_shape + (game.S,)}; got {tuple(V.shape)}")
    check_finite(V, "V0", ("s",))
    _check_range(game, V)
    rec = TraceRecorder()
    step = _shapley_operator(game, V)
    fac = g / (1.0 - g)
    if max_iter is None:
        d0 = float(xp.max(xp.abs(step.TV - V))) if game.S else 0.0
        # the contraction part γ^k·γ/(1−γ)·d0 to tol/2, leaving tol/2 for the round-off floor
        # ρ/(1−γ) of the bound (counted to tol, a floor of 3e-11 left a γ = 0.99 game at bound
        # 1.3e-10 > tol = 1e-10 when the cap was hit, though a few more sweeps certify it)
        half = tol / 2.0
        if d0 > 0.0 and not math.isfinite(fac * d0):  # γ/(1−γ)·d0 beyond the float range: in logs
            steps = math.ceil((math.log(fac) + math.log(d0) - math.log(half)) / -math.log(g))
        else:
            steps = contraction_steps(g, fac * d0, half)
        max_iter = max(2, steps + 2)
    converged = False
    it = 0
    bound = None
    # per-sweep error of the computed TV against the exact operator: the stage games' duality
    # gaps (round-off included) plus the rounding of Q = R + γPV, e(V) = aR + γ(a + δ)‖V‖∞
    # (Higham's γ_{S+2} and the stored P's row-sum defect; the MDP solvers' _Roundoff)
    ro = _roundoff(game)
    for it in range(1, max_iter + 1):
        TV = step.TV
        delta = xp.max(xp.abs(TV - V), axis=-1)
        rho = xp.max(step.gap, axis=-1) + ro.sweep(V)
        contraction = (g * (1.0 + 2.0 * ro.u)) * delta  # 2u: rounding of TV − V and of |·|
        bound = (contraction + rho) / (1.0 - g)
        V = TV
        step = _shapley_operator(game, V)
        rec.record(it, delta=delta, bound=bound, stage_gap=xp.max(step.gap, axis=-1))
        if bool(xp.all(bound <= tol)):
            converged = True
            break
        # an instance whose allowance alone exceeds tol cannot be certified to tol: done once
        # its contraction part is at the allowance (further sweeps only move it by round-off)
        if bool(xp.all((bound <= tol) | ((rho > (1.0 - g) * tol) & (contraction <= rho)))):
            break
    if not converged:
        floor = float(xp.max(rho)) / (1.0 - g)
        why = (
            f"the round-off floor rho/(1-gamma) = {floor:.3g} (duality gaps plus the rounding of "
            f"Q = r + gamma P V) exceeds tol={tol:g}"
            if floor > tol
            else f"hit max_iter={max_iter} with bound {float(xp.max(bound)):.3g} > tol={tol:g}"
        )
        warnings.warn(f"shapley_value_iteration {why}", ConvergenceWarning, stacklevel=2)
    res_next = (1.0 + 2.0 * ro.u) * xp.max(xp.abs(step.TV - V), axis=-1)
    pol_bound = 2.0 * (res_next + xp.max(step.gap, axis=-1) + ro.sweep(V)) / (1.0 - g)
    return ShapleyResult(V, (step.x, step.y), it, converged, bound, pol_bound, rec.finish())


def _check_range(game: ZeroSumMarkovGame, V0: Any, *, sweeps: bool = True) -> None:
    r"""Refuse a game whose iterates can leave the float range (located ``ValueError``).

    From ``V_0`` every iterate and stage payoff obeys ``‖V_k‖∞, |Q_{V_k}| ≤ M = max(max|r| +
    γ‖V_0‖∞, max|r|/(1−γ))`` (``‖TV‖∞ ≤ max|r| + γ‖V‖∞``), and the sweep differences ``TV − V``
    are at most ``2M``; ``M`` up to a quarter of the dtype's largest number keeps all of them
    (and the stage solver's rescaling) finite. Beyond it the sweep formed ``inf`` stage payoffs.
    ``sweeps=False`` checks one application of the operator: ``M = max|r| + γ‖V_0‖∞`` up to half
    the largest number (only ``Q`` must be finite; the stage solver rescales finite payoffs).
    """
    xp = game.xp
    if math.prod(game.R.shape) == 0:
        return
    # V's batch may be broader than the game's (shapley_operator broadcasts them): locate in both
    lead = check_batches([("the game", game.batch_shape), ("V", tuple(V0.shape[:-1]))])
    r_max = xp.max(xp.abs(xp.reshape(game.R, game.batch_shape + (-1,))), axis=-1)
    v_max = xp.max(xp.abs(V0), axis=-1)
    g, big = game.gamma, float(xp.finfo(game.dtype).max)
    # M ≤ big/4 without forming M (no overflow): halves of the two terms, and r_max ≤ (1−γ)·big/4
    # one application needs only Q finite (the stage solver rescales any finite payoffs): M ≤ big/2
    limit = big / 4.0 if sweeps else big / 2.0
    ok = 0.5 * r_max + (0.5 * g) * v_max <= limit / 2.0
    if sweeps:
        ok = ok & (r_max <= (1.0 - g) * (big / 4.0))
    if bool(xp.all(ok)):
        return
    r_h = np.broadcast_to(to_numpy(r_max).astype(float), lead)
    v_h = np.broadcast_to(to_numpy(v_max).astype(float), lead)
    rank = r_h / big + g * (v_h / big)  # M/big, no overflow
    if sweeps:
        rank = np.maximum(rank, (r_h / big) / (1.0 - g))
    idx = tuple(int(i) for i in np.unravel_index(np.argmax(rank), rank.shape))
    r, v = float(r_h[idx]), float(v_h[idx])
    M = max(r + g * v, r / (1.0 - g)) if sweeps else r + g * v  # Python floats: inf, no warning
    shown = f"{M:.4g}" if math.isfinite(M) else f"more than {np.finfo(np.float64).max:.4g}"
    where = f" at batch index {idx}" if lead else ""
    tail = (
        f"(max|R| = {r:.4g}, max|V{'0' if sweeps else ''}| = {v:.4g}, gamma = {g}), beyond "
        f"{'a quarter' if sweeps else 'half'} of the largest {getattr(game.dtype, 'name', game.dtype)} ({big:.4g})"
    )
    if not sweeps:
        raise ValueError(
            f"shapley_operator: the stage payoffs can reach M = max|R| + gamma*max|V| = {shown}{where} {tail}: "
            f"Q = r + gamma P V would overflow"
        )
    raise ValueError(
        f"shapley_value_iteration: the values and stage payoffs can reach M = max(max|R| + gamma*max|V0|, "
        f"max|R|/(1-gamma)) = {shown}{where} {tail}: Q = r + gamma P V and the sweep differences would "
        f"overflow. Values scale with R (V*(cR) = c V*(R)): solve the game with R and V0 divided by a "
        f"power of 2 and scale V back"
    )


def _roundoff(game: ZeroSumMarkovGame) -> _Roundoff:
    """:class:`rltheory.mdp.discounted._Roundoff` of the stage payoffs ``Q_V = R + γPV``.

    The joint actions ``(a, b)`` are the actions of an MDP with ``P[..., S, A·B, S]``: the same
    sums of ``S + 1`` terms and the same row sums, so the same sweep error ``e(V)``.
    """
    xp, S, AB = game.xp, game.S, game.A * game.B
    lead = game.batch_shape
    mdp = FiniteMDP(
        xp.reshape(game.P, lead + (S, AB, S)), xp.reshape(game.R, lead + (S, AB)), game.gamma
    )
    return _Roundoff(mdp)


def evaluate_policy_pair(game: ZeroSumMarkovGame, mu: Any, nu: Any) -> Any:
    r"""``V^{μ,ν} = (I − γ P_{μν})^{-1} r_{μν}``: value of stationary policies, shape (..., S).

    Computed as ``evaluate_policy(game.row_mdp(ν), μ)`` — the row player's induced MDP
    evaluated at ``μ`` — so it reuses the MDP Bellman layer.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.games.zoo import matching_pennies
    >>> g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), matching_pennies()[None], 0.5)
    >>> evaluate_policy_pair(g, np.array([0]), np.array([0]))   # 1/(1 − 0.5)
    array([2.])
    """
    game = _check_game(game, "evaluate_policy_pair")
    nu, mu = game.col_policy(nu), game.row_policy(mu)  # nu first, as the induced MDPs are built
    check_batches(
        [("the game", game.batch_shape), ("mu", tuple(mu.shape[:-2])), ("nu", tuple(nu.shape[:-2]))]
    )
    return evaluate_policy(game.row_mdp(nu), mu)
