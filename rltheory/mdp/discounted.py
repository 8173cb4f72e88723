r"""Exact solvers for discounted finite MDPs, each with an a-posteriori certificate.

All four solvers return an :class:`MDPSolution` whose ``bound`` certifies the
answer: for the returned policy ``π`` and values ``V``,

    ‖V* − V^π‖∞ ≤ bound   and   ‖V − V*‖∞ ≤ bound.

The certificate comes from the span bounds of Puterman (1994, Thm 6.6.6 and
Prop. 6.6.5): for any ``v`` with ``Δ = T v − v`` and ``π`` greedy with respect to ``v``,

    T v + γ/(1−γ)·min Δ  ≤  V^π  ≤  V*  ≤  T v + γ/(1−γ)·max Δ,

hence ``V* − V^π ≤ γ/(1−γ)·sp(Δ)`` with the span seminorm ``sp(x) = max x − min x``
(≤ 2‖x‖∞, so it is never worse than the sup-norm rule of Puterman Thm 6.3.1,
and often much tighter). Value iteration stops as soon as this certificate is
below ``tol``; the iteration count is then at most
``⌈log(tol (1−γ) / (γ sp(Δ_0))) / log γ⌉ + 1`` since ``sp`` contracts by γ.

Every certificate also counts the rounding of the computed ``Q``, ``Tv`` and ``Tv − v``
(Higham's ``γ_{S+2}`` bound on a sum of ``S + 1`` terms; :class:`_Roundoff`): without it, a
float32 model at ``γ = 0.999`` reached a rounding fixed point with ``Tv − v = 0`` exactly and
was certified with bound 0 while ``‖V − V*‖∞`` was 0.14 (7.8 for MPI with rewards of size 100).
A ``tol`` below this round-off floor ends with ``converged=False`` and a warning that says so
(:func:`rltheory.bounds.vi_certificate_floor` gives the floor a priori).

Batched models are solved in one call: every sweep is one array operation over
all instances, and a run stops when every instance is certified. Reaching
``max_iter`` first is reported with ``converged=False`` and a
:class:`~rltheory.errors.ConvergenceWarning`.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. §6.3 (VI), §6.4 (PI), §6.5 (MPI),
§6.6 (span bounds), §6.9 (LP).
Howard, R. A. (1960). *Dynamic Programming and Markov Processes*. MIT Press.
Scherrer, B. (2016). Improved and generalized upper bounds on the complexity of policy
iteration. Math. Oper. Res. 41(3).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import contraction_steps, higham_gamma, highs_linprog, subnormal_spacing
from .._validate import as_real_array, check_positive_int, check_real, check_tolerance
from ..backend import from_host, require_host, to_numpy
from ..errors import ConvergenceWarning, SolverError
from ..trace import Trace, TraceRecorder
from ._occupancy_lp import state_weights
from .bellman import (
    _check_in_range,
    _discounted_scale,
    _greedy,
    _q_values,
    as_stochastic_policy,
    evaluate_policy,
)
from .model import FiniteMDP

__all__ = [
    "MDPSolution",
    "value_iteration",
    "policy_iteration",
    "modified_policy_iteration",
    "linear_program",
    "bellman_certificate",
]


@dataclass(frozen=True, eq=False)
class MDPSolution:
    """Result of an exact discounted solver.

    Attributes
    ----------
    policy : int array, shape (..., S)
        Deterministic policy (lowest action index among exact/tolerance ties).
    V : array, shape (..., S)
        Value estimate with ``‖V − V*‖∞ ≤ bound``.
    Q : array, shape (..., S, A)
        ``Q = r + γ P V``.
    iterations : int
        Sweeps (VI, MPI), improvement steps (PI) or 1 (LP).
    converged : bool
        Whether the stopping rule held for every instance before ``max_iter``.
    bound : array, shape (...)
        Certified ``‖V* − V^policy‖∞ ≤ bound`` per instance.
    trace : Trace
        Per-iteration metrics (``span``, ``bound``; PI also ``changed``).
    method : str
    occupancy, duals : array or None
        LP only: normalised optimal occupancy ``d*[..., S, A]`` (the LP dual).
    """

    policy: Any
    V: Any
    Q: Any
    iterations: int
    converged: bool
    bound: Any
    trace: Trace
    method: str
    occupancy: Any = None
    duals: Any = None


#: HiGHS feasibility tolerances (default 1e-7 is too loose to compare with VI/PI at 1e-8).


def _require_discounted(mdp: FiniteMDP, name: str) -> float:
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"{name} expects a FiniteMDP; got {type(mdp).__name__}")
    if mdp.gamma is None:
        raise ValueError(
            f"{name} solves discounted MDPs but mdp.gamma is None (average reward); "
            "use the average-reward solvers in rltheory.mdp.average"
        )
    return float(mdp.gamma)


def _check_batch(mdp: FiniteMDP, name: str) -> None:
    """Refuse an empty batch (located ``ValueError``): numpy's reshape and reductions failed on it."""
    if 0 in mdp.batch_shape:
        raise ValueError(
            f"{name}: the batch is empty (batch_shape {mdp.batch_shape}); there is nothing to solve"
        )


def _certificate_overflow(mdp: FiniteMDP, name: str, bound: Any) -> ValueError:
    r"""The located error for a certificate that overflowed while the values stayed in range.

    Values that leave the float range are refused by :func:`rltheory.mdp.bellman._check_in_range`
    (the shared error: instance, ``max|R|``, ``max|R|/(1−γ)``, entry, remedy); policy iteration used
    to return ``converged=True`` with bound NaN and ``V = inf`` there (rewards 1e308, γ = 0.9). The
    certificate can overflow with every value in range (it takes ``γ/(1−γ)·sp(Tv − v)``- and
    ``‖v‖∞/(1−γ)``-sized terms): value iteration and modified PI avoid that by sweeping a scaled
    model (:func:`_range_scale`), so for them this error is a guard; policy iteration's certificate
    ``(max(TV − V) + ‖T^π V − V‖∞)/(1−γ)`` is refused with it when it overflows.
    """
    bad = ~np.isfinite(np.asarray(to_numpy(bound), dtype=np.float64).reshape(-1))
    i = int(np.argmax(bad))
    where = (
        f" (batch index {tuple(int(j) for j in np.unravel_index(i, mdp.batch_shape))})"
        if mdp.batch_shape
        else ""
    )
    R = np.asarray(to_numpy(mdp.R), dtype=np.float64).reshape((-1, mdp.S * mdp.A))
    M = float(np.max(np.abs(R[i])))
    return ValueError(
        f"{name}: the certificate of this model overflows the {mdp.dtype} range{where}: max|R| = {M:.4g} "
        f"{_discounted_scale(float(mdp.gamma))(M)}; values scale with R, so solve with R divided by a power "
        "of 2 and scale V back"
    )


def bellman_certificate(mdp: FiniteMDP, v: Any) -> tuple[Any, Any, Any, Any]:
    r"""Span certificate of ``v``: returns ``(Q_v, Tv, Δ, bound)``.

    ``Q_v = r + γPv``, ``Tv = max_a Q_v``, ``Δ = Tv − v`` and
    ``bound = γ/(1−γ)·sp(Δ)`` bounds ``‖V* − V^π‖∞`` for ``π = greedy(Q_v)``
    (Puterman 1994, Thm 6.6.6). Shapes ``[..., S, A]``, ``[..., S]``, ``[..., S]``, ``[...]``.
    """
    xp = mdp.xp
    g = float(mdp.gamma)
    v = as_real_array(v, "v", (mdp.S,), ("s",), xp, mdp.dtype)
    Q = _q_values(mdp, v)
    Tv = xp.max(Q, axis=-1)
    D = Tv - v
    span = xp.max(D, axis=-1) - xp.min(D, axis=-1)
    return Q, Tv, D, (g / (1.0 - g)) * span if g > 0 else 0.0 * span


class _Roundoff:
    r"""Round-off allowances of the certificates, per instance (Higham 2002, §3.1).

    A computed ``Q = R + γPv`` is a sum of at most ``S + 1`` products per entry, so with unit
    roundoff ``u`` and ``a = γ_{S+2} = (S+2)u/(1 − (S+2)u)`` it is within
    ``a(|R| + γP|v|)`` of the exact one for any order of summation (Lemma 3.1, eq. (3.4)). The
    stored ``P`` is stochastic only up to its row sums ``σ``; with
    ``δ ≥ max|σ − 1|`` (the computed sums' distance from 1 plus ``γ_S``) it is within ``δ`` of
    the stochastic ``P/σ`` in the ``∞``-norm, whose model the certificates are about. So
    every computed ``Q``, ``Tv = max_a Q`` and ``T^π v`` is within
    ``e(v) = a‖R‖∞ + γ(a + δ)‖v‖∞ + η`` of the exact operator's (the sweep error of
    :func:`rltheory.bounds.vi_sweep_error`, here at the actual ``‖v‖∞``).

    ``η = 2(S + 2)s`` is the underflow the relative model leaves out (Higham 2002, eq. (2.8)): a
    product whose result is subnormal errs by up to half the subnormal spacing ``s``
    (:func:`~rltheory._numerics.subnormal_spacing`), and an entry of ``Q`` takes ``S + 1``
    products (``S`` of ``Pv``, then ``γ``) with sums that are exact in the subnormal range;
    ``η`` counts them four times over, which also covers the few products the certificates form
    from ``Q`` (``c·(max Δ + min Δ)/2`` and the like). Without it every allowance rounded to 0
    near the underflow threshold: on float32 models with rewards ~1e-40 (float64: ~1e-310) VI,
    MPI, PI and the LP certified bound 0 for values up to 3.8e-45 off ``V*`` (exact rational
    reference; 94 of 160 probe models for VI).
    """

    def __init__(self, mdp: FiniteMDP, gamma: float | None = None) -> None:
        """``gamma``: the discount of the operator (default ``mdp.gamma``; ``1.0`` for average reward)."""
        xp = mdp.xp
        self.xp = xp
        self.u = float(xp.finfo(mdp.dtype).eps) / 2.0
        S = mdp.S
        self.a = higham_gamma(S + 2, self.u)
        sums = xp.sum(mdp.P, axis=-1)
        flat = mdp.batch_shape + (S * mdp.A,)  # (explicit: a -1 is ambiguous for an empty batch)
        self.delta = xp.max(xp.reshape(xp.abs(sums - 1.0), flat), axis=-1) + higham_gamma(S, self.u)
        self.r_max = xp.max(xp.abs(xp.reshape(mdp.R, flat)), axis=-1)
        self.gamma = float(mdp.gamma if gamma is None else gamma)
        self.under = (
            2.0 * (S + 2) * subnormal_spacing(mdp.dtype, xp)
        )  # η: products with subnormal results

    def sweep(self, v: Any) -> Any:
        """``e(v)``: the error of every computed entry of ``Q_v``, ``Tv`` and ``T^π v``."""
        xp = self.xp
        return self._sweep(xp.max(xp.abs(v), axis=-1))

    def _sweep(self, v_norm: Any) -> Any:
        return self.a * self.r_max + self.gamma * (self.a + self.delta) * v_norm + self.under

    def floor(self, v_norm: Any, d_norm: Any, V_norm: Any) -> Any:
        r"""Round-off allowance of the span certificate at ``‖v‖∞``, ``‖Δ‖∞`` and ``‖V‖∞``.

        With ``c = γ/(1−γ)``, ``e = e(v)`` and the exact ``Δ`` within ``ε = e + 2u‖Δ‖∞`` of the
        computed one: ``max(2cε + 2e/(1−γ), 2(2cε + e + 2u‖V‖∞))`` (see :meth:`span_bounds`).
        Non-decreasing in each norm, so norms bounded a priori bound it a priori.
        """
        g = self.gamma
        c = g / (1.0 - g)
        e = self._sweep(v_norm)
        eps = e + 2.0 * self.u * d_norm
        return self.xp.maximum(
            2.0 * c * eps + 2.0 * e / (1.0 - g), 2.0 * (2.0 * c * eps + e + 2.0 * self.u * V_norm)
        )

    def span_bounds(self, v: Any, Tv: Any, D: Any) -> tuple[Any, Any, Any]:
        r"""``(V, bound, floor)`` of the span certificate of ``v`` (computed ``Tv``, ``Δ = Tv − v``).

        With ``c = γ/(1−γ)``, the exact ``Δ`` within ``ε = e + 2u‖Δ‖∞`` of the computed one, and
        ``π`` greedy for the computed ``Q`` (so ``T^π v ≥ Tv − 2e``), Puterman's span bounds
        ``T^π v + c·min(T^π v − v) ≤ V^π ≤ V* ≤ Tv + c·max Δ`` give
        ``‖V* − V^π‖∞ ≤ c(sp(Δ) + 2ε) + 2e/(1−γ)``; the midpoint ``V = Tv + c(max Δ + min Δ)/2``
        (rounded: ``2u‖V‖∞``) is within ``c·sp(Δ)/2 + 2cε + e + 2u‖V‖∞`` of ``V*``. ``bound`` is
        ``c·sp(Δ)`` plus the larger of ``2cε + 2e/(1−γ)`` and twice ``2cε + e + 2u‖V‖∞``
        (:meth:`floor`), so that ``‖V − V*‖∞ ≤ bound/2`` too; ``floor`` is that allowance,
        what remains of the bound when ``sp(Δ) = 0``.
        """
        xp, g = self.xp, self.gamma
        c = g / (1.0 - g)
        hi, lo = xp.max(D, axis=-1), xp.min(D, axis=-1)
        V = Tv + (c * 0.5) * (hi + lo)[..., None]
        floor = self.floor(
            xp.max(xp.abs(v), axis=-1),
            xp.maximum(xp.abs(hi), xp.abs(lo)),
            xp.max(xp.abs(V), axis=-1),
        )
        return V, c * (hi - lo) + floor, floor


def _deterministic_backup(mdp: FiniteMDP, pi: Any) -> Any:
    """``u ↦ T^π u = r_π + γ P_π u`` for a deterministic ``π[..., S]``, with the rows of ``π``
    gathered once (``O(S²)`` dense or ``O(SK)`` sparse per application instead of ``O(S²A)``)."""
    xp = mdp.xp
    g = float(mdp.gamma)
    S = mdp.S
    lead = tuple(pi.shape[:-1])
    r_pi = xp.take_along_axis(xp.broadcast_to(mdp.R, lead + (S, mdp.A)), pi[..., None], axis=-1)[
        ..., 0
    ]
    succ = mdp.successors
    if succ is None:
        P = xp.broadcast_to(mdp.P, lead + tuple(mdp.P.shape[-3:]))
        ix = xp.broadcast_to(pi[..., None, None], lead + (S, 1, S))
        P_pi = xp.take_along_axis(P, ix, axis=-2)[..., 0, :]
        return lambda u: r_pi + g * (P_pi @ u[..., None])[..., 0]
    idx, prob = succ
    K = idx.shape[-1]
    ix = xp.broadcast_to(pi[..., None, None], lead + (S, 1, K))
    i_pi = xp.reshape(
        xp.take_along_axis(xp.broadcast_to(idx, lead + (S, mdp.A, K)), ix, axis=-2), lead + (S * K,)
    )
    p_pi = xp.take_along_axis(xp.broadcast_to(prob, lead + (S, mdp.A, K)), ix, axis=-2)[..., 0, :]
    return lambda u: (
        r_pi
        + g
        * xp.sum(p_pi * xp.reshape(xp.take_along_axis(u, i_pi, axis=-1), lead + (S, K)), axis=-1)
    )


def _a_priori_sweeps(g: float, span0: float, tol: float) -> int:
    """Sweeps after which γ^k·γ/(1−γ)·sp(Δ_0) < tol (span contracts by γ)."""
    return contraction_steps(g, g / (1.0 - g) * span0, tol) + 1


def _finish(
    mdp: FiniteMDP,
    ms: FiniteMDP,
    sc: Any,
    extra: Any,
    v: Any,
    Q_prev: Any,
    Tv: Any,
    D: Any,
    method: str,
    it: int,
    converged: bool,
    rec: TraceRecorder,
    max_iter: int,
    roundoff: _Roundoff,
    tol: float,
) -> MDPSolution:
    """Greedy policy w.r.t. the last v, midpoint value estimate, final Q (in ``mdp``'s units:
    ``ms`` is ``mdp`` with ``R`` divided by ``sc``, or ``mdp`` itself when ``sc`` is None)."""
    xp = mdp.xp
    g = float(mdp.gamma)
    V, bound, floor = roundoff.span_bounds(v, Tv, D)
    Q = _q_values(ms, V)
    if sc is not None:
        with np.errstate(over="ignore"):
            V, Q = V * sc[..., None], Q * sc[..., None, None]
            bound, floor = bound * sc + extra, floor * sc + extra
        V = _check_in_range(mdp, V, method, "V", ("s",), _discounted_scale(g))
        Q = _check_in_range(mdp, Q, method, "Q", ("s", "a"), _discounted_scale(g))
        # (a bound of inf is possible only at max_iter: the first sweeps' certificate in R's units)
    if not converged:
        where = f"at max_iter={max_iter}" if it >= max_iter else f"after {it} sweeps"
        floor_max = float(xp.max(floor))
        why = (
            f"; tol={tol:g} is below the round-off floor {floor_max:.3g} of the certificate in this dtype"
            if floor_max >= tol
            else ""
        )
        warnings.warn(
            f"{method} stopped {where} before its stopping rule held; certified bound is "
            f"{float(xp.max(bound)):.3g}{why}",
            ConvergenceWarning,
            stacklevel=3,
        )
    return MDPSolution(
        policy=_greedy(Q_prev),
        V=V,
        Q=Q,
        iterations=it,
        converged=converged,
        bound=bound,
        trace=rec.finish(),
        method=method,
    )


def value_iteration(
    mdp: FiniteMDP, *, tol: float = 1e-8, max_iter: int | None = None, V0: Any = None
) -> MDPSolution:
    r"""Value iteration ``v_{k+1} = T v_k`` with the span-seminorm stopping rule.

    Stops at the first ``k`` with ``γ/(1−γ)·sp(T v_k − v_k) + f_k < tol`` for every
    instance (``f_k`` the round-off allowance of the computed differences, module docstring),
    and returns ``π = greedy(r + γ P v_k)`` and the midpoint estimate
    ``V = T v_k + γ/(1−γ)(max Δ + min Δ)/2``, certified ``‖V* − V^π‖∞ ≤ bound``
    and ``‖V − V*‖∞ ≤ bound/2`` (Puterman 1994, Thm 6.6.6). An instance whose allowance
    alone reaches ``tol`` stops the run once its span part is down to that level
    (``converged=False``, with a warning naming the floor).

    Parameters
    ----------
    mdp : FiniteMDP
        Discounted, possibly batched.
    tol : float
        Target certificate (policy suboptimality in sup norm).
    max_iter : int, optional
        Cap on sweeps; default is the a-priori count
        ``⌈log(tol(1−γ)/(γ sp(Δ_0)))/log γ⌉ + 1`` plus 100 for round-off.
    V0 : array (..., S), optional
        Starting values (zeros by default).

    Returns
    -------
    MDPSolution
        Trace metrics: ``span`` = sp(Δ_k) and ``bound`` per instance.

    Notes
    -----
    Cost ``O(S²A)`` per instance per sweep; a priori ``‖v_k − V*‖∞ ≤ γ^k ‖v_0 − V*‖∞``.

    An instance whose certificate could leave the float range (``(10 max|R|/(1−γ) + 4‖V0‖∞)/(1−γ)``
    near the largest float) is swept with ``R`` divided by a power of 2, which is exact, and its
    ``V``, ``Q`` and ``bound`` are scaled back (plus an allowance for bits of ``R`` that scaling
    pushed below the subnormal range): ``R = ±2^1023`` at ``γ = 0.5`` (``V* = (1.5, 0.5)·2^1023``)
    is solved as policy iteration solves it. A ``V*`` beyond the float range is refused with a
    located ``ValueError`` as soon as the certificate proves it.

    Examples
    --------
    Two states; staying in state 1 pays 1 forever, so ``V*(1) = 1/(1−γ) = 10``:

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> P = np.array([[[1., 0.], [0., 1.]], [[0., 1.], [0., 1.]]])
    >>> R = np.array([[0., 0.], [1., 1.]])
    >>> res = value_iteration(FiniteMDP(P, R, gamma=0.9), tol=1e-10)
    >>> res.policy, np.round(res.V, 6), res.converged
    (array([1, 0]), array([ 9., 10.]), True)
    """
    _require_discounted(mdp, "value_iteration")
    tol = check_tolerance(tol)
    check_positive_int(max_iter, "max_iter", allow_none=True)
    xp = mdp.xp
    v0 = None if V0 is None else as_real_array(V0, "V0", (mdp.S,), ("s",), xp, mdp.dtype)
    _check_batch(mdp, "value_iteration")
    if v0 is None:
        log2_v0 = np.full(mdp.batch_shape, -np.inf)
    else:
        with np.errstate(divide="ignore"):
            n0 = np.asarray(to_numpy(xp.max(xp.abs(v0), axis=-1)), dtype=np.float64)
            log2_v0 = np.broadcast_to(np.log2(n0), mdp.batch_shape)

    def start(ms: FiniteMDP, sc: Any) -> Any:
        if v0 is None:
            return xp.zeros(ms.batch_shape + (ms.S,), dtype=ms.dtype, device=ms.P.device)
        return v0 if sc is None else v0 / sc[..., None]

    return _certified_sweeps(
        mdp, start, lambda ms, Q, Tv: Tv, log2_v0, tol, max_iter, "value_iteration"
    )


def _range_scale(mdp: FiniteMDP, log2_v0: Any) -> tuple[FiniteMDP, Any, Any] | None:
    r"""``(ms, scale, extra)``: ``mdp`` with ``R`` divided by ``scale = 2^k`` per instance, so that
    every quantity of the VI/MPI sweeps stays in the float range, or ``None`` when ``k = 0``.

    From a start ``v_0`` the iterates keep ``‖v_k‖∞ ≤ ‖v_0‖∞ + 2M/(1−γ)`` (``M = max|R|``; ``T``
    and ``T^π`` are γ-contractions towards values of norm ``≤ M/(1−γ)``), so ``‖Δ‖∞ ≤ M + 2‖v‖∞``
    and the certificate ``γ/(1−γ)·sp(Δ)`` and the midpoint are below
    ``B = (10M/(1−γ) + 4‖v_0‖∞)/(1−γ)``; its round-off allowance is a small multiple of the same
    terms. ``k`` is the least integer with ``2^{4−k}·B`` below the largest float (``log2_v0`` is
    ``log2 ‖v_0‖∞`` per instance, in the units of ``R``). Dividing by ``2^k`` is exact and every
    sweep of the scaled model is then the unscaled one times ``2^{−k}`` (its round-off included),
    except entries that become subnormal; ``R`` itself may lose such low-order bits, and ``extra
    = 2·max|R − 2^k R_s|/(1−γ)`` (the exact difference, Sterbenz) bounds what that changes in
    ``V*`` and ``V^π`` together. With ``R = ±2^1023`` at ``γ = 0.5`` the certificate of the
    unscaled sweeps overflowed (MPI's start ``min r/(1−γ)`` too) while ``V*`` is in range.
    """
    xp = mdp.xp
    g = float(mdp.gamma)
    flat = mdp.batch_shape + (mdp.S * mdp.A,)
    M = np.asarray(to_numpy(xp.max(xp.abs(xp.reshape(mdp.R, flat)), axis=-1)), dtype=np.float64)
    lg = math.log2(1.0 - g)
    with np.errstate(divide="ignore"):
        log2_B = 1.0 + np.maximum(math.log2(10.0) + np.log2(M) - lg, 2.0 + log2_v0) - lg
    k = np.maximum(np.ceil(log2_B + 4.0 - math.log2(float(xp.finfo(mdp.dtype).max))), 0.0)
    k = np.where(np.isfinite(k), k, 0.0)  # (M = 0 and v_0 = 0: nothing to scale)
    if not np.any(k > 0):
        return None
    sc = from_host(np.exp2(k), mdp.P, mdp.dtype)
    with np.errstate(under="ignore"):
        Rs = mdp.R / sc[..., None, None]
    ms = mdp.replace(R=Rs)
    err = xp.max(xp.abs(xp.reshape(mdp.R - Rs * sc[..., None, None], flat)), axis=-1)
    u = float(xp.finfo(mdp.dtype).eps) / 2.0
    return ms, sc, (2.0 * (1.0 + 8.0 * u) / (1.0 - g)) * err


def _refuse_out_of_range(
    mdp: FiniteMDP, name: str, V_s: Any, bound_s: Any, sc: Any, u: float
) -> None:
    """Refuse (located) once the certificate of the scaled sweeps puts ``V*`` beyond the float range.

    ``V*/2^k`` lies within ``bound_s/2`` of the midpoint ``V_s`` (plus the tiny allowance for the
    bits of ``R`` the scaling lost, which the other half of ``bound_s`` covers); ``(1 − 4u)``
    covers the rounding of ``V_s ± bound_s``. A bracket end that overflows when scaled back, with
    the whole bracket on its side of 0, proves the entry of ``V*`` unrepresentable (rewards 1e308
    at ``γ = 0.9``), without sweeping on to the round-off floor first.
    """
    xp = mdp.xp
    b = bound_s[..., None]
    with np.errstate(over="ignore"):
        lo = (V_s - b) * (1.0 - 4.0 * u)
        hi = (V_s + b) * (1.0 - 4.0 * u)
        lo_o, hi_o = lo * sc[..., None], hi * sc[..., None]
    out_lo = (lo > 0.0) & ~xp.isfinite(lo_o)
    out = out_lo | ((hi < 0.0) & ~xp.isfinite(hi_o))
    if bool(xp.any(out)):
        x = xp.where(out_lo, lo_o, xp.where(out, hi_o, V_s))
        _check_in_range(mdp, x, name, "V*", ("s",), _discounted_scale(float(mdp.gamma)))


def _certified_sweeps(
    mdp: FiniteMDP, start: Any, step: Any, log2_v0: Any, tol: float, max_iter: int | None, name: str
) -> MDPSolution:
    """Shared VI/MPI driver: certify ``v`` by its span bound; stop, or move to ``step(ms, Q_v, Tv)``.

    The sweeps run on ``ms``, the model with ``R`` scaled by :func:`_range_scale` when its
    certificate could leave the float range (else ``mdp`` itself); ``start(ms, scale)`` is the
    first iterate in ``ms``'s units. Certificates, the trace and the stopping rule are in the units
    of ``mdp``: the scaled bound times ``2^k`` plus the allowance for the bits of ``R`` the scaling
    lost (``inf`` in the trace where that exceeds the float range).
    """
    xp = mdp.xp
    g = float(mdp.gamma)
    scaled = _range_scale(mdp, log2_v0)
    ms, sc, extra = (mdp, None, None) if scaled is None else scaled
    v = start(ms, sc)
    rec = TraceRecorder()
    roundoff = _Roundoff(ms)
    it, cap = 0, max_iter
    while True:
        with np.errstate(
            over="ignore", invalid="ignore"
        ):  # (an overflow is refused below, located)
            Q, Tv, D, _ = bellman_certificate(ms, v)
            V_s, bound, floor = roundoff.span_bounds(v, Tv, D)
        it += 1
        if not math.isfinite(
            float(xp.max(bound))
        ):  # (NaN or inf: the values or the certificate overflowed)
            _check_in_range(mdp, Tv, name, "the iterate Tv", ("s",), _discounted_scale(g))
            raise _certificate_overflow(mdp, name, bound)
        span = xp.max(D, axis=-1) - xp.min(D, axis=-1)
        if cap is None:
            cap = _a_priori_sweeps(g, float(xp.max(span)), tol) + 100
            if sc is not None and g > 0.0:  # (the span in R's units is up to 2^k times larger)
                cap += math.ceil(math.log(float(xp.max(sc))) / -math.log(g))
        if sc is not None:
            _refuse_out_of_range(mdp, name, V_s, bound, sc, roundoff.u)
            with np.errstate(over="ignore"):  # back to the units of R (inf where beyond the range)
                span, bound, floor = span * sc, bound * sc + extra, floor * sc + extra
        worst = float(xp.max(bound))
        rec.record(it, span=span, bound=bound)
        # an instance whose round-off allowance alone reaches tol and whose span part is down to
        # that level (bound ≤ 2·floor) cannot be certified by more sweeps: stop, unconverged
        stuck = bool(xp.all((bound < tol) | ((floor >= tol) & (bound <= 2.0 * floor))))
        if worst < tol or it >= cap or stuck:
            return _finish(
                mdp, ms, sc, extra, v, Q, Tv, D, name, it, worst < tol, rec, cap, roundoff, tol
            )
        v = step(ms, Q, Tv)


def modified_policy_iteration(
    mdp: FiniteMDP, *, m: int = 5, tol: float = 1e-8, max_iter: int | None = None
) -> MDPSolution:
    r"""Modified policy iteration: ``π_{k+1} = greedy(v_k)``, ``v_{k+1} = (T^{π_{k+1}})^{m+1} v_k``.

    ``m = 0`` is value iteration; ``m → ∞`` is policy iteration (Puterman 1994,
    §6.5). Starting from ``v_0 = min r / (1−γ)`` (so ``T v_0 ≥ v_0``) the iterates
    increase monotonically to ``V*`` (Puterman Thm 6.5.5). Stopping rule and
    certificate are those of :func:`value_iteration`, and so is the exact power-of-2 scaling of
    ``R`` that keeps the sweeps in range (here also the start ``min r/(1−γ)``, which overflowed
    for ``R = ±2^1023`` at ``γ = 0.5``).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> P = np.array([[[1., 0.], [0., 1.]], [[0., 1.], [0., 1.]]])
    >>> R = np.array([[0., 0.], [1., 1.]])
    >>> modified_policy_iteration(FiniteMDP(P, R, gamma=0.9), m=3).policy
    array([1, 0])
    """
    g = _require_discounted(mdp, "modified_policy_iteration")
    tol = check_tolerance(tol)
    check_positive_int(max_iter, "max_iter", allow_none=True)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 0:
        raise ValueError(f"m (partial evaluation sweeps) must be an integer >= 0; got {m!r}")
    _check_batch(mdp, "modified_policy_iteration")
    xp = mdp.xp
    flat = mdp.batch_shape + (mdp.S * mdp.A,)

    def start(ms: FiniteMDP, sc: Any) -> Any:
        rmin = xp.min(xp.reshape(ms.R, flat), axis=-1)
        return xp.broadcast_to((rmin / (1.0 - g))[..., None], ms.batch_shape + (ms.S,))

    rmin = np.abs(np.asarray(to_numpy(xp.min(xp.reshape(mdp.R, flat), axis=-1)), dtype=np.float64))
    with np.errstate(divide="ignore"):
        log2_v0 = np.log2(rmin) - math.log2(1.0 - g)  # (‖v_0‖∞ = |min r|/(1−γ), which may overflow)

    def step(ms: FiniteMDP, Q: Any, Tv: Any) -> Any:
        backup = _deterministic_backup(ms, _greedy(Q))
        u = Tv
        for _ in range(m):
            u = backup(u)
        return u

    return _certified_sweeps(mdp, start, step, log2_v0, tol, max_iter, "modified_policy_iteration")


def policy_iteration(
    mdp: FiniteMDP, *, max_iter: int | None = None, pi0: Any = None, tie_tol: float | None = None
) -> MDPSolution:
    r"""Howard's policy iteration with exact evaluation and a no-cycling tie rule.

    ``V^{π_k} = (I − γP_{π_k})^{-1} r_{π_k}``; ``π_{k+1}(s) = π_k(s)`` if
    ``Q^{π_k}(s, π_k(s)) ≥ max_a Q^{π_k}(s, a) − tie_tol``, else the lowest-index
    maximiser. Stops when no state changes. Keeping the current action on
    (near-)ties makes ``V^{π_k}`` strictly increase at every changed step, so the
    method terminates (Puterman 1994, Thm 6.4.2); an instance whose switches would take it
    back to its previous policy (a round-off tie the tolerance missed) keeps its policy.
    Howard's PI needs at most ``O(SA/(1−γ) · log(1/(1−γ)))`` improvement steps
    (Scherrer 2016, Thm 3).

    Parameters
    ----------
    max_iter : int, optional
        Cap on improvement steps (default ``max(100, ⌈SA/(1−γ)·log(1/(1−γ))⌉)``, capped at 10⁵).
    pi0 : int array (..., S), optional
        Initial policy (default: greedy with respect to ``r``).
    tie_tol : float, optional
        Tie tolerance, a finite number ``≥ 0``. Default, per instance and iteration, the
        round-off of the computed advantages: ``4·res + 64ε‖Q‖∞`` with
        ``res = ‖r_π + γP_πV − V‖∞`` the evaluation's own residual. (The error of ``V`` itself,
        up to ``res/(1−γ)``, is mostly a constant shift, which cancels in ``Q(s, a) − Q(s, b)``;
        a fixed worst-case ``32ε·max|r|/(1−γ)²`` reached ``0.7·max|r|`` at ``γ = 1 − 10⁻⁷`` and
        stopped PI after one step, 1–20 % below ``V*``.) The certificate ``bound`` holds
        whatever the tolerance.

    Returns
    -------
    MDPSolution
        ``bound = (max(TV − V) + ‖T^π V − V‖∞ + 2ε)/(1−γ)`` certifies ``‖V* − V^π‖∞`` for the
        computed evaluation ``V`` of ``π`` (Puterman Prop. 6.6.1 applied to ``V``, plus
        ``‖V − V^π‖∞``), with ``ε`` the round-off of the computed ``TV`` and ``Q(·, π)``
        (:class:`_Roundoff`); trace metric ``changed`` counts switched states per instance.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> P = np.array([[[1., 0.], [0., 1.]], [[0., 1.], [0., 1.]]])
    >>> R = np.array([[0., 0.], [1., 1.]])
    >>> res = policy_iteration(FiniteMDP(P, R, gamma=0.9))
    >>> res.policy, res.V, res.iterations
    (array([1, 0]), array([ 9., 10.]), 2)
    """
    g = _require_discounted(mdp, "policy_iteration")
    check_positive_int(max_iter, "max_iter", allow_none=True)
    tie_tol = check_real(tie_tol, "tie_tol", low=0.0, allow_none=True)
    _check_batch(mdp, "policy_iteration")
    xp = mdp.xp
    S, A = mdp.S, mdp.A
    eps = float(xp.finfo(mdp.dtype).eps)
    if max_iter is None:
        max_iter = int(
            min(1e5, max(100, math.ceil(S * A / (1.0 - g) * math.log(1.0 / (1.0 - g) + 1.0))))
        )
    if pi0 is None:
        pi = _greedy(mdp.R)
    else:
        pi = xp.asarray(pi0)
        if not xp.isdtype(pi.dtype, "integral"):
            raise ValueError(
                f"pi0 must be a deterministic policy (integer array of shape (..., S)); got dtype {pi.dtype}"
            )
        as_stochastic_policy(mdp, pi, field="pi0")  # validates shape and range
        pi = xp.broadcast_to(pi, mdp.batch_shape + (S,))
    ar = xp.arange(A, device=mdp.P.device)
    rec = TraceRecorder()
    roundoff = _Roundoff(mdp)
    it = 0
    prev = None
    while True:
        with np.errstate(
            over="ignore", invalid="ignore"
        ):  # (an overflow is refused below, located)
            V = evaluate_policy(mdp, pi)
            Q = _q_values(mdp, V)
        Q = _check_in_range(mdp, Q, "policy_iteration", "Q^pi", ("s", "a"), _discounted_scale(g))
        it += 1
        qmax = xp.max(Q, axis=-1)
        onehot = pi[..., None] == ar
        q_cur = xp.sum(xp.where(onehot, Q, xp.zeros_like(Q)), axis=-1)
        if tie_tol is None:
            # the round-off of the computed advantages: the evaluation's residual
            # res = ‖r_π + γP_πV − V‖∞ = ‖Q(·, π) − V‖∞ (free: Q is formed from V) and the
            # rounding of Q's entries. (V's own error, res/(1−γ) at worst, is mostly a constant
            # shift, which leaves the differences Q(s, a) − Q(s, b) alone.)
            scale = xp.max(xp.abs(Q), axis=(-2, -1))
            tol = (4.0 * xp.max(xp.abs(q_cur - V), axis=-1) + 64.0 * eps * scale)[..., None]
        else:
            tol = tie_tol
        keep = q_cur >= qmax - tol
        new = xp.where(keep, pi, _greedy(Q))
        if (
            prev is not None
        ):  # an instance returning to its previous policy is at a round-off tie: stay
            back = xp.all(new == prev, axis=-1)[..., None]
            new = xp.where(back, pi, new)
        changed = xp.sum(xp.astype(new != pi, xp.int64), axis=-1)
        D = qmax - V
        # V* − V ≤ max(TV − V)/(1−γ) for any V, and V − V^π ≤ ‖T^π V − V‖∞/(1−γ) (V is the
        # computed evaluation, not V^π itself); both computed quantities within ε of the exact
        res = xp.max(xp.abs(q_cur - V), axis=-1)
        hi = xp.max(D, axis=-1)
        eps_d = roundoff.sweep(V) + 2.0 * roundoff.u * xp.maximum(xp.abs(hi), res)
        bound = (hi + res + 2.0 * eps_d) / (1.0 - g)
        if not math.isfinite(float(xp.max(bound))):  # the certificate overflowed (values in range)
            raise _certificate_overflow(mdp, "policy_iteration", bound)
        rec.record(it, changed=changed, bound=bound)
        n_changed = int(xp.max(changed)) if changed.ndim else int(changed)
        if n_changed == 0 or it >= max_iter:
            converged = n_changed == 0
            if not converged:
                warnings.warn(
                    f"policy_iteration stopped at max_iter={max_iter} with {n_changed} states still "
                    "changing",
                    ConvergenceWarning,
                    stacklevel=2,
                )
            return MDPSolution(pi, V, Q, it, converged, bound, rec.finish(), "policy_iteration")
        prev, pi = pi, new


def linear_program(mdp: FiniteMDP, *, weights: Any = None) -> MDPSolution:
    r"""Solve the MDP by its linear program (scipy HiGHS); host only.

    Primal: ``min_V (1−γ) wᵀV  s.t.  V(s) ≥ r(s,a) + γ Σ_s' P(s'|s,a) V(s')  ∀(s,a)``.
    Dual:   ``max_{d ≥ 0} Σ d(s,a) r(s,a)  s.t.  Σ_a d(s',a) = (1−γ) w(s') + γ Σ_{s,a} P(s'|s,a) d(s,a)``.
    The dual optimum ``d*`` is the normalised occupancy measure of an optimal
    policy from ``w`` and strong duality gives ``(1−γ) wᵀV* = rᵀd*`` (Puterman
    1994, §6.9; SEEDS C3).

    Parameters
    ----------
    weights : array (S,) or (..., S), optional
        Strictly positive state weights ``w`` (a distribution); default: the model's
        ``mu`` if it is strictly positive, else uniform (positive weights make the
        primal solution equal ``V*`` in every state).

    Returns
    -------
    MDPSolution
        ``occupancy`` = ``duals`` = ``d*[..., S, A]``; policy greedy w.r.t. ``Q*`` (lowest
        index on ties within 1e-9·scale); ``bound`` from the span certificate of the LP's V.

    Raises
    ------
    TypeError
        On device (GPU) arrays — this solver runs on the host.
    SolverError
        When HiGHS does not report an optimal solution (its status is attached), also after
        the retries of :func:`rltheory._numerics.highs_linprog`.
    """
    from scipy.sparse import csr_matrix, eye, kron  # noqa: PLC0415

    g = _require_discounted(mdp, "linear_program")
    P = require_host(mdp.P, "linear_program")
    _check_batch(mdp, "linear_program")
    R = to_numpy(mdp.R)
    S, A = mdp.S, mdp.A
    batch = mdp.batch_shape
    Wf = state_weights(mdp, weights)
    Pf = P.reshape((-1, S * A, S))
    Rf = R.reshape((-1, S * A))
    E = kron(eye(S, format="csr"), np.ones((A, 1)), format="csr")  # row (s,a) -> e_s
    Vs, Ds = [], []
    for i in range(Pf.shape[0]):
        A_ub = (g * csr_matrix(Pf[i]) - E).tocsr()
        # the LP is solved for r/ρ, ρ = max|r| (V scales by ρ, the duals d do not): HiGHS's
        # tolerances are absolute, and rewards of size 1e-12 left V 24% off
        rho = float(np.max(np.abs(Rf[i]))) or 1.0
        # ... and for u = (1−γ)V/ρ, of size ≤ 1 at every γ (the rows are the MDP's rows times
        # 1 − γ, so the duals d are the marginals times 1 − γ): at γ = 1 − 1e-5, V/ρ ~ 1e5 and the
        # absolute feasibility tolerance 1e-10 is below its round-off, and HiGHS declared the
        # (always feasible) LP infeasible
        res = highs_linprog(
            Wf[i],
            A_ub=A_ub,
            b_ub=-(1.0 - g) * Rf[i] / rho,
            bounds=[(None, None)] * S,
            method="highs",
        )
        if res.status != 0:
            where = (
                f" (batch index {tuple(int(j) for j in np.unravel_index(i, batch))})"
                if batch
                else ""
            )
            raise SolverError(f"HiGHS failed on the LP{where}: {res.message}", status=res.status)
        # V = ρ·(u/(1−γ)): the factor u/(1−γ) = V/ρ is at most 1/(1−γ), while ρ/(1−γ) overflowed
        # for R = ±2^1023 at γ = 0.5 although V* = (1.5, 0.5)·2^1023 is in range
        with np.errstate(over="ignore"):  # (values beyond the float range: refused below)
            Vs.append(rho * (res.x / (1.0 - g)))
        Ds.append(-(1.0 - g) * res.ineqlin.marginals)
    xp = mdp.xp
    with np.errstate(over="ignore"):  # (rho/(1−γ)·x beyond the range: refused below)
        V = from_host(np.stack(Vs).reshape(batch + (S,)), mdp.P, mdp.dtype)
    V = _check_in_range(mdp, V, "linear_program", "V*", ("s",), _discounted_scale(g))
    d = from_host(np.clip(np.stack(Ds), 0.0, None).reshape(batch + (S, A)), mdp.P, mdp.dtype)
    Q, Tv, D, _ = bellman_certificate(mdp, V)
    atol = 1e-9 * float(np.max(np.abs(R))) / (1.0 - g)  # ties within 1e-9 of the value scale
    # (1e-9 first: max|R|/(1−γ) itself may overflow with V* in range)
    pi = _greedy(Q, atol=atol)
    # |V - V*| <= max|Δ|/(1-γ) (span bounds with v = V; the computed Δ within ε of the exact);
    # picking an action within atol of the maximum adds atol/(1-γ) to the policy's span
    # certificate (with its round-off, _Roundoff.span_bounds)
    roundoff = _Roundoff(mdp)
    _, span_bound, _ = roundoff.span_bounds(V, Tv, D)
    dmax = xp.max(xp.abs(D), axis=-1)
    eps_d = roundoff.sweep(V) + 2.0 * roundoff.u * dmax
    vb = xp.maximum((dmax + eps_d) / (1.0 - g), span_bound + atol / (1.0 - g))
    rec = TraceRecorder()
    rec.record(1, bound=vb)
    return MDPSolution(pi, V, Q, 1, True, vb, rec.finish(), "linear_program", occupancy=d, duals=d)
