"""Shared private machinery of the exact policy-optimisation drivers.

Argument checks, the uniform / validated initial policy, the optimal values the
suboptimality traces are measured against, the multiplicative (mirror-descent) update, the Euclidean projection
onto the simplex, and the iteration loop with its stopping rule. Public names are re-exported by ``policy_gradient`` and
``policy_mirror_descent``.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import higham_gamma, subnormal_spacing
from .._validate import _where, as_distribution, as_real_array, check_int, check_real
from ..backend import array_namespace, is_numpy, to_numpy
from ..errors import ConvergenceWarning
from ..mdp.bellman import _q_values, as_stochastic_policy
from ..mdp.discounted import _Roundoff, policy_iteration
from ..mdp.model import FiniteMDP
from ..trace import Trace, TraceRecorder
from ._projection import _project_to_sum, project_simplex, project_step  # noqa: F401 (moved; re-exported)

__all__ = ["PolicyOptimizationResult", "project_simplex"]


@dataclass(frozen=True, eq=False)
class PolicyOptimizationResult:
    """Result of an exact policy-optimisation driver.

    Attributes
    ----------
    policy : array, shape batch_shape + (S, A)
        The last iterate ``π_T``.
    iterations : int
        Number of updates performed (``T``).
    converged : bool or None
        ``True`` when the stopping rule (suboptimality ``≤ tol`` for every
        instance) held; ``False`` when ``tol`` was given and the cap was reached
        first (a :class:`~rltheory.errors.ConvergenceWarning` is emitted);
        ``None`` for a fixed-budget run (``tol=None``: exactly ``iterations``
        updates, no stopping rule).
    trace : Trace
        Per-iterate metrics, ``trace[name][t]`` for ``t = 0..T`` (batched runs
        have shape ``(T+1, *batch_shape)``).
    theta : array or None
        Final parameters for parametric methods (softmax logits).
    """

    policy: Any
    iterations: int
    converged: bool | None
    trace: Trace
    theta: Any = None


def check_positive(x: Any, name: str) -> float:
    """``x`` must be a finite real number > 0."""
    return check_real(x, name, low=0.0, low_open=True)


def check_iterations(n: Any, name: str = "iterations") -> int:
    """``n`` must be an integer ≥ 0 (Python or numpy, not bool)."""
    return check_int(n, name, minimum=0)


def check_tol(tol: Any) -> float | None:
    """``tol`` is ``None`` (fixed budget) or a number ≥ 0."""
    if tol is None:
        return None
    # numbers.Real: also numpy scalars, e.g. a float32 model's own bound (np.float32 is not a float)
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (tol >= 0):
        raise ValueError(f"tol must be None or a number >= 0; got {tol!r}")
    return float(tol)


def discount(mdp: Any, what: str, *, single: bool = False) -> float:
    """The discount of a discounted :class:`FiniteMDP` (``TypeError``/``ValueError`` otherwise).

    ``single=True`` also rejects batched models.
    """
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"{what} needs a FiniteMDP; got {type(mdp).__name__}")
    if mdp.gamma is None:
        raise ValueError(f"{what} needs a discounted model; got gamma=None (average reward)")
    if single and mdp.batch_shape:
        raise ValueError(
            f"{what} needs a single MDP; got batch_shape={mdp.batch_shape} (index it: mdp[i])"
        )
    return float(mdp.gamma)


def initial_distribution(mdp: FiniteMDP, rho: Any) -> Any:
    """``ρ`` as an array ``batch_shape + (S,)`` (the model's ``μ`` when ``rho`` is None)."""
    xp = mdp.xp
    if rho is None:
        return mdp.initial_distribution()
    rho = as_distribution(rho, "rho", mdp.S, xp, mdp.dtype)
    return xp.broadcast_to(rho, mdp.batch_shape + (mdp.S,))


def initial_policy(mdp: FiniteMDP, pi0: Any, *, positive: bool = False, field: str = "pi0") -> Any:
    """Uniform policy, or ``pi0`` validated and broadcast to ``batch_shape + (S, A)``.

    ``positive=True`` requires full support (methods that take ``log π``).
    """
    xp = mdp.xp
    shape = mdp.batch_shape + (mdp.S, mdp.A)
    if pi0 is None:
        return xp.full(shape, 1.0 / mdp.A, dtype=mdp.dtype, device=mdp.P.device)
    pi = as_stochastic_policy(mdp, pi0, field=field)
    try:
        pi = xp.broadcast_to(pi, shape)
    except ValueError:
        raise ValueError(f"{field} must broadcast to {shape}; got {tuple(pi.shape)}") from None
    if positive and not bool(xp.all(pi > 0)):
        h = to_numpy(pi)
        idx = tuple(int(i) for i in np.argwhere(~(h > 0))[0])
        raise ValueError(
            f"{field} must have full support (every {field}[s, a] > 0): the update takes log pi; "
            f"{field}{_where(idx, ('s', 'a'))} = {float(h[idx])!r}"
        )
    return pi


def optimal_values(mdp: FiniteMDP, V_star: Any) -> Any:
    """``V*`` from :func:`rltheory.mdp.policy_iteration` (exact evaluation), or ``V_star`` checked."""
    if V_star is None:
        return policy_iteration(mdp).V
    V_star = as_real_array(V_star, "V_star", (mdp.S,), ("s",), mdp.xp, mdp.dtype)
    if tuple(V_star.shape) != mdp.batch_shape + (mdp.S,):
        raise ValueError(
            f"V_star must have shape {mdp.batch_shape + (mdp.S,)}; got {tuple(V_star.shape)}"
        )
    return V_star


def safe_log(pi: Any, xp: Any) -> Any:
    """``log π`` with ``−∞`` exactly where ``π = 0`` (no floating-point warning)."""
    pos = pi > 0
    return xp.where(pos, xp.log(xp.where(pos, pi, xp.ones_like(pi))), xp.full_like(pi, -math.inf))


def logit_step(theta: Any, scores: Any, xp: Any) -> tuple[Any, Any]:
    r"""Softmax update on shifted logits over axis 1 of ``(B, A, S)`` arrays: returns ``(π', θ')``.

    ``θ' = θ + scores − max_a(θ + scores)`` and ``π'(a|s) = exp θ'(a, s) / Σ_b exp θ'(b, s)``,
    so ``π' ∝ π exp(scores)`` whenever ``π ∝ exp θ``; every exponent is ``≤ 0`` and ``−∞``
    logits (outside the support) give probability 0. On numpy ``θ`` is updated in place
    (the caller owns it), the reductions over the short action axis run as elementwise
    passes, and the weights are ``exp(max(θ', f)) − exp(f)`` with ``f = −700`` (``−80``
    in float32): weights below ``exp(f) ≈ 1e-304`` (float32: ``1.8e-35``) become exactly 0,
    every other weight moves by at most that amount (``exp`` near underflow runs on a
    several times slower branch).
    """
    if not is_numpy(xp):
        z = theta + scores
        z = z - xp.max(z, axis=1, keepdims=True)
        w = xp.exp(z)
        return w / xp.sum(w, axis=1, keepdims=True), z
    theta += scores
    theta -= _action_reduce(np.maximum, theta)[:, None]
    floor, w_floor = _exp_floor(theta.dtype)
    w = np.maximum(theta, floor)
    np.exp(w, out=w)
    w -= w_floor  # exactly 0 at and below the floor (and for -inf logits), >= 0 above it
    w /= _action_reduce(np.add, w)[:, None]
    return w, theta


def softmax_sum_defect(n_actions: int, eps: float) -> float:
    r"""A bound on ``|Σ_a π(a|s) − 1|`` for the policies :func:`logit_step` computes: ``γ_{A+1}``.

    The weights' sum is computed with relative error ``|θ| ≤ γ_{A−1}`` (``A − 1`` additions, any
    order) and each ``π_a = w_a/ŝ`` is rounded once, so ``Σ_a π_a = (1 ± u)/(1 + θ)``, within
    ``(u + γ_{A−1})/(1 − γ_{A−1}) ≤ γ_{A+1}`` of 1 (Higham 2002, Lemma 3.1).
    (``eps``: the dtype's machine epsilon, ``u = eps/2``.)
    """
    return higham_gamma(n_actions + 1, float(eps) / 2.0)


@functools.lru_cache(maxsize=8)
def _exp_floor(dtype: Any) -> tuple[float, Any]:
    """``(f, exp(f))`` for the weights of :func:`logit_step`; ``exp(f)`` is a normal number on
    ``exp``'s fast path, computed by numpy's own array ``exp`` (so ``w − exp(f)`` is exactly 0
    at the floor; a correctly rounded scalar ``exp`` may differ by one unit in float32)."""
    f = -700.0 if np.dtype(dtype).itemsize >= 8 else -80.0
    return f, np.exp(np.full(16, f, dtype=dtype))[0]


def _action_reduce(op: Any, x: np.ndarray) -> np.ndarray:
    """``op``-reduction over axis 1 of ``x`` (short: a chain of elementwise ``op`` passes)."""
    if x.shape[1] > 16:
        return op.reduce(x, axis=1)
    out = x[:, 0].copy()
    for a in range(1, x.shape[1]):
        op(out, x[:, a], out=out)
    return out


def multiplicative_update(pi: Any, scores: Any, xp: Any) -> Any:
    r"""``π'(a|s) ∝ π(a|s) exp(scores(s, a))`` row-wise, stable for any score scale.

    Scores are shifted by their maximum over the support of ``π(·|s)`` so every
    exponent is ``≤ 0`` and the largest supported term is exactly ``π(a_max|s) > 0``;
    actions outside the support keep probability 0.
    """
    pos = pi > 0
    neg = xp.full_like(scores, -math.inf)
    m = xp.max(xp.where(pos, scores, neg), axis=-1, keepdims=True)
    w = xp.where(
        pos, pi * xp.exp(xp.where(pos, scores - m, xp.zeros_like(scores))), xp.zeros_like(pi)
    )
    return w / xp.sum(w, axis=-1, keepdims=True)


def gap_metrics(xp: Any, V_star: Any, V: Any, rho: Any) -> dict[str, Any]:
    """Trace metrics ``suboptimality = (V* − V)(ρ)`` and ``suboptimality_inf = max_s (V* − V)(s)``."""
    gap = V_star - V
    if is_numpy(
        xp
    ):  # numpy's own reductions: no namespace-wrapper overhead on the per-iteration path
        return {
            "suboptimality": np.einsum("...s,...s->...", gap, rho),
            "suboptimality_inf": np.max(gap, axis=-1),
        }
    return {"suboptimality": xp.sum(gap * rho, axis=-1), "suboptimality_inf": xp.max(gap, axis=-1)}


def underflow_error(n_products: int, dtype: Any, xp: Any) -> float:
    r"""``2n·s`` with ``s`` the subnormal spacing of ``dtype`` (``2u`` times the smallest normal
    number): ``≥`` the absolute error that ``n`` products whose results are subnormal add to a
    computed sum, passed on by at most a factor 2 (Higham 2002, §2.1, eq. (2.8): a product errs by
    ``|δ| ≤ u`` relative plus ``|η| ≤ s/2`` absolute; sums and differences in the subnormal range
    are exact). Negligible unless values are within ``~1/ε`` of the underflow threshold, but it
    keeps a certificate there from being 0 while the exact error is not."""
    return 2.0 * n_products * subnormal_spacing(dtype, xp)


def sum_defect(pi: Any, xp: Any) -> Any:
    """``max_s |Σ_a π(a|s) − 1|`` per instance, as computed (callers add ``γ_A`` for the sum's own rounding)."""
    return xp.max(xp.abs(xp.sum(pi, axis=-1) - 1.0), axis=-1)


def evaluation_error(
    mdp: FiniteMDP, pi: Any, V: Any, ro: _Roundoff, Q: Any = None, nu: Any = None
) -> Any:
    r"""``≥ ‖V − V^π‖∞`` per instance, for a computed evaluation ``V`` of the stochastic ``π``.

    ``V − V^π = (I − γP_π)^{-1}(V − T^π V)``, so ``‖V − V^π‖∞ ≤ ‖T^π V − V‖∞/(1 − γ)`` (for
    the stochastic ``P/σ`` and ``π/Σ_a π``). The computed ``T^π V = Σ_a π(a|s) Q_V(s, a)`` is
    within ``e(V)`` (:class:`rltheory.mdp.discounted._Roundoff`: the entries of ``Q_V``) plus
    ``(γ_A(1 + ν) + 2ν)(‖Q_V‖∞ + e(V))`` (the sum over ``A`` actions, Higham's ``γ_A``, and the
    policy's sum defect ``ν ≥ |Σ_a π − 1|``) of the exact one, and the subtraction adds
    ``2u(‖T^π V‖∞ + ‖V‖∞)``; ``8u`` more covers the division and ``1 − γ``. Those are
    relative errors (Higham's model without underflow); products whose result is subnormal err
    by up to half the subnormal spacing instead (:func:`underflow_error`: the ``S + 1``
    products of ``Q_V``, passed on twice, the ``A`` of the sum over actions and a few of the
    allowance itself). Without that term values near the underflow threshold were certified 0:
    a float32 one-state model with rewards ~5e-41 had ``‖V − V^π‖∞ = 1.9e-45`` and a bound of 0.
    ``Q``, ``nu``: the computed ``Q_V`` and :func:`sum_defect` of ``pi``, when the caller has them.
    """
    xp, u, g = ro.xp, ro.u, ro.gamma
    Q = _q_values(mdp, V) if Q is None else Q
    TV = xp.sum(pi * Q, axis=-1)
    res = xp.max(xp.abs(TV - V), axis=-1)
    gA = higham_gamma(mdp.A, u)
    nu = sum_defect(pi, xp) if nu is None else nu
    nu = nu + gA * (1.0 + nu)
    e = ro.sweep(V)
    q_max = xp.max(xp.reshape(xp.abs(Q), tuple(Q.shape[:-2]) + (-1,)), axis=-1)
    e = e + (gA * (1.0 + nu) + 2.0 * nu) * (q_max + e)
    # (two terms: max|TV| + max|V| overflowed for values ~1.3e308, with numpy's RuntimeWarning)
    e = e + 2.0 * u * xp.max(xp.abs(TV), axis=-1) + 2.0 * u * xp.max(xp.abs(V), axis=-1)
    e = e + underflow_error(2 * mdp.S + mdp.A + 8, mdp.dtype, xp)
    return (res + e) * (1.0 + 8.0 * u) / (1.0 - g)


def soft_evaluation_error(
    mdp: FiniteMDP, pi: Any, logpi: Any, V: Any, Q: Any, tau: float, ro: _Roundoff, nu: Any
) -> Any:
    r"""``≥ ‖V − V_τ^π‖∞`` per instance for the computed regularised values ``V`` (and ``Q = R + γPV``).

    ``V_τ^π`` is the value of ``π`` under the reward ``R(s, a) − τ log π(a|s)``
    (:func:`~rltheory.algorithms.soft.regularized_values`), so
    :func:`evaluation_error` applies with
    ``Q' = Q − τ·logπ`` (0 where ``π = 0``: ``0·log 0 = 0``); ``Q'`` itself is rounded by at most
    ``4u(|Q| + τ|log π|)``, and ``logπ`` misses ``log`` of the stored ``π`` (normalised) by at most
    ``4u + 2ν`` (``exp``'s and the normalisation's rounding, ``ν`` = :func:`sum_defect`), each over ``1 − γ``.
    """
    xp, u, g = ro.xp, ro.u, ro.gamma
    red = (-2, -1)
    shaped = xp.where(pi > 0, Q - tau * logpi, xp.zeros_like(Q))
    lmax = xp.max(xp.where(pi > 0, xp.abs(logpi), xp.zeros_like(logpi)), axis=red)
    extra = 4.0 * u * (xp.max(xp.abs(Q), axis=red) + tau * lmax) + tau * (4.0 * u + 2.0 * nu)
    return evaluation_error(mdp, pi, V, ro, shaped, nu) + extra * (1.0 + 8.0 * u) / (1.0 - g)


def weighting_error(gap: Any, rho: Any, u: float) -> Any:
    """``≥ |computed Σ_s ρ(s) gap(s) − Σ_s ρ̂(s) gap(s)|`` (``ρ̂ = ρ/Σρ``): the sum's ``γ_{S+1}``, the
    rounding of ``gap`` itself (``u``) and ``ρ``'s sum defect, each times ``max|gap|``, and the
    ``S`` products' underflow (:func:`underflow_error`)."""
    xp = array_namespace(gap, rho)
    S = gap.shape[-1]
    d = xp.max(xp.abs(xp.sum(rho, axis=-1, keepdims=True) - 1.0), axis=-1) + higham_gamma(S, u)
    return (higham_gamma(S + 2, u) * (1.0 + d) + 2.0 * d) * xp.max(
        xp.abs(gap), axis=-1
    ) + underflow_error(S + 4, gap.dtype, xp)


class GapCertificate:
    r"""Certified suboptimality ``V*(ρ) − V^π(ρ)`` of the exact drivers, round-off included.

    ``bound = (computed (V* − V)(ρ) + floor)(1 + 4u)`` with ``floor`` the error of the computed
    ``V`` (:func:`evaluation_error`), of ``V*`` (``policy_iteration``'s certified bound plus its
    own evaluation's error; for a ``V_star`` passed in by the caller, its Bellman-residual bound
    ``‖V_star − V*‖∞ ≤ ‖T V_star − V_star‖∞/(1 − γ)`` with the computed residual's round-off, Puterman
    1994, Thm 6.2.3 / Prop. 6.6.1 — 0 up to round-off for an exact ``V*``) and of the
    ``ρ``-weighting (:func:`weighting_error`). ``floor`` is what a ``tol`` must exceed to be
    certifiable: a driver that reaches its cap with ``tol`` below it says so (:meth:`Loop.record_certified`).
    """

    def __init__(self, mdp: FiniteMDP, V_star: Any) -> None:
        """``V_star``: the caller's (certified by its Bellman residual), or ``None`` for
        ``policy_iteration``'s."""
        xp = mdp.xp
        self.ro = _Roundoff(mdp)
        self.e_star: Any = 0.0
        if V_star is None:
            sol = policy_iteration(mdp)
            one_hot = xp.astype(
                sol.policy[..., None] == xp.arange(mdp.A, device=mdp.P.device), mdp.dtype
            )
            self.e_star = sol.bound + evaluation_error(mdp, one_hot, sol.V, self.ro)
            V_star = sol.V
            self.V_star = optimal_values(mdp, V_star)
        else:
            # A caller's V_star was taken as exact: a wrong one (V* = 1.0 given as 1.0 + 0.5 on a
            # one-state model) certified suboptimality -0.995 where the gap was 0.005.
            self.V_star = optimal_values(mdp, V_star)
            self.e_star = self._residual_bound(mdp, self.V_star)

    def _residual_bound(self, mdp: FiniteMDP, v: Any) -> Any:
        r"""``‖v − V*‖∞ ≤ ‖Tv − v‖∞/(1 − γ)`` (``T`` a γ-contraction), with the exact residual
        within ``e(v) + 2u‖Δ‖∞`` of the computed ``Δ = Tv − v`` (:class:`_Roundoff`), rounded up."""
        xp = mdp.xp
        D = xp.max(_q_values(mdp, v), axis=-1) - v
        d = xp.max(xp.abs(D), axis=-1)
        u = self.ro.u
        return (d * (1.0 + 2.0 * u) + self.ro.sweep(v)) * (1.0 + 8.0 * u) / (1.0 - float(mdp.gamma))

    def __call__(
        self, mdp: FiniteMDP, pi: Any, V: Any, rho: Any, sub: Any, Q: Any = None
    ) -> tuple[Any, Any]:
        """``(floor, bound)`` for the computed ``V`` of ``pi`` and the computed ``sub = (V* − V)(ρ)``."""
        floor = (
            self.e_star
            + evaluation_error(mdp, pi, V, self.ro, Q)
            + weighting_error(self.V_star - V, rho, self.ro.u)
        )
        return floor, (sub + floor) * (1.0 + 4.0 * self.ro.u)


def prepare_certified(
    mdp: Any, what: str, *, iterations: Any, tol: Any, rho: Any, V_star: Any, pi0: Any
) -> tuple[float, int, float | None, Any, GapCertificate, Any, Loop]:
    """Checks and set-up shared by the exact drivers: ``(γ, T, tol, ρ, certificate, π_0, loop)``;
    the :class:`GapCertificate` holds ``V*`` (its ``V_star``) and the error of ``V*``."""
    g = discount(mdp, what)
    iterations = check_iterations(iterations)
    tol = check_tol(tol)
    rho = initial_distribution(mdp, rho)
    cert = GapCertificate(mdp, V_star)
    pi = initial_policy(mdp, pi0)
    return g, iterations, tol, rho, cert, pi, Loop(what, iterations, tol, mdp.xp)


def warn_at_cap(name: str, iterations: int, worst: float, tol: float, *, stacklevel: int) -> None:
    """The :class:`ConvergenceWarning` of a driver that reached its cap with ``worst > tol``."""
    warnings.warn(
        f"{name} reached iterations={iterations} with suboptimality {worst:.3g} > tol={tol:g}",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )


class Loop:
    """Iteration bookkeeping: record metrics, apply the stopping rule, warn at the cap."""

    def __init__(self, name: str, iterations: int, tol: float | None, xp: Any) -> None:
        self.name, self.iterations, self.tol, self.xp = name, iterations, tol, xp
        self.rec = TraceRecorder()
        self.converged: bool | None = None
        self.t = 0

    def record(self, t: int, stop_metric: Any, **metrics: Any) -> bool:
        """Record iterate ``t``; return True when the loop must stop."""
        self.rec.record(t, **metrics)
        self.t = t
        if self.tol is not None and float(self.xp.max(stop_metric)) <= self.tol:
            self.converged = True
            return True
        if t >= self.iterations:
            if self.tol is not None:
                self.converged = False
                warn_at_cap(
                    self.name,
                    self.iterations,
                    float(self.xp.max(stop_metric)),
                    self.tol,
                    stacklevel=4,
                )
            return True
        return False

    def record_certified(
        self, t: int, bound: Any, floor: Any, quantity: str = "suboptimality", **metrics: Any
    ) -> bool:
        """:meth:`record` stopping on a certified ``bound`` (of ``quantity``, for the warning); at the
        cap, a ``tol`` below the certificate's round-off ``floor`` is named in the warning
        (``converged=False``)."""
        self.rec.record(t, **metrics)
        self.t = t
        worst = float(self.xp.max(bound))
        if self.tol is not None and worst <= self.tol:
            self.converged = True
            return True
        if t >= self.iterations:
            if self.tol is not None:
                self.converged = False
                lowest = float(self.xp.max(floor))
                if lowest >= self.tol:
                    warnings.warn(
                        f"{self.name} reached iterations={self.iterations} with certified {quantity} "
                        f"{worst:.3g} > tol={self.tol:g}; tol is below the round-off floor {lowest:.3g} "
                        "of the certificate in this dtype",
                        ConvergenceWarning,
                        stacklevel=3,
                    )
                else:
                    warnings.warn(
                        f"{self.name} reached iterations={self.iterations} with certified {quantity} "
                        f"{worst:.3g} > tol={self.tol:g}",
                        ConvergenceWarning,
                        stacklevel=3,
                    )
            return True
        return False

    def result(self, policy: Any, theta: Any = None) -> PolicyOptimizationResult:
        return PolicyOptimizationResult(
            policy=policy,
            iterations=self.t,
            converged=self.converged,
            trace=self.rec.finish(),
            theta=theta,
        )
