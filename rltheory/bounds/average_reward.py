r"""Bounds for average-reward actor-critic: Markovian-average bias, MLMC cost, MAC's rate.

* :func:`markov_average_bias` — the bias of an ``N``-sample Markovian average
  from a non-stationary start, in terms of the exact TV distances ``d(k)``
  (:func:`rltheory.mdp.mixing.tv_distances`): the quantity whose slow decay for
  slowly mixing chains forces mixing-time-dependent step sizes, and which the
  MLMC estimator makes ``O(τ_mix/T_max)`` with only ``O(log T_max)`` samples.
* :func:`mlmc_expected_samples` — expected roll-out length of one MLMC estimate.
* :func:`mac_rate` — the ``Õ(T^{-1/2})`` stationarity rate of MAC (Suttle et al.
  2023) with the ``√τ_mix`` dependence of Patel et al. (2024).

References
----------
Suttle, W. A., Bedi, A. S., Patel, B., Sadler, B. M., Koppel, A., Manocha, D. (2023).
Beyond exponentially fast mixing in average-reward RL via multi-level Monte Carlo
actor-critic. ICML. (Abstract: a rate comparable to state-of-the-art AC without
mixing-time oracle; Theorem 1.)
Patel, B., Suttle, W. A., Koppel, A., Aggarwal, V., Sadler, B. M., Bedi, A. S., Manocha, D.
(2024). Global optimality without mixing time oracles in average-reward RL via
multi-level actor-critic. (Abstract: ``O(√τ_mix)`` dependence.)
Levin, D. A., Peres, Y., Wilmer, E. L. (2017). *Markov Chains and Mixing Times*, 2nd ed.
Prop. 4.5 (``|E_p f − E_q f| ≤ ‖p − q‖_TV · span(f)``).
Dorfman, R., Levy, K. Y. (2022). Adapting to mixing time in stochastic optimization with
Markovian data. ICML. Lemma 3.1 (MLMC bias and cost).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ._argcheck import _count, _nonneg, _real_entries, _real_scalar, _times

__all__ = ["MAC_EXPONENT", "markov_average_bias", "mlmc_expected_samples", "mac_rate"]


#: Exponent of MAC's rate for ``(1/T) Σ_t E‖∇J(θ_t)‖²``: ``Õ(T^{-1/2})``.
MAC_EXPONENT = -0.5


def markov_average_bias(N: Any, tv: Any, span: float) -> np.ndarray:
    r"""``|E[(1/N) Σ_{k<N} f(s_k)] − μ(f)| ≤ (span(f)/N) Σ_{k<N} d(k)`` for every start law.

    Parameters
    ----------
    N : array_like of int ≥ 1
        Averaging lengths.
    tv : array_like, shape (K,)
        ``d(k) = max_s ‖P^k(s, ·) − μ‖_TV`` for ``k = 0..K−1`` (``K ≥ max N``).
    span : float ≥ 0
        ``max f − min f``.

    Notes
    -----
    ``|E_ν[f(s_k)] − μ(f)| = |(νP^k − μ) f| ≤ ‖νP^k − μ‖_TV span(f) ≤ d(k) span(f)``
    (LPW Prop. 4.5, convexity of TV in the start law); average over ``k``. For a
    chain with ``d(k) ≤ 2^{-⌊k/τ_mix⌋}`` the bound is ``≤ 2τ_mix span(f)/N``.

    The result is never below the exact ``(span/N) Σ_{k<N} d(k)`` of the given floats (rounded
    upwards where the float evaluation fell below it; checked in rationals), since the bound is
    attained on two-state chains.

    Raises
    ------
    ValueError
        ``tv`` not 1-D or an entry outside ``[0, 1]`` (index and value named); ``N`` not integers
        in ``[1, len(tv)]`` (bools and strings included; the first bad entry named); ``span`` not a
        finite number ``≥ 0``. An empty ``N`` gives an empty array.
    TypeError
        ``tv`` does not hold real numbers (bools, strings, complex).

    Examples
    --------
    >>> markov_average_bias([1, 2, 4], [1.0, 0.5, 0.25, 0.125], 1.0).tolist()
    [1.0, 0.75, 0.46875]
    """
    d = _nonneg(tv, "tv", maximum=1.0 + 1e-12)
    if d.ndim != 1:
        raise ValueError(
            f"tv must be a 1-D array of total-variation distances d(0), d(1), ...; got shape {d.shape}"
        )
    # an empty N raised numpy's "zero-size array to reduction operation maximum", a string N a
    # UFuncTypeError, and bools passed as 1: N is now read as numbers (not bools) and the first
    # bad entry is named
    rule = f"N must be integers in [1, len(tv)={d.shape[0]}]; got {N!r}"
    try:  # bools (also inside [True, 2], which numpy stores as integers), strings, None
        n, _ = _real_entries(N, "N")  # an integer beyond the float range reads as inf
    except TypeError as e:
        raise ValueError(f"{rule} ({str(e).split('; ', 1)[1]})") from None
    bad = ~np.isfinite(n) | (n < 1) | (n != np.floor(n)) | (n > d.shape[0])
    if np.any(bad):
        i = tuple(int(j) for j in np.argwhere(bad)[0])
        given = np.asarray(N)  # the entry as given (4, not its float 4.0)
        v = given[i].item() if given.dtype.kind in "iuf" else n[i].item()
        raise ValueError(rule + (f" (N{list(i)} = {v!r})" if n.ndim else ""))
    sp = _real_scalar(span)
    if not (math.isfinite(sp) and sp >= 0):
        raise ValueError(f"span must be a finite number >= 0; got {span!r}")
    c = np.concatenate([[0.0], np.cumsum(d)])
    return _round_up(sp * c[n.astype(int)] / n, n.astype(int), d, sp)


def _round_up(out: np.ndarray, n: np.ndarray, d: np.ndarray, sp: float) -> np.ndarray:
    """``out`` raised to the smallest float ``≥`` the exact ``sp · Σ_{k<n} d(k) / n`` of the given floats
    where it lies below. The rounded cumulative sum and quotient were ulps below it, and the bound is tight
    on two-state chains: on ``[[7/8, 1/8], [7/16, 9/16]]`` with span 1 and ``d(k)`` rounded upwards it
    came out below the exact bias at ``N = 7..12``. The prefix sums are formed exactly in integers
    (every float is ``m·2^e``)."""
    flat = out.reshape(-1)
    if flat.size == 0:
        return out
    top = int(n.max())
    mant, ex = np.frexp(d[:top])
    m = (mant * 2.0**53).astype(np.int64).tolist()
    e = (ex.astype(np.int64) - 53).tolist()
    e0 = min(e)
    prefix = [0]
    for mi, ei in zip(m, e, strict=True):
        prefix.append(prefix[-1] + (mi << (ei - e0)))
    scale, spq = Fraction(2) ** e0, Fraction(sp)
    for i, (v, ni) in enumerate(zip(flat.tolist(), n.reshape(-1).tolist(), strict=True)):
        exact = spq * prefix[ni] * scale / ni
        if Fraction(v) < exact:  # the smallest float >= exact (the rounded sum can be ulps below)
            up = float(exact)
            flat[i] = up if Fraction(up) >= exact else math.nextafter(up, math.inf)
    return out


def mlmc_expected_samples(T_max: int) -> float:
    r"""``E[N] = Σ_{j=1}^{j_max} 2^{-j}·2^j + 2^{-j_max}·1 = j_max + 2^{-j_max}``, ``j_max = ⌊log₂ T_max⌋``.

    (One sample when ``2^J > T_max``.) Logarithmic in ``T_max``, whereas the
    truncated average it is unbiased for uses ``2^{j_max} ≈ T_max`` samples.

    Examples
    --------
    >>> mlmc_expected_samples(8)
    3.125
    """
    T_max = _count(T_max, "T_max")
    # exact in integers: ⌊log₂ T_max⌋ in floating point is one too many for T_max = 2^k − 1, k ≥ 49
    j = T_max.bit_length() - 1
    return j + 2.0 ** (-j)


def mac_rate(T: Any, *, tau_mix: float = 1.0, T_max: int = 2, C: float = 1.0) -> np.ndarray:
    r"""``C √τ_mix log₂(T_max) / √T``: the MAC stationarity rate shape.

    Suttle et al. (2023) prove ``(1/T) Σ_{t<T} E‖∇J(θ_t)‖² = Õ(T^{-1/2})`` (plus the
    critic's approximation error) with mixing-time-free AdaGrad steps; the mixing
    time enters the constant, as ``O(√τ_mix)`` in the sharpened analysis of Patel
    et al. (2024), with logarithmic factors in ``T_max``. The abstract states no
    explicit constant, so ``C`` is a free scale; experiments check the exponent.

    Raises
    ------
    ValueError
        ``T`` with an entry below 1, not finite or an integer beyond the float range (its
        index and value named); ``tau_mix`` not a finite number ``≥ 1``; ``T_max`` not an
        integer ``≥ 2``; ``C`` not a finite number ``≥ 0``.
    TypeError
        ``T`` does not hold real numbers (bools, strings, complex).

    Examples
    --------
    >>> mac_rate([1, 4], tau_mix=4.0, T_max=4, C=0.5).tolist()
    [2.0, 1.0]
    """
    # T through _times: an integer beyond the float range raised a bare OverflowError; bools
    # ([True, 4] too), strings and complex numbers are a located TypeError
    t = _times(T, "T")
    tau = _real_scalar(tau_mix)
    if not tau >= 1:
        raise ValueError(f"tau_mix must be >= 1; got {tau_mix!r}")
    if not math.isfinite(tau):  # tau_mix = inf gave inf, and NaN (0·inf) with C = 0
        raise ValueError(f"tau_mix must be a finite number >= 1; got {tau_mix!r}")
    T_max = _count(T_max, "T_max", 2)
    c = _real_scalar(C)
    if not (math.isfinite(c) and c >= 0):
        raise ValueError(f"C must be a finite number >= 0; got {C!r}")
    return c * math.sqrt(tau) * math.log2(T_max) * t**MAC_EXPONENT
