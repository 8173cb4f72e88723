r"""Shared machinery of the learning dynamics in zero-sum matrix games.

:class:`DynamicsResult`; the round loop :func:`_run` (both players observe ``u_t = A y_t``
and ``v_t = −Aᵀx_t``, update simultaneously, and the duality gaps of the average and the
last iterate are recorded after every round, :func:`rltheory.games.matrix.duality_gap`);
and the payoff scalings and step sizes: a power of two ``s`` near ``max|A|`` (exact
scaling, :func:`_pow2_scale`), the payoff range ``R = ρ s`` (:func:`_payoff_range`) and the
steps of multiplicative-weights dynamics on ``A / R`` (:func:`_scaled_steps`). The
dynamics themselves and their theorems are in :mod:`rltheory.games.dynamics` and
:mod:`rltheory.games.optimistic`.

References
----------
Freund, Y. & Schapire, R. E. (1999). Adaptive game playing using multiplicative weights.
GEB 29 (average-iterate gap = summed regrets / T).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import real_scalar
from ..backend import array_namespace
from ..trace import Trace, TraceRecorder
from .matrix import _duality_gap

__all__ = ["DynamicsResult"]


@dataclass(frozen=True, eq=False)
class DynamicsResult:
    """Outcome of ``T`` rounds of a learning dynamic on games ``A[..., m, n]``.

    Attributes
    ----------
    x, y : arrays (..., m), (..., n)
        Uniform averages of the iterates.
    x_last, y_last : arrays
        Last iterates.
    eta : tuple or None
        Step sizes ``(η_x, η_y)`` on the payoffs ``A``, as arrays of shape (...) (None for
        FP and RM). Hedge and OMWU run on ``A / R`` with step ``η R``, OGDA on ``A / s``
        (``s`` a power of two near ``max|A|``) with step ``η s``; where a default
        ``η ∝ 1/R`` or ``1/‖A‖_F`` exceeds the float range (a subnormal ``R`` or ``‖A‖_F``)
        it is reported as ``inf`` while the iterates use the finite ``η R`` or ``η s``. A
        given ``eta`` beyond the range of ``A``'s dtype (1e300 for float32) is ``inf``
        too; the iterates are then the large-step limit
        (:func:`rltheory.games.simplex._softmax`, :func:`rltheory.games.simplex._simplex_step`).
    trace : Trace
        ``gap_avg[t−1]`` and ``gap_last[t−1]`` (shape (T, ...)) after ``t`` rounds.
    iterations : int
    converged : bool
        Always True: the dynamics run a fixed number of rounds and have no stopping rule.
    """

    x: Any
    y: Any
    x_last: Any
    y_last: Any
    eta: tuple[Any, Any] | None
    trace: Trace
    iterations: int
    converged: bool = True


def _check_T(T: Any) -> int:
    """``T`` must be an integer ``≥ 1`` (Python or numpy, not bool); returned as ``int``."""
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
        raise ValueError(f"T (number of rounds) must be a positive integer; got {T!r}")
    return int(T)


def _pow2_scale(A: Any, xp: Any) -> Any:
    """A power of two ``s = 2^⌊log₂ max|A|⌋`` per game (1 where ``A = 0``), so ``max|A/s| ∈ [½, 2)``.

    Dividing by ``s`` is exact (unless a quotient is subnormal), and sums, products and
    differences of the quotients are the scaled ones bit for bit wherever neither under- nor
    overflows: a dynamic that is invariant to a positive payoff scale runs on ``A / s`` with
    the iterates of ``A`` at ordinary scales and without overflow near the float range.
    """
    flat = xp.reshape(xp.abs(A), tuple(A.shape[:-2]) + (A.shape[-2] * A.shape[-1],))
    amax = xp.max(flat, axis=-1)
    amax = xp.where(amax > 0.0, amax, 1.0)
    # log₂ of the largest floats rounds up to the overflow exponent (log₂ 1.797e308 = 1024.0):
    # capped at the largest float's own exponent (1023; float32: 127)
    top = float(math.frexp(float(xp.finfo(A.dtype).max))[1] - 1)
    e = xp.floor(xp.log2(amax))
    return xp.full_like(amax, 2.0) ** xp.where(e > top, top, e)


def _payoff_range(A: Any, xp: Any) -> tuple[Any, Any]:
    """``(ρ, s)`` with ``ρ s = R = max A − min A`` per game (``ρ = s = 1``, i.e. ``R = 1``, where
    the game is constant); ``s`` is :func:`_pow2_scale`, so ``ρ`` is finite where ``R``
    overflows (entries of both signs near the float range) and ``(A/s)/ρ`` is ``A/R`` bit for
    bit where it does not."""
    s = _pow2_scale(A, xp)
    G = A / s[..., None, None]
    flat = xp.reshape(G, tuple(G.shape[:-2]) + (G.shape[-2] * G.shape[-1],))
    rho = xp.max(flat, axis=-1) - xp.min(flat, axis=-1)
    return xp.where(rho > 0.0, rho, 1.0), xp.where(rho > 0.0, s, 1.0)


def _normalised(A: Any, rho: Any, s: Any, xp: Any) -> Any:
    """The games ``A / R = (A/s)/ρ`` that Hedge and OMWU play (:func:`_payoff_range`); 0 where
    ``A`` is constant.

    A constant game's utilities are the same for every action, so any constant utility gives
    the same (uniform) plays; 0 keeps the cumulative utilities from overflowing, which ``A / 1``
    (the ``R = 1`` convention) did for payoffs near the float range.
    """
    G = (A / s[..., None, None]) / rho[..., None, None]
    flat = xp.reshape(G, tuple(G.shape[:-2]) + (G.shape[-2] * G.shape[-1],))
    const = xp.max(flat, axis=-1) == xp.min(flat, axis=-1)
    return xp.where(const[..., None, None], 0.0, G)


def _eta(eta: Any, default: Any, xp: Any, like: Any) -> Any:
    if eta is None:
        return default
    # a Python or numpy real scalar (not a bool); an int beyond the float range reads as inf
    e = real_scalar(eta)
    if not (e > 0 and math.isfinite(e)):
        raise ValueError(f"eta must be a positive finite number; got {eta!r}")
    with np.errstate(over="ignore"):  # beyond float32's range: inf, the c → ∞ limit (_softmax)
        return xp.full(tuple(like.shape), e, dtype=like.dtype, device=like.device)


def _scaled_steps(eta: Any, unit_step: float, rho: Any, s: Any, xp: Any) -> tuple[Any, Any]:
    """Step sizes of a multiplicative-weights dynamic run on the normalised games ``A / R``.

    ``R = ρ s`` (:func:`_payoff_range`). Returns ``(η, η R)``: the step ``η`` on the payoffs
    ``A`` (the given ``eta``, or the default ``unit_step / R``) and the step ``η R`` that
    multiplies the normalised utilities. ``exp(η Σ_s A y_s) = exp(η R Σ_s (A/R) y_s)``, so
    the iterates are those of step ``η`` on ``A``; but the default ``η R = unit_step`` stays
    finite when ``R`` is subnormal and ``unit_step / R`` overflows (``η`` is then reported
    as ``inf``), and ``η = (unit_step/ρ)/s`` is the correctly rounded ``unit_step / R`` where
    ``R`` itself overflows.
    """
    if eta is None:
        unit = xp.full(tuple(rho.shape), unit_step, dtype=rho.dtype, device=rho.device)
        with np.errstate(over="ignore"):  # numpy warns; the overflow to inf is intended
            return (unit / rho) / s, unit
    e = _eta(eta, None, xp, rho)
    with np.errstate(over="ignore"):  # η R beyond the float range: the softmax handles inf
        return e, (e * s) * rho


Step = Callable[[Any, Any, Any, Any], tuple[Any, Any, Any]]


def _run(
    A: Any,
    T: int,
    init: Callable[[Any], tuple[Any, Any, Any]],
    update: Step,
    play: Any = None,
) -> tuple[Any, Any, Any, Any, Trace]:
    """Shared driver: play ``(x_t, y_t)``, observe ``u_t = A y_t``, ``v_t = −Aᵀx_t``, update.

    ``play`` (default ``A``) is the matrix whose utilities the players observe, e.g. the
    range-normalised ``A / R`` of Hedge; the trace always scores the games ``A``.
    """
    xp = array_namespace(A)
    G = A if play is None else play
    x, y, state = init(A)
    sx = xp.zeros_like(x)
    sy = xp.zeros_like(y)
    rec = TraceRecorder()
    for t in range(1, T + 1):
        sx, sy = sx + x, sy + y
        u = (G @ y[..., None])[..., 0]
        v = -(x[..., None, :] @ G)[..., 0, :]
        rec.record(
            t, gap_avg=_duality_gap(A, sx / t, sy / t, xp), gap_last=_duality_gap(A, x, y, xp)
        )
        if t < T:
            x, y, state = update(x, y, state, (u, v))
    return sx / T, sy / T, x, y, rec.finish()


def _uniform(A: Any, xp: Any) -> tuple[Any, Any]:
    m, n = A.shape[-2], A.shape[-1]
    b = tuple(A.shape[:-2])
    return (
        xp.full(b + (m,), 1.0 / m, dtype=A.dtype, device=A.device),
        xp.full(b + (n,), 1.0 / n, dtype=A.dtype, device=A.device),
    )


def _zero_state_init(A: Any) -> tuple[Any, Any, Any]:
    """Uniform first plays and a zero accumulator per player."""
    xp = array_namespace(A)
    x, y = _uniform(A, xp)
    return x, y, (xp.zeros_like(x), xp.zeros_like(y))
