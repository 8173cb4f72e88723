r"""Utilities of the occupancy measure: the :class:`OccupancyFunction` and the built-in ones.

An :class:`OccupancyFunction` is a function ``F(d)`` of the normalised occupancy ``d[S, A]``
carrying its cvxpy expression (for :func:`rltheory.mdp.solve_general_utility`), its value and its
gradient, the *shadow reward* ``r̃ = ∇F(d)`` (:func:`shadow_reward`; Zhang et al. 2020, §3).
Built-in: :func:`linear_utility` (standard RL, ``⟨r, d⟩``), :func:`entropy_utility` (maximum-entropy
exploration, Hazan et al. 2019), :func:`neg_kl_utility` (imitation, ``−KL(d‖d_E)``),
:func:`kl_divergence` (a convex trust-region constraint), :func:`quadratic_utility` (a quadratic
concentration penalty). Concavity/convexity as in Boyd & Vandenberghe (2004, §3.1.5).

References
----------
Zhang, J., Koppel, A., Bedi, A. S., Szepesvári, C. & Wang, M. (2020). Variational policy
gradient method for reinforcement learning with general utilities. NeurIPS.
Hazan, E., Kakade, S., Singh, K. & Van Soest, A. (2019). Provably efficient maximum
entropy exploration. ICML.
Boyd, S. & Vandenberghe, L. (2004). *Convex Optimization*. §3.1.5.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import PROB_ATOL, _source_atol, check_int, check_real
from ..backend import as_float, to_numpy

__all__ = [
    "OccupancyFunction",
    "linear_utility",
    "entropy_utility",
    "neg_kl_utility",
    "kl_divergence",
    "quadratic_utility",
    "shadow_reward",
]


@dataclass(frozen=True)
class OccupancyFunction:
    """A function ``F(d)`` of the occupancy ``d[S, A]`` usable by :func:`solve_general_utility`.

    Attributes
    ----------
    name : str
    curvature : {"affine", "concave", "convex"}
    expression : callable
        ``cvxpy.Expression`` of the flattened variable ``d[S*A]``.
    value : callable
        ``F(d)`` for a numpy ``d[S, A]``.
    gradient : callable
        ``∇F(d)`` as ``[S, A]`` (``+inf``/``-inf`` where undefined, e.g. ``log 0``).
    domain : callable, optional
        Extra cvxpy constraints on ``d[S*A]`` (e.g. support restrictions).
    shape : tuple (S, A)
    """

    name: str
    curvature: str
    expression: Callable[[Any], Any]
    value: Callable[[np.ndarray], float]
    gradient: Callable[[np.ndarray], np.ndarray]
    shape: tuple[int, int]
    domain: Callable[[Any], list] | None = None

    def __post_init__(self) -> None:
        # checked once here: a misspelt curvature ("Concave") or a list shape ([2, 2]) was accepted and
        # surfaced later, if at all (a list shape never equals the model's (S, A) tuple)
        if self.curvature not in ("affine", "concave", "convex"):
            raise ValueError(
                f"OccupancyFunction {self.name!r}: curvature must be 'affine', 'concave' or 'convex'; "
                f"got {self.curvature!r}"
            )
        for field in ("expression", "value", "gradient"):
            if not callable(getattr(self, field)):
                raise TypeError(
                    f"OccupancyFunction {self.name!r}: {field} must be callable; "
                    f"got {type(getattr(self, field)).__name__}"
                )
        if self.domain is not None and not callable(self.domain):
            raise TypeError(
                f"OccupancyFunction {self.name!r}: domain must be callable or None; "
                f"got {type(self.domain).__name__}"
            )
        shape = tuple(self.shape) if isinstance(self.shape, (tuple, list)) else None
        if shape is None or len(shape) != 2:
            raise ValueError(
                f"OccupancyFunction {self.name!r}: shape must be a pair (S, A); got {self.shape!r}"
            )
        shape = (
            check_int(shape[0], f"OccupancyFunction {self.name!r}: shape[0] (S)"),
            check_int(shape[1], f"OccupancyFunction {self.name!r}: shape[1] (A)"),
        )
        object.__setattr__(self, "shape", shape)


def _as_table(x: Any, field: str, shape: tuple[int, int] | None = None) -> np.ndarray:
    # as_float refuses complex and text by name (a float cast dropped imaginary parts with a warning)
    a = np.asarray(as_float(to_numpy(x), np, np.float64, field=field), dtype=float)
    if a.ndim != 2 or (shape is not None and a.shape != shape):
        want = f"(S, A) = {shape}" if shape else "(S, A)"
        raise ValueError(f"{field} must have shape {want}; got {a.shape}")
    if not np.all(np.isfinite(a)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(f"{field} must be finite; {field}[s={idx[0]}, a={idx[1]}] = {a[idx]}")
    return a


def _builtin(
    name: str,
    curvature: str,
    expression: Callable[[Any], Any],
    value: Callable[[np.ndarray], float],
    gradient: Callable[[np.ndarray], np.ndarray],
    shape: tuple[int, int],
    domain: Callable[[Any], list] | None = None,
) -> OccupancyFunction:
    """A built-in :class:`OccupancyFunction` whose value and gradient take one ``d[S, A]`` in float64.

    Any other shape is a located ``ValueError``: a batch ``d[3, 2, 2]`` made the entropy's value the
    sum over the batch (3 log 4) and the KL's the value at its first table, and a transposed ``d[4, 1]``
    gave the state entropy of the wrong marginal, all silently."""

    def table(d: Any, what: str) -> np.ndarray:
        d = _host(d)
        if d.shape != tuple(shape):
            raise ValueError(
                f"{name} {what}: d must have shape (S, A) = {tuple(shape)}; got {d.shape}"
            )
        return d

    return OccupancyFunction(
        name,
        curvature,
        expression,
        lambda d: value(table(d, "value")),
        lambda d: gradient(table(d, "gradient")),
        shape,
        domain,
    )


def linear_utility(r: Any) -> OccupancyFunction:
    r"""``F(d) = ⟨r, d⟩ = Σ_{s,a} r(s,a) d(s,a)`` (affine; ``∇F = r``).

    With the normalised occupancy, ``max_d F = (1−γ) V*_r(μ)`` (Puterman 1994, §6.9).

    Examples
    --------
    >>> import numpy as np
    >>> f = linear_utility(np.array([[1.0, 2.0]]))
    >>> f.value(np.array([[0.25, 0.75]]))
    1.75
    """
    r = _as_table(r, "r")
    flat = r.reshape(-1)
    return _builtin(
        "linear",
        "affine",
        lambda d: flat @ d,
        lambda d: float(np.sum(r * d)),
        lambda d: r.copy(),
        r.shape,
    )


def _host(d: Any) -> np.ndarray:
    # values and gradients are computed in float64 whatever precision d came in: the entropy of a
    # float32 occupancy summed in float32 was 3.9e-7 below its exact value (a random 4×5 table)
    return np.asarray(to_numpy(d), dtype=np.float64)


def _log_ratio(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``log(x/q)`` for ``x, q > 0``: the correctly rounded quotient's log where that quotient is a
    normal float, else ``log x − log q`` (the quotient overflowed: ``x = 0.5``, ``q = 1e-320`` gave
    ``inf`` for ``log(x/q) = 736.5``, or lost bits as a subnormal)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        r = x / q
        ok = np.isfinite(r) & (r >= np.finfo(np.float64).tiny)
        return np.where(ok, np.log(np.where(ok, r, 1.0)), np.log(x) - np.log(q))


def _xlogx_grad(d: np.ndarray) -> np.ndarray:
    d = _host(d)
    with np.errstate(divide="ignore"):
        return np.where(d > 0, -np.log(np.where(d > 0, d, 1.0)) - 1.0, np.inf)


def entropy_utility(S: int, A: int, *, kind: str = "state_action") -> OccupancyFunction:
    r"""Entropy of the occupancy: ``H(d) = −Σ_{s,a} d log d`` or of its state marginal ``−Σ_s d_S log d_S``.

    Concave (Boyd & Vandenberghe 2004, §3.1.5). ``∇H(d)(s,a) = −log d(s,a) − 1``
    (``kind="state_action"``) or ``−log d_S(s) − 1`` (``kind="state"``, maximum-entropy
    exploration of Hazan et al. 2019), ``+inf`` where the argument is 0.

    Examples
    --------
    >>> import numpy as np
    >>> round(entropy_utility(2, 2).value(np.full((2, 2), 0.25)), 12)  # log 4
    1.386294361120
    """
    import cvxpy as cp  # noqa: PLC0415

    if kind not in ("state_action", "state"):
        raise ValueError(f"kind must be 'state_action' or 'state'; got {kind!r}")
    S, A = check_int(S, "S"), check_int(A, "A")
    if kind == "state_action":

        def value(d: np.ndarray) -> float:
            d = _host(d)
            p = d[d > 0]
            return float(-np.sum(p * np.log(p)))

        return _builtin(
            "entropy", "concave", lambda d: cp.sum(cp.entr(d)), value, _xlogx_grad, (S, A)
        )
    E = np.kron(np.eye(S), np.ones((1, A)))

    def value_s(d: np.ndarray) -> float:
        p = _host(d).sum(-1)
        p = p[p > 0]
        return float(-np.sum(p * np.log(p)))

    def grad_s(d: np.ndarray) -> np.ndarray:
        d = _host(d)
        return np.repeat(_xlogx_grad(d.sum(-1))[:, None], d.shape[1], axis=1)

    return _builtin(
        "state_entropy", "concave", lambda d: cp.sum(cp.entr(E @ d)), value_s, grad_s, (S, A)
    )


def _check_expert(d_expert: Any) -> np.ndarray:
    # the sum is judged at the precision d_expert came in (a float32 table normalised in float32 sums
    # to 1 ± 1e-7 and was refused at 1e-8: 96 of 200 random 5×6 tables), and such a table is divided by
    # its sum (as _validate does for policies)
    src = np.asarray(to_numpy(d_expert)) if not isinstance(d_expert, (list, tuple)) else None
    atol = _source_atol(src, np) if src is not None and src.dtype.kind in "fiub" else PROB_ATOL
    dE = _as_table(d_expert, "d_expert")
    if np.any(dE < 0) or abs(dE.sum() - 1.0) > atol:
        # the most negative entry is named by its pair (a table summing to 1 with one entry −0.1 read
        # only "min -0.1")
        s, a = (int(i) for i in np.unravel_index(np.argmin(dE), dE.shape))
        where = f"; d_expert[s={s}, a={a}] = {dE[s, a]:.3g} < 0" if dE[s, a] < 0 else ""
        raise ValueError(
            f"d_expert must be a non-negative table summing to 1 (atol={atol:.3g}); sums to {dE.sum():.12g}, "
            f"min {dE.min():.3g}{where}"
        )
    # always divided by its sum: a table within atol of 1 but above it made KL(d‖d_E) negative (Gibbs's
    # inequality broken: d = d_E/Σd_E with Σd_E = 1 + 9e-9 gave −9e-9)
    return dE / dE.sum()


def _kl_parts(dE: np.ndarray) -> tuple[Callable, Callable, Callable, Callable]:
    import cvxpy as cp  # noqa: PLC0415

    sup = (dE > 0).reshape(-1)
    idx = np.flatnonzero(sup)
    off = np.flatnonzero(~sup)
    q = dE.reshape(-1)[idx]

    def expr(d: Any) -> Any:
        return cp.sum(cp.rel_entr(d[idx], q))

    def value(d: np.ndarray) -> float:
        x = _host(d).reshape(-1)
        if np.any(x[off] > 1e-9):  # outside supp(d_E), beyond solver round-off
            return float("inf")
        xs = x[idx]
        pos = xs > 0
        return float(np.sum(xs[pos] * _log_ratio(xs[pos], q[pos])))

    def grad(d: np.ndarray) -> np.ndarray:
        d = _host(d)
        out = np.full(d.size, np.inf)
        xs = d.reshape(-1)[idx]
        out[idx] = np.where(xs > 0, _log_ratio(np.where(xs > 0, xs, 1.0), q) + 1.0, -np.inf)
        return out.reshape(d.shape)

    def domain(d: Any) -> list:
        return [d[off] == 0] if off.size else []

    return expr, value, grad, domain


def neg_kl_utility(d_expert: Any) -> OccupancyFunction:
    r"""``F(d) = −KL(d ‖ d_E) = −Σ d log(d/d_E)`` (imitation; concave).

    Entries with ``d_E(s,a) = 0`` force ``d(s,a) = 0`` (added to the program's domain).
    ``∇F(d) = −log(d/d_E) − 1`` on the support of ``d_E``.

    Examples
    --------
    >>> import numpy as np
    >>> dE = np.array([[0.5, 0.5]])
    >>> neg_kl_utility(dE).value(dE), round(neg_kl_utility(dE).value(np.array([[1.0, 0.0]])), 12)
    (0.0, -0.69314718056)
    """
    dE = _check_expert(d_expert)
    expr, value, grad, domain = _kl_parts(dE)
    return _builtin(
        "neg_kl",
        "concave",
        lambda d: -expr(d),
        lambda d: -value(d),
        lambda d: -grad(d),
        dE.shape,
        domain,
    )


def kl_divergence(d_expert: Any) -> OccupancyFunction:
    r"""``G(d) = KL(d ‖ d_E)`` (convex): a trust-region / imitation *constraint* ``KL ≤ b``.

    Examples
    --------
    >>> import numpy as np
    >>> kl_divergence(np.array([[0.5, 0.5]])).value(np.array([[0.5, 0.5]]))
    0.0
    """
    dE = _check_expert(d_expert)
    expr, value, grad, domain = _kl_parts(dE)
    return _builtin("kl", "convex", expr, value, grad, dE.shape, domain)


def quadratic_utility(r: Any, beta: float, target: Any = None) -> OccupancyFunction:
    r"""``F(d) = ⟨r, d⟩ − (β/2) ‖d − d_0‖²`` (concave for ``β ≥ 0``; ``∇F = r − β(d − d_0)``).

    A variance-type penalty: with the uniform target ``d_0 = 1/(SA)`` (default),
    ``‖d − d_0‖² = SA · Var(entries of d)`` penalises concentrated occupancies (a
    quadratic risk term that keeps the problem concave, unlike a penalty on the
    reward variance ``Var_d(r)``, which is concave in ``d`` and so cannot be
    subtracted).

    Examples
    --------
    >>> import numpy as np
    >>> quadratic_utility(np.zeros((1, 2)), beta=2.0).value(np.array([[1.0, 0.0]]))  # -(2/2)(0.25+0.25)
    -0.5
    """
    import cvxpy as cp  # noqa: PLC0415

    r = _as_table(r, "r")
    check_real(beta, "beta", low=0.0)
    d0 = np.full(r.shape, 1.0 / r.size) if target is None else _as_table(target, "target", r.shape)
    rf, d0f, b = r.reshape(-1), d0.reshape(-1), float(beta)
    return _builtin(
        "quadratic",
        "concave",
        lambda d: rf @ d - 0.5 * b * cp.sum_squares(d - d0f),
        lambda d: float(np.sum(r * d) - 0.5 * b * np.sum((d - d0) ** 2)),
        lambda d: r - b * (d - d0),
        r.shape,
    )


def shadow_reward(F: OccupancyFunction, d: Any) -> np.ndarray:
    r"""Shadow reward ``r̃ = ∇F(d)`` [S, A]: the reward whose ordinary MDP gives the ascent direction at ``d``.

    For ``d = d^π``, the policy gradient of ``F(d^π)`` equals the ordinary policy
    gradient with reward ``r̃`` held fixed (chain rule; Zhang et al. 2020, §3).

    Raises
    ------
    ValueError
        ``d`` not of shape ``F.shape``, not finite, or with an entry below ``−1e-8`` (an occupancy is
        non-negative; entries of round-off size are read as 0, as the built-in gradients do); the
        first offending pair is named.

    Examples
    --------
    >>> import numpy as np
    >>> shadow_reward(linear_utility(np.array([[1.0, 2.0]])), np.array([[0.5, 0.5]]))
    array([[1., 2.]])
    """
    if not isinstance(F, OccupancyFunction):
        raise TypeError(f"F must be an OccupancyFunction; got {type(F).__name__}")
    d = _as_table(d, "d", F.shape)
    # a clearly negative entry was taken as it came: the entropy's shadow reward at d(0, 0) = −0.1
    # read +inf there (as at 0) and the linear one r, with no sign that d is no occupancy
    neg = np.argwhere(d < -PROB_ATOL)
    if neg.size:
        s, a = (int(i) for i in neg[0])
        raise ValueError(
            f"d must be an occupancy (non-negative, atol={PROB_ATOL:g}); d[s={s}, a={a}] = {d[s, a]:.6g}"
        )
    return F.gradient(d)
