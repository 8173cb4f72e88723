r"""Compatible function approximation: the exact compatible critic of a softmax-linear policy.

For ``π_θ(a|s) ∝ exp(θᵀφ(s, a))`` the compatible features are
``ψ(s, a) = ∇_θ log π_θ(a|s) = φ(s, a) − Σ_b π_θ(b|s) φ(s, b)``
(:func:`rltheory.algorithms.features.compatible_features`), and the least-squares fit

    w* = argmin_w Σ_{s,a} d^π_ρ(s) π(a|s) (ψ(s, a)ᵀw − A^π(s, a))²

satisfies ``F(θ) w* = (1−γ) ∇_θ V^{π_θ}(ρ)`` with the Fisher matrix ``F = E_{d⊗π}[ψψᵀ]``: ``w*/(1−γ)``
is the natural gradient (Sutton et al. 2000, Thm 2; Kakade 2001). :func:`compatible_critic` computes
``w*`` exactly (``d^π_ρ`` and ``A^π`` from exact policy evaluation); the weighted minimum-norm
least-squares kernel :func:`_weighted_min_norm` (an SVD of the weighted design with a rounding-level
cut, at unit scale) and the one-hot closed form :func:`_one_hot_critic` also serve natural
actor-critic and improper NPG (:mod:`rltheory.algorithms.actor_critic`). Re-exported by
:mod:`rltheory.algorithms.critics`.

References
----------
Sutton, R., McAllester, D., Singh, S., Mansour, Y. (2000). Policy gradient methods for RL
with function approximation. NeurIPS. Theorem 2.
Kakade, S. (2001). A natural policy gradient. NeurIPS.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import as_distribution, check_finite
from ..backend import array_namespace, as_float, to_numpy
from ..mdp.bellman import (
    _q_values,
    _state_occupancy,
    as_stochastic_policy,
    evaluate_policy,
)
from ..mdp.model import FiniteMDP
from ._column_scales import _column_exponents, _pow2_cols
from .td_fixed_point import _weighted_norm

__all__ = ["compatible_critic"]


def compatible_critic(mdp: FiniteMDP, pi: Any, psi: Any, *, rho: Any = None) -> tuple[Any, Any]:
    r"""Exact compatible critic ``w* = argmin_w Σ_{s,a} d^π_ρ(s) π(a|s) (ψ(s, a)ᵀw − A^π(s, a))²``.

    Parameters
    ----------
    mdp : FiniteMDP
        Single discounted model.
    pi : array (S, A)
    psi : array (S, A, d)
        Compatible features (:func:`compatible_features`).
    rho : array (S,), optional
        Start distribution of ``d^π_ρ`` (the model's ``μ``).

    Returns
    -------
    (w, residual)
        Minimum-norm least-squares weights and the weighted residual
        ``‖ψᵀw − A^π‖_{d⊗π}`` (the critic's approximation error).

    Raises
    ------
    ValueError
        ``mdp`` batched or average-reward; ``pi`` not a policy, ``psi`` of the wrong shape or
        not finite, ``rho`` not a probability vector (named and located); a critic ``w*`` beyond
        the float range (features far below the advantages, e.g. ``|ψ| ~ 1e-310``; its index).

    Notes
    -----
    Compatible function approximation (Sutton et al. 2000, Thm 2; Kakade 2001):
    ``F(θ) w* = ∇_θV^{π_θ}(ρ)(1−γ)`` with the Fisher matrix
    ``F = E_{d⊗π}[ψψᵀ]``, so ``w*/(1−γ)`` is the natural gradient; for tabular
    features ``ψᵀw* = A^π`` on the support of ``d``.

    Numerics: ``ψ`` and ``A^π`` are divided by the powers of 2 at their largest entries (exact)
    and ``w*`` scaled back, so the answer is covariant under ``ψ → cψ`` from ``|ψ| ~ 1e-300`` to
    ``1e300`` (tested); solved through the SVD of the weighted design ``√(d⊗π)·ψ``, never through
    ``F`` (which squares its condition number), and directions with singular value below
    ``16·max(SA, d)·ε·max|ψ|`` — the rounding level, where the centring of compatible
    features leaves one null direction per state — are dropped (``ε`` of the dtype ``psi`` is
    given in: float32 features on a float64 model are known only to float32's). Columns more than
    ``2^24`` apart in size are first scaled to unit size where that design has full column rank
    (the critic is then unique and covariant under column scaling); a rank-deficient design with
    such columns is solved as is, and its columns below ``~1e-13`` of the largest are cut. With tabular features
    the weighted residual stays at ~1e-13·max|A^π| even for policies with probabilities
    down to ``e^{-200}`` (tested). The targets are ``A^π(s, a) = Σ_{b≠a} π(b|s)(Q^π(s, a) −
    Q^π(s, b))``, so ``Σ_a π(a|s)A^π(s, a) = 0`` holds to round-off relative to each term even
    where ``Q − V`` would cancel (the likely action of a near-deterministic state).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> from rltheory.algorithms.features import compatible_features
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> pi = np.full((1, 2), 0.5)
    >>> w, res = compatible_critic(mdp, pi, compatible_features(np.eye(2)[None], pi))
    >>> np.round(w, 12).tolist(), round(float(res), 12)
    ([-0.5, 0.5], 0.0)
    """
    if not isinstance(mdp, FiniteMDP) or mdp.gamma is None or mdp.batch_shape:
        got = (
            type(mdp).__name__
            if not isinstance(mdp, FiniteMDP)
            else f"gamma={mdp.gamma}, batch_shape={mdp.batch_shape}"
        )
        raise ValueError(f"compatible_critic needs a single discounted FiniteMDP; got {got}")
    xp = mdp.xp
    p = as_stochastic_policy(mdp, pi)
    P_ = as_float(psi, xp, mdp.dtype, field="psi")
    if P_.ndim != 3 or tuple(P_.shape[:2]) != (mdp.S, mdp.A):
        raise ValueError(
            f"psi must have shape (S, A, d) = ({mdp.S}, {mdp.A}, d); got {tuple(P_.shape)}"
        )
    check_finite(P_, "psi", ("s", "a", "j"))
    if rho is not None:
        rho = as_distribution(rho, "rho", mdp.S, xp, mdp.dtype)
    # ψ given in a coarser float than the model's (float32 features for a float64 model) is known
    # only to its own ε: the centring's null direction per state, exact in the model's precision,
    # sits at ε32·|ψ| and was kept by a cut at ε64, so the "minimum-norm" critic took a component
    # ~‖A^π‖ along it (tests/algorithms/test_h88_compatible_float32.py)
    ratio = _source_eps(psi) / float(xp.finfo(P_.dtype).eps)
    cols = _column_exponents(P_, default=0) if math.prod(P_.shape) else []
    if cols and max(cols) - min(cols) > 24:  # columns of sizes 2^24 apart or more
        # One rounding cut at ε·max|ψ| dropped every column smaller than ~1e-13 of the largest, a
        # needed direction (ψ·diag(2^-100, 1, 2^100): residual 0.188 where the fit's is 0.128). Solved
        # with every column at unit scale where that design has full column rank (the least-squares
        # w is then unique, so w_j = 2^{−E_j}·w_c,j exactly); a rank-deficient one keeps the
        # minimum-norm solve in the coordinates of ψ below.
        Pc = _pow2_cols(P_, [-v for v in cols], xp)
        sc = float(xp.max(xp.abs(Pc))) * ratio if ratio > 1.0 else None
        got = _compatible_critic(mdp, p, Pc, rho, scale=sc, full_rank_only=True)
        if got is not None:
            wc, res = got
            with np.errstate(over="ignore", under="ignore"):
                w = _pow2_cols(wc, [-v for v in cols], xp)
            if not bool(xp.all(xp.isfinite(w))):
                j = int(np.argmax(~np.isfinite(np.asarray(to_numpy(w)))))
                raise ValueError(
                    f"compatible_critic: w*[{j}] = {float(wc[j])!r} * 2^{-cols[j]} is beyond the "
                    f"float range (w*[{j}] scales as 1/|psi[..., {j}]|); scale that feature up"
                )
            return w, res
    scale = float(xp.max(xp.abs(P_))) * ratio if ratio > 1.0 and math.prod(P_.shape) else None
    return _compatible_critic(mdp, p, P_, rho, scale=scale)


def _source_eps(x: Any) -> float:
    """The machine ``ε`` of ``x``'s own floating dtype before any cast (float64's for lists,
    Python numbers and integer arrays), read in ``x``'s own namespace."""
    dt = getattr(x, "dtype", None)
    if dt is None or not hasattr(x, "shape"):
        return float(np.finfo(np.float64).eps)
    try:
        own = array_namespace(x)
        if own.isdtype(dt, "real floating"):
            return float(own.finfo(dt).eps)
    except (TypeError, ValueError):  # a dtype no namespace knows: as_float has named it
        return float(np.finfo(np.float64).eps)
    return float(np.finfo(np.float64).eps)


def _compatible_critic(
    mdp: FiniteMDP,
    p: Any,
    P_: Any,
    rho: Any,
    scale: float | None = None,
    err: Any = None,
    one_hot: Any = None,
    full_rank_only: bool = False,
) -> tuple[Any, Any] | None:
    """:func:`compatible_critic` on a validated policy ``p``, features ``P_`` and ``rho`` (loops).

    ``full_rank_only``: return ``None`` instead where the weighted design has a singular value at
    or below the rounding cut of :func:`_unit_min_norm` (``scale`` or ``max|P_|``, unit-scale ``P_``).

    ``scale``: what the entries of ``P_`` are known to up to a few ``ε`` (default ``max|P_|``;
    for ``P_ = φ − E_πφ`` it is ``2·max|φ|``, see :func:`_weighted_min_norm`); ``err``
    ``(S, A, d)``: the same per entry (``|φ| + E_π|φ|``), which replaces it. ``one_hot``: the
    features ``φ`` ``(S, A, d)`` of which ``P_`` are the compatible features, given only when
    they are one-hot up to column order and scale (:func:`features._is_one_hot`); the critic is
    then the closed form :func:`_one_hot_critic`, exact to round-off for every policy."""
    xp = mdp.xp
    Q = _q_values(mdp, evaluate_policy(mdp, p))
    # A^π(s, a) = Σ_{b≠a} π(b|s)(Q(s, a) − Q(s, b)) (the b = a term is exactly 0): Q − V is known
    # only to ε·|Q| absolute, so at a near-deterministic state A(s, a*) ≈ −Σ_b π(b|s)A(s, b) came
    # out as noise far above its size, on the row of weight ≈ d(s)
    adv = xp.sum(p[..., None, :] * (Q[..., :, None] - Q[..., None, :]), axis=-1)
    dsa = _state_occupancy(mdp, p, rho)[..., None] * p
    k = P_.shape[-1]
    X = xp.reshape(P_, (mdp.S * mdp.A, k))
    wts = xp.reshape(dsa, (mdp.S * mdp.A,))
    y = xp.reshape(adv, (mdp.S * mdp.A,))
    if full_rank_only:
        sv = xp.linalg.svdvals(xp.sqrt(wts)[:, None] * X)
        eps = float(xp.finfo(X.dtype).eps)
        sc = float(xp.max(xp.abs(X))) if scale is None else scale
        if sv.shape[0] < k or not bool(xp.all(sv > 16.0 * max(X.shape) * eps * sc)):
            return None
    if one_hot is not None:
        w = _one_hot_critic(one_hot, dsa, adv, xp)
    else:
        E = None if err is None else xp.reshape(err, (mdp.S * mdp.A, k))
        w = _weighted_min_norm(X, wts, y, xp, scale=scale, err=E)
    with np.errstate(over="ignore", under="ignore"):
        r = X @ w - y
    return w, _weighted_norm(r, wts)  # scaled: no overflow (or underflow) of the squares


def _one_hot_critic(f: Any, dsa: Any, adv: Any, xp: Any) -> Any:
    r"""Closed-form compatible critic for one-hot features ``φ(s, a) = c_{sa}·e_{j(s,a)}``.

    ``f`` ``(S, A, d)``: each ``φ(s, a)`` has one nonzero entry ``c_{sa}``, in a column ``j(s, a)``
    no other pair uses; ``dsa = d(s)π(a|s)`` and ``adv`` ``(S, A)``. With ``u_a = c_{sa} w_{j(s,a)}``,
    ``ψ(s, a)ᵀw = u_a − Σ_b π(b|s) u_b``, whose range on a state is ``{t : Σ_a π(a|s) t_a = 0}``;
    the ``π``-weighted projection of ``A(s, ·)`` onto it is ``A − Σ_b π(b|s)A(s, b)``, reached by
    ``u = A(s, ·) + k_s``. So for ``π > 0`` the weighted least-squares solutions are exactly
    ``w_{j(s,a)} = (A(s, a) + k_s)/c_{sa}`` on the states with ``d(s) > 0``, anything elsewhere,
    and the minimum-norm one takes 0 elsewhere and ``k_s = −Σ_a A(s, a)/c_{sa}² / Σ_a 1/c_{sa}²``
    (``−mean_a A(s, a)`` for ``c = 1``). Every entry costs a few roundings of ``A(s, a)`` and
    ``k_s``, whatever the weights: no solve, so no direction of weight 1e-66 is lost or swamped.

    An action whose ``π(a|s)`` is 0 on a state with ``d(s) > 0`` keeps its
    ``(A(s, a) + k_s)/c_{sa}``: the limit as ``π(a|s) → 0⁺`` (a softmax policy's zeros are
    underflow of positive probabilities, and NPG, ``π' ∝ π·exp(ηA/(1−γ))`` in log space, still
    moves them), not the minimum-norm 0 of a zero-weight row.
    """
    c = xp.sum(f, axis=-1)  # the one nonzero entry of each φ(s, a)
    live = xp.broadcast_to(xp.sum(dsa, axis=-1, keepdims=True) > 0, dsa.shape)
    # k_s is invariant under scaling a state's c_{sa} together, so they are divided by the state's
    # smallest |c_{sa}|: the weights 1/c'² lie in (0, 1] and the one of the smallest is 1. With 1/c²
    # itself, features of size 1e-200 overflowed it (inf/inf = NaN critic) and 1e200 underflowed it
    c_safe = xp.where(live, c, xp.ones_like(c))
    low = xp.min(xp.abs(c_safe), axis=-1, keepdims=True)
    inv2 = xp.where(live, 1.0 / (c_safe / low) ** 2, xp.zeros_like(c))
    tot = xp.sum(inv2, axis=-1, keepdims=True)
    k = -xp.sum(adv * inv2, axis=-1, keepdims=True) / xp.where(tot > 0, tot, xp.ones_like(tot))
    coef = xp.where(live, (adv + k) / c_safe, xp.zeros_like(adv))  # = w_{j(s,a)}
    S, A, d = f.shape
    # f/c is the 0/1 indicator of j(s, a) (exactly: c/c = 1), and each column of f has at most one
    # nonzero entry, so this sum has one term per column
    ind = xp.reshape(f / c_safe[..., None], (S * A, d))
    return xp.reshape(xp.reshape(coef, (1, S * A)) @ ind, (d,))


def _weighted_min_norm(
    X: Any,
    wts: Any,
    y: Any,
    xp: Any,
    *,
    scale: float | None = None,
    err: Any = None,
    rhs: Any = None,
) -> Any:
    """Minimum-norm ``argmin_w Σ_i wts_i (X_i·w − y_i)²`` for weights ``wts ≥ 0`` summing to 1.

    ``X`` is ``(n, k)``. Solved through the SVD of the weighted design ``√wts·X`` (not the
    normal equations, which square its condition number), with directions at the design's
    rounding level cut (see the comment in the body). ``scale``: the size to which the
    entries of ``X`` are known up to a few ``ε`` (default ``max|X|``); give it where ``X``
    comes out of a cancellation that leaves every entry small (an entry is then known to
    ``ε`` times the size of what cancelled, not ``ε·max|X|``). ``err`` (``(n, k)``, optional):
    per-entry sizes to which ``X`` is known up to a few ``ε`` (for ``ψ = φ − E_πφ``:
    ``|φ| + E_π|φ|``); the cut is then per direction, at the larger of the image of those
    errors and the SVD's own absolute error ``ε·σ_max`` (``scale`` is then unused).

    Guarantee: a direction is kept only where its singular value exceeds
    ``16·max(n, k)·ε`` times both its data's rounding level and ``σ_max``, so the perturbation
    the SVD itself commits (it is exact for ``√wts·X`` plus ``O(ε·σ_max)``) and the data's
    rounding are each below ``1/(16·max(n, k))`` of every kept singular value, and
    ``‖w‖ ≤ ‖√wts·y‖/cut``. Directions whose singular value is below
    ``ε·σ_max`` — rows of relative weight under about ``ε²`` that alone determine them — are
    dropped, not solved: no dense SVD resolves them (one kept at ``σ = 3.4e-33`` with
    ``σ_max = 1.4e-6`` gave weights ``(−4499, 9000, −4500)`` for advantages ``< 1``).
    :func:`_one_hot_critic` solves the one-hot case for every weight instead.

    ``rhs`` (``(k,)``, optional): ``Σ_i wts_i y_i X_i`` computed by the caller term by term (each
    to its relative accuracy); the solution is then ``Σ_j v_j (v_jᵀ rhs)/σ_j²`` over the kept
    directions instead of ``Σ_j v_j (u_jᵀ √wts·y)/σ_j``. Equal in exact arithmetic, but the SVD's
    left vectors ``u_j`` are known only to ``ε`` absolute, so rows of large weight and tiny ``X_i``
    (which hardly enter the Gram matrix but do enter ``rhs``) added ``ε·‖√wts·y‖/σ_j`` of noise.
    """
    # X and y are divided by the powers of 2 at their largest entries (exact), the system solved
    # at unit scale and w scaled back: the design's SVD, the rounding levels and the cut's floor
    # below all assume entries of order 1 (features of size 1e-300 fell under the floor and gave
    # w = 0; of size 1e200 the squared rounding levels overflowed to a NaN critic)
    for arr, name in ((X, "X"), (y, "y"), (err, "err"), (rhs, "rhs")):
        # LAPACK's SVD does not return on inf/NaN input (it hung on compatible features that overflowed)
        if arr is not None and not bool(xp.all(xp.isfinite(arr))):
            raise ValueError(f"weighted least squares: {name} has a NaN or infinite entry")
    ex, ey = _exponent(X, xp), _exponent(y, xp)
    X, y = _ldexp(X, -ex), _ldexp(y, -ey)
    if scale is not None:
        scale = math.ldexp(scale, -ex)
    if err is not None:
        err = _ldexp(err, -ex)
    if rhs is not None:
        rhs = _ldexp(rhs, -ex - ey)
    w = _unit_min_norm(X, wts, y, xp, scale=scale, err=err, rhs=rhs)
    with np.errstate(over="ignore"):
        out = _ldexp(w, ey - ex)
    if not bool(xp.all(xp.isfinite(out))):
        j = int(np.argmax(~np.isfinite(to_numpy(out))))
        raise ValueError(
            f"the least-squares weights are beyond the float range: w[{j}] = {float(w[j])!r} * "
            f"2^{ey - ex} (targets of size 2^{ey} on features of size 2^{ex}); scale the features "
            f"up or the rewards down"
        )
    return out


def _exponent(x: Any, xp: Any) -> int:
    """``e`` with ``2^e ≤ max|x| < 2^(e+1)`` (0 for an empty or all-zero ``x``). Host sync."""
    m = float(xp.max(xp.abs(x))) if math.prod(x.shape) else 0.0
    return math.frexp(m)[1] - 1 if m > 0 and math.isfinite(m) else 0


def _ldexp(x: Any, e: int) -> Any:
    """``x·2^e`` by factors within the float range (exact unless the result leaves it).

    Factors of at most ``2^±60``, within float32's range too: a Python float ``2^140`` multiplying a
    float32 array is cast to float32 ``inf`` (NEP 50), which made subnormal float32 features inf."""
    while e:
        k = max(-60, min(60, e))
        x = x * math.ldexp(1.0, k)
        e -= k
    return x


def _unit_min_norm(
    X: Any,
    wts: Any,
    y: Any,
    xp: Any,
    *,
    scale: float | None = None,
    err: Any = None,
    rhs: Any = None,
) -> Any:
    """:func:`_weighted_min_norm` for ``X`` and ``y`` with largest entries in ``[1, 2)`` (or 0)."""
    sw = xp.sqrt(wts)
    Xw = sw[:, None] * X
    # The SVD of the weighted design itself has the square root of the Gram matrix's condition
    # number, so directions of small weight (d(s)π(a|s) of a near-deterministic policy) keep
    # their accuracy. Directions at the rounding level of the design are cut: an entry of X is
    # known to about ε·max|X| (the centring ψ = φ − E_πφ of compatible features leaves one such
    # null direction per state, the scores of a mixture one in all), and the weights sum to 1,
    # so they sit below ε·max|X|·√k; the cut keeps a margin of 16·max(n, k). Cutting relative
    # to the largest singular value instead fails both ways: far below it when every state is
    # near-deterministic (σ_max ≈ √(d·π_min), the null directions survive and w blows up along
    # them), and a cut of 1e-6·σ_max drops directions that NPG's update still needs.
    U, sv, Vh = xp.linalg.svd(Xw, full_matrices=False)
    eps = float(xp.finfo(Xw.dtype).eps)
    if err is not None:
        # Per-direction rounding level ‖√wts ⊙ (err |v_j|)‖ of each right singular direction v_j:
        # a state's centring null direction sits at it (σ_j ≈ ε·√d(s)) and is cut. But the SVD
        # itself is only normwise backward stable: the computed σ_j and v_j carry errors of about
        # ε·σ_max, so a direction of weight d(s)π(a|s) = 7.9e-66 (σ_j = 3.4e-33, cut from its level
        # 4.9e-43, while ε·σ_max = 3e-22) is noise that survived this level alone, and the critic
        # came out as (−4499, 9000, −4500) for advantages below 1. Both levels bound the cut.
        level = xp.sqrt(
            xp.sum((sw[:, None] * (err @ xp.abs(xp.matrix_transpose(Vh)))) ** 2, axis=0)
        )
        smax = xp.max(sv) if sv.shape[0] else xp.zeros((), dtype=sv.dtype, device=sv.device)
        cut = xp.maximum(
            16.0 * max(X.shape) * eps * xp.maximum(level, smax), xp.full_like(sv, 1e-300)
        )
    else:
        if scale is None:
            scale = float(xp.max(xp.abs(X))) if X.shape[0] * X.shape[1] else 0.0
        cut = max(16.0 * max(X.shape) * eps * scale, 1e-300)  # floor: d⊗π ≈ 0
    inv = xp.where(sv > cut, 1.0 / xp.where(sv > cut, sv, xp.ones_like(sv)), xp.zeros_like(sv))
    if rhs is not None:
        return xp.matrix_transpose(Vh) @ (inv * (inv * (Vh @ rhs)))
    return xp.matrix_transpose(Vh) @ (inv * (xp.matrix_transpose(U) @ (sw * y)))
