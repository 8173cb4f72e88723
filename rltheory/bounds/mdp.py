r"""Bounds of the exact discounted-MDP solvers, as functions of their constants.

Value iteration ``v_{k+1} = T v_k`` with a ``γ``-contraction ``T`` (Puterman 1994, Prop. 6.2.4):

* a-priori error: ``‖v_k − v*‖∞ ≤ γ^k ‖v_0 − v*‖∞`` (:func:`vi_error_bound`);
* a-posteriori (stopping) certificate: ``‖v_k − v*‖∞ ≤ γ/(1−γ)·‖v_k − v_{k−1}‖∞``
  (:func:`vi_certificate`);
* Puterman's stopping rule: once ``‖v_{k+1} − v_k‖∞ < ε(1−γ)/(2γ)`` the greedy
  policy is ε-optimal (:func:`vi_stopping_threshold`), reached after at most
  :func:`vi_iterations_to_threshold` sweeps;
* span rule of :func:`rltheory.mdp.value_iteration`: stop at the first ``γ/(1−γ)·sp(T v − v) < tol``,
  reached after at most :func:`span_stopping_iterations` Bellman evaluations — in exact
  arithmetic, or in floating point given a bound on each sweep's rounding error
  (:func:`vi_sweep_error`).

Howard's policy iteration terminates after at most
``(S·A − S)·⌈log(1/(1−γ))/(1−γ)⌉`` policy changes (:func:`pi_iteration_bound`).

The floating-point constants (:func:`vi_sweep_error`, :func:`vi_certificate_floor`) live in
:mod:`rltheory.bounds.mdp_roundoff` and are re-exported here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._numerics import contraction_steps
from .._validate import _int_value, check_discount, real_scalar
from ._argcheck import _real_entries, _where
from .mdp_roundoff import vi_certificate_floor, vi_sweep_error  # split out; re-exported here

__all__ = [
    "vi_error_bound",
    "vi_certificate",
    "vi_stopping_threshold",
    "vi_iterations_to_threshold",
    "span_stopping_iterations",
    "vi_sweep_error",
    "vi_certificate_floor",
    "pi_iteration_bound",
]


def _gamma(gamma: Any, *, allow_zero: bool = True) -> float:
    g = float(check_discount(gamma, allow_none=False))  # type: ignore[arg-type]
    if not allow_zero and g == 0.0:
        raise ValueError("gamma must lie in (0, 1) here (the bound divides by gamma); got 0.0")
    return g


def _nonneg(x: Any, name: str) -> np.ndarray:
    """``x`` as a float array of finite entries ``>= 0``; bools, strings and complex numbers are a
    located ``TypeError`` (``np.asarray(x, dtype=float)`` parsed ``"1"`` and read ``True`` as 1),
    an integer beyond the float range a located ``ValueError`` (it was a bare ``OverflowError``)."""
    arr, over = _real_entries(x, name)
    if over is not None:
        at = f"{name}{list(over)}" if arr.ndim else name
        raise ValueError(
            f"{name} must be finite and non-negative; {at} is an integer beyond the float range"
        )
    bad = ~np.isfinite(arr) | (arr < 0)
    if np.any(bad):
        i = (
            tuple(int(j) for j in np.unravel_index(int(np.flatnonzero(bad)[0]), arr.shape))
            if arr.ndim
            else ()
        )
        raise ValueError(
            f"{name} must be finite and non-negative; {name}{list(i) if i else ''} = {float(arr[i])!r}"
        )
    return arr


def _nonneg_scalar(x: Any, name: str) -> float:
    """One finite number ``>= 0`` (:func:`_nonneg`); an array with more than one entry was a bare
    numpy ``TypeError`` ("only 0-dimensional arrays can be converted to Python scalars")."""
    arr = _nonneg(x, name)
    if arr.ndim:
        raise ValueError(f"{name} must be a single number; got an array of shape {arr.shape}")
    return float(arr)


def _strict_steps(g: float, log_start: float, log_tol: float) -> int:
    """Smallest ``k ≥ 0`` with ``g^k · start < tol`` from the logarithms (``0 < g < 1``): the
    form for a ``start`` or ``tol`` beyond the float range (an ``inf`` product or a 0 threshold)."""
    if log_start < log_tol:
        return 0
    return int(math.floor((log_start - log_tol) / -math.log(g))) + 1


def _object_counts(arr: np.ndarray, given: Any) -> np.ndarray:
    """Iteration counts from an object array (Python integers beyond int64, as ``10**400``,
    possibly beside integral floats) as floats, ``inf`` beyond the float range."""
    vals = list(arr.reshape(-1))
    for v in vals:
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, np.integer, float, np.floating))
            or (isinstance(v, (float, np.floating)) and not (math.isfinite(v) and v == round(v)))
        ):
            raise ValueError(f"k must hold finite integers; got {given!r}")
    if vals and min(vals) < 0:
        raise ValueError(f"k must be non-negative; got min k = {int(min(vals))}")
    out = np.empty(len(vals), dtype=float)
    for i, v in enumerate(vals):
        try:
            out[i] = float(v)
        except OverflowError:  # a (positive) int beyond the float range: the limit k → ∞
            out[i] = math.inf
    return out.reshape(arr.shape)


def vi_error_bound(k: Any, gamma: float, initial_error: Any) -> np.ndarray:
    r"""A-priori value-iteration error ``‖v_k − v*‖∞ ≤ γ^k ‖v_0 − v*‖∞``.

    Parameters
    ----------
    k : int or array_like of int
        Iteration counts (``k ≥ 0``).
    gamma : float
        Discount in ``[0, 1)``.
    initial_error : float or array_like
        ``‖v_0 − v*‖∞`` (broadcast against ``k``).

    Returns
    -------
    numpy.ndarray
        ``γ^k · initial_error`` (``0^0 = 1``). A Python integer ``k`` beyond the float
        range (``10**400``) is the limit ``k → ∞``: ``γ^k = 0`` for every ``γ ∈ [0, 1)``.

    Raises
    ------
    InvalidModelError
        ``gamma`` outside ``[0, 1)``.
    ValueError
        Negative or non-integer ``k``, negative or non-finite ``initial_error`` (its index named),
        or one that does not broadcast against ``k``.
    TypeError
        ``k`` or ``initial_error`` holding bools, strings or complex numbers (the entry named).

    Notes
    -----
    The Bellman optimality operator is a ``γ``-contraction in sup norm
    (Puterman 1994, Prop. 6.2.4), so ``‖T^k v_0 − v*‖∞ = ‖T^k v_0 − T^k v*‖∞ ≤ γ^k ‖v_0 − v*‖∞``;
    the rate is linear with factor ``γ`` (Thm 6.3.3). It holds at every iterate
    and is attained, e.g., by a single state with reward 1 and ``v_0 = 0``.

    References
    ----------
    M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, Prop. 6.2.4 and Thm 6.3.3.

    Examples
    --------
    One state, reward 1, ``v_0 = 0``: ``v_k = (1−γ^k)/(1−γ)`` and ``v* = 1/(1−γ)``, so the
    error ``γ^k/(1−γ)`` equals the bound:

    >>> vi_error_bound([0, 1, 2], 0.5, 2.0)
    array([2. , 1. , 0.5])
    """
    g = _gamma(gamma)
    given = k
    # bools ([True, 2] too), strings ("3" was 3) and complex numbers: a located TypeError
    _real_entries(k, "k")
    k = np.asarray(k)
    if k.dtype == object:  # Python ints beyond int64: checked exactly, then floats (inf if huge)
        k = _object_counts(k, given)
    elif not np.issubdtype(k.dtype, np.integer):
        kf = np.asarray(k, dtype=float)
        bad = ~np.isfinite(kf) | (kf != np.round(kf))
        if np.any(bad):  # the first bad entry named: a long k was printed whole (or elided)
            at = f" ({_where(kf, bad, 'k')})" if kf.ndim else ""
            raise ValueError(f"k must hold finite integers; got {k!r}{at}")
        k = kf  # integral floats: an int64 cast would wrap inf and k >= 2**63 to negative counts
    if np.any(k < 0):
        at = f" ({_where(k, k < 0, 'k')})" if k.ndim else ""
        raise ValueError(f"k must be non-negative; got min k = {int(np.min(k))}{at}")
    e0 = _nonneg(initial_error, "initial_error")
    try:
        np.broadcast_shapes(k.shape, e0.shape)
    except ValueError:  # numpy's "operands could not be broadcast" named neither argument
        raise ValueError(
            f"initial_error of shape {e0.shape} does not broadcast against k of shape {k.shape}"
        ) from None
    return np.power(g, k.astype(float)) * e0


def vi_certificate(diff_norm: Any, gamma: float) -> np.ndarray:
    r"""A-posteriori value-iteration certificate ``‖v_k − v*‖∞ ≤ γ/(1−γ)·‖v_k − v_{k−1}‖∞``.

    Parameters
    ----------
    diff_norm : float or array_like
        ``‖v_k − v_{k−1}‖∞`` for ``v_k = T v_{k−1}`` (or the span ``sp(v_k − v_{k−1})``,
        giving the tighter span certificate on the greedy policy's loss below).
    gamma : float
        Discount in ``[0, 1)``.

    Returns
    -------
    numpy.ndarray
        ``γ/(1−γ) · diff_norm``.

    Notes
    -----
    From ``‖v_k − v*‖∞ ≤ ‖T v_{k−1} − T v_k‖∞ + ‖T v_k − T v*‖∞ ≤ γ‖v_k − v_{k−1}‖∞ + γ‖v_k − v*‖∞``
    (Puterman 1994, Thm 6.3.1 proof). With the span seminorm ``sp(x) = max x − min x``
    in place of the sup norm, ``γ/(1−γ)·sp(T v − v)`` bounds ``‖v* − v^π‖∞`` for
    the policy greedy with respect to ``v`` (Puterman Thm 6.6.6) — the certificate
    :func:`rltheory.mdp.value_iteration` stops on; ``sp(x) ≤ 2‖x‖∞``.

    References
    ----------
    M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, Thm 6.3.1 and Thm 6.6.6.

    Examples
    --------
    >>> float(vi_certificate(0.01, 0.9))
    0.09
    """
    g = _gamma(gamma)
    return (g / (1.0 - g)) * _nonneg(diff_norm, "diff_norm")


def vi_stopping_threshold(epsilon: float, gamma: float) -> float:
    r"""Puterman's stopping threshold ``ε(1−γ)/(2γ)``.

    If ``‖v_{k+1} − v_k‖∞ < ε(1−γ)/(2γ)``, the policy greedy with respect to
    ``v_{k+1}`` is ε-optimal and ``‖v_{k+1} − v*‖∞ < ε/2``.

    Parameters
    ----------
    epsilon : float
        Target suboptimality, ``> 0``.
    gamma : float
        Discount in ``(0, 1)``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``epsilon ≤ 0`` or ``gamma == 0`` (no iteration is needed at ``γ = 0``).

    References
    ----------
    M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, Thm 6.3.1 (b)–(d).

    Examples
    --------
    >>> round(vi_stopping_threshold(0.1, 0.9), 12)
    0.005556
    """
    g = _gamma(gamma, allow_zero=False)
    eps = real_scalar(epsilon)  # numpy scalars and 0-d arrays as numbers; NaN for anything else
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon must be a positive finite number; got {epsilon!r}")
    return eps * (1.0 - g) / (2.0 * g)


def vi_iterations_to_threshold(epsilon: float, gamma: float, first_diff: float) -> int:
    r"""Sweeps until Puterman's rule fires: ``‖v_{k+1} − v_k‖∞ < ε(1−γ)/(2γ)``.

    Since ``‖v_{k+1} − v_k‖∞ ≤ γ^k ‖v_1 − v_0‖∞``, the rule holds at the latest for
    the smallest ``k`` with ``γ^k ‖v_1 − v_0‖∞ < ε(1−γ)/(2γ)``, i.e.
    ``k = ⌊log(2γ‖v_1 − v_0‖∞ / (ε(1−γ))) / log(1/γ)⌋ + 1`` (0 if already below);
    value iteration then has computed ``k + 1`` Bellman updates.

    Parameters
    ----------
    epsilon : float
        Target suboptimality, ``> 0``.
    gamma : float
        Discount in ``(0, 1)``.
    first_diff : float
        ``‖v_1 − v_0‖∞``.

    Returns
    -------
    int
        The index ``k`` (an upper bound on the first index at which the rule fires).

    Raises
    ------
    ValueError
        ``epsilon`` not a positive finite number, ``gamma`` 0, ``first_diff`` negative, not
        finite or not a single number.
    TypeError
        ``first_diff`` a bool, a string or a complex number.

    References
    ----------
    M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, Thm 6.3.1 and Thm 6.3.3.

    Examples
    --------
    ``γ = 0.5``, ``ε = 1``: threshold ``0.5``; with ``‖v_1 − v_0‖∞ = 4`` the
    differences are at most ``4, 2, 1, 0.5, 0.25``, first below 0.5 at ``k = 4``:

    >>> vi_iterations_to_threshold(1.0, 0.5, 4.0)
    4
    """
    thr = vi_stopping_threshold(epsilon, gamma)
    d0 = _nonneg_scalar(first_diff, "first_diff")
    g = _gamma(gamma)
    # ε(1−γ)/(2γ) underflowed (ε ≈ 1e-308, γ → 1): count from logarithms
    if thr == 0.0 and d0 > 0.0:
        log_thr = math.log(real_scalar(epsilon)) + math.log1p(-g) - math.log(2.0 * g)
        return _strict_steps(g, math.log(d0), log_thr)
    return contraction_steps(g, d0, thr, strict=True)


def span_stopping_iterations(
    gamma: float, tol: float, span0: float, *, sweep_error: float = 0.0
) -> int | float:
    r"""Bellman evaluations until the span rule ``γ/(1−γ)·sp(T v_k − v_k) < tol`` fires.

    ``sp(T v_k − v_k) ≤ γ^k sp(T v_0 − v_0)`` (the span seminorm contracts by ``γ``,
    Puterman 1994, Prop. 6.6.1 and Thm 6.6.2), so the rule holds at the latest at
    ``k = ⌊log(γ sp_0 / ((1−γ) tol)) / log(1/γ)⌋ + 1`` (``k = 0`` if already below);
    :func:`rltheory.mdp.value_iteration` counts ``k + 1`` evaluations of ``T`` by then,
    which is the number returned.

    That is exact arithmetic. In floating point each sweep is ``v_{k+1} = T v_k + e_k``
    with a rounding error ``e_k``; with ``‖e_k‖∞ ≤ ε`` (``sweep_error``, e.g.
    :func:`vi_sweep_error`) the differences ``Δ_k = v_{k+1} − v_k`` obey
    ``Δ_{k+1} = (T v_{k+1} − T v_k) + (e_{k+1} − e_k)``, and since
    ``sp(T u − T w) ≤ γ sp(u − w)``,
    ``sp(Δ_k) ≤ γ^k sp(Δ_0) + 4ε(1 − γ^k)/(1 − γ) < γ^k sp_0 + 4ε/(1 − γ)``. The rule then
    holds once ``γ^k·γ/(1−γ)·sp_0 < tol − 4γε/(1−γ)²``: the count is the exact-arithmetic
    one for that smaller target, and ``inf`` when ``4γε/(1−γ)² ≥ tol`` (rounding alone may
    then keep the rule from firing: a ``tol`` this close to the precision of ``V`` has no
    a-priori count). Near that floor the difference is real: a 4-state chain with
    ``γ = 0.99``, ``‖V‖∞ ≈ 65`` and ``tol = 1e-9`` would stop after 2473 evaluations of the span
    rule alone where the exact-arithmetic count is 2471 (found by a property test).
    :func:`rltheory.mdp.value_iteration` certifies more than the span: its rule adds the
    round-off allowance of its certificate (at most :func:`vi_certificate_floor`), so its
    count is this function's at ``tol − vi_certificate_floor(mdp)`` (2476 evaluations on that
    chain).

    Parameters
    ----------
    gamma : float
        Discount in ``[0, 1)``.
    tol : float
        Target certificate, ``> 0``.
    span0 : float
        ``sp(T v_0 − v_0)``.
    sweep_error : float, optional
        Bound ``ε ≥ 0`` on every sweep's rounding error in the sup norm (default 0: exact
        arithmetic). The rule's own product ``γ/(1−γ)·sp`` and comparison are taken as
        exact; for a count that covers their rounding too, pass ``tol·(1 − 4u)`` with
        ``u`` the unit roundoff.

    Returns
    -------
    int or float
        Upper bound on the evaluations of the span rule with these ``tol`` and ``v_0``, and on
        ``value_iteration(...).iterations`` when ``tol`` is lowered by
        :func:`vi_certificate_floor` (``math.inf`` when the rounding floor reaches ``tol``).

    Raises
    ------
    ValueError
        ``tol`` not a positive finite number; ``span0`` or ``sweep_error`` negative, not finite
        or not a single number.
    TypeError
        ``span0`` or ``sweep_error`` a bool, a string or a complex number.

    References
    ----------
    M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, §6.6.1–6.6.3 (Thm 6.6.6).

    Examples
    --------
    ``γ = 0.5`` (``γ/(1−γ) = 1``), ``sp_0 = 1``, ``tol = 0.3``: certificates ``1, 0.5, 0.25``:

    >>> span_stopping_iterations(0.5, 0.3, 1.0)
    3
    """
    g = _gamma(gamma)
    tol_f = real_scalar(tol)
    if not (math.isfinite(tol_f) and tol_f > 0):
        raise ValueError(f"tol must be a positive finite number; got {tol!r}")
    s0 = _nonneg_scalar(span0, "span0")
    eps = _nonneg_scalar(sweep_error, "sweep_error")
    target = tol_f - 4.0 * g * eps / (1.0 - g) ** 2
    if not target > 0.0:
        return math.inf
    if g == 0.0:
        return 1
    start = g / (1.0 - g) * s0
    # γ/(1−γ)·sp_0 beyond the float range (sp_0 ≈ 1e299, γ → 1): from logarithms
    if math.isinf(start):
        return _strict_steps(g, math.log(g) - math.log1p(-g) + math.log(s0), math.log(target)) + 1
    return contraction_steps(g, start, target, strict=True) + 1


def pi_iteration_bound(S: int, A: int, gamma: float) -> int:
    r"""Howard's policy iteration changes policy at most ``(S·A − S)·⌈log(1/(1−γ))/(1−γ)⌉`` times.

    Parameters
    ----------
    S, A : int
        Numbers of states and actions (every action available in every state:
        ``m = S·A`` state-action pairs).
    gamma : float
        Discount in ``[0, 1)``.

    Returns
    -------
    int
        ``(m − S)·max(1, ⌈log(1/(1−γ))/(1−γ)⌉)`` — the number of *improvement steps*
        (policy changes) before the optimal policy is reached; a solver that also
        counts the final evaluation, as :func:`rltheory.mdp.policy_iteration` does,
        uses at most this plus one iterations.

    Raises
    ------
    ValueError
        ``S`` or ``A`` not a positive integer.
    InvalidModelError
        ``gamma`` outside ``[0, 1)``.

    Notes
    -----
    Scherrer (2016) shows that after ``⌈log(1/(1−γ))/(1−γ)⌉`` iterations of Howard's
    PI some non-optimal action used so far is never used again; at most
    ``m − S`` actions are non-optimal (every state keeps one optimal action), so
    Howard's PI stops within ``O(m/(1−γ)·log(1/(1−γ)))`` iterations (abstract and
    Thm 3 of the paper; the abstract states the ``O(·)`` form, the product above is
    the explicit form of the elimination argument). At ``γ = 0`` one improvement
    step from any policy is optimal, hence the ``max(1, ·)``.

    References
    ----------
    B. Scherrer, "Improved and generalized upper bounds on the complexity of policy
    iteration", *Mathematics of Operations Research* 41(3), 2016, Thm 3 (arXiv:1306.0386).
    T. D. Hansen, P. B. Miltersen, U. Zwick, "Strategy iteration is strongly polynomial
    for 2-player turn-based stochastic games with a constant discount factor", *J. ACM* 60(1), 2013.

    Examples
    --------
    >>> pi_iteration_bound(10, 4, 0.9)
    720
    """
    counts = []
    for name, v in (("S", S), ("A", A)):
        n = _int_value(v)  # a 0-d integer array too (np.array(2) was refused; bools still are)
        if n is None or n < 1:
            raise ValueError(f"{name} must be a positive integer; got {v!r}")
        counts.append(n)
    S, A = counts
    g = _gamma(gamma)
    per_action = max(1, math.ceil(math.log(1.0 / (1.0 - g)) / (1.0 - g)))
    return int((S * A - S) * per_action)
