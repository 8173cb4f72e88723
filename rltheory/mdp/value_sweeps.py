r"""Value iteration and modified policy iteration: certified sweeps ``v ← T v`` (or
``(T^π)^{m+1} v``) that stop when the span certificate is below ``tol``.

Both run :func:`_certified_sweeps`: at every sweep the certificate
``γ/(1−γ)·sp(T v − v)`` plus its round-off allowance (:mod:`rltheory.mdp.certificates`)
bounds ``‖V* − V^π‖∞`` for the greedy ``π``, and the run stops when it is below ``tol``, when
only the round-off floor is left, or at ``max_iter`` (``converged=False`` with a warning).
A model whose certificate could leave the float range is swept with ``R`` divided by a power
of 2 (exact) and scaled back (:func:`_range_scale`). Re-exported by
:mod:`rltheory.mdp.discounted`.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. §6.3 (value iteration), §6.5 (modified
policy iteration, Thm 6.5.5), §6.6 (span bounds, Thm 6.6.6).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._numerics import contraction_steps
from .._validate import as_real_array, check_positive_int, check_tolerance
from ..backend import from_host, to_numpy
from ..errors import ConvergenceWarning
from ..trace import TraceRecorder
from .bellman import _check_in_range, _discounted_scale, _greedy, _q_values
from .certificates import (
    MDPSolution,
    _bellman_certificate,
    _certificate_overflow,
    _check_batch,
    _require_discounted,
    _Roundoff,
)
from .model import FiniteMDP

__all__ = ["value_iteration", "modified_policy_iteration"]


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
            stacklevel=4,  # _finish <- _certified_sweeps <- value_iteration / MPI <- the caller
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
    log2_v0 = np.full(mdp.batch_shape, -np.inf) if v0 is None else _log2_start_norm(mdp, v0)

    def start(ms: FiniteMDP, sc: Any) -> Any:
        if v0 is None:
            return xp.zeros(ms.batch_shape + (ms.S,), dtype=ms.dtype, device=ms.P.device)
        return v0 if sc is None else v0 / sc[..., None]

    return _certified_sweeps(
        mdp, start, lambda ms, Q, Tv: Tv, log2_v0, tol, max_iter, "value_iteration"
    )


def _log2_start_norm(mdp: FiniteMDP, v0: Any) -> np.ndarray:
    """``log2 ‖V0‖∞`` per instance of the model (``batch_shape``), on the host.

    ``V0``'s batch may be broader than the model's (``(5, S)`` for one model runs five starts):
    its extra leading axes, and axes where the model has size 1, are maximised over, since one
    scale serves each model instance. A batch that does not broadcast against the model's is a
    located ``ValueError`` (numpy's 'operands could not be broadcast' came from the first sweep).
    """
    xp = mdp.xp
    batch = mdp.batch_shape
    n = np.asarray(to_numpy(xp.max(xp.abs(v0), axis=-1)), dtype=np.float64)
    try:
        full = np.broadcast_shapes(n.shape, batch)
    except ValueError:
        raise ValueError(
            f"V0's batch shape {n.shape} does not broadcast against the model's batch shape {batch}"
        ) from None
    n = np.broadcast_to(n, full)
    if len(full) > len(batch):
        n = np.max(n, axis=tuple(range(len(full) - len(batch))))
    for i, b in enumerate(batch):
        if b == 1 and n.shape[i] > 1:
            n = np.max(n, axis=i, keepdims=True)
    with np.errstate(divide="ignore"):
        return np.log2(n)


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
        # (an overflow is refused below, located)
        with np.errstate(over="ignore", invalid="ignore"):
            Q, Tv, D, _ = _bellman_certificate(ms, v)
            V_s, bound, floor = roundoff.span_bounds(v, Tv, D)
        it += 1
        # (NaN or inf: the values or the certificate overflowed)
        if not math.isfinite(float(xp.max(bound))):
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
