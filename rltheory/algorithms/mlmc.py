r"""Multi-level Monte Carlo (MLMC) estimation from one Markovian trajectory.

Draw a level ``J ~ Geom(1/2)`` on ``{1, 2, ...}`` (:func:`mlmc_level`), roll ``2^J``
consecutive samples ``x_0, x_1, ...`` of a Markov chain (one if ``2^J > T_max``) and
combine them (:func:`mlmc_combine`) as

    X^{MLMC} = x_0 + 2^J (X^{(J)} − X^{(J−1)})   if 2^J ≤ T_max,   else x_0,

with ``X^{(j)}`` the mean of the first ``2^j`` samples. The levels telescope:
``E[X^{MLMC}] = E[X^{(j_max)}]``, ``j_max = ⌊log₂ T_max⌋`` (exact integer arithmetic,
``T_max.bit_length() − 1``), so the estimator has the bias of a ``2^{j_max}``-sample
Markovian average at an expected cost of only ``j_max + 2^{−j_max}`` samples
(:func:`rltheory.bounds.average_reward.mlmc_expected_samples`). :func:`mlmc_expectation`
computes both expectations exactly from the chain, for tests and the mac-mixing experiment.

References
----------
Dorfman, R., Levy, K. Y. (2022). Adapting to mixing time in stochastic optimization with
Markovian data. ICML. Lemma 3.1 (MLMC bias and cost).
Suttle, W. A., Bedi, A. S., Patel, B., Sadler, B. M., Koppel, A., Manocha, D. (2023).
Beyond exponentially fast mixing in average-reward RL via multi-level Monte Carlo
actor-critic. ICML. Eq. (8), Algorithm 1.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._validate import check_finite, check_probability
from ..mdp.sample import _count
from ._average_reward_base import _prob_atol, _real_array

__all__ = ["mlmc_level", "mlmc_combine", "mlmc_expectation"]


def mlmc_level(rng: np.random.Generator) -> int:
    """``J ~ Geom(1/2)`` on ``{1, 2, ...}``: ``P(J = j) = 2^{-j}``, one draw per call.

    Parameters
    ----------
    rng : numpy.random.Generator
        Advanced by the draw; pass the same Generator to every call. Unlike the library's
        samplers that draw a whole sample per call (``sample_transitions``, ``rollout``), this one
        refuses an int seed: a seed makes a fresh Generator on every call, so a loop of
        ``mlmc_level(0)`` returned the same level (2) forever instead of a Geom(1/2) sequence.

    Raises
    ------
    TypeError
        ``rng`` is not a ``numpy.random.Generator`` (an int seed, ``None``, a bool, ...); the message
        says to build one with ``numpy.random.default_rng(seed)`` once and reuse it.

    Examples
    --------
    >>> import numpy as np
    >>> gen = np.random.default_rng(0)
    >>> [mlmc_level(gen) for _ in range(6)]
    [2, 1, 1, 1, 3, 4]
    """
    if not isinstance(rng, np.random.Generator):
        is_seed = isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)
        seed = "an int seed would re-seed on every call and draw the same level each time; "
        raise TypeError(
            "mlmc_level draws one level per call and needs a numpy.random.Generator, advanced by "
            f"each draw ({seed if is_seed else ''}create one with numpy.random.default_rng(seed) "
            f"and reuse it); got {repr(rng) if is_seed or rng is None else type(rng).__name__}"
        )
    return int(rng.geometric(0.5))


def mlmc_combine(x: Any, J: int, T_max: int) -> np.ndarray:
    r"""Multi-level Monte Carlo combination of consecutive per-sample quantities.

    ``X^{MLMC} = x_0 + 2^J (mean(x_{<2^J}) − mean(x_{<2^{J−1}}))`` if ``2^J ≤ T_max``
    else ``x_0`` (Dorfman & Levy 2022; Suttle et al. 2023, eq. (8)). With
    ``J ~ Geom(1/2)``, ``E[X^{MLMC}] = E[mean(x_{<2^{j_max}})]``, ``j_max = ⌊log₂ T_max⌋``
    (the levels telescope), while the expected number of samples is only
    ``O(log T_max)`` (at most ``j_max + 1``).

    Parameters
    ----------
    x : array, shape (N, ...)
        Per-sample quantities ``x_0, x_1, ...``; needs ``N ≥ 2^J`` when ``2^J ≤ T_max``.
    J : int ≥ 1
    T_max : int ≥ 1

    Raises
    ------
    ValueError
        ``J`` or ``T_max`` not an integer ``≥ 1``; ``x`` without a sample axis (``N ≥ 1``)
        or with fewer than ``2^J`` samples when ``2^J ≤ T_max``; a NaN or infinite entry of
        ``x`` (``InvalidModelError``, naming its index ``(k=.., i1=..)`` and value).

    Examples
    --------
    >>> import numpy as np
    >>> float(mlmc_combine(np.array([1.0, 3.0, 5.0, 7.0]), 2, 8))   # 1 + 4 (4 - 2)
    9.0
    >>> float(mlmc_combine(np.array([1.0, 3.0, 5.0, 7.0]), 2, 3))   # 2^J > T_max
    1.0
    """
    J = _count(J, "J")
    T_max = _count(T_max, "T_max")
    x = _real_array(x, "x")
    if x.ndim == 0 or x.shape[0] == 0:
        raise ValueError(f"x must have shape (N, ...) with N >= 1 samples; got {x.shape}")
    if J < T_max.bit_length() and x.shape[0] < 2**J:  # 2^J <= T_max
        raise ValueError(f"mlmc_combine needs at least 2^J = {2**J} samples; got {x.shape[0]}")
    check_finite(x, "x", _axis_names("k", x.ndim))
    return _mlmc_combine(x, J, T_max)


def _mlmc_top_level(T_max: int) -> int:
    """``j_max = ⌊log₂ T_max⌋`` for an integer ``T_max ≥ 1``, in exact integer arithmetic.

    ``math.floor(math.log2(T_max))`` is one too many for ``T_max = 2^k − 1``, ``k ≥ 49``:
    ``log₂(2^k − 1)`` rounds up to ``k`` in double precision. Numpy integers are read through
    ``operator.index`` (they have no ``bit_length``).
    """
    return operator.index(T_max).bit_length() - 1


def _mlmc_combine(x: np.ndarray, J: int, T_max: int) -> np.ndarray:
    """:func:`mlmc_combine` on validated host samples (MAC's inner loop)."""
    # 2^J > T_max  <=>  J >= bit_length(T_max): forming 2**J for a large level (J = 1e9: 15 s and a
    # 125 MB integer; J = 1e12 never returned) only to compare it with T_max
    if J >= T_max.bit_length():
        return x[0]
    return x[0] + 2**J * (x[: 2**J].mean(axis=0) - x[: 2 ** (J - 1)].mean(axis=0))


def _axis_names(first: str, ndim: int) -> tuple[str, ...]:
    """Axis names for located messages: ``first`` then ``i1, i2, ...`` for trailing axes."""
    return (first,) + tuple(f"i{j}" for j in range(1, ndim))


def mlmc_expectation(P_pi: Any, nu: Any, fbar: Any, T_max: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact expectations of the MLMC estimator and of the truncated average.

    For a chain ``P_π`` started from ``s_0 ~ ν`` and per-sample quantities whose
    conditional mean given ``s_k = s`` is ``f̄(s)``, ``E[x_k] = νᵀ P_π^k f̄``. Returns

    * ``E[X^{MLMC}] = Σ_{j ≤ j_max} 2^{-j} (E x_0 + 2^j (E X^{(j)} − E X^{(j−1)})) + 2^{-j_max} E x_0``,
    * ``E[X^{(j_max)}] = 2^{-j_max} Σ_{k < 2^{j_max}} νᵀ P_π^k f̄``,

    computed by enumerating the levels (no sampling; the means up to ``j_max = 16`` by
    enumerating the ``2^{j_max}`` terms ``νᵀ P_π^k f̄``, beyond by doubling ``P_π^{2^j}``, so
    ``T_max = 2^40`` costs 40 matrix squarings). They are equal
    (telescoping); the test-suite checks both this identity and a Monte Carlo
    average of :func:`mlmc_combine` against them.

    Parameters
    ----------
    P_pi : array (S, S)
    nu : array (S,)
        Rows (and ``nu``) must sum to 1 within ``1e-8`` or ``16·eps`` of their own float dtype,
        whichever is coarser (float32: ``1.9e-6``; such rows are then divided by their sums).
    fbar : array (S, ...)
    T_max : int ≥ 1

    Raises
    ------
    ValueError
        ``T_max`` not an integer ``≥ 1``; ``P_pi`` not square with ``S ≥ 1``, ``nu`` not of
        shape ``(S,)`` or ``fbar`` not of shape ``(S, ...)``; a NaN or infinite entry
        (``InvalidModelError``, naming the argument, the index and the value); a row of ``P_pi``
        or ``nu`` that is not a probability vector (``InvalidModelError``, naming the worst row).
    TypeError
        An argument that does not hold real numbers (strings, complex; bools only in ``P_pi``, ``nu``).
    """
    T_max = _count(T_max, "T_max")
    Pp = _real_array(P_pi, "P_pi", bools=True)
    v = _real_array(nu, "nu", bools=True)
    f = _real_array(fbar, "fbar")
    if Pp.ndim != 2 or Pp.shape[0] != Pp.shape[1] or Pp.shape[0] == 0:
        raise ValueError(f"P_pi must have shape (S, S) with S >= 1; got {Pp.shape}")
    S = Pp.shape[0]
    if v.shape != (S,):
        raise ValueError(f"nu must have shape (S,) = ({S},); got {v.shape}")
    if f.ndim == 0 or f.shape[0] != S:
        raise ValueError(f"fbar must have shape (S, ...) = ({S}, ...); got {f.shape}")
    # a non-stochastic P_pi or nu gave numbers that are no expectation of any chain
    # each at the tolerance of the dtype it was given in (float32 rows were refused at 1e-8), and
    # rows accepted at a coarser tolerance renormalised (float64 inputs are used as they are)
    atol_P, atol_nu = _prob_atol(P_pi), _prob_atol(nu)
    check_probability(Pp, "P_pi", ("s", "s'"), "P_pi[s, :]", atol=atol_P)
    check_probability(v, "nu", ("s",), "nu", atol=atol_nu)
    if atol_P > 1e-8:
        Pp = Pp / Pp.sum(axis=1, keepdims=True)
    if atol_nu > 1e-8:
        v = v / v.sum()
    check_finite(f, "fbar", _axis_names("s", f.ndim))
    jmax = _mlmc_top_level(T_max)
    means = _level_means(Pp, v, f, jmax)
    x0 = means[0]
    E = (0.5**jmax) * x0  # P(J > jmax) = 2^{-jmax}
    for j in range(1, jmax + 1):
        E = E + 0.5**j * (x0 + 2**j * (means[j] - means[j - 1]))
    return E, means[jmax]


#: Largest top level whose means :func:`mlmc_expectation` forms by enumerating ``νᵀ P^k f̄``.
_ENUMERATE_LEVELS = 16


def _level_means(Pp: np.ndarray, v: np.ndarray, f: np.ndarray, jmax: int) -> list[np.ndarray]:
    r"""``E X^{(j)} = 2^{-j} Σ_{k<2^j} νᵀ P^k f̄`` for ``j = 0..j_max``.

    Up to ``j_max = 16`` by enumerating the ``2^{j_max}`` terms; beyond, by doubling:
    ``z_{j+1} = (z_j + P^{2^j} z_j)/2`` with ``z_j = 2^{-j} Σ_{k<2^j} P^k f̄`` and
    ``P^{2^{j+1}} = (P^{2^j})²`` (rows renormalised to sum to 1), ``O(j_max S³)`` work. Enumeration took 9 s at ``T_max = 2^20``, and at ``T_max = 2^40``
    tried to allocate ``2^40`` expectations (``MemoryError``).
    """
    if jmax <= _ENUMERATE_LEVELS:
        N = 2**jmax
        Ex = np.empty((N,) + f.shape[1:])
        for k in range(N):
            Ex[k] = np.tensordot(v, f, axes=(0, 0))
            v = v @ Pp
        return [Ex[: 2**j].mean(axis=0) for j in range(jmax + 1)]
    z, Q = f.copy(), Pp / Pp.sum(axis=1, keepdims=True)
    # ([()]: a numpy scalar for a vector fbar, as the enumeration's means; a 0-d array before)
    means = [np.tensordot(v, z, axes=(0, 0))[()]]
    for _ in range(jmax):
        z = 0.5 * (z + np.tensordot(Q, z, axes=(1, 0)))  # z_j = 2^{-j} y_j (no overflow)
        Q = Q @ Q
        # squaring doubles a row-sum error 1 + ε → 1 + 2ε: renormalised, or 40 squarings turned
        # ε = 1e-16 into 1e-4
        Q = Q / Q.sum(axis=1, keepdims=True)
        means.append(np.tensordot(v, z, axes=(0, 0))[()])
    return means
