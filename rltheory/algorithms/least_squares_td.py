r"""LSTD(λ): least-squares temporal differences with linear features, from one trajectory.

LSTD(λ) solves the sample version of the projected Bellman equation ``Aθ* = b``
(:mod:`rltheory.algorithms.td_fixed_point`): with eligibility traces
``z_t = γλ z_{t−1} + φ(s_t)``,

    Â = (1/n) Σ_t z_t (φ(s_t) − γφ(s_{t+1}))ᵀ,     b̂ = (1/n) Σ_t z_t r_t,     θ̂ = Â^{-1} b̂

(Bradtke & Barto 1996; Boyan 2002). Under on-policy sampling from the stationary law the ergodic
theorem makes ``θ̂`` consistent for the TD(λ) fixed point ``θ*``, with ``‖θ̂ − θ*‖ = O_P(n^{-1/2})``
(Lazaric, Ghavamzadeh & Munos 2012, Thm 1). :func:`lstd_estimate` works on given features,
:func:`lstd` samples the trajectory; both run on the host. Re-exported by
:mod:`rltheory.algorithms.critics`.

References
----------
Bradtke, S., Barto, A. (1996). Linear least-squares algorithms for temporal difference
learning. Machine Learning 22.
Boyan, J. (2002). Technical update: least-squares temporal difference learning. MLJ 49. Fig. 1.
Lazaric, A., Ghavamzadeh, M., Munos, R. (2012). Finite-sample analysis of least-squares policy
iteration. JMLR 13. Theorem 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_finite, real_scalar
from .._validate import check_int as _int
from ..backend import require_host
from ..mdp.model import FiniteMDP
from ..mdp.sample import rollout
from ._column_scales import _column_exponents
from ._lstd_slow_basis import _check_lstd_matrix, _dot2, _lstd_system
from ._q_common import _rng
from ._td_min_norm import _min_norm_fixed_point
from ._td_refine import refine
from .features import _host_float
from .td_fixed_point import TDFixedPoint, _d_basis, _features, projected_fixed_point

__all__ = ["lstd_estimate", "lstd"]


def lstd_estimate(
    phi: Any, rewards: Any, phi_next: Any, *, gamma: float, lam: float = 0.0, ridge: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""LSTD(λ) from one trajectory's features: ``θ̂ = (Â + ridge·I)^{-1} b̂``.

    ``z_t = γλ z_{t−1} + φ_t``, ``Â = (1/n) Σ_t z_t (φ_t − γφ'_t)ᵀ``, ``b̂ = (1/n) Σ_t z_t r_t``.

    Parameters
    ----------
    phi, phi_next : array (n, d)
        ``φ(s_t)`` and ``φ(s_{t+1})`` (or state-action features for LSTD-Q), in time order.
    rewards : array (n,)
    gamma : float in [0, 1)
    lam : float in [0, 1]
    ridge : float ≥ 0
        Tikhonov term for a singular ``Â`` (0: the plain estimator).

    Returns
    -------
    (theta, A_hat, b_hat)

    Raises
    ------
    ValueError
        Shapes disagree; a NaN or infinite entry of ``phi``, ``rewards`` or ``phi_next``
        (located); bad ``gamma``, ``lam``, ``ridge``; an estimate beyond the float range (its
        index; the rewards are scaled by a power of 2, so every in-range estimate
        is returned, from subnormal rewards to 1.7e308).
    numpy.linalg.LinAlgError
        ``ridge = 0`` and ``phi`` rank deficient on the sample (a feature never visited, more
        features than transitions, or a column that is a combination of the others to rounding;
        the message names the column), or ``Â`` singular to rounding (smallest singular value of
        its sample-orthonormal form, columns scaled by their own rounding levels, at or below
        ``16·max(k, √n)·ε·√k``; the message gives both and the nearly singular direction of
        ``θ``): off-policy transitions, or near γ = 1 a sample with several closed classes.

    Notes
    -----
    Bradtke & Barto (1996); Boyan (2002), Fig. 1. Consistent for the TD(λ) fixed
    point under on-policy sampling (ergodic theorem); with one-hot features and
    ``λ = 0`` it equals the value of the empirical Markov reward process of the
    trajectory (certainty equivalence).

    Numerics: with ``ridge = 0`` the system is solved in the basis ``ψ = φU`` that is
    orthonormal for the sample (``(1/n) Σ_t ψ_tψ_tᵀ = I``, from the SVD of the
    column-equilibrated ``φ``), never by a direct solve of ``Âθ = b̂``, whose condition number
    carries ``cond(φ)²``. For ``γ ≤ 63/65`` (where ``ε/(1−γ) ≤ 64ε``) one rounding level for the
    whole matrix and one solve suffice. Above, one column of ``ψ`` is the sample projection of the
    constant function (the slow direction as γ → 1), its differences ``ψ_t − ψ'_t`` are formed in
    twice the working precision, and each column of the matrix is judged at its own rounding level
    (:mod:`rltheory.algorithms._lstd_slow_basis`; 2–3× the time of the plain path on large samples,
    e.g. 1.3 against 0.47 s at ``n = 1e5``, ``k = 50``), and the estimate is refined
    with the residual in difference form (``(1−γ)φ_tᵀθ + γ(φ_t − φ'_t)ᵀθ``, the second term in
    twice the working precision). Accuracy, measured against exact rationals on 40 random samples
    (``S ≤ 5``, ``n ≤ 60``; one-hot, constant-plus-random, random and constant-free features;
    ``λ ∈ {0, 0.5, 0.9, 1}``; γ from ``1 − 2⁻³⁰`` to ``1 − 2⁻⁵³``): the values ``φθ̂`` are within
    ``C·ε·max(max|φθ̂|, max|r|/(1−γ))`` of the exact estimate of the stored transitions (the second
    term is how far rounding the rewards by ``ε`` moves them), ``C ≤ 7`` for ``cond(φ) ≤ 30`` and
    ``C ≤ 36`` at
    ``cond(φ) = 1.7e3``. Before, one level for the whole matrix refused every sample of a 3-cycle
    from ``γ = 1 − 2⁻⁴⁴`` on, and a constant spread over several columns left the values
    ``1e-4``–``1e-3`` off relative at ``γ = 1 − 2⁻⁴⁰``. ``A_hat`` and
    ``b_hat`` are returned in the coordinates of ``φ``
    (``A_hat`` is ``inf`` where its exact value leaves the float range, ``|φ| ≳ 1e154``; ``θ̂`` does
    not use it). With ``ridge > 0`` the Tikhonov system is solved in the coordinates of ``φ``, so an
    ``A_hat`` beyond the range is a ``ValueError`` naming the entry.

    Examples
    --------
    >>> import numpy as np
    >>> th, A, b = lstd_estimate(np.eye(2)[[0, 1]], np.array([1.0, 0.0]), np.eye(2)[[1, 0]], gamma=0.5)
    >>> np.round(th, 12).tolist()   # V(0) = 1 + V(1)/2, V(1) = V(0)/2
    [1.333333333333, 0.666666666667]
    """
    f0 = _host_float(phi, "phi")
    f1 = _host_float(phi_next, "phi_next")
    r = _host_float(rewards, "rewards")
    if f0.ndim != 2 or f0.shape != f1.shape or r.shape != f0.shape[:1]:
        raise ValueError(
            f"phi, phi_next (n, d) and rewards (n,) disagree: {f0.shape}, {f1.shape}, {r.shape}"
        )
    if f0.shape[0] < 1:
        raise ValueError(
            f"phi, phi_next and rewards must hold at least one transition; got n={f0.shape[0]}"
        )
    if f0.shape[1] < 1:  # IndexError ("index -1 is out of bounds") inside the rank test before
        raise ValueError(
            f"phi and phi_next must hold at least one feature (d >= 1); got {f0.shape}"
        )
    g, lm, rd = (
        real_scalar(gamma),
        real_scalar(lam),
        real_scalar(ridge),
    )  # NaN for non-reals and bools
    if not 0 <= g < 1:
        raise ValueError(f"gamma must lie in [0, 1); got {gamma!r}")
    if not 0.0 <= lm <= 1.0:
        raise ValueError(f"lam must lie in [0, 1]; got {lam!r}")
    if not rd >= 0:
        raise ValueError(f"ridge must be >= 0; got {ridge!r}")
    if not math.isfinite(rd):
        raise ValueError(f"ridge must be finite; got {ridge!r}")
    check_finite(f0, "phi", ("t", "j"))
    check_finite(r, "rewards", ("t",))
    check_finite(f1, "phi_next", ("t", "j"))
    return _lstd_estimate(f0, r, f1, gamma=g, lam=lm, ridge=rd)


def _lstd_estimate(
    f0: np.ndarray, r: np.ndarray, f1: np.ndarray, *, gamma: float, lam: float, ridge: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`lstd_estimate` on validated float arrays (library loops).

    ``θ̂`` and ``b̂`` are linear in the rewards, so they are computed for ``r/2^e`` with ``2^e`` the
    power of 2 at ``max|r|`` (exact) and scaled back: the sums ``Σ_t z_t r_t`` overflowed (NaN
    ``θ̂``) for rewards near 1e307 whose estimate is in range. The features are likewise divided by
    the power of 2 ``2^k`` at ``max|φ|``: ``Â = 2^{2k}·Â(φ/2^k)`` is then ``±inf`` where its exact
    value leaves the float range (``inf − inf = NaN`` in the direct sums before), and ``θ̂`` (which
    scales as ``2^{−k}``) does not depend on ``Â``'s range at all.
    """
    n = f0.shape[0]
    e = _exponent(r)
    r = np.ldexp(r, -e)
    # per column: k_j at max(|φ_j|, |φ'_j|) (one k for all columns made a column of 1e-160 next to
    # one of 1e160 subnormal, and the SVD of the design failed)
    k = np.asarray(_column_exponents(f0, f1, default=0))
    g0, g1 = np.ldexp(f0, -k), np.ldexp(f1, -k)
    Z = _traces(g0, gamma * lam)  # the traces of φ/2^k (the recursion is linear)
    As = Z.T @ (g0 - gamma * g1) / n
    with np.errstate(
        over="ignore", under="ignore"
    ):  # Â in the coordinates of φ may leave the range
        A = np.ldexp(np.ldexp(As, k[:, None]), k[None, :])
        b = np.ldexp(Z.T @ r / n, k)
    if ridge != 0.0:
        if not np.all(np.isfinite(A)):  # the Tikhonov system lives in the coordinates of φ
            i, j = (int(v) for v in np.argwhere(~np.isfinite(A))[0])
            raise ValueError(
                f"with ridge > 0 the LSTD system (A_hat + ridge I) theta = b_hat is solved in the "
                f"coordinates of phi, and A_hat[{i}, {j}] = {float(A[i, j])} is beyond the float range "
                f"(max|phi| = {float(np.max(np.abs(f0)))!r}); scale the features down"
            )
        with np.errstate(over="ignore"):
            theta = np.linalg.solve(A + ridge * np.eye(A.shape[0]), b)
        return _unscaled(theta, e, 0), A, _scaled_b(b, e)
    # Solved in the sample-orthonormal basis ψ = (φ/2^k)T ((1/n) Σ_t ψ_t ψ_tᵀ = I, see _d_basis):
    # the system Tᵀ Â T w = Tᵀ b̂ keeps the conditioning of the estimator, while Â carries cond(φ)²
    # on top (nearly collinear features lost ~20% of the values at cond ≈ 1e7).
    _, _, T = _d_basis(
        g0,
        np.full(n, 1.0 / n),
        np,
        field="phi",
        rows="n",
        unit="transitions",
        support="the sample",
        vanish="every sampled transition",
    )
    # the basis reflected so that one column is the sample projection of the constant, each column
    # of Ã formed in difference form and judged at its own rounding level (_lstd_slow_basis): one
    # level for the whole matrix refused every sample of a 3-cycle from γ = 1 − 2⁻⁴⁴ on
    if (1.0 + gamma) <= 64.0 * (
        1.0 - gamma
    ):  # γ ≤ 63/65: ε/(1−γ) ≤ 64ε, one level and one solve suffice
        Zt = Z @ T  # the traces of ψ
        P0, P1 = g0 @ T, g1 @ T
        At = Zt.T @ (P0 - gamma * P1) / n
        _check_sample_td_matrix(At, np.abs(Zt).T @ (np.abs(P0) + gamma * np.abs(P1)) / n, n)
        return _unscaled(T @ np.linalg.solve(At, Zt.T @ r / n), e, k), A, _scaled_b(b, e)
    U, Zt, X, cols, At, level = _lstd_system(g0, g1, Z, T, gamma)
    _check_lstd_matrix(At, level, n, U)
    theta = _refined(U @ np.linalg.solve(At, Zt.T @ r / n), At, U, Zt, g0, (X, cols), r, gamma)
    return _unscaled(theta, e, k), A, _scaled_b(b, e)


def _check_sample_td_matrix(At: np.ndarray, level: np.ndarray, n: int) -> None:
    r"""``LinAlgError`` when ``Â`` in the sample-orthonormal basis is singular to rounding (``γ ≤ 63/65``).

    ``level = (1/n) Σ_t |z̃_t|(|ψ_t| + γ|ψ'_t|)ᵀ`` holds the sizes of the terms summed into each
    entry of ``Ã = Tᵀ Â T``; a sum of ``n`` terms carries a rounding error of about ``√n·ε`` times
    their sizes (``n·ε`` at worst), so a smallest singular value at or below
    ``16·max(k, √n)·ε·‖level‖_F`` is indistinguishable from 0 (off-policy transitions can make ``Â``
    singular, as in Tsitsiklis & Van Roy's θ → 2θ example, §IX): there the solve returned noise,
    ``θ̂ = −1.08e16`` for transitions ``φ = 1 → 2``, ``2 → 2`` at ``γ = 5/6``, where the stored
    inputs' exact ``Â = −1.1e-16`` gives ``−1.35e16``. Above ``63/65`` the columns are judged one
    by one (:func:`._lstd_slow_basis._check_lstd_matrix`), which costs 2–4× more on large samples.
    """
    k = At.shape[0]
    sv = np.linalg.svd(At, compute_uv=False)
    cut = 16.0 * max(k, math.sqrt(n)) * float(np.finfo(At.dtype).eps) * float(np.linalg.norm(level))
    if not sv[-1] > cut:
        raise np.linalg.LinAlgError(
            f"the LSTD matrix A_hat = (1/n) sum_t z_t (phi_t - gamma phi'_t)^T is singular to rounding: "
            f"smallest singular value {float(sv[-1]):.3g} of its sample-orthonormal form <= its rounding "
            f"level {cut:.3g} (n={n} transitions); off-policy transitions can make A_hat singular, "
            f"pass ridge > 0 for a regularised estimate"
        )


def _refined(
    theta: np.ndarray,
    At: np.ndarray,
    U: np.ndarray,
    Zt: np.ndarray,
    g0: np.ndarray,
    X: tuple[np.ndarray, np.ndarray],
    r: np.ndarray,
    gamma: float,
    *,
    max_refine: int = 30,
) -> np.ndarray:
    r"""``θ̂`` refined with the residual ``b̂ − Âθ = (1/n) Σ_t z_t (r_t − (φ_t − γφ'_t)ᵀθ)`` in
    difference form, ``(φ_t − γφ'_t)ᵀθ = (1−γ)φ_tᵀθ + γ(φ_t − φ'_t)ᵀθ`` (for ``γ > 63/65``).

    ``σ_min(Â) ~ 1−γ`` and the values have the size ``max|r|/(1−γ)``, so one solve erred by
    ``ε·max|φθ̂|/(1−γ)``: 2e-5 relative at ``γ = 1 − 1e-12`` against the exact rational estimate of
    the stored transitions, and any error ``δ`` of the residual moves the values by ``δ/(1−γ)``.
    The constant direction's huge coefficient cancels in ``(φ_t − φ'_t)ᵀθ``, which is therefore
    formed in twice the working precision from the exact differences ``φ_t − φ'_t = d_t + e_t``
    (``X = ([d, e], cols)``, :func:`._lstd_slow_basis._transition_differences`;
    :func:`._lstd_slow_basis._dot2`): a constant feature cancels exactly in plain
    floats, but a constant spread over several columns did not, and for three random features of
    a 3-state chain at ``γ = 1 − 2⁻⁴⁰`` the values were off by 1e-3 relative. The corrections
    ``U Ã^{-1} Z̃ᵀ res/n`` (:func:`._lstd_slow_basis._lstd_system`) bring the values to a few
    ``ε·max(max|φθ̂|, max|r|/(1−γ))`` (Higham 2002, §12.1). Each coefficient is refined to its own
    rounding (``x = θ/s``, ``s_j = |θ_j|``; a stop at the rounding of ``max|θ|``, the constant's
    coefficient, left the others at ``ε·max|θ|``); stops when a correction is at that rounding,
    stops shrinking by half, or after ``max_refine`` steps; a correction larger than the previous
    one is not applied.
    """
    n = g0.shape[0]
    if (1.0 + gamma) <= 64.0 * (1.0 - gamma) or not np.all(np.isfinite(theta)):
        return theta
    s = np.maximum(np.abs(theta), float(np.finfo(theta.dtype).eps) * float(np.max(np.abs(theta))))
    s = np.where(s > 0, s, 1.0)

    def correction(x: np.ndarray) -> np.ndarray:
        th = x * s
        flow = _dot2(X[0], th[X[1], None])[:, 0]  # (φ_t − φ'_t)ᵀθ
        res = r - ((1.0 - gamma) * (g0 @ th) + gamma * flow)
        return (U @ np.linalg.solve(At, Zt.T @ res / n)) / s

    return refine(np, theta / s, correction, max_refine) * s


def _exponent(x: np.ndarray) -> int:
    """``e`` with ``2^e ≤ max|x| < 2^(e+1)``; 0 for an all-zero ``x``."""
    return int(np.frexp(np.max(np.abs(x)))[1]) - 1 if np.any(x) else 0


def _scaled_b(b: np.ndarray, e: int) -> np.ndarray:
    """``b̂ = 2^e·b̂(r/2^e)`` (``±inf`` where it leaves the float range)."""
    with np.errstate(over="ignore"):
        return np.ldexp(b, e)


def _unscaled(theta: np.ndarray, e: int, k: Any) -> np.ndarray:
    """``2^{e−k_j}·θ_j`` for the estimate ``θ`` of the rewards ``r/2^e`` on the features ``φ_j/2^{k_j}``
    (``k`` one int or one per column); a located error where it leaves the float range."""
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(theta, e - np.asarray(k))
    if not np.all(np.isfinite(out)):
        j = int(np.argmax(~np.isfinite(out)))
        k = int(np.broadcast_to(k, theta.shape)[j])
        raise ValueError(
            f"the LSTD estimate is beyond the float range: theta[{j}] = {float(theta[j])!r} * "
            f"2^{e - k} (the estimate for the rewards divided by 2^{e} on the features divided by "
            f"2^{k}); values scale with the rewards and inversely with the features: divide the "
            f"rewards by a power of 2"
        )
    return out


def _traces(f: np.ndarray, decay: float) -> np.ndarray:
    """Eligibility traces ``z_t = decay·z_{t−1} + f_t`` (``z_{−1} = 0``), row ``t`` of the result."""
    if decay == 0.0:
        return f
    Z = np.empty_like(f)
    z = np.zeros(f.shape[1])
    for t in range(f.shape[0]):
        z = decay * z + f[t]
        Z[t] = z
    return Z


def lstd(
    mdp: FiniteMDP,
    pi: Any,
    Phi: Any,
    *,
    steps: int,
    rng: np.random.Generator | int,
    lam: float = 0.0,
    d: Any = None,
    ridge: float = 0.0,
) -> tuple[np.ndarray, TDFixedPoint]:
    r"""LSTD(λ) on one on-policy trajectory of ``steps`` transitions from ``s_0 ~ d``.

    ``d`` (stationary by default) also weights the returned fixed point; the estimate converges
    to it only for a ``P_π``-invariant ``d`` (otherwise to the fixed point of the trajectory's
    long-run law, the stationary one for a unichain ``P_π``).

    Returns ``(theta_hat, fixed_point)`` so the estimate can be compared with the
    exact ``θ*`` (:func:`projected_fixed_point`); ``‖θ̂ − θ*‖ = O_P(n^{-1/2})``
    (Lazaric, Ghavamzadeh & Munos 2012, Thm 1 for the β-mixing rate).

    With ``ridge > 0``, ``theta_hat`` is the Tikhonov estimate ``(Â + ridge·I)^{-1} b̂``
    (:func:`lstd_estimate`), defined for any features. For columns of ``Phi`` linearly dependent
    on the support of ``d`` (duplicates, say) ``fixed_point`` is then the minimum-norm one
    (:func:`._td_min_norm._min_norm_fixed_point`): its ``values``, ``V``, ``error`` and
    ``projection_error`` are unique (those of any basis of ``span Phi``), ``theta`` is the
    minimum-norm coefficient vector of those values on the support of ``d``, and ``A`` (singular)
    and ``b`` are those of the full ``Phi``. Compare the values ``Phi @ theta_hat`` with
    ``fixed_point.values`` there; ``theta_hat`` itself tends to ``fixed_point.theta`` only as the
    ridge goes to 0 (duplicate columns share the coefficient equally in both). With ``ridge = 0``
    such features are refused (``numpy.linalg.LinAlgError`` naming the dependent column): the
    plain estimator does not exist.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), gamma=0.5)
    >>> th, fp = lstd(mdp, np.array([0, 0]), np.eye(2), steps=10, rng=0)
    >>> bool(np.allclose(th, fp.theta))
    True
    """
    steps = _int(steps, "steps")
    gen = _rng(rng)
    if real_scalar(ridge) > 0:  # (NaN for non-reals: refused by lstd_estimate below)
        # the Tikhonov estimate is defined for any features: dependent columns get the
        # minimum-norm fixed point (refused before, so no ridge estimate was returned at all)
        fp = _min_norm_fixed_point(mdp, pi, Phi, lam=lam, d=d)
    else:
        fp = projected_fixed_point(mdp, pi, Phi, lam=lam, d=d)
    F = require_host(_features(mdp, Phi), "lstd")
    dd = np.clip(require_host(fp.d, "lstd"), 0.0, None)
    tr = rollout(mdp, pi, steps, 1, gen, mu=dd / dd.sum())
    s = tr.states[0]
    theta, _, _ = lstd_estimate(
        F[s[:-1]], tr.rewards[0], F[s[1:]], gamma=float(mdp.gamma), lam=lam, ridge=ridge
    )
    return theta, fp
