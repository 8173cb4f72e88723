r"""Offline-RL guarantees as code: confidence radii, pessimism bounds, coverage rates.

Every pessimistic method in :mod:`rltheory.algorithms.offline` and
:mod:`rltheory.algorithms.offline_games` rests on one *event*: the bonus
``Γ_h(s, a)`` dominates the estimation error of the Bellman backup,

    ``E = { |(B̂_h V̂_{h+1})(s, a) − (B_h V̂_{h+1})(s, a)| ≤ Γ_h(s, a)  for all h, s, a }``

with ``B_h V = r_h + P_h V`` and ``B̂_h`` its estimate. On ``E`` (Jin, Yang & Wang
2021, Thm 4.2; stated for any "ξ-uncertainty quantifier"):

1. **lower bound**: the pessimistic values satisfy ``V̂_h ≤ V^{π̂}_h`` pointwise;
2. **suboptimality**: ``V*_0(s) − V^{π̂}_0(s) ≤ 2 Σ_h E_{π*}[Γ_h(s_h, a_h) | s_0 = s]``
   (:func:`pessimism_suboptimality_bound`, computable from the data's ``Γ`` and
   the exact ``d^{π*}``).

The radii implemented here make ``Pr(E) ≥ 1 − δ`` exactly (no hidden constants):

* Hoeffding (:func:`hoeffding_radius`): targets ``y = r + V̂_{h+1}(s') ∈ [0, B]``,
  ``|ȳ − E y| ≤ B √(ln(2/δ')/(2n))``; union over ``(h, s, a)``: ``δ' = δ/(HSA)``.
* empirical Bernstein (:func:`empirical_bernstein_radius`; Maurer & Pontil 2009,
  Thm 4, both tails): ``|ȳ − E y| ≤ √(2 V_n ln(4/δ')/n) + 7 B ln(4/δ')/(3(n − 1))``
  with the unbiased sample variance ``V_n``.

They need ``y`` i.i.d. given the visited pairs with ``V̂_{h+1}`` independent of the
step-``h`` samples; the LCB methods guarantee this by *sample splitting* (episode
``k`` feeds step ``k mod H`` only).

Rates in the coverage coefficients (state the exact form used):

* **LCB-VI, Hoeffding bonus, split data** (:func:`lcb_vi_rate`): on ``E`` and the
  count event ``n_h(s,a) ≥ K_h ρ_h(s,a)/2`` on the support of ``d^{π*}``,
  ``SubOpt ≤ 2 Σ_h (H−h) Σ_{s,a} d*_h √(ln(2HSA/δ)/(K_h ρ_h))
  ≤ H(H+1) √(S C* ln(2HSA/δ)/K_h)`` with ``K_h = ⌊K/H⌋`` for a deterministic ``π*``
  (Cauchy–Schwarz over the ``≤ S`` pairs each ``d*_h`` charges; ``S A`` for a stochastic
  comparator, ``lcb_vi_rate(..., support=S*A)``), i.e.
  ``Õ(√(C* S H^5 / K))`` — the finite-horizon analogue of Rashidinejad et al.
  (2021)'s ``Õ(√(S C*/((1−γ)^5 N)))`` for VI-LCB, and ``√H`` above the Bernstein
  rate ``Õ(√(H^4 S C*/K))`` of Xie et al. (2021) because of the split and Hoeffding.
  The count event holds with probability ``≥ 1 − δ`` once
  ``K_h ρ_h(s,a) ≥ 8 ln(HSA/δ)`` on that support (multiplicative Chernoff).
* **PEVI** (:func:`pevi_bound`, :func:`pevi_beta`): ``Γ = β ‖φ‖_{Λ_h^{-1}}``,
  ``β = c d H √ζ``, ``ζ = ln(2dHK/ξ)`` (Jin, Yang & Wang 2021, Thm 4.4; ``c`` is an
  absolute constant the paper does not give numerically — we default to ``c = 1``),
  ``SubOpt ≤ 2β Σ_h E_{π*}[‖φ(s_h, a_h)‖_{Λ_h^{-1}}]``.
* **Offline games** (:func:`offline_game_gap_rate`): the gap relaxation
  ``Ĝ(π) = Σ_i [V̄_i^{†, π_{−i}} − V̲_i^{π}] ≥ NashConv(π)`` on ``E``; minimised over a
  candidate set containing the Nash equilibrium ``π*`` it gives
  ``NashConv(π̂) ≤ Ĝ(π*) ≤ 2 Σ_i Σ_h (H−h)[√(S A_{−i} C_uni ι/K_h) + √(S_* C* ι/K_h)]``
  (unilateral concentrability ``C_uni``; Cui & Du 2022; Zhang, Bai & Jiang 2023, Thm 1
  in tabular form).

References
----------
Jin, Y., Yang, Z., Wang, Z. (2021). Is pessimism provably efficient for offline RL?
ICML, Thm 4.2 (general MDP) and Thm 4.4 (linear MDP).
Rashidinejad, P., Zhu, B., Ma, C., Jiao, J., Russell, S. (2021). Bridging offline RL
and imitation learning: a tale of pessimism. NeurIPS 34 (VI-LCB).
Xie, T., Jiang, N., Wang, H., Xiong, C., Bai, Y. (2021). Policy finetuning: bridging
sample-efficient offline and online RL. NeurIPS 34 (VI-LCB with Bernstein bonus, episodic).
Maurer, A., Pontil, M. (2009). Empirical Bernstein bounds and sample variance
penalization. COLT, Thm 4.
Cui, Q., Du, S. S. (2022). When are offline two-player zero-sum Markov games solvable? NeurIPS 35.
Zhang, Y., Bai, Y., Jiang, N. (2023). Offline learning in Markov games with general
function approximation. ICML.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_finite, check_occupancy, real_scalar
from ..backend import to_numpy
from ._offline_args import _exp_log, _pos, _prob, _real  # noqa: F401 (_exp_log re-exported)

# the rates and the hybrid NPG bound live in .offline_rates; re-exported here
from .offline_rates import hybrid_npg_bound, lcb_vi_rate, offline_game_gap_rate

__all__ = [
    "hoeffding_radius",
    "empirical_bernstein_radius",
    "pessimism_suboptimality_bound",
    "elliptical_bonus",
    "pevi_beta",
    "pevi_bound",
    "lcb_vi_rate",
    "offline_game_gap_rate",
    "hybrid_npg_bound",
]


def _located(x: np.ndarray, bad: np.ndarray, name: str, rule: str) -> None:
    if np.any(bad):
        i = tuple(int(j) for j in np.argwhere(bad)[0]) if x.ndim else ()
        where = f"{name}{list(i)}" if x.ndim else name
        raise ValueError(f"{name} must be {rule}; {where} = {x[i].item()!r}")


def _counts_and_range(n: Any, value_range: Any) -> tuple[np.ndarray, np.ndarray]:
    """Counts ``n ≥ 0`` (not NaN; ``inf`` allowed) and a finite range ``B ≥ 0``, as float arrays."""
    n = _real(n, "n")
    B = _real(value_range, "value_range")
    _located(n, ~(n >= 0), "n", "a count >= 0")  # ~(>=): NaN is bad
    _located(B, ~np.isfinite(B) | (B < 0), "value_range", "finite and >= 0")
    _broadcast(n=n, value_range=B)
    return n, B


def _broadcast(**arrays: np.ndarray) -> tuple[int, ...]:
    """The common shape of the named arrays; a ``ValueError`` naming each shape otherwise (numpy's
    'operands could not be broadcast together' named no argument)."""
    try:
        return np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        got = ", ".join(f"{k} {a.shape}" for k, a in arrays.items())
        raise ValueError(f"{', '.join(arrays)} must broadcast together; got shapes {got}") from None


def hoeffding_radius(n: Any, value_range: Any, delta: float) -> np.ndarray:
    r"""Two-sided Hoeffding radius ``B √(ln(2/δ)/(2n))`` for the mean of ``n`` i.i.d. values in ``[0, B]``.

    ``Pr(|ȳ_n − E y| > radius) ≤ δ`` (Hoeffding 1963, Thm 2). Entries with
    ``n = 0`` get ``B`` (the trivial radius). ``n`` and ``value_range`` broadcast.

    Examples
    --------
    >>> float(hoeffding_radius(2, 1.0, 2 * np.exp(-4.0)))
    1.0
    """
    d = _prob(delta)
    n, B = _counts_and_range(n, value_range)
    return _hoeffding(n, B, math.log(2.0) - math.log(d))


def _hoeffding(n: np.ndarray, B: np.ndarray, L: float) -> np.ndarray:
    """``min(B √(L/(2n)), B)`` (``B`` where ``n = 0``) for ``L = ln(2/δ)`` given in log form.

    Callers pass ``L = ln 2 − ln δ`` (``ln(2HSA) − ln δ`` for a union bound): ``2/δ`` overflows
    for a subnormal ``δ`` and ``δ/(HSA)`` underflows to 0, while ``L`` stays finite (≤ 746).
    """
    # n itself where n > 0: max(n, 1) made a fractional count 0 < n < 1 take the smaller radius of n = 1.
    # B √min(x, 1) = min(B √x, B); x = inf (a subnormal n) gives B, not B·inf (NaN for B = 0)
    with np.errstate(over="ignore"):
        r = B * np.sqrt(np.minimum(L / (2.0 * np.where(n > 0, n, 1.0)), 1.0))
    return np.where(n > 0, r, B)


def empirical_bernstein_radius(n: Any, variance: Any, value_range: Any, delta: float) -> np.ndarray:
    r"""Two-sided empirical-Bernstein radius ``√(2 V_n ln(4/δ)/n) + 7 B ln(4/δ)/(3(n − 1))``.

    For ``n ≥ 2`` i.i.d. values in ``[0, B]`` with unbiased sample variance ``V_n``,
    ``Pr(|ȳ_n − E y| > radius) ≤ δ`` (Maurer & Pontil 2009, Thm 4, applied to ``y``
    and ``B − y`` with ``δ/2`` each). Entries with ``n < 2`` get ``B``; the radius
    is capped at ``B``. ``variance`` must be finite and ``≥ 0`` where ``n ≥ 2``
    (``ValueError`` naming the entry otherwise).

    Examples
    --------
    >>> r = empirical_bernstein_radius(np.array([1, 10**6]), np.array([0.0, 0.0]), 1.0, 0.1)
    >>> float(r[0]), bool(r[1] < 1e-4)
    (1.0, True)
    """
    d = _prob(delta)
    n, B = _counts_and_range(n, value_range)
    v = _real(variance, "variance")
    shape = _broadcast(n=n, variance=v, value_range=B)
    vb = np.broadcast_to(v, shape)
    _located(
        vb,
        ~np.isfinite(vb) & np.broadcast_to(n >= 2, shape),
        "variance",
        "finite where n >= 2 (n < 2 gets B)",
    )
    # a sample variance is >= 0; a negative one was clipped to 0, silently shrinking the radius
    _located(
        vb,
        (vb < 0) & np.broadcast_to(n >= 2, shape),
        "variance",
        "a sample variance >= 0 where n >= 2",
    )
    return _bernstein(n, v, B, math.log(4.0) - math.log(d))


def _bernstein(n: np.ndarray, v: np.ndarray, B: np.ndarray, L: float) -> np.ndarray:
    """The empirical-Bernstein radius for ``L = ln(4/δ)`` given in log form (see :func:`_hoeffding`)."""
    v = np.maximum(v, 0.0)  # a sample variance rounded below 0
    m = np.maximum(n, 2.0)
    r = np.sqrt(2.0 * v * L / m) + 7.0 * B * L / (3.0 * (m - 1.0))
    return np.where(n >= 2, np.minimum(r, B), B)


def pessimism_suboptimality_bound(d_star: Any, bonus: Any) -> float:
    r"""``2 Σ_h Σ_{s,a} d^{π*}_h(s, a) Γ_h(s, a)`` — the data-dependent suboptimality bound of pessimism.

    Jin, Yang & Wang (2021), Thm 4.2: if ``Γ`` dominates the Bellman-backup
    estimation error (event ``E``) then ``V*_0(μ) − V^{π̂}_0(μ) ≤ 2 Σ_h E_{π*}[Γ_h]``,
    where ``d^{π*}`` is the occupancy of ``π*`` from ``μ``. Holds for LCB-VI (``Γ``
    = count bonus) and PEVI (``Γ = β‖φ‖_{Λ^{-1}}``) alike, for any coverage.

    Parameters
    ----------
    d_star : array (H, S, A)
        Occupancy of the comparator policy (:func:`rltheory.bounds.coverage.finite_horizon_occupancy`).
    bonus : array (H, S, A)
        The method's ``Γ`` (result ``.bonus``), ``Γ_h(s, a) ≥ H − h`` on unvisited pairs.

    Raises
    ------
    ValueError
        Shapes differ, a negative or non-finite entry (located), or a ``d_star`` whose
        step slices ``d_star[h]`` do not each sum to 1.

    Examples
    --------
    >>> pessimism_suboptimality_bound(np.array([[[1.0, 0.0]]]), np.array([[[0.1, 5.0]]]))
    0.2
    """
    # its step sums are checked in its own dtype, below
    d = _real(d_star, "d_star", keep_dtype=True)
    b = _real(bonus, "bonus")
    if d.shape != b.shape:
        raise ValueError(f"d_star has shape {d.shape} but bonus has shape {b.shape}")
    for name, x in (("d_star", d), ("bonus", b)):
        bad = ~np.isfinite(x) | (x < 0)  # NaN fails both comparisons: test finiteness explicitly
        if np.any(bad):
            i = tuple(int(j) for j in np.argwhere(bad)[0])
            raise ValueError(
                f"{name} must be finite and non-negative; {name}{list(i)} = {x[i].item()!r}"
            )
    # in d_star's dtype: a float32 occupancy normalised in float32 (step sum 1 + 6.7e-8) was refused at
    # float64's tolerance after the cast
    check_occupancy(d, "d_star")
    return float(2.0 * np.sum(d.astype(np.float64) * b))


def elliptical_bonus(features: Any, Lambda: Any, beta: float) -> np.ndarray:
    r"""``Γ_h(s, a) = β (φ(s, a)ᵀ Λ_h^{-1} φ(s, a))^{1/2}`` for ``φ[S, A, d]`` (or ``[H, S, A, d]``) and ``Λ[H, d, d]``.

    ``features`` and ``Lambda`` must be finite (``ValueError`` naming the argument and
    the offending entry otherwise), each ``Lambda[h]`` symmetric (to ``√eps`` of its dtype,
    relative) and positive definite; per-step features must have ``Lambda``'s ``H``.

    Examples
    --------
    >>> elliptical_bonus(np.eye(2).reshape(1, 2, 2), 4.0 * np.eye(2)[None], 2.0).tolist()
    [[[1.0, 1.0]]]
    """
    # one-hot features as a boolean array are numbers 0/1
    phi = _real(features, "features", allow_bool=True)
    L = _real(Lambda, "Lambda")
    # real_scalar is NaN for a bool: beta=False was read as 0 and gave zero bonuses
    b = 0.0 if real_scalar(beta) == 0 else _pos(beta, "beta")
    # d = 0: IndexError in eigvalsh
    if phi.ndim not in (3, 4) or 0 in phi.shape[-3:-1] or phi.shape[-1] == 0:
        raise ValueError(
            f"features must have shape (S, A, d) or (H, S, A, d) with S, A, d >= 1; got {phi.shape}"
        )
    check_finite(phi, "features", ("s", "a", "j"))
    if L.ndim != 3 or L.shape[1] != L.shape[2] or L.shape[-1] != phi.shape[-1]:
        raise ValueError(
            f"Lambda must be (H, d, d) with d = features.shape[-1] = {phi.shape[-1]}; got {L.shape}"
        )
    if L.shape[0] == 0:
        raise ValueError(f"Lambda must have at least one step (H >= 1); got {L.shape}")
    # else uninitialised rows (more φ steps) or IndexError
    if phi.ndim == 4 and phi.shape[0] != L.shape[0]:
        raise ValueError(
            f"per-step features (H, S, A, d) must have Lambda's H = {L.shape[0]} steps; got features of shape {phi.shape}"
        )
    check_finite(L, "Lambda", ("h", "i", "j"))
    # Λ_h = Σ φφᵀ + λI is symmetric: [[1, 5], [-5, 1]] (positive definite symmetric part) gave the
    # bonus β/√26 for β; round-off of a sum of outer products is far below √eps of the given dtype
    Ld = np.asarray(to_numpy(Lambda)).dtype
    sym_tol = math.sqrt(float(np.finfo(Ld if Ld.kind == "f" else np.float64).eps))
    for h in range(L.shape[0]):
        asym = np.abs(L[h] - L[h].T)
        if np.max(asym) > sym_tol * np.max(np.abs(L[h])):
            i, j = (int(v) for v in np.unravel_index(np.argmax(asym), asym.shape))
            raise ValueError(
                f"Lambda[{h}] must be symmetric (Λ_h = Σ φφᵀ + λI); Lambda[{h}, {i}, {j}] = {L[h, i, j]:.6g} "
                f"but Lambda[{h}, {j}, {i}] = {L[h, j, i]:.6g}"
            )
    # Λ_h = Σ φφᵀ + λI: an indefinite Λ_h would give a 0 bonus, a singular one no solve
    for h in range(L.shape[0]):
        w_min = float(np.linalg.eigvalsh((L[h] + L[h].T) / 2)[0])
        if not w_min > 0:
            raise ValueError(
                f"Lambda[{h}] must be positive definite (Λ_h = Σ φφᵀ + λI with λ > 0); "
                f"the smallest eigenvalue of its symmetric part is {w_min:.6g}"
            )
    if phi.ndim == 3:
        phi = np.broadcast_to(phi, (L.shape[0],) + phi.shape)
    out = np.empty(phi.shape[:-1])
    for h in range(L.shape[0]):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # checked below
            X = np.linalg.solve(L[h], phi[h].reshape(-1, phi.shape[-1]).T).T
        q = np.sum(X * phi[h].reshape(-1, phi.shape[-1]), axis=-1)
        # a positive but subnormal eigenvalue: LAPACK's solve gave NaN bonuses
        if not np.all(np.isfinite(q)):
            raise ValueError(
                f"Lambda[{h}] is too ill-conditioned to invert in floating point (smallest eigenvalue "
                f"{float(np.linalg.eigvalsh((L[h] + L[h].T) / 2)[0]):.3g}); φᵀΛ_{h}⁻¹φ is not finite"
            )
        out[h] = b * np.sqrt(np.maximum(q, 0.0)).reshape(phi.shape[1:-1])
    return out


def pevi_beta(d: int, H: int, K: int, xi: float, *, c: float = 1.0) -> float:
    r"""PEVI's bonus scale ``β = c · d · H · √ζ``, ``ζ = ln(2 d H K/ξ)`` (Jin, Yang & Wang 2021, Thm 4.4).

    ``c > 0`` is the paper's unspecified absolute constant (default 1).

    Examples
    --------
    >>> round(pevi_beta(2, 3, 100, 0.1), 4)
    18.3884
    """
    for v, nm in ((d, "d"), (H, "H"), (K, "K")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{nm} must be a positive integer; got {v!r}")
    x = _prob(xi, "xi")
    cc = _pos(c, "c")
    d, H, K = int(d), int(H), int(K)  # Python ints: numpy's int64 product 2dHK wraps around
    # ln(2dHK) − ln ξ: the quotient 2dHK/ξ overflows for a subnormal ξ (β was inf at ξ = 1e-320)
    zeta = math.log(2 * d * H * K) - math.log(x)
    try:
        beta = cc * d * H * math.sqrt(zeta)
    except OverflowError:  # d H beyond the float range (a Python int)
        beta = math.inf
    # an intermediate product past the range: β in log space (inf only when β itself is)
    return (
        beta
        if math.isfinite(beta)
        else _exp_log(math.log(cc) + math.log(d * H) + 0.5 * math.log(zeta))
    )


def pevi_bound(d_star: Any, features: Any, Lambda: Any, beta: float) -> float:
    r"""``2 β Σ_h E_{π*}[(φ(s_h, a_h)ᵀ Λ_h^{-1} φ(s_h, a_h))^{1/2}]`` (Jin, Yang & Wang 2021, Thm 4.4).

    Computable from data: ``Λ_h = Σ_τ φ(s_h^τ, a_h^τ) φ(s_h^τ, a_h^τ)ᵀ + λI`` is the
    PEVI result's ``.Lambda``; ``d*`` is the comparator's exact occupancy.

    Examples
    --------
    >>> pevi_bound(np.array([[[1.0, 0.0]]]), np.eye(2).reshape(1, 2, 2), 4.0 * np.eye(2)[None], 1.0)
    1.0
    """
    return pessimism_suboptimality_bound(d_star, elliptical_bonus(features, Lambda, beta))
