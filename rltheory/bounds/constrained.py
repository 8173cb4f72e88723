r"""Bounds for constrained and networked policy optimisation, as functions with their constants.

* :func:`npg_pd_bounds` — averaged optimality gap and constraint violation of the
  natural policy gradient primal-dual method (NPG-PD, Ding et al. 2020), both
  ``O(1/√T)`` with ``η_2 ∝ 1/√T``, with every constant written out (derivation in
  its Notes, for ``m`` cost constraints and arbitrary reward/cost ranges).
* :func:`slater_dual_radius` — the dual projection radius ``Λ`` from Slater's
  condition and the bound ``‖λ*‖₁ ≤ span(r)/((1−γ)ξ)`` it rests on.
* :func:`npg_pd_step_sizes` — the step sizes of Ding et al. (2020, Thm 1).
* :func:`fosp_rate` — the ``O(T^{-2/3})`` first-order-stationarity rate of the
  primal-dual method with general utilities (Ying et al. 2023) and its
  dual-regularisation schedule :func:`fosp_schedule`.
* :func:`truncation_envelope` — the ``O(φ^{2κ})`` κ-hop truncation error
  (Ying et al. 2023; Qu, Wierman & Li 2020).

Conventions follow :class:`rltheory.mdp.constrained.ConstrainedMDP`: maximise
``V_r^π(μ)`` subject to ``V_{c_i}^π(μ) ≤ b_i`` with unnormalised discounted
values ``V = E[Σ_t γ^t r_t]``; the Lagrangian is ``V_r − Σ_i λ_i (V_{c_i} − b_i)``.

References
----------
Ding, D., Zhang, K., Başar, T., Jovanović, M. R. (2020). Natural policy gradient
primal-dual method for constrained Markov decision processes. NeurIPS. Theorem 1
(journal version: JMLR 26(256), 2025, Theorem 1).
Agarwal, A., Kakade, S., Lee, J., Mahajan, G. (2021). On the theory of policy gradient
methods. JMLR 22(98). Lemma 17 (NPG improvement), proof of Theorem 16.
Beck, A. (2017). *First-Order Methods in Optimization*. SIAM. Theorem 3.60 (duality
bound on constraint violation).
Ying, D., Zhang, Y., Ding, Y., Koppel, A., Lavaei, J. (2023). Scalable primal-dual
actor-critic method for safe multi-agent RL with general utilities. NeurIPS.
Qu, G., Wierman, A., Li, N. (2020). Scalable RL of localized policies for multi-agent
networked systems. L4DC. Lemma 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._argcheck import _count, _gamma, _nonneg, _pos, _real_scalar, _times

__all__ = [
    "NPGPDBounds",
    "npg_pd_step_sizes",
    "slater_dual_radius",
    "npg_pd_bounds",
    "FOSP_EXPONENT",
    "fosp_schedule",
    "fosp_rate",
    "truncation_envelope",
]

#: Exponent of the exact-setting FOSP rate of Ying et al. (2023): ``O(T^{-2/3})``.
FOSP_EXPONENT = -2.0 / 3.0


def _inv_root(T: int, q: int) -> float:
    """``T^{-1/q}`` for an integer ``T ≥ 1`` of any size: ``float(T)`` raises ``OverflowError`` beyond
    ``1.8e308``, so ``T = 2^k m`` with ``q | k`` and ``m < 2^{64+q}`` exact to ``2^{-64}``, and the power of
    two is applied by ``ldexp`` (exact; it underflows to 0 only where ``T^{-1/q}`` does)."""
    k = max(T.bit_length() - 64, 0) // q * q
    return math.ldexp(float(T >> k) ** (-1.0 / q), -(k // q))


def npg_pd_step_sizes(T: int, *, gamma: float, n_actions: int) -> tuple[float, float]:
    r"""Step sizes of Ding et al. (2020, Thm 1): ``η_1 = 2 log|A|``, ``η_2 = 2(1−γ)/√T``.

    ``η_1`` is the NPG step in the convention ``π' ∝ π exp(η_1 A_L/(1−γ))``
    (:func:`rltheory.algorithms.npg_step`); ``η_2`` the projected dual
    subgradient step. For ``|A| = 1`` (no choice) ``η_1 = 1``.

    Examples
    --------
    >>> npg_pd_step_sizes(100, gamma=0.5, n_actions=1)
    (1.0, 0.1)
    """
    T, n_actions = _count(T, "T"), _count(n_actions, "n_actions")
    g = _gamma(gamma)
    eta1 = 2.0 * math.log(n_actions) if n_actions > 1 else 1.0
    # math.sqrt(T) raised OverflowError for T = 10**400 (η_2 = 2(1−γ)·1e-200 is a float)
    return eta1, 2.0 * (1.0 - g) / math.sqrt(T) if T < 2**1000 else 2.0 * (1.0 - g) * _inv_root(
        T, 2
    )


def slater_dual_radius(
    *, gamma: float, slack: float, reward_span: float = 1.0
) -> tuple[float, float]:
    r"""``(Λ, bound on ‖λ*‖₁)`` from Slater's condition.

    If a policy ``π̃`` has ``b_i − V_{c_i}^{π̃}(μ) ≥ ξ > 0`` for every ``i``, strong
    duality gives ``V_r* ≥ V_r^{π̃} + ξ‖λ*‖₁``, so ``‖λ*‖₁ ≤ span(r)/((1−γ)ξ)``
    (Paternain et al. 2019; Ding et al. 2020, Lemma 3). Projecting the dual on
    ``[0, Λ]^m`` with ``Λ = 2 span(r)/((1−γ)ξ)`` keeps ``λ*`` inside with the
    margin ``Λ − ‖λ*‖₁ ≥ Λ/2`` used by :func:`npg_pd_bounds`.

    Examples
    --------
    >>> slater_dual_radius(gamma=0.5, slack=1.0)
    (4.0, 2.0)
    """
    g = _gamma(gamma)
    xi = _pos(slack, "slack")
    span = _pos(reward_span, "reward_span", allow_zero=True)
    lam_max = span / ((1.0 - g) * xi)
    return 2.0 * lam_max, lam_max


@dataclass(frozen=True)
class NPGPDBounds:
    """Bounds of :func:`npg_pd_bounds` at each ``t``: ``gap`` and ``violation`` (arrays)."""

    gap: np.ndarray
    violation: np.ndarray


def npg_pd_bounds(
    t: Any,
    *,
    gamma: float,
    eta1: float,
    eta2: float,
    Lambda: float,
    cost_deviation: Any,
    n_actions: int | None = None,
    kl0: float | None = None,
    reward_span: float = 1.0,
    cost_span: Any = 1.0,
    lam_star_l1: float | None = None,
) -> NPGPDBounds:
    r"""Averaged optimality gap and constraint violation bounds of exact NPG-PD after ``t`` steps.

    With ``π_0`` uniform, ``λ_0 = 0``, NPG step ``η_1`` on the Lagrangian reward
    ``r − λ_t·c`` and dual step ``λ_{t+1} = Π_{[0,Λ]^m}(λ_t + η_2 (V_c^{π_t}(μ) − b))``:

    ``(1/t) Σ_{k<t} (V_r*(μ) − V_r^{π_k}(μ)) ≤ D_0/(η_1 t) + span(r)/((1−γ)² t)
    + η_2 ‖G‖₁ span(c)/(1−γ)² + η_2 ‖G‖₂²/2``,

    ``max_i [(1/t) Σ_{k<t} V_{c_i}^{π_k}(μ) − b_i]_+ ≤ (P_t + Λ²/(2η_2 t) + η_2 ‖G‖₂²/2) / (Λ − ‖λ*‖₁)``,

    where ``P_t = D_0/(η_1 t) + span(r)/((1−γ)² t) + η_2 ‖G‖₁ span(c)/(1−γ)²``,
    ``D_0 = log|A|`` (uniform ``π_0``), ``G_i ≥ max_π |V_{c_i}^π(μ) − b_i|`` and
    ``span(c) = max_i (max c_i − min c_i)``. The averages are the values of the
    policy whose occupancy is the average occupancy of ``π_0..π_{t−1}``.

    Parameters
    ----------
    t : array_like of int ≥ 1
        Number of iterates averaged.
    gamma : float in [0, 1)
    eta1, eta2 : float > 0
        Primal (NPG) and dual steps (fixed over the run).
    Lambda : float > 0
        Dual box radius; must exceed ``‖λ*‖₁`` (Slater: :func:`slater_dual_radius`).
    cost_deviation : float or array (m,)
        ``G_i``, e.g. ``max(b_i − min c_i/(1−γ), max c_i/(1−γ) − b_i)``.
    n_actions, kl0 : int / float
        ``D_0 = log|A|`` or a given ``KL`` (one of them).
    reward_span : float
        ``max r − min r``.
    cost_span : float or array (m,)
        ``max c_i − min c_i``.
    lam_star_l1 : float, optional
        ``‖λ*‖₁`` (default: ``Λ/2``, its Slater bound when ``Λ`` comes from
        :func:`slater_dual_radius`).

    Returns
    -------
    NPGPDBounds

    Notes
    -----
    Ding et al. (2020, Thm 1) prove both rates ``O(1/√T)`` for rewards and
    utilities in ``[0, 1]`` with ``η_1 = 2 log|A|``, ``η_2 = 2(1−γ)/√T`` and
    ``Λ = 2/((1−γ)ξ)`` (gap ``∝ 1/((1−γ)²√T)`` free of ``ξ``). The constants here
    are re-derived along their argument for ``m`` constraints and general ranges:

    1. *Primal* (Agarwal et al. 2021, proof of Thm 16, with reward ``r − λ_k·c``):
       ``V_{λ_k}^*(μ) − V_{λ_k}^{π_k}(μ) ≤ (D_k − D_{k+1})/η_1 + (V_{λ_k}^{k+1} − V_{λ_k}^k)(d*)/(1−γ)``
       with ``D_k = E_{d*} KL(π*‖π_k)`` and the improvement ``V_{λ_k}^{k+1} ≥ V_{λ_k}^k``
       (Lemma 17). Summing, the improvements telescope up to
       ``Σ_k (λ_{k+1}−λ_k)·(V_c^{k+1}(d*) − min c/(1−γ)) ≤ Σ_k ‖λ_{k+1}−λ_k‖₁ span(c)/(1−γ)``
       and ``‖λ_{k+1} − λ_k‖₁ ≤ η_2‖G‖₁``; ``−λ_k·(V_c^* − b) ≥ 0`` by feasibility of ``π*``.
       So ``Σ_k (V_r^* − V_r^k) + Σ_k λ_k·(V_c^k − b) ≤ t P_t``.
    2. *Dual*: for any ``λ ∈ [0,Λ]^m``, ``‖λ_{k+1} − λ‖² ≤ ‖λ_k − λ‖² + 2η_2(λ_k − λ)·(V_c^k − b) + η_2²‖G‖₂²``,
       hence ``Σ_k (λ − λ_k)·(V_c^k − b) ≤ ‖λ‖²/(2η_2) + tη_2‖G‖₂²/2``.
    3. ``λ = 0`` gives the gap bound. For the violation take ``λ = Λ e_i`` at the most
       violated ``i`` and use ``V_r^* − V̄_r ≥ −λ*·(V̄_c − b) ≥ −‖λ*‖₁ [V̄_{c_i} − b_i]_+``
       (strong duality for the average-occupancy policy; Beck 2017, Thm 3.60).

    With ``η_2 ∝ 1/√t`` both bounds are ``O(1/√t)``.

    Examples
    --------
    >>> b = npg_pd_bounds(100, gamma=0.5, eta1=1.0, eta2=0.1, Lambda=4.0, cost_deviation=2.0, n_actions=1)
    >>> round(float(b.gap), 6), round(float(b.violation), 6)
    (1.04, 0.92)
    """
    t = _times(t)
    g = _gamma(gamma)
    e1 = _pos(eta1, "eta1")
    e2 = _pos(eta2, "eta2")
    Lam = _pos(Lambda, "Lambda")
    G = np.atleast_1d(_nonneg(cost_deviation, "cost_deviation"))
    if G.ndim != 1:
        raise ValueError(
            f"cost_deviation must be a scalar or a vector (one entry per constraint); got shape {G.shape}"
        )
    if G.size == 0:  # numpy's "zero-size array to reduction operation maximum" from G.max()
        raise ValueError(
            "cost_deviation must have one entry per constraint (at least one); got an empty array"
        )
    cspan = np.atleast_1d(_nonneg(cost_span, "cost_span"))
    if cspan.ndim != 1 or cspan.size not in (1, G.size):
        raise ValueError(
            f"cost_span must be a scalar or one entry per constraint ({G.size}, as cost_deviation); got shape {cspan.shape}"
        )
    rspan = _pos(reward_span, "reward_span", allow_zero=True)
    if kl0 is None:
        if (
            isinstance(n_actions, bool)
            or not isinstance(n_actions, (int, np.integer))
            or n_actions < 1
        ):
            raise ValueError(
                f"give kl0 or n_actions (an integer >= 1); got n_actions={n_actions!r}"
            )
        D0 = math.log(n_actions)
    else:
        D0 = _pos(kl0, "kl0", allow_zero=True)
    lam_star = (
        Lam / 2.0 if lam_star_l1 is None else _pos(lam_star_l1, "lam_star_l1", allow_zero=True)
    )
    if not lam_star < Lam:
        raise ValueError(f"Lambda must exceed ||lambda*||_1 = {lam_star}; got Lambda={Lam}")
    c = float(np.max(cspan))
    # ‖G‖₁ and ‖G‖₂² as Gmax·Σu and Gmax²·Σu² (u = G/Gmax ≤ 1), each multiplied into η_2 first, and
    # Λ²/(2η_2 t(Λ − ‖λ*‖₁)) as (Λ/(2η_2 t))·(Λ/(Λ − ‖λ*‖₁)): finite whenever the bound is
    # (G = 1e308 with span(c) = 0 gave inf·0 = NaN, and Λ = 1e200 an OverflowError from Λ**2)
    Gmax = float(G.max())
    u = G / Gmax if Gmax > 0 else np.zeros_like(G)
    drift = 0.0 if c == 0 or Gmax == 0 else (e2 * c / (1.0 - g) ** 2) * Gmax * float(u.sum())
    quad = (e2 * Gmax / 2.0) * Gmax * float((u**2).sum())
    with np.errstate(over="ignore"):  # inf only where the bound itself exceeds the float range
        P = D0 / (e1 * t) + rspan / ((1.0 - g) ** 2 * t) + drift
        gap = P + quad
        margin = Lam - lam_star
        viol = (P + quad) / margin + (Lam / (2.0 * e2 * t)) * (Lam / margin)
    return NPGPDBounds(gap, viol)


def fosp_schedule(
    T: int, *, eta_theta: float = 1.0, eta_mu: float = 1.0, delta_scale: float = 1.0
) -> tuple[float, float, float]:
    r"""Step sizes and dual regularisation for a horizon ``T`` in the exact setting.

    Returns ``(η_θ, η_μ, δ)`` with ``δ = delta_scale·T^{-1/3}``: the dual of the
    Lagrangian is regularised by ``−(δ/2)‖μ‖²``, making the min–max problem
    strongly concave in the dual; the regularisation moves the stationary point of
    the original Lagrangian by ``O(δ)``, and balancing that bias against the
    ``O(1/(δT))`` optimisation error of the regularised problem gives the
    ``O(T^{-2/3})`` FOSP rate (Ying et al. 2023; the same trade-off as Xu et
    al. 2023 for nonconvex–concave min–max problems).

    Examples
    --------
    >>> fosp_schedule(1000)
    (1.0, 1.0, 0.1)
    """
    T = _count(T, "T")
    # float(T) raised OverflowError for T = 10**400 (δ = 1e-133·delta_scale is a float)
    root = float(T) ** (-1.0 / 3.0) if T < 2**1000 else _inv_root(T, 3)
    return (
        _pos(eta_theta, "eta_theta"),
        _pos(eta_mu, "eta_mu"),
        _pos(delta_scale, "delta_scale") * root,
    )


def fosp_rate(T: Any, *, C: float = 1.0) -> np.ndarray:
    r"""``C T^{-2/3}``: the exact-setting FOSP rate of Ying et al. (2023, abstract; exact-gradient theorem).

    The constant ``C`` depends on smoothness constants of the utilities that the
    abstract does not state; experiments fit the exponent and draw this curve
    through the first measured point.
    """
    return _pos(C, "C", allow_zero=True) * _times(T, "T") ** FOSP_EXPONENT


def truncation_envelope(kappa: Any, *, phi: float, c: float = 1.0) -> np.ndarray:
    r"""``c φ^{2κ}``: the κ-hop truncation error envelope of the squared policy gradient.

    Under the (c, φ)-exponential-decay property, the truncated Q-function errs by
    ``O(φ^{κ+1})`` (Qu et al. 2020, Lemma 3), so the truncated policy gradient's
    error is ``O(φ^κ)`` and its square ``O(φ^{2κ})`` — the ``O(φ_0^{2κ})``
    approximation error of Ying et al. (2023). On semilog axes: slope ``2 log φ``.

    Examples
    --------
    >>> truncation_envelope([0, 1, 2], phi=0.5).tolist()
    [1.0, 0.25, 0.0625]
    """
    k = _nonneg(kappa, "kappa")
    p = _real_scalar(phi)  # numpy scalars and 0-d arrays (np.array(0.5) was refused); NaN for bools
    if not 0.0 < p < 1.0:
        raise ValueError(f"phi must lie in (0, 1); got {phi!r}")
    with np.errstate(over="ignore"):  # 2κ = inf for κ > 9e307: φ^inf = 0, the exact limit
        return _pos(c, "c", allow_zero=True) * p ** (2.0 * k)
