r"""Bounds of policy evaluation with linear features (TD fixed point) and of Q-learning.

| function | theorem |
|---|---|
| :func:`td_fixed_point_bound` | Tsitsiklis & Van Roy (1997), Lemma 6 / Thm 1 (Pythagorean form) |
| :func:`tvr_fixed_point_bound` | Tsitsiklis & Van Roy (1997), Thm 1(iii) |
| :func:`q_learning_bound` | constant-step synchronous Q-learning, high probability (derived) |

Re-exported by :mod:`rltheory.bounds.policy_optimization` and :mod:`rltheory.bounds`.

References
----------
Tsitsiklis, J. N., Van Roy, B. (1997). An analysis of temporal-difference learning with
function approximation. IEEE Trans. Automatic Control 42(5).
Wainwright, M. J. (2019). Stochastic approximation with cone-contractive operators: sharp
ℓ∞-bounds for Q-learning. arXiv:1905.06265.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._argcheck import _count, _gamma, _nonneg, _pos, _real_scalar, _times, _where

__all__ = ["td_fixed_point_bound", "tvr_fixed_point_bound", "q_learning_bound"]

_FLOAT_MAX_INT = int(np.finfo(np.float64).max)


def _lam(lam: Any) -> float:
    lam_f = _real_scalar(
        lam
    )  # numpy scalars and 0-d arrays as Python numbers; NaN for anything else
    if not (0.0 <= lam_f <= 1.0):
        raise ValueError(f"lam must lie in [0, 1]; got {lam!r}")
    return lam_f


def _one_minus_gamma_lam(gamma: float, lam: float) -> float:
    """``1 − γλ`` as ``(1 − γ) + γ(1 − λ)``: two terms ``≥ 0``, each to a rounding or two.

    ``1.0 − γ·λ`` subtracts a rounded product from 1: near ``γλ = 1`` it kept only
    ``ε/(1 − γλ)`` of its relative accuracy. ``1 − γ`` and ``1 − λ`` are exact for ``γ, λ ≥ 1/2``
    (Sterbenz) and well conditioned below.
    """
    return (1.0 - gamma) + gamma * (1.0 - lam)


def _one_minus_kappa_sq(gamma: float, lam: float) -> float:
    """``1 − κ²`` for ``κ = γ(1−λ)/(1−γλ)``, as ``(1 − κ)(1 + κ)`` with ``1 − κ = (1−γ)/(1−γλ)``.

    Relative error a few ``ε`` for every ``γ ∈ [0, 1)``, ``λ ∈ [0, 1]``. ``1 − κ**2`` cancelled
    as ``κ → 1``: at ``γ = 1 − 4e-16`` (``λ = 0.9``) it came out 10% large and the bound 4.7% below
    its exact value; at ``γ = 1 − 2.1e-15`` (``λ = 0.5``) 1.3% below.
    """
    omg = _one_minus_gamma_lam(gamma, lam)
    kappa = gamma * (1.0 - lam) / omg
    return ((1.0 - gamma) / omg) * (1.0 + kappa)


def td_fixed_point_bound(projection_error: Any, *, gamma: float, lam: float = 0.0) -> np.ndarray:
    r"""``‖Φθ* − V^π‖_D ≤ ‖Π_D V^π − V^π‖_D / √(1 − κ²)``, ``κ = γ(1−λ)/(1−γλ)``.

    Parameters
    ----------
    projection_error : float or array
        ``‖Π_D V^π − V^π‖_D`` with ``D`` the stationary distribution of ``P_π``.
    gamma : float in [0, 1)
    lam : float in [0, 1]
        TD(λ) parameter (``κ = γ`` for TD(0)).

    Notes
    -----
    ``Π_D T^{(λ)}`` is a ``κ``-contraction in ``‖·‖_D`` (Tsitsiklis & Van Roy 1997,
    Lemma 4–5); ``Φθ* − ΠV`` is ``D``-orthogonal to ``ΠV − V``, so
    ``‖Φθ* − V‖² = ‖ΠV − V‖² + ‖Π T^{(λ)}Φθ* − ΠT^{(λ)}V‖² ≤ ‖ΠV − V‖² + κ²‖Φθ* − V‖²``
    (Pythagoras). For TD(0) this is ``1/√(1−γ²)``; it is never larger than
    :func:`tvr_fixed_point_bound`.

    ``1 − κ²`` is evaluated as ``(1 − κ)(1 + κ)`` with ``1 − κ = (1−γ)/(1−γλ)`` (no cancellation),
    so the factor is within a few ``ε`` of its exact value also for ``γ`` within ``1e-15`` of 1.

    Examples
    --------
    >>> round(float(td_fixed_point_bound(1.0, gamma=0.6)), 6)
    1.25
    """
    g = _gamma(gamma)
    lam_f = _lam(lam)
    pe = _nonneg(projection_error, "projection_error")
    with np.errstate(over="ignore"):  # inf only where the bound itself exceeds the float range
        return pe / math.sqrt(_one_minus_kappa_sq(g, lam_f))


def tvr_fixed_point_bound(projection_error: Any, *, gamma: float, lam: float = 0.0) -> np.ndarray:
    r"""Tsitsiklis–Van Roy bound ``‖Φθ* − V^π‖_D ≤ (1−λγ)/(1−γ) ‖Π_D V^π − V^π‖_D``.

    Notes
    -----
    Tsitsiklis & Van Roy (1997), Theorem 1(iii): on-policy TD(λ) with linear features,
    ``D`` the stationary distribution of an irreducible aperiodic ``P_π``.

    Examples
    --------
    >>> float(tvr_fixed_point_bound(1.0, gamma=0.5))
    2.0
    """
    g = _gamma(gamma)
    lam_f = _lam(lam)
    pe = _nonneg(projection_error, "projection_error")
    with np.errstate(over="ignore"):  # inf only where the bound itself exceeds the float range
        return pe * (_one_minus_gamma_lam(g, lam_f) / (1.0 - g))


def _log_union(n_pairs: int, horizon: int, delta: Any) -> float:
    """``log(2 n T/δ)``, finite whenever the logarithm is: ``2nT/δ`` itself may lie beyond the float range.

    ``n`` and ``T`` are Python integers of any size and ``δ`` may be subnormal, so the quotient can
    overflow (``inf``, or an ``OverflowError`` for an integer above ``1.8e308``) while its logarithm
    is a few hundred; then the logarithm is taken term by term (``math.log`` is exact enough on big
    integers). Otherwise the quotient's logarithm as before, to the bit.
    """
    try:
        x = 2.0 * n_pairs * horizon / delta
    except OverflowError:
        x = math.inf
    if math.isfinite(x):
        return math.log(x)
    return math.log(2.0) + math.log(n_pairs) + math.log(horizon) - math.log(_real_scalar(delta))


def q_learning_bound(
    t: Any,
    *,
    alpha: float,
    gamma: float,
    initial_error: Any,
    value_span: Any,
    n_pairs: int,
    horizon: int,
    delta: float,
) -> np.ndarray:
    r"""High-probability bound of synchronous Q-learning with a constant step ``α``.

    With probability at least ``1 − δ``, simultaneously for all ``t ≤ horizon``:

    ``‖Q_t − Q*‖∞ ≤ (1 − α(1−γ))^t ‖Q_0 − Q*‖∞ + γ sp(V*) √(α log(2 n T/δ)/2) / (1−γ)``

    with ``n = |S||A|`` and ``T = horizon``.

    Parameters
    ----------
    t : array_like of int in [0, horizon]
    alpha : float in (0, 1]
    gamma : float in [0, 1)
    initial_error : float
        ``‖Q_0 − Q*‖∞``.
    value_span : float
        ``sp(V*) = max V* − min V*``.
    n_pairs : int
        ``|S||A|``.
    horizon : int
        ``T``, the last iteration the statement covers (union bound).
    delta : float in (0, 1)

    Notes
    -----
    Derivation (the noise/contraction split of Wainwright 2019, §3, with the
    Azuma–Hoeffding inequality in place of his variance-sensitive bound):
    ``Δ_{t+1} = (1−α)Δ_t + αγP̂_t(V_t − V*) + αW_t`` with
    ``W_t = γ(P̂_t − P)V*`` independent, zero mean, each entry in an interval of
    length ``γ sp(V*)``. Write ``Δ = U + E`` with ``E_{t+1} = (1−α)E_t + αW_t``; then
    ``‖U_{t+1}‖ ≤ (1−α(1−γ))‖U_t‖ + αγ‖E_t‖``, so
    ``‖Δ_t‖ ≤ (1−α(1−γ))^t‖Δ_0‖ + max_{i≤t}‖E_i‖/(1−γ)``. Each ``E_i(s, a)`` is a
    weighted sum with ``Σ w² ≤ α/(2−α) ≤ α``; Hoeffding and a union bound over the
    ``nT`` entries give ``max ‖E_i‖ ≤ γ sp(V*) √(α log(2nT/δ)/2)``.

    Raises ``ValueError`` for a ``t > horizon`` (naming the entry): the statement is for
    ``t ≤ T`` only.

    ``log(2nT/δ)`` is finite for any integers ``n``, ``T`` and any ``δ > 0``, also where ``2nT/δ``
    lies beyond the float range (``T = 10**400``, or ``δ = 1e-320``).

    Examples
    --------
    >>> b = q_learning_bound([0], alpha=0.1, gamma=0.0, initial_error=1.0, value_span=1.0,
    ...                      n_pairs=1, horizon=1, delta=0.1)
    >>> b.tolist()
    [1.0]
    """
    t = _times(t, "t", minimum=0.0)
    # the statement is about iterations 0..T: t = 0.5 returned an interpolation it never makes
    frac = t != np.floor(t)
    if np.any(frac):
        raise ValueError(f"t must hold whole iteration counts; {_where(t, frac, 't')}")
    g = _gamma(gamma)
    alpha = _pos(alpha, "alpha")
    if alpha > 1.0:
        raise ValueError(f"alpha must lie in (0, 1]; got {alpha!r}")
    if not 0.0 < _real_scalar(delta) < 1.0:
        raise ValueError(f"delta must lie in (0, 1); got {delta!r}")
    n_pairs, horizon = _count(n_pairs, "n_pairs"), _count(horizon, "horizon")
    # the union bound runs over the n·T entries of E_1, ..., E_T: a time after T is not covered
    # (the value returned there used to be the same formula, a statement the derivation never made)
    beyond = t > (float(horizon) if horizon <= _FLOAT_MAX_INT else math.inf)
    if np.any(beyond):
        raise ValueError(
            f"t must be <= horizon = {horizon} (the union bound covers iterations 0..horizon only; "
            f"pass horizon >= max t); {_where(t, beyond, 't')}"
        )
    span, e0 = _nonneg(value_span, "value_span"), _nonneg(initial_error, "initial_error")
    with np.errstate(over="ignore"):  # inf only where the bound itself exceeds the float range
        noise = g * span * math.sqrt(alpha * _log_union(n_pairs, horizon, delta) / 2.0)
        return (1.0 - alpha * (1.0 - g)) ** t * e0 + noise / (1.0 - g)
