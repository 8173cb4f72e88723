r"""What the discounted solvers return and how they certify it: :class:`MDPSolution`,
the span certificate :func:`bellman_certificate`, and the round-off allowance
:class:`_Roundoff` that every certificate adds.

For any ``v`` with ``Δ = T v − v`` and ``π`` greedy with respect to ``v``,

    T v + γ/(1−γ)·min Δ  ≤  V^π  ≤  V*  ≤  T v + γ/(1−γ)·max Δ

(Puterman 1994, Thm 6.6.6 and Prop. 6.6.5), so ``γ/(1−γ)·sp(Δ)`` bounds ``‖V* − V^π‖∞``.
The computed ``Q``, ``Tv`` and ``Tv − v`` differ from the exact ones by at most the
allowance of :class:`_Roundoff` (Higham 2002, Lemma 3.1, and the underflow term of
eq. (2.8)), which the solvers add to every bound. Also here: the argument checks the four
solvers share and the located error for a certificate beyond the float range. Everything
is re-exported by :mod:`rltheory.mdp.discounted`.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. §6.6 (span bounds).
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms*, 2nd ed. SIAM. §2.1,
§3.1 (the ``γ_n`` bound of a sum).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import higham_gamma, subnormal_spacing
from .._validate import as_real_array
from ..backend import to_numpy
from ..trace import Trace
from .bellman import _discounted_scale, _q_values
from .difference_form import _flow_sums
from .model import FiniteMDP

__all__ = ["MDPSolution", "bellman_certificate"]


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
        Sweeps (VI, MPI), improvement steps (PI), or the policies the LP's policy-improvement
        check evaluated (1 where the LP's policy is optimal).
    converged : bool
        Whether the stopping rule held for every instance before ``max_iter`` (the LP: that of
        its policy-improvement check).
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
    model (:func:`rltheory.mdp.value_sweeps._range_scale`), so for them this error is a guard; policy iteration refuses with
    it only when its final certificate ``(max(TV − V) + ‖T^π V − V‖∞)/(1−γ)`` overflows (an early
    policy's certificate beyond the range is ``inf`` in the trace).
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
    ``bound = γ/(1−γ)·sp(Δ) + f`` bounds ``‖V* − V^π‖∞`` for ``π = greedy(Q_v)``
    (Puterman 1994, Thm 6.6.6), with ``f`` the round-off allowance of the computed ``Q_v``,
    ``Tv`` and ``Δ`` (:class:`_Roundoff`, as the solvers add it): without it a float32 ``v`` at
    a rounding tie certified 0 for a policy ``1.2e-4`` below ``V*``. Shapes ``[..., S, A]``,
    ``[..., S]``, ``[..., S]``, ``[...]``; ``bound`` is ``inf`` where it exceeds the float range.

    Raises
    ------
    TypeError
        ``mdp`` is not a :class:`~rltheory.mdp.FiniteMDP`.
    ValueError
        An average-reward model (``gamma=None``), or ``v`` not finite, not of shape ``(..., S)``
        or with a batch that does not broadcast against the model's.

    Examples
    --------
    Staying in state 1 pays 1 forever, so ``V* = (9, 10)`` at ``γ = 0.9``: at ``v = V*`` the
    certificate is its round-off allowance alone; at ``v = 0``, ``Δ = Tv = (0, 1)`` and the
    bound is ``9·sp(Δ) = 9`` plus that allowance.

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> P = np.array([[[1., 0.], [0., 1.]], [[0., 1.], [0., 1.]]])
    >>> mdp = FiniteMDP(P, np.array([[0., 0.], [1., 1.]]), gamma=0.9)
    >>> at_v_star = float(bellman_certificate(mdp, np.array([9., 10.]))[3])
    >>> at_zero = float(bellman_certificate(mdp, np.zeros(2))[3])
    >>> 0.0 < at_v_star < 1e-12, 9.0 < at_zero < 9.0 + 1e-12
    (True, True)
    """
    _require_discounted(mdp, "bellman_certificate")
    xp = mdp.xp
    v = as_real_array(v, "v", (mdp.S,), ("s",), xp, mdp.dtype)
    try:  # (a (4, S) v on a (3,)-batch failed inside numpy's matmul)
        np.broadcast_shapes(tuple(v.shape[:-1]), mdp.batch_shape)
    except ValueError:
        raise ValueError(
            f"v's batch shape {tuple(v.shape[:-1])} does not broadcast against the model's "
            f"batch shape {mdp.batch_shape}"
        ) from None
    Q, Tv, D, _ = _bellman_certificate(mdp, v)
    with np.errstate(over="ignore", invalid="ignore"):  # (beyond the float range: inf)
        bound = _Roundoff(mdp).span_bounds(v, Tv, D)[1]
    return Q, Tv, D, bound


def _bellman_certificate(mdp: FiniteMDP, v: Any) -> tuple[Any, Any, Any, Any]:
    """:func:`bellman_certificate` without the checks of ``v`` and without the round-off
    allowance (``bound = γ/(1−γ)·sp(Δ)``): the sweeps' kernel, which adds the allowance itself
    (:meth:`_Roundoff.span_bounds`) from a :class:`_Roundoff` built once per run."""
    xp = mdp.xp
    g = float(mdp.gamma)
    Q = _q_values(mdp, v)
    Tv = xp.max(Q, axis=-1)
    D = Tv - v
    span = xp.max(D, axis=-1) - xp.min(D, axis=-1)
    with np.errstate(over="ignore"):  # (beyond the float range: inf)
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
        # η: products with subnormal results
        self.under = 2.0 * (S + 2) * subnormal_spacing(mdp.dtype, xp)

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

    def flow_advantages(self, mdp: FiniteMDP, v: Any) -> tuple[Any, Any]:
        r"""``(D, e)``: ``D(s, a) = Q_v(s, a) − v(s)`` formed as
        ``r(s, a) − (1−γ)v(s) + γ Σ_j P(j|s, a)(v(j) − v(s))``, and ``e`` per instance with every
        entry within ``e`` of the exact one for the stochastic ``P/σ``.

        The terms have the size of the rewards, of ``(1−γ)v`` and of the spread of ``v``; the
        direct ``Q_v − v`` rounds ``γPv`` to ``ε‖v‖∞``, up to ``ε·max|r|/(1−γ)``, which the
        certificates divide by ``1 − γ`` again. With ``t = |r| + (1−γ)|v| + γΣ_j P|v(j) − v(s)|``:
        ``e = γ_{S+6}·max t + δ/(1−δ)·γ max Σ_j P|v(j) − v(s)| + η`` (``S + 5`` roundings per
        entry; ``P/σ`` differs from ``P`` by a factor within ``δ/(1−δ)`` of 1, and the exact
        ``Σ_j P(j)/σ = 1`` makes ``(P/σ)v − v = Σ_j (P(j)/σ)(v(j) − v(s))``). ``O(S²A)``, as ``Q``,
        in blocks of states (:func:`rltheory.mdp.difference_form._flow_sums`), or ``O(SAK)`` on
        the successor lists of a sparse ``P``.
        """
        xp, g = self.xp, self.gamma
        flow, apw = _flow_sums(mdp, v, absolute=True)  # (blocked, or on the successor lists)
        D = mdp.R - (1.0 - g) * v[..., None] + g * flow
        t = xp.abs(mdp.R) + (1.0 - g) * xp.abs(v)[..., None] + g * apw
        a = higham_gamma(mdp.S + 6, self.u)
        e = (
            a * xp.max(t, axis=(-2, -1))
            + (self.delta / (1.0 - self.delta)) * g * xp.max(apw, axis=(-2, -1))
            + self.under
        )
        return D, e

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
