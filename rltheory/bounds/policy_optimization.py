r"""Bounds of policy optimisation, linear critics and Q-learning, as functions of their constants.

Each function evaluates one theorem's right-hand side with its exact constants;
the problem constants (distribution mismatch, KL to the optimal policy, Cen et al.'s
``C_1``) are computed exactly from a model by :mod:`rltheory.bounds.policy_constants`
(:func:`mismatch_coefficient`, :func:`kl_to_policy`, :func:`entropy_npg_constant`,
re-exported here). Rewards are assumed in ``[0, 1]`` where a theorem says so;
``reward_span`` rescales the terms that come from ``‖V‖ ≤ 1/(1−γ)``.

| function | theorem |
|---|---|
| :func:`npg_bound` | Agarwal, Kakade, Lee, Mahajan (2021), Thm 16 |
| :func:`softmax_pg_bound` | Mei, Xiao, Szepesvári, Schuurmans (2020), Thm 4 |
| :func:`projected_pg_bound` | Agarwal et al. (2021), Thm 5 |
| :func:`entropy_npg_bound` | Cen, Cheng, Chen, Wei, Chi (2022), Thm 1 |
| :func:`entropy_pg_bound`, :func:`entropy_pg_step_size` | Mei et al. (2020), Thm 6 |
| :func:`regularization_bias_bound` | Cen et al. (2022), eq. (14) |
| :func:`pmd_sublinear_bound` | Xiao (2022), Thm 8 (derived in the docstring) |
| :func:`pmd_linear_bound` | Lan (2022) / Xiao (2022) linear rate (derived in the docstring) |
| :func:`td_fixed_point_bound` | Tsitsiklis & Van Roy (1997), Lemma 6 / Thm 1 (Pythagorean form) |
| :func:`tvr_fixed_point_bound` | Tsitsiklis & Van Roy (1997), Thm 1(iii) |
| :func:`q_learning_bound` | constant-step synchronous Q-learning, high probability (derived) |

The last three live in :mod:`rltheory.bounds.td_q_learning` and are re-exported here.

References
----------
Agarwal, A., Kakade, S. M., Lee, J. D., Mahajan, G. (2021). On the theory of policy
gradient methods. JMLR 22(98).
Mei, J., Xiao, C., Szepesvári, C., Schuurmans, D. (2020). On the global convergence rates
of softmax policy gradient methods. ICML.
Cen, S., Cheng, C., Chen, Y., Wei, Y., Chi, Y. (2022). Fast global convergence of natural
policy gradient methods with entropy regularization. Operations Research 70(4).
Lan, G. (2022). Policy mirror descent for reinforcement learning. Math. Programming 198.
Xiao, L. (2022). On the convergence rates of policy gradient methods. JMLR 23(282).
Tsitsiklis, J. N., Van Roy, B. (1997). An analysis of temporal-difference learning with
function approximation. IEEE Trans. Automatic Control 42(5).
Wainwright, M. J. (2019). Stochastic approximation with cone-contractive operators: sharp
ℓ∞-bounds for Q-learning. arXiv:1905.06265.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import _int_value
from ._argcheck import _constant, _count, _gamma, _pos, _times
from ._policy_args import _as_float_count, _at_least, _mismatch, _probability_floor
from .policy_constants import entropy_npg_constant, kl_to_policy, mismatch_coefficient
from .td_q_learning import q_learning_bound, td_fixed_point_bound, tvr_fixed_point_bound

__all__ = [
    "npg_bound",
    "softmax_pg_bound",
    "projected_pg_bound",
    "entropy_npg_bound",
    "entropy_pg_step_size",
    "entropy_pg_bound",
    "regularization_bias_bound",
    "pmd_sublinear_bound",
    "pmd_linear_bound",
    "td_fixed_point_bound",
    "tvr_fixed_point_bound",
    "q_learning_bound",
    "mismatch_coefficient",
    "kl_to_policy",
    "entropy_npg_constant",
]


def npg_bound(
    T: Any,
    *,
    eta: float,
    gamma: float,
    n_actions: int | None = None,
    kl0: Any = None,
    reward_span: float = 1.0,
) -> np.ndarray:
    r"""NPG sublinear bound ``V*(ρ) − V^{π_T}(ρ) ≤ D_0/(ηT) + span(r)/((1−γ)^2 T)``.

    Parameters
    ----------
    T : array_like of int ≥ 1
        Iteration counts.
    eta : float > 0
        NPG step (:func:`~rltheory.algorithms.npg_step` convention, ``exp(ηA/(1−γ))``).
    gamma : float in [0, 1)
    n_actions : int, optional
        ``|A|``; with the uniform ``π_0`` the theorem's ``D_0 = log|A|``.
    kl0 : float or array, optional
        ``D_0 = E_{s∼d^{π*}_ρ} KL(π*(·|s) ‖ π_0(·|s))`` for a general ``π_0``
        (:func:`kl_to_policy`); overrides ``n_actions``.
    reward_span : float
        ``max r − min r`` (1 for rewards in ``[0, 1]``, the theorem's setting).

    Returns
    -------
    numpy.ndarray
        The bound at each ``T`` (broadcast with ``kl0``).

    Notes
    -----
    Agarwal et al. (2021), Theorem 16: rewards in ``[0, 1]``, ``π_0`` uniform:
    ``V^{(T)}(ρ) ≥ V*(ρ) − log|A|/(ηT) − 1/((1−γ)^2 T)`` for all ``ρ``. Its proof
    (mirror-descent telescoping, monotone improvement) gives ``D_0`` in place of
    ``log|A|`` for a general ``π_0`` and uses ``V^{(T)} − V^{(0)} ≤ span(r)/(1−γ)``.

    Examples
    --------
    >>> float(npg_bound(10, eta=1.0, gamma=0.5, n_actions=1))
    0.4
    """
    T = _times(T, "T")
    eta = _pos(eta, "eta")
    g = _gamma(gamma)
    span = _pos(reward_span, "reward_span", allow_zero=True)
    if kl0 is None:
        k = _int_value(
            n_actions
        )  # a 0-d integer array too, as _count reads counts (it was refused)
        if k is None or k < 1:
            raise ValueError(
                f"give kl0 or n_actions (an integer >= 1); got n_actions={n_actions!r}"
            )
        kl0 = math.log(k)
    kl0 = _constant(kl0, "kl0")  # a KL divergence: >= 0, inf when π_0 misses the support of π*
    with np.errstate(over="ignore"):  # a tiny eta: the bound is inf
        return kl0 / (eta * T) + span / ((1.0 - g) ** 2 * T)


def softmax_pg_bound(
    t: Any, *, gamma: float, n_states: int, c: Any, mismatch: Any, inv_rho: Any
) -> np.ndarray:
    r"""Mei et al. softmax PG bound ``16 S ‖d^{π*}_ρ/ρ‖∞² ‖1/ρ‖∞ / (c² (1−γ)^6 t)``.

    Parameters
    ----------
    t : array_like ≥ 1
        Iterate index in the paper's convention (``θ_1`` is the initialisation; trace index
        ``k`` of :func:`rltheory.algorithms.softmax_policy_gradient` is ``t = k + 1``).
    gamma : float in [0, 1)
    n_states : int
        ``S``.
    c : float or array
        ``inf_t min_s π_θt(a*(s)|s)``; over a finite run use the running minimum of the
        trace metric ``optimal_action_prob`` up to ``t`` (the proof only uses iterates ``≤ t``),
        with ``a*`` the actions of the ``π*`` whose ``mismatch`` is used: the trace's
        ``a* = greedy(Q*)`` (smallest index among ties), which under ties can differ from the policy of
        :func:`rltheory.mdp.policy_iteration`.
    mismatch : float or array
        ``‖d^{π*}_ρ/ρ‖∞ ≥ 1`` (:func:`mismatch_coefficient`).
    inv_rho : float or array
        ``‖1/ρ‖∞ = 1/min_s ρ(s) ≥ S``.

    Raises
    ------
    ValueError
        ``mismatch < 1`` or ``inv_rho < n_states`` (below by more than float32 rounding: a
        distribution over ``S`` states has ``min_s ρ(s) ≤ 1/S``, and two distributions a largest
        ratio ``≥ 1``), ``c ∉ (0, 1]``, NaN constants.
    TypeError
        ``c`` holding bools, text or complex numbers.

    Notes
    -----
    Mei et al. (2020), Theorem 4: rewards in ``[0, 1]``, ``ρ(s) > 0`` for all ``s``,
    ``η = (1−γ)^3/8``, ``θ_1`` arbitrary: for all ``t ≥ 1``,
    ``V*(ρ) − V^{π_θt}(ρ) ≤ 16 S/(c² (1−γ)^6 t) · ‖d^{π*}_ρ/ρ‖∞² · ‖1/ρ‖∞``.

    Examples
    --------
    >>> float(softmax_pg_bound(16, gamma=0.0, n_states=1, c=1.0, mismatch=1.0, inv_rho=1.0))
    1.0
    """
    t = _times(t)
    g = _gamma(gamma)
    n_states = _as_float_count(_count(n_states, "n_states"))
    c = _probability_floor(c)
    mismatch = _mismatch(mismatch, "mismatch")
    inv_rho_in = inv_rho
    inv_rho = _constant(inv_rho, "inv_rho", minimum=1.0)  # 1/min_s ρ(s) >= 1
    # and >= S: some state has ρ(s) <= 1/S (inv_rho = 1 with S = 2 halved the bound)
    inv_rho = _at_least(
        inv_rho_in,
        inv_rho,
        "inv_rho",
        n_states,
        "1/min_s rho(s) of a distribution over n_states states",
    )
    with np.errstate(over="ignore"):  # c² below the float range: the bound is inf
        return 16.0 * n_states * mismatch**2 * inv_rho / ((1.0 - g) ** 6 * t) / c / c


def projected_pg_bound(
    T: Any, *, gamma: float, n_states: int, n_actions: int, mismatch: Any
) -> np.ndarray:
    r"""Projected PG (direct parameterisation): ``min_{t<T} gap_t ≤ ‖d^{π*}_ρ/μ‖∞ √(64γ|S||A|/((1−γ)^6 T))``.

    Notes
    -----
    Agarwal et al. (2021), Theorem 5: rewards in ``[0, 1]``, ``γ > 0``, step
    ``η = (1−γ)^3/(2γ|A|)`` on ``V^π(μ)``: ``min_{t<T} V*(ρ) − V^{(t)}(ρ) ≤ ε`` whenever
    ``T > 64γ|S||A| ‖d^{π*}_ρ/μ‖∞²/((1−γ)^6 ε²)``; solving for ``ε`` gives this function.
    ``mismatch ≥ 1`` (a ``ValueError`` below that, float32 rounding aside).

    Examples
    --------
    >>> float(projected_pg_bound(64, gamma=0.5, n_states=1, n_actions=2, mismatch=1.0))
    8.0
    """
    T = _times(T, "T")
    g = _gamma(gamma, positive=True)
    n_states = _as_float_count(_count(n_states, "n_states"))
    n_actions = _as_float_count(_count(n_actions, "n_actions"))
    mismatch = _mismatch(mismatch, "mismatch")
    with np.errstate(over="ignore"):  # |S||A| beyond the float range: the bound is inf
        return mismatch * np.sqrt(64.0 * g * n_states * n_actions / ((1.0 - g) ** 6 * T))


def entropy_npg_bound(
    t: Any, *, eta: float, tau: float, gamma: float, C1: Any
) -> tuple[np.ndarray, np.ndarray]:
    r"""Cen et al. linear rate of entropy-regularised NPG at iterates ``t ≥ 1``.

    Returns ``(q_bound, log_policy_bound)`` with
    ``‖Q*_τ − Q_τ^{(t)}‖∞ ≤ C_1 γ (1−ητ)^{t−1}`` and
    ``‖log π*_τ − log π^{(t)}‖∞ ≤ 2 C_1 τ^{-1} (1−ητ)^{t−1}``.

    Parameters
    ----------
    t : array_like of int ≥ 1
    eta : float, ``0 < η ≤ (1−γ)/τ``
    tau : float > 0
    gamma : float in [0, 1)
    C1 : float or array
        ``‖Q*_τ − Q_τ^{(0)}‖∞ + 2τ(1 − ητ/(1−γ)) ‖log π*_τ − log π^{(0)}‖∞``
        (:func:`entropy_npg_constant`).

    Notes
    -----
    Cen et al. (2022), Theorem 1 (exact policy evaluation), stated for
    ``t ≥ 0`` as bounds on iterate ``t + 1``; here indexed by the iterate. With
    ``η = (1−γ)/τ`` (soft policy iteration) the rate is ``γ``.

    Examples
    --------
    >>> q, l = entropy_npg_bound([1, 2], eta=0.5, tau=1.0, gamma=0.5, C1=1.0)
    >>> q.tolist(), l.tolist()
    ([0.5, 0.25], [2.0, 1.0])
    """
    t = _times(t)
    g = _gamma(gamma)
    eta, tau = _pos(eta, "eta"), _pos(tau, "tau")
    if eta * tau > (1.0 - g) * (1.0 + 1e-12):
        raise ValueError(
            f"Theorem 1 needs eta <= (1 - gamma)/tau = {(1.0 - g) / tau:.6g}; got eta={eta!r}"
        )
    C1 = _constant(C1, "C1")
    # the tolerance above admits eta*tau a hair above 1 - gamma: clip the factor at 0, never negative
    r = max(0.0, 1.0 - eta * tau) ** (t - 1.0)
    with np.errstate(invalid="ignore"):
        q, lp = C1 * g * r, 2.0 * C1 / tau * r
    if np.any(np.isinf(C1)):  # C1 = inf times a factor that is (or underflowed to) 0: keep inf
        q, lp = np.where(np.isinf(C1), np.inf, q), np.where(np.isinf(C1), np.inf, lp)
    return q, lp


def entropy_pg_step_size(*, gamma: float, tau: float, n_actions: int) -> float:
    r"""Step size of Mei et al.'s Theorem 6: ``η = (1−γ)^3/(8 + τ(4 + 8 log|A|))``.

    The inverse of the smoothness constant of ``θ ↦ Ṽ^{π_θ}(μ)`` for the softmax
    parameterisation with entropy temperature ``τ`` (Mei et al. 2020, Lemma 14).

    Examples
    --------
    >>> entropy_pg_step_size(gamma=0.5, tau=0.0, n_actions=2)   # (1/2)^3 / 8
    0.015625
    """
    g = _gamma(gamma)
    tau = _pos(tau, "tau", allow_zero=True)
    n_actions = _count(n_actions, "n_actions")
    if (
        tau > 1.0
    ):  # 8 + τ(4 + 8 log|A|) overflowed to inf at τ = 1.5e308, |A| = 2, and the step came out 0.0
        return (1.0 - g) ** 3 / (8.0 / tau + (4.0 + 8.0 * math.log(n_actions))) / tau
    return (1.0 - g) ** 3 / (8.0 + tau * (4.0 + 8.0 * math.log(n_actions)))


def entropy_pg_bound(
    t: Any, *, gamma: float, tau: float, n_actions: int, c: Any, mismatch: Any, inv_mu: Any
) -> np.ndarray:
    r"""Mei et al. linear rate of entropy-regularised softmax PG at iterates ``t ≥ 1``.

    ``Ṽ^{π*_τ}(ρ) − Ṽ^{π_θt}(ρ) ≤ ‖1/μ‖∞ (1 + τ log|A|)/(1−γ)^2 · exp(−C (t − 1))`` with
    ``C = (1−γ)^4/(8/τ + 4 + 8 log|A|) · min_s μ(s) · c² / ‖d^{π*_τ}_μ/μ‖∞``.

    Parameters
    ----------
    t : array_like ≥ 1
        Iterate index in the paper's convention (``θ_1`` is the initialisation;
        trace index ``k`` of :func:`rltheory.algorithms.softmax_policy_gradient` is
        ``t = k + 1``).
    gamma : float in [0, 1)
    tau : float > 0
        Entropy temperature.
    n_actions : int ≥ 1
    c : float or array > 0
        ``inf_{t≥1} min_{s,a} π_θt(a|s)``; over a finite run, the running minimum of
        the trace metric ``min_prob`` up to ``t − 1`` suffices (the proof contracts
        ``δ_{k+1} ≤ (1 − C_k) δ_k`` with ``C_k`` built from iterate ``k`` only).
    mismatch : float or array
        ``‖d^{π*_τ}_μ/μ‖∞ ≥ 1`` for the soft-optimal ``π*_τ``
        (:func:`mismatch_coefficient` with ``rho = mu``).
    inv_mu : float or array
        ``‖1/μ‖∞ = 1/min_s μ(s)``.

    Returns
    -------
    numpy.ndarray
        The bound, broadcast over ``t`` and the constants.

    Raises
    ------
    ValueError
        ``t < 1``, ``γ ∉ [0, 1)``, ``τ ≤ 0``, ``c ∉ (0, 1]``, ``n_actions < 1``, ``mismatch < 1``.

    Notes
    -----
    Mei, Xiao, Szepesvári, Schuurmans (2020), Theorem 6: entropy-regularised
    objective ``Ṽ^π(ρ) = E[Σ_t γ^t (r(s_t, a_t) − τ log π(a_t|s_t))]``, rewards in
    ``[0, 1]``, ``μ(s) > 0`` for every ``s`` (their Assumption 2), exact gradients of
    ``Ṽ^{π_θ}(μ)``, ``η = (1−γ)^3/(8 + τ(4 + 8 log|A|))`` (:func:`entropy_pg_step_size`):
    for all ``t ≥ 1`` and every ``ρ`` the bound above holds. The proof is a
    non-uniform Łojasiewicz inequality of degree 0 (their Lemma 15) combined with
    the ascent lemma at that step size; ``c > 0`` holds for every finite run and
    is shown bounded away from 0 along the whole run. The rate is linear in
    ``t`` but its constant ``C`` can be tiny (``c²``, ``(1−γ)^4``): the theorem
    separates entropy-regularised PG (``O(e^{−Ct})``) from plain softmax PG
    (``Θ(1/t)``, :func:`softmax_pg_bound`).

    References
    ----------
    Mei, J., Xiao, C., Szepesvári, C., Schuurmans, D. (2020). On the global convergence
    rates of softmax policy gradient methods. ICML (arXiv:2005.06392), Theorem 6.

    Examples
    --------
    One state (``μ = (1)``, mismatch 1), two actions, ``γ = 0``, ``τ = 1``, ``c = 1/2``:
    ``C = (1/4)/(8 + 4 + 8 log 2)`` and at ``t = 1`` the bound is ``1 + log 2``.

    >>> b = entropy_pg_bound([1, 2], gamma=0.0, tau=1.0, n_actions=2, c=0.5, mismatch=1.0, inv_mu=1.0)
    >>> round(float(b[0]), 12) == round(1 + math.log(2), 12)
    True
    >>> bool(abs(b[1] / b[0] - math.exp(-0.25 / (12 + 8 * math.log(2)))) < 1e-15)
    True
    """
    t = _times(t)
    g = _gamma(gamma)
    tau = _pos(tau, "tau")
    n_actions = _count(n_actions, "n_actions")
    c = _probability_floor(c)
    mismatch = _mismatch(mismatch, "mismatch", strict=True)  # ‖d/μ‖∞ >= 1
    inv_mu = _constant(inv_mu, "inv_mu", minimum=1.0)  # 1/min_s μ(s) >= 1
    logA = math.log(n_actions)
    C = (1.0 - g) ** 4 / (8.0 / tau + 4.0 + 8.0 * logA) * c**2 / (inv_mu * mismatch)
    with np.errstate(over="ignore"):
        out = inv_mu * (1.0 + tau * logA) / (1.0 - g) ** 2 * np.exp(-C * (t - 1.0))
        # a prefactor beyond the float range times a small enough exp(−C(t − 1)) is a number: in logs
        # there (τ = 1e308, |A| = 2, γ = 0.5, c = 1/2, t = 1000 gave inf for 5.6e307, with a RuntimeWarning)
        big = np.isinf(out) & np.isfinite(inv_mu * mismatch)
        if np.any(big):
            log_out = (
                np.log(inv_mu)
                + (
                    math.log(tau) + math.log(logA + 1.0 / tau)
                    if tau > 1.0
                    else np.log1p(tau * logA)
                )
                - 2.0 * math.log1p(-g)
                - C * (t - 1.0)
            )
            out = np.where(big, np.exp(np.broadcast_to(log_out, np.shape(out))), out)
    return out


def regularization_bias_bound(*, tau: float, n_actions: int, gamma: float) -> float:
    r"""``0 ≤ V*_τ(s) − V*(s) ≤ τ log|A|/(1−γ)`` and ``V^{π*_τ}(s) ≥ V*(s) − τ log|A|/(1−γ)``.

    Notes
    -----
    The entropy bonus lies in ``[0, log|A|]`` per step, so regularised and plain
    values of any policy differ by at most ``τ log|A|/(1−γ)`` (Cen et al. 2022, eq. (14)).

    Examples
    --------
    >>> round(regularization_bias_bound(tau=0.1, n_actions=4, gamma=0.5), 6)
    0.277259
    """
    n_actions = _count(n_actions, "n_actions")
    return _pos(tau, "tau") * math.log(n_actions) / (1.0 - _gamma(gamma))


def pmd_sublinear_bound(
    k: Any, *, eta: float, gamma: float, kl0: Any, reward_span: float = 1.0
) -> np.ndarray:
    r"""PMD with constant step: ``V*(ρ) − V^{π_k}(ρ) ≤ (D_0/((1−γ)η) + span(r)/(1−γ)^2)/k``.

    Parameters
    ----------
    k : array_like ≥ 1
    eta : float > 0
        PMD step on ``Q`` (:func:`~rltheory.algorithms.pmd_kl_step` convention).
    kl0 : float or array
        ``D_0 = E_{s∼d^{π*}_ρ} D(π*(·|s), π_0(·|s))`` (KL: :func:`kl_to_policy`;
        Euclidean: ``½‖π* − π_0‖²`` averaged likewise).

    Notes
    -----
    Xiao (2022), Theorem 8. Derivation (three-point lemma of mirror descent,
    state by state): ``η⟨Q_k(s), π*_s − π_{k+1,s}⟩ ≤ D_k(s) − D_{k+1}(s)``;
    ``⟨A_k(s), π_{k+1,s}⟩ ≤ V^{k+1}(s) − V^k(s)`` (improvement lemma); averaging over
    ``d^{π*}_ρ`` and the performance-difference lemma give
    ``η(1−γ)Δ_k(ρ) ≤ D_k − D_{k+1} + η E_{d*}[V^{k+1} − V^k]``; summing over
    ``k < K`` and using ``Δ_K ≤ Δ_k`` (monotone improvement) yields the bound.
    With ``η = η_NPG/(1−γ)`` it is :func:`npg_bound`.

    Examples
    --------
    >>> float(pmd_sublinear_bound(4, eta=1.0, gamma=0.5, kl0=0.0))
    1.0
    """
    k = _times(k, "k")
    g = _gamma(gamma)
    eta = _pos(eta, "eta")
    span = _pos(reward_span, "reward_span", allow_zero=True)
    kl0 = _constant(kl0, "kl0")
    with np.errstate(over="ignore"):
        return (kl0 / ((1.0 - g) * eta) + span / (1.0 - g) ** 2) / k


def pmd_linear_bound(k: Any, *, rate: float, eta0: float, gap0: Any, kl0: Any) -> np.ndarray:
    r"""PMD with increasing steps ``η_{k+1} ≥ η_k/q``: ``Δ_k ≤ q^k (Δ_0 + D_0/(q η_0))``.

    Parameters
    ----------
    k : array_like ≥ 0
    rate : float in (0, 1)
        ``q``: ``γ`` with the stationary weighting, or ``1 − 1/ϑ_ρ`` with the ``d^{π*}_ρ`` weighting.
    eta0 : float > 0
        First PMD step.
    gap0 : float or array
        ``Δ_0 = E_{s∼ν}[V*(s) − V^{π_0}(s)]``.
    kl0 : float or array
        ``D_0 = E_{s∼ν} KL(π*(·|s) ‖ π_0(·|s))``.

    Notes
    -----
    The three-point argument of :func:`pmd_sublinear_bound` gives, for any
    weighting ``ν`` with ``ν = d^{π*}_ν``-compatible mismatch,
    ``(1−γ)Δ_k(ρ) + Δ_{k+1}(d*) − Δ_k(d*) ≤ (D_k − D_{k+1})/η_k`` with ``d* = d^{π*}_ρ``.

    * Lan (2022, Thm 2 form): ``ρ = ν`` a stationary distribution of ``P_{π*}``, so
      ``d^{π*}_ν = ν`` and ``Δ_{k+1}(ν) ≤ γΔ_k(ν) + (D_k − D_{k+1})/η_k``: ``q = γ``.
    * Xiao (2022, Thm 10 form): ``Δ_k(d*) ≤ ‖d*/ρ‖∞ Δ_k(ρ) = (1−γ)ϑ_ρ Δ_k(ρ)``, so
      ``Δ_{k+1}(d*) ≤ (1 − 1/ϑ_ρ)Δ_k(d*) + (D_k − D_{k+1})/η_k``: ``q = 1 − 1/ϑ_ρ``, ``ν = d*``.

    Dividing by ``q^{k+1}`` and telescoping (Abel summation, ``q^{k+1}η_k`` non-decreasing)
    gives ``Δ_k(ν) ≤ q^k(Δ_0(ν) + D_0(ν)/(qη_0))``; the constant is the one derived
    here (the papers' statements differ by their step-size normalisations).

    Examples
    --------
    >>> pmd_linear_bound([0, 1, 2], rate=0.5, eta0=1.0, gap0=1.0, kl0=0.5).tolist()
    [2.0, 1.0, 0.5]
    """
    k = _times(k, "k", minimum=0.0)
    q = _pos(rate, "rate")
    if not q < 1.0:
        raise ValueError(f"rate must lie in (0, 1); got {rate!r}")
    eta0 = _pos(eta0, "eta0")
    const = _constant(gap0, "gap0") + _constant(kl0, "kl0") / (q * eta0)
    with np.errstate(invalid="ignore", over="ignore"):
        out = q**k * const
    if np.any(np.isinf(const)):  # an inf constant times q^k that underflowed to 0: keep inf
        out = np.where(np.isinf(const), np.inf, out)
    return out
