r"""Bounds for the average-reward criterion: vanishing discount, relative value iteration, mixing.

* :func:`vanishing_discount_bound` — ``‖(1−γ)V_γ − g‖∞ ≤ (1−γ)·sp(h)`` for a policy
  (any solution ``h`` of its Poisson equation) and for the optimal values of a
  weakly communicating MDP (``h*`` solving the optimality equation).
* :func:`laurent_first_order` — ``(1−γ)V_γ^π = g^π + (1−γ)h^π + O((1−γ)²)`` with the
  bias ``h^π`` (``P*h = 0``): the slope-1 line the vanishing-discount experiment fits.
* :func:`span_contraction_coefficient` — Dobrushin's coefficient ``δ`` with
  ``sp(Pv) ≤ δ sp(v)``, and the MDP version bounding relative value iteration.
* :func:`rvi_asymptotic_rate` — ``max_{λ≠1}|τλ + 1 − τ|`` over the spectrum of the
  optimal chain: the geometric rate RVI settles into once the greedy policy is fixed.
* :func:`mixing_time_spectral_bounds` — ``(t_rel − 1) log(1/(2ε)) ≤ t_mix(ε) ≤
  t_rel log(1/(ε μ_min))`` for reversible chains (Levin, Peres & Wilmer 2017,
  Thms 12.4 and 12.5), and :func:`mixing_time_eps_bound`, ``t_mix(ε) ≤ ⌈log₂ ε⁻¹⌉ t_mix``
  (LPW §4.5).

Proof of the vanishing-discount bound (used because it holds for every γ, not only
asymptotically). *Policy:* with ``r_π = g + (I − P)h`` and ``Pg = g``,
``V_γ = g/(1−γ) + h − (1−γ)(I − γP)^{-1}P h``; ``(1−γ)(I − γP)^{-1}P`` is a
stochastic matrix, so ``(1−γ)V_γ − g = (1−γ)(h − u)`` with ``u`` an average of
entries of ``h``, whence ``|·| ≤ (1−γ) sp(h)``. *Optimal:* with ``w = g*/(1−γ) + h*``
and ``g* + h* = max_a [r + P h*]``, ``T_γ w ≤ w − (1−γ) min h*`` and
``T_γ w ≥ w − (1−γ) max h*``; iterating the monotone γ-contraction ``T_γ`` gives
``(1−γ)(h* − max h*) ≤ (1−γ)V*_γ − g* ≤ (1−γ)(h* − min h*)``. The same bound appears
in the regret analyses of weakly communicating MDPs (e.g. Wei et al. 2020, §4).

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. §8.2 (Laurent expansion),
§8.5 (relative value iteration, span contraction), §6.6 (span seminorm).
Seneta, E. (2006). *Non-negative Matrices and Markov Chains*. Springer. §3.1 (ergodic
coefficients).
Levin, D. A., Peres, Y. & Wilmer, E. L. (2017). *Markov Chains and Mixing Times*, 2nd ed.
AMS. §4.5, Thms 12.4–12.5.
Wei, C.-Y., Jafarnia-Jahromi, M., Luo, H., Sharma, H. & Jain, R. (2020). Model-free
reinforcement learning in infinite-horizon average-reward MDPs. ICML.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._validate import _source_atol, check_probability, real_scalar
from ..backend import to_numpy

__all__ = [
    "vanishing_discount_bound",
    "laurent_first_order",
    "span_contraction_coefficient",
    "rvi_asymptotic_rate",
    "mixing_time_spectral_bounds",
    "mixing_time_eps_bound",
]


def _discounts(gamma: Any) -> np.ndarray:
    g = np.asarray(to_numpy(gamma))
    # not bools, strings ("0.5" converts to a float) or complex numbers
    if g.dtype.kind not in "iuf":
        raise ValueError(f"gamma must lie in [0, 1); got {gamma!r}")
    g = g.astype(float)
    if not np.all(np.isfinite(g)) or np.any(g < 0) or np.any(g >= 1):
        raise ValueError(f"gamma must lie in [0, 1); got {gamma!r}")
    return g


def _real_array(x: Any, field: str) -> np.ndarray:
    """``x`` as a float64 host array (bools as 0/1, like ``as_float``); ``TypeError`` for strings,
    complex or object data."""
    a = np.asarray(to_numpy(x))
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{field} must hold real numbers; got an array of dtype {a.dtype}")
    return a.astype(float)


def _check_finite(a: np.ndarray, field: str) -> None:
    if not np.all(np.isfinite(a)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(f"{field} must be finite; {field}{list(idx)} = {a[idx]}")


def vanishing_discount_bound(gamma: Any, bias_span: float) -> np.ndarray:
    r"""``(1−γ)·sp(h)``, bounding ``‖(1−γ)V_γ − g‖∞`` (policy) and ``‖(1−γ)V*_γ − g*‖∞`` (optimal).

    Holds for every ``γ ∈ [0, 1)``; for the optimal values it needs a constant
    optimal gain (weakly communicating model) and ``sp(h*)`` of any solution of the
    average optimality equation. Proof in the module notes.

    Examples
    --------
    >>> vanishing_discount_bound([0.9, 0.99], 2.0)
    array([0.2 , 0.02])
    """
    g = _discounts(gamma)
    span = real_scalar(bias_span)  # numpy scalars and 0-d arrays as numbers; NaN for anything else
    if not (span >= 0 and math.isfinite(span)):
        raise ValueError(f"bias_span must be a finite number >= 0; got {bias_span!r}")
    out = np.asarray((1.0 - g) * span, dtype=float)
    # rounded upwards: a bound must not be an ulp below the exact (1 − γ)·sp(h) (it was, where
    # 1 − γ or the product rounded down; the exact value is checked in rationals)
    flat = out.reshape(-1)
    for i, (gi, v) in enumerate(zip(np.asarray(g, dtype=float).reshape(-1), flat, strict=True)):
        if math.isfinite(v) and Fraction(v) < (1 - Fraction(float(gi))) * Fraction(span):
            flat[i] = np.nextafter(v, math.inf)
    return out


def laurent_first_order(gamma: Any, g: Any, h: Any) -> np.ndarray:
    r"""``g + (1−γ) h``: the first two Laurent terms of ``(1−γ)V_γ^π`` (Puterman 1994, Thm 8.2.3).

    The Laurent series ``V_γ^π = (1+ρ)[g/ρ + h + Σ_{n≥1} ρ^n y_n]``, ``ρ = (1−γ)/γ``, with
    ``h`` the bias (``P*h = 0``) gives ``V_γ^π = g/(1−γ) + h + O(1−γ)``, so
    ``(1−γ)V_γ^π − (g + (1−γ)h) = O((1−γ)²)``.

    Parameters
    ----------
    gamma : float or array of floats in [0, 1)
    g : float, or array of shape (S,) (per-state gain)
    h : array, shape (S,)

    Returns
    -------
    array, shape ``gamma.shape + (S,)``

    Raises
    ------
    ValueError
        ``gamma`` outside [0, 1) (or not real), ``g`` or ``h`` of the wrong shape, or a
        non-finite entry (named with its index).
    TypeError
        ``g`` or ``h`` holding strings or complex numbers.

    Examples
    --------
    >>> laurent_first_order([0.9], 1.0, [0.5, -0.5])
    array([[1.05, 0.95]])
    """
    gm = _discounts(gamma)
    hh = _real_array(h, "h")
    gg = _real_array(g, "g")
    if hh.ndim != 1 or hh.size == 0:
        raise ValueError(f"h must have shape (S,) with S >= 1; got {hh.shape}")
    if gg.ndim != 0 and gg.shape != hh.shape:
        raise ValueError(f"g must be a number or have the shape of h, {hh.shape}; got {gg.shape}")
    _check_finite(hh, "h")
    _check_finite(gg, "g")
    return gg + (1.0 - gm)[..., None] * hh


def span_contraction_coefficient(P: Any) -> float:
    r"""Dobrushin's coefficient ``δ(P) = ½ max_{x,y} ‖P(x,·) − P(y,·)‖₁ = 1 − min_{x,y} Σ_j min(P(x,j), P(y,j))``.

    For a chain ``P[S, S]``, ``sp(Pv) ≤ δ sp(v)`` (Seneta 2006, Thm 3.1). For an MDP
    kernel ``P[S, A, S]`` the maximum runs over all state-action pairs, and
    ``sp(Tv − Tu) ≤ δ sp(v − u)`` for the undiscounted optimality operator, so relative
    value iteration contracts in span at rate ``δ`` when ``δ < 1`` (Puterman 1994,
    §8.5.2 and Prop. 6.6.1).

    ``P`` must be square in its states with rows on the simplex (``ValueError`` naming
    ``P`` and the offending entry or row otherwise).

    Notes
    -----
    The result is an upper bound on the exact ``δ`` of the float entries (rational
    arithmetic), never below it: the pairs whose rounded value comes within the
    summation error ``2(S + 4)u`` of the maximum are re-evaluated exactly (TwoSum and
    ``math.fsum``) and the smallest float ``≥`` the exact maximum is returned. When more
    than 4096 pairs are that close (near-ties), the rounded maximum times
    ``1 + 2(S + 4)u``, rounded up, is returned instead (an a-priori allowance covering
    Higham's ``γ_{S+1}``). The plain float formula was up to 1.7e-16 below the exact value.
    Cost ``O(n² S)`` for ``n`` distinct rows.

    Examples
    --------
    >>> import numpy as np
    >>> span_contraction_coefficient(np.array([[0.75, 0.25], [0.25, 0.75]]))
    0.5
    """
    raw = np.asarray(to_numpy(P))
    Ph = _real_array(raw, "P")  # a complex P lost its imaginary part with only a ComplexWarning
    atol = _source_atol(raw, np)
    if Ph.ndim not in (2, 3):
        raise ValueError(f"P must have shape (S, S) or (S, A, S); got {Ph.shape}")
    if Ph.shape[0] != Ph.shape[-1] or Ph.shape[0] == 0:
        raise ValueError(
            f"P must have shape (S, S) or (S, A, S) with S >= 1 states on both sides; got {Ph.shape}"
        )
    if Ph.ndim == 3 and Ph.shape[1] == 0:  # no rows to compare: max over an empty set
        raise ValueError(f"P must have shape (S, A, S) with A >= 1 actions; got {Ph.shape}")
    names = ("s", "t") if Ph.ndim == 2 else ("s", "a", "t")
    check_probability(Ph, "P", names, "P[s, :]" if Ph.ndim == 2 else "P[s, a, :]", atol=atol)
    if Ph.ndim == 3:
        Ph = Ph.reshape(-1, Ph.shape[-1])
    Ph = np.unique(Ph, axis=0)  # equal rows contribute 0; fewer pairs to compare
    n = Ph.shape[0]
    if n == 1:
        return 0.0
    i, j = np.triu_indices(n, k=1)
    est = 0.5 * np.abs(Ph[i] - Ph[j]).sum(-1)  # rounded: may lie below the exact value
    # each |p − q| is rounded by u, the sum of S terms by γ_{S−1}: relative error ≤ γ_{S+1} ≤ (S+2)u;
    # doubled to cover the rounding of this filter's own products
    rel = 2.0 * (Ph.shape[1] + 4) * _U
    top = float(est.max())
    cand = np.flatnonzero(est * (1.0 + rel) + _TINY >= top * (1.0 - rel) - _TINY)
    if cand.size > _EXACT_PAIRS:  # many near-ties: the a-priori allowance, rounded up
        return float(np.nextafter(top * (1.0 + rel) + _TINY, np.inf))
    return max(_half_l1_up(Ph[i[k]], Ph[j[k]]) for k in cand)


_U = 2.0**-53  # unit round-off of float64
_TINY = 2.0**-1074  # absolute slack: halving a subnormal sum rounds by up to half of this
_EXACT_PAIRS = 4096  # near-maximal pairs evaluated exactly; beyond, the a-priori allowance


def _half_l1_up(p: np.ndarray, q: np.ndarray) -> float:
    """The smallest float ``≥ ½ Σ_j |p_j − q_j|``, exactly, for float64 rows ``p`` and ``q``.

    Each ``p_j − q_j = s_j + e_j`` exactly (Knuth's TwoSum), ``|p_j − q_j| = |s_j| + sign(s_j) e_j``
    (``|e_j| ≤ u|s_j|``, and ``s_j = 0`` only if ``p_j = q_j``), so the exact sum is that of the
    floats ``|s_j|`` and ``sign(s_j) e_j``; ``math.fsum`` rounds it correctly and the sign of the
    (exact) remainder tells whether the halved result must move up one ulp.
    """
    a, b = p, -q
    s = a + b
    bp = s - a
    e = (a - (s - bp)) + (b - bp)
    terms = np.concatenate([np.abs(s), np.sign(s) * e]).tolist()
    half = math.fsum(terms) / 2.0
    if math.fsum([*terms, -2.0 * half]) > 0.0:  # 2·half is exact; the remainder's sign is exact
        half = math.nextafter(half, math.inf)
    return half


def rvi_asymptotic_rate(P_pi: Any, tau: float) -> float:
    r"""``ρ = max_{λ ∈ spec(P_π), λ ≠ 1} |τλ + 1 − τ|``: RVI's asymptotic geometric rate.

    Once the greedy policy equals an optimal ``π`` with unichain aperiodic ``P_π``, RVI
    on the transformed model is the power iteration ``v ↦ P̃_π v`` on the
    complement of constants, so ``sp(Δ_k)`` decays like ``ρ^k`` with ``ρ`` the
    second-largest eigenvalue modulus of ``P̃_π = τP_π + (1−τ)I`` (Puterman 1994,
    §8.5.4; Seneta 2006, §1.2).

    Examples
    --------
    >>> import numpy as np
    >>> rvi_asymptotic_rate(np.array([[0., 1.], [1., 0.]]), 0.5)  # eigenvalue −1 ↦ 0
    0.0
    """
    t = real_scalar(tau)  # numpy scalars and 0-d arrays as numbers; NaN for bools and anything else
    if not 0 < t <= 1:
        raise ValueError(f"tau must lie in (0, 1]; got {tau!r}")
    tau = t
    raw = np.asarray(to_numpy(P_pi))
    P = _real_array(raw, "P_pi")
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] == 0:
        raise ValueError(
            f"P_pi must be a square (S, S) transition matrix with S >= 1; got shape {P.shape}"
        )
    check_probability(P, "P_pi", ("s", "t"), "P_pi[s, :]", atol=_source_atol(raw, np))
    lam = np.linalg.eigvals(P)
    lam = np.delete(lam, int(np.argmin(np.abs(lam - 1.0))))
    return float(np.max(np.abs(tau * lam + 1.0 - tau), initial=0.0))


def mixing_time_spectral_bounds(
    relaxation_time: float, eps: float, mu_min: float
) -> tuple[float, float]:
    r"""``((t_rel − 1) log(1/(2ε)),  t_rel log(1/(ε μ_min)))`` for reversible irreducible chains.

    Levin, Peres & Wilmer (2017), Thm 12.4 (upper bound, ``μ_min = min_s μ(s)``) and
    Thm 12.5 (lower bound), with ``t_rel = 1/γ*`` the relaxation time (``γ*`` the
    absolute spectral gap).

    Examples
    --------
    >>> lo, hi = mixing_time_spectral_bounds(2.0, 0.25, 0.5)
    >>> round(lo, 6), round(hi, 6)
    (0.693147, 4.158883)
    """
    for name, v in (("relaxation_time", relaxation_time), ("eps", eps), ("mu_min", mu_min)):
        if not math.isfinite(real_scalar(v)):  # numpy scalars and 0-d arrays as numbers; not bools
            raise ValueError(f"{name} must be a finite number; got {v!r}")
    relaxation_time, eps, mu_min = (
        real_scalar(relaxation_time),
        real_scalar(eps),
        real_scalar(mu_min),
    )
    if relaxation_time < 1:
        raise ValueError(
            f"relaxation_time must be >= 1 (t_rel = 1/γ*, γ* ≤ 1); got {relaxation_time}"
        )
    if not 0 < eps < 0.5:
        raise ValueError(f"eps must lie in (0, 1/2) for the lower bound; got {eps}")
    if not 0 < mu_min <= 1:
        raise ValueError(f"mu_min must lie in (0, 1]; got {mu_min}")
    # -log(2ε) and -(log ε + log μ_min), not log(1/(2ε)) and log(1/(ε μ_min)): ε μ_min underflows to 0
    # (ZeroDivisionError) for ε = μ_min = 1e-200, and 1/ε overflows to inf for a subnormal ε
    lo = (relaxation_time - 1.0) * -(math.log(2.0) + math.log(eps))
    hi = relaxation_time * -(math.log(eps) + math.log(mu_min))
    return lo, hi


def mixing_time_eps_bound(t_mix: int, eps: float) -> int:
    r"""``t_mix(ε) ≤ ⌈log₂(1/ε)⌉ · t_mix(1/4)`` (Levin, Peres & Wilmer 2017, §4.5).

    From ``d(ℓ t) ≤ d̄(t)^ℓ ≤ (2 d(t))^ℓ`` and ``2 d(t_mix) ≤ 1/2``.

    Examples
    --------
    >>> mixing_time_eps_bound(10, 0.01)
    70
    """
    t = (
        t_mix.item()
        if isinstance(t_mix, np.ndarray) and t_mix.ndim == 0 and t_mix.dtype.kind in "iu"
        else t_mix
    )
    # mixing_time returns a 0-d int array
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 0:
        raise ValueError(f"t_mix must be a non-negative integer; got {t_mix!r}")
    if not 0 < real_scalar(eps) < 1:
        raise ValueError(f"eps must lie in (0, 1); got {eps!r}")
    t_mix, eps = int(t), real_scalar(eps)
    # ⌈log₂(1/ε)⌉ = the least ℓ with 2^-ℓ ≤ ε, exactly from the binary exponent: ε = m·2^e with
    # m ∈ [1/2, 1) gives ℓ = 1 − e. ceil(−log2(ε)) rounded log₂ of ε = 1/4 − 2⁻⁵⁵ to exactly 2 and
    # claimed t_mix(ε) ≤ 2 t_mix, where only 3 t_mix is proven (and 1/ε overflows for a subnormal ε)
    return (1 - math.frexp(float(eps))[1]) * int(t_mix)
