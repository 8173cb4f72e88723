r"""The exact projected Bellman fixed point of linear TD(λ) and its expected dynamics.

With ``V_θ = Φθ`` on the chain ``P_π`` weighted by ``D = diag(d)``, the projected
Bellman equation ``Φθ* = Π_D T^{(λ)} Φθ*`` is ``Aθ* = b`` with
``A = Φᵀ D (I − γλP_π)^{-1}(I − γP_π) Φ`` and ``b = Φᵀ D (I − γλP_π)^{-1} r_π``
(:func:`projected_fixed_point`); expected TD(λ) is ``θ ← θ + α(b − Aθ)``
(:func:`expected_td`). On-policy ``A`` is positive definite (Tsitsiklis & Van Roy
1997, Lemmas 4–6). Array-API kernels; re-exported by
:mod:`rltheory.algorithms.critics`.

References
----------
Tsitsiklis, J. N., Van Roy, B. (1997). An analysis of temporal-difference learning with
function approximation. IEEE TAC 42(5). Lemmas 4–6, Theorem 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_distribution, as_real_array, real_scalar
from .._validate import check_int as _int
from ..backend import array_namespace, as_float, to_numpy
from ..mdp.bellman import (
    evaluate_policy,
    policy_reward,
    policy_transition_matrix,
)
from ..mdp.difference_form import _policy_values
from ..mdp.mixing import stationary_distribution
from ..mdp.model import FiniteMDP
from ..trace import Trace, TraceRecorder
from ._column_scales import (
    _batch_column_exponents,
    _column_exponents,
    _exponent,
    _pow2,
    _pow2_arr,
    _pow2_both,
    _pow2_cols,
)
from ._td_checks import _check_td_finite, _check_td_matrix
from ._td_features import _features
from ._td_refine import _refine_fixed_point
from ._td_slow_basis import _check_rounding_sensitivity, _slow_first, _td_system

__all__ = ["weighted_norm", "projection", "TDFixedPoint", "projected_fixed_point", "expected_td"]


def _host(x: Any, field: str) -> Any:
    """Lists and tuples as float64 numpy arrays (arrays pass through); complex or text entries are a
    ``TypeError`` naming ``field`` (a float64 cast dropped imaginary parts and parsed strings)."""
    return (
        np.asarray(as_float(x, np, field=field), dtype=np.float64)
        if isinstance(x, (list, tuple))
        else x
    )


def weighted_norm(x: Any, d: Any) -> Any:
    r"""``‖x‖_D = √(Σ_s d(s) x(s)²)`` over the last axis.

    ``x[..., S]`` must be finite and ``d[..., S]`` a probability vector (``ValueError``
    naming the argument, and the offending entry, otherwise). Computed as ``m·‖x/m‖_D`` with
    ``m = max_s |x(s)|``: no overflow or underflow of ``x²`` anywhere in the float range.
    Computed in the promoted dtype of ``x`` and ``d`` (float32 with float64: float64).
    """
    x, d = _host(x, "x"), _host(d, "d")
    xp = array_namespace(x, d)
    x = as_float(xp.asarray(x), xp, field="x")
    if x.ndim < 1:
        raise ValueError(f"x must have shape (..., S); got {tuple(x.shape)}")
    x = as_real_array(x, "x", (x.shape[-1],), ("s",), xp)
    _agree("x (..., S)", x, "d (..., S)", d, -1)
    d = as_distribution(d, "d", x.shape[-1], xp)
    x, d = _promoted(xp, x, d)
    return _weighted_norm(x, d)


def _promoted(xp: Any, *arrays: Any) -> tuple[Any, ...]:
    """The floating ``arrays`` in their promoted dtype (float32 with float64: float64, exactly).

    ``Phi``'s or ``x``'s dtype was imposed on the others: float32 features rounded a float64 ``V``
    to float32 (``projection`` of ``V = (1 + 1e-9, 1)`` on the constant feature returned 1.0 in
    float32 where the exact value is ``1 + 5e-10``).
    """
    dt = xp.result_type(*arrays)
    return tuple(a if a.dtype == dt else as_float(a, xp, dt) for a in arrays)


def _agree(what: str, x: Any, other: str, y: Any, axis: int) -> None:
    """``y``'s last axis must have length ``x.shape[axis]`` (the shared ``S``)."""
    shape = tuple(getattr(y, "shape", ()))
    if not shape or shape[-1] != x.shape[axis]:
        raise ValueError(f"{what} and {other} disagree: {tuple(x.shape)} vs {shape}")


def _weighted_norm(x: Any, d: Any) -> Any:
    """:func:`weighted_norm` without validation (library loops).

    Scaled by ``m = max_s |x(s)|`` (``‖x‖_D = m·‖x/m‖_D``), so that ``x²`` neither overflows
    (``|x| > 1e154``: the norm came out ``inf``) nor underflows (``|x| < 1e-154``: it came out
    ``0``, and a bound computed from a projection error of 0 was below the exact error).
    """
    xp = array_namespace(x, d)
    m = xp.max(xp.abs(x), axis=-1, keepdims=True)
    safe = xp.where((m > 0) & (m < xp.inf), m, xp.ones_like(m))
    y = x / safe
    return safe[..., 0] * xp.sqrt(xp.sum(d * y * y, axis=-1))


def projection(Phi: Any, d: Any, V: Any) -> Any:
    r"""``Π_D V = Φ(ΦᵀDΦ)^{-1}ΦᵀD V``: the ``‖·‖_D``-nearest point of ``span Φ``.

    ``Phi[..., S, k]`` and ``V[..., S]`` must be finite and ``d[..., S]`` a probability
    vector (``ValueError`` naming the argument, and the offending entry, otherwise);
    ``numpy.linalg.LinAlgError`` naming the column (and batch index) when ``ΦᵀDΦ`` is
    singular, i.e. ``√DΦ`` is rank deficient to rounding. Computed in a ``D``-orthonormal
    basis from the SVD of ``√DΦ`` (never through ``ΦᵀDΦ``, which squares its condition number),
    in the promoted dtype of ``Phi``, ``d`` and ``V`` (float32 features with a float64 ``V``:
    float64; ``V`` was rounded to float32 before).
    """
    Phi, d, V = _host(Phi, "Phi"), _host(d, "d"), _host(V, "V")
    xp = array_namespace(Phi, d, V)
    Phi = as_float(xp.asarray(Phi), xp, field="Phi")
    if Phi.ndim < 2:
        raise ValueError(f"Phi must have shape (..., S, k); got {tuple(Phi.shape)}")
    S, k = Phi.shape[-2], Phi.shape[-1]
    Phi = as_real_array(Phi, "Phi", (S, k), ("s", "j"), xp)
    _agree("Phi (..., S, k)", Phi, "d (..., S)", d, -2)
    _agree("Phi (..., S, k)", Phi, "V (..., S)", V, -2)
    d = as_distribution(d, "d", S, xp)
    V = as_real_array(V, "V", (S,), ("s",), xp)
    return _projection(*_promoted(xp, Phi, d, V))


def _projection(Phi: Any, d: Any, V: Any) -> Any:
    """:func:`projection` without validation: ``Ψ Ψᵀ D V`` in the D-orthonormal basis of :func:`_d_basis`."""
    xp = array_namespace(Phi, d, V)
    # Π_D depends on span Φ only: columns at unit scale (a subnormal column made the basis inf/NaN)
    Phi = _pow2_arr(Phi, -_batch_column_exponents(Phi)[..., None, :], xp)
    Psi, sdU, _ = _d_basis(Phi, d, xp)
    coef = xp.matrix_transpose(sdU) @ V[..., None]  # Ψᵀ D V = Uᵀ √D V
    return (Psi @ coef)[..., 0]


def _d_basis(
    F: Any,
    d: Any,
    xp: Any,
    *,
    field: str = "Phi",
    rows: str = "S",
    unit: str = "states",
    support: str = "the support of d",
    vanish: str = "every state with d(s) > 0",
) -> tuple[Any, Any, Any]:
    r"""A ``D``-orthonormal basis ``Ψ`` of ``span Φ``: ``(Ψ, √D U, T)`` with ``Ψ = Φ T``, ``ΨᵀDΨ = I``.

    Built from the SVD of the column-equilibrated weighted design ``√D Φ C^{-1} = U Σ Vᵀ``
    (``C`` the column norms), ``T = C^{-1} V Σ^{-1}``, and ``ΨᵀD = Uᵀ√D``. Never forms
    ``ΦᵀDΦ``, whose condition number is the square of the design's: with two nearly
    collinear features (``cond(√DΦ) ≈ 1e7``) a Gram/normal-equation solve returned fixed-point
    values off by more than ``max|V^π|``. Columns are equilibrated first so that a rarely
    visited state (``d(s) = 1e-40`` with one-hot features) is not mistaken for a dependence, and
    the column norms are scaled by each column's largest entry, so features of any size in the
    float range (``|φ| = 1e-300`` or ``1e300``) give the same basis of the same span.

    Raises ``numpy.linalg.LinAlgError`` (a ``ValueError``) naming the column when ``√D Φ`` is
    rank deficient to rounding: a column that vanishes on the support of ``d``, more columns
    than states, or a singular value of the equilibrated design below ``max(S, k)·ε·σ_max``.
    ``field``, ``rows``, ``unit``, ``support`` and ``vanish`` word the messages (LSTD passes
    its sample design with ``d = 1/n``).
    """
    S, k = F.shape[-2], F.shape[-1]
    sd = xp.sqrt(d)
    X = sd[..., :, None] * F
    if k > S:
        raise np.linalg.LinAlgError(
            f"{field} must have full column rank on {support}; it has k={k} columns but only {rows}={S} {unit}"
        )
    # column norms scaled by each column's max|.|: X² overflowed for |√d φ| > 1e154 (norm inf, every
    # column then 0 after equilibration) and underflowed below 1e-154 (a column "vanishing")
    cm = xp.max(xp.abs(X), axis=-2)  # (..., k)
    cs = xp.where(cm > 0, cm, xp.ones_like(cm))
    Y = X / cs[..., None, :]
    cn = xp.where(cm > 0, cs * xp.sqrt(xp.sum(Y * Y, axis=-2)), xp.zeros_like(cm))  # (..., k)
    if not bool(xp.all(cn > 0)):
        h = np.asarray(to_numpy(cn))
        idx = tuple(int(i) for i in np.argwhere(~(h > 0))[0])
        at = f" at batch={idx[:-1]}" if idx[:-1] else ""
        raise np.linalg.LinAlgError(
            f"{field} must have full column rank on {support}; column j={idx[-1]} of {field}{at} "
            f"vanishes on {vanish}"
        )
    U, sv, Vh = xp.linalg.svd(Y / (cn / cs)[..., None, :], full_matrices=False)  # X / cn
    cut = max(S, k) * float(xp.finfo(X.dtype).eps) * sv[..., :1]
    bad = sv[..., -1:] <= cut
    if bool(xp.any(bad)):
        hs, hv = np.asarray(to_numpy(sv)), np.asarray(to_numpy(Vh))
        where = tuple(int(i) for i in np.argwhere(np.asarray(to_numpy(bad))[..., 0])[0])
        rank = int(np.sum(hs[where] > max(S, k) * np.finfo(hs.dtype).eps * hs[where][0]))
        null = hv[where][-1]  # the (equilibrated) null direction
        j = int(np.argmax(np.abs(null)))
        others = [int(i) for i in np.flatnonzero(np.abs(null) > 1e-3 * np.abs(null[j]))]
        at = f" at batch={where}" if where else ""
        raise np.linalg.LinAlgError(
            f"{field} must have full column rank on {support}; sqrt(d)*{field}{at} has numerical rank "
            f"{rank} < k={k} (column-equilibrated singular values {hs[where][0]:.3g} ... {hs[where][-1]:.3g}): "
            f"column j={j} is, to rounding, a combination of columns {[i for i in others if i != j]}"
        )
    T = (xp.matrix_transpose(Vh) / sv[..., None, :]) / cn[
        ..., :, None
    ]  # not 1/cn: inf for a subnormal cn
    return F @ T, sd[..., :, None] * U, T


@dataclass(frozen=True, eq=False)
class TDFixedPoint:
    """Exact projected Bellman fixed point (:func:`projected_fixed_point`).

    Attributes
    ----------
    theta : array (d,)
        ``θ* = A^{-1} b``.
    A, b : arrays (d, d), (d,)
    d : array (S,)
        The weighting.
    values : array (S,)
        ``Φθ*``.
    V : array (S,)
        Exact ``V^π``.
    error : float
        ``‖Φθ* − V^π‖_D``.
    projection_error : float
        ``‖Π_D V^π − V^π‖_D``.
    """

    theta: Any
    A: Any
    b: Any
    d: Any
    values: Any
    V: Any
    error: float
    projection_error: float


def projected_fixed_point(
    mdp: FiniteMDP, pi: Any, Phi: Any, *, lam: float = 0.0, d: Any = None
) -> TDFixedPoint:
    r"""Exact TD(λ) fixed point ``θ* = A^{-1}b`` of ``Φθ = Π_D T^{(λ)} Φθ``.

    ``A = Φᵀ D (I − γλP_π)^{-1}(I − γP_π) Φ``, ``b = Φᵀ D (I − γλP_π)^{-1} r_π``.

    Parameters
    ----------
    mdp : FiniteMDP
        Single discounted model.
    pi : array
        Policy (stochastic ``[S, A]`` or deterministic ``[S]``).
    Phi : array (S, d)
        Features.
    lam : float in [0, 1]
    d : array (S,), optional
        Weighting, a probability vector; default the stationary distribution of ``P_π``
        (:func:`rltheory.mdp.mixing.stationary_distribution`, which needs a unichain ``P_π``).

    Returns
    -------
    TDFixedPoint

    Raises
    ------
    ValueError
        Bad shapes, a non-finite ``Phi``, ``d`` off the simplex, ``lam`` outside ``[0, 1]``,
        multichain ``P_π`` with default ``d``; a ``θ*`` beyond the float range (features of
        subnormal size; its index); a ``Phi`` of a wider dtype than the model's with an entry beyond
        the model dtype's range, or a column that rounds to 0 there (the entry or column and value).
    numpy.linalg.LinAlgError
        Singular ``A``: ``Φ`` rank deficient on the support of ``d`` (more columns than states,
        a column vanishing where ``d > 0``, or a singular value of the column-equilibrated
        ``√DΦ`` below ``max(S, k)·ε·σ_max``; the message names the dependent column), or a TD
        matrix singular to rounding (an off-policy ``d``): the smallest singular value of its
        ``D``-orthonormal form, columns scaled by their difference-form rounding levels, at or below
        ``max(S, k)·ε·√k`` (:mod:`._td_slow_basis`; the message gives both and the direction of
        ``θ``). On-policy (``σ_min ≥ (1−γ)/(1−γλ)``) this is not reached for γ up to ``1 − 2⁻⁵³``.
        Also where the values are decided by their own rounding (off-policy ``d`` near γ = 1: the
        bound ``ε·|Ψ||Ã^{-1}ΨᵀDM^{-1}(I − γP_π)||Φθ*|`` over ``2⁻¹⁰·max|Φθ*|``; the state is named).

    Notes
    -----
    Tsitsiklis & Van Roy (1997), Lemma 6 and Theorem 1: with ``d`` stationary and
    ``Φ`` of full column rank, ``A`` is positive definite and ``θ*`` is the a.s. limit
    of TD(λ). With one-hot features ``Φθ* = V^π`` exactly.

    Numerics: ``θ*`` is solved in a ``D``-orthonormal basis ``Ψ = ΦT`` of ``span Φ``
    (``ΨᵀDΨ = I``, from the SVD of the column-equilibrated ``√DΦ``), where the system has the
    conditioning of the fixed point itself (about ``1/(1−γ)``); ``A`` carries
    ``cond(√DΦ)²`` on top, where a direct solve of ``Aθ = b`` was off by more than ``max|V^π|``
    for nearly collinear features. For ``γ > 63/65`` the solve is refined with the residual
    ``ΨᵀD M^{-1}(r_π − (I − γP_π)Ψw)`` in difference form (:mod:`._td_refine`), and for
    ``λ = 1`` ``w = ΨᵀD V^π`` (``Φθ* = Π_D V^π``; ``A = ΦᵀDΦ``, ``b = ΦᵀD V^π``) from the accurate
    :func:`evaluate_policy`, and ``(I − γP_π)Φ`` is formed in difference form: ``values``
    is within about ``cond(√DΦ)·ε·max|V^π|/(1−γλ)`` of the exact fixed point however close γ is to
    1 (measured ≤ 8.7 of it against exact rationals on 60 random dyadic models and features for γ
    from 0.9 to ``1 − 2⁻⁵³``, and in float32 to ``1 − 2⁻²⁴``; the basis is reflected so that
    ``Π_D 1`` is one of its columns: :mod:`._td_slow_basis`), and ``error``
    within that plus the accuracy ``1.3·ε·max|r_π|/(1−γ)`` of ``V^π``; for ``λ = 1`` within
    ``cond(√DΦ)·ε·max|r_π|/(1−γ)``, the accuracy of ``V^π``, up to ``γ = 1 − 2⁻⁵³`` (measured
    ≤ 0.97 of it). One solve erred by
    ``ε·max|V^π|/(1−γ)`` on top: ``error`` was 14.5 where the exact value is 0.139 at
    ``γ = 1 − 1e-9``. ``A`` and ``b`` are returned in the
    coordinates of ``Φ`` (``±inf`` where they leave the float range). Everything linear in the
    rewards is computed for ``r_π/2^e`` (``max|r_π|`` in ``[1, 2)``) and scaled back, so subnormal
    rewards keep their digits (the error was 2.95e-321 for an exact 1.39e-321). ``Phi`` is read in the
    model's dtype: float32 features on a float64 model are promoted exactly, and the result is
    the fixed point of those stored values, to float64 accuracy.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), gamma=0.5)
    >>> fp = projected_fixed_point(mdp, np.array([0, 0]), np.ones((2, 1)))
    >>> float(fp.theta[0])  # constant feature: the stationary-average reward over (1 - gamma)
    1.0
    """
    return _fixed_point(mdp, pi, Phi, lam, d, "projected_fixed_point")[0]


def _fixed_point(
    mdp: FiniteMDP, pi: Any, Phi: Any, lam: Any, d: Any, who: str
) -> tuple[TDFixedPoint, Any, Any, Any, int]:
    """:func:`projected_fixed_point` (validating, ``who`` names the caller), and the same system
    for the features ``Φ/2^e`` with ``2^e ≤ max|Φ| < 2^{e+1}``: ``(fp, A_s, b_s, θ*_s, e)`` with
    ``A = 4^e A_s``, ``b = 2^e b_s``, ``θ* = 2^{−e} θ*_s`` (exact powers of 2).

    Solved with every column at unit scale and scaled back: ``A``, ``b`` are ``±inf`` with the right
    sign where they leave the float range (``|φ| = 1e300``: wrong signs before), and columns of
    ``1e-160`` next to ``1e160`` keep their sizes (``Φ/2^e`` made the small one subnormal and the
    SVD failed); ``A_s``, ``b_s`` (``θ*_s``) are ``0`` (``inf``) where such columns leave them.
    """
    if not isinstance(mdp, FiniteMDP) or mdp.gamma is None or mdp.batch_shape:
        got = (
            type(mdp).__name__
            if not isinstance(mdp, FiniteMDP)
            else f"gamma={mdp.gamma}, batch_shape={mdp.batch_shape}"
        )
        raise ValueError(f"{who} needs a single discounted FiniteMDP; got {got}")
    lam_ = real_scalar(lam)  # Python or numpy real; NaN (failing the range) for anything else
    if not 0.0 <= lam_ <= 1.0:
        raise ValueError(f"lam must lie in [0, 1]; got {lam!r}")
    lam = lam_
    xp = mdp.xp
    g = float(mdp.gamma)
    F0 = _features(mdp, Phi)
    e = _exponent(F0, xp)
    # solved for F = Φ·diag(2^{−E_j}) (each column's max in [1, 2)) and scaled back (_column_scales)
    E = _column_exponents(F0, default=e)
    F = _pow2_cols(F0, [-v for v in E], xp)
    Ppi = policy_transition_matrix(mdp, pi)
    r0 = policy_reward(mdp, pi)
    # solved for r/2^er (max|r| in [1, 2)) and scaled back, as θ*, b, the values and the errors are
    # linear in r: subnormal rewards (1e-320) lost digits in every product, and the certified error
    # came out 2.95e-321 where the stored model's is 1.39e-321
    er = _exponent(r0, xp)
    r = _pow2(r0, -er)
    if d is None:
        d = stationary_distribution(Ppi)
    else:
        d = _host(d, "d")
        shape = tuple(getattr(d, "shape", ()))
        if shape != (mdp.S,):
            raise ValueError(f"d must have shape ({mdp.S},); got {shape}")
        d = as_distribution(d, "d", mdp.S, xp, mdp.dtype)
    # θ* is solved in a D-orthonormal basis Ψ = ΦT of span Φ (ΨᵀDΨ = I, ΨᵀD = Uᵀ√D): the
    # system Ã w = b̃, Ã = ΨᵀD M^{-1}(I − γP)Ψ, has the conditioning of the fixed point itself,
    # whereas A = Tᵀ^{-1} Ã T^{-1} carries cond(√DΦ)² on top (see _d_basis).
    Psi, sdU, T = _d_basis(F, d, xp)
    DF = d[:, None] * F
    if lam == 1.0:
        # M^{-1}(I − γP) = I: Ã = I, Φθ* = Π_D V^π, w = ΨᵀD V^π, A = ΦᵀDΦ, b = ΦᵀD V^π from the
        # accurate V^π (through M^{-1}: values off by 8 at γ = 1 − 1e-9). No M^{-1}, no check of Ã:
        # its rounding level carries |M^{-1}| ~ 1/(1−γ) and refused Ã = I at γ = 1 − 2^-53.
        V0 = evaluate_policy(mdp, pi)  # the model's values (a located error beyond the range)
        V = V0 if er == 0 else _policy_values(xp, g, Ppi, r[:, None])[:, 0]  # for r/2^er
        w = xp.matrix_transpose(sdU) @ V[:, None]
        A = xp.matrix_transpose(DF) @ F
        b = xp.matrix_transpose(DF) @ V
    else:
        # the basis reflected so that one column is Π_D 1 (the slow direction of P_π), and Ã's
        # singularity judged column by column at its difference-form rounding level (_td_slow_basis):
        # γ = 1 − 2^-50 .. 1 − 2^-53 were refused, and without the test the values were off by 2e5
        Psi, sdU, T = _slow_first(xp, Psi, sdU, T)
        A, b, At, bt, level, Lt = _td_system(xp, g, lam, Ppi, r, F, DF, Psi, sdU)
        _check_td_matrix(At, level, mdp.S, xp, T=T)
        V0 = evaluate_policy(mdp, pi)  # the model's values (a located error beyond the range)
        V = V0 if er == 0 else _policy_values(xp, g, Ppi, r[:, None])[:, 0]  # for r/2^er
        w = xp.linalg.solve(At, bt[:, None])
        # γ near 1: one solve erred by ε‖V‖/(1−γ) (error 14.5 for an exact 0.139 at γ = 1 − 1e-9)
        w = _refine_fixed_point(xp, g, lam, Ppi, r, Psi, sdU, At, w)
        _check_rounding_sensitivity(xp, g, Ppi, Psi, Lt, At, w, lam)
    theta_c = (T @ w)[:, 0]
    values = (Psi @ w)[:, 0]
    err = float(_weighted_norm(values - V, d))
    proj = (Psi @ (xp.matrix_transpose(sdU) @ V[:, None]))[:, 0]  # Π_D V = Ψ Ψᵀ D V
    perr = float(_weighted_norm(proj - V, d))
    with np.errstate(over="ignore", under="ignore"):  # A, b: ±inf (or 0) out of the range
        theta_c, b, values = _pow2(theta_c, er), _pow2(b, er), _pow2(values, er)
        err, perr = float(np.ldexp(err, er)), float(np.ldexp(perr, er))
        theta = _pow2_cols(theta_c, [-v for v in E], xp)
        fp = TDFixedPoint(
            theta, _pow2_both(A, E, xp), _pow2_cols(b, E, xp), d, values, V0, err, perr
        )
        rel = [v - e for v in E]  # the system for Φ/2^e (expected_td's coordinates)
        A_s, b_s, theta_s = (
            _pow2_both(A, rel, xp),
            _pow2_cols(b, rel, xp),
            _pow2_cols(theta_c, [-v for v in rel], xp),
        )
    if not bool(xp.all(xp.isfinite(theta))):  # θ*_j scales as 1/|Φ_j|: inf for subnormal features
        j = int(np.argmax(~np.isfinite(np.asarray(to_numpy(theta)))))
        raise ValueError(
            f"{who}: theta*[{j}] = {float(theta_c[j])!r} * 2^{-E[j]} is beyond the float range "
            f"(theta*[{j}] scales as 1/|Phi[:, {j}]|, max|Phi[:, {j}]| < 2^{E[j] + 1}); scale the features up"
        )
    return fp, A_s, b_s, theta_s, e


def expected_td(
    mdp: FiniteMDP,
    pi: Any,
    Phi: Any,
    *,
    step_size: float,
    iterations: int,
    lam: float = 0.0,
    d: Any = None,
) -> Trace:
    r"""Mean-path TD(λ): ``θ_{k+1} = θ_k + α (b − Aθ_k)`` from ``θ_0 = 0`` (the ODE's Euler scheme).

    Returns a :class:`~rltheory.trace.Trace` with ``error`` ``‖Φθ_k − Φθ*‖_D`` and
    ``theta`` per iteration. With ``A`` positive definite (on-policy ``d``) and
    ``α < 2λ_min(A_sym)/‖A‖²`` it converges geometrically to ``θ*``
    (Tsitsiklis & Van Roy 1997, §IV, the mean ODE ``θ̇ = b − Aθ``). A run whose ``θ_k``
    overflows (spectral radius ``ρ(I − αA) > 1``) raises ``ValueError`` naming the first
    non-finite iteration and ``ρ(I − αA)``; a diverging run that stays finite is returned.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), gamma=0.5)
    >>> tr = expected_td(mdp, np.array([0, 0]), np.eye(2), step_size=1.0, iterations=200)
    >>> bool(tr["error"][-1] < 1e-10)
    True
    """
    a = real_scalar(step_size)  # Python or numpy real; NaN (failing the test) for anything else
    if not a > 0:
        raise ValueError(f"step_size must be > 0; got {step_size!r}")
    if not math.isfinite(a):
        raise ValueError(f"step_size must be finite; got {step_size!r}")
    step_size = a
    iterations = _int(iterations, "iterations", 0)
    fp, A, b, theta_star, e = _fixed_point(mdp, pi, Phi, lam, d, "expected_td")
    xp = mdp.xp
    # iterated for the features Φ/2^e (max entry in [1, 2)): θ_s = 2^e θ, A_s = A/4^e, b_s = b/2^e
    # and α_s = 4^e α give the same iterates to the bit, but A_s and α_s·A_s stay in range where A
    # itself does not (|φ| = 1e300 in float64, 1e±30 in float32: A was inf or 0, and the run
    # failed inside numpy or was refused with "rho(I − αA) = 1 > 1")
    F = _pow2(_features(mdp, Phi), -e)
    if not bool(xp.all(xp.isfinite(theta_star))):  # columns of sizes beyond one scale's range
        j = int(np.argmax(~np.isfinite(np.asarray(to_numpy(theta_star)))))
        raise ValueError(
            f"expected_td: theta*[{j}] * 2^{e} is beyond the float range (column {j} of Phi is too "
            f"small next to max|Phi| < 2^{e + 1} for one scale); scale the columns to similar sizes"
        )
    try:
        alpha = math.ldexp(step_size, 2 * e)
    except OverflowError:
        alpha = math.inf
    theta = xp.zeros(theta_star.shape, dtype=mdp.dtype, device=F.device)
    rec = TraceRecorder()
    # a step beyond the stability limit makes θ_k overflow: refused below with the spectral radius,
    # not numpy's overflow warnings and a NaN trace
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for k in range(iterations + 1):
            rec.record(
                k, error=_weighted_norm(F @ (theta - theta_star), fp.d), theta=_pow2(theta, -e)
            )
            theta = theta + alpha * (b - A @ theta)
    trace = rec.finish()
    _check_td_finite(trace, A, alpha, step_size, e)
    return trace
